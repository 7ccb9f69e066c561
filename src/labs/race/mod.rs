//! The race lab: several deliveries of one event by any handler
//! ([`crate::labs::handlers`]) raced statement by statement on real
//! connections ([`Race`], [`explore`]).
//!
//! Invariant: for the atomic handler (the core's [`crate::core::apply()`])
//! every schedule is correct; the tests and `inbox-lab race` hold it to that.

mod explorer;

pub use explorer::{
    explore, explore_event, race_payload, replay, replay_event, Arena, Committed, Race, StepLog,
    StepResult, Summary, Verdict, DELIVERIES, MAX_DELIVERIES,
};
