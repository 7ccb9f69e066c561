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

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::core::error::Error;

/// Where the handler fails on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// After the inbox row is inserted, before the balance is touched — the
    /// article's `fail_after_insert`. Before `COMMIT`: rolled back.
    AfterInsert,
    /// After the balance and the receipt are written, just before `COMMIT`:
    /// rolled back.
    AfterUpdate,
}

impl Fault {
    /// Every fault point, in the order a delivery reaches them.
    pub const ALL: [Fault; 2] = [Fault::AfterInsert, Fault::AfterUpdate];

    /// The stable name used by the CLI, the worker protocol and the page.
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::AfterInsert => "after_insert",
            Fault::AfterUpdate => "after_update",
        }
    }

    /// The error this fault point fires as.
    pub fn crash(self) -> Error {
        Error::SimulatedCrash {
            point: self.as_str(),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fault::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("unknown fault {s:?}: expected after_insert or after_update"))
    }
}
