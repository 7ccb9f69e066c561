//! A handler written in Rust, on the same step machine as a handler text
//! and the built-ins: the workshop's (`workshop/handler.rs`, feature
//! `workshop`, see [`crate::labs::handlers::workshop`]).
//!
//! A [`StepHandler`] is a step program: at each step it names the one SQL
//! statement to run next (and the step to continue at), or the answer. The
//! runner ([`super::Script`]) runs that statement, records it in the trace,
//! and calls [`StepHandler::next`] again with what it did ([`Last`]). So
//! the race explorer can stop a delivery between any two statements, the
//! judge can kill it there, and a lock it cannot have keeps the same
//! statement next — exactly as for the built-ins and handler texts.
//!
//! Invariants: a text's (the runner's and the parser's): every statement
//! passes a text line's checks before it runs, and a refused one ends the
//! delivery with the reason; nothing is added implicitly; answering with
//! the transaction open is a failure.

use std::fmt;

use rusqlite::types::Value;

pub use super::parse::AnswerKind;
pub use crate::core::event::Event;

/// A handler as a step program.
pub trait StepHandler: Sync {
    /// The name it is judged and listed by: `"workshop"` unless it says
    /// otherwise.
    fn name(&self) -> &'static str {
        crate::labs::handlers::workshop::NAME
    }

    /// What the delivery of `event` does at `step` (0 at the start; then
    /// the step the previous [`Next::Sql`] named), after the previous
    /// statement did `last` (nothing at the start, and after a `ROLLBACK`).
    fn next(&self, step: u32, last: &Last, event: &Event) -> Next;

    /// What a delivery answers when it waited past the lock timeout;
    /// `None` (the default): busy, 503 — the sender retries later.
    fn on_busy(&self) -> Option<AnswerKind> {
        None
    }
}

impl fmt::Debug for dyn StepHandler + '_ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StepHandler({})", self.name())
    }
}

/// What a [`StepHandler`] does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run this one statement, then continue at step `then`.
    Sql { sql: &'static str, then: u32 },
    /// End the delivery with this answer (its transaction must be closed).
    Answer(AnswerKind),
}

impl Next {
    pub const fn sql(sql: &'static str, then: u32) -> Next {
        Next::Sql { sql, then }
    }
}

/// What the last statement did: the rows it changed, and the first row it
/// returned (by column name).
#[derive(Debug, Clone, Default)]
pub struct Last {
    pub(super) changed: i64,
    pub(super) row: Option<Vec<(String, Value)>>,
}

impl Last {
    /// The rows it inserted, updated or deleted (0 for a read).
    pub fn changed(&self) -> i64 {
        self.changed
    }

    /// Whether it returned a row (a `SELECT`, or `... RETURNING`).
    pub fn has_row(&self) -> bool {
        self.row.is_some()
    }

    /// A column of the returned row, if it is there and an integer.
    pub fn int(&self, column: &str) -> Option<i64> {
        match self.value(column) {
            Some(Value::Integer(i)) => Some(*i),
            _ => None,
        }
    }

    /// A column of the returned row, if it is there and text.
    pub fn text(&self, column: &str) -> Option<&str> {
        match self.value(column) {
            Some(Value::Text(t)) => Some(t),
            _ => None,
        }
    }

    pub(super) fn value(&self, column: &str) -> Option<&Value> {
        self.row
            .as_ref()?
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(column))
            .map(|(_, v)| v)
    }
}
