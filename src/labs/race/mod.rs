//! The race lab: the mistakes the article warns about, as real handlers
//! ([`handlers`]), and several deliveries of one event raced statement by
//! statement on real connections ([`Race`], [`explore`]).
//!
//! Invariant: for [`Handler::Atomic`] (the core's [`crate::core::apply`])
//! every schedule is correct; the mistakes live here and nowhere else.

mod explorer;
pub mod handlers;

pub use explorer::{
    explore, explore_event, race_payload, replay, replay_event, Arena, Committed, Race, StepLog,
    StepResult, Summary, Verdict, DELIVERIES, MAX_DELIVERIES,
};
pub use handlers::{Answer, Handler, Payload, HANDLER};
