//! The core: an idempotent delivery — a unique key and one transaction —
//! and what it needs around it. It names no lab: the race lab, the crash
//! lab, the scheme-ends lab, the tools (`crate::labs`) and the benchmark
//! (`bench/`) are built on it, never the other way round. It compiles and its tests
//! pass without them (`cargo test --no-default-features`).
//!
//! Its public face is re-exported here (and at the crate root): [`Event`],
//! [`apply()`] and [`Delivery`] (with the [`Trace`] of what ran), [`Outcome`] and [`Receipt`], [`Error`],
//! [`Fault`], [`Tables`]. The modules stay public because a learner reads
//! them by path: the transaction's SQL is `core::apply::SQL_CREDIT`, the
//! tables are created by `core::schema::init`. Helpers are `pub(crate)`.
//!
//! Deliberately absent: any lab's vocabulary. A lab names its own input
//! fields ([`Field::new`]), its own refusal codes (`code_enum!`, under
//! `invalid_input`) and its own crash points (an
//! [`Error::SimulatedCrash`] carries only the point's name). The one
//! exception is the database itself: its migrations (and so the reading of
//! its stored rows) cover every table, the scheme-ends lab's included,
//! because there is one database and migrations are append-only.

pub mod apply;
pub mod db;
pub mod error;
pub mod event;
pub mod fault;
pub mod health;
pub(crate) mod named;
pub mod outcome;
pub mod schema;
pub mod source;
pub(crate) mod stored;
pub mod tables;
pub mod trace;

pub use apply::{apply, apply_traced, Delivery, Progress, Step};
pub use error::{Error, ErrorReport};
pub use event::{Event, Field};
pub use fault::Fault;
pub use outcome::{Outcome, Receipt};
pub use tables::Tables;
pub use trace::{Effect, Ran, Trace};
