//! Fault points: places where a teaching run makes the handler fail on
//! purpose, inside the open transaction.
//!
//! Invariant: both of the handler's fault points fire *before* `COMMIT`, so
//! the transaction rolls back and nothing of the delivery survives: no inbox
//! row, no credit, no receipt. A retry of the same event then applies
//! normally.
//!
//! A fault that fires becomes [`Error::SimulatedCrash`] carrying the point's
//! name ([`Fault::as_str`]). Other crash points are not the core's: step
//! mode's "throw" is [`crate::Delivery::THROWN`]; the labs define their own
//! (the outbox's, in `labs::scheme_ends::outbox`, two of which fire after
//! `COMMIT`), each saying whether it fires before or after it.

use serde::{Deserialize, Serialize};

use crate::core::error::Error;

crate::core::named::named! {
    /// Where the handler fails on purpose.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Fault("fault") {
        /// After the inbox row is inserted, before the balance is touched — the
        /// article's `fail_after_insert`. Before `COMMIT`: rolled back.
        AfterInsert => "after_insert",
        /// After the balance and the receipt are written, just before `COMMIT`:
        /// rolled back.
        AfterUpdate => "after_update",
    }
}

impl Fault {
    /// The error this fault point fires as.
    pub fn crash(self) -> Error {
        Error::SimulatedCrash {
            point: self.as_str(),
        }
    }
}
