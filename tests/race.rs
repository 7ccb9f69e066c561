//! The race lab, natively: every handler on real connections to a real file
//! database. The correct handler must be exact under real threads and in
//! every interleaving; each mistake must fail, shown by a forced schedule so
//! the lesson cannot rot into "it happened to work today".
#![cfg(all(not(target_family = "wasm"), feature = "labs"))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::schema::{self, DEFAULT_BUSY_TIMEOUT};
use inbox_lab::labs::handlers::{Answer, Handler, Payload};
use inbox_lab::labs::race::{self, Arena};
use inbox_lab::{core::tables, Fault};
use tempfile::TempDir;

fn file_db() -> (TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("race.sqlite3");
    let path = path.to_str().expect("utf-8").to_owned();
    let mut conn = db::open(&path, Mode::Create, DEFAULT_BUSY_TIMEOUT).expect("open");
    schema::init(&mut conn, &[1]).expect("init");
    (dir, path)
}

fn arena(path: &str, deliveries: usize) -> Arena {
    Arena::new(deliveries, || {
        db::open(path, Mode::Create, DEFAULT_BUSY_TIMEOUT)
    })
    .expect("arena")
}

fn payload(event_id: &str, amount: i64) -> Payload {
    Payload {
        source: "provider-a".into(),
        event_id: event_id.into(),
        account_id: 1,
        amount,
    }
}

/// Delivers `events` distinct events, each `copies` times, from 8 threads
/// (a connection per delivery), and returns (applied, duplicates, errors,
/// final balance).
fn threaded(handler: Handler, events: usize, copies: usize) -> (usize, usize, usize, i64) {
    let (_dir, path) = file_db();
    let jobs: Vec<Payload> = (0..events * copies)
        .map(|n| payload(&format!("evt-{}", n % events), 10 + (n % events) as i64))
        .collect();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                let Some(job) = jobs.get(n) else { break };
                let r = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT)
                    .and_then(|conn| handler.deliver(&conn, job, None));
                results.lock().expect("results").push(r);
            });
        }
    });
    let results = results.into_inner().expect("results");
    let count = |want: Answer| results.iter().filter(|r| **r == Ok(want)).count();
    let conn = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
    let balance = tables::snapshot(&conn)
        .expect("tables")
        .balance(1)
        .expect("account 1");
    (
        count(Answer::Applied),
        count(Answer::Duplicate),
        results.iter().filter(|r| r.is_err()).count(),
        balance,
    )
}

/// Balance of account 1 and inbox rows (the mistakes leave rows without
/// receipts, which the tables snapshot shows as `None`).
fn balance_and_rows(conn: &rusqlite::Connection) -> (i64, i64) {
    let t = tables::snapshot(conn).expect("tables");
    (t.balance(1).expect("account 1"), t.inbox.len() as i64)
}

/// Sum of the distinct events' amounts used by [`threaded`].
fn exact_total(events: usize) -> i64 {
    (0..events).map(|n| 10 + n as i64).sum()
}

/// 8 threads, 40 events each delivered 5 times: the atomic handler applies
/// each event exactly once, answers the rest "duplicate", and the balance is
/// the sum of the distinct events — every time.
#[test]
fn atomic_is_exact_under_real_threads() {
    for _ in 0..3 {
        assert_eq!(
            threaded(Handler::Atomic, 40, 5),
            (40, 160, 0, exact_total(40))
        );
    }
}

/// Under the same threads, `no_dedup` and `insert_or_replace` pay every
/// delivery: five times the money, deterministically.
#[test]
fn paying_mistakes_pay_every_delivery_under_threads() {
    for handler in [Handler::NoDedup, Handler::InsertOrReplace] {
        let (applied, duplicates, errors, balance) = threaded(handler, 40, 5);
        assert_eq!((applied, duplicates, errors), (200, 0, 0), "{handler}");
        assert_eq!(balance, 5 * exact_total(40), "{handler}");
    }
}

/// `check_then_act` under threads never pays less than once, and its
/// failures are proven by the forced schedule below, not left to luck.
/// `two_transactions` and `insert_or_ignore` survive identical concurrent
/// deliveries without a crash: their mistakes show elsewhere (below).
#[test]
fn other_handlers_under_threads() {
    let (_, _, _, balance) = threaded(Handler::CheckThenAct, 40, 5);
    assert!(balance >= exact_total(40));
    for handler in [Handler::TwoTransactions, Handler::InsertOrIgnore] {
        assert_eq!(
            threaded(handler, 40, 5),
            (40, 160, 0, exact_total(40)),
            "{handler}"
        );
    }
}

/// "SELECT, then act": both handlers check before either records, both
/// credit. The second one's late INSERT hits the key and fails with a 500
/// after the money already moved.
#[test]
fn check_then_act_pays_twice_when_both_check_first() {
    let (_dir, path) = file_db();
    let arena = arena(&path, 2);
    // A checks, B checks, A credits, B credits, A records...
    let mut race = race::replay(&arena, Handler::CheckThenAct, &[0, 1, 0, 1, 0]).expect("replay");
    // ...B records: its INSERT meets the key A registered after B's check.
    let last = race.step(&arena, 1).expect("step");
    let failed = serde_json::to_value(&last).expect("json");
    assert_eq!(failed["result"], "failed");
    assert_eq!(failed["kind"], "storage");
    let message = failed["message"].as_str().unwrap_or_default();
    // In SQLite's words, and not blamed on the database: it is fine, the handler is wrong.
    assert!(
        message.contains("UNIQUE constraint failed: inbox.source, inbox.event_id"),
        "{message}"
    );
    assert!(!message.contains("cannot be used"), "{message}");
    let v = race.verdict(&arena).expect("verdict");
    assert_eq!(v.balance, 1000, "paid twice");
    assert!(v.double_credit && v.wrong_answer);
}

/// Two transactions: a crash after the registration committed leaves the
/// event "processed" with no credit; the sender's retry is told "duplicate"
/// and the money is lost for good.
#[test]
fn two_transactions_lose_the_credit_on_a_crash_between() {
    let (_dir, path) = file_db();
    let conn = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
    let p = payload("evt-1", 500);
    let crash = Handler::TwoTransactions.deliver(&conn, &p, Some(Fault::AfterInsert));
    assert_eq!(crash, Err(Fault::AfterInsert.crash()));
    assert_eq!(
        Handler::TwoTransactions.deliver(&conn, &p, None),
        Ok(Answer::Duplicate)
    );
    let t = balance_and_rows(&conn);
    assert_eq!(t.0, 0, "credit lost");
    assert_eq!(t.1, 1, "but the inbox says processed");

    // The atomic handler under the same crash: nothing kept, retry applies.
    let (_dir2, path2) = file_db();
    let conn = db::open(&path2, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
    let crash = Handler::Atomic.deliver(&conn, &p, Some(Fault::AfterInsert));
    assert!(crash.is_err());
    assert_eq!(
        Handler::Atomic.deliver(&conn, &p, None),
        Ok(Answer::Applied)
    );
    assert_eq!(tables::snapshot(&conn).expect("t").balance(1), Some(500));
}

/// A crash reports what it left out, each statement in the transaction it
/// would have run in: two_transactions' second transaction never began
/// (the page draws it "not reached"); atomic's credit, receipt and COMMIT
/// were still to come in its one transaction, which rolled back.
#[test]
fn a_crash_reports_the_statements_it_left_out() {
    let left_out = |handler: Handler, fault: Fault| {
        let (_dir, path) = file_db();
        let conn = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
        let (answer, trace) = handler.deliver_traced(&conn, &payload("evt-1", 500), Some(fault));
        assert_eq!(answer, Err(fault.crash()), "{handler} crashed");
        let ran: Vec<_> = trace.steps().iter().map(|s| (s.op, s.tx)).collect();
        let unreached: Vec<_> = trace.unreached().iter().map(|u| (u.op, u.tx)).collect();
        (ran, unreached)
    };
    let (ran, unreached) = left_out(Handler::TwoTransactions, Fault::AfterInsert);
    assert_eq!(
        ran,
        [
            ("begin", Some(1)),
            ("insert", Some(1)),
            ("commit", Some(1)),
            ("crash", None)
        ]
    );
    assert_eq!(
        unreached,
        [("begin", Some(2)), ("credit", Some(2)), ("commit", Some(2))]
    );
    let (_, unreached) = left_out(Handler::TwoTransactions, Fault::AfterUpdate);
    assert_eq!(unreached, [("commit", Some(2))]);
    let (_, unreached) = left_out(Handler::Atomic, Fault::AfterInsert);
    assert_eq!(
        unreached,
        [
            ("credit", Some(1)),
            ("store_receipt", Some(1)),
            ("commit", Some(1))
        ]
    );
    let (_, unreached) = left_out(Handler::CheckThenAct, Fault::AfterUpdate);
    assert_eq!(unreached, [("insert", None)]);
    // No crash, nothing left out.
    let (_dir, path) = file_db();
    let conn = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
    let (_, trace) = Handler::TwoTransactions.deliver_traced(&conn, &payload("evt-2", 5), None);
    assert!(trace.unreached().is_empty());
}

/// Two transactions, raced: B answers "duplicate" between A's two
/// transactions — before the money is there.
#[test]
fn two_transactions_answer_duplicate_before_the_credit() {
    let (_dir, path) = file_db();
    let arena = arena(&path, 2);
    // A: BEGIN, INSERT, COMMIT. B: BEGIN, INSERT (conflict), read, COMMIT → "duplicate".
    let mut race =
        race::replay(&arena, Handler::TwoTransactions, &[0, 0, 0, 1, 1, 1]).expect("replay");
    let log = race.step(&arena, 1).expect("B commits");
    assert_eq!(
        log.result,
        race::StepResult::Answered {
            answer: Answer::Duplicate
        }
    );
    assert_eq!(log.committed.expect("readable").balance, 0, "no money yet");
    for _ in 0..3 {
        race.step(&arena, 0).expect("A credits");
    }
    assert!(race.verdict(&arena).expect("verdict").wrong_answer);
}

/// `INSERT OR IGNORE` never compares payloads: a redelivery of a known key
/// with another amount is "duplicate" (200) instead of a conflict, and the
/// sender's different payload is silently taken for a repeat. The atomic
/// handler answers `payload_conflict` for the same redelivery. Only the
/// first delivery's credit is written.
#[test]
fn insert_or_ignore_calls_another_payload_a_repeat() {
    let (_dir, path) = file_db();
    let conn = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
    assert_eq!(
        Handler::InsertOrIgnore.deliver(&conn, &payload("evt-1", 500), None),
        Ok(Answer::Applied)
    );
    assert_eq!(
        Handler::InsertOrIgnore.deliver(&conn, &payload("evt-1", 700), None),
        Ok(Answer::Duplicate),
        "another payload is not even looked at"
    );
    assert_eq!(
        Handler::Atomic
            .deliver(&conn, &payload("evt-1", 700), None)
            .map_err(|e| e.kind()),
        Err("payload_conflict")
    );
    let t = tables::snapshot(&conn).expect("tables");
    assert_eq!(t.balance(1), Some(500), "one credit of 500");
    assert_eq!(t.inbox.len(), 1);
    assert_eq!(
        t.inbox[0].amount, 500,
        "the stored payload is the first one"
    );
}

/// Validation runs before every handler, the mistaken ones included: a key
/// over 255 bytes, a negative amount, amount 0 and a blank source are
/// `invalid_input` (400) naming the field, and nothing is written — the
/// mistakes may credit twice, but never store what no rule allows.
#[test]
fn every_handler_refuses_invalid_input_and_writes_nothing() {
    let (_dir, path) = file_db();
    let conn = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
    let invalid = [
        (
            Payload {
                event_id: "k".repeat(300),
                ..payload("evt-1", 500)
            },
            "event_id",
        ),
        (payload("evt-1", -500), "amount"),
        (payload("evt-1", 0), "amount"),
        (
            Payload {
                source: "   ".into(),
                ..payload("evt-1", 500)
            },
            "source",
        ),
    ];
    let before = tables::snapshot(&conn).expect("tables");
    for handler in Handler::ALL {
        for (p, field) in &invalid {
            let e = handler
                .deliver(&conn, p, None)
                .expect_err("an invalid payload must be refused");
            assert_eq!(
                (
                    e.kind(),
                    e.http_status(),
                    e.report().field.map(|f| f.as_str())
                ),
                ("invalid_input", 400, Some(*field)),
                "{handler}: {e}"
            );
            assert_eq!(
                tables::snapshot(&conn).expect("tables"),
                before,
                "{handler} wrote something for a bad {field}"
            );
        }
    }
    assert!(conn.is_autocommit(), "no transaction left open");
}

/// `INSERT OR REPLACE` rewrites history: a replay with another amount is
/// applied again and the first record is gone.
#[test]
fn insert_or_replace_rewrites_the_first_record() {
    let (_dir, path) = file_db();
    let conn = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
    let r = |amount| Handler::InsertOrReplace.deliver(&conn, &payload("evt-1", amount), None);
    assert_eq!(r(500), Ok(Answer::Applied));
    assert_eq!(r(700), Ok(Answer::Applied));
    let stored: i64 = conn
        .query_row(
            "SELECT amount FROM inbox WHERE event_id = 'evt-1'",
            [],
            |row| row.get(0),
        )
        .expect("row");
    assert_eq!(stored, 700, "the first record was replaced");
    assert_eq!(balance_and_rows(&conn).0, 1200);
}

/// The explorer over every interleaving: zero bad schedules for `atomic`
/// with 2 and 3 deliveries; the expected failures for the racy mistakes.
#[test]
fn explorer_counts_every_interleaving() {
    let (_dir, path) = file_db();
    for k in [2, 3] {
        let a = arena(&path, k);
        let s = race::explore(&a, Handler::Atomic).expect("explore");
        assert!(s.interleavings >= 2);
        assert_eq!(
            (s.double_credits, s.lost_credits, s.wrong_answers),
            (0, 0, 0),
            "k={k}"
        );
        assert_eq!(s.failing_schedule, None);
    }
    let a = arena(&path, 2);
    let s = |h| race::explore(&a, h).expect("explore");
    let c = s(Handler::CheckThenAct);
    assert_eq!((c.interleavings, c.double_credits), (20, 18));
    let n = s(Handler::NoDedup);
    assert_eq!((n.interleavings, n.double_credits), (2, 2));
    let r = s(Handler::InsertOrReplace);
    assert_eq!(r.double_credits, r.interleavings);
    let t = s(Handler::TwoTransactions);
    assert!(t.wrong_answers > 0 && t.double_credits == 0);
    // The failing schedule replays to a failure.
    let schedule = c.failing_schedule.expect("a failing schedule");
    let race = race::replay(&a, Handler::CheckThenAct, &schedule).expect("replay");
    assert!(race.verdict(&a).expect("verdict").double_credit);
}

/// A trace in short form: `op:rows:effect`, space-separated.
fn short(trace: &inbox_lab::Trace) -> String {
    trace
        .steps()
        .iter()
        .map(|s| {
            let effect = serde_json::to_value(s.effect).expect("effect");
            format!("{}:{}:{}", s.op, s.rows, effect.as_str().unwrap_or("?"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What every handler runs, in its own statements, for the six deliveries
/// the page offers: new, repeat, other payload, crash after INSERT, crash
/// after the credit, unknown account. The trace must also agree with the
/// database: a change is in the tables exactly when a kept step made it.
#[test]
fn every_handler_reports_the_steps_it_ran() {
    use inbox_lab::{Effect, Trace};
    // (delivery, fault) in order, on one database per handler.
    let deliveries: [(Payload, Option<Fault>); 6] = [
        (payload("evt-1", 500), None),
        (payload("evt-1", 500), None),
        (payload("evt-1", 700), None),
        (payload("evt-2", 40), Some(Fault::AfterInsert)),
        (payload("evt-3", 30), Some(Fault::AfterUpdate)),
        (
            Payload {
                account_id: 9,
                ..payload("evt-4", 5)
            },
            None,
        ),
    ];
    const RB: &str = "rollback:0:kept";
    let expected: [(Handler, [&str; 6]); 6] = [
        (
            Handler::Atomic,
            [
                "begin:0:kept insert:1:kept credit:1:kept store_receipt:2:kept commit:0:kept",
                "begin:0:kept insert:0:kept read_stored:0:kept commit:0:kept",
                "begin:0:rolled_back insert:0:rolled_back read_stored:0:failed RB",
                "begin:0:rolled_back insert:1:rolled_back crash:0:crashed RB",
                "begin:0:rolled_back insert:1:rolled_back credit:1:rolled_back store_receipt:2:rolled_back crash:0:crashed RB",
                "begin:0:rolled_back insert:0:failed RB",
            ],
        ),
        (
            // Every statement autocommits: every delivery pays, and a crash
            // comes after the money moved. It has no INSERT to crash after.
            Handler::NoDedup,
            [
                "credit:1:kept",
                "credit:1:kept",
                "credit:1:kept",
                "credit:1:kept",
                "credit:1:kept crash:0:crashed",
                "credit:0:failed",
            ],
        ),
        (
            Handler::CheckThenAct,
            [
                "check:0:kept credit:1:kept insert:1:kept",
                "check:0:kept",
                "check:0:failed",
                "check:0:kept credit:1:kept insert:1:kept crash:0:crashed",
                "check:0:kept credit:1:kept crash:0:crashed",
                "check:0:kept credit:0:failed",
            ],
        ),
        (
            // The crash "after insert" falls between its two transactions:
            // the event is recorded, the credit never happens.
            Handler::TwoTransactions,
            [
                "begin:0:kept insert:1:kept commit:0:kept begin:0:kept credit:1:kept commit:0:kept",
                "begin:0:kept insert:0:kept read_stored:0:kept commit:0:kept",
                "begin:0:rolled_back insert:0:rolled_back read_stored:0:failed RB",
                "begin:0:kept insert:1:kept commit:0:kept crash:0:crashed",
                "begin:0:kept insert:1:kept commit:0:kept begin:0:rolled_back credit:1:rolled_back crash:0:crashed RB",
                "begin:0:rolled_back insert:0:failed RB",
            ],
        ),
        (
            // Another payload for a known key: "no row inserted", so "duplicate".
            Handler::InsertOrIgnore,
            [
                "begin:0:kept insert_or_ignore:1:kept credit:1:kept commit:0:kept",
                "begin:0:kept insert_or_ignore:0:kept commit:0:kept",
                "begin:0:kept insert_or_ignore:0:kept commit:0:kept",
                "begin:0:rolled_back insert_or_ignore:1:rolled_back crash:0:crashed RB",
                "begin:0:rolled_back insert_or_ignore:1:rolled_back credit:1:rolled_back crash:0:crashed RB",
                "begin:0:rolled_back insert_or_ignore:0:failed RB",
            ],
        ),
        (
            // Every repeat replaces the row and pays again.
            Handler::InsertOrReplace,
            [
                "begin:0:kept insert_or_replace:1:kept credit:1:kept commit:0:kept",
                "begin:0:kept insert_or_replace:1:kept credit:1:kept commit:0:kept",
                "begin:0:kept insert_or_replace:1:kept credit:1:kept commit:0:kept",
                "begin:0:rolled_back insert_or_replace:1:rolled_back crash:0:crashed RB",
                "begin:0:rolled_back insert_or_replace:1:rolled_back credit:1:rolled_back crash:0:crashed RB",
                "begin:0:rolled_back insert_or_replace:0:failed RB",
            ],
        ),
    ];
    for (handler, traces) in expected {
        let (_dir, path) = file_db();
        let conn = db::open(&path, Mode::Existing, DEFAULT_BUSY_TIMEOUT).expect("open");
        for ((payload, fault), want) in deliveries.iter().zip(traces) {
            let key = |c: &rusqlite::Connection| -> (i64, i64) {
                c.query_row(
                    "SELECT (SELECT balance FROM accounts WHERE id = 1),
                            (SELECT count(*) FROM inbox WHERE source = ?1 AND event_id = ?2)",
                    [&payload.source, &payload.event_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .expect("read")
            };
            let (balance_before, row_before) = key(&conn);
            let (answer, trace): (_, Trace) = handler.deliver_traced(&conn, payload, *fault);
            let case = format!("{handler} {} {fault:?} -> {answer:?}", payload.event_id);
            assert_eq!(short(&trace), want.replace("RB", RB), "{case}");
            assert!(conn.is_autocommit(), "{case}: a transaction was left open");

            // The trace agrees with the tables.
            let (balance_after, row_after) = key(&conn);
            let kept = |op: &dyn Fn(&str) -> bool| {
                trace
                    .steps()
                    .iter()
                    .filter(|s| op(s.op) && s.effect == Effect::Kept)
                    .map(|s| s.rows)
                    .sum::<usize>()
            };
            let credits = kept(&|op| op == "credit") as i64;
            if payload.account_id == 1 {
                assert_eq!(
                    balance_after - balance_before,
                    credits * payload.amount,
                    "{case}"
                );
            } else {
                assert_eq!(balance_after, balance_before, "{case}");
            }
            let inserted = kept(&|op| op.starts_with("insert"));
            assert_eq!(row_after, (row_before + inserted as i64).min(1), "{case}");
            assert!(
                trace.steps().iter().all(|s| s.effect != Effect::Open),
                "{case}: a step left open"
            );
            if payload.account_id == 9 {
                // Every handler says why in the same words: the account does not exist.
                let kind = answer.as_ref().map_err(|e| e.kind());
                assert_eq!(kind, Err("unknown_account"), "{case}");
            }
            // An error ends in the step that failed or crashed (and the ROLLBACK after it).
            if answer.is_err() {
                let ending = trace.steps().iter().rev().find(|s| s.op != "rollback");
                assert!(
                    ending.is_some_and(|s| matches!(s.effect, Effect::Failed | Effect::Crashed)),
                    "{case}"
                );
            }
        }
    }
}
