//! Opening a database: one function for the CLI, the tests and the worker.
//!
//! Invariant: every connection the crate hands out has been through
//! [`schema::prepare`] (foreign keys on, busy timeout set), and — when
//! opened with [`Mode::Create`] — migrated to the current schema.
//!
//! In the browser the same call opens a file in OPFS, because the worker
//! installs the OPFS pool as SQLite's default VFS first (see `wasm.rs`).

use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, StorageCode};
use crate::schema;

/// Whether opening may create the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Create the file if needed and bring the schema up to date.
    Create,
    /// The database must already exist and be current (`apply`, `show`).
    Existing,
}

/// Opens `path` (a file path natively, a name in the OPFS pool in the
/// browser) and prepares the connection.
///
/// # Errors
/// [`Error::Storage`] if the file cannot be opened, is not an inbox-lab
/// database, or (with [`Mode::Existing`]) has no schema yet;
/// [`Error::Busy`] if creating the schema waited too long for the lock.
pub fn open(path: &str, mode: Mode, busy_timeout: Duration) -> Result<Connection, Error> {
    open_with(path, mode, busy_timeout, |_| Ok(()))
}

/// Like [`open`], running `before` on the connection before it first reads
/// the database — where settings such as `locking_mode = EXCLUSIVE` (needed
/// to open a WAL database without shared memory) must go.
///
/// # Errors
/// As [`open`], and whatever `before` returns.
pub fn open_with(
    path: &str,
    mode: Mode,
    busy_timeout: Duration,
    before: impl FnOnce(&Connection) -> Result<(), Error>,
) -> Result<Connection, Error> {
    let flags = match mode {
        Mode::Create => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        Mode::Existing => OpenFlags::SQLITE_OPEN_READ_WRITE,
    } | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let mut conn = Connection::open_with_flags(path, flags).map_err(|e| {
        // SQLite's own classification (and so whether a retry can help),
        // with a sentence that names the file.
        let code = StorageCode::of(&e).unwrap_or(StorageCode::Io);
        Error::storage_with(
            code,
            match mode {
                Mode::Existing => format!(
                    "cannot open database {path:?}: {e} (create it with `inbox-lab init --db PATH`)"
                ),
                Mode::Create => format!("cannot open database {path:?}: {e}"),
            },
        )
    })?;
    before(&conn)?;
    schema::prepare(&conn, busy_timeout)?;
    match mode {
        Mode::Create => schema::migrate(&mut conn)?,
        Mode::Existing => schema::check_current(&conn)?,
    }
    Ok(conn)
}
