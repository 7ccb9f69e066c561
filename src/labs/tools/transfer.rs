//! Export the database as a `.sqlite3` file, and import one — safely, by
//! construction.
//!
//! Invariant: after an accepted import the live database is exactly what a
//! fresh inbox-lab database holds after inbox-lab's own statements wrote the
//! imported rows: inbox-lab's schema byte for byte, so the guarantee is that
//! of a fresh database. A refused import changes nothing.
//!
//! ## Why rebuild, not check
//!
//! An imported file is foreign data whose author controls every byte: any
//! object in `sqlite_schema` under any name, `writable_schema` edits, any
//! stored type in any column, counters at their limits. Checking such a file
//! and then *adopting* it means listing every way a schema can differ — a
//! deny-list that is complete only until someone thinks of one more trigger.
//! So the file's schema is never adopted. Instead:
//!
//! 1. The bytes are opened **read-only** on a private in-memory connection,
//!    with `trusted_schema = OFF`, SQLite's defensive mode, and a
//!    [`Budget`] on every statement (a view or a
//!    generated column that loops is stopped, a 300 MB value refused).
//!    `integrity_check` must say ok.
//! 2. The rows of inbox-lab's tables are read, each cell with a typed check
//!    (`read_rows`): keys go through the same rules as [`Event`](crate::Event) (text,
//!    valid UTF-8, at most 255 bytes, no control characters), numbers must be
//!    stored as integers in their ranges, receipts must be complete and not
//!    above the receipt counter. Nothing else in the file is read: extra
//!    tables, views, triggers, indexes and collations are simply not copied.
//! 3. A **fresh** database is created by [`schema::migrate`] and the rows are
//!    written into it with plain INSERTs, so inbox-lab's own constraints
//!    (unique keys and receipt numbers, foreign keys, CHECKs) judge them.
//! 4. Only then does SQLite's backup API copy the fresh database over the
//!    live one, in one write transaction.
//!
//! The same typed reading serves [`crate::core::health`], which checks a stored
//! database before the page uses it.

use rusqlite::backup::Backup;
use rusqlite::config::DbConfig;
use rusqlite::{params, Connection, ErrorCode, MAIN_DB};
use serde::Serialize;

use crate::core::error::{Error, Reason};
use crate::core::event::Field;
use crate::core::schema;
use crate::core::stored::{
    inconsistent, read_rows, schema_differs, unreadable_reason, OnBadRow, Rows,
};
use crate::labs::tools::budget::{self, Budget};

/// The input holding a database file offered for import.
pub const FILE: Field = Field::new("file");

crate::core::error::code_enum! {
    /// The `code` of the import's own `invalid_input` refusals (field `file`); a
    /// row that fails the typed reading has the core's codes (`row_invalid`, ...).
    ImportCode {
        /// An import file over the size limit. Params: `bytes`, `max`.
        FileTooBig => "file_too_big",
        /// An import file without the SQLite header.
        NotSqlite => "not_sqlite",
        /// `PRAGMA integrity_check` found problems. Params: `detail` (SQLite's words).
        IntegrityFailed => "integrity_failed",
        /// A schema version this build cannot read. Params: `version`, `max`.
        UnsupportedVersion => "unsupported_version",
        /// An inbox row points to an account that does not exist.
        DanglingAccount => "dangling_account",
        /// Reading the import file ran past its budget. Params: `seconds`.
        ImportBudget => "import_budget",
    }
}

/// Largest file accepted for import.
const MAX_IMPORT_BYTES: usize = 64 << 20;

const HEADER: &[u8; 16] = b"SQLite format 3\0";

/// What an accepted import brought in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    pub accounts: usize,
    pub inbox: usize,
    pub outbox: usize,
    pub orders: usize,
    /// The schema version of the file (older versions are read as such).
    pub version: i64,
    /// Objects of the file that were not copied (extra tables, views,
    /// triggers, indexes), as `"type name"`.
    pub ignored: Vec<String>,
}

/// The whole database as the bytes of a `.sqlite3` file that stands alone
/// (see `standalone`).
///
/// # Errors
/// Storage errors.
pub fn export(conn: &mut Connection) -> Result<Vec<u8>, Error> {
    let data = conn.serialize(MAIN_DB)?;
    Ok(standalone(&data).into_owned())
}

/// Bytes 18 and 19 of a database header: the file format versions SQLite
/// writes and reads — 1 for a rollback journal, 2 for WAL.
const FORMAT_VERSIONS: std::ops::Range<usize> = 18..20;

/// `bytes` as a file that stands alone. A database in WAL mode (the page's
/// default) says so in its header, and a WAL file opened without its `-wal`
/// beside it — in memory, as the import opens a file, or by a tool that
/// cannot create one — is refused ("unable to open database file"). An
/// export already holds every committed page (`serialize` reads through the
/// pager, the log included), and a file a reader offers has nothing beside
/// it, so both versions set to 2 become 1, a rollback-journal file: nothing
/// else changes. Any other value is left for SQLite to judge.
fn standalone(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if bytes.get(FORMAT_VERSIONS) == Some(&[2, 2][..]) {
        let mut copy = bytes.to_vec();
        copy[FORMAT_VERSIONS].copy_from_slice(&[1, 1]);
        std::borrow::Cow::Owned(copy)
    } else {
        std::borrow::Cow::Borrowed(bytes)
    }
}

/// Replaces the database behind `conn` with the rows of `bytes`, rebuilt in
/// a fresh inbox-lab database (see the module documentation).
///
/// # Errors
/// [`Error::InvalidInput`] (field `file`) saying what is wrong, and nothing
/// changed; [`Error::Busy`] or storage errors from the final copy (SQLite
/// rolls it back).
pub fn import(conn: &mut Connection, bytes: &[u8]) -> Result<ImportReport, Error> {
    let (fresh, report) = rebuild(bytes, None)?;
    copy_over(&fresh, conn)?;
    Ok(report)
}

/// What "keep what is sound" ([`salvage`]) kept, and every row it left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Salvaged {
    /// What the rebuilt database holds, counted as an import's.
    pub kept: ImportReport,
    /// Each row left out (or one-row table rebuilt), as the refusal an
    /// import would have answered for it: `{kind, code, message, params,
    /// field}`, so the page words it like any error.
    pub dropped: Vec<crate::core::error::ErrorReport>,
}

/// "Keep what is sound": the import's rebuild of `bytes` (a database the
/// page cannot use), except that a row the typed reading or the fresh
/// database's constraints refuse is left out and listed instead of refusing
/// the file, and a failed `integrity_check` is no reason to stop (the rows
/// are read from the tables, never through an index). Touches no other
/// database; the caller copies the result over the live one ([`copy_over`]).
///
/// # Errors
/// [`Error::InvalidInput`] (field `file`) when nothing can be kept: not
/// SQLite, a table missing, a page SQLite cannot read, past the budget.
pub fn salvage(bytes: &[u8]) -> Result<(Connection, Salvaged), Error> {
    let mut dropped = Vec::new();
    let (fresh, mut kept) = rebuild(bytes, Some(&mut dropped))?;
    // What the rebuilt database holds: rows its constraints refused are not.
    let count = |table: &str| -> Result<usize, Error> {
        let n: i64 = fresh.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
        Ok(usize::try_from(n).unwrap_or(0))
    };
    kept.accounts = count("accounts")?;
    kept.inbox = count("inbox")?;
    kept.outbox = count("outbox")?;
    kept.orders = count("orders")?;
    let dropped = dropped
        .into_iter()
        .map(|reason| refuse(reason).report())
        .collect();
    Ok((fresh, Salvaged { kept, dropped }))
}

/// Copies every page of `fresh` over `conn`'s database in one transaction:
/// the last step of an import and of a salvage.
///
/// # Errors
/// [`Error::Busy`] or storage errors (SQLite rolls the copy back).
pub fn copy_over(fresh: &Connection, conn: &mut Connection) -> Result<(), Error> {
    let backup = Backup::new(fresh, conn)?;
    // All pages in one step: one write transaction on the destination.
    backup.step(-1)?;
    drop(backup);
    schema::check_current(conn)
}

/// Checks `bytes` and rebuilds their rows in a fresh in-memory inbox-lab
/// database, touching no other database; with `dropped`, [`salvage`]'s
/// reading.
///
/// # Errors
/// [`Error::InvalidInput`] (field `file`) saying what is wrong.
fn rebuild(
    bytes: &[u8],
    mut dropped: Option<&mut Vec<Reason>>,
) -> Result<(Connection, ImportReport), Error> {
    let size = bytes.len();
    if size > MAX_IMPORT_BYTES {
        return Err(refuse(
            Reason::new(
                ImportCode::FileTooBig,
                format!("the file is {size} bytes; at most {MAX_IMPORT_BYTES} are accepted"),
            )
            .with("bytes", size)
            .with("max", MAX_IMPORT_BYTES),
        ));
    }
    if size < 100 || !bytes.starts_with(HEADER) {
        return Err(refuse(Reason::new(
            ImportCode::NotSqlite,
            "not a SQLite database: the file does not start with the SQLite header",
        )));
    }
    let mut foreign = open_foreign(&standalone(bytes))?;
    let read = budget::within(&mut foreign, Budget::import(size), |conn| {
        read_file(conn, dropped.as_deref_mut())
    });
    let (rows, ignored, version) = match read {
        Ok(result) => result?,
        Err(_) => return Err(over_budget(size)),
    };
    drop(foreign);
    let fresh = write_fresh(&rows, dropped)?;
    let report = ImportReport {
        accounts: rows.accounts.len(),
        inbox: rows.inbox.len(),
        outbox: rows.outbox.len(),
        orders: rows.orders.len(),
        version,
        ignored,
    };
    Ok((fresh, report))
}

/// Reading a file of `bytes` bytes ran past [`Budget::import`]: inside,
/// when SQLite stopped it, or from outside, when the page stopped the worker
/// checking it at the budget's deadline.
pub fn over_budget(bytes: usize) -> Error {
    let seconds = Budget::import(bytes).time.as_secs();
    refuse(
        Reason::new(
            ImportCode::ImportBudget,
            format!(
                "checking the file took more than its budget ({seconds} s for a file of this \
                 size); it was stopped and nothing was imported"
            ),
        )
        .with("seconds", seconds),
    )
}

/// `rebuild`, as the bytes of the fresh database: what the page's import
/// worker hands to the worker that owns the database ([`adopt`]).
///
/// # Errors
/// As `rebuild`.
pub fn rebuild_to_bytes(bytes: &[u8]) -> Result<(Vec<u8>, ImportReport), Error> {
    let (mut fresh, report) = rebuild(bytes, None)?;
    Ok((export(&mut fresh)?, report))
}

/// Replaces the database behind `conn` with `rebuilt`, a database
/// [`rebuild_to_bytes`] made: one backup step, one write transaction. The
/// short last step of an import, the one that runs where the database is.
///
/// # Errors
/// A storage error if `rebuilt` cannot be read or is not at the current
/// schema version (nothing changed); [`Error::Busy`] or storage errors from
/// the copy (SQLite rolls it back).
pub fn adopt(conn: &mut Connection, rebuilt: &[u8]) -> Result<(), Error> {
    let mut fresh = Connection::open_in_memory()?;
    fresh.deserialize_read_exact(MAIN_DB, rebuilt, rebuilt.len(), true)?;
    schema::check_current(&fresh)?;
    copy_over(&fresh, conn)
}

/// The foreign bytes on a private, read-only, defensive connection.
fn open_foreign(bytes: &[u8]) -> Result<Connection, Error> {
    let mut foreign = Connection::open_in_memory()?;
    foreign
        .deserialize_read_exact(MAIN_DB, bytes, bytes.len(), true)
        .map_err(unreadable)?;
    // Functions with side effects may not run from the file's schema (views,
    // triggers, generated columns, defaults); the schema cannot be written.
    foreign
        .set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)
        .map_err(unreadable)?;
    foreign
        .set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
        .map_err(unreadable)?;
    foreign
        .execute_batch("PRAGMA query_only = ON; PRAGMA cell_size_check = ON;")
        .map_err(unreadable)?;
    Ok(foreign)
}

/// Everything read from the foreign file: its rows, the objects left
/// behind, its version. With `dropped`, bad rows are listed there and
/// skipped, and a failed `integrity_check` does not stop the reading.
fn read_file(
    conn: &mut Connection,
    dropped: Option<&mut Vec<Reason>>,
) -> Result<(Rows, Vec<String>, i64), Error> {
    let integrity: Vec<String> = conn
        .prepare("PRAGMA integrity_check(10)")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()
        })
        .map_err(unreadable)?;
    if integrity != ["ok"] && dropped.is_none() {
        let detail = integrity.join("; ");
        return Err(refuse(
            Reason::new(
                ImportCode::IntegrityFailed,
                format!("integrity_check failed: {detail}"),
            )
            .with("detail", detail),
        ));
    }
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(unreadable)?;
    let max = schema::VERSION;
    if !(1..=max).contains(&version) {
        return Err(refuse(
            Reason::new(
                ImportCode::UnsupportedVersion,
                format!("schema version {version} is not one this build reads (1 to {max})"),
            )
            .with("version", version)
            .with("max", max),
        ));
    }
    let tables = tables_of(version);
    let objects: Vec<(String, String, Option<String>)> = conn
        .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<Result<_, _>>()
        })
        .map_err(unreadable)?;
    for table in tables {
        let real_table = objects.iter().any(|(kind, name, sql)| {
            kind == "table"
                && name == table
                && sql
                    .as_deref()
                    .is_some_and(|sql| sql.starts_with("CREATE TABLE"))
        });
        if !real_table {
            return Err(refuse(schema_differs(format!("there is no table {table}"))));
        }
    }
    let ignored = objects
        .iter()
        .filter(|(kind, name, _)| {
            let carried = kind == "table" && tables.contains(&name.as_str());
            !(carried || is_own_internal(kind, name))
        })
        .map(|(kind, name, _)| format!("{kind} {name}"))
        .collect();
    let bad = match dropped {
        Some(list) => OnBadRow::Drop(list),
        None => OnBadRow::Refuse,
    };
    let rows = read_rows(conn, version, bad).map_err(refuse)?;
    Ok((rows, ignored, version))
}

/// The tables of inbox-lab's schema at `version`, whose rows are carried over.
fn tables_of(version: i64) -> &'static [&'static str] {
    if version == 1 {
        &["accounts", "inbox", "receipt_counter"]
    } else {
        &[
            "accounts",
            "inbox",
            "receipt_counter",
            "lab_clock",
            "outbox",
            "orders",
            "order_events",
            "sqlite_sequence",
        ]
    }
}

/// Objects inbox-lab's own schema has besides its tables (not "ignored").
fn is_own_internal(kind: &str, name: &str) -> bool {
    (kind == "index" && (name.starts_with("sqlite_autoindex_") || name == "inbox_received_at"))
        || (kind == "table" && name == "sqlite_sequence")
}

// ---- Writing them into a fresh database ---------------------------------------------------------

/// A fresh inbox-lab database holding `rows`, written by plain INSERTs so
/// that the schema's own constraints judge them. With `dropped`, a row a
/// constraint refuses is listed there and left out (SQLite undoes only
/// that statement), instead of refusing the file.
fn write_fresh(rows: &Rows, mut dropped: Option<&mut Vec<Reason>>) -> Result<Connection, Error> {
    let mut fresh = Connection::open_in_memory()?;
    schema::prepare(&fresh, schema::DEFAULT_BUSY_TIMEOUT)?;
    schema::migrate(&mut fresh)?;
    let tx = fresh.transaction()?;
    // One row's INSERT: refused as the file's fault, or left out and listed.
    let mut insert = |table: &'static str, row: String, done: rusqlite::Result<usize>| {
        let Err(e) = done else { return Ok(()) };
        let dangling = crate::core::apply::is_foreign_key(&e);
        if !dangling && e.sqlite_error_code() != Some(ErrorCode::ConstraintViolation) {
            return Err(Error::from(e));
        }
        let detail = if dangling {
            format!("{table} {row} points to an account that is not there")
        } else {
            format!("{table} {row}: {e}")
        };
        let reason = inconsistent(detail);
        match dropped.as_deref_mut() {
            Some(list) => {
                list.push(reason);
                Ok(())
            }
            None if dangling => Err(refuse(Reason::new(
                ImportCode::DanglingAccount,
                "inconsistent data: an inbox row points to a missing account",
            ))),
            None => Err(refuse(reason)),
        }
    };
    {
        let mut stmt = tx.prepare("INSERT INTO accounts(id, balance) VALUES (?1, ?2)")?;
        for (id, balance) in &rows.accounts {
            insert(
                "accounts",
                format!("id {id}"),
                stmt.execute(params![id, balance]),
            )?;
        }
        tx.execute(
            "UPDATE receipt_counter SET last_seq = ?1 WHERE id = 1",
            params![rows.last_seq],
        )?;
        tx.execute(
            "UPDATE lab_clock SET now = ?1 WHERE id = 1",
            params![rows.clock],
        )?;
        let mut stmt = tx.prepare(
            "INSERT INTO inbox(source, event_id, account_id, amount, receipt_seq, balance_after, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for row in &rows.inbox {
            let e = &row.event;
            let done = stmt.execute(params![
                e.source(),
                e.event_id(),
                e.account_id(),
                e.amount(),
                row.receipt.map(|r| r.0),
                row.receipt.map(|r| r.1),
                row.received_at
            ]);
            insert(
                "inbox",
                format!("({:?}, {:?})", e.source(), e.event_id()),
                done,
            )?;
        }
        let mut stmt = tx.prepare(
            "INSERT INTO outbox(message_id, source, event_id, account_id, amount, sent_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for m in &rows.outbox {
            let e = &m.event;
            let done = stmt.execute(params![
                m.message_id,
                e.source(),
                e.event_id(),
                e.account_id(),
                e.amount(),
                m.sent_at
            ]);
            insert("outbox", format!("message {}", m.message_id), done)?;
        }
        // AUTOINCREMENT's memory: message ids are never reused.
        tx.execute("DELETE FROM sqlite_sequence", [])?;
        if let Some(seq) = rows.outbox_seq {
            tx.execute(
                "INSERT INTO sqlite_sequence(name, seq) VALUES ('outbox', ?1)",
                params![seq],
            )?;
        }
        let mut stmt =
            tx.prepare("INSERT INTO orders(order_id, source, event_id) VALUES (?1, ?2, ?3)")?;
        for (order, source, event_id) in &rows.orders {
            let done = stmt.execute(params![order, source, event_id]);
            insert("orders", format!("{order:?}"), done)?;
        }
        let mut stmt = tx.prepare(
            "INSERT INTO order_events(source, event_id, order_id, result) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (source, event_id, order, result) in &rows.order_events {
            let done = stmt.execute(params![source, event_id, order, result]);
            insert("order_events", format!("({source:?}, {event_id:?})"), done)?;
        }
    }
    tx.commit()?;
    Ok(fresh)
}

fn refuse(reason: Reason) -> Error {
    Error::refused(FILE, reason)
}

fn unreadable(e: rusqlite::Error) -> Error {
    refuse(unreadable_reason(e))
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;
    use crate::core::tables;
    use crate::{apply, Event, Outcome};

    fn db_with_one_event() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut conn, &[1]).unwrap();
        let e = Event::new("provider-a", "evt-1", 1, 500).unwrap();
        apply(&conn, &e, None).unwrap();
        conn
    }

    fn schema_rows(conn: &Connection) -> Vec<(String, String, Option<String>)> {
        let mut stmt = conn
            .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name")
            .unwrap();
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn export_then_import_round_trips() {
        let mut a = db_with_one_event();
        let bytes = export(&mut a).unwrap();
        let mut b = Connection::open_in_memory().unwrap();
        schema::prepare(&b, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut b, &[7]).unwrap();
        let report = import(&mut b, &bytes).unwrap();
        assert_eq!((report.accounts, report.inbox), (1, 1));
        assert!(report.ignored.is_empty(), "{:?}", report.ignored);
        assert_eq!(tables::snapshot(&b).unwrap(), tables::snapshot(&a).unwrap());
    }

    /// The page's import in two halves: rebuilt as bytes where the file is
    /// checked, adopted where the database is — the same tables as
    /// [`import`]; bytes that are not a rebuilt database change nothing.
    #[test]
    fn rebuilt_bytes_are_adopted_and_nothing_else_is() {
        let mut a = db_with_one_event();
        let file = export(&mut a).unwrap();
        let (rebuilt, report) = rebuild_to_bytes(&file).unwrap();
        assert_eq!((report.accounts, report.inbox), (1, 1));
        let mut b = Connection::open_in_memory().unwrap();
        schema::prepare(&b, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut b, &[7]).unwrap();
        let before = tables::snapshot(&b).unwrap();
        let mut old = Connection::open_in_memory().unwrap();
        let not_current = export(&mut old).unwrap(); // an empty database: version 0
        for bad in [&b"not a database at all"[..], &not_current] {
            assert!(adopt(&mut b, bad).is_err());
            assert_eq!(tables::snapshot(&b).unwrap(), before, "nothing changed");
        }
        adopt(&mut b, &rebuilt).unwrap();
        assert_eq!(tables::snapshot(&b).unwrap(), tables::snapshot(&a).unwrap());
    }

    /// "Keep what is sound" keeps the outbox when only its sequence is bad:
    /// like the receipt counter and the clock, a sequence row dropped as
    /// unreadable is rebuilt from the highest message kept, and the
    /// messages are not dropped for being above a sequence that is gone.
    #[test]
    fn salvage_rebuilds_a_dropped_outbox_sequence_and_keeps_the_messages() {
        let mut a = db_with_one_event();
        a.execute_batch(
            "INSERT INTO outbox(source, event_id, account_id, amount)
                 VALUES ('provider-a', 'evt-1', 1, 500);
             UPDATE sqlite_sequence SET seq = 'one' WHERE name = 'outbox';",
        )
        .unwrap();
        let (fresh, salvaged) = salvage(&export(&mut a).unwrap()).unwrap();
        assert_eq!(salvaged.kept.outbox, 1, "{:#?}", salvaged.dropped);
        let seq: i64 = fresh
            .query_row(
                "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(seq, 1);
        let codes: Vec<_> = salvaged.dropped.iter().map(|r| r.code).collect();
        assert_eq!(
            codes,
            ["row_invalid", "inconsistent"],
            "{:#?}",
            salvaged.dropped
        );
        crate::core::health::check(&fresh).unwrap();
    }

    /// The import's budget grows with the file: 2 s and 1 s a MiB begun, and
    /// its refusal names the budget of that size.
    #[test]
    fn the_import_budget_is_scaled_to_the_file() {
        let seconds = |bytes| Budget::import(bytes).time.as_secs();
        assert_eq!(
            [
                seconds(0),
                seconds(1),
                seconds(1 << 20),
                seconds(MAX_IMPORT_BYTES)
            ],
            [2, 3, 3, 66]
        );
        let refused = over_budget(5 << 20).report();
        assert_eq!(
            (
                refused.code,
                refused.params.get("seconds").map(String::as_str)
            ),
            ("import_budget", Some("7"))
        );
    }

    /// A database in WAL mode, its last commit still in the log: the export
    /// holds it and stands alone (a rollback-journal header), and a WAL-mode
    /// file offered as it is imports too.
    #[cfg(not(target_family = "wasm"))]
    #[test]
    fn a_wal_database_exports_standalone_and_a_wal_file_imports() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wal.sqlite3");
        let mut wal = Connection::open(&path).unwrap();
        wal.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
            .unwrap();
        schema::prepare(&wal, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut wal, &[1]).unwrap();
        let e = Event::new("provider-a", "in-the-log", 1, 7).unwrap();
        apply(&wal, &e, None).unwrap();
        assert!(
            std::fs::metadata(dir.path().join("wal.sqlite3-wal"))
                .unwrap()
                .len()
                > 0
        );

        let exported = export(&mut wal).unwrap();
        assert_eq!(exported[18..20], [1, 1], "a rollback-journal header");
        let mut live = db_with_one_event();
        import(&mut live, &exported).unwrap();
        assert_eq!(
            tables::snapshot(&live).unwrap(),
            tables::snapshot(&wal).unwrap()
        );

        let mut as_stored = exported.clone();
        as_stored[18..20].copy_from_slice(&[2, 2]);
        let mut live = db_with_one_event();
        import(&mut live, &as_stored).unwrap();
        assert_eq!(
            tables::snapshot(&live).unwrap(),
            tables::snapshot(&wal).unwrap()
        );
    }

    #[test]
    fn a_foreign_trigger_is_never_adopted() {
        let mut hostile = db_with_one_event();
        hostile
            .execute_batch(
                "CREATE TRIGGER credit_more AFTER INSERT ON inbox BEGIN
                   UPDATE accounts SET balance = balance + 1000000;
                 END;",
            )
            .unwrap();
        let bytes = export(&mut hostile).unwrap();
        let mut live = Connection::open_in_memory().unwrap();
        schema::prepare(&live, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut live, &[1]).unwrap();
        let report = import(&mut live, &bytes).unwrap();
        assert_eq!(report.ignored, ["trigger credit_more"]);
        let fresh = {
            let mut c = Connection::open_in_memory().unwrap();
            schema::migrate(&mut c).unwrap();
            c
        };
        assert_eq!(schema_rows(&live), schema_rows(&fresh));
        let e = Event::new("provider-a", "evt-2", 1, 5).unwrap();
        let Outcome::Applied(receipt) = apply(&live, &e, None).unwrap() else {
            panic!("a new event applies");
        };
        assert_eq!(receipt.balance_after, 505, "credited exactly once, by 5");
    }

    #[test]
    fn a_blob_key_is_refused_with_the_cell_named() {
        let mut hostile = db_with_one_event();
        hostile
            .execute_batch("UPDATE inbox SET event_id = CAST(event_id AS BLOB)")
            .unwrap();
        let bytes = export(&mut hostile).unwrap();
        let mut live = db_with_one_event();
        let err = import(&mut live, &bytes).unwrap_err();
        let report = err.report();
        assert_eq!((report.field, report.code), (Some(FILE), "row_invalid"));
        assert_eq!(report.params["table"], "inbox");
        assert_eq!(report.params["column"], "event_id");
    }

    #[test]
    fn bad_files_are_refused_and_change_nothing() {
        let mut live = db_with_one_event();
        let before = tables::snapshot(&live).unwrap();
        let good = export(&mut live).unwrap();

        let mut truncated = good.clone();
        truncated.truncate(good.len() / 2);
        // Every b-tree page after the first gets an impossible page type.
        let mut corrupt = good.clone();
        let page_size = usize::from(u16::from_be_bytes([good[16], good[17]]));
        for page in (page_size..good.len()).step_by(page_size) {
            corrupt[page] = 0xFF;
        }
        let other = {
            let mut c = Connection::open_in_memory().unwrap();
            c.execute_batch("CREATE TABLE t(x); PRAGMA user_version = 1;")
                .unwrap();
            export(&mut c).unwrap()
        };
        let newer = {
            let mut c = db_with_one_event();
            c.pragma_update(None, "user_version", schema::VERSION + 1)
                .unwrap();
            export(&mut c).unwrap()
        };
        let cases: [(&str, Vec<u8>); 6] = [
            ("empty", Vec::new()),
            ("text", b"hello, this is not a database".repeat(10)),
            ("truncated", truncated),
            ("corrupt", corrupt),
            ("other schema", other),
            ("newer version", newer),
        ];
        for (name, bytes) in cases {
            match import(&mut live, &bytes) {
                Err(Error::InvalidInput { field: FILE, .. }) => {}
                other => panic!("{name}: expected a refused file, got {other:?}"),
            }
            assert_eq!(
                tables::snapshot(&live).unwrap(),
                before,
                "{name} changed the database"
            );
        }
    }

    /// An outbox message holds a payload the dispatcher will send: one for an
    /// event the inbox never applied, or with another payload than the
    /// applied event's, is refused with the message named. What the page
    /// itself leaves — a message whose row a mistaken handler rewrote, a sent
    /// message whose row was purged — is imported.
    #[test]
    fn an_outbox_message_without_its_applied_event_is_refused() {
        use crate::labs::handlers::{Handler, Payload};
        use crate::labs::scheme_ends::{outbox, retention};

        for (sql, detail) in [
            (
                "INSERT INTO outbox(source, event_id, account_id, amount) VALUES ('provider-a', 'never', 1, 999999)",
                r#"message 1 waits to be sent for event ("provider-a", "never"), which the inbox does not hold"#,
            ),
            (
                "INSERT INTO outbox(source, event_id, account_id, amount) VALUES ('provider-a', 'evt-1', 1, 999999)",
                r#"message 1 notifies 999999 to account 1, but event ("provider-a", "evt-1") credited 500 to account 1"#,
            ),
        ] {
            let mut hostile = db_with_one_event();
            hostile.execute_batch(sql).unwrap();
            let bytes = export(&mut hostile).unwrap();
            let mut live = db_with_one_event();
            let before = tables::snapshot(&live).unwrap();
            let report = import(&mut live, &bytes).unwrap_err().report();
            assert_eq!((report.field, report.code), (Some(FILE), "row_invalid"));
            assert_eq!(report.params["table"], "outbox");
            assert!(report.message.contains(detail), "{}", report.message);
            assert_eq!(tables::snapshot(&live).unwrap(), before);
        }

        let mut page = db_with_one_event();
        let receiver = outbox::Receiver::open(Connection::open_in_memory().unwrap(), true).unwrap();
        for id in ["sent", "rewritten"] {
            let e = Event::new("provider-a", id, 1, 5).unwrap();
            outbox::deliver(&page, &receiver, &e, outbox::Strategy::Outbox, None).unwrap();
        }
        outbox::dispatch_one(&page, &receiver, None).unwrap();
        let payload = Payload {
            source: "provider-a".into(),
            event_id: "rewritten".into(),
            account_id: 1,
            amount: 77,
        };
        Handler::InsertOrReplace
            .deliver(&page, &payload, None)
            .unwrap();
        retention::advance(&page, 10).unwrap();
        retention::purge(&page, 0, 10).unwrap();
        let bytes = export(&mut page).unwrap();
        let mut live = db_with_one_event();
        assert_eq!(import(&mut live, &bytes).unwrap().outbox, 2);
        crate::core::health::check(&live).unwrap();
    }
}
