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
//! Pending bytes are capped ([`MAX_PENDING`]); a longer run is written in
//! pieces of at most that size.

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Mutex;

use rusqlite::ffi;

use crate::error::Error;

/// The shim's VFS name: open `file:NAME?vfs=coalesce`.
pub const VFS_NAME: &str = "coalesce";

/// Most bytes held back before they are written out anyway.
pub const MAX_PENDING: usize = 1 << 20;

/// The one run of bytes waiting to be written, if any.
struct Pending {
    /// The file it belongs to (a `*mut ShimFile`, as an address).
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
/// The pending file's real file object must still be open (guaranteed: a
/// file's `xClose` flushes before closing).
unsafe fn flush(s: &mut State) -> c_int {
    let Some(p) = s.pending.take() else {
        return ffi::SQLITE_OK;
    };
    let real = (*(p.file as *mut ShimFile)).real;
    let Some(write) = methods(real).xWrite else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    s.stats.writes_out += 1;
    let Ok(len) = c_int::try_from(p.bytes.len()) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    let rc = write(real, p.bytes.as_ptr().cast(), len, p.offset);
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
    call()
}

/// The real VFS and our copy of its description, kept alive forever.
struct ShimVfs {
    vfs: ffi::sqlite3_vfs,
    real: *mut ffi::sqlite3_vfs,
    _name: CString,
}

/// Our file: this header, then in the same allocation the real VFS's file.
#[repr(C)]
struct ShimFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    wal: bool,
}

/// Registers the shim on top of the current default VFS, and makes it the
/// default if `make_default`. Idempotent. In the browser, install it after
/// the OPFS pool became the default.
///
/// # Errors
/// [`Error::Storage`] if there is no default VFS or registration fails.
pub fn install(make_default: bool) -> Result<(), Error> {
    let name = CString::new(VFS_NAME).map_err(|_| Error::storage("VFS name contains NUL"))?;
    // SAFETY: sqlite3_vfs_find only reads the global VFS list.
    let existing = unsafe { ffi::sqlite3_vfs_find(name.as_ptr()) };
    if !existing.is_null() {
        if make_default {
            // SAFETY: re-registering a registered VFS only moves it to the front.
            unsafe { ffi::sqlite3_vfs_register(existing, 1) };
        }
        return Ok(());
    }
    // SAFETY: a null name asks for the default VFS.
    let real = unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) };
    if real.is_null() {
        return Err(Error::storage("no default SQLite VFS to wrap"));
    }
    // SAFETY: `real` is a registered VFS; its fields are read-only to us.
    let (real_size, max_path) = unsafe { ((*real).szOsFile, (*real).mxPathname) };
    let header = c_int::try_from(std::mem::size_of::<ShimFile>())
        .map_err(|_| Error::storage("file header too large"))?;
    let boxed = Box::new(ShimVfs {
        vfs: ffi::sqlite3_vfs {
            iVersion: 2,
            szOsFile: header + real_size,
            mxPathname: max_path,
            pNext: std::ptr::null_mut(),
            zName: name.as_ptr(),
            pAppData: std::ptr::null_mut(),
            xOpen: Some(x_open),
            xDelete: Some(x_delete),
            xAccess: Some(x_access),
            xFullPathname: Some(x_full_pathname),
            xDlOpen: None,
            xDlError: None,
            xDlSym: None,
            xDlClose: None,
            xRandomness: Some(x_randomness),
            xSleep: Some(x_sleep),
            xCurrentTime: Some(x_current_time),
            xGetLastError: Some(x_get_last_error),
            xCurrentTimeInt64: Some(x_current_time_int64),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        },
        real,
        _name: name,
    });
    // Registered VFSes must live for the rest of the process.
    let shim = Box::leak(boxed);
    shim.vfs.pAppData = (shim as *mut ShimVfs).cast();
    // SAFETY: `shim.vfs` is fully initialised and lives forever.
    let rc = unsafe { ffi::sqlite3_vfs_register(&mut shim.vfs, c_int::from(make_default)) };
    if rc != ffi::SQLITE_OK {
        return Err(Error::storage(format!(
            "registering the {VFS_NAME} VFS failed ({rc})"
        )));
    }
    Ok(())
}

unsafe fn shim_of(vfs: *mut ffi::sqlite3_vfs) -> &'static ShimVfs {
    &*((*vfs).pAppData as *const ShimVfs)
}

unsafe fn real_of(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    (*(file as *mut ShimFile)).real
}

unsafe fn methods(real: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*real).pMethods
}

static IO_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let Ok(len) = usize::try_from(amt) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    let bytes = std::slice::from_raw_parts(buf.cast::<u8>(), len);
    let me = file as usize;
    let wal = (*(file as *mut ShimFile)).wal;
    let mut s = state();
    s.stats.writes_in += 1;
    // The previous write was a commit frame's header: this is its page.
    let commit_page = s
        .pending
        .as_ref()
        .is_some_and(|p| p.file == me && p.commit_frame_next);
    let appends = s.pending.as_ref().is_some_and(|p| {
        p.file == me && p.offset + p.bytes.len() as i64 == off && p.bytes.len() + len <= MAX_PENDING
    });
    if !appends {
        let rc = flush(&mut s);
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
    if commit_page {
        // The commit is complete: write it out now, so that a failure is
        // this write's, heard before SQLite publishes the commit.
        return flush(&mut s);
    }
    p.commit_frame_next = wal && is_commit_frame_header(bytes, off);
    ffi::SQLITE_OK
}

/// A WAL frame header (24 bytes, after the 32-byte WAL header) whose bytes
/// 4..8, "size of the database in pages after the commit", are not zero:
/// the last frame of a commit. (SQLite's file format, section 4.1.)
fn is_commit_frame_header(bytes: &[u8], offset: i64) -> bool {
    bytes.len() == 24 && offset >= 32 && bytes[4..8] != [0, 0, 0, 0]
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let shim = shim_of(vfs);
    let me = file as *mut ShimFile;
    let real = (file as *mut u8).add(std::mem::size_of::<ShimFile>()) as *mut ffi::sqlite3_file;
    (*me).base.pMethods = std::ptr::null();
    (*me).real = real;
    (*me).wal = flags & ffi::SQLITE_OPEN_WAL != 0;
    let Some(open) = (*shim.real).xOpen else {
        return ffi::SQLITE_CANTOPEN;
    };
    let rc = flushed(|| open(shim.real, name, real, flags, out_flags));
    if rc == ffi::SQLITE_OK && !(*real).pMethods.is_null() {
        (*me).base.pMethods = &IO_METHODS;
    }
    rc
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    let shim = shim_of(vfs);
    match (*shim.real).xDelete {
        Some(f) => flushed(|| f(shim.real, name, sync_dir)),
        None => ffi::SQLITE_IOERR_DELETE,
    }
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    let shim = shim_of(vfs);
    match (*shim.real).xAccess {
        Some(f) => flushed(|| f(shim.real, name, flags, out)),
        None => ffi::SQLITE_IOERR_ACCESS,
    }
}

unsafe extern "C" fn x_full_pathname(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    let shim = shim_of(vfs);
    match (*shim.real).xFullPathname {
        Some(f) => f(shim.real, name, n, out),
        None => ffi::SQLITE_CANTOPEN,
    }
}

unsafe extern "C" fn x_randomness(vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    let shim = shim_of(vfs);
    match (*shim.real).xRandomness {
        Some(f) => f(shim.real, n, out),
        None => 0,
    }
}

unsafe extern "C" fn x_sleep(vfs: *mut ffi::sqlite3_vfs, micros: c_int) -> c_int {
    let shim = shim_of(vfs);
    match (*shim.real).xSleep {
        Some(f) => f(shim.real, micros),
        None => 0,
    }
}

unsafe extern "C" fn x_current_time(vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    let shim = shim_of(vfs);
    match (*shim.real).xCurrentTime {
        Some(f) => f(shim.real, out),
        None => ffi::SQLITE_ERROR,
    }
}

unsafe extern "C" fn x_get_last_error(
    vfs: *mut ffi::sqlite3_vfs,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    let shim = shim_of(vfs);
    match (*shim.real).xGetLastError {
        Some(f) => f(shim.real, n, out),
        None => 0,
    }
}

unsafe extern "C" fn x_current_time_int64(
    vfs: *mut ffi::sqlite3_vfs,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let shim = shim_of(vfs);
    if (*shim.real).iVersion >= 2 {
        if let Some(f) = (*shim.real).xCurrentTimeInt64 {
            return f(shim.real, out);
        }
    }
    let mut day = 0.0;
    let rc = x_current_time(vfs, &mut day);
    *out = (day * 86_400_000.0) as ffi::sqlite3_int64;
    rc
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let real = real_of(file);
    match methods(real).xClose {
        Some(f) => flushed(|| f(real)),
        None => flushed(|| ffi::SQLITE_OK),
    }
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let real = real_of(file);
    match methods(real).xRead {
        Some(f) => flushed(|| f(real, buf, amt, off)),
        None => ffi::SQLITE_IOERR_READ,
    }
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let real = real_of(file);
    match methods(real).xTruncate {
        Some(f) => flushed(|| f(real, size)),
        None => ffi::SQLITE_IOERR_TRUNCATE,
    }
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let real = real_of(file);
    match methods(real).xSync {
        Some(f) => flushed(|| f(real, flags)),
        None => ffi::SQLITE_IOERR_FSYNC,
    }
}

unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let real = real_of(file);
    match methods(real).xFileSize {
        Some(f) => flushed(|| f(real, out)),
        None => ffi::SQLITE_IOERR_FSTAT,
    }
}

unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let real = real_of(file);
    match methods(real).xLock {
        Some(f) => flushed(|| f(real, level)),
        None => flushed(|| ffi::SQLITE_OK),
    }
}

unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let real = real_of(file);
    match methods(real).xUnlock {
        Some(f) => flushed(|| f(real, level)),
        None => flushed(|| ffi::SQLITE_OK),
    }
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let real = real_of(file);
    match methods(real).xCheckReservedLock {
        Some(f) => flushed(|| f(real, out)),
        None => flushed(|| {
            *out = 0;
            ffi::SQLITE_OK
        }),
    }
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let real = real_of(file);
    // Flushes on every file control, COMMIT_PHASETWO (the end of a commit)
    // included.
    match methods(real).xFileControl {
        Some(f) => flushed(|| f(real, op, arg)),
        None => flushed(|| ffi::SQLITE_NOTFOUND),
    }
}

unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let real = real_of(file);
    match methods(real).xSectorSize {
        Some(f) => f(real),
        None => 4096,
    }
}

unsafe extern "C" fn x_device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let real = real_of(file);
    match methods(real).xDeviceCharacteristics {
        Some(f) => f(real),
        None => 0,
    }
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;
    use crate::bench::{self, Setting};
    use crate::{apply, Outcome};

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

    /// Through the shim, every setting runs the workload correctly, with far
    /// fewer writes reaching storage, and the files it leaves are the ones
    /// SQLite leaves without it (same tables, integrity ok after reopening).
    #[test]
    fn merges_writes_and_keeps_every_commit() {
        let dir = tempfile::tempdir().unwrap();
        for setting in Setting::ALL {
            let path = dir.path().join(format!("{}.sqlite3", setting.name()));
            let conn = bench::open_coalesced(path.to_str().unwrap(), setting).unwrap();
            take_stats();
            for i in 0..50 {
                assert!(matches!(
                    apply(&conn, &bench::event(i), None),
                    Ok(Outcome::Applied(_))
                ));
                // Nothing is left waiting once a commit has returned.
                assert!(state().pending.is_none(), "{setting:?}: bytes left waiting");
            }
            let stats = take_stats();
            assert!(
                stats.writes_out * 2 <= stats.writes_in,
                "{setting:?}: {stats:?}"
            );
            drop(conn);
            // Reopened without the shim: everything committed is there.
            let plain = bench::open(path.to_str().unwrap(), setting).unwrap();
            let t = bench::tally(&plain).unwrap();
            assert_eq!((t.balance, t.inbox, t.last_receipt), (50, 50, 50));
            let ok: String = plain
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok");
        }
    }
}
