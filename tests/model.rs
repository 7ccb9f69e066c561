//! Model-based property test: random delivery histories applied with the
//! atomic handler must agree with a tiny reference model — every outcome,
//! every receipt, every balance, every inbox row.
//!
//! The model is deliberately naive (a map and a few `if`s): it states what
//! the article promises, without SQL. If the two ever disagree, proptest
//! shrinks the history to a short, readable counterexample.
#![cfg(not(target_family = "wasm"))]

use std::collections::BTreeMap;

use inbox_lab::core::schema::{self, MAX_BALANCE};
use inbox_lab::{apply, core::tables, Error, Event, Fault, Outcome, Receipt};
use proptest::prelude::*;
use rusqlite::Connection;

/// Accounts that exist: 1 and 2 start at 0, 3 starts near the balance limit
/// so histories can hit it. Account 4 never exists.
const START: [(i64, i64); 3] = [(1, 0), (2, 0), (3, MAX_BALANCE - 1_500)];

/// One delivery attempt as a sender makes it.
#[derive(Debug, Clone)]
struct Delivery {
    source: &'static str,
    event_id: &'static str,
    account_id: i64,
    amount: i64,
    fault: Option<Fault>,
}

fn delivery() -> impl Strategy<Value = Delivery> {
    (
        prop::sample::select(vec!["provider-a", "provider-b", " provider-a", ""]),
        prop::sample::select(vec!["evt-1", "evt-2", "evt-3", "evt-1 ", "Evt-1"]),
        prop::sample::select(vec![1i64, 1, 1, 2, 3, 4, 0]),
        prop::sample::select(vec![500i64, 500, 700, 1, 1_000, 0, -1, 1_000_000_001]),
        prop::sample::select(vec![
            None,
            None,
            None,
            Some(Fault::AfterInsert),
            Some(Fault::AfterUpdate),
        ]),
    )
        .prop_map(|(source, event_id, account_id, amount, fault)| Delivery {
            source,
            event_id,
            account_id,
            amount,
            fault,
        })
}

/// A history: deliveries, where a sender's retry repeats an earlier one
/// (same payload, no fault) — the way lost responses turn into duplicates.
fn history() -> impl Strategy<Value = Vec<Delivery>> {
    prop::collection::vec(
        (
            delivery(),
            any::<prop::sample::Index>(),
            prop::bool::weighted(0.3),
        ),
        1..30,
    )
    .prop_map(|items| {
        let mut out: Vec<Delivery> = Vec::new();
        for (d, pick, retry) in items {
            if retry && !out.is_empty() {
                let mut again = out[pick.index(out.len())].clone();
                again.fault = None;
                out.push(again);
            } else {
                out.push(d);
            }
        }
        out
    })
}

/// The reference model: what the article promises, with no SQL.
#[derive(Default)]
struct Model {
    balances: BTreeMap<i64, i64>,
    inbox: BTreeMap<(String, String), (i64, i64, Receipt)>,
    last_seq: i64,
}

impl Model {
    fn new() -> Self {
        let mut m = Model::default();
        m.balances.extend(START);
        m
    }

    /// The answer's kind (and receipt for successes).
    fn deliver(&mut self, d: &Delivery) -> Result<Outcome, &'static str> {
        if Event::new(d.source, d.event_id, d.account_id, d.amount).is_err() {
            return Err("invalid_input");
        }
        let key = (d.source.to_owned(), d.event_id.to_owned());
        if let Some(&(account_id, amount, receipt)) = self.inbox.get(&key) {
            return if (account_id, amount) == (d.account_id, d.amount) {
                Ok(Outcome::Duplicate(receipt))
            } else {
                Err("payload_conflict")
            };
        }
        let Some(&balance) = self.balances.get(&d.account_id) else {
            return Err("unknown_account");
        };
        if d.fault == Some(Fault::AfterInsert) {
            return Err("simulated_crash");
        }
        if balance > MAX_BALANCE - d.amount {
            return Err("balance_limit");
        }
        if d.fault == Some(Fault::AfterUpdate) {
            return Err("simulated_crash");
        }
        self.last_seq += 1;
        let receipt = Receipt {
            seq: self.last_seq,
            balance_after: balance + d.amount,
        };
        self.balances.insert(d.account_id, balance + d.amount);
        self.inbox.insert(key, (d.account_id, d.amount, receipt));
        Ok(Outcome::Applied(receipt))
    }
}

fn database() -> Connection {
    let mut conn = Connection::open_in_memory().expect("memory db");
    schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).expect("prepare");
    schema::init(&mut conn, &[1, 2, 3]).expect("init");
    conn.execute(
        "UPDATE accounts SET balance = ?1 WHERE id = 3",
        [START[2].1],
    )
    .expect("near-limit account");
    conn
}

fn real(conn: &Connection, d: &Delivery) -> Result<Outcome, &'static str> {
    match Event::new(d.source, d.event_id, d.account_id, d.amount) {
        Err(e) => Err(e.kind()),
        Ok(event) => apply(conn, &event, d.fault).map_err(|e: Error| e.kind()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    /// Every outcome, balance and inbox row of the atomic handler equals the
    /// model's, over 10,000 random histories with retries, faults, other
    /// sources, mismatched payloads, missing accounts and the balance limit.
    #[test]
    fn atomic_handler_matches_the_model(history in history()) {
        let conn = database();
        let mut model = Model::new();
        for (step, d) in history.iter().enumerate() {
            let expected = model.deliver(d);
            let got = real(&conn, d);
            prop_assert_eq!(got, expected, "delivery #{} {:?}", step, d);
        }
        let t = tables::snapshot(&conn).expect("tables");
        let balances: BTreeMap<i64, i64> = t.accounts.iter().map(|a| (a.id, a.balance)).collect();
        prop_assert_eq!(balances, model.balances);
        let t_rows = t.inbox.len();
        let inbox: BTreeMap<(String, String), (i64, i64, Receipt)> = t
            .inbox
            .into_iter()
            .filter_map(|r| Some(((r.source, r.event_id), (r.account_id, r.amount, r.receipt?))))
            .collect();
        prop_assert_eq!(inbox.len(), t_rows, "every inbox row keeps its receipt");
        prop_assert_eq!(inbox, model.inbox);
    }
}

/// The model itself is checked against the article's story, so a wrong
/// model cannot make the property pass vacuously.
#[test]
fn the_model_tells_the_articles_story() {
    let mut m = Model::new();
    let d = |event_id, amount, fault| Delivery {
        source: "provider-a",
        event_id,
        account_id: 1,
        amount,
        fault,
    };
    let first = m.deliver(&d("evt-1", 500, None)).expect("applied");
    assert!(matches!(first, Outcome::Applied(_)));
    assert_eq!(
        m.deliver(&d("evt-1", 500, None)),
        Ok(Outcome::Duplicate(first.receipt()))
    );
    assert_eq!(m.deliver(&d("evt-1", 700, None)), Err("payload_conflict"));
    assert_eq!(
        m.deliver(&d("evt-2", 500, Some(Fault::AfterInsert))),
        Err("simulated_crash")
    );
    assert!(matches!(
        m.deliver(&d("evt-2", 500, None)),
        Ok(Outcome::Applied(_))
    ));
    assert_eq!(m.deliver(&d("evt-3", 0, None)), Err("invalid_input"));
    assert_eq!(m.balances[&1], 1000);
}
