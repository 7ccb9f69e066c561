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
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Mutex;

use rusqlite::ffi;
use serde::Serialize;

use crate::error::Error;

/// The shim's VFS name: open `file:NAME?vfs=bench-timing`.
pub const VFS_NAME: &str = "bench-timing";

/// Which file an operation touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum File {
    Db,
    Journal,
    Wal,
    Other,
}

/// The operations that are counted and timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Open,
    Read,
    Write,
    Sync,
    Truncate,
    Size,
    Close,
    Delete,
}

/// Calls of one operation on one file: how many and how long in all.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Row {
    pub file: File,
    pub op: Op,
    pub calls: u64,
    pub total_ms: f64,
}

static TOTALS: Mutex<BTreeMap<(File, Op), (u64, f64)>> = Mutex::new(BTreeMap::new());

fn totals() -> std::sync::MutexGuard<'static, BTreeMap<(File, Op), (u64, f64)>> {
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
fn timed<T>(file: File, op: Op, call: impl FnOnce() -> T) -> T {
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
/// `performance.now()`, since only `src/wasm.rs` talks to JavaScript;
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

/// The real VFS and our copy of its description, kept alive forever.
struct ShimVfs {
    vfs: ffi::sqlite3_vfs,
    real: *mut ffi::sqlite3_vfs,
    _name: CString,
}

/// Our file: this header, then in the same allocation the real VFS's file
/// object (SQLite allocates `szOsFile` bytes for us).
#[repr(C)]
struct ShimFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    file: File,
}

/// Registers the shim on top of the current default VFS. Idempotent; install
/// it after the real VFS became the default (in the browser: after the OPFS
/// pool).
///
/// # Errors
/// [`Error::Storage`] if there is no default VFS or registration fails.
pub fn install() -> Result<(), Error> {
    let name = CString::new(VFS_NAME).map_err(|_| Error::storage("VFS name contains NUL"))?;
    // SAFETY: sqlite3_vfs_find only reads the global VFS list.
    unsafe {
        if !ffi::sqlite3_vfs_find(name.as_ptr()).is_null() {
            return Ok(());
        }
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
    let rc = unsafe { ffi::sqlite3_vfs_register(&mut shim.vfs, 0) };
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

unsafe fn file_of(file: *mut ffi::sqlite3_file) -> File {
    (*(file as *mut ShimFile)).file
}

unsafe fn methods(real: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*real).pMethods
}

fn file_from_flags(flags: c_int) -> File {
    if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        File::Db
    } else if flags & ffi::SQLITE_OPEN_MAIN_JOURNAL != 0 {
        File::Journal
    } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
        File::Wal
    } else {
        File::Other
    }
}

fn file_from_name(name: &[u8]) -> File {
    if name.ends_with(b"-journal") {
        File::Journal
    } else if name.ends_with(b"-wal") {
        File::Wal
    } else {
        File::Db
    }
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

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let shim = shim_of(vfs);
    let kind = file_from_flags(flags);
    let me = file as *mut ShimFile;
    let real = (file as *mut u8).add(std::mem::size_of::<ShimFile>()) as *mut ffi::sqlite3_file;
    (*me).base.pMethods = std::ptr::null();
    (*me).real = real;
    (*me).file = kind;
    let Some(open) = (*shim.real).xOpen else {
        return ffi::SQLITE_CANTOPEN;
    };
    let rc = timed(kind, Op::Open, || {
        open(shim.real, name, real, flags, out_flags)
    });
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
    let kind = if name.is_null() {
        File::Other
    } else {
        file_from_name(CStr::from_ptr(name).to_bytes())
    };
    match (*shim.real).xDelete {
        Some(f) => timed(kind, Op::Delete, || f(shim.real, name, sync_dir)),
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
        Some(f) => f(shim.real, name, flags, out),
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
        Some(f) => timed(file_of(file), Op::Close, || f(real)),
        None => ffi::SQLITE_OK,
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
        Some(f) => timed(file_of(file), Op::Read, || f(real, buf, amt, off)),
        None => ffi::SQLITE_IOERR_READ,
    }
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let real = real_of(file);
    match methods(real).xWrite {
        Some(f) => timed(file_of(file), Op::Write, || f(real, buf, amt, off)),
        None => ffi::SQLITE_IOERR_WRITE,
    }
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let real = real_of(file);
    match methods(real).xTruncate {
        Some(f) => timed(file_of(file), Op::Truncate, || f(real, size)),
        None => ffi::SQLITE_IOERR_TRUNCATE,
    }
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let real = real_of(file);
    match methods(real).xSync {
        Some(f) => timed(file_of(file), Op::Sync, || f(real, flags)),
        None => ffi::SQLITE_IOERR_FSYNC,
    }
}

unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let real = real_of(file);
    match methods(real).xFileSize {
        Some(f) => timed(file_of(file), Op::Size, || f(real, out)),
        None => ffi::SQLITE_IOERR_FSTAT,
    }
}

unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let real = real_of(file);
    match methods(real).xLock {
        Some(f) => f(real, level),
        None => ffi::SQLITE_OK,
    }
}

unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let real = real_of(file);
    match methods(real).xUnlock {
        Some(f) => f(real, level),
        None => ffi::SQLITE_OK,
    }
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let real = real_of(file);
    match methods(real).xCheckReservedLock {
        Some(f) => f(real, out),
        None => {
            *out = 0;
            ffi::SQLITE_OK
        }
    }
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let real = real_of(file);
    match methods(real).xFileControl {
        Some(f) => f(real, op, arg),
        None => ffi::SQLITE_NOTFOUND,
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
