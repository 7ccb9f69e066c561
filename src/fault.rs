//! Fault points: places where a teaching run can make the handler fail on
//! purpose, inside the open transaction.
//!
//! Invariant: a fault fires *before* `COMMIT`, so the transaction rolls back
//! and nothing of the delivery survives: no inbox row, no credit, no receipt.
//! A retry of the same event then applies normally.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a simulated crash fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// After the inbox row is inserted, before the balance is touched — the
    /// article's `fail_after_insert`.
    AfterInsert,
    /// After the balance and the receipt are written, just before `COMMIT`.
    AfterUpdate,
    /// Thrown by the reader in step mode, wherever the delivery stands. Not
    /// a fault point a delivery can ask for, so not in [`Fault::ALL`].
    StepThrow,
    /// Side-effect lab ([`crate::outbox`]): the notification was sent, then
    /// the transaction failed before `COMMIT`.
    AfterSendBeforeCommit,
    /// Side-effect lab: the credit committed, then the handler died before
    /// sending the notification.
    AfterCommitBeforeSend,
    /// Outbox dispatcher: the message was sent, then the dispatcher died
    /// before marking it sent.
    AfterSendBeforeMark,
}

impl Fault {
    /// Every fault point a delivery can ask for, in the order it reaches them.
    pub const ALL: [Fault; 2] = [Fault::AfterInsert, Fault::AfterUpdate];

    /// The stable name used by the CLI, the worker protocol and the page.
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::AfterInsert => "after_insert",
            Fault::AfterUpdate => "after_update",
            Fault::StepThrow => "step_throw",
            Fault::AfterSendBeforeCommit => "after_send_before_commit",
            Fault::AfterCommitBeforeSend => "after_commit_before_send",
            Fault::AfterSendBeforeMark => "after_send_before_mark",
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
