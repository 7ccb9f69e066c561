//! The wasm facade: the only module that knows `JsValue`.
//!
//! The database worker (`www/worker.js`) creates one [`Lab`] and calls it for
//! every request; the page never touches the database directly. This module
//! only converts: JavaScript values in (validated into an [`Event`]), the
//! crate's answers out (`{outcome, http_status, receipt}`, tables), and every
//! [`Error`] into a plain object `{kind, message, http_status, retryable,
//! field?}` that the worker forwards to the page. No logic lives here.
//!
//! Storage: [`Lab::open`] installs the OPFS "sahpool" VFS as SQLite's default
//! (once per worker; it needs a dedicated worker in a secure context) and
//! opens the database file in it. `storage = "memory"` opens SQLite's
//! in-memory `memdb` instead, for browsers without OPFS.

use std::time::Duration;

pub mod scheme;

use rusqlite::Connection;
use serde::Serialize;
use sqlite_wasm_rs::vfs::VfsFilesManager;
use sqlite_wasm_vfs::sahpool::{OpfsSAHPoolCfgBuilder, OpfsSAHPoolUtil};
use wasm_bindgen::prelude::*;

use crate::db::{self, Mode};
use crate::error::StorageCode;
use crate::event::{self as rules, integer_from_js_number, Field, ValueType};
use crate::handlers::{Answer, Handler, Payload};
use crate::race::{self, Arena, Race};
use crate::{
    apply, console, scenario, schema, tables, transfer, Delivery, Error, Event, Fault, Outcome,
    Progress, Step,
};

/// Slots in the OPFS pool. Each database takes one for itself and one for
/// its journal or WAL; the default of 6 runs out quickly ("disk I/O error").
pub const POOL_CAPACITY: usize = 16;

/// Directory of the pool in the origin's OPFS root.
pub const POOL_DIRECTORY: &str = ".inbox-lab";

/// The browser has no other connection to wait for inside one worker; a
/// short timeout turns any lock conflict into a prompt `busy` answer.
const BUSY_TIMEOUT: Duration = Duration::from_millis(100);

/// Installs the OPFS pool as SQLite's default VFS (idempotent per worker).
///
/// # Errors
/// A storage error naming why OPFS is unavailable (not a dedicated worker,
/// insecure context, access handles held by another tab, ...).
pub async fn install_opfs() -> Result<OpfsSAHPoolUtil, Error> {
    let cfg = OpfsSAHPoolCfgBuilder::new()
        .directory(POOL_DIRECTORY)
        .initial_capacity(POOL_CAPACITY)
        .build();
    sqlite_wasm_vfs::sahpool::install::<sqlite_wasm_rs::WasmOsCallback>(&cfg, true)
        .await
        .map_err(|e| Error::storage_with(StorageCode::OpfsUnavailable, e.to_string()))
}

/// Where the database lives.
enum Storage {
    Opfs(OpfsSAHPoolUtil),
    Memory,
}

/// One open inbox-lab database, owned by the worker.
#[wasm_bindgen]
pub struct Lab {
    name: String,
    storage: Storage,
    conn: Option<Connection>,
    /// A delivery run one statement at a time (step mode). While it is
    /// unfinished its transaction is open and holds the write lock.
    stepping: Option<Delivery>,
}

#[wasm_bindgen]
impl Lab {
    /// Opens (creating if needed) the database `name`, with `storage` either
    /// `"opfs"` (persistent) or `"memory"` (lost on reload). A new database
    /// gets the schema and account 1, like `inbox-lab init`.
    pub async fn open(name: String, storage: String) -> Result<Lab, JsValue> {
        let storage = match storage.as_str() {
            "opfs" => Storage::Opfs(install_opfs().await.map_err(to_js)?),
            "memory" => Storage::Memory,
            other => {
                return Err(to_js(Error::storage(format!(
                    "unknown storage {other:?}: expected \"opfs\" or \"memory\""
                ))))
            }
        };
        let mut lab = Lab {
            name,
            storage,
            conn: None,
            stepping: None,
        };
        lab.connect().map_err(to_js)?;
        Ok(lab)
    }

    /// `"opfs"` or `"memory"`.
    #[wasm_bindgen(getter)]
    pub fn storage(&self) -> String {
        match self.storage {
            Storage::Opfs(_) => "opfs".into(),
            Storage::Memory => "memory".into(),
        }
    }

    /// Delivers one event. `event` is `{source, event_id, account_id,
    /// amount}`; `fault` is `undefined`, `null`, `"after_insert"` or
    /// `"after_update"`. Returns `{outcome, http_status, receipt}`; throws
    /// `{kind, message, http_status, retryable, field?}`.
    ///
    /// `handler` (optional, default `"atomic"`) picks one of the mistaken
    /// handlers of the race lab instead; they answer `{outcome, http_status,
    /// receipt: null, handler}` and receive the payload unvalidated, as the
    /// handlers they model do.
    pub fn deliver(
        &self,
        event: JsValue,
        fault: JsValue,
        handler: JsValue,
    ) -> Result<JsValue, JsValue> {
        let handler = handler_from_js(&handler).map_err(to_js)?;
        let fault = fault_from_js(&fault).map_err(to_js)?;
        if handler == Handler::Atomic {
            let event = event_from_js(&event).map_err(to_js)?;
            let conn = self.writer().map_err(to_js)?;
            return to_value(&apply(conn, &event, fault).map_err(to_js)?);
        }
        let payload = payload_from_js(&event).map_err(to_js)?;
        let conn = self.writer().map_err(to_js)?;
        let answer = handler.deliver(conn, &payload, fault).map_err(to_js)?;
        to_value(&MistakeAnswer {
            outcome: answer,
            http_status: 200,
            receipt: None,
            handler,
        })
    }

    /// Delivers one event given as JSON text (the page's "paste JSON" box):
    /// `text` goes through [`Event::from_json`], so a missing or extra field,
    /// `"500"` or `5e2` is refused with the field at fault. Answers like
    /// [`Lab::deliver`].
    #[wasm_bindgen(js_name = deliverJson)]
    pub fn deliver_json(&self, text: JsValue, fault: JsValue) -> Result<JsValue, JsValue> {
        let text = string_from_js(Field::Event, &text).map_err(to_js)?;
        let fault = fault_from_js(&fault).map_err(to_js)?;
        let event = Event::from_json(&text).map_err(to_js)?;
        let conn = self.writer().map_err(to_js)?;
        to_value(&apply(conn, &event, fault).map_err(to_js)?)
    }

    /// Step mode: starts a delivery without running anything. Returns the
    /// first step, `{next: {step, statements}, outcome: null}`.
    #[wasm_bindgen(js_name = stepStart)]
    pub fn step_start(&mut self, event: JsValue, fault: JsValue) -> Result<JsValue, JsValue> {
        let event = event_from_js(&event).map_err(to_js)?;
        let fault = fault_from_js(&fault).map_err(to_js)?;
        self.writer().map_err(to_js)?;
        let delivery = Delivery::new(event, fault);
        let answer = StepAnswer::from_next(delivery.next_step());
        self.stepping = Some(delivery);
        to_value(&answer)
    }

    /// Step mode: runs the next statement. Returns `{ran, next, outcome}`;
    /// throws the delivery's error (its transaction already rolled back).
    #[wasm_bindgen(js_name = stepNext)]
    pub fn step_next(&mut self) -> Result<JsValue, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| to_js(closed()))?;
        let delivery = self
            .stepping
            .as_mut()
            .ok_or_else(|| to_js(Error::storage("no delivery is being stepped")))?;
        let ran = delivery.next_step();
        let result = delivery.step(conn);
        let answer = match result {
            Ok(Progress::Next(step)) => StepAnswer {
                ran,
                next: Some(StepInfo::of(step)),
                outcome: None,
            },
            Ok(Progress::Done(outcome)) => {
                self.stepping = None;
                StepAnswer {
                    ran,
                    next: None,
                    outcome: Some(outcome),
                }
            }
            Err(err) => {
                self.stepping = None;
                return Err(to_js(err));
            }
        };
        to_value(&answer)
    }

    /// Step mode: "throw" — the handler fails here; the open transaction is
    /// rolled back. Throws the resulting `simulated_crash` error object.
    #[wasm_bindgen(js_name = stepThrow)]
    pub fn step_throw(&mut self) -> Result<(), JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| to_js(closed()))?;
        let Some(mut delivery) = self.stepping.take() else {
            return Err(to_js(Error::storage("no delivery is being stepped")));
        };
        delivery.abort(conn).map_err(to_js)?;
        Err(to_js(Error::SimulatedCrash {
            fault: Fault::StepThrow,
        }))
    }

    /// Runs one read-only SQL statement: `{columns, rows, truncated}`.
    pub fn query(&mut self, sql: String) -> Result<JsValue, JsValue> {
        let conn = self.conn.as_mut().ok_or_else(|| to_js(closed()))?;
        to_value(&console::query(conn, &sql).map_err(to_js)?)
    }

    /// The database as the bytes of a `.sqlite3` file.
    pub fn export(&mut self) -> Result<Vec<u8>, JsValue> {
        self.writer().map_err(to_js)?;
        let conn = self.conn.as_mut().ok_or_else(|| to_js(closed()))?;
        transfer::export(conn).map_err(to_js)
    }

    /// Replaces the database with `bytes` if they are a valid inbox-lab
    /// database; otherwise throws (field `file`) and changes nothing.
    pub fn import(&mut self, bytes: Vec<u8>) -> Result<(), JsValue> {
        self.writer().map_err(to_js)?;
        let conn = self.conn.as_mut().ok_or_else(|| to_js(closed()))?;
        transfer::import(conn, &bytes).map_err(to_js)
    }

    /// Runs the article's scenario on a fresh scratch database next to the
    /// reader's (which it leaves alone); returns `{summary, passed, checks}`.
    #[wasm_bindgen(js_name = runScenario)]
    pub fn run_scenario(&self) -> Result<JsValue, JsValue> {
        let name = format!("{}.scenario", self.name);
        let path = match &self.storage {
            Storage::Opfs(pool) => {
                pool.remove(&name)
                    .map_err(|e| to_js(Error::storage(e.to_string())))?;
                name.clone()
            }
            Storage::Memory => format!("file:/{name}?vfs=memdb"),
        };
        let report = (|| {
            let mut conn = db::open(&path, Mode::Create, BUSY_TIMEOUT)?;
            schema::init(&mut conn, &[1])?;
            scenario::run(&conn, |e| {
                (0..scenario::BURST)
                    .map(|_| apply(&conn, e, None))
                    .collect()
            })
        })()
        .map_err(to_js)?;
        if let Storage::Opfs(pool) = &self.storage {
            pool.remove(&name)
                .map_err(|e| to_js(Error::storage(e.to_string())))?;
        }
        to_value(&ScenarioAnswer {
            summary: report.summary(),
            passed: report.passed(),
            checks: report.checks,
        })
    }

    /// Both tables: `{accounts: [{id, balance}], inbox: [{source, event_id,
    /// account_id, amount, receipt}]}`.
    pub fn tables(&self) -> Result<JsValue, JsValue> {
        let conn = self.conn().map_err(to_js)?;
        to_value(&tables::snapshot(conn).map_err(to_js)?)
    }

    /// Creates an account at balance 0; returns whether it was new.
    #[wasm_bindgen(js_name = addAccount)]
    pub fn add_account(&self, account_id: JsValue) -> Result<bool, JsValue> {
        let id = number_from_js(Field::AccountId, &account_id).map_err(to_js)?;
        let conn = self.conn().map_err(to_js)?;
        schema::add_account(conn, id).map_err(to_js)
    }

    /// Throws the database away and starts a fresh one holding account 1 at
    /// balance 0. Deleting the file (rather than its rows) also recovers
    /// from a database that is damaged or not inbox-lab's.
    pub fn reset(&mut self) -> Result<(), JsValue> {
        self.stepping = None;
        self.conn = None; // closes the connection, rolling back anything open
        if let Storage::Opfs(pool) = &self.storage {
            pool.remove(&self.name)
                .map_err(|e| to_js(Error::storage(format!("cannot delete the database: {e}"))))?;
        }
        self.connect().map_err(to_js)
    }

    /// Closes the database (the worker does this before it is terminated on
    /// purpose, and tests do it to prove persistence).
    pub fn close(&mut self) {
        self.stepping = None;
        self.conn = None;
    }
}

impl Lab {
    fn connect(&mut self) -> Result<(), Error> {
        let path = match self.storage {
            Storage::Opfs(_) => self.name.clone(),
            // A named memdb database: lives as long as a connection to it.
            Storage::Memory => format!("file:/{}?vfs=memdb", self.name),
        };
        let mut conn = db::open(&path, Mode::Create, BUSY_TIMEOUT)?;
        if tables::snapshot(&conn)?.accounts.is_empty() {
            schema::init(&mut conn, &[1])?;
        }
        self.conn = Some(conn);
        Ok(())
    }

    fn conn(&self) -> Result<&Connection, Error> {
        self.conn.as_ref().ok_or_else(closed)
    }

    /// The connection, for something that writes: refused while a stepped
    /// delivery holds the write lock — exactly what a second handler would
    /// meet, so it is `busy`, never a duplicate.
    fn writer(&self) -> Result<&Connection, Error> {
        if self.stepping.is_some() {
            return Err(Error::Busy);
        }
        self.conn()
    }
}

fn closed() -> Error {
    Error::storage("the database is closed")
}

/// One step as shown to readers.
#[derive(Serialize)]
struct StepInfo {
    step: Step,
    statements: &'static [&'static str],
}

impl StepInfo {
    fn of(step: Step) -> Self {
        StepInfo {
            step,
            statements: step.statements(),
        }
    }
}

/// Step mode's answer: the step that just ran, the next one, and the
/// outcome once committed.
#[derive(Serialize)]
struct StepAnswer {
    ran: Option<Step>,
    next: Option<StepInfo>,
    outcome: Option<Outcome>,
}

impl StepAnswer {
    fn from_next(next: Option<Step>) -> Self {
        StepAnswer {
            ran: None,
            next: next.map(StepInfo::of),
            outcome: None,
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

#[derive(Serialize)]
struct ScenarioAnswer {
    summary: String,
    passed: bool,
    checks: Vec<scenario::Check>,
}

/// Every `[kind, code]` pair an error report can carry (see
/// [`crate::error::codes`]), so the page's tests can check that each has an
/// English and a Russian text.
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> Result<JsValue, JsValue> {
    let types: Vec<&str> = ValueType::ALL.iter().map(|t| t.as_str()).collect();
    to_value(&serde_json::json!({ "codes": crate::error::codes(), "types": types }))
}

/// Converts a crate error into the plain object the page receives
/// (`params` as a plain object, not a `Map`).
fn to_js(err: Error) -> JsValue {
    err.report()
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or_else(|e| JsValue::from_str(&format!("{err} (and {e})")))
}

/// Serialises an answer; plain objects, and integers as JS numbers (all of
/// ours are ≤ 2^53-1, so they are exact).
fn to_value<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| to_js(Error::storage(format!("cannot encode the answer: {e}"))))
}

/// Reads `{source, event_id, account_id, amount}` from a JavaScript value.
/// Strings must be strings (valid UTF-16: a lone surrogate cannot become
/// UTF-8 without silently changing the key); numbers must be numbers.
pub fn event_from_js(value: &JsValue) -> Result<Event, Error> {
    payload_from_js(value)?.to_event()
}

/// The same fields with their JavaScript types checked but no rule of
/// [`Event`] applied: what the mistaken handlers receive.
pub fn payload_from_js(value: &JsValue) -> Result<Payload, Error> {
    const FIELDS: [&str; 4] = ["source", "event_id", "account_id", "amount"];
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(rules::not_an_object(type_of(value)));
    }
    let object: &js_sys::Object = value.unchecked_ref();
    let keys = js_sys::Object::keys(object);
    for key in keys.iter() {
        let key = key.as_string().unwrap_or_default();
        if !FIELDS.contains(&key.as_str()) {
            return Err(rules::unexpected_field(&key));
        }
    }
    let get = |field: Field| {
        js_sys::Reflect::get(value, &JsValue::from_str(field.as_str()))
            .map_err(|_| Error::invalid(field, "cannot be read"))
    };
    let source = string_from_js(Field::Source, &get(Field::Source)?)?;
    let event_id = string_from_js(Field::EventId, &get(Field::EventId)?)?;
    let account_id = number_from_js(Field::AccountId, &get(Field::AccountId)?)?;
    let amount = number_from_js(Field::Amount, &get(Field::Amount)?)?;
    Ok(Payload {
        source,
        event_id,
        account_id,
        amount,
    })
}

fn handler_from_js(value: &JsValue) -> Result<Handler, Error> {
    if value.is_undefined() || value.is_null() {
        return Ok(Handler::Atomic);
    }
    let name = value.as_string().unwrap_or_default();
    name.parse()
        .map_err(|reason: String| Error::invalid(Field::Handler, reason))
}

fn string_from_js(field: Field, value: &JsValue) -> Result<String, Error> {
    if value.is_undefined() {
        return Err(rules::missing(field));
    }
    let Some(js) = value.dyn_ref::<js_sys::JsString>() else {
        return Err(rules::wrong_type(field, ValueType::String, type_of(value)));
    };
    if !js.is_valid_utf16() {
        return Err(rules::lone_surrogate(field));
    }
    js.as_string().ok_or_else(|| rules::lone_surrogate(field))
}

fn number_from_js(field: Field, value: &JsValue) -> Result<i64, Error> {
    if value.is_undefined() {
        return Err(rules::missing(field));
    }
    match value.as_f64() {
        Some(n) => integer_from_js_number(field, n),
        None => Err(match value.as_string() {
            Some(text) => rules::string_for_number(field, &text),
            None => rules::wrong_type(field, ValueType::Number, type_of(value)),
        }),
    }
}

fn fault_from_js(value: &JsValue) -> Result<Option<Fault>, Error> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let Some(name) = value.as_string() else {
        return Err(rules::wrong_type(
            Field::Fault,
            ValueType::String,
            type_of(value),
        ));
    };
    name.parse().map(Some).map_err(|_: String| {
        let names: Vec<&str> = Fault::ALL.iter().map(|f| f.as_str()).collect();
        rules::unknown_value(Field::Fault, &name, &names)
    })
}

/// The type of a JavaScript value, as `typeof` says it, with `null` and
/// arrays told apart.
fn type_of(value: &JsValue) -> ValueType {
    if value.is_null() {
        return ValueType::Null;
    }
    if js_sys::Array::is_array(value) {
        return ValueType::Array;
    }
    match value.js_typeof().as_string().as_deref() {
        Some("undefined") => ValueType::Undefined,
        Some("boolean") => ValueType::Boolean,
        Some("number") => ValueType::Number,
        Some("bigint") => ValueType::BigInt,
        Some("string") => ValueType::String,
        Some("symbol") => ValueType::Symbol,
        Some("function") => ValueType::Function,
        _ => ValueType::Object,
    }
}

/// The race lab in the browser: several real connections to one shared
/// in-memory database (SQLite's `memdb` VFS, with real locks between
/// connections), one delivery per connection, advanced by the reader.
#[wasm_bindgen]
pub struct RaceLab {
    arena: Arena,
    race: Option<Race>,
}

#[wasm_bindgen]
impl RaceLab {
    /// `deliveries` connections (2 or 3) to a fresh shared database.
    #[wasm_bindgen(constructor)]
    pub fn new(deliveries: JsValue) -> Result<RaceLab, JsValue> {
        let k = number_from_js(Field::Deliveries, &deliveries).map_err(to_js)?;
        let k = usize::try_from(k)
            .map_err(|_| to_js(Error::invalid(Field::Deliveries, "must be positive")))?;
        let arena = Arena::new(k, || {
            db::open("file:/race-lab?vfs=memdb", Mode::Create, Duration::ZERO)
        })
        .map_err(to_js)?;
        Ok(RaceLab { arena, race: None })
    }

    /// Starts a race: every connection delivers the same event by `handler`.
    /// Returns the first statement of each delivery.
    pub fn start(&mut self, handler: JsValue) -> Result<JsValue, JsValue> {
        let handler = handler_from_js(&handler).map_err(to_js)?;
        let race = Race::new(&self.arena, handler).map_err(to_js)?;
        let next: Vec<_> = (0..self.arena.deliveries())
            .map(|i| race.next_statements(i))
            .collect();
        self.race = Some(race);
        to_value(&next)
    }

    /// Advances delivery `i` by one statement: `{delivery, statements,
    /// result, committed_balance, committed_inbox, next, verdict}`; `result`
    /// is `ran`, `waiting` (the lock is held elsewhere: advance it again
    /// later), `answered` or `failed`.
    pub fn step(&mut self, i: usize) -> Result<JsValue, JsValue> {
        let race = self
            .race
            .as_mut()
            .ok_or_else(|| to_js(Error::storage("start a race first")))?;
        let log = race.step(&self.arena, i).map_err(to_js)?;
        let next = race.next_statements(i);
        let verdict = if race.finished() {
            Some(race.verdict(&self.arena).map_err(to_js)?)
        } else {
            None
        };
        to_value(&RaceStep { log, next, verdict })
    }

    /// Runs every interleaving of this many deliveries by `handler`:
    /// `{handler, deliveries, interleavings, double_credits, lost_credits,
    /// wrong_answers, failing_schedule}`. Ends any race in progress.
    pub fn explore(&mut self, handler: JsValue) -> Result<JsValue, JsValue> {
        let handler = handler_from_js(&handler).map_err(to_js)?;
        self.race = None;
        to_value(&race::explore(&self.arena, handler).map_err(to_js)?)
    }
}

#[derive(Serialize)]
struct RaceStep {
    #[serde(flatten)]
    log: race::StepLog,
    next: Option<&'static [&'static str]>,
    verdict: Option<race::Verdict>,
}

// ---- The crash lab in the browser ---------------------------------------------------------
//
// `www/crashworker.js` runs in its own dedicated worker and creates one
// `CrashLab`. The page kills that worker (`worker.terminate()`) in the
// middle of a commit and starts a new one, which reopens the database from
// OPFS: the reopening is SQLite's recovery, and `crashlab::classify` judges
// what survived.

use std::cell::{Cell, RefCell};

use sqlite_wasm_rs::vfs::transfer::DbTransfer;

use crate::crashlab::{self, JournalMode};
use crate::iolog::{self, IoOp, Shim};

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
    /// The random-kill stream's connection, once `killsOpen` ran.
    kills: Option<Connection>,
}

#[wasm_bindgen]
impl CrashLab {
    /// Installs the crash pool as this worker's default VFS, and the iolog
    /// shims over it. `mode` is `"delete"` or `"wal"` (always with
    /// `synchronous=FULL`); `events` (1 to 29) is the size of the workload;
    /// `stop` is how the worker stops at a crash point: `"trap"` or `"spin"`.
    pub async fn open(mode: String, events: JsValue, stop: String) -> Result<CrashLab, JsValue> {
        let mode: JournalMode = mode
            .parse()
            .map_err(|reason: String| to_js(Error::invalid(Field::Event, reason)))?;
        let spin = match stop.as_str() {
            "trap" => false,
            "spin" => true,
            other => {
                return Err(to_js(Error::invalid(
                    Field::Event,
                    format!("unknown stop {other:?}: expected \"trap\" or \"spin\""),
                )))
            }
        };
        STOP_BY_SPINNING.set(spin);
        let n = number_from_js(Field::Event, &events).map_err(to_js)?;
        let n = usize::try_from(n)
            .map_err(|_| to_js(Error::invalid(Field::Event, "events must be positive")))?;
        let events = crashlab::events(n).map_err(to_js)?;
        let cfg = OpfsSAHPoolCfgBuilder::new()
            .vfs_name(CRASH_VFS_NAME)
            .directory(CRASH_POOL_DIRECTORY)
            .initial_capacity(CRASH_POOL_CAPACITY)
            .build();
        let pool = sqlite_wasm_vfs::sahpool::install::<sqlite_wasm_rs::WasmOsCallback>(&cfg, true)
            .await
            .map_err(|e| to_js(Error::storage(format!("OPFS storage is unavailable: {e}"))))?;
        Shim::install().map_err(to_js)?;
        Ok(CrashLab {
            pool,
            mode,
            events,
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
                    crashlab::configure(c, self.mode)
                })?;
                schema::init(&mut conn, &[1])?;
            } // closed: a WAL is checkpointed into the file and removed
            self.fresh_try()?;
            let conn = self.open_try(iolog::VFS_NAME)?;
            Shim::arm(None, crash_in_worker);
            let result = crashlab::workload(&conn, &self.events, |_| {});
            let log = Shim::disarm();
            result.map_err(|e| Error::storage(format!("counting the operations: {e}")))?;
            Ok::<_, Error>(log)
        })()
        .map_err(to_js)?;
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
        self.fresh_try().map_err(to_js)?;
        let conn = self.open_try(iolog::VFS_NAME).map_err(to_js)?;
        ON_CRASH.with(|hook| *hook.borrow_mut() = Some(on_crash));
        Shim::arm(Some(crash_after), crash_in_worker);
        let result = crashlab::workload(&conn, &self.events, |i| {
            // Posting a message cannot fail in a way the workload could act on.
            let _ = on_ack.call1(&JsValue::NULL, &JsValue::from_f64(i as f64));
        });
        drop(conn); // closing writes too (a WAL checkpoint): still armed
        Shim::disarm();
        result.map_err(to_js)
    }

    /// Reopens the try's database — opening it is SQLite's recovery — and
    /// says what survived: `{outcome: "atomic" | "partial" |
    /// "lost_acknowledged", recovered: {integrity, registered, credited,
    /// acknowledged}}`. `control`: recover through the broken lock check
    /// (`xCheckReservedLock` always 1), which must be caught.
    pub fn recover(&self, acknowledged: usize, control: bool) -> Result<JsValue, JsValue> {
        let vfs = if control {
            iolog::BROKEN_VFS_NAME
        } else {
            iolog::VFS_NAME
        };
        let recovered = self
            .open_try(vfs)
            .and_then(|conn| crashlab::classify(&conn, &self.events, acknowledged))
            .map_err(to_js)?;
        to_value(&Recovery {
            outcome: recovered.outcome(),
            recovered,
        })
    }

    /// Random kills: opens the stream's database in this lab's journal mode,
    /// creating it with account 1 if needed, through the (unarmed) shim.
    /// After a kill this open is the recovery. Returns `{integrity, tables}`.
    #[wasm_bindgen(js_name = killsOpen)]
    pub fn kills_open(&mut self) -> Result<JsValue, JsValue> {
        self.kills = None;
        let answer = (|| {
            let path = format!("file:{KILLS_DB}?vfs={}", iolog::VFS_NAME);
            let mut conn = db::open_with(&path, Mode::Create, BUSY_TIMEOUT, |c| {
                crashlab::configure(c, self.mode)
            })?;
            if tables::snapshot(&conn)?.accounts.is_empty() {
                schema::init(&mut conn, &[1])?;
            }
            let answer = KillsState {
                integrity: integrity_check(&conn)?,
                tables: tables::snapshot(&conn)?,
            };
            self.kills = Some(conn);
            Ok::<_, Error>(answer)
        })()
        .map_err(to_js)?;
        to_value(&answer)
    }

    /// Random kills: delivers one event to the stream's database with the
    /// atomic handler, like `Lab.deliver`: `{outcome, http_status, receipt}`.
    #[wasm_bindgen(js_name = killsDeliver)]
    pub fn kills_deliver(&self, event: JsValue) -> Result<JsValue, JsValue> {
        let event = event_from_js(&event).map_err(to_js)?;
        let conn = self
            .kills
            .as_ref()
            .ok_or_else(|| to_js(Error::storage("open the stream first (killsOpen)")))?;
        to_value(&apply(conn, &event, None).map_err(to_js)?)
    }

    /// Random kills: from now on, crash after `crash_after` more storage
    /// operations (`on_crash(op)` then runs, and the call in progress never
    /// returns) — a kill at a chosen point of the stream's I/O.
    #[wasm_bindgen(js_name = killsArm)]
    pub fn kills_arm(&self, crash_after: usize, on_crash: js_sys::Function) {
        ON_CRASH.with(|hook| *hook.borrow_mut() = Some(on_crash));
        Shim::arm(Some(crash_after), crash_in_worker);
    }

    /// Random kills: stop counting; returns how many operations ran.
    #[wasm_bindgen(js_name = killsDisarm)]
    pub fn kills_disarm(&self) -> usize {
        Shim::disarm().len()
    }

    /// Random kills: deletes the stream's database (and any journal or WAL).
    #[wasm_bindgen(js_name = killsReset)]
    pub fn kills_reset(&mut self) -> Result<(), JsValue> {
        self.kills = None;
        self.remove_with_sidecars(KILLS_DB).map_err(to_js)
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
            |c| crashlab::configure(c, self.mode),
        )
    }
}

/// `PRAGMA integrity_check`, its lines joined: `"ok"` when sound.
fn integrity_check(conn: &Connection) -> Result<String, Error> {
    let lines: Vec<String> = conn
        .prepare("PRAGMA integrity_check")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(lines.join("; "))
}

#[derive(Serialize)]
struct Recovery {
    outcome: crashlab::Outcome,
    recovered: crashlab::Recovered,
}

#[derive(Serialize)]
struct KillsState {
    integrity: String,
    tables: crate::Tables,
}

// ---- The benchmark ------------------------------------------------------------------------------

/// Directory of the benchmark's own OPFS pool: apart from the reader's
/// database, so a benchmark never touches it, and usable while the page's
/// database worker holds its own pool.
pub const BENCH_POOL_DIRECTORY: &str = ".inbox-lab-bench";

/// The benchmark's VFS name (its pool is the default VFS of its worker).
const BENCH_VFS_NAME: &str = "inbox-lab-bench";

/// The benchmark's side of the real apply path, for `www/benchworker.js`:
/// one fresh OPFS database per [`Setting`](crate::bench::Setting), and
/// [`apply`] called once per event with no JavaScript value to convert on
/// the way in or out, so the worker times the transaction, not the facade.
#[wasm_bindgen]
pub struct Bench {
    pool: OpfsSAHPoolUtil,
    setting: crate::bench::Setting,
    name: String,
    conn: Option<Connection>,
}

#[wasm_bindgen]
impl Bench {
    /// Installs the benchmark pool (emptied on first install in a worker)
    /// and opens a fresh database for `setting` (`"delete-full"`,
    /// `"wal-full"` or `"wal-normal"`) on it, as the page's worker opens
    /// its database; with `coalesce`, through the write-coalescing shim
    /// (`bench::coalesce`) instead.
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
        let stats = crate::bench::coalesce::take_stats();
        to_value(&[stats.writes_in, stats.writes_out])
    }

    /// Like `open`, through the timing shim (`bench::timing`): every storage
    /// call is counted and timed, for [`Bench::profile`].
    #[wasm_bindgen(js_name = openProfiled)]
    pub async fn open_profiled(setting: String) -> Result<Bench, JsValue> {
        Bench::open_with(setting, Stack::Profiled).await
    }

    /// On a database from `openProfiled`: delivers events `0..events` and
    /// returns `{setting, events, total_ms, rows: [{file, op, calls,
    /// total_ms}]}`.
    pub fn profile(&self, events: u32) -> Result<JsValue, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| to_js(closed()))?;
        let setting = self.setting;
        to_value(&crate::bench::profile(conn, setting, events).map_err(to_js)?)
    }

    /// The settings SQLite really runs with: `{sqlite_version,
    /// journal_mode, locking_mode, synchronous, page_size}`.
    pub fn settings(&self) -> Result<JsValue, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| to_js(closed()))?;
        to_value(&crate::bench::settings(conn).map_err(to_js)?)
    }

    /// Delivers the `i`-th benchmark event through [`apply`]: `true` if it
    /// was applied, `false` if it was a duplicate; throws the error object.
    pub fn apply(&self, i: u32) -> Result<bool, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| to_js(closed()))?;
        match apply(conn, &crate::bench::event(i), None).map_err(to_js)? {
            Outcome::Applied(_) => Ok(true),
            Outcome::Duplicate(_) => Ok(false),
        }
    }

    /// What the run left: `{balance, inbox, last_receipt}`.
    pub fn tally(&self) -> Result<JsValue, JsValue> {
        let conn = self.conn.as_ref().ok_or_else(|| to_js(closed()))?;
        to_value(&crate::bench::tally(conn).map_err(to_js)?)
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
                .map_err(|e| to_js(Error::storage(e.to_string())))?;
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
}

impl Bench {
    async fn open_with(setting: String, stack: Stack) -> Result<Bench, JsValue> {
        let setting: crate::bench::Setting = setting
            .parse()
            .map_err(|reason: String| to_js(Error::storage(reason)))?;
        let cfg = OpfsSAHPoolCfgBuilder::new()
            .vfs_name(BENCH_VFS_NAME)
            .directory(BENCH_POOL_DIRECTORY)
            .initial_capacity(POOL_CAPACITY)
            .clear_on_init(true)
            .build();
        let pool = sqlite_wasm_vfs::sahpool::install::<sqlite_wasm_rs::WasmOsCallback>(&cfg, true)
            .await
            .map_err(|e| to_js(Error::storage(format!("OPFS storage is unavailable: {e}"))))?;
        crate::bench::timing::set_clock(performance_now);
        let name = format!("bench-{}.sqlite3", setting.name());
        for file in [
            name.clone(),
            format!("{name}-journal"),
            format!("{name}-wal"),
        ] {
            pool.remove(&file)
                .map_err(|e| to_js(Error::storage(e.to_string())))?;
        }
        let conn = match stack {
            Stack::Page => crate::bench::open(&name, setting),
            Stack::Coalesced => crate::bench::open_coalesced(&name, setting),
            Stack::Profiled => crate::bench::open_profiled(&name, setting),
        }
        .map_err(to_js)?;
        Ok(Bench {
            pool,
            setting,
            name,
            conn: Some(conn),
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
