//! inbox-lab's benchmark, a crate of its own beside the teaching crate: the
//! workload shared by every runner that drives the real apply path — the
//! native bench (`bench/benches/native.rs`), the browser bench worker
//! (`www/panels/bench/benchworker.js` through `wasm::Bench`, built into
//! `www/pkg-bench/`) and the page's Bench panel — plus its timing shim
//! ([`timing`]), the SQL the official build's worker runs ([`official_sql`])
//! and the tables `cargo xtask bench` prints ([`report`]).
//! How to run it and what it found: `bench/RESULTS.md`.
//!
//! The workload is the article's: distinct events, each delivered once in
//! its own transaction by [`apply`](inbox_lab::apply()) — nothing batched, nothing
//! skipped — then every one of them delivered again (the duplicate path).
//! What varies is only how durable a commit is, one [`Setting`] at a time:
//!
//! | setting       | journal                          | synchronous |
//! |---------------|----------------------------------|-------------|
//! | `delete-full` | DELETE (rollback journal)        | FULL        |
//! | `wal-full`    | WAL, `locking_mode = EXCLUSIVE`  | FULL        |
//! | `wal-normal`  | WAL, `locking_mode = EXCLUSIVE`  | NORMAL      |
//!
//! WAL needs `locking_mode = EXCLUSIVE` in the browser: OPFS "sahpool" has
//! no shared memory for the WAL index, and exclusive locking keeps the index
//! in the connection's heap instead. Natively the same setting is used so
//! both sides do the same work.
//!
//! Every runner applies the settings the same way, through [`open`], so a
//! difference in the figures is a difference in the engine and storage, not
//! in configuration.

use std::time::Duration;

use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::error::Error;
use inbox_lab::core::event::Event;
use inbox_lab::core::schema;
use inbox_lab::storage::coalesce;
use rusqlite::{params, Connection};
use serde::Serialize;

pub mod report;
pub mod timing;
#[cfg(target_family = "wasm")]
mod wasm;

/// Page size of every benchmark database, set before the schema is created.
/// It is the wasm build's default (`sqlite-wasm-rs` compiles SQLite with
/// `SQLITE_DEFAULT_PAGE_SIZE=8192`); setting it explicitly gives the native
/// build (default 4096) the same one.
pub const PAGE_SIZE: u32 = 8192;

/// The `source` of every benchmark event.
pub const SOURCE: &str = "bench";

/// The account every benchmark event credits (created by [`open`]).
pub const ACCOUNT: i64 = 1;

/// How durable each commit is: the journal and the sync setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Setting {
    /// Rollback journal (SQLite's default), every commit synced.
    DeleteFull,
    /// Write-ahead log, exclusive locking, every commit synced.
    WalFull,
    /// Write-ahead log, exclusive locking, synced only at checkpoints.
    WalNormal,
}

impl Setting {
    /// Every setting, in the order the benchmark reports them.
    pub const ALL: [Setting; 3] = [Setting::DeleteFull, Setting::WalFull, Setting::WalNormal];

    /// The name used on command lines and in JSON: `delete-full`, ...
    pub fn name(self) -> &'static str {
        match self {
            Setting::DeleteFull => "delete-full",
            Setting::WalFull => "wal-full",
            Setting::WalNormal => "wal-normal",
        }
    }

    /// `PRAGMA journal_mode` value.
    pub fn journal_mode(self) -> &'static str {
        match self {
            Setting::DeleteFull => "delete",
            Setting::WalFull | Setting::WalNormal => "wal",
        }
    }

    /// `PRAGMA locking_mode` value.
    pub fn locking_mode(self) -> &'static str {
        match self {
            Setting::DeleteFull => "normal",
            Setting::WalFull | Setting::WalNormal => "exclusive",
        }
    }

    /// `PRAGMA synchronous` value.
    pub fn synchronous(self) -> &'static str {
        match self {
            Setting::DeleteFull | Setting::WalFull => "full",
            Setting::WalNormal => "normal",
        }
    }

    /// The statements that configure a fresh connection, in order. They must
    /// run before the database is first read: `locking_mode = EXCLUSIVE`
    /// before `journal_mode = WAL` (no shared memory in OPFS), `page_size`
    /// before the first table exists.
    pub fn pragmas(self) -> String {
        format!(
            "PRAGMA page_size = {PAGE_SIZE};\nPRAGMA locking_mode = {};\n\
             PRAGMA journal_mode = {};\nPRAGMA synchronous = {};",
            self.locking_mode(),
            self.journal_mode(),
            self.synchronous()
        )
    }
}

impl std::str::FromStr for Setting {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Setting::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!("unknown setting {s:?}: expected delete-full, wal-full or wal-normal")
            })
    }
}

/// Opens (creating) a benchmark database at `path` with `setting`: the
/// crate's own [`db::open_with`], the pragmas, then the schema and account 1
/// as `inbox-lab init` makes them. `path` should name a fresh database.
///
/// # Errors
/// Storage errors; [`Error::Storage`] if SQLite did not take a setting
/// (e.g. WAL refused), so no figure is ever reported for the wrong mode.
///
/// # Example
/// ```
/// # #[cfg(not(target_family = "wasm"))] {
/// use inbox_lab_bench::{self as bench, Setting};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("bench.sqlite3");
/// let conn = bench::open(path.to_str().unwrap(), Setting::WalNormal).unwrap();
/// assert!(inbox_lab::apply(&conn, &bench::event(0), None).unwrap().kind() == "applied");
/// assert_eq!(bench::settings(&conn).unwrap().journal_mode, "wal");
/// # }
/// ```
pub fn open(path: &str, setting: Setting) -> Result<Connection, Error> {
    let mut conn = db::open_with(path, Mode::Create, BUSY_TIMEOUT, |conn| {
        conn.execute_batch(&setting.pragmas())?;
        Ok(())
    })?;
    schema::init(&mut conn, &[ACCOUNT])?;
    let got = settings(&conn)?;
    let want = (
        setting.journal_mode(),
        setting.locking_mode(),
        setting.synchronous(),
    );
    if (
        got.journal_mode.as_str(),
        got.locking_mode.as_str(),
        got.synchronous.as_str(),
    ) != want
        || got.page_size != i64::from(PAGE_SIZE)
    {
        return Err(Error::storage(format!(
            "the benchmark database did not take its settings: asked for {want:?} and page size \
             {PAGE_SIZE}, got {got:?}"
        )));
    }
    Ok(conn)
}

/// Like [`open`], through the [`timing`] shim (installed on top of the
/// current default VFS if it is not yet): every storage call this
/// connection makes is counted and timed. `path` must not contain `?` or `#`.
///
/// # Errors
/// As [`open`].
pub fn open_profiled(path: &str, setting: Setting) -> Result<Connection, Error> {
    if path.contains(['?', '#']) {
        return Err(Error::storage(format!(
            "cannot profile {path:?}: `?` and `#` are not allowed in its name"
        )));
    }
    timing::install()?;
    open(&format!("file:{path}?vfs={}", timing::VFS_NAME), setting)
}

/// The page's write coalescing over the [`timing`] shim ([`open_profiled_as_page`]).
const COALESCE_OVER_TIMING: &str = "inbox-lab-coalesce-over-timing";

/// Like [`open_profiled`], with the page's write coalescing on top of the
/// timing shim: the calls timed are those that reach storage as the page
/// writes. `path` must not contain `?` or `#`.
///
/// # Errors
/// As [`open`].
pub fn open_profiled_as_page(path: &str, setting: Setting) -> Result<Connection, Error> {
    if path.contains(['?', '#']) {
        return Err(Error::storage(format!(
            "cannot profile {path:?}: `?` and `#` are not allowed in its name"
        )));
    }
    timing::install()?;
    coalesce::install_over(COALESCE_OVER_TIMING, timing::VFS_NAME)?;
    open(&format!("file:{path}?vfs={COALESCE_OVER_TIMING}"), setting)
}

/// Like [`open`], through the [`coalesce`] shim (installed on top of the
/// current default VFS if it is not yet): adjacent writes reach storage as
/// one. `path` must not contain `?` or `#`.
///
/// # Errors
/// As [`open`].
pub fn open_coalesced(path: &str, setting: Setting) -> Result<Connection, Error> {
    if path.contains(['?', '#']) {
        return Err(Error::storage(format!(
            "cannot open {path:?} through a shim: `?` and `#` are not allowed in its name"
        )));
    }
    coalesce::install(false)?;
    open(&format!("file:{path}?vfs={}", coalesce::VFS_NAME), setting)
}

/// Where the time of one delivery goes: storage calls per event, from the
/// [`timing`] shim, next to the whole delivery's time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    pub setting: Setting,
    pub events: u32,
    /// Wall time of all `events` deliveries, shim included.
    pub total_ms: f64,
    /// Storage calls made during the deliveries (setup excluded).
    pub rows: Vec<timing::Row>,
}

/// Delivers events `0..events` on a connection from [`open_profiled`] and
/// reports where the time went.
///
/// # Errors
/// Any error of [`apply`](inbox_lab::apply()), and [`Error::Storage`] if an event
/// was not applied.
pub fn profile(conn: &Connection, setting: Setting, events: u32) -> Result<Profile, Error> {
    profile_with(conn, setting, events, |conn, event| {
        inbox_lab::apply(conn, event, None)
    })
}

/// Like [`profile`], delivering each event by `deliver` (the page's path, in
/// the browser: `bench/src/wasm.rs`).
///
/// # Errors
/// As [`profile`].
pub fn profile_with(
    conn: &Connection,
    setting: Setting,
    events: u32,
    mut deliver: impl FnMut(&Connection, &Event) -> Result<inbox_lab::Outcome, Error>,
) -> Result<Profile, Error> {
    timing::reset();
    let start = timing::now_ms();
    for i in 0..events {
        if !matches!(deliver(conn, &event(i))?, inbox_lab::Outcome::Applied(_)) {
            return Err(Error::storage(format!(
                "profiled event {i} was not applied"
            )));
        }
    }
    let total_ms = timing::now_ms() - start;
    Ok(Profile {
        setting,
        events,
        total_ms,
        rows: timing::rows(),
    })
}

/// One connection, nobody to wait for: a lock conflict would be a bug.
const BUSY_TIMEOUT: Duration = Duration::from_millis(100);

/// The `i`-th distinct event of a run: `("bench", "evt-00000042", 1, 1)`.
pub fn event(i: u32) -> Event {
    // Valid by construction: fixed source, ≤ 12-byte id, account 1, amount 1.
    Event::new(SOURCE, format!("evt-{i:08}"), ACCOUNT, 1)
        .unwrap_or_else(|e| unreachable!("benchmark event {i} is invalid: {e}"))
}

/// The settings a connection really runs with, read back from SQLite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settings {
    pub sqlite_version: String,
    pub journal_mode: String,
    pub locking_mode: String,
    pub synchronous: String,
    pub page_size: i64,
}

/// Reads [`Settings`] back from the connection.
///
/// # Errors
/// Storage errors.
pub fn settings(conn: &Connection) -> Result<Settings, Error> {
    let text = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, String>(0));
    let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
    Ok(Settings {
        sqlite_version: text("SELECT sqlite_version()")?,
        journal_mode: text("PRAGMA journal_mode")?.to_ascii_lowercase(),
        locking_mode: text("PRAGMA locking_mode")?.to_ascii_lowercase(),
        synchronous: match synchronous {
            0 => "off",
            1 => "normal",
            2 => "full",
            3 => "extra",
            _ => "unknown",
        }
        .to_owned(),
        page_size: conn.query_row("PRAGMA page_size", [], |r| r.get(0))?,
    })
}

/// What a finished run left in the database: the benchmark checks it
/// against the number of distinct events, so a fast but wrong run fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Account 1's balance: one unit per applied event.
    pub balance: i64,
    /// Rows in the inbox.
    pub inbox: i64,
    /// The last receipt number handed out.
    pub last_receipt: i64,
}

/// Reads the [`Tally`].
///
/// # Errors
/// Storage errors.
pub fn tally(conn: &Connection) -> Result<Tally, Error> {
    Ok(Tally {
        balance: conn.query_row(
            "SELECT balance FROM accounts WHERE id = ?1",
            params![ACCOUNT],
            |r| r.get(0),
        )?,
        inbox: conn.query_row("SELECT count(*) FROM inbox", [], |r| r.get(0))?,
        last_receipt: conn.query_row(
            "SELECT last_seq FROM receipt_counter WHERE id = 1",
            [],
            |r| r.get(0),
        )?,
    })
}

/// Latency figures of one phase, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub events: usize,
    pub total_ms: f64,
    pub events_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Summary {
    /// Summarises per-event latencies (ms) of a phase that took `total_ms`.
    /// Percentiles are nearest-rank: p99 of 200 events is the 198th fastest.
    pub fn of(latencies_ms: &[f64], total_ms: f64) -> Summary {
        let mut sorted = latencies_ms.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = |p: f64| -> f64 {
            if sorted.is_empty() {
                return 0.0;
            }
            let k = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
            sorted[k.clamp(1, sorted.len()) - 1]
        };
        Summary {
            events: sorted.len(),
            total_ms,
            events_per_s: if total_ms > 0.0 {
                sorted.len() as f64 * 1000.0 / total_ms
            } else {
                0.0
            },
            p50_ms: rank(50.0),
            p99_ms: rank(99.0),
            max_ms: sorted.last().copied().unwrap_or(0.0),
        }
    }
}

/// The official build's SQL, from the core, so the peer's transaction cannot
/// drift from ours: every migration of `src/core/schema.rs` followed by the
/// `user_version` it sets (as `schema::migrate` runs them), and each step's
/// statements of `src/core/apply.rs` by step name.
pub fn official_sql() -> (String, serde_json::Value) {
    let mut schema = String::new();
    for (i, sql) in schema::MIGRATIONS.iter().enumerate() {
        schema.push_str(&format!("{sql}PRAGMA user_version = {};\n", i + 1));
    }
    let statements = inbox_lab::core::source::STEPS
        .iter()
        .map(|step| {
            (
                step.as_str().to_owned(),
                serde_json::json!(step.statements()),
            )
        })
        .collect();
    (schema, serde_json::Value::Object(statements))
}

/// [`official_sql`] as the ES module `bench/official-worker.mjs` imports
/// (`./core-sql.mjs`); `cargo xtask bench` writes it next to the worker.
pub fn official_sql_module() -> String {
    let (schema, statements) = official_sql();
    format!(
        "// Generated by `cargo xtask bench` from src/core/schema.rs and src/core/apply.rs.\n\
         export const SCHEMA = {};\nexport const STATEMENTS = {statements};\n",
        serde_json::Value::String(schema)
    )
}

// The native tests; the browser runs the same workload through `wasm::Bench`
// in `tests/e2e/bench.test.mjs`.
#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;
    use inbox_lab::{apply, Outcome};

    /// Every setting is really taken, and a run applies each event once and
    /// answers every replay as a duplicate.
    #[test]
    fn every_setting_runs_the_workload() {
        let dir = tempfile::tempdir().unwrap();
        for setting in Setting::ALL {
            let path = dir.path().join(format!("{}.sqlite3", setting.name()));
            let conn = open(path.to_str().unwrap(), setting).unwrap();
            let got = settings(&conn).unwrap();
            assert_eq!(got.journal_mode, setting.journal_mode());
            assert_eq!(got.synchronous, setting.synchronous());
            assert_eq!(got.page_size, i64::from(PAGE_SIZE));
            for i in 0..20 {
                assert!(matches!(
                    apply(&conn, &event(i), None),
                    Ok(Outcome::Applied(_))
                ));
            }
            for i in 0..20 {
                assert!(matches!(
                    apply(&conn, &event(i), None),
                    Ok(Outcome::Duplicate(_))
                ));
            }
            let t = tally(&conn).unwrap();
            assert_eq!((t.balance, t.inbox, t.last_receipt), (20, 20, 20));
        }
    }

    /// The profile sees the syncs that make a durable commit durable, and
    /// none where a commit is not synced.
    #[test]
    fn the_profile_counts_syncs_per_commit() {
        let dir = tempfile::tempdir().unwrap();
        let syncs = |setting: Setting| {
            let path = dir
                .path()
                .join(format!("profiled-{}.sqlite3", setting.name()));
            let conn = open_profiled(path.to_str().unwrap(), setting).unwrap();
            let p = profile(&conn, setting, 10).unwrap();
            assert_eq!(tally(&conn).unwrap().inbox, 10);
            p.rows
                .iter()
                .filter(|r| r.op == inbox_lab::storage::Op::Sync)
                .map(|r| r.calls)
                .sum::<u64>()
        };
        // Journal and database, at least, for every commit.
        assert!(syncs(Setting::DeleteFull) >= 20);
        // The WAL, once per commit.
        assert!(syncs(Setting::WalFull) >= 10);
        // Nothing until a checkpoint (1000 pages away).
        assert_eq!(syncs(Setting::WalNormal), 0);
    }

    /// The official build's worker runs the core's schema, as current as ours,
    /// and the core's statements: the first INSERT registers, the second is
    /// the key's conflict.
    #[test]
    fn the_official_sql_is_the_cores() {
        let (schema, statements) = official_sql();
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&schema).unwrap();
        schema::check_current(&conn).unwrap();
        conn.execute("INSERT INTO accounts(id) VALUES (1)", [])
            .unwrap();
        let insert = statements["insert"][0].as_str().unwrap();
        let args = params!["bench", "evt-00000000", ACCOUNT, 1];
        assert_eq!(conn.execute(insert, args).unwrap(), 1);
        assert_eq!(conn.execute(insert, args).unwrap(), 0);
        let steps = statements.as_object().unwrap().keys().cloned();
        assert_eq!(
            steps.collect::<Vec<_>>(),
            [
                "begin",
                "commit",
                "credit",
                "insert",
                "read_stored",
                "store_receipt"
            ]
        );
    }

    #[test]
    fn settings_parse_by_name() {
        for setting in Setting::ALL {
            assert_eq!(setting.name().parse::<Setting>(), Ok(setting));
        }
        assert!("wal".parse::<Setting>().is_err());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let lat: Vec<f64> = (1..=200).map(f64::from).collect();
        let s = Summary::of(&lat, 1000.0);
        assert_eq!((s.p50_ms, s.p99_ms, s.max_ms), (100.0, 198.0, 200.0));
        assert_eq!(s.events_per_s, 200.0);
        assert_eq!(Summary::of(&[], 0.0).p99_ms, 0.0);
    }
}
