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
//!
//! Nothing stored bricks the page: if the database *file* cannot be used
//! (damaged, another program's, a newer schema, a value of the wrong type —
//! [`crate::health::check`]), [`Lab::open`] still succeeds. The Lab keeps the
//! error as its [`Lab::problem`], every database call answers it (not
//! retryable: the same file fails the same way), and the two ways out work:
//! [`Lab::export_raw`] (the stored bytes, as they are) and [`Lab::reset`]
//! (delete the file, start afresh). Only installing OPFS itself can still
//! make `open` fail; the worker then falls back to memory.

use std::time::Duration;

mod bench_lab;
mod crash_lab;
mod race_lab;
pub mod scheme;

pub use bench_lab::Bench;
pub use crash_lab::{CrashLab, CRASH_POOL_DIRECTORY, CRASH_VFS_NAME};
pub use race_lab::RaceLab;

use rusqlite::Connection;
use serde::Serialize;
use sqlite_wasm_rs::vfs::transfer::DbTransfer;
use sqlite_wasm_rs::vfs::VfsFilesManager;
use sqlite_wasm_vfs::sahpool::{OpfsSAHPoolCfgBuilder, OpfsSAHPoolUtil};
use wasm_bindgen::prelude::*;

use crate::db::{self, Mode};
use crate::error::StorageCode;
use crate::event::{self as rules, integer_from_js_number, Field, ValueType};
use crate::handlers::{Answer, Handler, Payload};
use crate::race::{self, Arena, Race};
use crate::{
    apply, console, health, scenario, schema, tables, transfer, Delivery, Error, Event, Fault,
    Outcome, Progress, Step,
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
    /// Why the stored database cannot be used, when it cannot: then `conn`
    /// is `None` and every database call answers this error. Only
    /// [`Lab::export_raw`] and [`Lab::reset`] work (reset clears it).
    problem: Option<Error>,
    /// A delivery run one statement at a time (step mode). While it is
    /// unfinished its transaction is open and holds the write lock.
    stepping: Option<Delivery>,
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
        let storage = match storage.as_str() {
            "opfs" => Storage::Opfs(install_opfs().await.map_err(to_js)?),
            "memory" => Storage::Memory,
            other => {
                return Err(to_js(Error::storage(format!(
                    "unknown storage {other:?}: expected \"opfs\" or \"memory\""
                ))))
            }
        };
        // For the whole worker: a console query that needs more memory
        // fails with SQLITE_NOMEM instead of growing the wasm memory until
        // an allocation traps (src/budget.rs says why).
        crate::budget::set_heap_limit(crate::budget::HEAP_LIMIT_BYTES);
        let mut lab = Lab {
            name,
            storage,
            conn: None,
            problem: None,
            stepping: None,
        };
        lab.open_database();
        Ok(lab)
    }

    /// Why the stored database cannot be used, as the usual error object
    /// (`storage`, code `corrupt`, `unusable`, ...; for a damaged or foreign
    /// file not retryable), or `null` when it is open and healthy.
    #[wasm_bindgen(getter)]
    pub fn problem(&self) -> JsValue {
        match &self.problem {
            Some(err) => to_js(err.clone()),
            None => JsValue::NULL,
        }
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
    /// receipt: null, handler}`. Every handler gets the event validated by
    /// the same rules first ([`Handler::run`]): an invalid one throws
    /// `invalid_input` before any SQL, whichever handler was asked for.
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
        self.conn().map_err(to_js)?; // the database's problem, if it has one
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
        self.conn().map_err(to_js)?; // the database's problem, if it has one
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
        let conn = self.conn_mut().map_err(to_js)?;
        to_value(&console::query(conn, &sql).map_err(to_js)?)
    }

    /// The database as the bytes of a `.sqlite3` file.
    pub fn export(&mut self) -> Result<Vec<u8>, JsValue> {
        self.writer().map_err(to_js)?;
        let conn = self.conn.as_mut().ok_or_else(|| to_js(closed()))?;
        transfer::export(conn).map_err(to_js)
    }

    /// Replaces the database with the rows of `bytes`, rebuilt in a fresh
    /// inbox-lab database (the file's own schema is never adopted); returns
    /// `{accounts, inbox, outbox, orders, version, ignored}`. A file that
    /// is not an intact inbox-lab database throws (field `file`) and
    /// changes nothing.
    pub fn import(&mut self, bytes: Vec<u8>) -> Result<JsValue, JsValue> {
        self.writer().map_err(to_js)?;
        let conn = self.conn.as_mut().ok_or_else(|| to_js(closed()))?;
        to_value(&transfer::import(conn, &bytes).map_err(to_js)?)
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

    /// The stored database file exactly as it is, byte for byte: "export as
    /// is", the way to keep a database the page cannot use before resetting
    /// it. On OPFS the file is read from the pool untouched (SQLite does not
    /// open it); in memory there is no file, so it is the open database's
    /// `serialize` (nothing to export if it could not be created). With a
    /// healthy database open, this is what [`Lab::export`] gives.
    #[wasm_bindgen(js_name = exportRaw)]
    pub fn export_raw(&mut self) -> Result<Vec<u8>, JsValue> {
        if self.conn.is_some() {
            return self.export();
        }
        match &self.storage {
            Storage::Opfs(pool) => pool.export_db(&self.name).map_err(|e| {
                to_js(Error::storage(format!(
                    "cannot read the stored database file {:?}: {e}",
                    self.name
                )))
            }),
            Storage::Memory => Err(to_js(Error::storage(
                "there is no stored database to export: it is in memory and could not be created",
            ))),
        }
    }

    /// Throws the database away and starts a fresh one holding account 1 at
    /// balance 0. Deleting the file and its journal or WAL (rather than its
    /// rows) also recovers from a database that is damaged or not
    /// inbox-lab's: this always works unless the storage itself fails, and
    /// clears [`Lab::problem`].
    pub fn reset(&mut self) -> Result<(), JsValue> {
        self.stepping = None;
        self.conn = None; // closes the connection, rolling back anything open
        self.problem = None;
        let removed = self.remove_files();
        self.open_database();
        removed.map_err(to_js)?;
        match &self.problem {
            Some(err) => Err(to_js(err.clone())),
            None => Ok(()),
        }
    }

    /// Test only (the worker exposes it only with `?simulate=plant`, for the
    /// end-to-end tests): closes the database, replaces its file in the OPFS
    /// pool with `bytes` exactly as given — no check of any kind, so a
    /// damaged or foreign file can be put in place — and leaves the Lab
    /// closed. The next worker to open the database meets the planted file,
    /// as a reader would after a reload.
    #[wasm_bindgen(js_name = testPlant)]
    pub fn test_plant(&mut self, bytes: Vec<u8>) -> Result<(), JsValue> {
        self.close();
        self.problem = None;
        self.remove_files().map_err(to_js)?;
        let Storage::Opfs(pool) = &self.storage else {
            return Err(to_js(Error::storage("testPlant needs OPFS storage")));
        };
        pool.import_db_unchecked(&self.name, &bytes)
            .map_err(|e| to_js(Error::storage(format!("cannot plant the file: {e}"))))
    }

    /// Closes the database (the worker does this before it is terminated on
    /// purpose, and tests do it to prove persistence).
    pub fn close(&mut self) {
        self.stepping = None;
        self.conn = None;
    }
}

impl Lab {
    /// Opens the database, or keeps why it cannot be used as the problem.
    fn open_database(&mut self) {
        self.problem = self.connect().err();
    }

    /// Deletes the database file and its journal and WAL from the OPFS pool
    /// (nothing to delete in memory: closing the connection dropped it).
    fn remove_files(&self) -> Result<(), Error> {
        if let Storage::Opfs(pool) = &self.storage {
            for suffix in ["", "-journal", "-wal"] {
                let file = format!("{}{suffix}", self.name);
                pool.remove(&file).map_err(|e| {
                    Error::storage(format!("cannot delete the database file {file:?}: {e}"))
                })?;
            }
        }
        Ok(())
    }

    fn connect(&mut self) -> Result<(), Error> {
        let path = match self.storage {
            Storage::Opfs(_) => self.name.clone(),
            // A named memdb database: lives as long as a connection to it.
            Storage::Memory => format!("file:/{}?vfs=memdb", self.name),
        };
        let mut conn = db::open(&path, Mode::Create, BUSY_TIMEOUT)?;
        // A stored database is checked before anything uses it: one that
        // fails is the Lab's problem, not the page's end.
        health::check(&conn)?;
        if tables::snapshot(&conn)?.accounts.is_empty() {
            schema::init(&mut conn, &[1])?;
        }
        self.conn = Some(conn);
        Ok(())
    }

    /// The connection; when there is none, why: the database's problem, or
    /// that it was closed.
    fn conn(&self) -> Result<&Connection, Error> {
        match (&self.conn, &self.problem) {
            (Some(conn), _) => Ok(conn),
            (None, Some(problem)) => Err(problem.clone()),
            (None, None) => Err(closed()),
        }
    }

    fn conn_mut(&mut self) -> Result<&mut Connection, Error> {
        match (&mut self.conn, &self.problem) {
            (Some(conn), _) => Ok(conn),
            (None, Some(problem)) => Err(problem.clone()),
            (None, None) => Err(closed()),
        }
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
/// [`Event`] applied yet: what [`Handler::deliver`] takes, which applies
/// them before any handler runs.
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
