//! Where the scheme ends (the article's last part), natively: side effects
//! and the transactional outbox, business keys, retention, and the schema
//! migration that added them.
#![cfg(all(not(target_family = "wasm"), feature = "labs"))]

use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::health;
use inbox_lab::core::schema::{self, DEFAULT_BUSY_TIMEOUT};
use inbox_lab::labs::scheme_ends::business::{activate, Activation};
use inbox_lab::labs::scheme_ends::outbox::{self, Crash, Receiver, Strategy as Notify};
use inbox_lab::labs::scheme_ends::story::{self, Dispatch, Resent, Story, Told};
use inbox_lab::{apply, core::tables, labs::scheme_ends::retention, Event, Outcome};
use proptest::prelude::*;
use rusqlite::Connection;

#[path = "support/version1.rs"]
mod version1;

fn database() -> Connection {
    let mut conn = Connection::open_in_memory().expect("db");
    schema::prepare(&conn, DEFAULT_BUSY_TIMEOUT).expect("prepare");
    schema::init(&mut conn, &[1]).expect("init");
    conn
}

fn receiver(dedup: bool) -> Receiver {
    Receiver::open(Connection::open_in_memory().expect("receiver db"), dedup).expect("receiver")
}

fn event(id: &str, amount: i64) -> Event {
    Event::new("provider-a", id, 1, amount).expect("event")
}

fn balance(conn: &Connection) -> i64 {
    tables::snapshot(conn)
        .expect("tables")
        .balance(1)
        .expect("account 1")
}

/// A database written by the previous schema version keeps working: its
/// rows survive the migration and a replay still gets the stored receipt.
#[test]
fn a_version_1_database_is_migrated_and_keeps_working() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("v1.sqlite3");
    let path = path.to_str().expect("utf-8");
    let first = {
        let mut conn = Connection::open(path).expect("open");
        version1::write(&mut conn, DEFAULT_BUSY_TIMEOUT);
        inbox_lab::Receipt {
            seq: 1,
            balance_after: 500,
        }
    };
    let conn = db::open(path, Mode::Create, DEFAULT_BUSY_TIMEOUT).expect("migrating open");
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version");
    assert_eq!(v, schema::VERSION);
    assert_eq!(
        apply(&conn, &event("evt-1", 500), None).expect("replay"),
        Outcome::Duplicate(first)
    );
    let next = apply(&conn, &event("evt-2", 7), None).expect("new event");
    assert_eq!(next.receipt().seq, 2, "the receipt counter carried over");
    let received_at: i64 = conn
        .query_row(
            "SELECT received_at FROM inbox WHERE event_id = 'evt-1'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    assert_eq!(received_at, 0, "old rows arrived at the clock's beginning");
}

/// Send, then commit: a rollback cannot unsend. The user is notified of a
/// credit that never happened.
#[test]
fn sending_before_commit_notifies_a_credit_that_never_happened() {
    let conn = database();
    let rx = receiver(true);
    let err = outbox::deliver(
        &conn,
        &rx,
        &event("evt-1", 500),
        Notify::SendBeforeCommit,
        Some(Crash::AfterSendBeforeCommit),
    )
    .expect_err("crash");
    assert_eq!(err, Crash::AfterSendBeforeCommit.crash());
    assert_eq!(balance(&conn), 0, "no credit");
    assert_eq!(rx.shown().expect("shown").len(), 1, "but the user was told");
}

/// Commit, then send: a crash between loses the notification for good — the
/// sender's retry is a duplicate, which sends nothing.
#[test]
fn sending_after_commit_loses_the_notification_on_a_crash() {
    let conn = database();
    let rx = receiver(true);
    let e = event("evt-1", 500);
    let err = outbox::deliver(
        &conn,
        &rx,
        &e,
        Notify::SendAfterCommit,
        Some(Crash::AfterCommitBeforeSend),
    )
    .expect_err("crash");
    assert_eq!(err.kind(), "simulated_crash");
    assert_eq!(balance(&conn), 500, "credited");
    let retry = outbox::deliver(&conn, &rx, &e, Notify::SendAfterCommit, None).expect("retry");
    assert_eq!(retry.kind(), "duplicate");
    assert!(rx.shown().expect("shown").is_empty(), "never notified");
}

/// The outbox: the notification commits with the credit (or rolls back with
/// it); the dispatcher sends it. A crash after sending and before marking
/// sends it again — the receiver's own dedup keeps the user's view exact.
#[test]
fn the_outbox_is_at_least_once_and_dedup_makes_it_exactly_once() {
    for dedup in [false, true] {
        let conn = database();
        let rx = receiver(dedup);
        let crash = outbox::deliver(
            &conn,
            &rx,
            &event("evt-0", 1),
            Notify::Outbox,
            Some(Crash::AfterSendBeforeCommit),
        );
        assert!(crash.is_err());
        assert!(
            outbox::rows(&conn).expect("rows").is_empty(),
            "rolled back with the credit"
        );

        outbox::deliver(&conn, &rx, &event("evt-1", 500), Notify::Outbox, None).expect("deliver");
        assert!(
            rx.shown().expect("shown").is_empty(),
            "nothing sent inside the transaction"
        );
        let err =
            outbox::dispatch_one(&conn, &rx, Some(Crash::AfterSendBeforeMark)).expect_err("crash");
        assert_eq!(err.kind(), "simulated_crash");
        assert_eq!(
            outbox::dispatch_all(&conn, &rx).expect("dispatch"),
            1,
            "sent again"
        );
        let shown = rx.shown().expect("shown").len();
        assert_eq!(shown, if dedup { 1 } else { 2 }, "dedup={dedup}");
        assert_eq!(outbox::dispatch_all(&conn, &rx).expect("drained"), 0);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Deliver {
        event: usize,
        crash_before_commit: bool,
    },
    Dispatch {
        crash_after_send: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..6, prop::bool::weighted(0.2)).prop_map(|(event, crash_before_commit)| {
            Op::Deliver {
                event,
                crash_before_commit,
            }
        }),
        prop::bool::weighted(0.4).prop_map(|crash_after_send| Op::Dispatch { crash_after_send }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// Over random crash schedules (deliveries that crash before commit,
    /// dispatches that crash after sending), once the dispatcher has drained
    /// the outbox a deduplicating receiver has shown exactly one
    /// notification per committed credit, and their sum is the balance.
    #[test]
    fn receiver_side_exactly_once(schedule in prop::collection::vec(op(), 1..40)) {
        let conn = database();
        let rx = receiver(true);
        for op in &schedule {
            match *op {
                Op::Deliver { event: i, crash_before_commit } => {
                    let crash = crash_before_commit.then_some(Crash::AfterSendBeforeCommit);
                    let _ = outbox::deliver(&conn, &rx, &event(&format!("evt-{i}"), 1 << i), Notify::Outbox, crash);
                }
                Op::Dispatch { crash_after_send } => {
                    let _ = outbox::dispatch_one(&conn, &rx, crash_after_send.then_some(Crash::AfterSendBeforeMark));
                }
            }
        }
        outbox::dispatch_all(&conn, &rx).expect("drain");
        let shown = rx.shown().expect("shown");
        let mut ids: Vec<&str> = shown.iter().map(|s| s.message_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), shown.len(), "a notification shown twice");
        prop_assert_eq!(shown.len(), tables::snapshot(&conn).expect("t").inbox.len());
        prop_assert_eq!(shown.iter().map(|s| s.amount).sum::<i64>(), balance(&conn));
    }
}

/// Two different events about one order both pass event dedup; the business
/// key makes the second a clear `already_active` (200), not an error. A
/// replay of either event gets its first answer again.
#[test]
fn a_business_key_activates_an_order_once() {
    let conn = database();
    assert_eq!(
        activate(&conn, "shop", "evt-7", "A-1").expect("first"),
        Activation::Activated
    );
    let second = activate(&conn, "shop", "evt-8", "A-1").expect("second");
    assert_eq!(
        second,
        Activation::AlreadyActive {
            by_source: "shop".into(),
            by_event_id: "evt-7".into()
        }
    );
    assert_eq!(second.http_status(), 200);
    assert_eq!(
        activate(&conn, "shop", "evt-8", "A-1").expect("replay"),
        Activation::Duplicate {
            first: "already_active".into()
        }
    );
    assert_eq!(
        activate(&conn, "shop", "evt-7", "A-1").expect("replay"),
        Activation::Duplicate {
            first: "activated".into()
        }
    );
    let err = activate(&conn, "shop", "evt-7", "B-2").expect_err("another order");
    assert_eq!(err.kind(), "invalid_input");
    assert_eq!(
        activate(&conn, "shop", "evt-9", "B-2").expect("other order"),
        Activation::Activated
    );
    let orders: i64 = conn
        .query_row("SELECT count(*) FROM orders", [], |r| r.get(0))
        .expect("count");
    assert_eq!(orders, 2);
    assert_eq!(
        activate(&conn, "shop", "evt-10", " ")
            .expect_err("blank")
            .kind(),
        "invalid_input"
    );
}

/// Purging inbox rows makes old events new: a redelivery after the purge is
/// applied again. Keeping rows longer than the redelivery window prevents it.
#[test]
fn purging_the_inbox_makes_an_old_event_new_again() {
    const DAY: i64 = 86_400_000;
    let conn = database();
    let e = event("evt-1", 500);
    apply(&conn, &e, None).expect("first");
    retention::advance(&conn, 3 * DAY).expect("clock");

    assert_eq!(
        retention::purge(&conn, 7 * DAY, 100).expect("purge"),
        0,
        "inside the window"
    );
    assert_eq!(apply(&conn, &e, None).expect("replay").kind(), "duplicate");

    assert_eq!(retention::purge(&conn, DAY, 100).expect("purge"), 1);
    assert_eq!(
        apply(&conn, &e, None).expect("redelivery").kind(),
        "applied",
        "the hazard"
    );
    assert_eq!(balance(&conn), 1000, "paid twice");
    assert!(
        retention::advance(&conn, -1).is_err(),
        "the clock never goes back"
    );
}

/// The clock may reach its largest time, never pass it: a step past it is
/// refused and changes nothing, and what a delivery then stamps is a time
/// the health check reads (issue 27: past 2^53-1 the page opened unusable).
#[test]
fn the_clock_stops_at_its_largest_time() {
    let conn = database();
    let max = *schema::TIME.end();
    assert_eq!(
        retention::advance(&conn, max - 10).expect("clock"),
        max - 10
    );
    for ms in [11, max, i64::MAX] {
        let err = retention::advance(&conn, ms).expect_err("past the end");
        assert_eq!((err.kind(), err.code()), ("invalid_input", "clock_limit"));
        assert_eq!(err.report().params["max"], max.to_string());
        assert_eq!(retention::now(&conn).expect("now"), max - 10, "unchanged");
    }
    assert_eq!(retention::advance(&conn, 10).expect("to the end"), max);
    apply(&conn, &event("late", 5), None).expect("applied");
    health::check(&conn).expect("readable");
}

/// A purge keeps the row of an event whose notification still waits in the
/// outbox (the message exists only because the inbox applied its event),
/// and deletes it once the message is sent.
#[test]
fn a_purge_keeps_the_row_of_a_waiting_message() {
    let conn = database();
    let receiver = receiver(true);
    outbox::deliver(
        &conn,
        &receiver,
        &event("notified", 5),
        Notify::Outbox,
        None,
    )
    .expect("outbox");
    apply(&conn, &event("plain", 5), None).expect("plain");
    retention::advance(&conn, 10).expect("clock");
    assert_eq!(
        retention::purge(&conn, 0, 10).expect("purge"),
        1,
        "only the plain event's row"
    );
    health::check(&conn).expect("healthy");
    outbox::dispatch_all(&conn, &receiver).expect("dispatch");
    assert_eq!(
        retention::purge(&conn, 0, 10).expect("purge"),
        1,
        "sent: now it goes"
    );
    health::check(&conn).expect("healthy");
}

/// A purge interrupted half-way (SQLite's interrupt, from a progress handler)
/// leaves a consistent database: balances untouched, integrity ok, and the
/// next purge finishes the job.
#[test]
fn an_interrupted_purge_leaves_a_consistent_database() {
    let mut conn = database();
    for i in 0..50 {
        apply(&conn, &event(&format!("evt-{i}"), 1), None).expect("apply");
    }
    retention::advance(&conn, 10).expect("clock");
    // Count the progress callbacks a full purge takes (on a copy), then
    // interrupt the real one half-way through.
    let calls = {
        let mut copy = Connection::open_in_memory().expect("copy");
        let data = conn
            .serialize(rusqlite::MAIN_DB)
            .expect("serialize")
            .to_vec();
        copy.deserialize_read_exact(rusqlite::MAIN_DB, &data[..], data.len(), false)
            .expect("deserialize");
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c = counter.clone();
        copy.progress_handler(
            10,
            Some(move || {
                c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                false
            }),
        )
        .expect("handler");
        assert_eq!(retention::purge(&copy, 0, 5).expect("full purge"), 50);
        counter.load(std::sync::atomic::Ordering::SeqCst)
    };
    let mut budget = calls / 2;
    conn.progress_handler(
        10,
        Some(move || {
            budget = budget.saturating_sub(1);
            budget == 0
        }),
    )
    .expect("handler");
    let interrupted = retention::purge(&conn, 0, 5);
    conn.progress_handler(0, None::<fn() -> bool>)
        .expect("remove");
    assert!(interrupted.is_err(), "the purge was interrupted");
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(ok, "ok");
    assert_eq!(balance(&conn), 50, "balances untouched");
    let left = tables::snapshot(&conn).expect("t").inbox.len();
    assert!(left < 50 && left > 0, "some batches done, some not: {left}");
    assert_eq!(retention::purge(&conn, 0, 5).expect("finish"), left);
}

/// The verdicts of the side-effect experiment, one per event, judged by
/// Rust from what committed and what the receiver showed: every verdict
/// the page can show, each from the delivery that earns it.
#[test]
fn the_story_judges_what_the_user_was_told() {
    let conn = database();
    let mut story = Story::new(receiver(false));
    let crash = |c| Some(c);
    // evt-1: sent, then the transaction failed: told about no credit.
    story
        .deliver(
            &conn,
            &event("evt-1", 5),
            Notify::SendBeforeCommit,
            crash(Crash::AfterSendBeforeCommit),
        )
        .expect_err("crash");
    // evt-2: committed, died before sending: lost for good.
    story
        .deliver(
            &conn,
            &event("evt-2", 5),
            Notify::SendAfterCommit,
            crash(Crash::AfterCommitBeforeSend),
        )
        .expect_err("crash");
    // evt-3: rolled back before anything was sent.
    story
        .deliver(
            &conn,
            &event("evt-3", 5),
            Notify::Outbox,
            crash(Crash::AfterSendBeforeCommit),
        )
        .expect_err("crash");
    // evt-10: sent before COMMIT twice (a crash, then the retry): credited once, shown twice.
    let ten = event("evt-10", 5);
    story
        .deliver(
            &conn,
            &ten,
            Notify::SendBeforeCommit,
            crash(Crash::AfterSendBeforeCommit),
        )
        .expect_err("crash");
    story
        .deliver(&conn, &ten, Notify::SendBeforeCommit, None)
        .expect("retry");
    // evt-4: in the outbox, not dispatched yet.
    story
        .deliver(&conn, &event("evt-4", 5), Notify::Outbox, None)
        .expect("queued");
    let told = |story: &Story| -> Vec<(String, bool, usize, Told)> {
        let effects = story.effects(&conn).expect("effects");
        effects
            .verdicts
            .into_iter()
            .map(|c| (c.event_id, c.credited, c.shown, c.verdict))
            .collect()
    };
    let s = |id: &str| id.to_owned();
    assert_eq!(
        told(&story),
        vec![
            (s("evt-1"), false, 1, Told::Phantom),
            (s("evt-2"), true, 0, Told::Lost),
            (s("evt-3"), false, 0, Told::Nothing),
            (s("evt-4"), true, 0, Told::Pending),
            (s("evt-10"), true, 2, Told::Duplicate),
        ],
        "in the order of their numbers: evt-4 before evt-10"
    );
    // The dispatcher sends evt-4's message: exactly once.
    assert_eq!(
        story.dispatch(&conn, false).expect("drain"),
        Dispatch::Drained { sent: 1 }
    );
    assert_eq!(told(&story)[3], (s("evt-4"), true, 1, Told::Once));
    assert!(
        story.effects(&conn).expect("effects").resent.is_empty(),
        "sent once"
    );
}

/// The dispatcher's button with its crash: it names the message it sent
/// before dying; the message stays pending, goes out again, and the story
/// reports it resent — shown twice without the receiver's dedup, once with.
#[test]
fn a_dispatcher_crash_is_reported_as_a_resent_message() {
    for dedup in [false, true] {
        let conn = database();
        let mut story = Story::new(receiver(dedup));
        assert_eq!(
            story.dispatch(&conn, true).expect("idle"),
            Dispatch::Drained { sent: 0 }
        );
        story
            .deliver(&conn, &event("evt-1", 5), Notify::Outbox, None)
            .expect("queued");
        assert_eq!(
            story.dispatch(&conn, true).expect("crash"),
            Dispatch::Crashed { message_id: 1 }
        );
        let pending = outbox::rows(&conn).expect("rows");
        assert_eq!(pending[0].sent_at, None, "not marked sent");
        assert_eq!(
            story.dispatch(&conn, false).expect("again"),
            Dispatch::Drained { sent: 1 }
        );
        let effects = story.effects(&conn).expect("effects");
        let shown = if dedup { 1 } else { 2 };
        assert_eq!(
            effects.resent,
            vec![Resent {
                message_id: 1,
                sends: 2,
                shown
            }],
            "dedup={dedup}"
        );
        let verdict = if dedup { Told::Once } else { Told::Duplicate };
        assert_eq!(effects.verdicts[0].verdict, verdict, "dedup={dedup}");
    }
}

/// A redelivery after the purge is applied again, and the story counts it:
/// `applied_times` 2 is the hazard the page names. A new story (a new
/// receiver) starts counting again.
#[test]
fn the_story_counts_an_event_applied_again_after_the_purge() {
    let conn = database();
    let mut story = Story::new(receiver(false));
    let e = event("evt-1", 5);
    let times = |r: story::Redelivery| (r.outcome.kind() == "duplicate", r.applied_times);
    assert_eq!(
        times(story.redeliver(&conn, &e).expect("first")),
        (false, 1)
    );
    assert_eq!(times(story.redeliver(&conn, &e).expect("dup")), (true, 1));
    let day = 86_400_000;
    assert_eq!(
        retention::received_at(&conn, "provider-a", "evt-1").expect("row"),
        Some(0)
    );
    retention::advance(&conn, 2 * day).expect("advance");
    assert_eq!(retention::purge(&conn, day, 100).expect("purge"), 1);
    assert_eq!(
        retention::received_at(&conn, "provider-a", "evt-1").expect("row"),
        None
    );
    assert_eq!(
        times(story.redeliver(&conn, &e).expect("again")),
        (false, 2)
    );
    assert_eq!(
        retention::received_at(&conn, "provider-a", "evt-1").expect("row"),
        Some(2 * day)
    );
    let mut fresh = Story::new(receiver(false));
    retention::advance(&conn, 2 * day).expect("advance");
    retention::purge(&conn, day, 100).expect("purge");
    assert_eq!(
        times(fresh.redeliver(&conn, &e).expect("new story")),
        (false, 1)
    );
}
