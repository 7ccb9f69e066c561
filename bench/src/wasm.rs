//! The benchmark's side of the real apply path: [`Bench`].

use inbox_lab::labs::handlers::Handler;
use inbox_lab::labs::verdicts::{outcome_answer, Referee};
use inbox_lab::wasm::{closed, install_pool, to_value, POOL_CAPACITY};
use inbox_lab::{apply, apply_traced, Error, Outcome};
use rusqlite::Connection;
use sqlite_wasm_rs::vfs::VfsFilesManager;
use sqlite_wasm_vfs::sahpool::{OpfsSAHPoolCfgBuilder, OpfsSAHPoolUtil};
use wasm_bindgen::prelude::*;

/// Directory of the benchmark's own OPFS pool: apart from the reader's
/// database, so a benchmark never touches it, and usable while the page's
/// database worker holds its own pool.
pub const BENCH_POOL_DIRECTORY: &str = ".inbox-lab-bench";

/// The benchmark's VFS name (its pool is the default VFS of its worker).
const BENCH_VFS_NAME: &str = "inbox-lab-bench";

/// The benchmark's side of the real apply path, for `www/panels/bench/benchworker.js`:
/// one fresh OPFS database per [`Setting`](crate::Setting), and
/// [`apply`] called once per event with no JavaScript value to convert on
/// the way in or out, so the worker times the transaction, not the facade.
#[wasm_bindgen]
pub struct Bench {
    pool: OpfsSAHPoolUtil,
    setting: crate::Setting,
    name: String,
    conn: Option<Connection>,
    stack: Stack,
}

#[wasm_bindgen]
impl Bench {
    /// Installs the benchmark pool (emptied on first install in a worker)
    /// and opens a fresh database for `setting` (`"delete-full"`,
    /// `"wal-full"` or `"wal-normal"`) on it, straight on the pool (as the
    /// page's worker opened its database before); with `coalesce`, through
    /// the write-coalescing shim (`storage::coalesce`), as the page runs.
    pub async fn open(setting: String, coalesce: bool) -> Result<Bench, JsValue> {
        let stack = if coalesce {
            Stack::Coalesced
        } else {
            Stack::Page
        };
        Bench::open_with(setting, stack).await
    }

    /// Writes SQLite asked for and writes that reached storage through the
    /// coalescing shim since the last call: `{writes_in, writes_out}` (zero
    /// without the shim).
    #[wasm_bindgen(js_name = takeWrites)]
    pub fn take_writes(&self) -> Result<JsValue, JsValue> {
        let stats = inbox_lab::storage::coalesce::take_stats();
        to_value(&[stats.writes_in, stats.writes_out])
    }

    /// Like `open`, through the timing shim (`crate::timing`): every storage
    /// call is counted and timed, for [`Bench::profile`]. With `as_page`,
    /// the page's write coalescing on top of it: what is timed is what
    /// reaches storage as the page writes.
    #[wasm_bindgen(js_name = openProfiled)]
    pub async fn open_profiled(setting: String, as_page: bool) -> Result<Bench, JsValue> {
        let stack = if as_page {
            Stack::ProfiledAsPage
        } else {
            Stack::Profiled
        };
        Bench::open_with(setting, stack).await
    }

    /// On a database from `openProfiled`: delivers events `0..events` and
    /// returns `{setting, events, total_ms, rows: [{file, op, calls,
    /// total_ms}]}`. Opened `as_page`, each delivery is what the page's
    /// worker runs for one (`Lab::deliver`): the atomic handler's apply with
    /// its steps, watched and judged by the referee, and its answer, steps
    /// and verdict made JavaScript values.
    pub fn profile(&self, events: u32) -> Result<JsValue, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| JsValue::from(closed()))?;
        let setting = self.setting;
        if !matches!(self.stack, Stack::ProfiledAsPage) {
            return to_value(&crate::profile(conn, setting, events)?);
        }
        let mut referee = Referee::default();
        let profile = crate::profile_with(conn, setting, events, |conn, event| {
            let (outcome, steps, verdict) =
                referee.watch(conn, Handler::Atomic, None, event, outcome_answer, || {
                    apply_traced(conn, event, None)
                });
            let outcome = outcome?;
            to_value(&(&outcome, &steps, &verdict))
                .map_err(|e| Error::storage(format!("{e:?}")))?;
            Ok(outcome)
        })?;
        to_value(&profile)
    }

    /// The settings SQLite really runs with: `{sqlite_version,
    /// journal_mode, locking_mode, synchronous, page_size}`.
    pub fn settings(&self) -> Result<JsValue, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| JsValue::from(closed()))?;
        to_value(&crate::settings(conn)?)
    }

    /// Delivers the `i`-th benchmark event through [`apply`]: `true` if it
    /// was applied, `false` if it was a duplicate; throws the error object.
    pub fn apply(&self, i: u32) -> Result<bool, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| JsValue::from(closed()))?;
        match apply(conn, &crate::event(i), None)? {
            Outcome::Applied(_) => Ok(true),
            Outcome::Duplicate(_) => Ok(false),
        }
    }

    /// What the run left: `{balance, inbox, last_receipt}`.
    pub fn tally(&self) -> Result<JsValue, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| JsValue::from(closed()))?;
        to_value(&crate::tally(conn)?)
    }

    /// Closes the database and deletes its files from the pool.
    pub fn close(&mut self) -> Result<(), JsValue> {
        self.conn = None;
        let name = &self.name;
        for file in [
            name.clone(),
            format!("{name}-journal"),
            format!("{name}-wal"),
        ] {
            self.pool
                .remove(&file)
                .map_err(|e| JsValue::from(Error::storage(e.to_string())))?;
        }
        Ok(())
    }
}

/// Which VFS stack a [`Bench`] database is opened through.
enum Stack {
    /// The page's: the OPFS pool itself.
    Page,
    /// The pool under the write-coalescing shim.
    Coalesced,
    /// The pool under the timing shim.
    Profiled,
    /// The pool under the timing shim under the write-coalescing shim: the
    /// page's stack, timed below the coalescing.
    ProfiledAsPage,
}

impl Bench {
    async fn open_with(setting: String, stack: Stack) -> Result<Bench, JsValue> {
        let setting: crate::Setting = setting
            .parse()
            .map_err(|reason: String| JsValue::from(Error::storage(reason)))?;
        let cfg = OpfsSAHPoolCfgBuilder::new()
            .vfs_name(BENCH_VFS_NAME)
            .directory(BENCH_POOL_DIRECTORY)
            .initial_capacity(POOL_CAPACITY)
            .clear_on_init(true)
            .build();
        let pool = install_pool(&cfg).await?;
        crate::timing::set_clock(performance_now);
        let name = format!("bench-{}.sqlite3", setting.name());
        for file in [
            name.clone(),
            format!("{name}-journal"),
            format!("{name}-wal"),
        ] {
            pool.remove(&file)
                .map_err(|e| JsValue::from(Error::storage(e.to_string())))?;
        }
        let conn = match stack {
            Stack::Page => crate::open(&name, setting),
            Stack::Coalesced => crate::open_coalesced(&name, setting),
            Stack::Profiled => crate::open_profiled(&name, setting),
            Stack::ProfiledAsPage => crate::open_profiled_as_page(&name, setting),
        }?;
        Ok(Bench {
            pool,
            setting,
            name,
            conn: Some(conn),
            stack,
        })
    }
}

/// `performance.now()` of this worker, in milliseconds: the timing shim's clock.
fn performance_now() -> f64 {
    thread_local! {
        static NOW: Option<(JsValue, js_sys::Function)> = {
            let perf = js_sys::Reflect::get(&js_sys::global(), &"performance".into()).ok();
            perf.and_then(|perf| {
                let now = js_sys::Reflect::get(&perf, &"now".into()).ok()?;
                Some((perf, now.dyn_into::<js_sys::Function>().ok()?))
            })
        };
    }
    NOW.with(|now| {
        now.as_ref()
            .and_then(|(perf, f)| f.call0(perf).ok())
            .and_then(|v| v.as_f64())
            .unwrap_or_else(js_sys::Date::now)
    })
}
