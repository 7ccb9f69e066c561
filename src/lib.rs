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
//! The folders are the architecture:
//!
//! * [`core`](mod@crate::core) — the idea and nothing else; it names no lab.
//!   * [`core::event`] — the validated [`Event`]: every input rule, checked
//!     once, before any SQL.
//!   * [`core::schema`] — the tables, the schema version, and the
//!     per-connection setup (`PRAGMA foreign_keys = ON`).
//!   * [`core::apply`](mod@crate::core::apply) — **start here for the idea**: the transaction that
//!     makes a delivery idempotent, written as steps so the page can run it
//!     one step (one statement; the receipt's two) at a time.
//!   * [`core::source`] — `apply.rs` itself, embedded at build time, and
//!     the lines of each step in it (step mode shows them as they run).
//!   * [`core::trace`] — what a delivery did: every step it ran and what
//!     became of it (kept, rolled back, failed, crashed), which the page draws.
//!   * [`core::outcome`] — what success looks like: [`Outcome::Applied`] or
//!     [`Outcome::Duplicate`], both carrying the stored [`Receipt`].
//!   * [`core::error`] — what failure looks like: one [`Error`] enum with an
//!     HTTP status and "should the sender retry?" for each kind.
//!   * [`core::fault`] — the handler's two fault points, to make it fail on
//!     purpose.
//!   * [`core::db`] — opening a connection (a file natively, OPFS in the
//!     browser).
//!   * [`core::tables`] — a consistent snapshot of both tables for display.
//!   * [`core::health`] — is a stored database one this build can use?
//! * [`storage`] — SQLite VFS shims on one base (the crash lab's I/O log
//!   and write coalescing; the benchmark, `bench/`, adds its timing shim).
//! * `labs` (feature `labs`, on by default) — what the page builds on the
//!   core: the race lab (the article's mistakes, raced), the crash lab,
//!   where the scheme ends (outbox, business keys, retention), the tools
//!   (console, import/export, the article's scenario, query budgets).
//! * `cli` (native, `labs`) — the `inbox-lab` command line.
//! * `wasm` (wasm32, `labs`) — the thin facade the browser workers call;
//!   the only code that knows `JsValue`.
//!
//! The same code runs natively (rusqlite with bundled SQLite) and in the
//! browser (rusqlite over `sqlite-wasm-rs`, stored in OPFS).
//!
//! `cargo test --no-default-features` builds and tests the core (and the
//! storage shim base) alone.

pub mod core;
pub mod storage;

#[cfg(feature = "labs")]
pub mod labs;

#[cfg(all(not(target_family = "wasm"), feature = "labs"))]
pub mod cli;
#[cfg(all(target_family = "wasm", feature = "labs"))]
pub mod wasm;

pub use crate::core::{
    apply, apply_traced, Delivery, Effect, Error, ErrorReport, Event, Fault, Field, Outcome,
    Progress, Ran, Receipt, Step, Tables, Trace,
};

// Unit tests compiled to wasm run in a dedicated worker, like the database.
#[cfg(all(test, target_family = "wasm"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_dedicated_worker);
