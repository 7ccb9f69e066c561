//! Where the scheme ends: what a unique key and one transaction cannot do
//! alone, each runnable.
//!
//! * [`outbox`] — side effects: send before or after `COMMIT`, or the
//!   transactional outbox with an at-least-once dispatcher; its own crash
//!   points ([`outbox::Crash`]).
//! * [`business`] — a business key for one operation described by several
//!   events; its own refusal code.
//! * [`retention`] — a simulated clock and a batched purge that makes old
//!   events new again; its own refusal codes.
//! * [`story`] — what the page's experiments did since their receiver
//!   started, and the verdicts drawn from it.
//!
//! Their tables (`outbox`, `orders`, `order_events`, `lab_clock`) came with
//! schema version 2, in the core's migrations: there is one database.

pub mod business;
pub mod outbox;
pub mod retention;
pub mod story;
