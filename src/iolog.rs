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
//! The **control** variant ([`Shim::broken_reserved_lock`]) makes
//! `xCheckReservedLock` always answer "another connection holds RESERVED",
//! which is how sahpool behaved before sqlite-wasm-vfs 0.3: SQLite then
//! believes a hot journal belongs to a live writer and skips the rollback.
//! A crash lab that cannot catch that bug proves nothing.
//!
//! Invariant: with no crash point set, the shim changes no behaviour — every
//! call is forwarded to the real VFS unchanged.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Mutex;

use rusqlite::ffi;
use serde::Serialize;

use crate::error::Error;

/// The shim's VFS name: open a database with `?vfs=iolog` or
/// [`db::open`](crate::db::open) on `file:NAME?vfs=iolog`.
pub const VFS_NAME: &str = "iolog";
/// The control variant's VFS name.
pub const BROKEN_VFS_NAME: &str = "iolog-broken-lock";

/// What kind of file an operation touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    Db,
    Journal,
    Wal,
    Other,
}

/// The operations that change storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Open,
    Write,
    Sync,
    Truncate,
    Delete,
}

/// One counted operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IoOp {
    /// 1-based position in the log.
    pub k: usize,
    pub file: FileKind,
    pub op: OpKind,
    pub offset: i64,
    pub len: i64,
}

/// Called instead of operation k+1. Must not return.
pub type CrashHook = fn(&IoOp) -> !;

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

/// Handle to the installed shims.
pub struct Shim;

impl Shim {
    /// Registers both shims on top of the current default VFS. Idempotent.
    ///
    /// # Errors
    /// [`Error::Storage`] if there is no default VFS or registration fails.
    pub fn install() -> Result<(), Error> {
        install_one(VFS_NAME, false)?;
        install_one(BROKEN_VFS_NAME, true)
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

    /// The log so far.
    pub fn log() -> Vec<IoOp> {
        state().log.clone()
    }

    /// The control variant's VFS name (for recovery in the control sweep).
    pub fn broken_reserved_lock() -> &'static str {
        BROKEN_VFS_NAME
    }
}

/// Counts one operation; crashes instead of it when its time has come.
fn record(file: FileKind, op: OpKind, offset: i64, len: i64) {
    let (crash, hook, entry) = {
        let mut s = state();
        let entry = IoOp {
            k: s.log.len() + 1,
            file,
            op,
            offset,
            len,
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

/// The real VFS and our copy of its description, kept alive forever.
struct ShimVfs {
    vfs: ffi::sqlite3_vfs,
    real: *mut ffi::sqlite3_vfs,
    broken_lock: bool,
    _name: CString,
}

/// Our file: the shim's header, followed in the same allocation by the real
/// VFS's file object (SQLite allocates `szOsFile` bytes for us).
#[repr(C)]
struct ShimFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    kind: FileKind,
    broken_lock: bool,
}

fn install_one(name: &str, broken_lock: bool) -> Result<(), Error> {
    let cname = CString::new(name).map_err(|_| Error::storage("VFS name contains NUL"))?;
    // SAFETY: sqlite3_vfs_find only reads the global VFS list.
    unsafe {
        if !ffi::sqlite3_vfs_find(cname.as_ptr()).is_null() {
            return Ok(()); // already installed
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
            zName: cname.as_ptr(),
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
        broken_lock,
        _name: cname,
    });
    // Registered VFSes must live for the rest of the process.
    let shim = Box::leak(boxed);
    shim.vfs.pAppData = (shim as *mut ShimVfs).cast();
    // SAFETY: `shim.vfs` is fully initialised and lives forever.
    let rc = unsafe { ffi::sqlite3_vfs_register(&mut shim.vfs, 0) };
    if rc != ffi::SQLITE_OK {
        return Err(Error::storage(format!(
            "registering the {name} VFS failed ({rc})"
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

unsafe fn kind_of(file: *mut ffi::sqlite3_file) -> FileKind {
    (*(file as *mut ShimFile)).kind
}

unsafe fn methods(real: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*real).pMethods
}

fn kind_from_flags(flags: c_int) -> FileKind {
    if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        FileKind::Db
    } else if flags & ffi::SQLITE_OPEN_MAIN_JOURNAL != 0 {
        FileKind::Journal
    } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
        FileKind::Wal
    } else {
        FileKind::Other
    }
}

fn kind_from_name(name: &[u8]) -> FileKind {
    if name.ends_with(b"-journal") {
        FileKind::Journal
    } else if name.ends_with(b"-wal") {
        FileKind::Wal
    } else {
        FileKind::Db
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
    let kind = kind_from_flags(flags);
    record(kind, OpKind::Open, 0, 0);
    let me = file as *mut ShimFile;
    let real = (file as *mut u8).add(std::mem::size_of::<ShimFile>()) as *mut ffi::sqlite3_file;
    (*me).base.pMethods = std::ptr::null();
    (*me).real = real;
    (*me).kind = kind;
    (*me).broken_lock = shim.broken_lock;
    let Some(open) = (*shim.real).xOpen else {
        return ffi::SQLITE_CANTOPEN;
    };
    let rc = open(shim.real, name, real, flags, out_flags);
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
        FileKind::Other
    } else {
        kind_from_name(CStr::from_ptr(name).to_bytes())
    };
    record(kind, OpKind::Delete, 0, 0);
    match (*shim.real).xDelete {
        Some(f) => f(shim.real, name, sync_dir),
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
        Some(f) => f(real),
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
        Some(f) => f(real, buf, amt, off),
        None => ffi::SQLITE_IOERR_READ,
    }
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    record(kind_of(file), OpKind::Write, off, i64::from(amt));
    let real = real_of(file);
    match methods(real).xWrite {
        Some(f) => f(real, buf, amt, off),
        None => ffi::SQLITE_IOERR_WRITE,
    }
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    record(kind_of(file), OpKind::Truncate, size, 0);
    let real = real_of(file);
    match methods(real).xTruncate {
        Some(f) => f(real, size),
        None => ffi::SQLITE_IOERR_TRUNCATE,
    }
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    record(kind_of(file), OpKind::Sync, 0, 0);
    let real = real_of(file);
    match methods(real).xSync {
        Some(f) => f(real, flags),
        None => ffi::SQLITE_IOERR_FSYNC,
    }
}

unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let real = real_of(file);
    match methods(real).xFileSize {
        Some(f) => f(real, out),
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
    if (*(file as *mut ShimFile)).broken_lock {
        // The control's bug: "someone else is writing" — always.
        *out = 1;
        return ffi::SQLITE_OK;
    }
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
