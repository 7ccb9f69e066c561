//! The crash lab in the browser: [`CrashLab`].
//!
//! `www/panels/crash-lab/crashworker.js` runs in its own dedicated worker
//! and creates one `CrashLab`. The page kills that worker
//! (`worker.terminate()`) in the middle of a commit and starts a new one,
//! which reopens the database from OPFS: the reopening is SQLite's
//! recovery, and `crash::classify` (the sweep) or `crash::stream::check`
//! (the random kills) judges what survived. Every verdict, and the sweep's
//! summary, is computed in Rust; the page only shows them.

use std::cell::{Cell, RefCell};

use sqlite_wasm_rs::vfs::transfer::DbTransfer;

use sqlite_wasm_rs::vfs::VfsFilesManager;
use sqlite_wasm_vfs::sahpool::OpfsSAHPoolCfgBuilder;

use super::*;
use crate::apply;
use crate::core::db::Mode;
use crate::core::{schema, tables};
use crate::labs::crash::{self, stream, JournalMode};
use crate::storage::iolog::{self, IoOp};

/// Directory of the crash lab's own OPFS pool. A pool directory belongs to
/// one worker at a time and the database worker holds [`POOL_DIRECTORY`],
/// so the crash worker keeps its files apart, in a pool of its own.
pub const CRASH_POOL_DIRECTORY: &str = ".inbox-lab-crash";

/// The crash pool's VFS name. In the crash worker it is the *default* VFS,
/// so the [`iolog`] shims (which wrap the default VFS) sit on top of it.
pub const CRASH_VFS_NAME: &str = "opfs-crash";

/// Template, try, stream, and a journal or WAL for each, with room to spare.
const CRASH_POOL_CAPACITY: usize = 10;

/// The sweep's pristine database: schema, account 1, journal mode set.
const CRASH_TEMPLATE: &str = "crash-template.sqlite3";
/// The byte-for-byte copy of the template that one try crashes in.
const CRASH_TRY: &str = "crash-try.sqlite3";
/// The database of the random-kill stream.
const KILLS_DB: &str = "random-kills.sqlite3";

thread_local! {
    /// What the crash hook calls to tell the page where the worker stopped.
    static ON_CRASH: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    /// How the worker stops at the crash point (see [`crash_in_worker`]).
    static STOP_BY_SPINNING: Cell<bool> = const { Cell::new(false) };
}

/// The crash hook in a browser worker. A worker cannot end itself on the
/// spot the way a process exits, so it tells the page where it stopped and
/// then makes sure nothing more of it reaches storage until the page calls
/// `worker.terminate()` — that termination is the kill. Two ways to stop:
///
/// * **trap** (the default): a WebAssembly trap unwinds every frame at once,
///   SQLite's included, without running any of them — no rollback, no
///   close, no further write. The worker then sits idle, holding its OPFS
///   handles, and `terminate()` takes effect at once.
/// * **spin**: loop forever. Just as final for storage, but the browser
///   waits about two seconds before it forcibly stops a worker that is
///   running code, so every crash point costs that much more.
fn crash_in_worker(op: &IoOp) -> ! {
    let op = to_value(op).unwrap_or(JsValue::NULL);
    ON_CRASH.with(|hook| {
        if let Some(hook) = hook.borrow().as_ref() {
            // Nobody could hear an error from here; stopping below keeps
            // the storage traffic stopped either way.
            let _ = hook.call1(&JsValue::NULL, &op);
        }
    });
    if STOP_BY_SPINNING.get() {
        loop {
            std::hint::spin_loop();
        }
    }
    core::arch::wasm32::unreachable()
}

/// The crash lab's side of one crash worker: the sweep (template, tries,
/// recovery) and the random-kill stream, in the crash pool.
#[wasm_bindgen]
pub struct CrashLab {
    pool: OpfsSAHPoolUtil,
    mode: JournalMode,
    events: Vec<Event>,
    /// Which stack the tries write through: the page's (coalescing over the
    /// counting shim) or the coalescing control's.
    control: crash::Control,
    /// The random-kill stream's connection, once `killsOpen` ran.
    kills: Option<Connection>,
}

#[wasm_bindgen]
impl CrashLab {
    /// Installs the crash pool as this worker's default VFS, and the iolog
    /// shims over it with write coalescing on top (the page's stack). `mode`
    /// is `"delete"` or `"wal"` (always with `synchronous=FULL`); `events`
    /// (1 to 29) is the size of the workload; `stop` is how the worker
    /// stops at a crash point: `"trap"` or `"spin"`; `control` (optional):
    /// `"holds-commits"` writes through the coalescing control, which the
    /// sweep must catch (`"none"`, the default: the page's stack).
    pub async fn open(
        mode: String,
        events: JsValue,
        stop: String,
        control: Option<String>,
    ) -> Result<CrashLab, JsValue> {
        let mode: JournalMode = mode
            .parse()
            .map_err(|reason: String| JsValue::from(Error::invalid(Field::EVENT, reason)))?;
        let spin = match stop.as_str() {
            "trap" => false,
            "spin" => true,
            other => {
                return Err(JsValue::from(Error::invalid(
                    Field::EVENT,
                    format!("unknown stop {other:?}: expected \"trap\" or \"spin\""),
                )))
            }
        };
        let control = match control.as_deref() {
            None | Some("none") => crash::Control::None,
            Some("holds-commits") => crash::Control::HoldsCommits,
            Some(other) => {
                return Err(JsValue::from(Error::invalid(
                    Field::EVENT,
                    format!("unknown control {other:?}: expected \"none\" or \"holds-commits\""),
                )))
            }
        };
        STOP_BY_SPINNING.set(spin);
        let n = number_from_js(Field::EVENT, &events)?;
        let n = usize::try_from(n)
            .map_err(|_| JsValue::from(Error::invalid(Field::EVENT, "events must be positive")))?;
        let events = crash::events(n)?;
        let cfg = OpfsSAHPoolCfgBuilder::new()
            .vfs_name(CRASH_VFS_NAME)
            .directory(CRASH_POOL_DIRECTORY)
            .initial_capacity(CRASH_POOL_CAPACITY)
            .build();
        let pool = install_pool(&cfg).await?;
        iolog::install()?;
        Ok(CrashLab {
            pool,
            mode,
            events,
            control,
            kills: None,
        })
    }

    /// Builds a fresh template and runs the workload once on a copy of it,
    /// without a crash, counting its storage operations. Returns the log,
    /// `[{k, file, op, offset, len}]`: the crash points are 1 to its length.
    pub fn prepare(&self) -> Result<JsValue, JsValue> {
        let log = (|| {
            self.remove_with_sidecars(CRASH_TEMPLATE)?;
            {
                let mut conn = db::open_with(CRASH_TEMPLATE, Mode::Create, BUSY_TIMEOUT, |c| {
                    crash::configure(c, self.mode)
                })?;
                schema::init(&mut conn, &[1])?;
            } // closed: a WAL is checkpointed into the file and removed
            self.fresh_try()?;
            let conn = self.open_try(self.control.write_vfs())?;
            iolog::arm(None, crash_in_worker);
            let result = crash::workload(&conn, &self.events, |_| {});
            let log = iolog::disarm();
            result.map_err(|e| Error::storage(format!("counting the operations: {e}")))?;
            Ok::<_, Error>(log)
        })()?;
        to_value(&log)
    }

    /// One try: a fresh copy of the template, then the workload through the
    /// shim armed to crash after `crash_after` operations. `on_ack(i)` runs
    /// once event `i` has committed, before the next one starts (the moment
    /// a handler answers 200). When operation `crash_after + 1` comes,
    /// `on_crash(op)` runs and this call never returns. It returns only if
    /// the workload, closing included, needed no more operations.
    #[wasm_bindgen(js_name = runTry)]
    pub fn run_try(
        &self,
        crash_after: usize,
        on_ack: &js_sys::Function,
        on_crash: js_sys::Function,
    ) -> Result<(), JsValue> {
        self.fresh_try()?;
        let conn = self.open_try(self.control.write_vfs())?;
        ON_CRASH.with(|hook| *hook.borrow_mut() = Some(on_crash));
        iolog::arm(Some(crash_after), crash_in_worker);
        let result = crash::workload(&conn, &self.events, |i| {
            // Posting a message cannot fail in a way the workload could act on.
            let _ = on_ack.call1(&JsValue::NULL, &JsValue::from_f64(i as f64));
        });
        drop(conn); // closing writes too (a WAL checkpoint): still armed
        iolog::disarm();
        result.map_err(JsValue::from)
    }

    /// Reopens the try's database — opening it is SQLite's recovery — and
    /// says what survived: `{outcome: "atomic" | "partial" |
    /// "lost_acknowledged", recovered: {integrity, registered, credited,
    /// acknowledged}}`. `control`: recover through the broken lock check
    /// (`xCheckReservedLock` always 1), which must be caught.
    pub fn recover(&self, acknowledged: usize, control: bool) -> Result<JsValue, JsValue> {
        let vfs = if control {
            crash::Control::BrokenLock.recover_vfs()
        } else {
            self.control.recover_vfs()
        };
        let recovered = self
            .open_try(vfs)
            .and_then(|conn| crash::classify(&conn, &self.events, acknowledged))?;
        to_value(&Recovery {
            outcome: recovered.verdict(),
            recovered,
        })
    }

    /// The sweep's summary line, as `inbox-lab crash-lab` prints it:
    /// `{mode, crash_points, atomic, partial, lost_acknowledged}`, counted
    /// from `outcomes`, the verdicts `recover` gave (one per crash point;
    /// the sweep's rows come from several workers, one per kill).
    pub fn summary(&self, outcomes: JsValue) -> Result<JsValue, JsValue> {
        if !js_sys::Array::is_array(&outcomes) {
            return Err(rules::wrong_type(
                crash::sweep::OUTCOMES,
                ValueType::Array,
                type_of(&outcomes),
            )
            .into());
        }
        let verdicts: Vec<crash::Verdict> = serde_wasm_bindgen::from_value(outcomes)
            .map_err(|e| Error::invalid(crash::sweep::OUTCOMES, e.to_string()))?;
        to_value(&crash::Summary::count(self.mode, verdicts))
    }

    /// Random kills: opens the stream's database in this lab's journal mode,
    /// creating it with account 1 if needed, through the (unarmed) shim.
    /// After a kill this open is the recovery. `acknowledged`: the indexes
    /// of the events the sender heard "200" for. Returns the verdict,
    /// `{partial, lost, balance, expected, applied}` (`crash::stream::check`).
    #[wasm_bindgen(js_name = killsOpen)]
    pub fn kills_open(&mut self, acknowledged: JsValue) -> Result<JsValue, JsValue> {
        let acknowledged = indexes_from_js(stream::ACKNOWLEDGED, &acknowledged)?;
        self.kills = None;
        let answer = (|| {
            let path = format!("file:{KILLS_DB}?vfs={}", iolog::COALESCED_VFS_NAME);
            let mut conn = db::open_with(&path, Mode::Create, BUSY_TIMEOUT, |c| {
                crash::configure(c, self.mode)
            })?;
            if tables::snapshot(&conn)?.accounts.is_empty() {
                schema::init(&mut conn, &[1])?;
            }
            let answer = stream::check(&conn, &acknowledged)?;
            self.kills = Some(conn);
            Ok::<_, Error>(answer)
        })()?;
        to_value(&answer)
    }

    /// Random kills: delivers the stream's event `j` (`crash::stream::event`)
    /// to its database with the atomic handler, like `Lab.deliver`:
    /// `{outcome, http_status, receipt}`.
    #[wasm_bindgen(js_name = killsDeliver)]
    pub fn kills_deliver(&self, j: JsValue) -> Result<JsValue, JsValue> {
        let event = stream::event(index_from_js(Field::EVENT_ID, &j)?)?;
        let conn = self
            .kills
            .as_ref()
            .ok_or_else(|| JsValue::from(Error::storage("open the stream first (killsOpen)")))?;
        to_value(&apply(conn, &event, None)?)
    }

    /// Random kills: from now on, crash after `crash_after` more storage
    /// operations (`on_crash(op)` then runs, and the call in progress never
    /// returns) — a kill at a chosen point of the stream's I/O.
    #[wasm_bindgen(js_name = killsArm)]
    pub fn kills_arm(&self, crash_after: usize, on_crash: js_sys::Function) {
        ON_CRASH.with(|hook| *hook.borrow_mut() = Some(on_crash));
        iolog::arm(Some(crash_after), crash_in_worker);
    }

    /// Random kills: stop counting; returns how many operations ran.
    #[wasm_bindgen(js_name = killsDisarm)]
    pub fn kills_disarm(&self) -> usize {
        iolog::disarm().len()
    }

    /// Random kills: deletes the stream's database (and any journal or WAL).
    #[wasm_bindgen(js_name = killsReset)]
    pub fn kills_reset(&mut self) -> Result<(), JsValue> {
        self.kills = None;
        self.remove_with_sidecars(KILLS_DB).map_err(JsValue::from)
    }
}

impl CrashLab {
    fn remove_with_sidecars(&self, name: &str) -> Result<(), Error> {
        for file in [
            name.to_owned(),
            format!("{name}-journal"),
            format!("{name}-wal"),
        ] {
            self.pool
                .remove(&file)
                .map_err(|e| Error::storage(format!("cannot delete {file}: {e}")))?;
        }
        Ok(())
    }

    /// The try's database becomes a byte-for-byte copy of the template (a
    /// raw import keeps the header as it is, WAL flag included), with no
    /// journal or WAL left from an earlier try.
    fn fresh_try(&self) -> Result<(), Error> {
        self.remove_with_sidecars(CRASH_TRY)?;
        let bytes = self
            .pool
            .export_db(CRASH_TEMPLATE)
            .map_err(|e| Error::storage(format!("cannot read the template: {e}")))?;
        self.pool
            .import_db_unchecked(CRASH_TRY, &bytes)
            .map_err(|e| Error::storage(format!("cannot copy the template: {e}")))
    }

    fn open_try(&self, vfs: &str) -> Result<Connection, Error> {
        db::open_with(
            &format!("file:{CRASH_TRY}?vfs={vfs}"),
            Mode::Existing,
            BUSY_TIMEOUT,
            |c| crash::configure(c, self.mode),
        )
    }
}

#[derive(Serialize)]
struct Recovery {
    outcome: crash::Verdict,
    recovered: crash::Recovered,
}

/// A non-negative integral JS number, as an index.
fn index_from_js(field: Field, value: &JsValue) -> Result<usize, Error> {
    usize::try_from(number_from_js(field, value)?)
        .map_err(|_| Error::invalid(field, "must not be negative"))
}

/// An array of indexes.
fn indexes_from_js(field: Field, value: &JsValue) -> Result<Vec<usize>, Error> {
    let Some(array) = value.dyn_ref::<js_sys::Array>() else {
        return Err(rules::wrong_type(field, ValueType::Array, type_of(value)));
    };
    array.iter().map(|j| index_from_js(field, &j)).collect()
}
