//! Read-only views of both tables, each read in one transaction: the
//! whole [`snapshot`] (the CLI's `show`, the console's `tables()`), and the
//! [`newest`] rows the page's tables panel draws.
//!
//! Invariant: rows come in a stable order — in a snapshot, accounts by id
//! and the inbox by `(source, event_id)` compared as bytes, so two
//! snapshots can be compared (tests do, against the article's script); in
//! `newest`, the inbox by when each row was written, newest first.

use rusqlite::Connection;
use serde::Serialize;

use crate::core::error::Error;
use crate::core::outcome::Receipt;

/// One row of `accounts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccountRow {
    pub id: i64,
    pub balance: i64,
}

/// One row of `inbox`, with its stored receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InboxRow {
    pub source: String,
    pub event_id: String,
    pub account_id: i64,
    pub amount: i64,
    /// Always present for rows the atomic handler committed; `None` for rows
    /// written by the race lab's mistaken handlers, which keep no receipt.
    pub receipt: Option<Receipt>,
}

/// Both tables: `{"accounts": [...], "inbox": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tables {
    pub accounts: Vec<AccountRow>,
    pub inbox: Vec<InboxRow>,
}

impl Tables {
    /// The balance of one account, if it exists.
    pub fn balance(&self, account_id: i64) -> Option<i64> {
        self.accounts
            .iter()
            .find(|a| a.id == account_id)
            .map(|a| a.balance)
    }
}

/// Reads both tables in one read transaction, so they agree with each other.
///
/// # Errors
/// Storage errors (including a database without the inbox-lab schema).
pub fn snapshot(conn: &Connection) -> Result<Tables, Error> {
    in_one_read(conn, |conn| {
        Ok(Tables {
            accounts: accounts(conn)?,
            inbox: inbox_rows(conn, INBOX_BY_KEY, u32::MAX)?,
        })
    })
}

/// What a page draws of the tables: every account, the `limit` inbox rows
/// written last, newest first, and how many rows the inbox holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Newest {
    pub accounts: Vec<AccountRow>,
    /// At most `limit` rows, the last written first.
    pub inbox: Vec<InboxRow>,
    /// Every row of the inbox, counted.
    pub inbox_total: i64,
}

/// Reads every account and the `limit` inbox rows written last, in one read
/// transaction. With ten thousand rows in the inbox, the page draws two
/// hundred: reading (and sending) the rest would only hold the page up.
///
/// "Written last" is SQLite's rowid: a new row takes one above the largest,
/// and `INSERT OR REPLACE` deletes the old row, so its new one is on top.
///
/// # Errors
/// Storage errors (including a database without the inbox-lab schema).
pub fn newest(conn: &Connection, limit: u32) -> Result<Newest, Error> {
    in_one_read(conn, |conn| {
        Ok(Newest {
            accounts: accounts(conn)?,
            inbox: inbox_rows(conn, INBOX_NEWEST, limit)?,
            inbox_total: conn.query_row("SELECT count(*) FROM inbox", [], |r| r.get(0))?,
        })
    })
}

/// Runs `read` in one read transaction (or inside the one already open,
/// e.g. step mode's: then it reads what that transaction sees).
fn in_one_read<T>(
    conn: &Connection,
    read: impl FnOnce(&Connection) -> Result<T, Error>,
) -> Result<T, Error> {
    crate::core::schema::check_current(conn)?;
    if !conn.is_autocommit() {
        return read(conn);
    }
    conn.execute_batch("BEGIN")?;
    let result = read(conn);
    // A read transaction: ending it cannot lose anything.
    let end = conn.execute_batch("COMMIT");
    let value = result?;
    end?;
    Ok(value)
}

fn accounts(conn: &Connection) -> Result<Vec<AccountRow>, Error> {
    let rows = conn
        .prepare_cached("SELECT id, balance FROM accounts ORDER BY id")?
        .query_map([], |r| {
            Ok(AccountRow {
                id: r.get(0)?,
                balance: r.get(1)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

// CAST to BLOB: order by the UTF-8 bytes, whatever the collation.
const INBOX_BY_KEY: &str = "SELECT source, event_id, account_id, amount, receipt_seq, balance_after
     FROM inbox ORDER BY CAST(source AS BLOB), CAST(event_id AS BLOB) LIMIT ?1";
const INBOX_NEWEST: &str = "SELECT source, event_id, account_id, amount, receipt_seq, balance_after
     FROM inbox ORDER BY rowid DESC LIMIT ?1";

/// The inbox's rows as `sql` (one of the two above) orders them, at most `limit`.
fn inbox_rows(conn: &Connection, sql: &str, limit: u32) -> Result<Vec<InboxRow>, Error> {
    let rows = conn
        .prepare_cached(sql)?
        .query_map([limit], |r| {
            Ok(InboxRow {
                source: r.get(0)?,
                event_id: r.get(1)?,
                account_id: r.get(2)?,
                amount: r.get(3)?,
                receipt: match (r.get(4)?, r.get(5)?) {
                    (Some(seq), Some(balance_after)) => Some(Receipt { seq, balance_after }),
                    _ => None,
                },
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}
