//! The VFS shim base: SQLite's two vtables, `sqlite3_vfs` and
//! `sqlite3_io_methods`, written once.
//!
//! A shim is a VFS registered *on top of* another one — the default VFS at
//! [`register`] time: the OS files natively, the OPFS pool in the browser.
//! SQLite calls the shim; the functions below forward each call to the VFS
//! underneath and hand SQLite its answer. A concrete shim is a type that
//! implements [`Shim`] and overrides only what it observes or changes; every
//! method it leaves alone passes the call through.
//!
//! The shape follows the `rsqlite-vfs` crate (inside sqlite-wasm-rs): traits
//! whose `extern "C"` functions are written once, generic over the VFS, and
//! one register function.
//!
//! ## Invariants
//!
//! * A shim that overrides nothing changes nothing: every call reaches the
//!   VFS underneath with its arguments unchanged, and its answer reaches
//!   SQLite unchanged.
//! * Every storage call goes through [`Shim::around`] exactly once, with its
//!   [`FileKind`] and [`Op`]. Questions about the platform (full path names,
//!   randomness, sleep, the time, the last error) and about a file's nature
//!   (sector size, device characteristics) are not storage calls: they pass
//!   straight through.
//! * Our file object is a [`File`] header followed, in the same allocation,
//!   by the underlying VFS's own file object (SQLite allocates `szOsFile`
//!   bytes; we ask for ours plus theirs).
//!
//! Deliberately absent: shared memory (`xShm*`: the io methods are version
//! 1, so WAL through a shim needs `locking_mode = EXCLUSIVE`, which the crash
//! lab and the benchmark set), memory-mapped I/O (`xFetch`), loadable
//! extensions (`xDl*`) and system-call overrides. Registered shims are never
//! unregistered: they live as long as the process.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use rusqlite::ffi;
use serde::Serialize;

use crate::core::error::Error;

/// Which file a call touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// The main database file.
    Db,
    /// Its rollback journal (`-journal`).
    Journal,
    /// Its write-ahead log (`-wal`).
    Wal,
    /// Anything else: temporary files, statement journals, super-journals.
    Other,
}

impl FileKind {
    /// From the flags SQLite opens a file with (exactly one type flag is set).
    fn of_open_flags(flags: c_int) -> FileKind {
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

    /// From a name SQLite deletes or asks about: only a name is given there,
    /// and SQLite names a database's journal and WAL after it.
    fn of_name(name: *const c_char) -> FileKind {
        if name.is_null() {
            return FileKind::Other;
        }
        // SAFETY: SQLite passes a NUL-terminated name that outlives the call.
        let name = unsafe { CStr::from_ptr(name) }.to_bytes();
        if name.ends_with(b"-journal") {
            FileKind::Journal
        } else if name.ends_with(b"-wal") {
            FileKind::Wal
        } else {
            FileKind::Db
        }
    }
}

/// Which storage call SQLite made. The first eight are the ones that reach
/// a file's bytes or its existence; the rest ask or coordinate.
///
/// The order is the order of the benchmark's timing profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Open,
    Read,
    Write,
    Sync,
    Truncate,
    /// The file's size (`xFileSize`).
    Size,
    Close,
    Delete,
    /// Does a file exist / may it be written (`xAccess`)?
    Access,
    Lock,
    Unlock,
    /// Does another connection hold RESERVED (`xCheckReservedLock`)?
    CheckReservedLock,
    /// `xFileControl`: pragmas, commit phases, hints.
    FileControl,
}

/// One storage call as [`Shim::around`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub file: FileKind,
    pub op: Op,
    /// Where a read or write starts, or the new size of a truncate; else 0.
    pub offset: i64,
    /// How many bytes a read or write moves; else 0.
    pub len: i64,
}

/// A VFS shim: what it observes or changes of the calls SQLite makes.
/// Every method passes the call through unless overridden.
///
/// One value of the type is registered per VFS name ([`register`]) and
/// shared by every connection and thread that opens that VFS, hence
/// `Send + Sync`; a shim that keeps counts keeps them behind a lock.
pub trait Shim: Send + Sync + 'static {
    /// Wraps every storage call: `forward` performs it (through the methods
    /// below, then the VFS underneath) and returns SQLite's result code. A
    /// shim may look at `call` first, time `forward`, run something before
    /// it — or never return (the crash lab).
    fn around(&self, call: Call, forward: impl FnOnce() -> c_int) -> c_int {
        let _ = call;
        forward()
    }

    /// Writes `bytes` at `offset` of `file`.
    fn write(&self, file: &File, bytes: &[u8], offset: i64) -> c_int {
        file.write(bytes, offset)
    }

    /// Sets `*held` to 1 if another connection holds a RESERVED lock on
    /// `file`, else 0.
    fn check_reserved_lock(&self, file: &File, held: &mut c_int) -> c_int {
        file.check_reserved_lock(held)
    }

    /// The file's device characteristics (`SQLITE_IOCAP_*`), given `real`,
    /// what the VFS underneath says.
    fn device_characteristics(&self, real: c_int) -> c_int {
        real
    }
}

/// A file opened through a shim: our header, followed in the same allocation
/// by the underlying VFS's file object. A `&File` is only ever handed out
/// for a file that is open (between a successful `xOpen` and its `xClose`).
///
/// `align(8)` keeps the underlying object, which starts right after, as
/// aligned as SQLite's own allocation.
#[repr(C, align(8))]
pub struct File {
    /// SQLite's part: our io methods. Must come first.
    base: ffi::sqlite3_file,
    /// The underlying VFS's file object (right after this header).
    real: *mut ffi::sqlite3_file,
    /// The shim (`&'static S`) of the VFS that opened the file.
    shim: *const c_void,
    kind: FileKind,
}

impl File {
    /// Which file this is.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// Writes `bytes` at `offset` of the underlying file, not through the
    /// shim.
    pub fn write(&self, bytes: &[u8], offset: i64) -> c_int {
        let Ok(amt) = c_int::try_from(bytes.len()) else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        // SAFETY: the file is open (see the type's doc), `bytes` lives for
        // the call and is `amt` bytes long.
        unsafe {
            self.methods()
                .xWrite
                .map_or(ffi::SQLITE_IOERR_WRITE, |write| {
                    write(self.real, bytes.as_ptr().cast(), amt, offset)
                })
        }
    }

    /// Asks the underlying file whether another connection holds RESERVED.
    pub(crate) fn check_reserved_lock(&self, held: &mut c_int) -> c_int {
        // SAFETY: the file is open; `held` is a valid `int`.
        unsafe {
            match self.methods().xCheckReservedLock {
                Some(check) => check(self.real, held),
                None => {
                    *held = 0;
                    ffi::SQLITE_OK
                }
            }
        }
    }

    /// The underlying file's io methods.
    ///
    /// # Safety
    /// The file must be open: then the underlying VFS has set them.
    unsafe fn methods(&self) -> &ffi::sqlite3_io_methods {
        &*(*self.real).pMethods
    }
}

impl Call {
    /// `offset` and `len` are 0 for a call on the file as a whole.
    fn new(file: FileKind, op: Op, offset: i64, len: i64) -> Call {
        Call {
            file,
            op,
            offset,
            len,
        }
    }
}

/// One registered shim: the VFS SQLite sees, our io methods, the VFS
/// underneath and the shim itself. Leaked at registration: SQLite keeps
/// pointers to it for the rest of the process.
struct Layer<S> {
    vfs: ffi::sqlite3_vfs,
    methods: ffi::sqlite3_io_methods,
    real: *mut ffi::sqlite3_vfs,
    shim: S,
    _name: CString,
}

/// Registers `shim` as the VFS `name`, on top of the current default VFS,
/// and makes it the default if `make_default`. Idempotent: if `name` is
/// registered already, it is left as it is (only moved to the front if
/// `make_default`). Install a shim after the VFS it should wrap became the
/// default (in the browser: after the OPFS pool).
///
/// # Errors
/// [`Error::Storage`] if there is no default VFS or registration fails.
///
/// # Example
/// ```
/// use inbox_lab::storage::{register, Shim};
///
/// /// Overrides nothing, so changes nothing.
/// struct PassThrough;
/// impl Shim for PassThrough {}
///
/// # // Natively only: a temporary directory needs a file system.
/// # #[cfg(not(target_family = "wasm"))] {
/// register("pass-through", PassThrough, false)?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.sqlite3");
/// let conn = rusqlite::Connection::open(format!("file:{}?vfs=pass-through", path.display()))?;
/// conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")?;
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn register<S: Shim>(name: &str, shim: S, make_default: bool) -> Result<(), Error> {
    register_on(name, shim, None, make_default)
}

/// Like [`register`], on top of the VFS named `base` (`None`: the default
/// VFS) — how shims stack: the crash lab puts write coalescing on top of
/// its counting shim, so that what it counts and crashes at is what
/// coalescing lets through to storage.
///
/// # Errors
/// [`Error::Storage`] if `base` is not registered, or registration fails.
pub fn register_on<S: Shim>(
    name: &str,
    shim: S,
    base: Option<&str>,
    make_default: bool,
) -> Result<(), Error> {
    let cname = CString::new(name).map_err(|_| Error::storage("VFS name contains NUL"))?;
    // SAFETY: sqlite3_vfs_find only reads the global VFS list.
    let existing = unsafe { ffi::sqlite3_vfs_find(cname.as_ptr()) };
    if !existing.is_null() {
        if make_default {
            // SAFETY: re-registering a registered VFS only moves it to the front.
            unsafe { ffi::sqlite3_vfs_register(existing, 1) };
        }
        return Ok(());
    }
    let base = base
        .map(|b| CString::new(b).map_err(|_| Error::storage("VFS name contains NUL")))
        .transpose()?;
    // SAFETY: sqlite3_vfs_find only reads the global VFS list; a null name
    // asks for the default VFS.
    let real =
        unsafe { ffi::sqlite3_vfs_find(base.as_ref().map_or(std::ptr::null(), |b| b.as_ptr())) };
    if real.is_null() {
        return Err(Error::storage(match &base {
            Some(b) => format!("no SQLite VFS named {b:?} to wrap"),
            None => "no default SQLite VFS to wrap".to_owned(),
        }));
    }
    // SAFETY: `real` is a registered VFS; its fields are read-only to us.
    let (real_size, max_path) = unsafe { ((*real).szOsFile, (*real).mxPathname) };
    let header = c_int::try_from(std::mem::size_of::<File>())
        .map_err(|_| Error::storage("file header too large"))?;
    let layer = Box::leak(Box::new(Layer {
        vfs: ffi::sqlite3_vfs {
            iVersion: 2,
            szOsFile: header + real_size,
            mxPathname: max_path,
            pNext: std::ptr::null_mut(),
            zName: cname.as_ptr(),
            pAppData: std::ptr::null_mut(),
            xOpen: Some(x_open::<S>),
            xDelete: Some(x_delete::<S>),
            xAccess: Some(x_access::<S>),
            xFullPathname: Some(x_full_pathname::<S>),
            xDlOpen: None,
            xDlError: None,
            xDlSym: None,
            xDlClose: None,
            xRandomness: Some(x_randomness::<S>),
            xSleep: Some(x_sleep::<S>),
            xCurrentTime: Some(x_current_time::<S>),
            xGetLastError: Some(x_get_last_error::<S>),
            xCurrentTimeInt64: Some(x_current_time_int64::<S>),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        },
        methods: ffi::sqlite3_io_methods {
            iVersion: 1,
            xClose: Some(x_close::<S>),
            xRead: Some(x_read::<S>),
            xWrite: Some(x_write::<S>),
            xTruncate: Some(x_truncate::<S>),
            xSync: Some(x_sync::<S>),
            xFileSize: Some(x_file_size::<S>),
            xLock: Some(x_lock::<S>),
            xUnlock: Some(x_unlock::<S>),
            xCheckReservedLock: Some(x_check_reserved_lock::<S>),
            xFileControl: Some(x_file_control::<S>),
            xSectorSize: Some(x_sector_size),
            xDeviceCharacteristics: Some(x_device_characteristics::<S>),
            xShmMap: None,
            xShmLock: None,
            xShmBarrier: None,
            xShmUnmap: None,
            xFetch: None,
            xUnfetch: None,
        },
        real,
        shim,
        _name: cname,
    }));
    layer.vfs.pAppData = (layer as *mut Layer<S>).cast();
    // SAFETY: `layer.vfs` is fully initialised and lives forever.
    let rc = unsafe { ffi::sqlite3_vfs_register(&mut layer.vfs, c_int::from(make_default)) };
    if rc != ffi::SQLITE_OK {
        return Err(Error::storage(format!(
            "registering the {name} VFS failed ({rc})"
        )));
    }
    Ok(())
}

// ---- The VFS: SQLite calls these with our `sqlite3_vfs`. ----

/// Our layer, from the VFS SQLite calls.
///
/// # Safety
/// `vfs` must be the `vfs` of a `Layer<S>` registered by [`register`].
unsafe fn layer_of<'a, S>(vfs: *mut ffi::sqlite3_vfs) -> &'a Layer<S> {
    &*((*vfs).pAppData as *const Layer<S>)
}

unsafe extern "C" fn x_open<S: Shim>(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let layer = layer_of::<S>(vfs);
    let kind = FileKind::of_open_flags(flags);
    let real = file
        .cast::<u8>()
        .add(std::mem::size_of::<File>())
        .cast::<ffi::sqlite3_file>();
    // No io methods until the underlying open succeeded: SQLite does not
    // close a file whose open failed.
    file.cast::<File>().write(File {
        base: ffi::sqlite3_file {
            pMethods: std::ptr::null(),
        },
        real,
        shim: (&layer.shim as *const S).cast(),
        kind,
    });
    let rc = layer.shim.around(Call::new(kind, Op::Open, 0, 0), || {
        (*layer.real).xOpen.map_or(ffi::SQLITE_CANTOPEN, |open| {
            open(layer.real, name, real, flags, out_flags)
        })
    });
    if rc == ffi::SQLITE_OK && !(*real).pMethods.is_null() {
        (*file).pMethods = &layer.methods;
    }
    rc
}

/// The VFS methods on a file known only by its name (deleting it, asking
/// about it): each goes [`Shim::around`] the VFS underneath, with the
/// [`FileKind`] the name says, and answers `$missing` when it lacks the
/// method.
macro_rules! by_name {
    ($($name:ident => $method:ident($($arg:ident: $ty:ty),*), $op:ident, or $missing:expr;)*) => {$(
        unsafe extern "C" fn $name<S: Shim>(
            vfs: *mut ffi::sqlite3_vfs,
            name: *const c_char,
            $($arg: $ty),*
        ) -> c_int {
            let layer = layer_of::<S>(vfs);
            layer.shim.around(Call::new(FileKind::of_name(name), Op::$op, 0, 0), || {
                (*layer.real).$method.map_or($missing, |method| method(layer.real, name, $($arg),*))
            })
        }
    )*};
}

by_name! {
    x_delete => xDelete(sync_dir: c_int), Delete, or ffi::SQLITE_IOERR_DELETE;
    x_access => xAccess(flags: c_int, out: *mut c_int), Access, or ffi::SQLITE_IOERR_ACCESS;
}

// Questions about the platform: straight through.

/// The VFS methods that ask the platform: passed to the VFS underneath as
/// they are, answering `$missing` when it lacks the method.
macro_rules! straight {
    ($($name:ident => $method:ident($($arg:ident: $ty:ty),*), or $missing:expr;)*) => {$(
        unsafe extern "C" fn $name<S: Shim>(vfs: *mut ffi::sqlite3_vfs, $($arg: $ty),*) -> c_int {
            let real = layer_of::<S>(vfs).real;
            (*real).$method.map_or($missing, |method| method(real, $($arg),*))
        }
    )*};
}

straight! {
    x_full_pathname => xFullPathname(name: *const c_char, n: c_int, out: *mut c_char),
        or ffi::SQLITE_CANTOPEN;
    x_randomness => xRandomness(n: c_int, out: *mut c_char), or 0;
    x_sleep => xSleep(micros: c_int), or 0;
    x_current_time => xCurrentTime(out: *mut f64), or ffi::SQLITE_ERROR;
    x_get_last_error => xGetLastError(n: c_int, out: *mut c_char), or 0;
}

unsafe extern "C" fn x_current_time_int64<S: Shim>(
    vfs: *mut ffi::sqlite3_vfs,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let real = layer_of::<S>(vfs).real;
    if (*real).iVersion >= 2 {
        if let Some(f) = (*real).xCurrentTimeInt64 {
            return f(real, out);
        }
    }
    // A version-1 VFS only knows the Julian day as a float.
    let mut day = 0.0;
    let rc = x_current_time::<S>(vfs, &mut day);
    *out = (day * 86_400_000.0) as ffi::sqlite3_int64;
    rc
}

// ---- The io methods: SQLite calls these with a `File` we opened. ----

/// Our header and the shim that opened the file.
///
/// # Safety
/// `file` must be a `File` opened by `x_open::<S>` and not yet closed.
unsafe fn open_file<'a, S>(file: *mut ffi::sqlite3_file) -> (&'a File, &'a S) {
    let file = &*file.cast::<File>();
    (file, &*file.shim.cast::<S>())
}

/// The io methods that only go [`Shim::around`] the call to the file
/// underneath: each takes SQLite's arguments after the file, says which
/// [`Op`] it is (with the offset and length a read or a truncate has), and
/// answers `$missing` when the underlying file lacks the method.
macro_rules! forward {
    ($($name:ident => $method:ident($($arg:ident: $ty:ty),*), $op:ident($offset:expr, $len:expr), or $missing:expr;)*) => {$(
        unsafe extern "C" fn $name<S: Shim>(file: *mut ffi::sqlite3_file, $($arg: $ty),*) -> c_int {
            let (f, shim) = open_file::<S>(file);
            shim.around(Call::new(f.kind, Op::$op, $offset, $len), || {
                f.methods().$method.map_or($missing, |method| method(f.real, $($arg),*))
            })
        }
    )*};
}

forward! {
    x_close => xClose(), Close(0, 0), or ffi::SQLITE_OK;
    x_read => xRead(buf: *mut c_void, amt: c_int, off: ffi::sqlite3_int64),
        Read(off, i64::from(amt)), or ffi::SQLITE_IOERR_READ;
    x_truncate => xTruncate(size: ffi::sqlite3_int64), Truncate(size, 0), or ffi::SQLITE_IOERR_TRUNCATE;
    x_sync => xSync(flags: c_int), Sync(0, 0), or ffi::SQLITE_IOERR_FSYNC;
    x_file_size => xFileSize(out: *mut ffi::sqlite3_int64), Size(0, 0), or ffi::SQLITE_IOERR_FSTAT;
    x_lock => xLock(level: c_int), Lock(0, 0), or ffi::SQLITE_OK;
    x_unlock => xUnlock(level: c_int), Unlock(0, 0), or ffi::SQLITE_OK;
    x_file_control => xFileControl(op: c_int, arg: *mut c_void), FileControl(0, 0), or ffi::SQLITE_NOTFOUND;
}

unsafe extern "C" fn x_write<S: Shim>(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let (f, shim) = open_file::<S>(file);
    shim.around(Call::new(f.kind, Op::Write, off, i64::from(amt)), || {
        let bytes = match usize::try_from(amt) {
            Ok(0) => &[][..],
            // SAFETY: SQLite passes `amt` readable bytes at `buf`.
            Ok(len) => std::slice::from_raw_parts(buf.cast::<u8>(), len),
            Err(_) => return ffi::SQLITE_IOERR_WRITE,
        };
        shim.write(f, bytes, off)
    })
}

unsafe extern "C" fn x_check_reserved_lock<S: Shim>(
    file: *mut ffi::sqlite3_file,
    out: *mut c_int,
) -> c_int {
    let (f, shim) = open_file::<S>(file);
    // SAFETY: SQLite passes a valid `int` to answer in.
    shim.around(Call::new(f.kind, Op::CheckReservedLock, 0, 0), || {
        shim.check_reserved_lock(f, &mut *out)
    })
}

// Questions about the file's nature: straight through (the shim may add to
// the device characteristics).

unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let f = &*file.cast::<File>();
    f.methods().xSectorSize.map_or(4096, |size| size(f.real))
}

unsafe extern "C" fn x_device_characteristics<S: Shim>(file: *mut ffi::sqlite3_file) -> c_int {
    let (f, shim) = open_file::<S>(file);
    shim.device_characteristics(
        f.methods()
            .xDeviceCharacteristics
            .map_or(0, |characteristics| characteristics(f.real)),
    )
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records every call it sees, and passes it through.
    struct Recorder;

    static SEEN: Mutex<Vec<Call>> = Mutex::new(Vec::new());

    impl Shim for Recorder {
        fn around(&self, call: Call, forward: impl FnOnce() -> c_int) -> c_int {
            SEEN.lock().unwrap().push(call);
            forward()
        }
    }

    /// A shim that overrides only `around` passes every call through: the
    /// database it writes is the one SQLite writes without it, and `around`
    /// saw each storage call with its file and operation.
    #[test]
    fn a_pass_through_shim_changes_nothing_and_sees_every_call() {
        register("test-recorder", Recorder, false).unwrap();
        register("test-recorder", Recorder, false).unwrap(); // idempotent
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("through.sqlite3");
        let uri = format!("file:{}?vfs=test-recorder", path.display());
        let conn = rusqlite::Connection::open_with_flags(
            uri,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
                | rusqlite::OpenFlags::SQLITE_OPEN_URI,
        )
        .unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = DELETE;
             CREATE TABLE t(x);
             INSERT INTO t VALUES (1), (2), (3);",
        )
        .unwrap();
        drop(conn);
        let seen = std::mem::take(&mut *SEEN.lock().unwrap());
        let has = |file: FileKind, op: Op| seen.iter().any(|c| c.file == file && c.op == op);
        assert!(has(FileKind::Db, Op::Open));
        assert!(has(FileKind::Db, Op::Write));
        assert!(has(FileKind::Journal, Op::Write));
        assert!(has(FileKind::Journal, Op::Delete));
        assert!(has(FileKind::Db, Op::Close));
        let write = seen
            .iter()
            .find(|c| c.file == FileKind::Db && c.op == Op::Write)
            .unwrap();
        assert!(write.len > 0 && write.offset % write.len == 0, "{write:?}");

        // Read back without the shim: the file is an ordinary database.
        let plain = rusqlite::Connection::open(&path).unwrap();
        let sum: i64 = plain
            .query_row("SELECT sum(x) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sum, 6);
        let ok: String = plain
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
    }
}
