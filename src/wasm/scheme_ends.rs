//! The facade for "where the scheme ends": side effects and the outbox,
//! business keys, retention. Converts only; the logic is in
//! [`crate::labs::scheme_ends`].

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{event_from_js, number_from_js, point_from_js, string_from_js, to_value, type_of, Lab};
use crate::core::event::{self as rules, ValueType};
use crate::labs::scheme_ends::outbox::{self, Crash, Receiver, Strategy};
use crate::labs::scheme_ends::{business, retention, story::Story};
use crate::{Error, Field};

/// The simulated receiver of notifications: "the user's phone". It keeps
/// what it showed in its own in-memory database (another system's state,
/// not ours), deduplicating by message id or not; and the [`Story`] of the
/// experiments since it started.
#[wasm_bindgen]
pub struct Notifier {
    story: Story,
}

#[wasm_bindgen]
impl Notifier {
    /// A fresh receiver; `dedup` (true or false) decides whether it keeps
    /// its own inbox of message ids.
    #[wasm_bindgen(constructor)]
    pub fn new(dedup: JsValue) -> Result<Notifier, JsValue> {
        let dedup = bool_from_js(&dedup)?;
        let conn = rusqlite::Connection::open_in_memory().map_err(Error::from)?;
        let receiver = Receiver::open(conn, dedup)?;
        Ok(Notifier {
            story: Story::new(receiver),
        })
    }

    #[wasm_bindgen(getter)]
    pub fn dedup(&self) -> bool {
        self.story.receiver().dedups()
    }

    /// Delivers an event to `lab` with the atomic handler and notifies by
    /// `strategy` ("send_before_commit", "send_after_commit", "outbox");
    /// `crash` is null, "after_send_before_commit",
    /// "after_commit_before_send" (or the handler's own "after_insert" /
    /// "after_update"). Answers like `Lab.deliver`.
    pub fn deliver(
        &mut self,
        lab: &Lab,
        event: JsValue,
        strategy: JsValue,
        crash: JsValue,
    ) -> Result<JsValue, JsValue> {
        let event = event_from_js(&event)?;
        let strategy: Strategy = strategy
            .as_string()
            .unwrap_or_default()
            .parse()
            .map_err(|reason: String| JsValue::from(Error::invalid(Field::EVENT, reason)))?;
        let crash = crash_from_js(&crash, &Crash::DELIVER)?;
        let conn = lab.writer()?;
        to_value(&self.story.deliver(conn, &event, strategy, crash)?)
    }

    /// One round of the dispatcher; `crash` null or "after_send_before_mark".
    /// Returns the message id sent, or null when the outbox is empty.
    #[wasm_bindgen(js_name = dispatchOne)]
    pub fn dispatch_one(&self, lab: &Lab, crash: JsValue) -> Result<Option<f64>, JsValue> {
        let crash = crash_from_js(&crash, &Crash::DISPATCH)?;
        let conn = lab.writer()?;
        let sent = outbox::dispatch_one(conn, self.story.receiver(), crash)?;
        // Message ids are small positive integers: exact as a JS number.
        Ok(sent.map(|id| id as f64))
    }

    /// The dispatcher's button; `crash` true or false: `{outcome:
    /// "drained", sent}` or `{outcome: "crashed", message_id}`.
    pub fn dispatch(&self, lab: &Lab, crash: JsValue) -> Result<JsValue, JsValue> {
        let crash = bool_from_js(&crash)?;
        to_value(&self.story.dispatch(lab.writer()?, crash)?)
    }

    /// The retention experiment's delivery: answers like `deliver`, with
    /// `applied_times`.
    pub fn redeliver(&mut self, lab: &Lab, event: JsValue) -> Result<JsValue, JsValue> {
        let event = event_from_js(&event)?;
        to_value(&self.story.redeliver(lab.writer()?, &event)?)
    }

    /// What the side-effect experiment shows, with a verdict per event
    /// ([`Story::effects`]).
    pub fn effects(&self, lab: &Lab) -> Result<JsValue, JsValue> {
        to_value(&self.story.effects(lab.conn()?)?)
    }

    /// Everything the user was shown: `[{message_id, account_id, amount}]`.
    pub fn shown(&self) -> Result<JsValue, JsValue> {
        to_value(&self.story.receiver().shown()?)
    }

    /// Forgets what was shown.
    pub fn clear(&self) -> Result<(), JsValue> {
        self.story.receiver().clear().map_err(JsValue::from)
    }
}

/// `true` or `false`, nothing else: a `bool` parameter would let
/// wasm-bindgen coerce `"no"` to true.
fn bool_from_js(value: &JsValue) -> Result<bool, Error> {
    value
        .as_bool()
        .ok_or_else(|| rules::wrong_type(Field::EVENT, ValueType::Boolean, type_of(value)))
}

/// Reads one of this lab's crash points (of `allowed`) by its stable name.
fn crash_from_js(value: &JsValue, allowed: &[Crash]) -> Result<Option<Crash>, Error> {
    point_from_js(value, allowed, Crash::as_str)
}

#[derive(Serialize)]
struct Activated {
    #[serde(flatten)]
    activation: business::Activation,
    http_status: u16,
}

#[wasm_bindgen]
impl Lab {
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
        let source = string_from_js(Field::SOURCE, &source)?;
        let event_id = string_from_js(Field::EVENT_ID, &event_id)?;
        let order_id = string_from_js(Field::EVENT, &order_id)?;
        let conn = self.writer()?;
        let activation = business::activate(conn, &source, &event_id, &order_id)?;
        to_value(&Activated {
            http_status: activation.http_status(),
            activation,
        })
    }

    /// The lab clock, in milliseconds.
    pub fn now(&self) -> Result<f64, JsValue> {
        Ok(retention::now(self.conn()?)? as f64)
    }

    /// When the inbox row of (source, event_id) was received, in lab ms;
    /// undefined when there is none.
    #[wasm_bindgen(js_name = receivedAt)]
    pub fn received_at(&self, source: JsValue, event_id: JsValue) -> Result<Option<f64>, JsValue> {
        let source = string_from_js(Field::SOURCE, &source)?;
        let event_id = string_from_js(Field::EVENT_ID, &event_id)?;
        let at = retention::received_at(self.conn()?, &source, &event_id)?;
        Ok(at.map(|ms| ms as f64))
    }

    /// Moves the lab clock forward by `ms` (a whole JS number, as every
    /// number of the facade); returns the new time.
    #[wasm_bindgen(js_name = advanceClock)]
    pub fn advance_clock(&self, ms: JsValue) -> Result<f64, JsValue> {
        let ms = number_from_js(Field::EVENT, &ms)?;
        Ok(retention::advance(self.writer()?, ms)? as f64)
    }

    /// Deletes inbox rows older than `keep_ms`; returns how many.
    pub fn purge(&self, keep_ms: JsValue) -> Result<f64, JsValue> {
        let keep = number_from_js(Field::EVENT, &keep_ms)?;
        Ok(retention::purge(self.writer()?, keep, 100)? as f64)
    }
}
