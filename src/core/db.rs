//! Opening a database: [`open`]/[`open_with`] for the CLI and the tests,
//! [`open_checked`] (through `open_with`) for the worker.
//!
//! Invariant: every connection the crate hands out has been through
//! [`schema::prepare`] (foreign keys on, busy timeout set), and — when
//! opened with [`Mode::Create`] — migrated to the current schema.
//!
//! In the browser the same call opens a file in OPFS, because the worker
//! installs the OPFS pool, and write coalescing over it, as SQLite's default VFS first (`wasm::install_opfs`).

use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::core::error::{Error, StorageCode};
use crate::core::{health, schema};

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

/// Opens the reader's database at `path`, creating it if needed: the door
/// the browser worker uses. A stored database is checked before anything
/// uses it ([`health::check`]); a new one (no account yet) gets account 1,
/// like `inbox-lab init`. `before` runs before the first read, as for
/// [`open_with`] (the worker sets `locking_mode = EXCLUSIVE` there for a WAL
/// database).
///
/// # Errors
/// As [`open`] with [`Mode::Create`], and whatever `before` returns; a
/// stored database that fails [`health::check`] is that error (not
/// retryable).
pub fn open_checked(
    path: &str,
    busy_timeout: Duration,
    before: impl FnOnce(&Connection) -> Result<(), Error>,
) -> Result<Connection, Error> {
    let mut conn = open_with(path, Mode::Create, busy_timeout, before)?;
    health::check(&conn)?;
    let has_accounts: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM accounts)", [], |r| r.get(0))?;
    if !has_accounts {
        schema::init(&mut conn, &[1])?;
    }
    Ok(conn)
}
