//! Hostile database files, natively (issue 11, item 1): after any accepted
//! import the guarantee is exactly that of a fresh database, and a refused
//! import changes nothing.
//!
//! Two tests share the generator and the guarantee suite of
//! `tests/support/hostile_db.rs` (the browser test `tests/browser/import.rs`
//! uses them too):
//! * the catalogue: every class of hostile file (triggers, views, extra
//!   tables and indexes, collations, columns, the inbox replaced, stored
//!   types, counters, balances, receipts, header fields, `sqlite_sequence`,
//!   unparsable schema text, byte damage), each offered to a live database
//!   on a file that holds events of its own;
//! * a property test: 1,000 random mutations of a valid export (byte flips
//!   anywhere including the header and the schema page, schema edits
//!   through `writable_schema`, values of any type in any cell).
//!
//! For each file: either refused (`invalid_input`, field `file`) with the
//! live database byte for byte unchanged, or accepted and then the whole
//! guarantee holds (see `hostile_db::judge`), a reload (close, reopen,
//! `health::check`) keeps it, and a reset works. Never a panic. Both tests
//! print, per class, how many files were generated, accepted and refused
//! (`cargo test --test hostile_files -- --nocapture`; with
//! `HOSTILE_FILES_VERBOSE=1`, one line per catalogue file with the reason
//! of each refusal).
#![cfg(all(not(target_family = "wasm"), feature = "labs"))]

#[path = "support/hostile_db.rs"]
mod hostile_db;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

use hostile_db::{
    after_reload, after_reset, assert_catalogue_run, base_bytes, catalogue, judge, mutate,
    report_lines, tally, Counts, Failure, Hostile, Live, Mutation, Verdict, CELLS, REGIONS,
    SNIPPETS, VALUES,
};
use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::schema::{self, DEFAULT_BUSY_TIMEOUT};
use inbox_lab::core::{health, tables};
use inbox_lab::labs::tools::transfer;
use inbox_lab::{apply, Event, Outcome, Tables};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestError, TestRunner};
use rusqlite::{Connection, MAIN_DB};

/// The live database: on a file (as the CLI and, through OPFS, the page
/// keep it) or in memory (the property test: a thousand of them).
struct NativeLive {
    conn: Connection,
    path: Option<PathBuf>,
}

impl NativeLive {
    fn on_file(path: &Path) -> Result<NativeLive, String> {
        let conn = db::open(&path.to_string_lossy(), Mode::Create, DEFAULT_BUSY_TIMEOUT)
            .map_err(|e| e.to_string())?;
        let mut live = NativeLive {
            conn,
            path: Some(path.to_owned()),
        };
        live.seed()?;
        Ok(live)
    }

    fn in_memory() -> Result<NativeLive, String> {
        let mut live = NativeLive {
            conn: fresh_memory()?,
            path: None,
        };
        live.seed()?;
        Ok(live)
    }

    /// The live database's own events, which a refused import must keep.
    fn seed(&mut self) -> Result<(), String> {
        schema::init(&mut self.conn, &[1, 5]).map_err(|e| e.to_string())?;
        for (id, account, amount) in [("own-1", 1, 11), ("own-2", 5, 22)] {
            let e = Event::new("live", id, account, amount).map_err(|e| e.to_string())?;
            apply(&self.conn, &e, None).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Closes and reopens the database the way a restarted program does,
    /// and runs the check the page runs before it trusts a stored database.
    fn reload(&mut self) -> Result<(), String> {
        let conn = match &self.path {
            Some(path) => {
                self.conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
                db::open(
                    &path.to_string_lossy(),
                    Mode::Existing,
                    DEFAULT_BUSY_TIMEOUT,
                )
                .map_err(|e| format!("reopen: {e}"))?
            }
            None => {
                let bytes = transfer::export(&mut self.conn).map_err(|e| e.to_string())?;
                let mut conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
                conn.deserialize_read_exact(MAIN_DB, &bytes[..], bytes.len(), false)
                    .map_err(|e| format!("reload: {e}"))?;
                schema::prepare(&conn, DEFAULT_BUSY_TIMEOUT).map_err(|e| e.to_string())?;
                schema::check_current(&conn).map_err(|e| format!("reload: {e}"))?;
                conn
            }
        };
        health::check(&conn).map_err(|e| format!("health check after the reload: {e}"))?;
        self.conn = conn;
        Ok(())
    }

    /// What `Lab::reset` does: throw the database away, start afresh.
    fn reset(&mut self) -> Result<(), String> {
        self.conn = match &self.path {
            Some(path) => {
                self.conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
                for file in [path.clone(), path.with_extension("sqlite3-journal")] {
                    if file.exists() {
                        std::fs::remove_file(&file).map_err(|e| e.to_string())?;
                    }
                }
                let mut conn =
                    db::open(&path.to_string_lossy(), Mode::Create, DEFAULT_BUSY_TIMEOUT)
                        .map_err(|e| format!("reset: {e}"))?;
                schema::init(&mut conn, &[1]).map_err(|e| e.to_string())?;
                conn
            }
            None => {
                let mut conn = fresh_memory()?;
                schema::init(&mut conn, &[1]).map_err(|e| e.to_string())?;
                conn
            }
        };
        Ok(())
    }
}

fn fresh_memory() -> Result<Connection, String> {
    let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
    schema::prepare(&conn, DEFAULT_BUSY_TIMEOUT).map_err(|e| e.to_string())?;
    Ok(conn)
}

impl Live for NativeLive {
    fn import(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        transfer::import(&mut self.conn, bytes)
            .map(drop)
            .map_err(Failure::from)
    }

    fn export(&mut self) -> Result<Vec<u8>, Failure> {
        transfer::export(&mut self.conn).map_err(Failure::from)
    }

    /// The atomic handler, with a step limit: if an import ever let a
    /// foreign trigger in (one that never ends is in the catalogue), the
    /// delivery fails and the test says so instead of hanging.
    fn deliver(&mut self, event: &Event) -> Result<Outcome, Failure> {
        let mut calls = 0_u32;
        let limit = self.conn.progress_handler(
            10_000,
            Some(move || {
                calls += 1;
                calls > 10_000
            }),
        );
        let answer = apply(&self.conn, event, None).map_err(Failure::from);
        self.conn
            .progress_handler(0, None::<fn() -> bool>)
            .and(limit)
            .map_err(|e| Failure::from(inbox_lab::Error::from(e)))?;
        answer
    }

    fn tables(&mut self) -> Result<Tables, Failure> {
        tables::snapshot(&self.conn).map_err(Failure::from)
    }

    fn add_account(&mut self, id: i64) -> Result<bool, Failure> {
        schema::add_account(&self.conn, id).map_err(Failure::from)
    }
}

/// One file against one live database: the verdict, then (if accepted) a
/// reload and a reset. `Ok(None)`: accepted; `Ok(Some(why))`: refused. A
/// panic anywhere is a failure like any other.
fn run(live: &mut NativeLive, file: &Hostile) -> Result<Option<Failure>, String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<Option<Failure>, String> {
        match judge(live, file)? {
            Verdict::Refused(why) => Ok(Some(why)),
            Verdict::Accepted(kept) => {
                live.reload()?;
                after_reload(live, &kept)?;
                live.reset()?;
                after_reset(live)?;
                Ok(None)
            }
        }
    }));
    match outcome {
        Ok(result) => result,
        Err(panic) => Err(format!(
            "panicked: {}",
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default()
        )),
    }
}

fn report(title: &str, counts: &BTreeMap<&str, Counts>, total: Counts, seconds: f64) {
    for line in report_lines(title, counts, total, seconds) {
        eprintln!("{line}");
    }
}

fn sum(counts: &BTreeMap<&str, Counts>) -> Counts {
    counts
        .values()
        .fold((0, 0, 0), |t, c| (t.0 + c.0, t.1 + c.1, t.2 + c.2))
}

/// Every class of hostile file (one case each, and every case a decision
/// pins down), against a live database on a file: refused with nothing changed, or
/// accepted with the whole guarantee of a fresh database, a working reload
/// and a working reset. The decisions of issue 11 are pinned: rows without
/// a receipt are accepted and replay as `no_stored_result`; half a receipt,
/// a counter past 2^53-1, a receipt above the counter, a value of the wrong
/// type are refused.
#[test]
fn every_hostile_file_is_refused_or_keeps_the_guarantee() {
    let started = Instant::now();
    let files = catalogue().unwrap_or_else(|e| panic!("the generator failed to build:\n{e}"));
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut counts: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut failures = Vec::new();
    // HOSTILE_FILES_VERBOSE=1: one line per file, with the refusal's reason.
    let verbose = std::env::var_os("HOSTILE_FILES_VERBOSE").is_some();
    for (i, file) in files.iter().enumerate() {
        let entry = counts.entry(file.class).or_default();
        entry.0 += 1;
        let path = dir.path().join(format!("live-{i}.sqlite3"));
        let verdict = NativeLive::on_file(&path).and_then(|mut live| run(&mut live, file));
        match &verdict {
            Ok(None) => entry.1 += 1,
            Ok(Some(_)) => entry.2 += 1,
            Err(e) => failures.push(format!("{} / {}: {e}", file.class, file.name)),
        }
        if verbose {
            let said = match verdict {
                Ok(None) => "accepted".to_owned(),
                Ok(Some(why)) => format!("refused ({}: {})", why.code, why.message),
                Err(e) => format!("BROKE THE GUARANTEE: {e}"),
            };
            eprintln!("{} / {}: {said}", file.class, file.name);
        }
    }
    let total = sum(&counts);
    report(
        "hostile files",
        &counts,
        total,
        started.elapsed().as_secs_f64(),
    );
    assert_catalogue_run(&counts, &failures, files.len());
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0..REGIONS.len(), any::<usize>(), 1..=255_u8).prop_map(|(r, offset, mask)| {
            Mutation::Flip {
                region: REGIONS[r],
                offset,
                mask,
            }
        }),
        (0..SNIPPETS.len()).prop_map(Mutation::Schema),
        (0..CELLS.len(), 0..8_usize, 0..VALUES.len())
            .prop_map(|(target, row, value)| { Mutation::Cell { target, row, value } }),
    ]
}

/// 1,000 random mutations of a valid export — byte flips (the header, the
/// schema page, anywhere), hostile schema edits through `writable_schema`,
/// values of any type in any cell, one to four at a time — each offered to
/// a live in-memory database: never accepted-and-broken, never a panic.
#[test]
fn random_mutations_of_an_export_are_refused_or_keep_the_guarantee() {
    let started = Instant::now();
    let base = base_bytes().expect("the valid export");
    // (generated, accepted, refused) per kind of mutation present in a case,
    // and over all cases.
    let counts: RefCell<BTreeMap<&str, Counts>> = RefCell::new(BTreeMap::new());
    let all: RefCell<Counts> = RefCell::new((0, 0, 0));
    let applied = RefCell::new((0_usize, 0_usize));
    let mut runner = TestRunner::new(ProptestConfig {
        // A failure prints the mutations themselves; no regression file.
        failure_persistence: None,
        ..ProptestConfig::with_cases(1_000)
    });
    let result = runner.run(&prop::collection::vec(mutation(), 1..=4), |mutations| {
        let mutated = mutate(&base, &mutations);
        let file = Hostile::any("mutation", format!("{mutations:?}"), mutated.bytes);
        let mut live = NativeLive::in_memory().map_err(TestCaseError::fail)?;
        let accepted = run(&mut live, &file)
            .map_err(|e| TestCaseError::fail(format!("{mutations:?}: {e}")))?
            .is_none();
        let mut counts = counts.borrow_mut();
        let kinds = mutations.iter().map(|m| match m {
            Mutation::Flip { .. } => "byte flips",
            Mutation::Schema(_) => "schema edits",
            Mutation::Cell { .. } => "value changes",
        });
        let mut seen: Vec<&str> = kinds.collect();
        seen.sort_unstable();
        seen.dedup();
        for kind in seen {
            tally(counts.entry(kind).or_default(), accepted);
        }
        tally(&mut all.borrow_mut(), accepted);
        let mut applied = applied.borrow_mut();
        applied.0 += mutated.applied;
        applied.1 += mutated.skipped;
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, mutations)) => {
            panic!("accepted-and-broken, or a panic:\n{reason}\nminimal mutations: {mutations:?}")
        }
        Err(e) => panic!("{e}"),
    }
    let counts = counts.into_inner();
    let (generated, accepted, refused) = all.into_inner();
    report(
        "random mutations",
        &counts,
        (generated, accepted, refused),
        started.elapsed().as_secs_f64(),
    );
    let (applied, skipped) = applied.into_inner();
    eprintln!(
        "random mutations: {applied} mutations took effect, {skipped} were refused by the copy"
    );
    assert!(generated >= 1_000, "only {generated} cases ran");
    assert!(
        accepted >= 50 && refused >= 50,
        "the mutations must exercise both verdicts: {accepted} accepted, {refused} refused"
    );
    assert!(
        applied >= generated,
        "most mutations must take effect: {applied} did, {skipped} did not"
    );
}
