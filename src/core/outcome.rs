//! What a successful delivery answers: applied, or a confirmed duplicate.
//!
//! Both are HTTP 200 and both carry the same [`Receipt`]: the result of the
//! *first* application, stored in the inbox row in the same transaction as
//! the credit. A sender that lost the first response and retries gets back
//! exactly what it would have heard the first time (the article's third
//! exercise).

use serde::Serialize;

/// The stored result of the first application of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Receipt {
    /// Receipt number: strictly increasing across the database, never reused.
    pub seq: i64,
    /// The account's balance right after this event's credit.
    pub balance_after: i64,
}

/// A successful delivery. Not an error: a duplicate is an expected answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// First delivery of this `(source, event_id)`: the inbox row, the credit
    /// and the receipt were committed together.
    Applied(Receipt),
    /// The event was applied before with the same payload; nothing changed.
    /// The receipt is the stored one from the first application.
    Duplicate(Receipt),
}

impl Outcome {
    /// `"applied"` or `"duplicate"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Applied(_) => "applied",
            Outcome::Duplicate(_) => "duplicate",
        }
    }

    /// Always 200: a duplicate is a success for the sender ("stop retrying").
    pub fn http_status(&self) -> u16 {
        200
    }

    pub fn receipt(&self) -> Receipt {
        match self {
            Outcome::Applied(r) | Outcome::Duplicate(r) => *r,
        }
    }
}

/// Wire form: `{"outcome":"applied","http_status":200,"receipt":{...}}`.
impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire {
            outcome: &'static str,
            http_status: u16,
            receipt: Receipt,
        }
        Wire {
            outcome: self.kind(),
            http_status: self.http_status(),
            receipt: self.receipt(),
        }
        .serialize(s)
    }
}
