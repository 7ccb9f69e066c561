//! Write your own handler: a small line-oriented language for a webhook
//! handler, and a judge that runs everything the lab knows against it.
//!
//! ```text
//! BEGIN IMMEDIATE
//! INSERT INTO inbox(source, event_id, account_id, amount)
//!   VALUES (:source, :event_id, :account_id, :amount) ON CONFLICT(source, event_id) DO NOTHING
//! IF CHANGED = 0
//!   ...
//! END
//! ...
//! COMMIT
//! ANSWER applied
//! ```
//!
//! (In a handler every statement is on one line.) The language is
//! documented in `docs/handler-language.md`.
//!
//! * [`parse`] — text → a checked [`Program`], or a [`ParseError`] naming
//!   line and column, in English and Russian ([`message`]);
//! * [`Script`] — one delivery of a program, on the same step machine as
//!   the built-in handlers (`Run::Script`), so step mode, the race lab and
//!   the timeline take it unchanged;
//! * [`judge`](mod@judge) — the cases, the faults, the race (and the crash
//!   sweep its caller runs), counted, over the events of a seed
//!   ([`sample`]);
//! * [`builtin`] — the six built-in handlers as texts (`builtin/*.inbox`),
//!   checked equal to their Rust versions by the tests;
//! * [`rust`] — a handler written in Rust as a step program
//!   ([`rust::StepHandler`], the workshop's), run by the same [`Script`].
//!
//! Invariant: a handler text runs only after it parsed and passed every
//! check, only on scratch connections, and under a budget.

pub mod judge;
pub mod message;
mod parse;
mod run;
pub mod rust;
pub mod sample;
// Natively: they judge on scratch files.
#[cfg(all(test, not(target_family = "wasm")))]
mod tests;

pub use message::{Lang, ParseError, ScriptCode};
pub use parse::{parse, Literals, Program, MAX_LINE_BYTES, MAX_STATEMENTS, MAX_TEXT_BYTES};
pub use run::Script;

use crate::labs::race::handlers::Handler;

/// The text of a built-in handler.
pub fn builtin(handler: Handler) -> &'static str {
    match handler {
        Handler::Atomic => include_str!("builtin/atomic.inbox"),
        Handler::NoDedup => include_str!("builtin/no_dedup.inbox"),
        Handler::CheckThenAct => include_str!("builtin/check_then_act.inbox"),
        Handler::TwoTransactions => include_str!("builtin/two_transactions.inbox"),
        Handler::InsertOrIgnore => include_str!("builtin/insert_or_ignore.inbox"),
        Handler::InsertOrReplace => include_str!("builtin/insert_or_replace.inbox"),
    }
}
