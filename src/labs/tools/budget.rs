//! A budget for SQL whose cost nobody here controls: a query typed into the
//! console, or the reading of an imported file.
//!
//! Invariant: SQL run through [`within`] stops after at most
//! [`Budget::steps`] virtual-machine steps or [`Budget::time`] of wall
//! time, whichever comes first, and no value it computes is longer than
//! [`Budget::max_value_bytes`]. The worker is single-threaded: without this
//! one `WITH RECURSIVE` query could hold it (and every delivery queued behind
//! it) forever.
//!
//! Two of SQLite's own mechanisms do the work, nothing is parsed:
//! * the progress handler (`sqlite3_progress_handler`), called every
//!   `CHECK_EVERY` steps, interrupts the statement once the budget is
//!   spent; the statement then fails with `SQLITE_INTERRUPT` and nothing it
//!   did is kept (the console and the import only read);
//! * `SQLITE_LIMIT_LENGTH`, lowered for the duration, makes any string or
//!   blob longer than the limit an error (`SQLITE_TOOBIG`) instead of a
//!   300 MB allocation.
//!
//! Both are removed afterwards, so the application's own statements on the
//! same connection are never interrupted.
//!
//! Memory is bounded separately and for the whole process, by SQLite's hard
//! heap limit: [`set_heap_limit`], which the browser worker sets to
//! [`HEAP_LIMIT_BYTES`] when it opens the database.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::limits::Limit;
use rusqlite::Connection;
use web_time::Instant;

/// The progress handler runs every this many virtual-machine steps.
const CHECK_EVERY: u32 = 1_000;

/// How much SQL may do before it is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Virtual-machine steps (SQLite's unit of work), rounded to
    /// `CHECK_EVERY`.
    pub steps: u64,
    /// Wall time.
    pub time: Duration,
    /// The longest string or blob any expression may produce, in bytes.
    pub max_value_bytes: i32,
}

impl Budget {
    /// One console query: ample for any question about the lab's tables,
    /// short enough that a delivery queued behind it waits a moment at most.
    pub const CONSOLE: Budget = Budget {
        steps: 100_000_000,
        time: Duration::from_secs(2),
        max_value_bytes: 1 << 20,
    };

    /// One run of the handler judge: every statement of every delivery it
    /// runs (thousands, on several connections: [`Meter`]).
    pub const JUDGE: Budget = Budget {
        steps: 300_000_000,
        time: Duration::from_secs(120),
        max_value_bytes: 1 << 20,
    };

    /// Checking and reading one imported file of `bytes` bytes: 2 s, and 1 s
    /// more per MiB (66 s for the largest file accepted, 64 MiB).
    pub fn import(bytes: usize) -> Budget {
        const MIB: u64 = 1 << 20;
        let mib = (bytes as u64).div_ceil(MIB);
        Budget {
            steps: 2_000_000_000,
            time: Duration::from_secs(2 + mib),
            max_value_bytes: 1 << 20,
        }
    }

    /// The wall-clock deadline the page enforces from outside on work run
    /// under this budget: the budget, and `GRACE` for the budget's own
    /// answer to arrive first.
    ///
    /// The page runs foreign work (a console query, an imported file, a
    /// judged handler) in a worker of its own, never in the worker that owns
    /// the database (www/db/foreign.js), and terminates that worker at this
    /// deadline. That is what makes the limit hold whatever the cost shape:
    /// the progress handler counts virtual-machine steps, and one step — a
    /// `LIKE` or `instr` over a megabyte string — can take a minute.
    pub fn deadline(&self) -> Duration {
        self.time + GRACE
    }
}

/// How long past its budget foreign work may run before the page stops it
/// from outside ([`Budget::deadline`]).
const GRACE: Duration = Duration::from_millis(250);

/// Which half of the budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spent {
    Steps,
    Time,
}

/// The budget ran out: the SQL was interrupted after `steps` steps and
/// `elapsed` of wall time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded {
    pub spent: Spent,
    pub steps: u64,
    pub elapsed: Duration,
}

/// Runs `f` on `conn` under `budget`: `f`'s own result, if the budget did
/// not interrupt it.
///
/// # Errors
/// `Err(Exceeded)` if it did (whatever `f` returned then is the
/// interruption, so it is dropped); `Ok(Err(_))` is `f`'s error, or a
/// `rusqlite::Error` from installing or removing the limits.
pub fn within<T, E>(
    conn: &mut Connection,
    budget: Budget,
    f: impl FnOnce(&mut Connection) -> Result<T, E>,
) -> Result<Result<T, E>, Exceeded>
where
    E: From<rusqlite::Error>,
{
    // A meter of its own, on this one connection.
    let meter = Meter::new(budget);
    let previous_length = match meter.install(conn) {
        Ok(previous) => previous,
        Err(e) => {
            let _ = conn.progress_handler(0, None::<fn() -> bool>);
            return Ok(Err(E::from(e)));
        }
    };
    let result = f(conn);
    let removed = conn
        .progress_handler(0, None::<fn() -> bool>)
        .and_then(|()| conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, previous_length));
    if let Some(exceeded) = meter.exceeded() {
        return Err(exceeded);
    }
    match removed {
        Ok(_) => Ok(result),
        Err(e) => Ok(Err(E::from(e))),
    }
}

/// One budget shared by every connection of a long run (the handler
/// judge: thousands of deliveries on several connections). Each connection
/// gets a progress handler ([`Meter::install`]) that counts into the same
/// meter; once the steps or the time are spent, every statement on every metered connection is interrupted.
#[derive(Debug, Clone)]
pub struct Meter {
    inner: Arc<MeterState>,
}

#[derive(Debug)]
struct MeterState {
    budget: Budget,
    start: Instant,
    steps: AtomicU64,
    fired: AtomicBool,
    spent_time: AtomicBool,
}

impl Meter {
    pub fn new(budget: Budget) -> Meter {
        Meter {
            inner: Arc::new(MeterState {
                budget,
                start: Instant::now(),
                steps: AtomicU64::new(0),
                fired: AtomicBool::new(false),
                spent_time: AtomicBool::new(false),
            }),
        }
    }

    /// Meters `conn` from now on (and limits the length of its values);
    /// returns the length limit it replaced.
    ///
    /// # Errors
    /// SQLite refusing the handler or the limit.
    pub fn install(&self, conn: &mut Connection) -> Result<i32, rusqlite::Error> {
        let m = self.inner.clone();
        conn.progress_handler(
            CHECK_EVERY as i32,
            Some(move || {
                let done = m.steps.fetch_add(u64::from(CHECK_EVERY), Ordering::Relaxed)
                    + u64::from(CHECK_EVERY);
                let over_time = m.start.elapsed() >= m.budget.time;
                if done >= m.budget.steps || over_time {
                    m.spent_time.store(over_time, Ordering::Relaxed);
                    m.fired.store(true, Ordering::Relaxed);
                    return true; // interrupt
                }
                false
            }),
        )?;
        conn.set_limit(
            Limit::SQLITE_LIMIT_LENGTH,
            self.inner.budget.max_value_bytes,
        )
    }

    /// `Some` once the budget interrupted a statement.
    pub fn exceeded(&self) -> Option<Exceeded> {
        let m = &self.inner;
        m.fired.load(Ordering::Relaxed).then(|| Exceeded {
            spent: if m.spent_time.load(Ordering::Relaxed) {
                Spent::Time
            } else {
                Spent::Steps
            },
            steps: m.steps.load(Ordering::Relaxed),
            elapsed: m.start.elapsed(),
        })
    }
}

/// The most memory SQLite may hold at once in the browser's database worker:
/// 512 MiB, set by the wasm facade when it opens the database.
///
/// A budget bounds steps and time, not memory, and memory is the one thing
/// a worker cannot get back: a wasm instance's memory only grows, and a
/// Rust allocation that fails once it cannot grow any more is a trap that
/// kills the worker. Two seconds are enough for a `SELECT DISTINCT` or a
/// window over megabyte values to fill gigabytes of temporary b-tree pages
/// (in memory: `sqlite-wasm-rs` builds with `SQLITE_TEMP_STORE=2`). With a
/// hard heap limit SQLite refuses the allocation instead, the statement
/// fails with `SQLITE_NOMEM`, and the connection goes on. 512 MiB is far
/// above what the lab needs (page caches of 16 MiB, an import of at most
/// 64 MiB read into memory and rebuilt) and far below what a tab may use.
///
/// Natively nothing sets it: the CLI runs no foreign SQL.
pub const HEAP_LIMIT_BYTES: i64 = 512 << 20;

/// Sets SQLite's hard heap limit, for every connection of this process
/// (`sqlite3_hard_heap_limit64`); 0 removes it. Returns the previous limit.
///
/// SQLite enforces it only while it keeps memory statistics, which is why
/// the release wasm no longer builds with `-DSQLITE_DEFAULT_MEMSTATUS=0`
/// (`xtask/src/build.rs`).
pub fn set_heap_limit(bytes: i64) -> i64 {
    // SAFETY: the call reads and writes only SQLite's own global settings
    // (under its mutex where SQLite is threadsafe) and accepts any value;
    // a negative one would only query, so it is clamped to 0 first.
    unsafe { rusqlite::ffi::sqlite3_hard_heap_limit64(bytes.max(0)) }
}

/// SQLite's hard heap limit in bytes; 0 when there is none.
pub(crate) fn heap_limit() -> i64 {
    // SAFETY: as above; a negative argument only reads the limit.
    unsafe { rusqlite::ffi::sqlite3_hard_heap_limit64(-1) }
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    const ENDLESS: &str =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";

    fn count(conn: &Connection, sql: &str) -> Result<i64, rusqlite::Error> {
        conn.query_row(sql, [], |r| r.get(0))
    }

    #[test]
    fn an_endless_query_is_stopped_by_steps() {
        let mut conn = Connection::open_in_memory().unwrap();
        let budget = Budget {
            steps: 1_000_000,
            time: Duration::from_secs(3600),
            ..Budget::CONSOLE
        };
        let stopped = within(&mut conn, budget, |c| count(c, ENDLESS)).unwrap_err();
        assert_eq!(stopped.spent, Spent::Steps);
        assert_eq!(stopped.steps, 1_000_000);
        // The handler is gone: the same connection runs long work again.
        let n = count(
            &conn,
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 2000000) SELECT count(*) FROM c",
        )
        .unwrap();
        assert_eq!(n, 2_000_000);
    }

    #[test]
    fn an_endless_query_is_stopped_by_time() {
        let mut conn = Connection::open_in_memory().unwrap();
        let budget = Budget {
            steps: u64::MAX,
            time: Duration::from_millis(200),
            ..Budget::CONSOLE
        };
        let stopped = within(&mut conn, budget, |c| count(c, ENDLESS)).unwrap_err();
        assert_eq!(stopped.spent, Spent::Time);
        assert!(stopped.elapsed >= Duration::from_millis(200));
    }

    #[test]
    fn a_huge_value_is_an_error_and_the_limit_is_restored() {
        let mut conn = Connection::open_in_memory().unwrap();
        let inside = within(&mut conn, Budget::CONSOLE, |c| {
            count(c, "SELECT length(randomblob(300000000))")
        })
        .unwrap();
        let err = inside.unwrap_err();
        assert_eq!(err.sqlite_error_code(), Some(rusqlite::ErrorCode::TooBig));
        let n = count(&conn, "SELECT length(randomblob(2000000))").unwrap();
        assert_eq!(n, 2_000_000);
    }

    #[test]
    fn work_within_the_budget_is_untouched() {
        let mut conn = Connection::open_in_memory().unwrap();
        let n = within(&mut conn, Budget::CONSOLE, |c| count(c, "SELECT 41 + 1"))
            .unwrap()
            .unwrap();
        assert_eq!(n, 42);
    }
}
