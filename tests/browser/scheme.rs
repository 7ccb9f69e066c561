//! Browser tests for "where the scheme ends": the page's facade
//! (`Notifier`, `Lab.outbox`, `Lab.activate`, the lab clock, `Lab.purge`)
//! on real SQLite stored in real OPFS, in a dedicated worker of a real
//! (headless) Chromium — the same calls `www/db/worker.js` makes.
//!
//! A module of `tests/browser/main.rs` (`wasm-pack test --headless --chrome -- --test browser`).
//! Each test opens its own database name, removed first in case an earlier
//! run left it behind and removed again at the end.

use std::time::Duration;

use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::schema;
use inbox_lab::wasm::Lab;
use inbox_lab::wasm::Notifier;
use rusqlite::Connection;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{get, remove, text, version1};

const DAY: f64 = 86_400_000.0;

/// A fresh OPFS database `name` opened through the facade, as the worker
/// opens it: account 1 at balance 0, empty inbox.
async fn fresh_lab(name: &str) -> Lab {
    remove(name).await;
    Lab::open(name.into(), "opfs".into()).await.expect("open")
}

async fn finish(mut lab: Lab, name: &str) {
    lab.close();
    remove(name).await;
}

/// `{source: "shop", event_id, account_id: 1, amount}` as the page sends it.
fn credit(event_id: &str, amount: u32) -> JsValue {
    js_sys::JSON::parse(&format!(
        r#"{{"source":"shop","event_id":"{event_id}","account_id":1,"amount":{amount}}}"#
    ))
    .expect("json")
}

fn array(v: JsValue) -> js_sys::Array {
    v.dyn_into().expect("an array")
}

fn balance(lab: &Lab) -> f64 {
    let accounts = array(get(&lab.tables().expect("tables"), "accounts"));
    get(&accounts.get(0), "balance").as_f64().expect("balance")
}

fn inbox_len(lab: &Lab) -> u32 {
    array(get(&lab.tables().expect("tables"), "inbox")).length()
}

/// The message ids the user was shown, in order.
fn shown(notifier: &Notifier) -> Vec<String> {
    array(notifier.shown().expect("shown"))
        .iter()
        .map(|s| text(&s, "message_id").expect("message_id"))
        .collect()
}

fn s(value: &str) -> JsValue {
    JsValue::from_str(value)
}

/// A duration as the page passes it: a JS number of milliseconds.
fn ms(value: f64) -> JsValue {
    JsValue::from_f64(value)
}

/// Send, then commit: the transaction fails after the send and rolls back,
/// but a rollback cannot unsend. The user was told about a credit that
/// never happened.
#[test]
async fn send_before_commit_and_a_crash_notify_a_credit_that_never_happened() {
    let name = "scheme-before.sqlite3";
    let lab = fresh_lab(name).await;
    let mut notifier = Notifier::new(JsValue::TRUE).expect("notifier");
    let err = notifier
        .deliver(
            &lab,
            credit("pay-1", 100),
            s("send_before_commit"),
            s("after_send_before_commit"),
        )
        .expect_err("crash");
    assert_eq!(text(&err, "kind").as_deref(), Some("simulated_crash"));
    assert_eq!(get(&err, "http_status").as_f64(), Some(500.0));
    assert_eq!(balance(&lab), 0.0, "no credit");
    assert_eq!(inbox_len(&lab), 0, "no inbox row");
    assert_eq!(
        shown(&notifier),
        ["event:shop/pay-1"],
        "but the user was told"
    );
    finish(lab, name).await;
}

/// Commit, then send: a crash between the two loses the notification for
/// good — the sender's retry is a duplicate, and a duplicate sends nothing.
#[test]
async fn send_after_commit_and_a_crash_credit_without_a_notification() {
    let name = "scheme-after.sqlite3";
    let lab = fresh_lab(name).await;
    let mut notifier = Notifier::new(JsValue::TRUE).expect("notifier");
    let err = notifier
        .deliver(
            &lab,
            credit("pay-1", 100),
            s("send_after_commit"),
            s("after_commit_before_send"),
        )
        .expect_err("crash");
    assert_eq!(text(&err, "kind").as_deref(), Some("simulated_crash"));
    assert_eq!(balance(&lab), 100.0, "credited");
    let retry = notifier
        .deliver(
            &lab,
            credit("pay-1", 100),
            s("send_after_commit"),
            JsValue::NULL,
        )
        .expect("retry");
    assert_eq!(text(&retry, "outcome").as_deref(), Some("duplicate"));
    assert_eq!(balance(&lab), 100.0);
    assert!(shown(&notifier).is_empty(), "never notified");
    finish(lab, name).await;
}

/// The outbox: a crash before COMMIT takes the outbox row with it; the
/// committed one waits for the dispatcher. A dispatcher that crashes after
/// sending and before marking sends it again — at-least-once. Without the
/// receiver's dedup the user sees it twice; with it, exactly once.
#[test]
async fn the_outbox_is_at_least_once_and_receiver_dedup_makes_it_exactly_once() {
    for dedup in [false, true] {
        let name = if dedup {
            "scheme-outbox-dedup.sqlite3"
        } else {
            "scheme-outbox.sqlite3"
        };
        let lab = fresh_lab(name).await;
        let mut notifier = Notifier::new(JsValue::from_bool(dedup)).expect("notifier");
        assert_eq!(notifier.dedup(), dedup);

        let err = notifier
            .deliver(
                &lab,
                credit("pay-1", 100),
                s("outbox"),
                s("after_send_before_commit"),
            )
            .expect_err("crash before commit");
        assert_eq!(text(&err, "kind").as_deref(), Some("simulated_crash"));
        assert_eq!(
            array(lab.outbox().expect("outbox")).length(),
            0,
            "rolled back"
        );

        let ok = notifier
            .deliver(&lab, credit("pay-1", 100), s("outbox"), JsValue::NULL)
            .expect("retry");
        assert_eq!(text(&ok, "outcome").as_deref(), Some("applied"));
        assert!(
            shown(&notifier).is_empty(),
            "nothing sent inside the transaction"
        );
        let outbox = array(lab.outbox().expect("outbox"));
        assert_eq!(outbox.length(), 1);
        assert!(get(&outbox.get(0), "sent_at").is_null(), "pending");
        let id = get(&outbox.get(0), "message_id").as_f64().expect("id");

        let err = notifier
            .dispatch_one(&lab, s("after_send_before_mark"))
            .expect_err("dispatcher crash");
        assert_eq!(text(&err, "kind").as_deref(), Some("simulated_crash"));
        assert!(
            get(&array(lab.outbox().expect("outbox")).get(0), "sent_at").is_null(),
            "sent, but not marked"
        );
        assert_eq!(
            notifier.dispatch_one(&lab, JsValue::NULL).expect("again"),
            Some(id)
        );
        assert_eq!(
            notifier.dispatch_one(&lab, JsValue::NULL).expect("drained"),
            None
        );
        assert!(!get(&array(lab.outbox().expect("outbox")).get(0), "sent_at").is_null());

        let message = format!("outbox:{id}");
        let expected = if dedup {
            vec![message.clone()]
        } else {
            vec![message.clone(), message]
        };
        assert_eq!(shown(&notifier), expected, "dedup={dedup}");
        assert_eq!(balance(&lab), 100.0, "one credit either way");

        notifier.clear().expect("clear");
        assert!(shown(&notifier).is_empty());
        finish(lab, name).await;
    }
}

/// Every JavaScript value is checked before any SQL runs, and a wrong one
/// is an `invalid_input` error object — never a panic, never a silent
/// coercion: unknown strategies and crash points (the dispatcher knows
/// only its own), a string for a boolean or a number, a lone surrogate in
/// a business key.
#[test]
async fn wrong_values_are_invalid_input_and_change_nothing() {
    let name = "scheme-invalid.sqlite3";
    let lab = fresh_lab(name).await;
    let kind_and_code = |err: &JsValue| (text(err, "kind"), text(err, "code"));
    let invalid = |code: &str| (Some("invalid_input".to_string()), Some(code.to_string()));

    let err = Notifier::new(s("yes"))
        .err()
        .expect("a string is not a boolean");
    assert_eq!(kind_and_code(&err), invalid("wrong_type"));

    let mut notifier = Notifier::new(JsValue::FALSE).expect("notifier");
    let err = notifier
        .deliver(&lab, credit("pay-1", 1), s("carrier_pigeon"), JsValue::NULL)
        .expect_err("strategy");
    assert_eq!(text(&err, "kind").as_deref(), Some("invalid_input"));
    let err = notifier
        .deliver(&lab, credit("pay-1", 1), s("outbox"), s("sideways"))
        .expect_err("crash");
    assert_eq!(text(&err, "field").as_deref(), Some("fault"));
    assert_eq!(kind_and_code(&err), invalid("unknown_value"));
    let err = notifier
        .dispatch_one(&lab, s("after_commit_before_send"))
        .expect_err("not a dispatcher crash point");
    assert_eq!(text(&err, "field").as_deref(), Some("fault"));
    let err = notifier
        .dispatch_one(&lab, JsValue::from_f64(1.0))
        .expect_err("a number is not a crash point");
    assert_eq!(kind_and_code(&err), invalid("wrong_type"));

    let lone = JsValue::from(js_sys::JsString::from_char_code1(0xD800));
    let err = lab
        .activate(s("shop"), lone, s("A-1"))
        .expect_err("lone surrogate");
    assert_eq!(kind_and_code(&err), invalid("lone_surrogate"));
    assert_eq!(text(&err, "field").as_deref(), Some("event_id"));
    let err = lab
        .activate(s("shop"), s("evt-1"), JsValue::from_f64(7.0))
        .expect_err("a number is not an order id");
    assert_eq!(kind_and_code(&err), invalid("wrong_type"));

    let err = lab
        .advance_clock(s("86400000"))
        .expect_err("a string is not a number");
    assert_eq!(kind_and_code(&err), invalid("string_for_number"));
    let err = lab.purge(JsValue::UNDEFINED).expect_err("missing");
    assert_eq!(kind_and_code(&err), invalid("missing_field"));

    assert_eq!(lab.now().expect("now"), 0.0, "the clock did not move");
    assert_eq!(inbox_len(&lab), 0, "nothing ran");
    let first = lab
        .activate(s("shop"), s("evt-1"), s("A-1"))
        .expect("the order was not activated by any refused call");
    assert_eq!(text(&first, "outcome").as_deref(), Some("activated"));
    finish(lab, name).await;
}

/// Two different events about one order both pass event dedup; the
/// business key makes the second `already_active` — a 200, a business
/// answer, not a 500. Replays answer their first result.
#[test]
async fn a_business_key_activates_an_order_once() {
    let name = "scheme-orders.sqlite3";
    let lab = fresh_lab(name).await;
    let first = lab
        .activate("shop".into(), "evt-7".into(), "A-1".into())
        .expect("first");
    assert_eq!(text(&first, "outcome").as_deref(), Some("activated"));
    assert_eq!(get(&first, "http_status").as_f64(), Some(200.0));

    let second = lab
        .activate("shop".into(), "evt-8".into(), "A-1".into())
        .expect("second");
    assert_eq!(text(&second, "outcome").as_deref(), Some("already_active"));
    assert_eq!(get(&second, "http_status").as_f64(), Some(200.0));
    assert_eq!(text(&second, "by_event_id").as_deref(), Some("evt-7"));
    assert_eq!(text(&second, "by_source").as_deref(), Some("shop"));

    for (event_id, first_result) in [("evt-7", "activated"), ("evt-8", "already_active")] {
        let replay = lab
            .activate("shop".into(), event_id.into(), "A-1".into())
            .expect("replay");
        assert_eq!(text(&replay, "outcome").as_deref(), Some("duplicate"));
        assert_eq!(text(&replay, "first").as_deref(), Some(first_result));
    }
    let err = lab
        .activate("shop".into(), "evt-7".into(), "B-2".into())
        .expect_err("same event, another order");
    assert_eq!(text(&err, "kind").as_deref(), Some("invalid_input"));
    assert_eq!(get(&err, "http_status").as_f64(), Some(400.0));

    // Persisted in OPFS: after a close and reopen the order is still active.
    let mut lab = lab;
    lab.close();
    let lab = Lab::open(name.into(), "opfs".into()).await.expect("reopen");
    let again = lab
        .activate("shop".into(), "evt-9".into(), "A-1".into())
        .expect("after reopen");
    assert_eq!(text(&again, "outcome").as_deref(), Some("already_active"));
    finish(lab, name).await;
}

/// Purging inbox rows older than a window, on the lab clock: inside the
/// window a redelivery is a duplicate; after a purge that removed its row,
/// the same event is applied again — the credit doubles.
#[test]
async fn a_redelivery_after_the_purge_is_applied_again() {
    let name = "scheme-retention.sqlite3";
    let mut lab = fresh_lab(name).await;
    assert_eq!(lab.now().expect("now"), 0.0);
    let e = || credit("ret-1", 100);
    let first = lab
        .deliver(e(), JsValue::NULL, JsValue::NULL)
        .expect("first");
    assert_eq!(text(&first, "outcome").as_deref(), Some("applied"));

    assert_eq!(
        lab.advance_clock(ms(3.0 * DAY)).expect("advance"),
        3.0 * DAY
    );
    assert_eq!(lab.now().expect("now"), 3.0 * DAY);
    assert_eq!(
        lab.purge(ms(7.0 * DAY)).expect("purge"),
        0.0,
        "inside the window"
    );
    let replay = lab
        .deliver(e(), JsValue::NULL, JsValue::NULL)
        .expect("replay");
    assert_eq!(text(&replay, "outcome").as_deref(), Some("duplicate"));

    assert_eq!(lab.purge(ms(DAY)).expect("purge"), 1.0);
    assert_eq!(inbox_len(&lab), 0);
    let again = lab
        .deliver(e(), JsValue::NULL, JsValue::NULL)
        .expect("redelivery");
    assert_eq!(
        text(&again, "outcome").as_deref(),
        Some("applied"),
        "the hazard"
    );
    assert_eq!(balance(&lab), 200.0, "paid twice");

    let err = lab.advance_clock(ms(-1.0)).expect_err("backwards");
    assert_eq!(text(&err, "kind").as_deref(), Some("invalid_input"));
    let err = lab.purge(ms(1.5)).expect_err("fraction");
    assert_eq!(text(&err, "kind").as_deref(), Some("invalid_input"));
    finish(lab, name).await;
}

/// A database written by schema version 1 (built here with
/// `schema::migrate_to(.., 1)` and v1 rows, in OPFS) reopened by the
/// worker's `Lab.open` — and by `db::open` — is migrated and keeps working:
/// its rows survive, a replay gets the stored receipt, receipts keep
/// counting, and the new tables (outbox, orders, clock) work.
#[test]
async fn a_version_1_database_keeps_working_after_reopening() {
    let name = "scheme-v1.sqlite3";
    remove(name).await;
    {
        // The default VFS is the OPFS pool: this is a file in OPFS.
        let mut conn = Connection::open(name).expect("open");
        version1::write(&mut conn, Duration::from_millis(100));
    }

    let mut lab = Lab::open(name.into(), "opfs".into())
        .await
        .expect("migrating open");
    assert_eq!(balance(&lab), 500.0, "the v1 balance survived");
    let replay = lab
        .deliver(
            js_sys::JSON::parse(
                r#"{"source":"provider-a","event_id":"evt-1","account_id":1,"amount":500}"#,
            )
            .expect("json"),
            JsValue::NULL,
            JsValue::NULL,
        )
        .expect("replay");
    assert_eq!(text(&replay, "outcome").as_deref(), Some("duplicate"));
    assert_eq!(get(&get(&replay, "receipt"), "seq").as_f64(), Some(1.0));

    let mut notifier = Notifier::new(JsValue::TRUE).expect("notifier");
    let next = notifier
        .deliver(&lab, credit("pay-1", 7), s("outbox"), JsValue::NULL)
        .expect("new event through the outbox");
    assert_eq!(
        get(&get(&next, "receipt"), "seq").as_f64(),
        Some(2.0),
        "the counter carried over"
    );
    assert!(notifier
        .dispatch_one(&lab, JsValue::NULL)
        .expect("dispatch")
        .is_some());
    assert_eq!(shown(&notifier).len(), 1);
    let order = lab
        .activate("shop".into(), "evt-7".into(), "A-1".into())
        .expect("activate");
    assert_eq!(text(&order, "outcome").as_deref(), Some("activated"));
    // The v1 row arrived at the clock's beginning (migrated rows get
    // `received_at = 0`), like pay-1: two days later a one-day window
    // purges both.
    lab.advance_clock(ms(2.0 * DAY)).expect("advance");
    assert_eq!(lab.purge(ms(DAY)).expect("purge"), 2.0);
    let mut lab = lab;
    lab.close();

    // The page leaves the file in WAL mode: without shared memory in the
    // OPFS pool only an exclusive connection can open it.
    let conn = db::open_with(name, Mode::Existing, Duration::from_millis(100), |c| {
        Ok(c.execute_batch("PRAGMA locking_mode = EXCLUSIVE")?)
    })
    .expect("db::open_with");
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version");
    assert_eq!(v, schema::VERSION);
    drop(conn);
    remove(name).await;
}

/// The page's own calls (`Notifier.effects`, `.dispatch`, `.redeliver`,
/// `Lab.receivedAt`): Rust's verdicts arrive as the page draws them, and a
/// wrong value is an `invalid_input` error object.
#[test]
async fn the_page_reads_rusts_verdicts_through_the_facade() {
    let name = "scheme-verdicts.sqlite3";
    let lab = fresh_lab(name).await;
    let mut notifier = Notifier::new(JsValue::FALSE).expect("notifier");
    notifier
        .deliver(&lab, credit("pay-1", 100), s("outbox"), JsValue::NULL)
        .expect("queued");
    let crashed = notifier.dispatch(&lab, JsValue::TRUE).expect("crash");
    assert_eq!(text(&crashed, "outcome").as_deref(), Some("crashed"));
    assert_eq!(get(&crashed, "message_id").as_f64(), Some(1.0));
    let drained = notifier.dispatch(&lab, JsValue::FALSE).expect("drain");
    assert_eq!(get(&drained, "sent").as_f64(), Some(1.0));
    let effects = notifier.effects(&lab).expect("effects");
    let verdict = array(get(&effects, "verdicts")).get(0);
    assert_eq!(text(&verdict, "event_id").as_deref(), Some("pay-1"));
    assert_eq!(text(&verdict, "verdict").as_deref(), Some("duplicate"));
    let resent = array(get(&effects, "resent")).get(0);
    assert_eq!(get(&resent, "sends").as_f64(), Some(2.0));
    assert_eq!(get(&resent, "shown").as_f64(), Some(2.0));
    let err = notifier.dispatch(&lab, s("yes")).expect_err("a string");
    assert_eq!(text(&err, "kind").as_deref(), Some("invalid_input"));

    let first = notifier
        .redeliver(&lab, credit("ret-1", 100))
        .expect("first");
    assert_eq!(get(&first, "applied_times").as_f64(), Some(1.0));
    lab.advance_clock(ms(2.0 * DAY)).expect("advance");
    assert_eq!(
        lab.received_at(s("shop"), s("ret-1")).expect("row"),
        Some(0.0)
    );
    lab.purge(ms(DAY)).expect("purge");
    assert_eq!(lab.received_at(s("shop"), s("ret-1")).expect("none"), None);
    let again = notifier
        .redeliver(&lab, credit("ret-1", 100))
        .expect("again");
    assert_eq!(text(&again, "outcome").as_deref(), Some("applied"));
    assert_eq!(
        get(&again, "applied_times").as_f64(),
        Some(2.0),
        "applied again"
    );
    let err = lab.received_at(s("shop"), ms(1.0)).expect_err("a number");
    assert_eq!(text(&err, "kind").as_deref(), Some("invalid_input"));
    finish(lab, name).await;
}
