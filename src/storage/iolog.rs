//! A fault-injecting storage layer: a SQLite VFS *shim* that sits on top of
//! the real VFS (the OS files natively, OPFS "sahpool" in the browser),
//! counts every operation that changes storage, and can stop the world at
//! operation *k*.
//!
//! Counted operations: open, write, sync (flush), truncate and delete, on
//! the database, its journal and its WAL, each logged with file, offset and
//! length. Reads, locks and size queries pass through uncounted: they
//! change nothing that could survive a crash.
//!
//! "Crash at k" lets k operations through; when operation k+1 arrives, the
//! shim calls the crash hook, which never returns: natively the process
//! exits on the spot (the crash lab runs each try in a child process), in
//! the browser the worker tells the page and waits to be terminated. So
//! nothing after operation k reaches storage — exactly what a killed process
//! leaves behind.
//!
//! The **control** variant (`BROKEN_VFS_NAME`) makes
//! `xCheckReservedLock` always answer "another connection holds RESERVED",
//! which is how sahpool behaved before sqlite-wasm-vfs 0.3: SQLite then
//! believes a hot journal belongs to a live writer and skips the rollback.
//! A crash lab that cannot catch that bug proves nothing.
//!
//! Invariant: with no crash point set, the shim changes no behaviour — every
//! call is forwarded to the real VFS unchanged (the control variant's
//! `xCheckReservedLock` excepted).

use std::ffi::c_int;
use std::sync::Mutex;

use rusqlite::ffi;
use serde::Serialize;

use super::coalesce::{self, Variant};
use super::{Call, File, FileKind, Op, Shim};
use crate::core::error::Error;

/// The shim's VFS name: open a database with `?vfs=iolog` or
/// [`db::open`](crate::core::db::open) on `file:NAME?vfs=iolog`.
const VFS_NAME: &str = "iolog";
/// The control variant's VFS name.
const BROKEN_VFS_NAME: &str = "iolog-broken-lock";

/// The stack the page runs on, counted: write coalescing
/// ([`coalesce`]) on top of this shim. What the lab counts
/// and crashes at is what coalescing lets through to storage; bytes it
/// still holds back die with the process, as they would in the page.
pub const COALESCED_VFS_NAME: &str = "iolog-coalesced";
/// Coalescing on top of the broken lock check (the lock control's recovery).
pub const COALESCED_BROKEN_LOCK_VFS_NAME: &str = "iolog-broken-lock-coalesced";
/// The coalescing control: `Variant::HoldsCommits` on top of this shim.
pub const HOLDING_VFS_NAME: &str = "iolog-coalesced-holding-commits";

/// One counted operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IoOp {
    /// 1-based position in the log.
    pub k: usize,
    pub file: FileKind,
    /// One of the operations that change storage: open, write, sync,
    /// truncate, delete.
    pub op: Op,
    pub offset: i64,
    pub len: i64,
}

/// Called instead of operation k+1. Must not return.
type CrashHook = fn(&IoOp) -> !;

struct State {
    log: Vec<IoOp>,
    crash_after: Option<usize>,
    hook: Option<CrashHook>,
}

static STATE: Mutex<State> = Mutex::new(State {
    log: Vec::new(),
    crash_after: None,
    hook: None,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    // A poisoned lock only means a panic elsewhere; the log is still usable.
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Registers both shims on top of the current default VFS, and the three
/// coalesced stacks on top of them. Idempotent.
///
/// # Errors
/// [`Error::Storage`] if there is no default VFS or registration fails.
pub fn install() -> Result<(), Error> {
    super::register(VFS_NAME, CrashLab { broken_lock: false }, false)?;
    super::register(BROKEN_VFS_NAME, CrashLab { broken_lock: true }, false)?;
    coalesce::install_on(COALESCED_VFS_NAME, VFS_NAME, Variant::Correct)?;
    coalesce::install_on(
        COALESCED_BROKEN_LOCK_VFS_NAME,
        BROKEN_VFS_NAME,
        Variant::Correct,
    )?;
    coalesce::install_on(HOLDING_VFS_NAME, VFS_NAME, Variant::HoldsCommits)
}

/// Starts a fresh log. `crash_after = Some(k)`: let k operations through,
/// then call `hook` instead of operation k+1.
pub fn arm(crash_after: Option<usize>, hook: CrashHook) {
    let mut s = state();
    s.log.clear();
    s.crash_after = crash_after;
    s.hook = Some(hook);
}

/// Stops crashing and returns the log so far.
pub fn disarm() -> Vec<IoOp> {
    let mut s = state();
    s.crash_after = None;
    s.hook = None;
    std::mem::take(&mut s.log)
}

/// The shim: counts (and may crash) before the call, then passes it on.
struct CrashLab {
    /// The control variant.
    broken_lock: bool,
}

impl Shim for CrashLab {
    fn around(&self, call: Call, forward: impl FnOnce() -> c_int) -> c_int {
        if matches!(
            call.op,
            Op::Open | Op::Write | Op::Sync | Op::Truncate | Op::Delete
        ) {
            record(call);
        }
        forward()
    }

    fn check_reserved_lock(&self, file: &File, held: &mut c_int) -> c_int {
        if self.broken_lock {
            // The control's bug: "someone else is writing" — always.
            *held = 1;
            return ffi::SQLITE_OK;
        }
        file.check_reserved_lock(held)
    }
}

/// Counts one operation; crashes instead of it when its time has come.
fn record(call: Call) {
    let (crash, hook, entry) = {
        let mut s = state();
        let entry = IoOp {
            k: s.log.len() + 1,
            file: call.file,
            op: call.op,
            offset: call.offset,
            len: call.len,
        };
        let crash = s.crash_after.is_some_and(|after| entry.k > after);
        if !crash {
            s.log.push(entry.clone());
        }
        (crash, s.hook, entry)
    };
    if crash {
        if let Some(hook) = hook {
            hook(&entry); // never returns
        }
    }
}
