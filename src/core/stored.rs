//! The typed reading of stored rows: every row of inbox-lab's tables, each
//! cell checked for the type and range the code expects, keys by the rules
//! of [`Event`].
//!
//! Two callers share it: [`crate::core::health`] (is a stored database one
//! this build can use?) and the import of the tools lab
//! (`labs::tools::transfer`, which rebuilds a foreign file's rows in a fresh
//! database). A reason it gives names the first cell at fault.
//!
//! Invariant: reading only reads. It runs on whatever connection it is given
//! (the page's own, or a private read-only one over a foreign file) and
//! never writes.
//!
//! It reads every table of the one database, the scheme-ends tables of
//! schema version 2 included: like the migrations in [`crate::core::schema`],
//! the list of tables belongs to the database, not to a lab.

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::error::{Error, InvalidCode, Reason};
use super::event::{Event, MAX_ACCOUNT_ID};
use super::schema::{MAX_BALANCE, MAX_RECEIPT};

/// Largest value of the lab clock, the outbox's message ids and sequence:
/// like every number the page shows, an integer a JavaScript number holds
/// exactly.
const MAX_NUMBER: i64 = (1 << 53) - 1;

/// One inbox row as inbox-lab stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InboxRow {
    pub event: Event,
    /// `(receipt_seq, balance_after)`; `None` for rows the race lab's
    /// mistaken handlers wrote (they store no first result).
    pub receipt: Option<(i64, i64)>,
    pub received_at: i64,
}

/// One outbox message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutboxRow {
    pub message_id: i64,
    pub event: Event,
    pub sent_at: Option<i64>,
}

/// Every row of an inbox-lab database, each cell checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Rows {
    pub accounts: Vec<(i64, i64)>,
    pub inbox: Vec<InboxRow>,
    pub last_seq: i64,
    pub clock: i64,
    pub outbox: Vec<OutboxRow>,
    pub outbox_seq: Option<i64>,
    /// `(order_id, source, event_id)`
    pub orders: Vec<(String, String, String)>,
    /// `(source, event_id, order_id, result)`
    pub order_events: Vec<(String, String, String, String)>,
}

/// Reads every row of inbox-lab's tables at `version` from `conn`, checking
/// the stored type and range of every cell, the rules of [`Event`] for
/// keys, and that receipts are complete and not above the counter.
///
/// # Errors
/// The [`Reason`] naming the first cell at fault, or that a table or column
/// is missing.
pub(crate) fn read_rows(conn: &Connection, version: i64) -> Result<Rows, Reason> {
    let mut rows = Rows::default();
    each(conn, "accounts", "SELECT id, balance FROM accounts", |r| {
        rows.accounts.push((
            r.int(0, "id", 1, MAX_ACCOUNT_ID)?,
            r.int(1, "balance", 0, MAX_BALANCE)?,
        ));
        Ok(())
    })?;
    let mut counters = Vec::new();
    each(
        conn,
        "receipt_counter",
        "SELECT id, last_seq FROM receipt_counter",
        |r| {
            r.int(0, "id", 1, 1)?;
            counters.push(r.int(1, "last_seq", 0, MAX_RECEIPT)?);
            Ok(())
        },
    )?;
    rows.last_seq = one_row("receipt_counter", counters)?;
    let received_at = if version >= 2 { "received_at" } else { "0" };
    let sql = format!(
        "SELECT source, event_id, account_id, amount, receipt_seq, balance_after, {received_at} FROM inbox"
    );
    let last_seq = rows.last_seq;
    each(conn, "inbox", &sql, |r| {
        let event = r.event(0)?;
        let seq = r.opt_int(4, "receipt_seq", 1, MAX_RECEIPT)?;
        let after = r.opt_int(5, "balance_after", 0, MAX_BALANCE)?;
        let receipt = match (seq, after) {
            (Some(seq), Some(_)) if seq > last_seq => {
                return Err(Reason::new(
                    InvalidCode::ReceiptAboveCounter,
                    format!(
                        "inconsistent data: receipt number {seq} is above the receipt counter {last_seq}"
                    ),
                )
                .with("seq", seq)
                .with("last_seq", last_seq))
            }
            (Some(seq), Some(after)) => Some((seq, after)),
            (None, None) => None,
            _ => return Err(r.bad("receipt_seq", "a receipt needs both receipt_seq and balance_after, or neither")),
        };
        let received_at = r.int(6, "received_at", 0, MAX_NUMBER)?;
        rows.inbox.push(InboxRow {
            event,
            receipt,
            received_at,
        });
        Ok(())
    })?;
    if version < 2 {
        return Ok(rows);
    }
    let mut clocks = Vec::new();
    each(conn, "lab_clock", "SELECT id, now FROM lab_clock", |r| {
        r.int(0, "id", 1, 1)?;
        clocks.push(r.int(1, "now", 0, MAX_NUMBER)?);
        Ok(())
    })?;
    rows.clock = one_row("lab_clock", clocks)?;
    each(
        conn,
        "outbox",
        "SELECT source, event_id, account_id, amount, message_id, sent_at FROM outbox",
        |r| {
            let event = r.event(0)?;
            rows.outbox.push(OutboxRow {
                message_id: r.int(4, "message_id", 1, MAX_NUMBER)?,
                event,
                sent_at: r.opt_int(5, "sent_at", 0, MAX_NUMBER)?,
            });
            Ok(())
        },
    )?;
    each(
        conn,
        "sqlite_sequence",
        "SELECT name, seq FROM sqlite_sequence",
        |r| {
            if r.text(0, "name")? != "outbox" {
                return Err(r.bad("name", "only the outbox has a sequence"));
            }
            if rows.outbox_seq.is_some() {
                return Err(r.bad("name", "the outbox's sequence is stored twice"));
            }
            rows.outbox_seq = Some(r.int(1, "seq", 0, MAX_NUMBER)?);
            Ok(())
        },
    )?;
    let highest = rows.outbox.iter().map(|m| m.message_id).max().unwrap_or(0);
    if highest > rows.outbox_seq.unwrap_or(0) {
        let detail = format!("outbox message {highest} is above the outbox's sequence");
        return Err(Reason::new(
            InvalidCode::Inconsistent,
            format!("inconsistent data: {detail}"),
        )
        .with("detail", detail));
    }
    each(
        conn,
        "orders",
        "SELECT order_id, source, event_id FROM orders",
        |r| {
            let order = r.key(0, "order_id")?;
            let (source, event_id) = r.keys(1)?;
            rows.orders.push((order, source, event_id));
            Ok(())
        },
    )?;
    each(
        conn,
        "order_events",
        "SELECT source, event_id, order_id, result FROM order_events",
        |r| {
            let (source, event_id) = r.keys(0)?;
            let order = r.key(2, "order_id")?;
            let result = r.text(3, "result")?;
            if !["activated", "already_active"].contains(&result.as_str()) {
                return Err(r.bad("result", "must be activated or already_active"));
            }
            rows.order_events.push((source, event_id, order, result));
            Ok(())
        },
    )?;
    Ok(rows)
}

/// Runs `sql` and hands each row to `f`, numbering rows from 1.
fn each(
    conn: &Connection,
    table: &'static str,
    sql: &str,
    mut f: impl FnMut(&Cells<'_, '_>) -> Result<(), Reason>,
) -> Result<(), Reason> {
    let missing = |e: rusqlite::Error| {
        let detail = format!("cannot read table {table}: {e}");
        Reason::new(
            InvalidCode::SchemaDiffers,
            format!("the tables are not inbox-lab's: {detail}"),
        )
        .with("detail", detail)
    };
    let mut stmt = conn.prepare(sql).map_err(missing)?;
    let mut cursor = stmt.query([]).map_err(unreadable_reason)?;
    let mut number = 0;
    while let Some(row) = cursor.next().map_err(unreadable_reason)? {
        number += 1;
        f(&Cells { table, number, row })?;
    }
    Ok(())
}

/// Exactly one row (the counter, the clock).
fn one_row(table: &'static str, values: Vec<i64>) -> Result<i64, Reason> {
    match values[..] {
        [value] => Ok(value),
        _ => {
            let detail = format!("table {table} must hold one row, it holds {}", values.len());
            Err(Reason::new(
                InvalidCode::Inconsistent,
                format!("inconsistent data: {detail}"),
            )
            .with("detail", detail))
        }
    }
}

/// The cells of one row, read with typed checks.
struct Cells<'a, 'b> {
    table: &'static str,
    number: usize,
    row: &'a rusqlite::Row<'b>,
}

impl Cells<'_, '_> {
    /// The [`InvalidCode::RowInvalid`] reason for `column` of this row.
    fn bad(&self, column: &str, detail: impl std::fmt::Display) -> Reason {
        Reason::new(
            InvalidCode::RowInvalid,
            format!(
                "row {} of table {}, column {column}: {detail}",
                self.number, self.table
            ),
        )
        .with("row", self.number)
        .with("table", self.table)
        .with("column", column)
        .with("detail", detail)
    }

    fn value(&self, i: usize, column: &str) -> Result<ValueRef<'_>, Reason> {
        self.row
            .get_ref(i)
            .map_err(|e| self.bad(column, format!("cannot be read: {e}")))
    }

    /// An integer stored as an integer, in `min..=max`.
    fn int(&self, i: usize, column: &str, min: i64, max: i64) -> Result<i64, Reason> {
        match self.opt_int(i, column, min, max)? {
            Some(v) => Ok(v),
            None => Err(self.bad(column, "is NULL; an integer is required")),
        }
    }

    /// NULL, or an integer stored as an integer, in `min..=max`.
    fn opt_int(&self, i: usize, column: &str, min: i64, max: i64) -> Result<Option<i64>, Reason> {
        match self.value(i, column)? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(v) if (min..=max).contains(&v) => Ok(Some(v)),
            ValueRef::Integer(v) => Err(self.bad(column, format!("{v} is outside {min}..={max}"))),
            other => Err(self.bad(
                column,
                format!("is stored as {}; an integer is required", type_name(other)),
            )),
        }
    }

    /// Text stored as text, valid UTF-8.
    fn text(&self, i: usize, column: &str) -> Result<String, Reason> {
        match self.value(i, column)? {
            ValueRef::Text(bytes) => std::str::from_utf8(bytes)
                .map(str::to_owned)
                .map_err(|_| self.bad(column, "is not valid UTF-8")),
            other => Err(self.bad(
                column,
                format!("is stored as {}; text is required", type_name(other)),
            )),
        }
    }

    /// A key by the rules of [`Event`] (an order id follows them too).
    fn key(&self, i: usize, column: &str) -> Result<String, Reason> {
        let key = self.text(i, column)?;
        Event::new(key.as_str(), "key", 1, 1).map_err(|e| match e {
            Error::InvalidInput { reason, .. } => self.bad(column, reason),
            other => self.bad(column, other),
        })?;
        Ok(key)
    }

    /// `source`, `event_id` at `i`, `i + 1`.
    fn keys(&self, i: usize) -> Result<(String, String), Reason> {
        Ok((self.key(i, "source")?, self.key(i + 1, "event_id")?))
    }

    /// `source, event_id, account_id, amount` at `i..i + 4`, as an [`Event`].
    fn event(&self, i: usize) -> Result<Event, Reason> {
        let source = self.text(i, "source")?;
        let event_id = self.text(i + 1, "event_id")?;
        let account_id = self.int(i + 2, "account_id", i64::MIN, i64::MAX)?;
        let amount = self.int(i + 3, "amount", i64::MIN, i64::MAX)?;
        Event::new(source, event_id, account_id, amount).map_err(|e| match e {
            Error::InvalidInput { field, reason } => self.bad(field.as_str(), reason),
            other => self.bad("source", other),
        })
    }
}

fn type_name(v: ValueRef<'_>) -> &'static str {
    match v {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "an integer",
        ValueRef::Real(_) => "a REAL",
        ValueRef::Text(_) => "text",
        ValueRef::Blob(_) => "a BLOB",
    }
}

/// "SQLite cannot read this file", with SQLite's own words as the detail.
pub(crate) fn unreadable_reason(e: rusqlite::Error) -> Reason {
    Reason::new(
        InvalidCode::FileUnreadable,
        format!("SQLite cannot read this file: {e}"),
    )
    .with("detail", e)
}
