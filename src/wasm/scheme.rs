//! The facade for "where the scheme ends": side effects and the outbox,
//! business keys, retention. Converts only; the logic is in
//! [`crate::outbox`], [`crate::business`] and [`crate::retention`].

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{event_from_js, fault_from_js, to_js, to_value, Lab};
use crate::outbox::{self, Receiver, Strategy};
use crate::{business, retention, Error, Field};

/// The simulated receiver of notifications: "the user's phone". It keeps
/// what it showed in its own in-memory database (another system's state,
/// not ours), deduplicating by message id or not.
#[wasm_bindgen]
pub struct Notifier {
    receiver: Receiver,
}

#[wasm_bindgen]
impl Notifier {
    /// A fresh receiver; `dedup` decides whether it keeps its own inbox of
    /// message ids.
    #[wasm_bindgen(constructor)]
    pub fn new(dedup: bool) -> Result<Notifier, JsValue> {
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
    /// `crash` is null, "after_send_before_commit" or
    /// "after_commit_before_send". Answers like `Lab.deliver`.
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
        let crash = fault_from_js(&crash).map_err(to_js)?;
        let conn = lab.writer().map_err(to_js)?;
        to_value(&outbox::deliver(conn, &self.receiver, &event, strategy, crash).map_err(to_js)?)
    }

    /// One round of the dispatcher; `crash` null or "after_send_before_mark".
    /// Returns the message id sent, or null when the outbox is empty.
    #[wasm_bindgen(js_name = dispatchOne)]
    pub fn dispatch_one(&self, lab: &Lab, crash: JsValue) -> Result<Option<f64>, JsValue> {
        let crash = fault_from_js(&crash).map_err(to_js)?;
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
    pub fn activate(
        &self,
        source: String,
        event_id: String,
        order_id: String,
    ) -> Result<JsValue, JsValue> {
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

    /// Moves the lab clock forward by `ms`; returns the new time.
    #[wasm_bindgen(js_name = advanceClock)]
    pub fn advance_clock(&self, ms: f64) -> Result<f64, JsValue> {
        let ms = crate::event::integer_from_js_number(Field::Event, ms).map_err(to_js)?;
        let conn = self.writer().map_err(to_js)?;
        retention::advance(conn, ms)
            .map(|now| now as f64)
            .map_err(to_js)
    }

    /// Deletes inbox rows older than `keep_ms`; returns how many.
    pub fn purge(&self, keep_ms: f64) -> Result<f64, JsValue> {
        let keep = crate::event::integer_from_js_number(Field::Event, keep_ms).map_err(to_js)?;
        let conn = self.writer().map_err(to_js)?;
        retention::purge(conn, keep, 100)
            .map(|n| n as f64)
            .map_err(to_js)
    }
}
