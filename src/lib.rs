//! # inbox-lab
//!
//! A sender delivers "credit account A with N units" events. Responses get
//! lost and senders retry, so one event can arrive twice — or twenty times at
//! once. The fix this crate teaches is small and exact: a unique key
//! `(source, event_id)` in an `inbox` table, and registering the event plus
//! changing the balance in **one** SQLite transaction.
//!
//! ## A tour, in reading order
//!
//! * [`event`] — the validated [`Event`]: every input rule, checked once,
//!   before any SQL.
//! * [`schema`] — the tables, the schema version, and the per-connection
//!   setup (`PRAGMA foreign_keys = ON`).
//! * [`apply`](mod@apply) — **start here for the idea**: the transaction
//!   that makes a delivery idempotent, written as steps so the page can run
//!   it one statement at a time.
//! * [`outcome`] — what success looks like: [`Outcome::Applied`] or
//!   [`Outcome::Duplicate`], both carrying the stored [`Receipt`].
//! * [`error`] — what failure looks like: one [`Error`] enum with an HTTP
//!   status and "should the sender retry?" for each kind.
//! * [`fault`] — fault points that make the handler fail on purpose.
//! * [`handlers`] — the mistakes the article warns about, runnable, next to
//!   the atomic handler.
//! * [`race`] — the race lab: deliveries interleaved statement by statement
//!   on real connections, and an explorer of every schedule.
//! * [`storage`] — VFS shims on one base: [`storage::iolog`] logs every
//!   storage operation and can crash the process at any one of them (the
//!   crash lab); the benchmark's timing and write-coalescing shims.
//! * [`crashlab`] — crash at every storage operation, recover, check atomicity.
//! * Where the scheme ends: [`outbox`] (side effects and the transactional
//!   outbox), [`business`] (a business key for one operation described by
//!   several events), [`retention`] (purging the inbox makes old events new).
//! * [`db`] — opening a connection (a file natively, OPFS in the browser).
//! * [`tables`] — a consistent snapshot of both tables for display.
//! * [`console`] — the read-only SQL console, guarded by SQLite's own checks.
//! * [`scenario`] — the article's scenario as a list of checks.
//! * [`transfer`] — export the database; import a file by rebuilding its rows
//!   in a fresh database (the file's schema is never adopted).
//! * [`health`] — is a stored database one this build can use? (checked
//!   before the page trusts it).
//! * [`budget`] — a step and time budget for SQL nobody here wrote (console
//!   queries, imported files).
//! * [`bench`] — the benchmark's settings and runs (`cargo xtask bench`; not
//!   used by the page's handler).
//! * `cli` (native only) — the `inbox-lab` command line.
//! * `wasm` (wasm only) — the thin facade the browser worker calls.
//!
//! The same code runs natively (rusqlite with bundled SQLite) and in the
//! browser (rusqlite over `sqlite-wasm-rs`, stored in OPFS).

pub mod apply;
pub mod bench;
pub mod budget;
pub mod business;
pub mod console;
pub mod crashlab;
pub mod db;
pub mod error;
pub mod event;
pub mod fault;
pub mod handlers;
pub mod health;
pub mod outbox;
pub mod outcome;
pub mod race;
pub mod retention;
pub mod scenario;
pub mod schema;
pub mod storage;
pub mod tables;
pub mod transfer;

#[cfg(not(target_family = "wasm"))]
pub mod cli;
#[cfg(target_family = "wasm")]
pub mod wasm;

pub use apply::{apply, Delivery, Progress, Step};
pub use error::{Error, ErrorReport};
pub use event::{Event, Field};
pub use fault::Fault;
pub use outcome::{Outcome, Receipt};
pub use tables::Tables;

// Unit tests compiled to wasm run in a dedicated worker, like the database.
#[cfg(all(test, target_family = "wasm"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_dedicated_worker);
