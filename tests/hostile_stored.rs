//! Hostile database files found in storage, natively (issue 27): the key is
//! checked before it is trusted, and what is sound can be kept.
//!
//! The page opens its stored database through `db::open_checked`
//! (`health::check`). Every file of the hostile catalogue
//! (`tests/support/hostile_db.rs`) is put where that database lives; each
//! is either reported (a storage error, never used) or opened — and then no
//! replay of a stored event is applied again. The class "index roots
//! swapped" (two bytes of `sqlite_schema`: the schema text stays inbox-lab's,
//! `quick_check` passes) must be reported. "Keep what is sound"
//! (`transfer::salvage`) rebuilds such a file, and a file with damaged rows,
//! from the rows that pass, listing each row it leaves out.
#![cfg(all(not(target_family = "wasm"), feature = "labs"))]

#[path = "support/hostile_db.rs"]
mod hostile_db;

use std::path::Path;

use hostile_db::{base_bytes, catalogue, index_roots_swapped, open_copy, set_cell, INBOX_INDEXES};
use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::schema::{DEFAULT_BUSY_TIMEOUT, MAX_STORED};
use inbox_lab::core::{health, tables};
use inbox_lab::labs::tools::transfer;
use inbox_lab::{apply, Error, Event, Outcome};
use rusqlite::{Connection, MAIN_DB};

/// Every stored event, read from the table itself (no index is trusted).
fn stored_events(conn: &Connection) -> Vec<Event> {
    let mut stmt = conn
        .prepare("SELECT source, event_id, account_id, amount FROM inbox NOT INDEXED")
        .expect("read the inbox");
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("rows")
        .collect::<Result<Vec<(String, String, i64, i64)>, _>>()
        .expect("rows");
    rows.into_iter()
        .map(|(s, e, a, n)| Event::new(s, e, a, n).expect("a stored event is valid"))
        .collect()
}

/// The replays of every stored event that were applied again: must be none.
fn applied_again(conn: &Connection) -> Vec<String> {
    stored_events(conn)
        .iter()
        .filter(|e| matches!(apply(conn, e, None), Ok(Outcome::Applied(_))))
        .map(|e| format!("({:?}, {:?})", e.source(), e.event_id()))
        .collect()
}

fn store(path: &Path, bytes: &[u8]) {
    for suffix in ["", "-journal", "-wal"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    std::fs::write(path, bytes).expect("write the stored file");
}

/// Stores `bytes` at `path`, opens it without the health check and replays
/// every stored event: how many were applied again.
fn replayed_unchecked(path: &Path, bytes: &[u8]) -> usize {
    store(path, bytes);
    let unchecked = db::open(
        &path.to_string_lossy(),
        Mode::Existing,
        DEFAULT_BUSY_TIMEOUT,
    )
    .expect("SQLite itself opens it");
    applied_again(&unchecked).len()
}

/// The page's door, as the worker opens its database.
fn open_checked(path: &Path) -> Result<Connection, Error> {
    db::open_checked(&path.to_string_lossy(), DEFAULT_BUSY_TIMEOUT, |_| Ok(()))
}

/// The file: the inbox's key index and receipt index point at each
/// other's pages. Opened without the check the key no longer decides — a
/// replay of a stored event is applied again (the hazard, asserted so the
/// case really is one). Through the page's door it is reported as damaged
/// and never used. Before issue 27 (`quick_check`) it opened as healthy.
#[test]
fn swapped_inbox_index_roots_are_reported_never_trusted() {
    let bytes = index_roots_swapped(&base_bytes().expect("base"), INBOX_INDEXES).expect("swap");
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("stored.sqlite3");

    assert!(
        replayed_unchecked(&path, &bytes) > 0,
        "without the check a replay is applied again"
    );

    store(&path, &bytes);
    let err = open_checked(&path).expect_err("reported, not trusted");
    assert_eq!(
        (err.kind(), err.code(), err.retryable()),
        ("storage", "corrupt", false),
        "{err}"
    );
    assert!(err.to_string().contains("index"), "{err}");
    assert_eq!(std::fs::read(&path).expect("read"), bytes, "left as it was");
}

/// Every hostile file, found as the stored database: reported (a storage
/// error, never used), or opened and then no replay of a stored event is
/// applied again. Every file of the class "index roots swapped" is reported.
#[test]
fn every_hostile_file_in_storage_is_reported_or_no_replay_applies_again() {
    let files = catalogue().unwrap_or_else(|e| panic!("the generator failed to build:\n{e}"));
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("stored.sqlite3");
    let (mut reported, mut used, mut failures) = (0, 0, Vec::new());
    for file in &files {
        store(&path, &file.bytes);
        match open_checked(&path) {
            Err(e) if e.kind() == "storage" && !e.retryable() => reported += 1,
            Err(e) => failures.push(format!("{} / {}: not a report: {e}", file.class, file.name)),
            Ok(_) if file.class == "index roots swapped" => {
                failures.push(format!("{} / {}: trusted", file.class, file.name));
            }
            Ok(conn) => {
                used += 1;
                let again = applied_again(&conn);
                if !again.is_empty() {
                    failures.push(format!(
                        "{} / {}: applied again: {}",
                        file.class,
                        file.name,
                        again.join(", ")
                    ));
                }
            }
        }
    }
    eprintln!("stored hostile files: {reported} reported, {used} opened");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        reported >= 20 && used >= 3,
        "{reported} reported, {used} opened"
    );
}

/// "Keep what is sound" on the file: every row is read from the
/// tables themselves, none is left out, and the rebuilt database is healthy
/// and answers every replay as a duplicate.
#[test]
fn swapped_index_roots_are_salvaged_whole() {
    let base = base_bytes().expect("base");
    let bytes = index_roots_swapped(&base, INBOX_INDEXES).expect("swap");
    let (fresh, salvaged) = transfer::salvage(&bytes).expect("salvage");
    assert_eq!(salvaged.dropped, [], "nothing to leave out");
    health::check(&fresh).expect("the rebuilt database is healthy");
    let expected = tables::snapshot(&open_copy(&base).expect("copy")).expect("tables");
    assert_eq!(tables::snapshot(&fresh).expect("tables"), expected);
    assert_eq!(applied_again(&fresh), Vec::<String>::new());
}

/// A database with damaged rows — the clock and one arrival past 2^53-1
/// (what the unguarded clock wrote), an amount stored as text, and each key
/// stored twice (replays through swapped indexes): the page reports it;
/// "keep what is sound" leaves out exactly those rows, says why for each,
/// rebuilds the clock from what it kept, and the result is healthy with no
/// replay applied again.
#[test]
fn damaged_rows_are_left_out_and_listed_the_rest_kept() {
    let base = base_bytes().expect("base");
    let conn = open_copy(&base).expect("copy");
    let kept_before = stored_events(&conn).len();
    for (table, column, row, value) in [
        ("lab_clock", "now", 0, format!("{}", MAX_STORED + 1)),
        ("inbox", "received_at", 1, format!("{}", MAX_STORED + 5)),
        ("inbox", "amount", 2, "'7'".to_owned()),
    ] {
        assert_eq!(set_cell(&conn, table, column, row, &value), Ok(1));
    }
    let mut conn = conn;
    let damaged = conn.serialize(MAIN_DB).expect("bytes").to_vec();
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("stored.sqlite3");
    store(&path, &damaged);
    // `integrity_check` already calls text in an INTEGER column damage.
    let err = open_checked(&path).expect_err("reported");
    assert_eq!((err.code(), err.retryable()), ("corrupt", false), "{err}");

    let (fresh, salvaged) = transfer::salvage(&damaged).expect("salvage");
    let said: Vec<(&str, String)> = salvaged
        .dropped
        .iter()
        .map(|d| (d.code, d.message.clone()))
        .collect();
    assert_eq!(said.len(), 4, "{said:#?}");
    assert!(said[0].1.contains("row 2 of table inbox, column received_at: 9007199254740996 is outside 0..=9007199254740991"), "{said:#?}");
    assert!(
        said[1]
            .1
            .contains("row 3 of table inbox, column amount: is stored as text"),
        "{said:#?}"
    );
    assert!(
        said[2]
            .1
            .contains("row 1 of table lab_clock, column now: 9007199254740992 is outside"),
        "{said:#?}"
    );
    assert_eq!(said[3].0, "inconsistent", "{said:#?}");
    assert!(
        said[3]
            .1
            .contains("the lab clock is set to 5000 ms, the latest arrival kept"),
        "{said:#?}"
    );
    assert!(salvaged
        .dropped
        .iter()
        .all(|d| d.field.map(|f| f.as_str()) == Some("file")));
    assert_eq!(salvaged.kept.inbox, kept_before - 2);
    health::check(&fresh).expect("healthy");
    assert_eq!(applied_again(&fresh), Vec::<String>::new());

    // Each key stored twice: the replays a database with swapped indexes took.
    let swapped = index_roots_swapped(&base, INBOX_INDEXES).expect("swap");
    let twice = replayed_unchecked(&path, &swapped);
    assert!(twice > 0);
    let doubled = std::fs::read(&path).expect("read");
    let (fresh, salvaged) = transfer::salvage(&doubled).expect("salvage");
    assert_eq!(salvaged.dropped.len(), twice, "{:#?}", salvaged.dropped);
    assert!(salvaged.dropped.iter().all(|d| d
        .message
        .contains("is stored twice: the unique key does not hold")));
    health::check(&fresh).expect("healthy");
    assert_eq!(applied_again(&fresh), Vec::<String>::new());
}

/// A row the fresh database's constraints refuse is left out too, and said:
/// an account whose balance is out of range goes, and with it every inbox
/// row that points to it (their foreign key); what is counted as kept is
/// what the rebuilt database holds.
#[test]
fn rows_that_lose_their_account_are_left_out_and_listed() {
    let conn = open_copy(&base_bytes().expect("base")).expect("copy");
    let on_account_2 = stored_events(&conn)
        .iter()
        .filter(|e| e.account_id() == 2)
        .count();
    assert_eq!(set_cell(&conn, "accounts", "balance", 1, "-1"), Ok(1));
    let mut conn = conn;
    let damaged = conn.serialize(MAIN_DB).expect("bytes").to_vec();
    let (fresh, salvaged) = transfer::salvage(&damaged).expect("salvage");
    let said: Vec<&str> = salvaged
        .dropped
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(said.len(), 1 + on_account_2, "{said:#?}");
    assert!(said[0].contains("row 2 of table accounts, column balance: -1 is outside"));
    assert!(said[1..]
        .iter()
        .all(|m| m.contains("points to an account that is not there")));
    let tables = tables::snapshot(&fresh).expect("tables");
    assert_eq!(salvaged.kept.accounts, tables.accounts.len());
    assert_eq!(salvaged.kept.inbox, tables.inbox.len());
    assert!(tables.inbox.iter().all(|row| row.account_id != 2));
    health::check(&fresh).expect("healthy");
}
