//! The wasm facade: the only code that knows `JsValue`.
//!
//! Browser workers call it; the page never does. Each worker-facing class
//! has its file:
//!
//! * [`Lab`] (`lab.rs`) — the reader's database, for `www/db/worker.js`: open
//!   on OPFS or in memory, deliver with any handler, tables, export; step
//!   mode (`step.rs`); the console, export as is, import, salvage and the
//!   article's scenario (`tools.rs`).
//! * [`RaceLab`] (`race.rs`) — the race lab over `memdb` connections.
//! * Foreign work (`guest.rs`), for `www/db/guest.js`: [`judge_handler`] (no
//!   crash sweep here), a console query on a copy, an imported file checked
//!   and rebuilt; their deadlines (`foreign.rs`), for `www/db/foreign.js`.
//! * [`CrashLab`] (`crash.rs`) — the crash lab, for `www/panels/crash-lab/crashworker.js`,
//!   in its own OPFS pool.
//! * [`Notifier`] and the scheme-ends calls on [`Lab`] (`scheme_ends.rs`).
//! * The signed-webhook calls on [`Lab`] (`hooks.rs`): secrets, and
//!   receiving what the server relays.
//!
//! The page's start module (the crate without `full`) leaves out `crash.rs`,
//! `guest.rs`, `race.rs`, `scheme_ends.rs`, `hooks.rs`, `step.rs`,
//! `tools.rs`, and on [`Lab`] a pasted JSON event and the mistaken handlers'
//! runs; `www/db/worker.js` hands the database to the full module
//! ([`Lab::release`]) before the first op that needs them.
//!
//! Invariant: it converts and decides nothing. JavaScript values come in
//! with their JavaScript types checked (strings must be valid UTF-16,
//! numbers integral JS numbers) and are validated by the core ([`Event`]);
//! answers go out as plain objects; every [`Error`] becomes the plain
//! object `{kind, code, message, http_status, retryable, params, field?}`
//! (`From<Error> for JsValue`, so `?` converts), which the worker forwards
//! to the page.

use std::time::Duration;

#[cfg(feature = "full")]
mod crash;
mod foreign;
#[cfg(feature = "full")]
mod guest;
#[cfg(feature = "full")]
mod hooks;
mod lab;
#[cfg(feature = "full")]
mod race;
#[cfg(feature = "full")]
mod scheme_ends;
#[cfg(feature = "full")]
mod step;
#[cfg(feature = "full")]
mod tools;

#[cfg(feature = "full")]
pub use crash::{CrashLab, CRASH_POOL_DIRECTORY, CRASH_VFS_NAME};
pub use foreign::{deadline_ms, over_deadline, reads_only_settings};
#[cfg(feature = "full")]
pub use guest::{
    judge_handler, judge_workshop, query_copy, rebuild_import, replay_handler, replay_workshop,
};
pub use lab::{install_opfs, Lab, POOL_CAPACITY, POOL_DIRECTORY};
#[cfg(feature = "full")]
pub use race::RaceLab;
#[cfg(feature = "full")]
pub use scheme_ends::Notifier;

use rusqlite::Connection;
use serde::Serialize;
use sqlite_wasm_vfs::sahpool::{OpfsSAHPoolCfg, OpfsSAHPoolUtil};
use wasm_bindgen::prelude::*;

use crate::core::db;
use crate::core::error::StorageCode;
use crate::core::event::{self as rules, integer_from_js_number, Field, ValueType};
use crate::labs::handlers::{Handler, Payload, HANDLER};
use crate::labs::verdicts::Verdict;
use crate::{Error, Event, Fault, Trace};

/// The browser has no other connection to wait for inside one worker; a
/// short timeout turns any lock conflict into a prompt `busy` answer.
const BUSY_TIMEOUT: Duration = Duration::from_millis(100);

/// Every `[kind, code]` pair an error report can carry, the labs' included
/// (see [`crate::labs::error_codes`]), so the page's tests can check that each has an
/// English and a Russian text.
#[cfg(feature = "full")]
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> Result<JsValue, JsValue> {
    let types: Vec<&str> = ValueType::ALL.iter().map(|t| t.as_str()).collect();
    to_value(&serde_json::json!({ "codes": crate::labs::error_codes(), "types": types }))
}

/// The Rust step mode shows (`crate::core::source`): `{path, text, steps:
/// [{step, first, last}]}`, the lines 1-based and inclusive, one entry per
/// step whose lines were found.
#[cfg(feature = "full")]
#[wasm_bindgen(js_name = applySource)]
pub fn apply_source() -> Result<JsValue, JsValue> {
    use crate::core::source::{step_lines, APPLY_PATH, APPLY_SOURCE, STEPS};
    let steps: Vec<_> = STEPS
        .iter()
        .filter_map(|&step| {
            step_lines(step).map(|(first, last)| {
                serde_json::json!({ "step": step.as_str(), "first": first, "last": last })
            })
        })
        .collect();
    to_value(&serde_json::json!({ "path": APPLY_PATH, "text": APPLY_SOURCE, "steps": steps }))
}

/// The handlers a race can be started with: the six built-ins, then
/// `"workshop"` when this build has the workshop's handler.
#[wasm_bindgen(js_name = handlerNames)]
pub fn handler_names() -> Vec<String> {
    use crate::labs::handlers::workshop;
    Handler::ALL
        .iter()
        .map(|h| h.as_str().to_owned())
        .chain(workshop::handler().map(|_| workshop::NAME.to_owned()))
        .collect()
}

/// The text of a built-in handler (`atomic`, `check_then_act`, …), to show
/// read-only and copy.
#[wasm_bindgen(js_name = builtinHandler)]
pub fn builtin_handler(name: JsValue) -> Result<JsValue, JsValue> {
    let handler = handler_from_js(&name)?;
    Ok(JsValue::from_str(crate::labs::handlers::builtin(handler)))
}

/// What a call on a closed database answers.
pub fn closed() -> Error {
    Error::storage("the database is closed")
}

/// Converts a crate error into the plain object the page receives
/// (`params` as a plain object, not a `Map`), so `?` turns any [`Error`]
/// into what a facade method throws.
impl From<Error> for JsValue {
    fn from(err: Error) -> JsValue {
        err.report()
            .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
            .unwrap_or_else(|e| JsValue::from_str(&format!("{err} (and {e})")))
    }
}

/// Adds `steps` — what a delivery ran ([`Trace`]) —, `not_reached` — what
/// a crash left out ([`Trace::unreached`]: `[{op, statements, tx}]`; only
/// after a crash, so other answers keep their shape) — and
/// its `verdict` ([`Verdict`]: what it really did, judged in Rust) to its
/// answer or to its error object, so the page draws and judges nothing
/// itself.
fn with_steps(
    answer: Result<JsValue, JsValue>,
    steps: &Trace,
    verdict: Option<&Verdict>,
) -> Result<JsValue, JsValue> {
    let nothing_left_out = steps.unreached().is_empty();
    let not_reached = to_value(&steps.unreached())?;
    let steps = to_value(steps)?;
    let verdict = verdict.map(to_value).transpose()?;
    let (Ok(object) | Err(object)) = &answer;
    if object.is_object() {
        // Setting a property of a plain object we just made cannot fail.
        let _ = js_sys::Reflect::set(object, &JsValue::from_str("steps"), &steps);
        if !nothing_left_out {
            let _ = js_sys::Reflect::set(object, &JsValue::from_str("not_reached"), &not_reached);
        }
        if let Some(verdict) = verdict {
            let _ = js_sys::Reflect::set(object, &JsValue::from_str("verdict"), &verdict);
        }
    }
    answer
}

/// Serialises an answer; plain objects, and integers as JS numbers (all of
/// ours are ≤ 2^53-1, so they are exact).
pub fn to_value<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsValue::from(Error::storage(format!("cannot encode the answer: {e}"))))
}

/// Reads `{source, event_id, account_id, amount}` from a JavaScript value.
/// Strings must be strings (valid UTF-16: a lone surrogate cannot become
/// UTF-8 without silently changing the key); numbers must be numbers.
pub fn event_from_js(value: &JsValue) -> Result<Event, Error> {
    payload_from_js(value)?.to_event()
}

/// Checks one delivery a share link carries (www/lib/share.js) before the
/// page replays anything, by the rules [`Lab::deliver`] applies first: the
/// handler and the fault by their names, the event by [`event_from_js`].
/// Touches no database. Returns `undefined`, or throws the error `deliver`
/// would (`invalid_input`, the field at fault named), so a link whose third
/// delivery is invalid is refused before the first one is written.
#[wasm_bindgen(js_name = checkDelivery)]
pub fn check_delivery(event: JsValue, handler: JsValue, fault: JsValue) -> Result<(), JsValue> {
    handler_from_js(&handler)?;
    fault_from_js(&fault)?;
    event_from_js(&event)?;
    Ok(())
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
    let source = string_from_js(Field::SOURCE, &get(Field::SOURCE)?)?;
    let event_id = string_from_js(Field::EVENT_ID, &get(Field::EVENT_ID)?)?;
    let account_id = number_from_js(Field::ACCOUNT_ID, &get(Field::ACCOUNT_ID)?)?;
    let amount = number_from_js(Field::AMOUNT, &get(Field::AMOUNT)?)?;
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
        .map_err(|reason: String| Error::invalid(HANDLER, reason))
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
    point_from_js(value, &Fault::ALL, Fault::as_str)
}

/// Reads a fault or crash point by its stable name (`name_of`), accepting
/// only those in `allowed`. `undefined` and `null` mean none.
fn point_from_js<T: Copy>(
    value: &JsValue,
    allowed: &[T],
    name_of: fn(T) -> &'static str,
) -> Result<Option<T>, Error> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let Some(name) = value.as_string() else {
        return Err(rules::wrong_type(
            Field::FAULT,
            ValueType::String,
            type_of(value),
        ));
    };
    match allowed.iter().find(|&&p| name_of(p) == name) {
        Some(&point) => Ok(Some(point)),
        None => {
            let names: Vec<&str> = allowed.iter().map(|&p| name_of(p)).collect();
            Err(rules::unknown_value(Field::FAULT, &name, &names))
        }
    }
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
    // `typeof` answers one of the wire names (never `null` or `array`).
    value
        .js_typeof()
        .as_string()
        .and_then(|name| name.parse().ok())
        .unwrap_or(ValueType::Object)
}

/// Installs an OPFS "sahpool" VFS as SQLite's default: the reader's pool
/// (`lab.rs`), the crash lab's and the benchmark's (`bench/src/wasm.rs`) each call this with
/// their own directory and VFS name.
///
/// # Errors
/// `storage`/`opfs_unavailable`, naming why (not a dedicated worker, an
/// insecure context, access handles held by another tab, ...).
pub async fn install_pool(cfg: &OpfsSAHPoolCfg) -> Result<OpfsSAHPoolUtil, Error> {
    sqlite_wasm_vfs::sahpool::install::<sqlite_wasm_rs::WasmOsCallback>(cfg, true)
        .await
        .map_err(|e| Error::storage_with(StorageCode::OpfsUnavailable, e.to_string()))
}
