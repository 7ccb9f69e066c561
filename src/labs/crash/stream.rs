//! The random-kill stream: a sender delivers [`event`]`(0)`, `event(1)`, …
//! in order; the worker is killed at random moments and a new one reopens
//! the database. [`check`] is the verdict after each reopening.
//!
//! Invariant: the check only reads, and it compares what survived with
//! [`event`], the one definition of what the sender sent.

use std::collections::BTreeSet;

use rusqlite::Connection;
use serde::Serialize;

use crate::core::error::Error;
use crate::core::event::Field;
use crate::core::tables;
use crate::Event;

/// The stream's source.
const SOURCE: &str = "random-kills";

/// The input naming the stream's events the sender heard "200" for.
pub const ACKNOWLEDGED: Field = Field::new("acknowledged");

/// The stream's `j`-th event: `kill-<j>`, account 1, amount `1 + j % 9`
/// (distinct keys; amounts 1 to 9).
///
/// # Errors
/// None in practice: the values always pass [`Event::new`]'s rules.
pub fn event(j: usize) -> Result<Event, Error> {
    // `j % 9` is below 9, so the cast is exact.
    Event::new(SOURCE, format!("kill-{j}"), 1, 1 + (j % 9) as i64)
}

/// The verdict on a reopened stream database. `partial` and `lost` list
/// what is wrong (both empty when all is well).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamCheck {
    /// Something half-done survived: integrity, a payload, the balance or
    /// a receipt disagrees.
    pub partial: Vec<String>,
    /// An acknowledged event is gone, or an earlier one while a later one
    /// survived.
    pub lost: Vec<String>,
    /// Account 1's balance (`None` if the account is missing).
    pub balance: Option<i64>,
    /// The sum of the amounts of the stream's inbox rows.
    pub expected: i64,
    /// How many of the stream's events are in the inbox.
    pub applied: usize,
}

/// Checks a reopened stream database against what the sender knows:
/// `acknowledged` holds the indexes of the events answered "200".
///
/// * `PRAGMA integrity_check` is `ok`;
/// * each stored row is exactly the [`event`] the sender sent;
/// * the balance is the sum of the inbox rows;
/// * in receipt order, each receipt's `balance_after` is the running sum
///   (no credit went missing between two commits);
/// * every acknowledged event is there;
/// * the applied events are `0 … n-1` (the sender streams in order, so a
///   hole is a commit that did not survive while a later one did).
///
/// # Errors
/// Storage errors while reading.
pub fn check(conn: &Connection, acknowledged: &[usize]) -> Result<StreamCheck, Error> {
    let mut partial = Vec::new();
    let mut lost = Vec::new();
    let integrity = super::integrity(conn)?;
    if integrity != "ok" {
        partial.push(format!("integrity_check: {integrity}"));
    }
    let t = tables::snapshot(conn)?;
    let balance = t.balance(1);
    let mut rows: Vec<&tables::InboxRow> = t.inbox.iter().filter(|r| r.source == SOURCE).collect();

    let mut applied = BTreeSet::new();
    for row in &rows {
        let sent = row
            .event_id
            .strip_prefix("kill-")
            .and_then(|j| j.parse::<usize>().ok())
            .map(|j| (j, event(j)))
            .filter(|(_, e)| matches!(e, Ok(e) if e.event_id() == row.event_id));
        let Some((j, sent)) = sent else {
            partial.push(format!("{} is not an event of the stream", row.event_id));
            continue;
        };
        let sent = sent?;
        applied.insert(j);
        if row.account_id != sent.account_id() || row.amount != sent.amount() {
            partial.push(format!(
                "{} stored with account {}, amount {}",
                row.event_id, row.account_id, row.amount
            ));
        }
    }

    let expected = rows
        .iter()
        .fold(0i64, |sum, r| sum.saturating_add(r.amount));
    if balance != Some(expected) {
        let balance = balance.map_or("missing".to_owned(), |b| b.to_string());
        partial.push(format!(
            "balance {balance}, but the inbox rows add up to {expected}"
        ));
    }

    // Each receipt records the balance right after its own commit: in
    // receipt order they must be the running sum. Rows without one go last.
    rows.sort_by_key(|r| r.receipt.as_ref().map_or(i64::MAX, |receipt| receipt.seq));
    let mut running = 0i64;
    for row in &rows {
        running = running.saturating_add(row.amount);
        let id = &row.event_id;
        match row.receipt.as_ref().map(|r| r.balance_after) {
            Some(after) if after == running => {}
            Some(after) => {
                partial.push(format!(
                    "{id}: receipt says balance {after}, running sum {running}"
                ));
                break;
            }
            None => {
                partial.push(format!("{id}: no receipt, running sum {running}"));
                break;
            }
        }
    }

    for &j in acknowledged {
        if !applied.contains(&j) {
            lost.push(format!("kill-{j} was acknowledged but is gone"));
        }
    }
    if let Some(j) = (0..applied.len()).find(|j| !applied.contains(j)) {
        lost.push(format!(
            "kill-{j} is missing although later events were applied"
        ));
    }

    Ok(StreamCheck {
        partial,
        lost,
        balance,
        expected,
        applied: applied.len(),
    })
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;
    use crate::apply;
    use crate::core::schema;

    /// A stream database with the events `applied` delivered in that order.
    fn db(applied: &[usize]) -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut conn, &[1]).unwrap();
        for &j in applied {
            apply(&conn, &event(j).unwrap(), None).unwrap();
        }
        conn
    }

    fn sql(conn: &Connection, sql: &str) {
        conn.execute_batch(sql).unwrap();
    }

    #[test]
    fn the_events_are_the_stream_s() {
        let e = event(10).unwrap();
        assert_eq!(
            (e.source(), e.event_id(), e.account_id(), e.amount()),
            ("random-kills", "kill-10", 1, 2)
        );
        assert_eq!(event(8).unwrap().amount(), 9);
        assert_eq!(event(9).unwrap().amount(), 1);
    }

    #[test]
    fn a_clean_stream_has_no_findings() {
        let conn = db(&[0, 1, 2, 3]);
        let c = check(&conn, &[0, 2, 3]).unwrap();
        assert_eq!(
            c,
            StreamCheck {
                partial: vec![],
                lost: vec![],
                balance: Some(1 + 2 + 3 + 4),
                expected: 10,
                applied: 4,
            }
        );
        // Nothing applied yet is clean too.
        assert_eq!(check(&db(&[]), &[]).unwrap().applied, 0);
    }

    #[test]
    fn an_inbox_row_without_its_credit_is_partial() {
        let conn = db(&[0, 1]);
        // Registered, never credited: a half-applied kill-2.
        sql(
            &conn,
            "INSERT INTO inbox(source, event_id, account_id, amount)
             VALUES ('random-kills', 'kill-2', 1, 3)",
        );
        let c = check(&conn, &[0, 1]).unwrap();
        assert_eq!(
            c.partial,
            [
                "balance 3, but the inbox rows add up to 6",
                "kill-2: no receipt, running sum 6",
            ]
        );
        assert!(c.lost.is_empty(), "{:?}", c.lost);
        assert_eq!((c.balance, c.expected, c.applied), (Some(3), 6, 3));
    }

    #[test]
    fn a_credit_without_its_inbox_row_is_partial() {
        let conn = db(&[0]);
        sql(
            &conn,
            "UPDATE accounts SET balance = balance + 2 WHERE id = 1",
        );
        let c = check(&conn, &[0]).unwrap();
        assert_eq!(c.partial, ["balance 3, but the inbox rows add up to 1"]);
    }

    #[test]
    fn a_stored_payload_other_than_the_one_sent_is_partial() {
        let conn = db(&[0, 1]);
        sql(
            &conn,
            "UPDATE inbox SET amount = 7 WHERE event_id = 'kill-1'",
        );
        let c = check(&conn, &[0, 1]).unwrap();
        assert_eq!(c.partial[0], "kill-1 stored with account 1, amount 7");
        // The balance and the receipt disagree with that row too.
        assert_eq!(c.partial.len(), 3, "{:?}", c.partial);
    }

    #[test]
    fn a_receipt_off_the_running_sum_is_partial() {
        let conn = db(&[0, 1, 2]);
        sql(
            &conn,
            "UPDATE inbox SET balance_after = 99 WHERE event_id = 'kill-1'",
        );
        let c = check(&conn, &[0, 1, 2]).unwrap();
        assert_eq!(
            c.partial,
            ["kill-1: receipt says balance 99, running sum 3"]
        );
        assert!(c.lost.is_empty());
    }

    #[test]
    fn a_missing_acknowledged_event_is_lost() {
        let conn = db(&[0, 1]);
        let c = check(&conn, &[0, 1, 2]).unwrap();
        assert!(c.partial.is_empty(), "{:?}", c.partial);
        assert_eq!(c.lost, ["kill-2 was acknowledged but is gone"]);
    }

    #[test]
    fn a_hole_before_a_later_event_is_lost() {
        // kill-2 never survived, kill-3 did: not a prefix.
        let conn = db(&[0, 1, 3]);
        let c = check(&conn, &[]).unwrap();
        assert!(c.partial.is_empty(), "{:?}", c.partial);
        assert_eq!(
            c.lost,
            ["kill-2 is missing although later events were applied"]
        );
        assert_eq!(c.applied, 3);
    }

    #[test]
    fn a_row_that_is_no_event_of_the_stream_is_partial() {
        let conn = db(&[0]);
        apply(&conn, &Event::new(SOURCE, "kill-01", 1, 2).unwrap(), None).unwrap();
        let c = check(&conn, &[0]).unwrap();
        assert_eq!(c.partial, ["kill-01 is not an event of the stream"]);
        assert_eq!(c.applied, 1);
    }

    #[test]
    fn other_sources_are_not_the_stream_s() {
        let conn = db(&[0]);
        apply(
            &conn,
            &Event::new("elsewhere", "kill-5", 1, 4).unwrap(),
            None,
        )
        .unwrap();
        let c = check(&conn, &[0]).unwrap();
        // Their credit is in the balance but not in the stream's rows.
        assert_eq!(c.partial[0], "balance 5, but the inbox rows add up to 1");
        assert_eq!(c.applied, 1);
    }
}
