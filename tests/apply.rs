#![cfg(all(not(target_family = "wasm"), feature = "labs"))]
//! The apply transaction on real file databases: the article's scenario with
//! real threads, its three exercises, every error kind, the busy and balance
//! limits, the fault points, receipts, and the step-by-step [`Delivery`].
//!
//! Every test opens its own database in its own temporary directory, through
//! the same [`db::open`] the CLI uses, and checks the tables with plain SQL
//! where "nothing was written" is the point.

use std::path::Path;
use std::time::{Duration, Instant};

use inbox_lab::cli::{deliver_concurrently, run_demo};
use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::event::MAX_AMOUNT;
use inbox_lab::core::schema::{self, DEFAULT_BUSY_TIMEOUT, MAX_BALANCE};
use inbox_lab::core::tables::{self, Tables};
use inbox_lab::{
    apply, labs::tools::scenario, Delivery, Effect, Error, Event, Fault, Field, Outcome, Progress,
    Receipt,
};
use rusqlite::{params, Connection};
use tempfile::TempDir;

// ---- helpers ----------------------------------------------------------------------------------

/// A fresh inbox-lab database file holding `accounts` at balance 0.
struct Lab {
    _dir: TempDir,
    path: String,
}

impl Lab {
    fn new(accounts: &[i64]) -> Lab {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("lab.sqlite3");
        let path = path.to_str().expect("UTF-8 temp path").to_owned();
        let mut conn = db::open(&path, Mode::Create, DEFAULT_BUSY_TIMEOUT).expect("create db");
        schema::init(&mut conn, accounts).expect("init");
        Lab { _dir: dir, path }
    }

    /// A new connection, as a new request handler would open it.
    fn open(&self) -> Connection {
        db::open(&self.path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open db")
    }
}

fn event(source: &str, event_id: &str, account_id: i64, amount: i64) -> Event {
    Event::new(source, event_id, account_id, amount).expect("valid test event")
}

fn applied(seq: i64, balance_after: i64) -> Outcome {
    Outcome::Applied(Receipt { seq, balance_after })
}

fn duplicate(seq: i64, balance_after: i64) -> Outcome {
    Outcome::Duplicate(Receipt { seq, balance_after })
}

fn inbox_rows(conn: &Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM inbox", [], |r| r.get(0))
        .expect("count inbox")
}

fn inbox_has(conn: &Connection, e: &Event) -> bool {
    conn.query_row(
        "SELECT count(*) FROM inbox WHERE source = ?1 AND event_id = ?2",
        params![e.source(), e.event_id()],
        |r| r.get::<_, i64>(0),
    )
    .expect("look up inbox row")
        == 1
}

fn balance(conn: &Connection, account_id: i64) -> i64 {
    conn.query_row(
        "SELECT balance FROM accounts WHERE id = ?1",
        [account_id],
        |r| r.get(0),
    )
    .expect("read balance")
}

fn last_seq(conn: &Connection) -> i64 {
    conn.query_row("SELECT last_seq FROM receipt_counter", [], |r| r.get(0))
        .expect("read receipt counter")
}

fn snapshot(conn: &Connection) -> Tables {
    tables::snapshot(conn).expect("snapshot")
}

/// Runs a delivery one step at a time, recording which step ran.
fn run_steps(conn: &Connection, delivery: &mut Delivery) -> (Vec<inbox_lab::Step>, Outcome) {
    let mut steps = Vec::new();
    loop {
        let step = delivery
            .next_step()
            .expect("an unfinished delivery has a next step");
        steps.push(step);
        match delivery.step(conn).expect("step") {
            Progress::Next(next) => assert_eq!(delivery.next_step(), Some(next)),
            Progress::Done(outcome) => return (steps, outcome),
        }
    }
}

// ---- the article's scenario -------------------------------------------------------------------

/// The article's whole scenario, with 8 real threads, prints the script's OK line.
#[test]
fn the_demo_passes_every_check_of_the_article() {
    let report = run_demo().expect("demo database");
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(
        report.summary(),
        "OK: balance=1500, inbox=3, applied=1, duplicate=19"
    );
    assert_eq!(report.checks.len(), 10, "{:#?}", report.checks);
}

/// The scenario's report says what differed when a check fails: a burst that
/// only ever met a locked database is not "19 duplicates".
#[test]
fn the_scenario_report_names_the_checks_that_failed() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    let report = scenario::run(&conn, |_| {
        (0..scenario::BURST).map(|_| Err(Error::Busy)).collect()
    })
    .expect("report");
    assert!(!report.passed());
    let summary = report.summary();
    assert!(summary.starts_with("FAILED: "), "{summary}");
    assert!(
        summary.contains("evt-3 burst applied: expected 1, got 0"),
        "{summary}"
    );
    assert!(
        summary.contains("evt-3 burst duplicate: expected 19, got 0"),
        "{summary}"
    );
    assert!(
        summary.contains("balance of account 1: expected 1500, got 1000"),
        "{summary}"
    );
}

/// 20 deliveries of one event from 8 threads, each with its own connection:
/// the unique key lets exactly one of them apply, the 19 others are
/// duplicates carrying the winner's receipt, and the balance is credited once.
/// Five rounds, to give the race five chances to show.
#[test]
fn twenty_concurrent_deliveries_apply_exactly_once() {
    let lab = Lab::new(&[1]);
    for round in 0..5_i64 {
        let e = event("provider-a", &format!("evt-{round}"), 1, 500);
        let results = deliver_concurrently(Path::new(&lab.path), &e, 20, 8);
        assert_eq!(results.len(), 20);
        let outcomes: Vec<Outcome> = results
            .into_iter()
            .map(|r| r.expect("no delivery may fail, none may be busy"))
            .collect();
        let winners: Vec<&Outcome> = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Applied(_)))
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {outcomes:?}");
        let receipt = winners[0].receipt();
        assert_eq!(
            receipt,
            Receipt {
                seq: round + 1,
                balance_after: 500 * (round + 1)
            }
        );
        let duplicates = outcomes
            .iter()
            .filter(|o| **o == Outcome::Duplicate(receipt))
            .count();
        assert_eq!(duplicates, 19, "round {round}: {outcomes:?}");
    }
    let conn = lab.open();
    assert_eq!(balance(&conn, 1), 2500);
    assert_eq!(inbox_rows(&conn), 5);
}

// ---- the article's exercises -------------------------------------------------------------------

/// Exercise 1: the source is part of the key, so `evt-1` from `provider-b`
/// is a new event and grows the balance.
#[test]
fn exercise_1_the_same_event_id_from_another_source_is_a_new_event() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    let a = event("provider-a", "evt-1", 1, 500);
    let b = event("provider-b", "evt-1", 1, 500);
    assert_eq!(apply(&conn, &a, None), Ok(applied(1, 500)));
    assert_eq!(apply(&conn, &b, None), Ok(applied(2, 1000)));
    assert_eq!(apply(&conn, &b, None), Ok(duplicate(2, 1000)));
    assert_eq!(balance(&conn, 1), 1000);
    assert_eq!(inbox_rows(&conn), 2);
}

/// Exercise 2: crediting a missing account is `unknown_account` (422, do not
/// retry); the foreign key refused the inbox row, so the event was not
/// registered and applies once the account exists.
#[test]
fn exercise_2_a_missing_account_leaves_the_inbox_untouched() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    let e = event("provider-a", "evt-1", 2, 500);
    let err = apply(&conn, &e, None).unwrap_err();
    assert_eq!(err, Error::UnknownAccount { account_id: 2 });
    assert_eq!(
        (err.kind(), err.http_status(), err.retryable()),
        ("unknown_account", 422, false)
    );
    assert_eq!(inbox_rows(&conn), 0);
    assert_eq!(last_seq(&conn), 0, "no receipt number was used up");
    assert!(conn.is_autocommit(), "the transaction was closed");
    // The foreign key refuses the INSERT itself, before the first fault point
    // is reached: this only holds because every connection turns it on.
    let fk: i64 = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .expect("pragma");
    assert_eq!(fk, 1);
    assert_eq!(
        apply(&conn, &e, Some(Fault::AfterInsert)),
        Err(Error::UnknownAccount { account_id: 2 })
    );
    assert_eq!(inbox_rows(&conn), 0);
    // Not registered, so not a duplicate later: it applies once the account exists.
    assert!(schema::add_account(&conn, 2).expect("add account"));
    assert_eq!(apply(&conn, &e, None), Ok(applied(1, 500)));
}

/// Exercise 3: a replay answers with the stored receipt of the first
/// application, byte for byte — also from a new connection after the first
/// one closed (the receipt lives in the database, not in memory).
#[test]
fn exercise_3_a_replay_returns_the_first_receipt_byte_identical() {
    let lab = Lab::new(&[1]);
    let e = event("provider-a", "evt-1", 1, 500);
    let first = {
        let conn = lab.open();
        apply(&conn, &e, None).expect("first delivery")
    };
    assert!(matches!(first, Outcome::Applied(_)));
    let first_json = serde_json::to_string(&first.receipt()).expect("json");
    assert_eq!(first_json, r#"{"seq":1,"balance_after":500}"#);

    // Move on: the balance changes, the receipt of evt-1 must not.
    let conn = lab.open();
    apply(&conn, &event("provider-a", "evt-2", 1, 250), None).expect("evt-2");
    drop(conn);

    let conn = lab.open();
    let replay = apply(&conn, &e, None).expect("replay");
    assert_eq!(replay, Outcome::Duplicate(first.receipt()));
    assert_eq!(
        serde_json::to_string(&replay.receipt()).expect("json"),
        first_json
    );
    let wire = |o: &Outcome| serde_json::to_value(o).expect("json")["receipt"].to_string();
    assert_eq!(wire(&replay), wire(&first));
    assert_eq!(balance(&conn, 1), 750);
}

// ---- errors -------------------------------------------------------------------------------------

/// Every error kind, each caused for real, with the status a webhook handler
/// answers and whether the sender should retry; the JSON report carries
/// exactly those fields (plus `field` for invalid input).
#[test]
fn every_error_kind_has_its_status_and_retry_advice() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    let e = event("provider-a", "evt-1", 1, 500);
    apply(&conn, &e, None).expect("first delivery");

    let invalid = Event::new("provider-a", "evt-1", 1, 0).unwrap_err();
    let conflict = apply(&conn, &event("provider-a", "evt-1", 1, 700), None).unwrap_err();
    let unknown = apply(&conn, &event("provider-a", "evt-2", 9, 500), None).unwrap_err();
    conn.execute(
        "UPDATE accounts SET balance = ?1 WHERE id = 1",
        [MAX_BALANCE],
    )
    .expect("set balance");
    let limit = apply(&conn, &event("provider-a", "evt-3", 1, 1), None).unwrap_err();
    let crash = apply(
        &conn,
        &event("provider-a", "evt-4", 1, 1),
        Some(Fault::AfterInsert),
    )
    .unwrap_err();
    let busy = {
        let holder = lab.open();
        holder.execute_batch("BEGIN IMMEDIATE").expect("lock");
        let impatient =
            db::open(&lab.path, Mode::Existing, Duration::from_millis(50)).expect("open");
        apply(&impatient, &event("provider-a", "evt-5", 1, 1), None).unwrap_err()
    };
    let storage = {
        conn.pragma_update(None, "user_version", 99)
            .expect("pragma");
        db::open(&lab.path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).unwrap_err()
    };

    let table = [
        (&invalid, "invalid_input", 400, false),
        (&conflict, "payload_conflict", 422, false),
        (&unknown, "unknown_account", 422, false),
        (&limit, "balance_limit", 422, false),
        (&busy, "busy", 503, true),
        (&crash, "simulated_crash", 500, true),
        // A newer schema fails the same way on every retry: not retryable.
        (&storage, "storage", 500, false),
    ];
    for (err, kind, status, retryable) in table {
        assert_eq!(
            (err.kind(), err.http_status(), err.retryable()),
            (kind, status, retryable),
            "{err:?}"
        );
        let report = serde_json::to_value(err.report()).expect("json");
        let mut keys: Vec<&str> = report
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut expected = vec![
            "code",
            "http_status",
            "kind",
            "message",
            "params",
            "retryable",
        ];
        if kind == "invalid_input" {
            expected.push("field");
            expected.sort_unstable();
        }
        assert_eq!(keys, expected, "{report}");
        assert_eq!(report["kind"], kind);
        assert_eq!(report["http_status"], status);
        assert_eq!(report["retryable"], retryable);
        assert_eq!(report["message"], err.to_string());
        assert!(!err.to_string().is_empty());
    }
    assert_eq!(invalid.report().field, Some(Field::AMOUNT));
    assert_eq!(
        conflict,
        Error::PayloadConflict {
            event_source: "provider-a".into(),
            event_id: "evt-1".into(),
            stored_account_id: 1,
            stored_amount: 500,
            account_id: 1,
            amount: 700,
        }
    );
    assert_eq!(crash, Fault::AfterInsert.crash());
    assert_eq!(busy, Error::Busy);
}

/// Amount 0 is invalid input (400), never a duplicate or a conflict, even for
/// an event id that was applied: validation runs before any SQL, so such a
/// delivery cannot reach the database at all.
#[test]
fn amount_zero_is_invalid_input_never_a_duplicate() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    apply(&conn, &event("provider-a", "evt-1", 1, 500), None).expect("first delivery");
    for amount in ["0", "-0", "-500"] {
        let err = Event::from_text("provider-a", "evt-1", "1", amount).unwrap_err();
        assert_eq!(err.kind(), "invalid_input", "amount {amount:?}");
        assert_eq!(err.report().field, Some(Field::AMOUNT));
    }
    assert_eq!(
        Event::new("provider-a", "evt-1", 1, 0).unwrap_err().kind(),
        "invalid_input"
    );
    assert_eq!((inbox_rows(&conn), balance(&conn, 1)), (1, 500));
}

/// A connection that cannot get the write lock within its busy timeout gets
/// `busy` (503, retry) — not "duplicate": not getting the lock proves nothing
/// about earlier deliveries. Nothing is written, and once the lock is free the
/// same event applies, which shows it had never been processed.
#[test]
fn a_held_write_lock_is_busy_never_duplicate() {
    let lab = Lab::new(&[1]);
    let holder = lab.open();
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the lock");

    let impatient = db::open(&lab.path, Mode::Existing, Duration::from_millis(50)).expect("open");
    let e = event("provider-a", "evt-1", 1, 500);
    let started = Instant::now();
    let err = apply(&impatient, &e, None).unwrap_err();
    assert_eq!(err, Error::Busy);
    assert_eq!(
        (err.kind(), err.http_status(), err.retryable()),
        ("busy", 503, true)
    );
    assert!(
        started.elapsed() >= Duration::from_millis(45),
        "it waited for the busy timeout first, not {:?}",
        started.elapsed()
    );
    assert!(impatient.is_autocommit(), "no transaction left open");

    holder.execute_batch("ROLLBACK").expect("release the lock");
    // Nothing was written by the busy delivery...
    assert_eq!((inbox_rows(&impatient), last_seq(&impatient)), (0, 0));
    assert_eq!(balance(&impatient, 1), 0);
    // ...so the same event now applies: it was not a duplicate.
    assert_eq!(apply(&impatient, &e, None), Ok(applied(1, 500)));
}

/// Even while another handler is half-way through *the same event* (its inbox
/// row inserted, not committed), a second delivery answers `busy`, not
/// "already processed": the first may still roll back — and here it does, so
/// the retry applies.
#[test]
fn an_in_flight_delivery_of_the_same_event_is_not_proof_of_success() {
    let lab = Lab::new(&[1]);
    let first = lab.open();
    let e = event("provider-a", "evt-1", 1, 500);
    let mut in_flight = Delivery::new(e.clone(), None);
    for _ in 0..3 {
        in_flight.step(&first).expect("step"); // Begin, Insert, Credit
    }
    assert_eq!(in_flight.next_step(), Some(inbox_lab::Step::StoreReceipt));

    let second = db::open(&lab.path, Mode::Existing, Duration::from_millis(50)).expect("open");
    let (answer, trace) = inbox_lab::apply_traced(&second, &e, None);
    assert_eq!(answer, Err(Error::Busy));
    // What the busy delivery did: it tried BEGIN and got no further.
    assert_eq!(effects(&trace), [("begin", 0, Effect::Failed)]);
    // The one in flight: three steps in its open transaction...
    assert_eq!(
        effects(in_flight.trace()),
        [
            ("begin", 0, Effect::Open),
            ("insert", 1, Effect::Open),
            ("credit", 1, Effect::Open)
        ]
    );

    in_flight.abort(&first).expect("abort");
    // ...all undone by its ROLLBACK.
    assert_eq!(
        effects(in_flight.trace()),
        [
            ("begin", 0, Effect::RolledBack),
            ("insert", 1, Effect::RolledBack),
            ("credit", 1, Effect::RolledBack),
            ("rollback", 0, Effect::Kept)
        ]
    );
    assert_eq!(apply(&second, &e, None), Ok(applied(1, 500)));
}

/// A trace as `(op, rows, effect)` triples.
fn effects(trace: &inbox_lab::Trace) -> Vec<(&'static str, usize, Effect)> {
    trace
        .steps()
        .iter()
        .map(|s| (s.op, s.rows, s.effect))
        .collect()
}

/// The balance may reach 2^53-1 exactly (the largest integer JavaScript holds
/// exactly) but never pass it: that credit is `balance_limit` (422) with
/// nothing written, and the balance stays an INTEGER, never a REAL.
#[test]
fn the_balance_stops_at_two_to_the_53_minus_one() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    apply(&conn, &event("provider-a", "evt-0", 1, 1), None).expect("a first receipt");
    let start = MAX_BALANCE - 100;
    conn.execute("UPDATE accounts SET balance = ?1 WHERE id = 1", [start])
        .expect("set balance");

    let past = event("provider-a", "evt-1", 1, 101);
    let err = apply(&conn, &past, None).unwrap_err();
    assert_eq!(
        err,
        Error::BalanceLimit {
            account_id: 1,
            balance: start,
            amount: 101,
            limit: MAX_BALANCE
        }
    );
    assert_eq!(
        (err.kind(), err.http_status(), err.retryable()),
        ("balance_limit", 422, false)
    );
    assert!(!inbox_has(&conn, &past), "the inbox row was rolled back");
    assert_eq!(balance(&conn, 1), start);
    assert_eq!(last_seq(&conn), 1);

    // Exactly reaching the limit is allowed.
    assert_eq!(
        apply(&conn, &event("provider-a", "evt-2", 1, 100), None),
        Ok(applied(2, MAX_BALANCE))
    );
    // At the limit, even the largest single amount is refused, and the sum
    // never turned into a float.
    let big = event("provider-a", "evt-3", 1, MAX_AMOUNT);
    assert_eq!(
        apply(&conn, &big, None).unwrap_err().kind(),
        "balance_limit"
    );
    assert!(!inbox_has(&conn, &big));
    let (value, kind): (i64, String) = conn
        .query_row(
            "SELECT balance, typeof(balance) FROM accounts WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("read balance");
    assert_eq!((value, kind.as_str()), (MAX_BALANCE, "integer"));
    assert_eq!(last_seq(&conn), 2);
}

/// Storage errors (500; not retryable: the same file fails the same way
/// every time): a file that is not a database is refused and
/// left byte-for-byte as it was; a database written by a newer schema version
/// is refused in both modes; a database with foreign tables is not adopted.
#[test]
fn storage_errors_refuse_what_is_not_an_inbox_lab_database() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path_of = |name: &str| dir.path().join(name).to_str().expect("UTF-8").to_owned();

    let text = path_of("notes.sqlite3");
    let bytes = "this is a text file, not a database\n".repeat(64);
    std::fs::write(&text, &bytes).expect("write");
    for mode in [Mode::Existing, Mode::Create] {
        let err = db::open(&text, mode, DEFAULT_BUSY_TIMEOUT).unwrap_err();
        assert!(matches!(err, Error::Storage { .. }), "{mode:?}: {err:?}");
        assert_eq!(
            (err.http_status(), err.retryable(), err.code()),
            (500, false, "corrupt")
        );
    }
    assert_eq!(std::fs::read_to_string(&text).expect("read"), bytes);

    let newer = path_of("newer.sqlite3");
    {
        let mut conn = db::open(&newer, Mode::Create, DEFAULT_BUSY_TIMEOUT).expect("create");
        schema::init(&mut conn, &[1]).expect("init");
        conn.pragma_update(None, "user_version", 99)
            .expect("pragma");
    }
    for mode in [Mode::Existing, Mode::Create] {
        let err = db::open(&newer, mode, DEFAULT_BUSY_TIMEOUT).unwrap_err();
        assert!(matches!(err, Error::Storage { .. }), "{mode:?}: {err:?}");
        assert!(err.to_string().contains("99"), "{err}");
    }

    let foreign = path_of("foreign.sqlite3");
    Connection::open(&foreign)
        .and_then(|c| c.execute_batch("CREATE TABLE notes(body TEXT)"))
        .expect("foreign db");
    let err = db::open(&foreign, Mode::Create, DEFAULT_BUSY_TIMEOUT).unwrap_err();
    assert!(matches!(err, Error::Storage { .. }), "{err:?}");
    let tables: i64 = Connection::open(&foreign)
        .and_then(|c| c.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0)))
        .expect("count tables");
    assert_eq!(
        tables, 1,
        "no inbox-lab table was added to a foreign database"
    );

    let missing = path_of("missing.sqlite3");
    let err = db::open(&missing, Mode::Existing, DEFAULT_BUSY_TIMEOUT).unwrap_err();
    assert_eq!(err.kind(), "storage");
    assert!(!Path::new(&missing).exists(), "Existing mode never creates");
}

// ---- fault points and receipts -----------------------------------------------------------------

/// Both fault points roll back everything: no inbox row, no credit, and no
/// receipt number used up — the retry's receipt continues without a gap.
#[test]
fn both_fault_points_roll_back_completely_and_a_retry_applies() {
    for fault in Fault::ALL {
        let lab = Lab::new(&[1]);
        let conn = lab.open();
        apply(&conn, &event("provider-a", "evt-1", 1, 500), None).expect("evt-1");
        let before = snapshot(&conn);

        let e = event("provider-a", "evt-2", 1, 300);
        let err = apply(&conn, &e, Some(fault)).unwrap_err();
        assert_eq!(err, fault.crash());
        assert_eq!(
            (err.kind(), err.http_status(), err.retryable()),
            ("simulated_crash", 500, true)
        );
        assert!(conn.is_autocommit(), "{fault}: transaction closed");
        assert!(!inbox_has(&conn, &e), "{fault}: inbox row rolled back");
        assert_eq!(balance(&conn, 1), 500, "{fault}: credit rolled back");
        assert_eq!(last_seq(&conn), 1, "{fault}: receipt counter rolled back");
        assert_eq!(snapshot(&conn), before, "{fault}");

        // The retry applies, and its receipt number follows evt-1's.
        assert_eq!(apply(&conn, &e, None), Ok(applied(2, 800)), "{fault}");
    }
}

/// A fault point only fires for a new event: a repeat never reaches it, so a
/// duplicate stays a duplicate.
#[test]
fn a_fault_point_never_fires_on_a_duplicate() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    let e = event("provider-a", "evt-1", 1, 500);
    let first = apply(&conn, &e, None).expect("first");
    for fault in Fault::ALL {
        assert_eq!(
            apply(&conn, &e, Some(fault)),
            Ok(Outcome::Duplicate(first.receipt()))
        );
    }
}

/// Receipt numbers grow strictly across events, sources and accounts; each
/// receipt keeps the balance right after *its* credit, and a duplicate returns
/// that first receipt, not the current balance.
#[test]
fn receipts_number_events_in_order_and_keep_the_first_result() {
    let lab = Lab::new(&[1, 2]);
    let conn = lab.open();
    let deliveries = [
        (event("provider-a", "evt-1", 1, 100), applied(1, 100)),
        (event("provider-a", "evt-2", 2, 50), applied(2, 50)),
        (event("provider-b", "evt-1", 1, 7), applied(3, 107)),
        (event("provider-a", "evt-1", 1, 100), duplicate(1, 100)),
        (event("provider-a", "evt-3", 2, 1), applied(4, 51)),
        (event("provider-a", "evt-2", 2, 50), duplicate(2, 50)),
    ];
    let mut last = 0;
    for (e, expected) in &deliveries {
        let got = apply(&conn, e, None).expect("deliver");
        assert_eq!(&got, expected, "{e:?}");
        if let Outcome::Applied(r) = got {
            assert!(r.seq > last, "seq {} after {last}", r.seq);
            last = r.seq;
        }
    }
    let receipts: Vec<(String, String, Receipt)> = snapshot(&conn)
        .inbox
        .into_iter()
        .map(|row| {
            (
                row.source,
                row.event_id,
                row.receipt.expect("atomic rows keep a receipt"),
            )
        })
        .collect();
    assert_eq!(
        receipts,
        [
            (
                "provider-a".into(),
                "evt-1".into(),
                Receipt {
                    seq: 1,
                    balance_after: 100
                }
            ),
            (
                "provider-a".into(),
                "evt-2".into(),
                Receipt {
                    seq: 2,
                    balance_after: 50
                }
            ),
            (
                "provider-a".into(),
                "evt-3".into(),
                Receipt {
                    seq: 4,
                    balance_after: 51
                }
            ),
            (
                "provider-b".into(),
                "evt-1".into(),
                Receipt {
                    seq: 3,
                    balance_after: 107
                }
            ),
        ]
    );
}

/// What the page draws: the rows written last, newest first, at most `limit`
/// of them, with every account and the inbox's full count — also after a
/// row is replaced (a new rowid) and inside an open transaction.
#[test]
fn newest_reads_the_rows_written_last_and_counts_them_all() {
    let lab = Lab::new(&[1, 2]);
    let conn = lab.open();
    // Keys that sort differently from the order they are written in.
    for id in ["c", "a", "d", "b"] {
        apply(&conn, &event("p", id, 1, 1), None).expect("deliver");
    }
    apply(&conn, &event("p", "a", 1, 1), None).expect("a duplicate writes no row");
    let ids = |view: &tables::Newest| {
        view.inbox
            .iter()
            .map(|row| row.event_id.clone())
            .collect::<Vec<_>>()
    };
    let view = tables::newest(&conn, 3).expect("newest");
    assert_eq!(ids(&view), ["b", "d", "a"]);
    assert_eq!(view.inbox_total, 4);
    assert_eq!(view.accounts, snapshot(&conn).accounts);
    assert_eq!(
        view.inbox[0].receipt,
        Some(Receipt {
            seq: 4,
            balance_after: 4
        })
    );
    // A mistaken handler's `INSERT OR REPLACE` deletes the row and writes a new one: on top.
    conn.execute(
        "INSERT OR REPLACE INTO inbox(source, event_id, account_id, amount) VALUES ('p', 'c', 2, 9)",
        [],
    )
    .expect("replace");
    let view = tables::newest(&conn, 10).expect("newest");
    assert_eq!(ids(&view), ["c", "b", "d", "a"]);
    assert_eq!(view.inbox[0].receipt, None);
    // Inside a transaction it reads what that transaction sees.
    conn.execute_batch("BEGIN; DELETE FROM inbox WHERE event_id = 'b';")
        .expect("delete in a transaction");
    let view = tables::newest(&conn, 10).expect("newest");
    assert_eq!(
        (ids(&view), view.inbox_total),
        (vec!["c".to_owned(), "d".into(), "a".into()], 3)
    );
    conn.execute_batch("ROLLBACK").expect("rollback");
    assert_eq!(tables::newest(&conn, 0).expect("newest").inbox, []);
}

// ---- the transaction, step by step -------------------------------------------------------------

/// The steps a new event and a duplicate run, in order, and the SQL the page
/// shows for them: `BEGIN IMMEDIATE`, an `ON CONFLICT ... DO NOTHING` insert,
/// never `INSERT OR IGNORE` / `OR REPLACE`.
#[test]
fn a_delivery_runs_the_articles_statements_step_by_step() {
    use inbox_lab::Step::{Begin, Commit, Credit, Insert, ReadStored, StoreReceipt};
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    let e = event("provider-a", "evt-1", 1, 500);

    let mut new = Delivery::new(e.clone(), None);
    let (steps, outcome) = run_steps(&conn, &mut new);
    assert_eq!(steps, [Begin, Insert, Credit, StoreReceipt, Commit]);
    assert_eq!(outcome, applied(1, 500));
    assert!(conn.is_autocommit(), "committed");
    assert_eq!(new.next_step(), None);
    assert_eq!(new.step(&conn).unwrap_err().kind(), "storage", "finished");

    let mut repeat = Delivery::new(e.clone(), None);
    let (steps, outcome) = run_steps(&conn, &mut repeat);
    assert_eq!(steps, [Begin, Insert, ReadStored, Commit]);
    assert_eq!(outcome, duplicate(1, 500));

    assert_eq!(Begin.statements(), ["BEGIN IMMEDIATE"]);
    assert_eq!(Commit.statements(), ["COMMIT"]);
    assert!(Insert.statements()[0].contains("ON CONFLICT(source, event_id) DO NOTHING"));
    assert_eq!(
        StoreReceipt.statements().len(),
        2,
        "bump the counter, write the receipt"
    );
    for step in [Begin, Insert, ReadStored, Credit, StoreReceipt, Commit] {
        for sql in step.statements() {
            assert!(
                !sql.contains("OR IGNORE") && !sql.contains("OR REPLACE"),
                "{sql}"
            );
        }
    }
}

/// Why `ON CONFLICT(source, event_id) DO NOTHING` and not `INSERT OR
/// IGNORE`: the crate's insert statement, run on its own with values that
/// skip validation, still fails on a CHECK or NOT NULL violation instead of
/// reporting "0 rows, seen before". Only the key conflict gives 0 rows.
#[test]
fn the_insert_statement_treats_only_the_key_as_a_repeat() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    let insert = inbox_lab::Step::Insert.statements()[0];
    let run = |source: Option<&str>, amount: i64| {
        conn.execute(insert, params![source, "evt-1", 1, amount])
    };
    assert_eq!(run(Some("provider-a"), 500).expect("new key"), 1);
    assert_eq!(run(Some("provider-a"), 500).expect("same key"), 0);
    for (source, amount, why) in [
        (Some("provider-b"), 0, "CHECK (amount > 0)"),
        (None, 500, "NOT NULL source"),
    ] {
        let err = run(source, amount).expect_err(why);
        assert_eq!(
            err.sqlite_error_code(),
            Some(rusqlite::ErrorCode::ConstraintViolation),
            "{why}: {err}"
        );
    }
    assert_eq!(inbox_rows(&conn), 1);
}

/// Stepping and `apply` are the same transaction: the same deliveries give the
/// same answers and the same tables either way.
#[test]
fn stepping_and_apply_agree() {
    let deliveries = [
        event("provider-a", "evt-1", 1, 500),
        event("provider-a", "evt-1", 1, 500),
        event("provider-b", "evt-1", 2, 40),
        event("provider-a", "evt-1", 1, 700),
        event("provider-a", "evt-2", 3, 1),
    ];
    let (by_apply, by_steps) = (Lab::new(&[1, 2]), Lab::new(&[1, 2]));
    let (conn_a, conn_s) = (by_apply.open(), by_steps.open());
    for e in &deliveries {
        let expected = apply(&conn_a, e, None);
        let mut d = Delivery::new(e.clone(), None);
        let got = loop {
            match d.step(&conn_s) {
                Ok(Progress::Next(_)) => continue,
                Ok(Progress::Done(o)) => break Ok(o),
                Err(err) => break Err(err),
            }
        };
        assert_eq!(got, expected, "{e:?}");
        assert!(conn_s.is_autocommit(), "{e:?}: nothing left open");
    }
    assert_eq!(snapshot(&conn_s), snapshot(&conn_a));
}

/// Abandoning a delivery at any point before `COMMIT` (`Delivery::abort`, the
/// page's "throw") rolls it all back; the same event then applies normally.
#[test]
fn aborting_a_delivery_midway_leaves_nothing() {
    let lab = Lab::new(&[1]);
    let conn = lab.open();
    apply(&conn, &event("provider-a", "evt-0", 1, 1), None).expect("evt-0");
    let before = snapshot(&conn);
    let e = event("provider-a", "evt-1", 1, 500);

    let mut never_started = Delivery::new(e.clone(), None);
    never_started.abort(&conn).expect("abort before Begin");
    assert_eq!(never_started.next_step(), None);

    for steps_run in 1..=4 {
        let mut d = Delivery::new(e.clone(), None);
        for _ in 0..steps_run {
            assert!(matches!(d.step(&conn), Ok(Progress::Next(_))));
        }
        assert!(
            !conn.is_autocommit(),
            "after {steps_run} steps the transaction is open"
        );
        d.abort(&conn).expect("abort");
        assert!(conn.is_autocommit(), "after {steps_run} steps: rolled back");
        assert_eq!(d.next_step(), None);
        assert_eq!(snapshot(&conn), before, "after {steps_run} steps");
    }
    assert_eq!(apply(&conn, &e, None), Ok(applied(2, 501)));
}
