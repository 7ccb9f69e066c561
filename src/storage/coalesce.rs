//! A write-coalescing VFS shim: runs of writes to adjacent bytes of one file
//! reach storage as **one** write.
//!
//! Why: in the browser each `FileSystemSyncAccessHandle.write()` costs tens of
//! microseconds whatever its size (measured in headless Chromium: ~20–60 µs
//! for 24 bytes or 8 KiB alike, against ~3 µs for a native `pwrite`), and
//! SQLite writes a commit as many small pieces: in WAL mode a 24-byte frame
//! header and then the page, for every page; in a rollback journal a page
//! number, the page and a checksum, for every page. Merging them cuts a
//! commit's write calls from 12–30 to a few.
//!
//! ## What stays exactly the same
//!
//! * **Order.** At most one file has bytes waiting, and *every* other call —
//!   a write elsewhere, a read, a sync, a truncate, a size query, a lock, a
//!   file control, open, close, delete — first writes them out. So storage
//!   sees the same operations in the same order as without the shim; the
//!   only difference is that writes k, k+1, … that were adjacent, to one
//!   file, with nothing in between, arrive as one write. A crash between
//!   two of them is the same as a crash in the middle of the merged write,
//!   which storage may tear anyway and SQLite is built to survive.
//! * **Nothing waits past a commit.** SQLite sends `COMMIT_PHASETWO` (a file
//!   control, hence a flush) before a commit returns, in every journal mode.
//!   In WAL mode, the write that completes a *commit frame* (a frame header
//!   whose "database size after commit" field is not zero) is written out on
//!   the spot, so if it fails, SQLite hears it from that very write, before
//!   it publishes the commit in its WAL index.
//! * **Errors.** A write that fails while being flushed is reported by the
//!   call that flushed it (as `SQLITE_IOERR_WRITE`): SQLite then fails and
//!   rolls back the transaction, as it would have had the write itself
//!   failed.
//!
//! Pending bytes are capped (`MAX_PENDING`); a longer run is written in
//! pieces of at most that size.
//!
//! ## Proven by the crash lab, with a control
//!
//! The page runs on this shim (`wasm::install_opfs` makes it the default
//! VFS over the OPFS pool), and so does the crash lab: its counting shim
//! sits *under* coalescing (`iolog::COALESCED_VFS_NAME`), so every crash
//! point is a moment between two operations that really reached storage,
//! and bytes still held back die with the process. The control,
//! `Variant::HoldsCommits`, is the bug this design avoids: it writes out
//! only before a read, a write elsewhere, open, close, delete or truncate —
//! not before a sync, a lock or a file control, and not at a WAL commit
//! frame — so a commit can return (and be acknowledged) while its last
//! bytes wait in memory. In WAL mode the sweep catches it: the crash after
//! the acknowledgement loses the commit. (In DELETE mode the journal's
//! deletion writes the pending bytes out first, so a killed process cannot
//! tell; only a power cut could, which the lab does not simulate.)

use std::ffi::c_int;
use std::sync::Mutex;

use rusqlite::ffi;

use super::{Call, File, FileKind, Op, Shim};
use crate::core::error::Error;

/// The shim's VFS name: open `file:NAME?vfs=coalesce`.
pub const VFS_NAME: &str = "coalesce";

/// Most bytes held back before they are written out anyway.
const MAX_PENDING: usize = 1 << 20;

/// The one run of bytes waiting to be written, if any.
struct Pending {
    /// The file it belongs to (a `*const File`, as an address).
    file: usize,
    offset: i64,
    bytes: Vec<u8>,
    /// The last write was a WAL commit frame's header: the next write (its
    /// page) ends the commit, and is written out at once.
    commit_frame_next: bool,
}

/// Counters since the last [`take_stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Writes SQLite asked for.
    pub writes_in: u64,
    /// Writes that reached the real VFS.
    pub writes_out: u64,
}

struct State {
    pending: Option<Pending>,
    /// The buffer of the last flushed run, kept to be reused.
    spare: Vec<u8>,
    stats: Stats,
}

// One lock for every call through the shim: the "at most one file has bytes
// waiting" rule is global, so calls must not interleave. In the browser there
// is one thread; natively, tests may open connections on several.
static STATE: Mutex<State> = Mutex::new(State {
    pending: None,
    spare: Vec::new(),
    stats: Stats {
        writes_in: 0,
        writes_out: 0,
    },
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Returns the counters and starts new ones.
pub fn take_stats() -> Stats {
    std::mem::take(&mut state().stats)
}

/// Writes out whatever is waiting. Returns SQLite's code.
///
/// # Safety
/// The pending file must still be open (guaranteed: a file's `xClose`
/// flushes before closing).
unsafe fn flush(s: &mut State) -> c_int {
    let Some(p) = s.pending.take() else {
        return ffi::SQLITE_OK;
    };
    let file = &*(p.file as *const File);
    s.stats.writes_out += 1;
    let rc = file.write(&p.bytes, p.offset);
    let mut bytes = p.bytes;
    bytes.clear();
    s.spare = bytes;
    match rc {
        ffi::SQLITE_OK => ffi::SQLITE_OK,
        // Keep SQLite's own code for a full disk; anything else is a write error.
        rc if rc & 0xff == ffi::SQLITE_FULL => rc,
        _ => ffi::SQLITE_IOERR_WRITE,
    }
}

/// Flushes, then runs `call` unless the flush failed.
fn flushed(call: impl FnOnce() -> c_int) -> c_int {
    let mut s = state();
    // SAFETY: see `flush`.
    let rc = unsafe { flush(&mut s) };
    if rc != ffi::SQLITE_OK {
        return rc;
    }
    // `s` stays locked through `call`: no other call slips in between.
    call()
}

/// Registers the shim on top of the current default VFS, and makes it the
/// default if `make_default`. Idempotent. In the browser, install it after
/// the OPFS pool became the default.
///
/// # Errors
/// [`Error::Storage`] if there is no default VFS or registration fails.
pub fn install(make_default: bool) -> Result<(), Error> {
    super::register(VFS_NAME, Coalesce(Variant::Correct), make_default)
}

/// Registers the page's write coalescing as `name` on top of the VFS named
/// `base` instead of the default one: the benchmark puts it over its timing
/// shim, so the storage calls it times are the ones the page makes.
/// Idempotent.
///
/// # Errors
/// [`Error::Storage`] if `base` is not registered or registration fails.
#[cfg(feature = "labs")]
pub fn install_over(name: &str, base: &str) -> Result<(), Error> {
    install_on(name, base, Variant::Correct)
}

/// Which coalescing: the real one, or the crash lab's control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Writes out before every call but a write, and at a WAL commit frame.
    Correct,
    /// The control (broken on purpose): lets syncs, locks and file controls
    /// pass with bytes still waiting, so a commit can return before its
    /// last bytes reached storage. The crash lab must catch it.
    HoldsCommits,
}

/// Registers the shim as `name` on top of the VFS named `base` (the crash
/// lab's counting shim; the benchmark's timing shim through `install_over`). Idempotent.
///
/// # Errors
/// [`Error::Storage`] if `base` is not registered or registration fails.
#[cfg(feature = "labs")]
pub(crate) fn install_on(name: &str, base: &str, variant: Variant) -> Result<(), Error> {
    super::register_on(name, Coalesce(variant), Some(base), false)
}

/// The shim: holds writes back, and writes them out before any other call.
struct Coalesce(Variant);

impl Shim for Coalesce {
    /// Every call but a write first writes out what is waiting — reads,
    /// syncs, locks, file controls (`COMMIT_PHASETWO` included), open,
    /// close, delete, even an existence check. (The control skips syncs,
    /// locks and file controls.)
    fn around(&self, call: Call, forward: impl FnOnce() -> c_int) -> c_int {
        let holds = self.0 == Variant::HoldsCommits
            && matches!(
                call.op,
                Op::Sync | Op::Lock | Op::Unlock | Op::CheckReservedLock | Op::FileControl
            );
        if call.op == Op::Write || holds {
            forward()
        } else {
            flushed(forward)
        }
    }

    /// Adds `SQLITE_IOCAP_POWERSAFE_OVERWRITE`, as SQLite's own unix VFS
    /// says by default: a write changes no byte outside the ones written,
    /// even on power loss. The OPFS pool does not say it, so without this
    /// SQLite pads every WAL commit to a 4 KiB sector with a copy of its
    /// commit frame (8 KiB more to write and flush, and two more write
    /// calls per commit). Only a power cut tearing a sector could tell the
    /// difference; a killed worker cannot (the crash lab's sweeps and random
    /// kills run on this shim).
    fn device_characteristics(&self, real: c_int) -> c_int {
        real | ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
    }

    fn write(&self, file: &File, bytes: &[u8], off: i64) -> c_int {
        let me = file as *const File as usize;
        let wal = file.kind() == FileKind::Wal;
        let mut s = state();
        s.stats.writes_in += 1;
        // The previous write was a commit frame's header: this is its page.
        let commit_page = s
            .pending
            .as_ref()
            .is_some_and(|p| p.file == me && p.commit_frame_next);
        let appends = s.pending.as_ref().is_some_and(|p| {
            p.file == me
                && p.offset + p.bytes.len() as i64 == off
                && p.bytes.len() + bytes.len() <= MAX_PENDING
        });
        if !appends {
            // SAFETY: see `flush`.
            let rc = unsafe { flush(&mut s) };
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            let bytes = std::mem::take(&mut s.spare);
            s.pending = Some(Pending {
                file: me,
                offset: off,
                bytes,
                commit_frame_next: false,
            });
        }
        let Some(p) = s.pending.as_mut() else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        p.bytes.extend_from_slice(bytes);
        if commit_page && self.0 == Variant::Correct {
            // The commit is complete: write it out now, so that a failure is
            // this write's, heard before SQLite publishes the commit.
            // SAFETY: see `flush`.
            return unsafe { flush(&mut s) };
        }
        p.commit_frame_next = wal && is_commit_frame_header(bytes, off);
        ffi::SQLITE_OK
    }
}

/// A WAL frame header (24 bytes, after the 32-byte WAL header) whose bytes
/// 4..8, "size of the database in pages after the commit", are not zero:
/// the last frame of a commit. (SQLite's file format, section 4.1.)
fn is_commit_frame_header(bytes: &[u8], offset: i64) -> bool {
    bytes.len() == 24 && offset >= 32 && bytes[4..8] != [0, 0, 0, 0]
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;
    use crate::core::db::{self, Mode};
    use crate::core::schema;
    use crate::{apply, Event, Outcome};

    #[test]
    fn knows_a_commit_frame_header() {
        let mut header = [0u8; 24];
        header[3] = 2; // page 2
        assert!(!is_commit_frame_header(&header, 32), "not a commit");
        header[7] = 5; // 5 pages after the commit
        assert!(is_commit_frame_header(&header, 32 + 8216));
        assert!(!is_commit_frame_header(&header, 0), "the WAL header");
        assert!(
            !is_commit_frame_header(&header[..20], 32),
            "not a frame header"
        );
    }

    /// The benchmark's three durabilities (`bench/src/lib.rs`): a rollback
    /// journal, and WAL (exclusive, as through a shim) synced or not.
    const SETTINGS: [&str; 3] = [
        "PRAGMA journal_mode = delete; PRAGMA synchronous = full;",
        "PRAGMA locking_mode = exclusive; PRAGMA journal_mode = wal; PRAGMA synchronous = full;",
        "PRAGMA locking_mode = exclusive; PRAGMA journal_mode = wal; PRAGMA synchronous = normal;",
    ];

    fn open(path: &str, pragmas: &str) -> rusqlite::Connection {
        let timeout = std::time::Duration::from_millis(100);
        let mut conn = db::open_with(path, Mode::Create, timeout, |conn| {
            conn.execute_batch(pragmas)?;
            Ok(())
        })
        .unwrap();
        schema::init(&mut conn, &[1]).unwrap();
        conn
    }

    /// Through the shim, every setting runs the workload correctly, with far
    /// fewer writes reaching storage, and the files it leaves are the ones
    /// SQLite leaves without it (same tables, integrity ok after reopening).
    #[test]
    fn merges_writes_and_keeps_every_commit() {
        let dir = tempfile::tempdir().unwrap();
        install(false).unwrap();
        for (n, pragmas) in SETTINGS.into_iter().enumerate() {
            let path = dir.path().join(format!("{n}.sqlite3"));
            let path = path.to_str().unwrap();
            let conn = open(&format!("file:{path}?vfs={VFS_NAME}"), pragmas);
            take_stats();
            for i in 0..50 {
                let event = Event::new("bench", format!("evt-{i:08}"), 1, 1).unwrap();
                assert!(matches!(
                    apply(&conn, &event, None),
                    Ok(Outcome::Applied(_))
                ));
                // Nothing is left waiting once a commit has returned.
                assert!(state().pending.is_none(), "{pragmas}: bytes left waiting");
            }
            let stats = take_stats();
            assert!(
                stats.writes_out * 2 <= stats.writes_in,
                "{pragmas}: {stats:?}"
            );
            drop(conn);
            // Reopened without the shim: everything committed is there.
            let plain = open(path, pragmas);
            let tally: (i64, i64, i64) = plain
                .query_row(
                    "SELECT (SELECT balance FROM accounts WHERE id = 1),
                            (SELECT count(*) FROM inbox),
                            (SELECT last_seq FROM receipt_counter)",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap();
            assert_eq!(tally, (50, 50, 50));
            let ok: String = plain
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok");
        }
    }
}
