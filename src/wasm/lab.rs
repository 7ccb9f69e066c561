//! [`Lab`]: the reader's database, owned by the database worker
//! (`www/db/worker.js`), which creates one and calls it for every request.
//!
//! Storage: [`Lab::open`] installs the OPFS "sahpool" VFS, with write coalescing over it, as SQLite's default
//! (once per worker; it needs a dedicated worker in a secure context) and
//! opens the database file in it. `storage = "memory"` opens SQLite's
//! in-memory `memdb` instead, for browsers without OPFS.
//!
//! Nothing stored bricks the page: if the database *file* cannot be used
//! (damaged, another program's, a newer schema, a value of the wrong type —
//! [`crate::core::health::check`]), [`Lab::open`] still succeeds. The Lab keeps the
//! error as its [`Lab::problem`], every database call answers it (not
//! retryable: the same file fails the same way), and the ways out work:
//! [`Lab::export_raw`] (the stored bytes, as they are), [`Lab::salvage`]
//! (keep the rows that pass the import's checks) and [`Lab::reset`] (delete
//! the file, start afresh). Only installing OPFS itself can still
//! make `open` fail; the worker then falls back to memory.

use sqlite_wasm_rs::vfs::VfsFilesManager;
use sqlite_wasm_vfs::sahpool::OpfsSAHPoolCfgBuilder;

use super::*;
use crate::labs::crash::JournalMode;
use crate::labs::handlers::Answer;
use crate::labs::tools::transfer;
use crate::labs::verdicts::{outcome_answer, Referee, Seen, Verdict};
use crate::{apply_traced, core::schema, core::tables, Delivery, Outcome, Trace};

/// Slots in the OPFS pool. Each database takes one for itself and one for
/// its journal or WAL: the reader's, the webhooks' secrets and the workshop's
/// scenario at most 6 at once (temporary files stay in memory), so the
/// default of 6 has no room to spare ("disk I/O error"). Every slot costs
/// each start two round trips to the browser (~2 ms): 16 slots took ~30 ms.
pub const POOL_CAPACITY: usize = 10;

/// Directory of the pool in the origin's OPFS root.
pub const POOL_DIRECTORY: &str = ".inbox-lab";

/// Installs the OPFS pool, and write coalescing on top of it as SQLite's
/// default VFS (idempotent per worker): the page's storage stack, the one
/// the crash lab proves (`storage::coalesce`, `labs::crash`).
///
/// # Errors
/// A storage error naming why OPFS is unavailable (not a dedicated worker,
/// insecure context, access handles held by another tab, ...).
pub async fn install_opfs() -> Result<OpfsSAHPoolUtil, Error> {
    let cfg = OpfsSAHPoolCfgBuilder::new()
        .directory(POOL_DIRECTORY)
        .initial_capacity(POOL_CAPACITY)
        .build();
    let pool = install_pool(&cfg).await?;
    // A pool an earlier build left larger (16 slots) gives back its unused
    // slots once. Best effort: a slot not removed now is only a slower start.
    let spare = pool.capacity().saturating_sub(POOL_CAPACITY);
    if spare > 0 {
        let _ = pool.reduce_capacity(spare).await;
    }
    crate::storage::coalesce::install(true)?;
    Ok(pool)
}

/// What [`Lab::stack`] answers: the storage stack the database runs on,
/// read from SQLite, not assumed.
#[derive(Serialize)]
struct Stack {
    /// The VFS new connections open through (`"coalesce"`: write coalescing
    /// over the OPFS pool), or `"memdb"` in memory.
    vfs: String,
    /// `PRAGMA journal_mode` of the open database (`"delete"`, ...).
    journal_mode: String,
    /// `PRAGMA synchronous`: `"off"`, `"normal"`, `"full"` or `"extra"`.
    synchronous: String,
}

/// Where the database lives.
pub(super) enum Storage {
    Opfs(OpfsSAHPoolUtil),
    Memory,
}

/// One open inbox-lab database, owned by the worker.
#[wasm_bindgen]
pub struct Lab {
    pub(super) name: String,
    pub(super) storage: Storage,
    pub(super) conn: Option<Connection>,
    /// Why the stored database cannot be used, when it cannot: then `conn`
    /// is `None` and every database call answers this error. Only
    /// [`Lab::export_raw`], [`Lab::salvage`] and [`Lab::reset`] work (the
    /// last two clear it).
    problem: Option<Error>,
    /// A delivery run one statement at a time (step mode, `step.rs`), and
    /// the tables as its event saw them before it began (`None` if they
    /// could not be read), for its verdict. While it is unfinished its
    /// transaction is open and holds the write lock.
    pub(super) stepping: Option<(Delivery, Option<Seen>)>,
    /// Judges every delivery ([`Referee`]); forgets with the database.
    pub(super) referee: Referee,
    /// The signed-webhook secrets' own database (`hooks.rs`), opened on
    /// first use; never replaced by import or reset.
    pub(super) hooks: Option<Connection>,
    /// The journal on OPFS ([`Lab::open_with_journal`]).
    journal: JournalMode,
    /// How long opening took ([`Lab::start_times`]).
    opened_in: OpenedIn,
}

/// What [`Lab::start_times`] answers: the two steps of opening, in ms.
#[derive(Clone, Copy, Default, Serialize)]
struct OpenedIn {
    /// Installing the OPFS pool (its access handles) and write coalescing;
    /// 0 in memory.
    opfs_ms: f64,
    /// Opening the database file and its health check
    /// ([`crate::core::health::check`]), or creating it.
    check_ms: f64,
}

#[wasm_bindgen]
impl Lab {
    /// Opens (creating if needed) the database `name`, with `storage` either
    /// `"opfs"` (persistent) or `"memory"` (lost on reload). A new database
    /// gets the schema and account 1, like `inbox-lab init`.
    ///
    /// Throws only if the storage itself cannot be had (OPFS unavailable, an
    /// unknown `storage`). A stored database that cannot be used does not
    /// make it throw: see [`Lab::problem`].
    pub async fn open(name: String, storage: String) -> Result<Lab, JsValue> {
        Lab::open_with_journal(name, storage, None).await
    }

    /// Like [`Lab::open`], with a choice of journal on OPFS: `"wal"` (the
    /// default: exclusive locking — the OPFS pool allows only this worker's
    /// connection anyway — and `synchronous=FULL`: one flush per commit,
    /// before it is answered) or `"delete"` (`?journal=delete`: a rollback
    /// journal, three flushes per commit, about four times slower here). The
    /// crash lab proves both, on the same write-coalescing stack. In memory
    /// the journal is memdb's own. Throws for any other value.
    #[wasm_bindgen(js_name = openWithJournal)]
    pub async fn open_with_journal(
        name: String,
        storage: String,
        journal: Option<String>,
    ) -> Result<Lab, JsValue> {
        let journal = match journal.as_deref() {
            Some("delete") => JournalMode::Delete,
            None | Some("wal") => JournalMode::Wal,
            Some(other) => {
                return Err(JsValue::from(Error::storage(format!(
                    "unknown journal {other:?}: expected \"delete\" or \"wal\""
                ))))
            }
        };
        let started = web_time::Instant::now();
        let storage = match storage.as_str() {
            "opfs" => Storage::Opfs(install_opfs().await?),
            "memory" => Storage::Memory,
            other => {
                return Err(JsValue::from(Error::storage(format!(
                    "unknown storage {other:?}: expected \"opfs\" or \"memory\""
                ))))
            }
        };
        // For the whole worker: a console query that needs more memory
        // fails with SQLITE_NOMEM instead of growing the wasm memory until
        // an allocation traps (src/labs/tools/budget.rs says why).
        crate::labs::tools::budget::set_heap_limit(crate::labs::tools::budget::HEAP_LIMIT_BYTES);
        let mut lab = Lab {
            name,
            storage,
            conn: None,
            problem: None,
            stepping: None,
            referee: Referee::default(),
            hooks: None,
            journal,
            opened_in: OpenedIn::default(),
        };
        let installed = match lab.storage {
            Storage::Opfs(_) => started.elapsed(),
            Storage::Memory => Duration::ZERO,
        };
        lab.open_database();
        lab.opened_in = OpenedIn {
            opfs_ms: installed.as_secs_f64() * 1000.0,
            check_ms: (started.elapsed() - installed).as_secs_f64() * 1000.0,
        };
        Ok(lab)
    }

    /// Why the stored database cannot be used, as the usual error object
    /// (`storage`, code `corrupt`, `unusable`, ...; for a damaged or foreign
    /// file not retryable), or `null` when it is open and healthy.
    #[wasm_bindgen(getter)]
    pub fn problem(&self) -> JsValue {
        self.problem.clone().map_or(JsValue::NULL, JsValue::from)
    }

    /// How long the two steps of opening took, in ms: `{opfs_ms, check_ms}`
    /// (the pool installed; the file opened and checked). The benchmark
    /// reports them among the start path's steps.
    #[wasm_bindgen(getter, js_name = startTimes)]
    pub fn start_times(&self) -> Result<JsValue, JsValue> {
        to_value(&self.opened_in)
    }

    /// `"opfs"` or `"memory"`.
    #[wasm_bindgen(getter)]
    pub fn storage(&self) -> String {
        match self.storage {
            Storage::Opfs(_) => "opfs".into(),
            Storage::Memory => "memory".into(),
        }
    }

    /// The storage stack, as SQLite reports it: `{vfs, journal_mode,
    /// synchronous}` (the header's status line shows it), or `null` while
    /// the database cannot be used.
    #[wasm_bindgen(getter)]
    pub fn stack(&self) -> Result<JsValue, JsValue> {
        let Some(conn) = &self.conn else {
            return Ok(JsValue::NULL);
        };
        let vfs = match self.storage {
            Storage::Memory => "memdb".to_owned(),
            // SAFETY: a null name asks for the default VFS; its name is a
            // NUL-terminated string that lives as long as the registration.
            Storage::Opfs(_) => unsafe {
                let vfs = rusqlite::ffi::sqlite3_vfs_find(std::ptr::null());
                if vfs.is_null() || (*vfs).zName.is_null() {
                    return Err(Error::storage("no default SQLite VFS").into());
                }
                std::ffi::CStr::from_ptr((*vfs).zName)
                    .to_string_lossy()
                    .into_owned()
            },
        };
        let journal_mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(Error::from)?;
        let level: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .map_err(Error::from)?;
        let synchronous = match level {
            0 => "off",
            1 => "normal",
            2 => "full",
            _ => "extra",
        };
        to_value(&Stack {
            vfs,
            journal_mode: journal_mode.to_lowercase(),
            synchronous: synchronous.to_owned(),
        })
    }

    /// Delivers one event. `event` is `{source, event_id, account_id,
    /// amount}`; `fault` is `undefined`, `null`, `"after_insert"` or
    /// `"after_update"`. Returns `{outcome, http_status, receipt, steps,
    /// verdict}`; throws `{kind, message, http_status, retryable, field?,
    /// steps, verdict}`. `steps` is what the handler ran ([`crate::Trace`]:
    /// `[{op, statements, rows, effect, tx}]`), empty when it was refused before
    /// any SQL; `verdict` what it really did ([`Verdict`]: `correct`,
    /// `credited_twice`, `credit_lost`, ... with the facts).
    ///
    /// `handler` (optional, default `"atomic"`) picks one of the mistaken
    /// handlers of the race lab instead; they answer `{outcome, http_status,
    /// receipt: null, handler, steps}`. Every handler gets the event
    /// validated by the same rules first ([`Handler::run`]): an invalid one
    /// throws `invalid_input` before any SQL, whichever handler was asked for.
    pub fn deliver(
        &mut self,
        event: JsValue,
        fault: JsValue,
        handler: JsValue,
    ) -> Result<JsValue, JsValue> {
        let (answer, steps, verdict) = self.deliver_judged(&event, &fault, &handler);
        let answer = answer.map_err(JsValue::from).and_then(|a| to_value(&a));
        with_steps(answer, &steps, Some(&verdict))
    }

    /// Delivers one event given as JSON text (the page's "paste JSON" box):
    /// `text` goes through [`Event::from_json`], so a missing or extra field,
    /// `"500"` or `5e2` is refused with the field at fault. Answers like
    /// [`Lab::deliver`].
    #[cfg(feature = "full")]
    #[wasm_bindgen(js_name = deliverJson)]
    pub fn deliver_json(&mut self, text: JsValue, fault: JsValue) -> Result<JsValue, JsValue> {
        let read = || -> Result<_, Error> {
            let text = string_from_js(Field::EVENT, &text)?;
            Ok((Event::from_json(&text)?, fault_from_js(&fault)?))
        };
        let (answer, steps, verdict) = match read() {
            Ok((event, fault)) => self.atomic(&event, fault),
            Err(refused) => (
                Err(refused),
                Trace::default(),
                Verdict::refused(Handler::Atomic),
            ),
        };
        with_steps(
            answer.map_err(JsValue::from).and_then(|o| to_value(&o)),
            &steps,
            Some(&verdict),
        )
    }

    /// Delivers each of `events` (at most `MAX_BATCH`) by `handler` as that
    /// many [`Lab::deliver`] calls would, each judged, and counts what they
    /// came to: `{delivered, outcomes, verdicts}`, `outcomes` by what the
    /// sender heard (`applied`, `duplicate`, or the error's kind), `verdicts`
    /// by kind. The page's "N different events" sends a batch per request, so
    /// the worker's time goes to the commits, not to one message per event.
    /// Throws (running nothing) if `events` is not such an array.
    #[wasm_bindgen(js_name = deliverMany)]
    pub fn deliver_many(&mut self, events: JsValue, handler: JsValue) -> Result<JsValue, JsValue> {
        if !js_sys::Array::is_array(&events) {
            return Err(Error::invalid(
                Field::EVENT,
                format!("expected an array of at most {MAX_BATCH} events"),
            )
            .into());
        }
        let events: js_sys::Array = events.unchecked_into();
        if events.length() as usize > MAX_BATCH {
            return Err(Error::invalid(
                Field::EVENT,
                format!(
                    "{} events in one batch: expected at most {MAX_BATCH}",
                    events.length()
                ),
            )
            .into());
        }
        let mut batch = Batch::default();
        for event in events.iter() {
            let (answer, _steps, verdict) =
                self.deliver_judged(&event, &JsValue::UNDEFINED, &handler);
            let heard = match &answer {
                Ok(answered) => answered.name(),
                Err(err) => err.kind(),
            };
            batch.delivered += 1;
            *batch.outcomes.entry(heard).or_default() += 1;
            *batch.verdicts.entry(verdict.kind.as_str()).or_default() += 1;
        }
        to_value(&batch)
    }

    /// The database as the bytes of a `.sqlite3` file (in both modules: it
    /// is what [`Lab::snapshot`] is, once no stepped delivery is open).
    pub fn export(&mut self) -> Result<Vec<u8>, JsValue> {
        let conn = self.writer_mut()?;
        transfer::export(conn).map_err(JsValue::from)
    }

    /// The database as this connection sees it, as bytes: what a console
    /// query runs on ([`super::query_copy`]). Unlike [`Lab::export`] it does
    /// not wait for a stepped delivery: its open transaction is seen, as the
    /// console saw it on this connection.
    pub fn snapshot(&mut self) -> Result<Vec<u8>, JsValue> {
        let conn = self.conn_mut()?;
        transfer::export(conn).map_err(JsValue::from)
    }

    /// Both tables: `{accounts: [{id, balance}], inbox: [{source, event_id,
    /// account_id, amount, receipt}]}`.
    pub fn tables(&self) -> Result<JsValue, JsValue> {
        let conn = self.conn()?;
        to_value(&tables::snapshot(conn)?)
    }

    /// The outbox rows: `[{message_id, source, event_id, account_id, amount,
    /// sent_at}]` (here, not with the rest of "where the scheme ends" in the
    /// full module: the page reads them at start to number its events).
    pub fn outbox(&self) -> Result<JsValue, JsValue> {
        to_value(&crate::labs::scheme_ends::outbox::rows(self.conn()?)?)
    }

    /// What the tables panel draws: every account, the `limit` inbox rows
    /// written last (newest first), and `inbox_total`.
    #[wasm_bindgen(js_name = newestTables)]
    pub fn newest_tables(&self, limit: JsValue) -> Result<JsValue, JsValue> {
        const NEWEST: Field = Field::new("newest");
        let limit = u32::try_from(number_from_js(NEWEST, &limit)?)
            .map_err(|_| Error::invalid(NEWEST, "must be a count of rows, 0 or more"))?;
        to_value(&tables::newest(self.conn()?, limit)?)
    }

    /// Creates an account at balance 0; returns whether it was new.
    #[wasm_bindgen(js_name = addAccount)]
    pub fn add_account(&self, account_id: JsValue) -> Result<bool, JsValue> {
        let id = number_from_js(Field::ACCOUNT_ID, &account_id)?;
        let conn = self.conn()?;
        schema::add_account(conn, id).map_err(JsValue::from)
    }

    /// Throws the database away and starts a fresh one holding account 1 at
    /// balance 0. Deleting the file and its journal or WAL (rather than its
    /// rows) also recovers from a database that is damaged or not
    /// inbox-lab's: this always works unless the storage itself fails, and
    /// clears [`Lab::problem`].
    pub fn reset(&mut self) -> Result<(), JsValue> {
        self.stepping = None;
        self.referee.forget();
        self.conn = None; // closes the connection, rolling back anything open
        self.problem = None;
        let removed = self.remove_database(&self.name);
        self.open_database();
        removed?;
        self.problem.clone().map_or(Ok(()), |err| Err(err.into()))
    }

    /// Closes the database (the worker does this before it is terminated on
    /// purpose, and tests do it to prove persistence).
    pub fn close(&mut self) {
        self.stepping = None;
        self.conn = None;
        self.hooks = None;
    }

    /// Hands the database over to the page's other module (the worker
    /// reopens it from `www/pkg-full/` the first time an op needs that
    /// module): closes it and, on OPFS, pauses the pool, which releases its
    /// files for the other module's pool. Between ops no transaction is open
    /// (step mode, whose transaction stays open between ops, runs in the
    /// full module), so closing rolls nothing back.
    pub fn release(&mut self) -> Result<(), JsValue> {
        self.close();
        if let Storage::Opfs(pool) = &self.storage {
            pool.pause()
                .map_err(|e| Error::storage(format!("cannot release the OPFS pool: {e}")))?;
        }
        Ok(())
    }
}

impl Lab {
    /// Opens the database, or keeps why it cannot be used as the problem.
    fn open_database(&mut self) {
        self.problem = self.connect().err();
    }

    /// Deletes the database file `name` and its journal and WAL from the
    /// OPFS pool (nothing to delete in memory: a memdb database goes with
    /// its last connection).
    pub(super) fn remove_database(&self, name: &str) -> Result<(), Error> {
        if let Storage::Opfs(pool) = &self.storage {
            for suffix in ["", "-journal", "-wal"] {
                let file = format!("{name}{suffix}");
                pool.remove(&file).map_err(|e| {
                    Error::storage(format!("cannot delete the database file {file:?}: {e}"))
                })?;
            }
        }
        Ok(())
    }

    /// Where a sibling database of the reader's lives: a file in the same
    /// OPFS pool, or a named memdb database.
    pub(super) fn sibling_path(&self, file: &str) -> String {
        match self.storage {
            Storage::Opfs(_) => file.to_owned(),
            Storage::Memory => format!("file:/{file}?vfs=memdb"),
        }
    }

    fn connect(&mut self) -> Result<(), Error> {
        let path = self.sibling_path(&self.name);
        let opfs = matches!(self.storage, Storage::Opfs(_));
        // A stored database that fails its check is the Lab's problem, not
        // the page's end. The OPFS pool has no shared memory, so a WAL database — the
        // default, or left by an earlier visit — opens only with exclusive locking set
        // before the first read.
        let conn = db::open_checked(&path, BUSY_TIMEOUT, |conn| {
            if opfs {
                conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE")?;
            }
            Ok(())
        })?;
        if opfs {
            // The crash lab's configuration, which it proves: `synchronous = FULL`, so
            // every commit is flushed before it is answered (WAL's default of NORMAL
            // would answer before the flush).
            crate::labs::crash::configure(&conn, self.journal)?;
            if self.journal == JournalMode::Delete {
                // A rollback journal (`?journal=delete`) with normal locking, as the
                // page ran before WAL became its default.
                conn.execute_batch("PRAGMA locking_mode = NORMAL")?;
            }
        }
        self.conn = Some(conn);
        Ok(())
    }

    /// The connection; when there is none, why: the database's problem, or
    /// that it was closed.
    pub(super) fn conn(&self) -> Result<&Connection, Error> {
        match (&self.conn, &self.problem) {
            (Some(conn), _) => Ok(conn),
            (None, Some(problem)) => Err(problem.clone()),
            (None, None) => Err(closed()),
        }
    }

    pub(super) fn conn_mut(&mut self) -> Result<&mut Connection, Error> {
        self.conn()?;
        self.conn.as_mut().ok_or_else(closed)
    }

    /// One delivery by any handler, in Rust's terms: what it answered (or
    /// its error), the steps it ran and its verdict.
    fn deliver_judged(
        &mut self,
        event: &JsValue,
        fault: &JsValue,
        handler: &JsValue,
    ) -> (Result<Answered, Error>, Trace, Verdict) {
        let read = || -> Result<_, Error> {
            let handler = handler_from_js(handler)?;
            let fault = fault_from_js(fault)?;
            let payload = payload_from_js(event)?;
            let event = payload.to_event()?; // the rules first, before the lock is even asked for
            Ok((handler, fault, payload, event))
        };
        let (handler, fault, payload, event) = match read() {
            Ok(read) => read,
            Err(refused) => {
                let handler = handler_from_js(handler).unwrap_or(Handler::Atomic);
                return (Err(refused), Trace::default(), Verdict::refused(handler));
            }
        };
        if handler == Handler::Atomic {
            let (outcome, steps, verdict) = self.atomic(&event, fault);
            return (outcome.map(Answered::Atomic), steps, verdict);
        }
        if !cfg!(feature = "full") {
            // The start module runs the article's handler only: the worker
            // hands the database to the full module before any other
            // (www/db/worker.js), so this is never reached from the page.
            let refused = Error::invalid(HANDLER, "the mistaken handlers run in the full module");
            return (Err(refused), Trace::default(), Verdict::refused(handler));
        }
        let (answer, steps, verdict) = self.judged(
            handler,
            fault,
            &event,
            |a| *a,
            |conn| handler.deliver_traced(conn, &payload, fault),
        );
        let answer = answer.map(|answer| {
            Answered::Mistake(MistakeAnswer {
                outcome: answer,
                http_status: 200,
                receipt: None,
                handler,
            })
        });
        (answer, steps, verdict)
    }

    /// One delivery by the atomic handler ([`apply_traced`]), judged.
    fn atomic(
        &mut self,
        event: &Event,
        fault: Option<Fault>,
    ) -> (Result<Outcome, Error>, Trace, Verdict) {
        self.judged(Handler::Atomic, fault, event, outcome_answer, |conn| {
            apply_traced(conn, event, fault)
        })
    }

    /// Runs `run` on the writer's connection, watched by the referee
    /// ([`Referee::watch`]).
    fn judged<T>(
        &mut self,
        handler: Handler,
        fault: Option<Fault>,
        event: &Event,
        answer: impl Fn(&T) -> Answer,
        run: impl FnOnce(&Connection) -> (Result<T, Error>, Trace),
    ) -> (Result<T, Error>, Trace, Verdict) {
        // The referee is taken out while the connection is borrowed.
        let mut referee = std::mem::take(&mut self.referee);
        let judged = match self.writer() {
            Ok(conn) => referee.watch(conn, handler, fault, event, answer, || run(conn)),
            Err(err) => (Err(err), Trace::default(), Verdict::refused(handler)),
        };
        self.referee = referee;
        judged
    }

    /// The connection, for something that writes: refused while a stepped
    /// delivery holds the write lock — exactly what a second handler would
    /// meet, so it is `busy`, never a duplicate.
    pub(super) fn writer(&self) -> Result<&Connection, Error> {
        if self.stepping.is_some() {
            return Err(Error::Busy);
        }
        self.conn()
    }

    /// [`Lab::writer`], mutably.
    pub(super) fn writer_mut(&mut self) -> Result<&mut Connection, Error> {
        self.writer()?;
        self.conn_mut()
    }
}

/// The most events one [`Lab::deliver_many`] call takes.
pub const MAX_BATCH: usize = 10_000;

/// What [`Lab::deliver_many`] answers.
#[derive(Serialize, Default)]
struct Batch {
    delivered: u32,
    outcomes: std::collections::BTreeMap<&'static str, u32>,
    verdicts: std::collections::BTreeMap<&'static str, u32>,
}

/// A delivery's answer before it becomes a JavaScript value (as the
/// variant's own, untagged).
#[derive(Serialize)]
#[serde(untagged)]
enum Answered {
    Atomic(Outcome),
    Mistake(MistakeAnswer),
}

impl Answered {
    /// What the sender heard: `applied` or `duplicate`.
    fn name(&self) -> &'static str {
        match self {
            Answered::Atomic(outcome) => outcome.kind(),
            Answered::Mistake(answer) => answer.outcome.as_str(),
        }
    }
}

/// A mistaken handler's answer: it keeps no receipt.
#[derive(Serialize)]
struct MistakeAnswer {
    outcome: Answer,
    http_status: u16,
    receipt: Option<crate::Receipt>,
    handler: Handler,
}
