//! The database schema, its version, and how every connection is prepared.
//!
//! Invariants:
//! * every connection runs `PRAGMA foreign_keys = ON` (SQLite's default is
//!   OFF, per connection) — [`prepare`] checks that it really took effect;
//! * the schema version lives in `PRAGMA user_version`; [`migrate`] brings
//!   an older inbox-lab database up to [`VERSION`] and refuses a newer one or
//!   a database that is not inbox-lab's;
//! * the balance is an integer in `0..=2^53-1`, enforced by a `CHECK` in SQL
//!   (a last line of defence under the guard in [`crate::apply()`]).

use std::ops::RangeInclusive;
use std::time::Duration;

use rusqlite::{params, Connection};

use crate::core::error::{Error, StorageCode};
use crate::core::event::check_account_id;

/// The schema version this build writes and expects.
pub const VERSION: i64 = 2;

/// Largest number stored anywhere: 2^53-1, so every number the page shows
/// is exact in a JavaScript number.
pub const MAX_STORED: i64 = (1 << 53) - 1;

// The range of every stored number that is not an event's own input (account
// ids and amounts are `event.rs`'s), defined here once. Every writer refuses
// a write that would leave it (the credit's guard, the receipt counter, the
// lab clock, the outbox's ids), and the health check and the import read
// with it (`stored::read_rows`): nothing the page can write is something it
// refuses to read.

/// A balance, and the balance stored with a receipt.
pub(crate) const BALANCE: RangeInclusive<i64> = 0..=MAX_STORED;
/// A receipt number (`receipt_seq`).
pub(crate) const RECEIPT: RangeInclusive<i64> = 1..=MAX_STORED;
/// The receipt counter (`last_seq`, 0 before the first receipt) and the
/// outbox's sequence (`sqlite_sequence.seq`).
pub(crate) const COUNTER: RangeInclusive<i64> = 0..=MAX_STORED;
/// A time on the lab clock, in milliseconds: the clock itself,
/// `inbox.received_at` and `outbox.sent_at` (both stamped from it).
pub const TIME: RangeInclusive<i64> = 0..=MAX_STORED;
/// An outbox message id.
pub const MESSAGE_ID: RangeInclusive<i64> = 1..=MAX_STORED;

/// Largest balance (`BALANCE`).
pub const MAX_BALANCE: i64 = *BALANCE.end();

/// Largest receipt number (`RECEIPT`).
pub const MAX_RECEIPT: i64 = *RECEIPT.end();

/// How long a connection waits for another one's write lock before the
/// delivery fails with [`Error::Busy`] (the article's script uses 5 s).
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Version 1: the article's two tables, plus the stored first result
/// (`receipt_seq`, `balance_after`) and the counter that numbers receipts.
///
/// `receipt_seq`/`balance_after` are NULL only inside the applying
/// transaction, between the INSERT and the credit; committed rows always
/// have both (see [`crate::apply`]).
const SCHEMA_V1: &str = "
CREATE TABLE accounts (
    id      INTEGER PRIMARY KEY CHECK (id BETWEEN 1 AND 9007199254740991),
    balance INTEGER NOT NULL DEFAULT 0
            CHECK (typeof(balance) = 'integer' AND balance BETWEEN 0 AND 9007199254740991)
);
CREATE TABLE inbox (
    source        TEXT    NOT NULL,
    event_id      TEXT    NOT NULL,
    account_id    INTEGER NOT NULL REFERENCES accounts(id),
    amount        INTEGER NOT NULL CHECK (amount > 0),
    receipt_seq   INTEGER UNIQUE,
    balance_after INTEGER,
    PRIMARY KEY (source, event_id)
);
-- One row: the last receipt number handed out. Never reused, even if inbox
-- rows are deleted later, so receipt numbers only grow.
CREATE TABLE receipt_counter (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    last_seq INTEGER NOT NULL
);
INSERT INTO receipt_counter(id, last_seq) VALUES (1, 0);
";

/// Version 2: what "where the scheme ends" needs.
/// * `lab_clock`: a simulated clock (milliseconds), so retention can be
///   shown without waiting; `inbox.received_at` is stamped from it.
/// * `outbox`: notifications written in the same transaction as the credit,
///   delivered later by a dispatcher; `message_id` is what a receiver
///   deduplicates on.
/// * `orders` + `order_events`: a second operation, "activate an order
///   once". `order_events` is that operation's own inbox (event dedup);
///   `orders.order_id` is the **business key** that makes a second,
///   different event about the same order a business answer, not a 500.
///
/// Existing rows get `received_at = 0`: on the lab's clock they arrived at
/// its very beginning.
const SCHEMA_V2: &str = "
CREATE TABLE lab_clock (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    now INTEGER NOT NULL CHECK (now >= 0)
);
INSERT INTO lab_clock(id, now) VALUES (1, 0);
ALTER TABLE inbox ADD COLUMN received_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX inbox_received_at ON inbox(received_at);
CREATE TABLE outbox (
    message_id INTEGER PRIMARY KEY AUTOINCREMENT,
    source     TEXT    NOT NULL,
    event_id   TEXT    NOT NULL,
    account_id INTEGER NOT NULL,
    amount     INTEGER NOT NULL,
    sent_at    INTEGER
);
CREATE TABLE orders (
    order_id TEXT PRIMARY KEY,
    source   TEXT NOT NULL,
    event_id TEXT NOT NULL
);
CREATE TABLE order_events (
    source   TEXT NOT NULL,
    event_id TEXT NOT NULL,
    order_id TEXT NOT NULL,
    result   TEXT NOT NULL CHECK (result IN ('activated', 'already_active')),
    PRIMARY KEY (source, event_id)
);
";

/// Migrations, indexed by the version they produce: `MIGRATIONS[0]` turns an
/// empty database into version 1, `MIGRATIONS[1]` version 1 into 2. Later
/// issues append here; existing entries never change.
pub const MIGRATIONS: [&str; 2] = [SCHEMA_V1, SCHEMA_V2];

/// Prepares a freshly opened connection: busy timeout, foreign keys on.
///
/// # Errors
/// [`Error::Storage`] if SQLite refuses, or if foreign keys could not be
/// enabled (for example inside an open transaction).
pub fn prepare(conn: &Connection, busy_timeout: Duration) -> Result<(), Error> {
    conn.busy_timeout(busy_timeout)?;
    conn.execute_batch("PRAGMA foreign_keys = ON")?;
    let on: i64 = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
    if on != 1 {
        return Err(Error::storage(
            "could not enable foreign keys on this connection",
        ));
    }
    Ok(())
}

/// Brings the database to [`VERSION`], creating the schema in an empty one.
/// Safe to call on every open; does nothing when already current.
///
/// # Errors
/// [`Error::Busy`] if another connection holds the write lock;
/// [`Error::Storage`] for a database written by a newer inbox-lab or one
/// that holds other tables.
pub fn migrate(conn: &mut Connection) -> Result<(), Error> {
    migrate_to(conn, VERSION)
}

/// Brings the database to `target` (≤ [`VERSION`]); tests use it to build a
/// database as an older inbox-lab left it.
///
/// # Errors
/// As [`migrate`].
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<(), Error> {
    if current_version(conn)? >= target {
        return Ok(()); // the common case: no write lock needed
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version = current_version(&tx)?;
    if version == 0 {
        let tables: i64 = tx.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        if tables > 0 {
            return Err(Error::storage_with(
                StorageCode::Unusable,
                "this is not an inbox-lab database: it has tables but no inbox-lab schema version",
            ));
        }
    }
    for (i, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .take(target as usize)
        .skip(version as usize)
    {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}

fn current_version(conn: &Connection) -> Result<i64, Error> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if !(0..=VERSION).contains(&version) {
        return Err(Error::storage_with(
            StorageCode::Unusable,
            format!(
                "database schema version {version} is not supported by this build (expects at most {VERSION})"
            ),
        ));
    }
    Ok(version)
}

/// Checks that the connection's database is an inbox-lab database at
/// [`VERSION`] (used before serving reads from a database nobody migrated).
///
/// # Errors
/// [`Error::Storage`] naming what is wrong.
pub fn check_current(conn: &Connection) -> Result<(), Error> {
    match current_version(conn)? {
        VERSION => Ok(()),
        0 => Err(Error::storage_with(
            StorageCode::Unusable,
            "the database has no inbox-lab schema: run `inbox-lab init` first",
        )),
        v => Err(Error::storage_with(
            StorageCode::Unusable,
            format!("database schema version {v} needs migrating to {VERSION}"),
        )),
    }
}

/// Creates an account with balance 0 unless it exists. Idempotent.
/// Returns whether the account was created.
///
/// # Errors
/// [`Error::InvalidInput`] for an id outside `1..=2^53-1`; storage errors.
pub fn add_account(conn: &Connection, account_id: i64) -> Result<bool, Error> {
    let id = check_account_id(account_id)?;
    let created = conn.execute(
        "INSERT INTO accounts(id) VALUES (?1) ON CONFLICT(id) DO NOTHING",
        params![id],
    )?;
    Ok(created == 1)
}

/// `init`: the schema ([`migrate`], its own transaction), then the given
/// accounts (account 1 when none) in one transaction. Running it again
/// changes nothing.
///
/// # Errors
/// As [`migrate`] and [`add_account`]; an account's error leaves at most the schema.
pub fn init(conn: &mut Connection, accounts: &[i64]) -> Result<(), Error> {
    let ids = if accounts.is_empty() {
        &[1][..]
    } else {
        accounts
    };
    for &id in ids {
        check_account_id(id)?;
    }
    migrate(conn)?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for &id in ids {
        add_account(&tx, id)?;
    }
    tx.commit()?;
    Ok(())
}
