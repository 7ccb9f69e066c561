//! A read-only snapshot of both tables, in the shape the CLI's `show`, the
//! worker and the page share.
//!
//! Invariant: rows come in a stable order — accounts by id, inbox by
//! `(source, event_id)` compared as bytes — so two snapshots can be compared
//! (tests do, against the article's script).

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
    crate::core::schema::check_current(conn)?;
    let read = || -> Result<Tables, Error> {
        let accounts = conn
            .prepare_cached("SELECT id, balance FROM accounts ORDER BY id")?
            .query_map([], |r| {
                Ok(AccountRow {
                    id: r.get(0)?,
                    balance: r.get(1)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        // CAST to BLOB: order by the UTF-8 bytes, whatever the collation.
        let inbox = conn
            .prepare_cached(
                "SELECT source, event_id, account_id, amount, receipt_seq, balance_after
                 FROM inbox ORDER BY CAST(source AS BLOB), CAST(event_id AS BLOB)",
            )?
            .query_map([], |r| {
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
        Ok(Tables { accounts, inbox })
    };
    if !conn.is_autocommit() {
        return read(); // already inside a transaction (e.g. step mode): read what it sees
    }
    conn.execute_batch("BEGIN")?;
    let result = read();
    // A read transaction: ending it cannot lose anything.
    let end = conn.execute_batch("COMMIT");
    let tables = result?;
    end?;
    Ok(tables)
}
