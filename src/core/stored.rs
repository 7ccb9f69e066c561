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
//! It trusts no index: every table is scanned (`NOT INDEXED`) and the
//! unique keys are checked in Rust — an index that disagrees with its table
//! would otherwise let a key be stored twice, and then the key no longer
//! decides. Besides each cell it checks what holds across rows in every
//! database inbox-lab writes: receipts not above the counter, each key and
//! receipt number once, and an outbox message only for an event the inbox
//! holds with that payload.
//!
//! A bad row refuses the whole database ([`OnBadRow::Refuse`]: the import,
//! the health check) or is left out and listed ([`OnBadRow::Drop`]: "keep
//! what is sound", `labs::tools::transfer::salvage`).
//!
//! It reads every table of the one database, the scheme-ends tables of
//! schema version 2 included: like the migrations in [`crate::core::schema`],
//! the list of tables belongs to the database, not to a lab.

use std::collections::{HashMap, HashSet};
use std::ops::RangeInclusive;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::error::{Error, InvalidCode, Reason};
use super::event::{Event, MAX_ACCOUNT_ID};
use super::schema::{BALANCE, COUNTER, MESSAGE_ID, RECEIPT, TIME};

/// Any integer: the event's own fields are judged by [`Event::new`].
const ANY: RangeInclusive<i64> = i64::MIN..=i64::MAX;

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

/// What [`read_rows`] does with a row that fails its checks.
pub(crate) enum OnBadRow<'a> {
    /// Refuse the whole database with the row's reason.
    Refuse,
    /// Leave the row out and add its reason to the list.
    // Only the tools lab salvages; the core alone never drops a row.
    #[cfg_attr(not(feature = "labs"), allow(dead_code))]
    Drop(&'a mut Vec<Reason>),
}

impl OnBadRow<'_> {
    fn meet(&mut self, reason: Reason) -> Result<(), Reason> {
        match self {
            OnBadRow::Refuse => Err(reason),
            OnBadRow::Drop(dropped) => {
                dropped.push(reason);
                Ok(())
            }
        }
    }
}

/// Reads every row of inbox-lab's tables at `version` from `conn`, with the
/// checks the module documentation lists (cells in [`crate::core::schema`]'s
/// ranges, keys by the rules of [`Event`]).
///
/// # Errors
/// The [`Reason`] naming the first row at fault (with [`OnBadRow::Refuse`]),
/// or that a table or column is missing, the file cannot be read, or a
/// one-row table does not hold one row (whatever `bad`).
pub(crate) fn read_rows(
    conn: &Connection,
    version: i64,
    mut bad: OnBadRow<'_>,
) -> Result<Rows, Reason> {
    let mut rows = Rows::default();
    let bad = &mut bad;
    each(
        conn,
        "accounts",
        "SELECT id, balance FROM accounts NOT INDEXED",
        bad,
        |r| {
            rows.accounts.push((
                r.int(0, "id", &(1..=MAX_ACCOUNT_ID))?,
                r.int(1, "balance", &BALANCE)?,
            ));
            Ok(())
        },
    )?;
    let counter = one_row(conn, "receipt_counter", "last_seq", &COUNTER, bad)?;
    let received_at = if version >= 2 { "received_at" } else { "0" };
    let sql = format!(
        "SELECT source, event_id, account_id, amount, receipt_seq, balance_after, {received_at} FROM inbox NOT INDEXED"
    );
    let last_seq = counter.unwrap_or(*COUNTER.end());
    // Each key and receipt number once: the indexes that should say so are
    // not trusted. A key maps to its row, for the outbox's check below.
    let mut keys = HashMap::new();
    let mut receipts = HashSet::new();
    each(conn, "inbox", &sql, bad, |r| {
        let event = r.event(0)?;
        let seq = r.opt_int(4, "receipt_seq", &RECEIPT)?;
        let after = r.opt_int(5, "balance_after", &BALANCE)?;
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
        let received_at = r.int(6, "received_at", &TIME)?;
        let key = (event.source().to_owned(), event.event_id().to_owned());
        if keys.contains_key(&key) {
            return Err(r.bad(
                "event_id",
                format!(
                    "the key ({:?}, {:?}) is stored twice: the unique key does not hold",
                    key.0, key.1
                ),
            ));
        }
        if let Some((seq, _)) = receipt {
            if !receipts.insert(seq) {
                return Err(r.bad(
                    "receipt_seq",
                    format!("receipt number {seq} is stored twice"),
                ));
            }
        }
        keys.insert(key, rows.inbox.len());
        rows.inbox.push(InboxRow {
            event,
            receipt,
            received_at,
        });
        Ok(())
    })?;
    // A counter dropped as unreadable is rebuilt from the receipts kept.
    let highest = rows
        .inbox
        .iter()
        .filter_map(|row| row.receipt)
        .map(|(seq, _)| seq)
        .max();
    rows.last_seq = counter.unwrap_or_else(|| highest.unwrap_or(0));
    if counter.is_none() {
        bad.meet(inconsistent(format!(
            "the receipt counter is set to {}, the highest receipt kept",
            rows.last_seq
        )))?;
    }
    if version < 2 {
        return Ok(rows);
    }
    // A clock dropped as unreadable is set to the latest arrival kept.
    let clock = one_row(conn, "lab_clock", "now", &TIME, bad)?;
    rows.clock = clock.unwrap_or_else(|| {
        rows.inbox
            .iter()
            .map(|row| row.received_at)
            .max()
            .unwrap_or(0)
    });
    if clock.is_none() {
        bad.meet(inconsistent(format!(
            "the lab clock is set to {} ms, the latest arrival kept",
            rows.clock
        )))?;
    }
    each(
        conn,
        "sqlite_sequence",
        "SELECT name, seq FROM sqlite_sequence",
        bad,
        |r| {
            if r.text(0, "name")? != "outbox" {
                return Err(r.bad("name", "only the outbox has a sequence"));
            }
            if rows.outbox_seq.is_some() {
                return Err(r.bad("name", "the outbox's sequence is stored twice"));
            }
            rows.outbox_seq = Some(r.int(1, "seq", &COUNTER)?);
            Ok(())
        },
    )?;
    // Salvaging without the sequence (dropped as unreadable, or absent): the
    // messages are not judged by it, and it is rebuilt from those kept below.
    let rebuild_seq = rows.outbox_seq.is_none() && matches!(bad, OnBadRow::Drop(_));
    let outbox_seq = rows
        .outbox_seq
        .unwrap_or(if rebuild_seq { i64::MAX } else { 0 });
    each(
        conn,
        "outbox",
        "SELECT source, event_id, account_id, amount, message_id, sent_at FROM outbox NOT INDEXED",
        bad,
        |r| {
            let message = OutboxRow {
                event: r.event(0)?,
                message_id: r.int(4, "message_id", &MESSAGE_ID)?,
                sent_at: r.opt_int(5, "sent_at", &TIME)?,
            };
            if message.message_id > outbox_seq {
                return Err(r.bad(
                    "message_id",
                    format!(
                        "message {} is above the outbox's sequence {outbox_seq}",
                        message.message_id
                    ),
                ));
            }
            let key = (
                message.event.source().to_owned(),
                message.event.event_id().to_owned(),
            );
            let applied = keys.get(&key).map(|&i| &rows.inbox[i]);
            if let Some(detail) = unfounded(&message, applied) {
                return Err(r.bad("message_id", detail));
            }
            rows.outbox.push(message);
            Ok(())
        },
    )?;
    let highest = rows.outbox.iter().map(|m| m.message_id).max();
    if let (true, Some(seq)) = (rebuild_seq, highest) {
        rows.outbox_seq = Some(seq);
        bad.meet(inconsistent(format!(
            "the outbox's sequence is set to {seq}, the highest message kept"
        )))?;
    }
    let mut orders = HashSet::new();
    each(
        conn,
        "orders",
        "SELECT order_id, source, event_id FROM orders NOT INDEXED",
        bad,
        |r| {
            let order = r.key(0, "order_id")?;
            let (source, event_id) = r.keys(1)?;
            if !orders.insert(order.clone()) {
                return Err(r.bad("order_id", format!("order {order:?} is stored twice")));
            }
            rows.orders.push((order, source, event_id));
            Ok(())
        },
    )?;
    let mut order_keys = HashSet::new();
    each(
        conn,
        "order_events",
        "SELECT source, event_id, order_id, result FROM order_events NOT INDEXED",
        bad,
        |r| {
            let (source, event_id) = r.keys(0)?;
            let order = r.key(2, "order_id")?;
            let result = r.text(3, "result")?;
            if !["activated", "already_active"].contains(&result.as_str()) {
                return Err(r.bad("result", "must be activated or already_active"));
            }
            if !order_keys.insert((source.clone(), event_id.clone())) {
                return Err(r.bad(
                    "event_id",
                    format!("the key ({source:?}, {event_id:?}) is stored twice"),
                ));
            }
            rows.order_events.push((source, event_id, order, result));
            Ok(())
        },
    )?;
    Ok(rows)
}

/// Why `message` cannot be one inbox-lab wrote, if it cannot. The outbox
/// gets a message only in the transaction that applies its event with the
/// atomic handler, so the inbox holds that event with a receipt and the
/// same payload — until a later mistaken handler (`insert_or_replace`)
/// rewrites the row without a receipt, which leaves the message as it was.
/// A purge keeps the row while its message waits (`retention::purge`); a
/// message already sent may outlive its row, and the key may then be applied
/// again with another payload: only a waiting message must match its row.
fn unfounded(message: &OutboxRow, applied: Option<&InboxRow>) -> Option<String> {
    let e = &message.event;
    let id = message.message_id;
    match applied {
        None if message.sent_at.is_none() => Some(format!(
            "message {id} waits to be sent for event ({:?}, {:?}), which the inbox does not hold: \
             a message is only written with its event's credit",
            e.source(),
            e.event_id()
        )),
        Some(row) if message.sent_at.is_none() && row.receipt.is_some() && row.event != *e => {
            Some(format!(
            "message {id} notifies {} to account {}, but event ({:?}, {:?}) credited {} to account {}",
            e.amount(),
            e.account_id(),
            e.source(),
            e.event_id(),
            row.event.amount(),
            row.event.account_id()
        ))
        }
        _ => None,
    }
}

/// Runs `sql` and hands each row to `f`, numbering rows from 1; a row `f`
/// refuses goes to `bad`.
fn each(
    conn: &Connection,
    table: &'static str,
    sql: &str,
    bad: &mut OnBadRow<'_>,
    mut f: impl FnMut(&Cells<'_, '_>) -> Result<(), Reason>,
) -> Result<(), Reason> {
    let mut stmt = conn
        .prepare(sql)
        .map_err(|e| schema_differs(format!("cannot read table {table}: {e}")))?;
    let mut cursor = stmt.query([]).map_err(unreadable_reason)?;
    let mut number = 0;
    while let Some(row) = cursor.next().map_err(unreadable_reason)? {
        number += 1;
        if let Err(reason) = f(&Cells { table, number, row }) {
            bad.meet(reason)?;
        }
    }
    Ok(())
}

/// The `column` of a table that holds exactly one row, `id` 1 (the
/// counter, the clock); `None` when its one row was dropped (only with
/// [`OnBadRow::Drop`]: the caller rebuilds the value).
fn one_row(
    conn: &Connection,
    table: &'static str,
    column: &str,
    range: &RangeInclusive<i64>,
    bad: &mut OnBadRow<'_>,
) -> Result<Option<i64>, Reason> {
    let mut values = Vec::new();
    let sql = format!("SELECT id, {column} FROM {table} NOT INDEXED");
    each(conn, table, &sql, bad, |r| {
        r.int(0, "id", &(1..=1))?;
        values.push(r.int(1, column, range)?);
        Ok(())
    })?;
    match (&values[..], bad) {
        ([value], _) => Ok(Some(*value)),
        ([], OnBadRow::Drop(_)) => Ok(None),
        _ => Err(inconsistent(format!(
            "table {table} must hold one row, it holds {}",
            values.len()
        ))),
    }
}

/// The [`InvalidCode::Inconsistent`] reason saying `detail`.
pub(crate) fn inconsistent(detail: String) -> Reason {
    Reason::new(
        InvalidCode::Inconsistent,
        format!("inconsistent data: {detail}"),
    )
    .with("detail", detail)
}

/// The [`InvalidCode::SchemaDiffers`] reason saying `detail`.
pub(crate) fn schema_differs(detail: String) -> Reason {
    Reason::new(
        InvalidCode::SchemaDiffers,
        format!("the tables are not inbox-lab's: {detail}"),
    )
    .with("detail", detail)
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

    /// An integer stored as an integer, in `range`.
    fn int(&self, i: usize, column: &str, range: &RangeInclusive<i64>) -> Result<i64, Reason> {
        match self.opt_int(i, column, range)? {
            Some(v) => Ok(v),
            None => Err(self.bad(column, "is NULL; an integer is required")),
        }
    }

    /// NULL, or an integer stored as an integer, in `range`.
    fn opt_int(
        &self,
        i: usize,
        column: &str,
        range: &RangeInclusive<i64>,
    ) -> Result<Option<i64>, Reason> {
        match self.value(i, column)? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(v) if range.contains(&v) => Ok(Some(v)),
            ValueRef::Integer(v) => Err(self.bad(
                column,
                format!("{v} is outside {}..={}", range.start(), range.end()),
            )),
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
        let account_id = self.int(i + 2, "account_id", &ANY)?;
        let amount = self.int(i + 3, "amount", &ANY)?;
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
