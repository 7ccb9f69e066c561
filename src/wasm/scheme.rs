//! The facade for "where the scheme ends": side effects and the outbox,
//! business keys, retention. Converts only; the logic is in
//! [`crate::outbox`], [`crate::business`] and [`crate::retention`].

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{event_from_js, number_from_js, string_from_js, to_js, to_value, type_of, Lab};
use crate::event::{self as rules, ValueType};
use crate::outbox::{self, Receiver, Strategy};
use crate::{business, retention, Error, Fault, Field};

/// The simulated receiver of notifications: "the user's phone". It keeps
/// what it showed in its own in-memory database (another system's state,
/// not ours), deduplicating by message id or not.
#[wasm_bindgen]
pub struct Notifier {
    receiver: Receiver,
}

#[wasm_bindgen]
impl Notifier {
    /// A fresh receiver; `dedup` (true or false, nothing else: a `bool`
    /// parameter would let wasm-bindgen coerce `"no"` to true) decides
    /// whether it keeps its own inbox of message ids.
    #[wasm_bindgen(constructor)]
    pub fn new(dedup: JsValue) -> Result<Notifier, JsValue> {
        let Some(dedup) = dedup.as_bool() else {
            return Err(to_js(rules::wrong_type(
                Field::Event,
                ValueType::Boolean,
                type_of(&dedup),
            )));
        };
        let conn = rusqlite::Connection::open_in_memory().map_err(|e| to_js(Error::from(e)))?;
        let receiver = Receiver::open(conn, dedup).map_err(to_js)?;
        Ok(Notifier { receiver })
    }

    #[wasm_bindgen(getter)]
    pub fn dedup(&self) -> bool {
        self.receiver.dedups()
    }

    /// Delivers an event to `lab` with the atomic handler and notifies by
    /// `strategy` ("send_before_commit", "send_after_commit", "outbox");
    /// `crash` is null, "after_send_before_commit",
    /// "after_commit_before_send" (or the handler's own "after_insert" /
    /// "after_update"). Answers like `Lab.deliver`.
    pub fn deliver(
        &self,
        lab: &Lab,
        event: JsValue,
        strategy: JsValue,
        crash: JsValue,
    ) -> Result<JsValue, JsValue> {
        let event = event_from_js(&event).map_err(to_js)?;
        let strategy: Strategy = strategy
            .as_string()
            .unwrap_or_default()
            .parse()
            .map_err(|reason: String| to_js(Error::invalid(Field::Event, reason)))?;
        let crash = crash_from_js(&crash, &DELIVER_CRASHES).map_err(to_js)?;
        let conn = lab.writer().map_err(to_js)?;
        to_value(&outbox::deliver(conn, &self.receiver, &event, strategy, crash).map_err(to_js)?)
    }

    /// One round of the dispatcher; `crash` null or "after_send_before_mark".
    /// Returns the message id sent, or null when the outbox is empty.
    #[wasm_bindgen(js_name = dispatchOne)]
    pub fn dispatch_one(&self, lab: &Lab, crash: JsValue) -> Result<Option<f64>, JsValue> {
        let crash = crash_from_js(&crash, &[Fault::AfterSendBeforeMark]).map_err(to_js)?;
        let conn = lab.writer().map_err(to_js)?;
        let sent = outbox::dispatch_one(conn, &self.receiver, crash).map_err(to_js)?;
        // Message ids are small positive integers: exact as a JS number.
        Ok(sent.map(|id| id as f64))
    }

    /// Everything the user was shown: `[{message_id, account_id, amount}]`.
    pub fn shown(&self) -> Result<JsValue, JsValue> {
        to_value(&self.receiver.shown().map_err(to_js)?)
    }

    /// Forgets what was shown.
    pub fn clear(&self) -> Result<(), JsValue> {
        self.receiver.clear().map_err(to_js)
    }
}

/// The crash points `Notifier.deliver` accepts: the handler's own two and
/// the two around the side effect.
const DELIVER_CRASHES: [Fault; 4] = [
    Fault::AfterInsert,
    Fault::AfterUpdate,
    Fault::AfterSendBeforeCommit,
    Fault::AfterCommitBeforeSend,
];

/// Reads a crash point by its stable name, accepting only those in
/// `allowed`. (`Fault`'s `FromStr`, used by `Lab.deliver`, knows only the
/// handler's own fault points, so it would refuse every crash point of this
/// lab.) `undefined` and `null` mean no crash.
fn crash_from_js(value: &JsValue, allowed: &[Fault]) -> Result<Option<Fault>, Error> {
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
    match allowed.iter().find(|f| f.as_str() == name) {
        Some(&fault) => Ok(Some(fault)),
        None => {
            let names: Vec<&str> = allowed.iter().map(|f| f.as_str()).collect();
            Err(rules::unknown_value(Field::Fault, &name, &names))
        }
    }
}

#[derive(Serialize)]
struct Activated {
    #[serde(flatten)]
    activation: business::Activation,
    http_status: u16,
}

#[wasm_bindgen]
impl Lab {
    /// The outbox rows: `[{message_id, source, event_id, account_id, amount,
    /// sent_at}]`.
    pub fn outbox(&self) -> Result<JsValue, JsValue> {
        let conn = self.conn().map_err(to_js)?;
        to_value(&outbox::rows(conn).map_err(to_js)?)
    }

    /// "Activate order O" for event (source, event_id): `{outcome:
    /// "activated" | "already_active" | "duplicate", ..., http_status}`.
    ///
    /// The three arguments are JavaScript values checked like an event's
    /// keys (strings, valid UTF-16): a `String` parameter would let
    /// wasm-bindgen replace a lone surrogate with U+FFFD — silently changing
    /// the key — or, in a debug build, throw a plain `Error` the worker must
    /// treat as a crash.
    pub fn activate(
        &self,
        source: JsValue,
        event_id: JsValue,
        order_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        let source = string_from_js(Field::Source, &source).map_err(to_js)?;
        let event_id = string_from_js(Field::EventId, &event_id).map_err(to_js)?;
        let order_id = string_from_js(Field::Event, &order_id).map_err(to_js)?;
        let conn = self.writer().map_err(to_js)?;
        let activation = business::activate(conn, &source, &event_id, &order_id).map_err(to_js)?;
        to_value(&Activated {
            http_status: activation.http_status(),
            activation,
        })
    }

    /// The lab clock, in milliseconds.
    pub fn now(&self) -> Result<f64, JsValue> {
        let conn = self.conn().map_err(to_js)?;
        retention::now(conn).map(|ms| ms as f64).map_err(to_js)
    }

    /// Moves the lab clock forward by `ms` (a whole JS number, as every
    /// number of the facade); returns the new time.
    #[wasm_bindgen(js_name = advanceClock)]
    pub fn advance_clock(&self, ms: JsValue) -> Result<f64, JsValue> {
        let ms = number_from_js(Field::Event, &ms).map_err(to_js)?;
        let conn = self.writer().map_err(to_js)?;
        retention::advance(conn, ms)
            .map(|now| now as f64)
            .map_err(to_js)
    }

    /// Deletes inbox rows older than `keep_ms`; returns how many.
    pub fn purge(&self, keep_ms: JsValue) -> Result<f64, JsValue> {
        let keep = number_from_js(Field::Event, &keep_ms).map_err(to_js)?;
        let conn = self.writer().map_err(to_js)?;
        retention::purge(conn, keep, 100)
            .map(|n| n as f64)
            .map_err(to_js)
    }
}
