//! A profiling VFS shim for the benchmark: it sits on top of the real VFS
//! (OS files natively, OPFS "sahpool" in the browser), forwards every call
//! unchanged, and counts and times the ones that touch storage — open,
//! read, write, sync, truncate, size, close, delete — per file (database,
//! journal, WAL).
//!
//! It answers "where does a commit's time go?": with `synchronous = FULL`
//! most of it is `sync` (natively `fdatasync`, in the browser
//! `FileSystemSyncAccessHandle.flush()`); with NORMAL it is the engine.
//! The benchmark runs a separate, shorter pass through this shim, so its
//! own cost (two clock reads per call) never shows in the throughput
//! figures.
//!
//! In the browser the clock is `performance.now()` (given by the facade with
//! [`set_clock`]), which outside a cross-origin-isolated page moves in steps
//! of 0.1 ms: single calls below
//! that read as 0 or 0.1 ms, but totals over thousands of calls are fair.
//! Time the VFS spends inside its own housekeeping (sahpool flushes a slot's
//! header when it creates or deletes a journal) is counted under the
//! SQLite call that caused it: `open` and `delete` of the journal.

use std::collections::BTreeMap;
use std::ffi::c_int;
use std::sync::Mutex;

use serde::Serialize;

use inbox_lab::core::error::Error;
use inbox_lab::storage::{Call, FileKind, Op, Shim};

/// The shim's VFS name: open `file:NAME?vfs=bench-timing`.
pub const VFS_NAME: &str = "bench-timing";

/// Calls of one operation on one file: how many and how long in all.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Row {
    pub file: FileKind,
    /// One of the eight operations that touch a file: open, read, write,
    /// sync, truncate, size, close, delete.
    pub op: Op,
    pub calls: u64,
    pub total_ms: f64,
}

static TOTALS: Mutex<BTreeMap<(FileKind, Op), (u64, f64)>> = Mutex::new(BTreeMap::new());

fn totals() -> std::sync::MutexGuard<'static, BTreeMap<(FileKind, Op), (u64, f64)>> {
    TOTALS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Forgets everything counted so far.
pub fn reset() {
    totals().clear();
}

/// Everything counted since the last [`reset`], by file then operation.
pub fn rows() -> Vec<Row> {
    totals()
        .iter()
        .map(|(&(file, op), &(calls, total_ms))| Row {
            file,
            op,
            calls,
            total_ms,
        })
        .collect()
}

/// Runs `call` and adds its duration to `(file, op)`.
fn timed<T>(file: FileKind, op: Op, call: impl FnOnce() -> T) -> T {
    let start = now_ms();
    let out = call();
    let spent = now_ms() - start;
    let mut t = totals();
    let entry = t.entry((file, op)).or_insert((0, 0.0));
    entry.0 += 1;
    entry.1 += spent;
    out
}

/// The clock the shim reads, in milliseconds from an arbitrary start; set
/// once with [`set_clock`].
static CLOCK: std::sync::OnceLock<fn() -> f64> = std::sync::OnceLock::new();

/// Gives the shim its clock. In the browser the facade (`wasm::Bench`) passes
/// `performance.now()`, since only `wasm.rs` talks to JavaScript;
/// natively the default is a monotonic `Instant`. The first clock set stays.
pub fn set_clock(clock: fn() -> f64) {
    let _ = CLOCK.set(clock);
}

/// Milliseconds from an arbitrary start, on the clock of [`set_clock`].
pub fn now_ms() -> f64 {
    match CLOCK.get() {
        Some(clock) => clock(),
        None => default_clock(),
    }
}

#[cfg(not(target_family = "wasm"))]
fn default_clock() -> f64 {
    use std::time::Instant;
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0
}

/// No clock of its own in wasm32-unknown-unknown (`Instant` panics there):
/// until one is set every duration reads 0, and only the calls are counted.
#[cfg(target_family = "wasm")]
fn default_clock() -> f64 {
    0.0
}

/// Registers the shim on top of the current default VFS. Idempotent; install
/// it after the real VFS became the default (in the browser: after the OPFS
/// pool).
///
/// # Errors
/// [`Error::Storage`] if there is no default VFS or registration fails.
pub fn install() -> Result<(), Error> {
    inbox_lab::storage::register(VFS_NAME, Timing, false)
}

/// The shim: times the calls that touch a file, passes the rest on as they
/// are (locks, file controls, existence checks: bookkeeping, not storage).
struct Timing;

impl Shim for Timing {
    fn around(&self, call: Call, forward: impl FnOnce() -> c_int) -> c_int {
        match call.op {
            Op::Open
            | Op::Read
            | Op::Write
            | Op::Sync
            | Op::Truncate
            | Op::Size
            | Op::Close
            | Op::Delete => timed(call.file, call.op, forward),
            Op::Access | Op::Lock | Op::Unlock | Op::CheckReservedLock | Op::FileControl => {
                forward()
            }
        }
    }
}
