//! The crash lab: kill the handler at every storage operation of a commit,
//! reopen, and prove the recovery is atomic.
//!
//! One *try* runs a workload — [`workload()`]: one apply, or a burst of
//! several — through the [`iolog`](crate::storage::iolog) shim armed to
//! crash after k operations. The process (natively) or the worker (in the
//! browser) dies right there. A fresh connection then reopens the database,
//! letting SQLite recover it, and [`classify()`] checks:
//! * `PRAGMA integrity_check` is `ok`;
//! * the state is exactly "before" or "after" each event: an inbox row
//!   exists **if and only if** its credit does (amounts are distinct powers
//!   of two, so the balance says exactly which events were credited);
//! * no event whose success was acknowledged to the sender is missing.
//!
//! Invariant: the checks only read. A try's verdict never depends on how
//! the database was written, only on what survived.
//!
//! Four parts: [`workload`](mod@workload) (what runs under the crash
//! point), [`classify`](mod@classify) (the verdict on what survived),
//! [`sweep`] (a row per crash point, and the summary) and [`stream`] (the
//! browser's random-kill stream: its events and its verdict). The sweep's
//! drivers are the CLI natively (a child process per try, `crate::cli`)
//! and the crash worker in the browser (`crate::wasm`), which only passes
//! these verdicts on.

pub mod classify;
pub mod stream;
pub mod sweep;
pub mod workload;

pub use classify::{
    classify, classify_dispatch, integrity, Delivered, Recovered, Recovery, Verdict,
};
pub use stream::StreamCheck;
pub use sweep::{Control, Row, Summary};
pub use workload::{configure, events, workload, JournalMode, Workload};
