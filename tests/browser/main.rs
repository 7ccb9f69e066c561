//! Browser tests: the same core, compiled to wasm, on real SQLite stored in
//! real OPFS, inside a dedicated worker of a real (headless) Chromium.
//!
//! Run with `wasm-pack test --headless --chrome` (the README's test command
//! does). Each test uses its own database name and deletes it at the end, so
//! tests do not see each other's rows and the OPFS pool does not fill up.
//!
//! One test binary, so one browser start per run: this file (the facade, the
//! console budget) and its modules — `import` (hostile files through `Lab`),
//! `recovery` (a stored database the page cannot use), `scheme` (where the
//! scheme ends).
#![cfg(all(target_family = "wasm", feature = "full"))]

#[path = "../support/hostile_db.rs"]
mod hostile_db;
mod import;
mod recovery;
mod scheme;
#[path = "../support/version1.rs"]
mod version1;

use std::time::Duration;

use inbox_lab::core::db::{self, Mode};
use inbox_lab::wasm::{
    check_delivery, event_from_js, install_opfs, judge_handler, Lab, RaceLab, POOL_CAPACITY,
};
use inbox_lab::{
    apply, core::schema, core::tables, labs::tools::scenario, Error, Event, Fault, Field, Outcome,
};
use rusqlite::Connection;
use sqlite_wasm_rs::vfs::VfsFilesManager;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::{wasm_bindgen_test as test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_dedicated_worker);

const TIMEOUT: Duration = Duration::from_millis(100);

/// A fresh, initialised OPFS database called `name` (removed first if an
/// earlier run left it behind).
async fn fresh(name: &str) -> Connection {
    let pool = install_opfs().await.expect("OPFS pool");
    pool.remove(name).expect("remove old copy");
    let mut conn = db::open(name, Mode::Create, TIMEOUT).expect("open");
    schema::init(&mut conn, &[1]).expect("init");
    conn
}

/// Removes `name` and its journal and WAL from the pool.
async fn remove(name: &str) {
    let pool = install_opfs().await.expect("OPFS pool");
    for suffix in ["", "-journal", "-wal"] {
        pool.remove(&format!("{name}{suffix}")).expect("remove");
    }
}

/// A pool an earlier build left larger (it held 16 slots) gives its unused
/// slots back when the page installs it: each slot is a slower start.
#[test]
async fn a_larger_pool_gives_back_its_spare_slots() {
    let pool = install_opfs().await.expect("OPFS pool");
    let before = pool.capacity();
    assert!(before >= POOL_CAPACITY, "{before} slots");
    pool.add_capacity(6).await.expect("add slots");
    assert_eq!(pool.capacity(), before + 6);
    let pool = install_opfs().await.expect("the pool, installed again");
    assert_eq!(pool.capacity(), before);
}

fn event(source: &str, id: &str, account: i64, amount: i64) -> Event {
    Event::new(source, id, account, amount).expect("valid event")
}

/// The article's scenario in the browser, minus threads: the 20 deliveries
/// of one event run one after another on the worker's only connection, and
/// the summary is the script's line.
#[test]
async fn article_scenario_on_opfs() {
    let conn = fresh("scenario.sqlite3").await;
    let report = scenario::run(&conn, |e| {
        (0..scenario::BURST)
            .map(|_| apply(&conn, e, None))
            .collect()
    })
    .expect("scenario");
    assert_eq!(
        report.summary(),
        "OK: balance=1500, inbox=3, applied=1, duplicate=19"
    );
    drop(conn);
    remove("scenario.sqlite3").await;
}

/// What was committed survives closing and reopening the OPFS file, and a
/// replay after the reopen still answers with the first receipt.
#[test]
async fn committed_events_survive_close_and_reopen() {
    let name = "persist.sqlite3";
    let conn = fresh(name).await;
    let e = event("provider-a", "evt-1", 1, 500);
    let first = apply(&conn, &e, None).expect("apply");
    let before = tables::snapshot(&conn).expect("tables");
    drop(conn);

    let conn = db::open(name, Mode::Existing, TIMEOUT).expect("reopen");
    assert_eq!(tables::snapshot(&conn).expect("tables"), before);
    assert_eq!(before.balance(1), Some(500));
    assert_eq!(
        apply(&conn, &e, None).expect("replay"),
        Outcome::Duplicate(first.receipt())
    );
    drop(conn);
    remove(name).await;
}

/// Both fault points roll everything back — no inbox row, no credit — and
/// the retry then applies, also after a close and reopen.
#[test]
async fn faults_roll_back_and_retry_applies() {
    let name = "faults.sqlite3";
    let conn = fresh(name).await;
    let e = event("provider-a", "evt-2", 1, 500);
    for fault in Fault::ALL {
        let err = apply(&conn, &e, Some(fault)).expect_err("fault fires");
        assert_eq!(err, fault.crash());
        assert_eq!((err.http_status(), err.retryable()), (500, true));
        let t = tables::snapshot(&conn).expect("tables");
        assert!(t.inbox.is_empty(), "{fault}: inbox row survived");
        assert_eq!(t.balance(1), Some(0), "{fault}: credit survived");
    }
    drop(conn);
    let conn = db::open(name, Mode::Existing, TIMEOUT).expect("reopen");
    let t = tables::snapshot(&conn).expect("tables");
    assert!(t.inbox.is_empty());
    let applied = apply(&conn, &e, None).expect("retry");
    assert_eq!(applied.kind(), "applied");
    assert_eq!(
        applied.receipt().seq,
        1,
        "rolled-back receipts used no number"
    );
    assert_eq!(
        tables::snapshot(&conn).expect("tables").balance(1),
        Some(500)
    );
    drop(conn);
    remove(name).await;
}

/// The article's three exercises: the source is part of the key; a missing
/// account leaves the inbox untouched; a replay returns the first receipt.
#[test]
async fn the_three_exercises() {
    let name = "exercises.sqlite3";
    let conn = fresh(name).await;
    let a = apply(&conn, &event("provider-a", "evt-1", 1, 500), None).expect("a");
    let b = apply(&conn, &event("provider-b", "evt-1", 1, 500), None).expect("b");
    assert_eq!((a.kind(), b.kind()), ("applied", "applied"));
    assert_eq!(
        b.receipt().balance_after,
        1000,
        "provider-b grows the balance"
    );

    let before = tables::snapshot(&conn).expect("tables");
    let err = apply(&conn, &event("provider-a", "evt-9", 42, 500), None).expect_err("missing");
    assert_eq!(err, Error::UnknownAccount { account_id: 42 });
    assert_eq!(err.http_status(), 422);
    assert_eq!(tables::snapshot(&conn).expect("tables"), before);

    let replay = apply(&conn, &event("provider-a", "evt-1", 1, 500), None).expect("replay");
    assert_eq!(replay, Outcome::Duplicate(a.receipt()));
    drop(conn);
    remove(name).await;
}

/// Two real connections to one `memdb` database in this worker: while one
/// holds the write lock, the other's delivery is `busy` (503, retryable) —
/// never "duplicate" — and writes nothing; afterwards it applies.
#[test]
async fn lock_timeout_is_busy_not_duplicate() {
    let path = "file:/busy-test?vfs=memdb";
    let holder = db::open(path, Mode::Create, TIMEOUT).expect("holder");
    let mut setup = db::open(path, Mode::Create, TIMEOUT).expect("second");
    schema::init(&mut setup, &[1]).expect("init");
    let e = event("provider-a", "evt-1", 1, 500);

    holder.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let err = apply(&setup, &e, None).expect_err("busy");
    assert_eq!(err, Error::Busy);
    assert_eq!(
        (err.kind(), err.http_status(), err.retryable()),
        ("busy", 503, true)
    );
    holder.execute_batch("ROLLBACK").expect("unlock");

    assert!(tables::snapshot(&setup).expect("tables").inbox.is_empty());
    assert_eq!(apply(&setup, &e, None).expect("apply").kind(), "applied");
}

/// The facade refuses JavaScript values that are not exactly what the
/// contract says: strings for keys, integral numbers for account and amount.
#[test]
fn js_values_are_validated_before_any_sql() {
    let make = |amount: JsValue| {
        let o = js_sys::Object::new();
        let set = |k: &str, v: JsValue| {
            js_sys::Reflect::set(&o, &JsValue::from_str(k), &v).expect("set");
        };
        set("source", "provider-a".into());
        set("event_id", "evt-1".into());
        set("account_id", 1.into());
        set("amount", amount);
        JsValue::from(o)
    };
    assert!(event_from_js(&make(JsValue::from_f64(500.0))).is_ok());
    let bigint = js_sys::BigInt::from(10u32);
    for (bad, why) in [
        (JsValue::from_str("500"), "string"),
        (JsValue::from_f64(1.5), "fraction"),
        (JsValue::from_f64(f64::NAN), "NaN"),
        (JsValue::from_f64(f64::INFINITY), "Infinity"),
        (JsValue::from_f64(1e21), "1e21"),
        (JsValue::from_f64(0.0), "zero"),
        (JsValue::NULL, "null"),
        (JsValue::UNDEFINED, "missing"),
        (bigint.into(), "BigInt"),
    ] {
        match event_from_js(&make(bad)) {
            Err(Error::InvalidInput { field, .. }) => assert_eq!(field, Field::AMOUNT, "{why}"),
            other => panic!("{why}: expected invalid amount, got {other:?}"),
        }
    }
    // A lone surrogate has no UTF-8 form: refused, not silently replaced.
    let lone = js_sys::JsString::from_char_code1(0xD800);
    let o = make(JsValue::from_f64(5.0));
    js_sys::Reflect::set(&o, &JsValue::from_str("event_id"), &lone).expect("set");
    match event_from_js(&o) {
        Err(Error::InvalidInput { field, .. }) => assert_eq!(field, Field::EVENT_ID),
        other => panic!("lone surrogate: {other:?}"),
    }
}

/// The facade end to end: `Lab` over OPFS answers plain objects, throws
/// error objects with kind/status/retryable, and reset starts afresh.
#[test]
async fn lab_facade_answers_and_errors() {
    let mut lab = Lab::open("facade.sqlite3".into(), "opfs".into())
        .await
        .expect("open");
    lab.reset().expect("reset");
    let ev = js_sys::JSON::parse(
        r#"{"source":"provider-a","event_id":"evt-1","account_id":1,"amount":500}"#,
    )
    .expect("json");
    let ok = lab
        .deliver(ev.clone(), JsValue::UNDEFINED, JsValue::UNDEFINED)
        .expect("deliver");
    let get = |v: &JsValue, k: &str| js_sys::Reflect::get(v, &JsValue::from_str(k)).expect(k);
    assert_eq!(get(&ok, "outcome").as_string().as_deref(), Some("applied"));
    assert_eq!(get(&ok, "http_status").as_f64(), Some(200.0));

    // A repeat never reaches the after-INSERT fault point: nothing was inserted.
    let dup = lab
        .deliver(
            ev.clone(),
            JsValue::from_str("after_insert"),
            JsValue::UNDEFINED,
        )
        .expect("duplicate");
    assert_eq!(
        get(&dup, "outcome").as_string().as_deref(),
        Some("duplicate")
    );

    let ev2 = js_sys::JSON::parse(
        r#"{"source":"provider-a","event_id":"evt-2","account_id":1,"amount":5}"#,
    )
    .expect("json");
    let err = lab
        .deliver(
            ev2.clone(),
            JsValue::from_str("after_update"),
            JsValue::UNDEFINED,
        )
        .expect_err("fault");
    assert_eq!(
        get(&err, "kind").as_string().as_deref(),
        Some("simulated_crash")
    );
    assert_eq!(get(&err, "http_status").as_f64(), Some(500.0));
    assert_eq!(get(&err, "retryable").as_bool(), Some(true));

    let err = lab
        .deliver(ev2, JsValue::from_str("sideways"), JsValue::UNDEFINED)
        .expect_err("bad fault");
    assert_eq!(
        get(&err, "kind").as_string().as_deref(),
        Some("invalid_input")
    );
    assert_eq!(get(&err, "field").as_string().as_deref(), Some("fault"));

    let t = lab.tables().expect("tables");
    let inbox: js_sys::Array = get(&t, "inbox").dyn_into().expect("array");
    assert_eq!(inbox.length(), 1, "only evt-1 was committed");

    // What the tables panel reads: the rows written last, and the full count.
    let ev3 = js_sys::JSON::parse(
        r#"{"source":"provider-a","event_id":"evt-0","account_id":1,"amount":1}"#,
    )
    .expect("json");
    lab.deliver(ev3, JsValue::UNDEFINED, JsValue::UNDEFINED)
        .expect("deliver evt-0");
    let newest = lab.newest_tables(JsValue::from(1)).expect("newest");
    let inbox: js_sys::Array = get(&newest, "inbox").dyn_into().expect("array");
    assert_eq!(inbox.length(), 1);
    assert_eq!(text(&inbox.get(0), "event_id").as_deref(), Some("evt-0"));
    assert_eq!(get(&newest, "inbox_total").as_f64(), Some(2.0));
    for bad in [
        JsValue::from(-1),
        JsValue::from_str("5"),
        JsValue::UNDEFINED,
    ] {
        let err = lab.newest_tables(bad).expect_err("not a count");
        assert_eq!(get(&err, "field").as_string().as_deref(), Some("newest"));
    }

    lab.reset().expect("reset");
    let t = lab.tables().expect("tables");
    let accounts: js_sys::Array = get(&t, "accounts").dyn_into().expect("array");
    let inbox: js_sys::Array = get(&t, "inbox").dyn_into().expect("array");
    assert_eq!((accounts.length(), inbox.length()), (1, 0));
    assert_eq!(get(&accounts.get(0), "balance").as_f64(), Some(0.0));
    lab.close();
    remove("facade.sqlite3").await;
}

fn get(v: &JsValue, k: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(k)).expect(k)
}

fn text(v: &JsValue, k: &str) -> Option<String> {
    get(v, k).as_string()
}

/// Step mode through the facade: each call runs one statement; while the
/// stepped transaction is open, another delivery is `busy` (it would need
/// the write lock), and "throw" rolls everything back.
#[test]
async fn step_mode_runs_one_statement_at_a_time() {
    let mut lab = Lab::open("steps.sqlite3".into(), "opfs".into())
        .await
        .expect("open");
    lab.reset().expect("reset");
    let ev = js_sys::JSON::parse(
        r#"{"source":"provider-a","event_id":"evt-1","account_id":1,"amount":500}"#,
    )
    .expect("json");
    let first = lab
        .step_start(ev.clone(), JsValue::UNDEFINED)
        .expect("start");
    assert_eq!(text(&get(&first, "next"), "step").as_deref(), Some("begin"));
    let mut ran = Vec::new();
    loop {
        let a = lab.step_next().expect("step");
        ran.push(text(&a, "ran").expect("ran"));
        if ran.len() == 2 {
            // Inside the open transaction: a second delivery must wait.
            let err = lab
                .deliver(ev.clone(), JsValue::UNDEFINED, JsValue::UNDEFINED)
                .expect_err("busy");
            assert_eq!(text(&err, "kind").as_deref(), Some("busy"));
        }
        if !get(&a, "outcome").is_null() && !get(&a, "outcome").is_undefined() {
            assert_eq!(
                text(&get(&a, "outcome"), "outcome").as_deref(),
                Some("applied")
            );
            break;
        }
    }
    assert_eq!(
        ran,
        ["begin", "insert", "credit", "store_receipt", "commit"]
    );

    // Throw half-way: nothing of evt-2 survives.
    let ev2 = js_sys::JSON::parse(
        r#"{"source":"provider-a","event_id":"evt-2","account_id":1,"amount":7}"#,
    )
    .expect("json");
    lab.step_start(ev2, JsValue::UNDEFINED).expect("start");
    for _ in 0..3 {
        lab.step_next().expect("step");
    }
    let err = lab.step_throw().expect_err("thrown");
    assert_eq!(text(&err, "kind").as_deref(), Some("simulated_crash"));
    let t = lab.tables().expect("tables");
    let inbox: js_sys::Array = get(&t, "inbox").dyn_into().expect("array");
    assert_eq!(inbox.length(), 1, "only evt-1");
    let accounts: js_sys::Array = get(&t, "accounts").dyn_into().expect("array");
    assert_eq!(get(&accounts.get(0), "balance").as_f64(), Some(500.0));
    lab.close();
    remove("steps.sqlite3").await;
}

/// Export, then import into the OPFS database: a round trip; a bad file is
/// refused with a `file` error and the database is untouched. The console
/// reads but refuses writes.
#[test]
async fn export_import_and_console_on_opfs() {
    let mut lab = Lab::open("transfer.sqlite3".into(), "opfs".into())
        .await
        .expect("open");
    lab.reset().expect("reset");
    let ev = js_sys::JSON::parse(
        r#"{"source":"provider-a","event_id":"evt-1","account_id":1,"amount":500}"#,
    )
    .expect("json");
    lab.deliver(ev, JsValue::UNDEFINED, JsValue::UNDEFINED)
        .expect("deliver");
    let bytes = lab.export().expect("export");
    assert!(bytes.starts_with(b"SQLite format 3\0"));
    let before = js_sys::JSON::stringify(&lab.tables().expect("t")).expect("json");

    let err = lab
        .import(b"definitely not sqlite".to_vec())
        .expect_err("refused");
    assert_eq!(text(&err, "field").as_deref(), Some("file"));
    assert_eq!(
        js_sys::JSON::stringify(&lab.tables().expect("t")).expect("json"),
        before
    );

    lab.reset().expect("reset");
    lab.import(bytes).expect("import");
    assert_eq!(
        js_sys::JSON::stringify(&lab.tables().expect("t")).expect("json"),
        before
    );

    let r = lab
        .query("SELECT count(*) AS n FROM inbox".into())
        .expect("query");
    let rows: js_sys::Array = get(&r, "rows").dyn_into().expect("rows");
    assert_eq!(js_sys::Array::from(&rows.get(0)).get(0).as_f64(), Some(1.0));
    let err = lab
        .query("DELETE FROM inbox".into())
        .expect_err("write refused");
    assert_eq!(text(&err, "field").as_deref(), Some("sql"));

    let report = lab.run_scenario().expect("scenario");
    assert_eq!(
        text(&report, "summary").as_deref(),
        Some("OK: balance=1500, inbox=3, applied=1, duplicate=19")
    );
    lab.close();
    remove("transfer.sqlite3").await;
}

/// The race lab in the worker: two real connections to one `memdb`
/// database. Stepping two atomic handlers, the second `BEGIN IMMEDIATE`
/// waits for the write lock; the explorer finds no bad schedule for
/// `atomic` and finds double credits for `check_then_act`.
#[test]
fn race_lab_on_two_real_connections() {
    let mut lab = RaceLab::new(JsValue::from_f64(2.0)).expect("race lab");
    lab.start(JsValue::from_str("atomic")).expect("start");
    let r = lab.step(0).expect("A begins");
    assert_eq!(text(&r, "result").as_deref(), Some("ran"));
    let r = lab.step(1).expect("B tries to begin");
    assert_eq!(text(&r, "result").as_deref(), Some("waiting"));
    let mut last = JsValue::UNDEFINED;
    for _ in 0..4 {
        last = lab.step(0).expect("A runs on");
    }
    assert_eq!(text(&last, "answer").as_deref(), Some("applied"));
    let mut b = lab.step(1).expect("B begins now");
    assert_eq!(text(&b, "result").as_deref(), Some("ran"));
    while text(&b, "result").as_deref() == Some("ran") {
        b = lab.step(1).expect("B runs on");
    }
    assert_eq!(text(&b, "answer").as_deref(), Some("duplicate"));
    let verdict = get(&b, "verdict");
    assert_eq!(get(&verdict, "balance").as_f64(), Some(500.0));
    assert_eq!(get(&verdict, "double_credit").as_bool(), Some(false));

    let atomic = lab.explore(JsValue::from_str("atomic")).expect("explore");
    assert!(get(&atomic, "interleavings").as_f64().unwrap_or(0.0) >= 2.0);
    for k in ["double_credits", "lost_credits", "wrong_answers"] {
        assert_eq!(get(&atomic, k).as_f64(), Some(0.0), "atomic {k}");
    }
    let broken = lab
        .explore(JsValue::from_str("check_then_act"))
        .expect("explore");
    assert_eq!(get(&broken, "interleavings").as_f64(), Some(20.0));
    assert!(get(&broken, "double_credits").as_f64().unwrap_or(0.0) > 0.0);
    assert!(js_sys::Array::is_array(&get(&broken, "failing_schedule")));
}

/// Runs `sql` in the console of `lab`: `Ok(result)` or the error object,
/// and how many milliseconds it took.
fn timed_query(lab: &mut Lab, sql: &str) -> (Result<JsValue, JsValue>, f64) {
    let started = js_sys::Date::now();
    let answer = lab.query(sql.into());
    (answer, js_sys::Date::now() - started)
}

/// Delivers a fresh event through the facade; it must apply.
fn delivery_applies(lab: &mut Lab, event_id: &str) {
    let ev = js_sys::JSON::parse(&format!(
        r#"{{"source":"console","event_id":"{event_id}","account_id":1,"amount":5}}"#
    ))
    .expect("json");
    let answer = lab
        .deliver(ev, JsValue::UNDEFINED, JsValue::UNDEFINED)
        .expect("deliver after a console query");
    assert_eq!(text(&answer, "outcome").as_deref(), Some("applied"));
}

/// Issue 11: the endless `WITH RECURSIVE` query never returned and held the
/// worker. In the worker it now ends within the console's budget with
/// `query_budget`, a huge value is `value_too_big` at once, and a delivery
/// right after each applies on the same connection.
#[test]
async fn console_queries_end_within_their_budget() {
    let mut lab = Lab::open("console-budget.sqlite3".into(), "opfs".into())
        .await
        .expect("open");
    lab.reset().expect("reset");

    let (answer, ms) = timed_query(
        &mut lab,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
    );
    let err = answer.expect_err("stopped");
    assert_eq!(text(&err, "kind").as_deref(), Some("invalid_input"));
    assert_eq!(text(&err, "code").as_deref(), Some("query_budget"));
    assert_eq!(text(&err, "field").as_deref(), Some("sql"));
    assert_eq!(get(&err, "retryable").as_bool(), Some(false));
    assert!(ms < 5_000.0, "took {ms} ms; the budget is 2 s");
    delivery_applies(&mut lab, "after-endless");

    let (answer, ms) = timed_query(&mut lab, "SELECT randomblob(3e8)");
    let err = answer.expect_err("refused");
    assert_eq!(text(&err, "code").as_deref(), Some("value_too_big"));
    assert_eq!(
        text(&get(&err, "params"), "max").as_deref(),
        Some("1048576")
    );
    assert!(ms < 2_000.0, "took {ms} ms");
    delivery_applies(&mut lab, "after-huge-value");

    lab.close();
    remove("console-budget.sqlite3").await;
}

/// The hard heap limit the facade sets when it opens the database: an
/// `ORDER BY` over 3,000 values of 1 MB (SQLite sorts them in memory here)
/// fails with `query_memory` well within the budget, the worker's memory
/// stays near the limit, and a delivery right after applies. Without the
/// limit the same query grew the wasm memory past 1 GB in its two seconds,
/// and a wasm instance never gives memory back.
#[test]
async fn console_memory_is_bounded_by_the_heap_limit() {
    let mut lab = Lab::open("console-heap.sqlite3".into(), "opfs".into())
        .await
        .expect("open");
    lab.reset().expect("reset");
    let limit = lab.query("PRAGMA hard_heap_limit".into()).expect("pragma");
    let rows = js_sys::JSON::stringify(&get(&limit, "rows")).expect("json");
    assert_eq!(
        String::from(rows),
        format!("[[{}]]", inbox_lab::labs::tools::budget::HEAP_LIMIT_BYTES)
    );

    let (answer, ms) = timed_query(
        &mut lab,
        "SELECT i, zeroblob(1000000) || i AS v \
         FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 3000) SELECT i FROM n) \
         ORDER BY v DESC",
    );
    let err = answer.expect_err("out of memory or out of time");
    // On a quiet machine the heap limit stops the sort first (`query_memory`,
    // in about 0.6 s); on a loaded one the 2 s budget may come first. Either
    // way the query ends within its budget and the memory stays bounded;
    // that the heap limit itself turns the sort into SQLITE_NOMEM, whatever
    // the speed, is checked below with a budget of a minute.
    let code = text(&err, "code");
    assert!(
        matches!(code.as_deref(), Some("query_memory" | "query_budget")),
        "{code:?}"
    );
    if code.as_deref() == Some("query_memory") {
        assert_eq!(text(&get(&err, "params"), "mib").as_deref(), Some("512"));
    }
    assert!(ms < 4_000.0, "took {ms} ms");
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().dyn_into().expect("memory");
    let bytes = js_sys::ArrayBuffer::from(memory.buffer()).byte_length();
    assert!(
        f64::from(bytes) < (inbox_lab::labs::tools::budget::HEAP_LIMIT_BYTES + (256 << 20)) as f64,
        "the worker holds {bytes} bytes"
    );
    delivery_applies(&mut lab, "after-huge-sort");

    // The heap limit alone, with time to spare: the same sort on a
    // connection of its own fails with SQLITE_NOMEM, not a trap.
    let mut scratch = Connection::open("file:/heap-probe?vfs=memdb").expect("memdb");
    let generous = inbox_lab::labs::tools::budget::Budget {
        time: Duration::from_secs(60),
        steps: u64::MAX,
        ..inbox_lab::labs::tools::budget::Budget::CONSOLE
    };
    let sorted = inbox_lab::labs::tools::budget::within(&mut scratch, generous, |c| {
        c.query_row(
            // The first row of a sorted result needs the whole sort.
            "SELECT length(v) FROM (SELECT zeroblob(1000000) || i AS v \
             FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 3000) SELECT i FROM n)) \
             ORDER BY v DESC",
            [],
            |r| r.get::<_, i64>(0),
        )
    })
    .expect("the heap limit, not the budget, ends it");
    let failure = sorted.expect_err("out of memory");
    assert_eq!(
        failure.sqlite_error_code(),
        Some(rusqlite::ErrorCode::OutOfMemory),
        "{failure}"
    );
    drop(scratch);

    lab.close();
    remove("console-heap.sqlite3").await;
}

/// The judge in the worker (`judgeHandler`): the article's handler text is
/// correct with every count 0, `check_then_act`'s is broken with a race
/// schedule to replay, a typo comes back with its line, column and both
/// languages' sentences — and the crash sweep is said to run natively only.
/// A seed given back gives the same report, and replays the schedule with
/// the event it failed with.
#[test]
fn the_judge_runs_a_handler_text_in_the_worker() {
    use inbox_lab::labs::handlers::builtin;
    use inbox_lab::labs::handlers::Handler;
    use inbox_lab::wasm::replay_handler;
    let two = JsValue::from_f64(2.0);
    let seeded = |text: &str, seed: JsValue| {
        judge_handler(
            JsValue::from_str(text),
            two.clone(),
            JsValue::UNDEFINED,
            seed,
        )
        .expect("judged")
    };
    let judged = |text: &str| seeded(text, JsValue::UNDEFINED);
    let ok = judged(builtin(Handler::Atomic));
    assert_eq!(text(&ok, "result").as_deref(), Some("report"));
    assert_eq!(text(&ok, "crash_sweep").as_deref(), Some("native_only"));
    let report = get(&ok, "report");
    assert_eq!(text(&report, "verdict").as_deref(), Some("correct"));
    let race = get(&report, "race");
    assert!(get(&race, "interleavings").as_f64() > Some(1.0));
    assert_eq!(get(&race, "double_credits").as_f64(), Some(0.0));
    assert!(get(&report, "first_failure").is_null());
    assert!(
        get(&report, "crash").is_undefined(),
        "no crash counts claimed"
    );

    let bad = judged(builtin(Handler::CheckThenAct));
    let report = get(&bad, "report");
    assert_eq!(text(&report, "verdict").as_deref(), Some("broken"));
    assert!(get(&get(&report, "race"), "double_credits").as_f64() > Some(0.0));
    let first = get(&report, "first_failure");
    assert_eq!(text(&first, "check").as_deref(), Some("race"));
    let schedule = js_sys::Array::from(&get(&first, "schedule"));
    assert!(schedule.length() >= 2);
    let seed = get(&report, "seed");
    assert!(seed.as_f64().is_some(), "the seed is reported");
    let json = |v: &JsValue| js_sys::JSON::stringify(v).map(String::from).ok();
    let again = seeded(builtin(Handler::CheckThenAct), seed.clone());
    assert_eq!(
        json(&get(&again, "report")),
        json(&report),
        "same seed, same report"
    );
    let replayed = replay_handler(
        JsValue::from_str(builtin(Handler::CheckThenAct)),
        two.clone(),
        schedule
            .iter()
            .map(|i| i.as_f64().unwrap_or(0.0) as u32)
            .collect(),
        seed,
    )
    .expect("replayed");
    let verdict = get(&replayed, "verdict");
    assert_eq!(get(&verdict, "double_credit").as_bool(), Some(true));
    let negative = judge_handler(
        JsValue::from_str("SELECT 1\nANSWER applied"),
        two.clone(),
        JsValue::UNDEFINED,
        JsValue::from_f64(-1.0),
    );
    assert!(negative.is_err(), "a negative seed is refused");

    let typo = judged("SELECT 1\nIF CHANGED 0\nEND\nANSWER applied\n");
    assert_eq!(text(&typo, "result").as_deref(), Some("parse_error"));
    assert_eq!(get(&typo, "line").as_f64(), Some(2.0));
    assert_eq!(get(&typo, "column").as_f64(), Some(12.0));
    assert_eq!(text(&typo, "code").as_deref(), Some("expected"));
    let ru = text(&typo, "ru").expect("ru");
    assert!(ru.starts_with("ожидалось"), "{ru}");

    let four = judge_handler(
        JsValue::from_str("SELECT 1\nANSWER applied"),
        JsValue::from_f64(4.0),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    );
    assert!(four.is_err(), "4 deliveries are refused");
}

/// The judge tells the worker each check as it starts, for the page's
/// progress bar: cases, faults, the race of 2, then done.
#[test]
fn the_judge_tells_its_progress_to_a_listener() {
    use std::cell::RefCell;
    use std::rc::Rc;
    use wasm_bindgen::closure::Closure;
    let told: Rc<RefCell<Vec<String>>> = Rc::default();
    let sink = told.clone();
    let listener = Closure::wrap(Box::new(move |p: JsValue| {
        let check = text(&p, "check").unwrap_or_default();
        let done = get(&p, "done").as_f64().unwrap_or(-1.0);
        let total = get(&p, "total").as_f64().unwrap_or(-1.0);
        sink.borrow_mut().push(format!("{check} {done}/{total}"));
    }) as Box<dyn FnMut(JsValue)>);
    let judged = judge_handler(
        JsValue::from_str(inbox_lab::labs::handlers::builtin(
            inbox_lab::labs::handlers::Handler::Atomic,
        )),
        JsValue::from_f64(2.0),
        listener.as_ref().clone(),
        JsValue::UNDEFINED,
    )
    .expect("judged");
    assert_eq!(text(&judged, "result").as_deref(), Some("report"));
    assert_eq!(
        *told.borrow(),
        ["cases 0/3", "faults 1/3", "race_2 2/3", "done 3/3"]
    );
}

/// The page's module is built without the feature `workshop`: it lists the
/// six built-ins only, and judging, replaying or racing "workshop" is an
/// invalid_input error that says how to get it (`cargo xtask workshop`).
#[cfg(not(feature = "workshop"))]
#[test]
fn without_the_feature_the_workshop_handler_is_not_listed_and_asking_for_it_says_why() {
    use inbox_lab::wasm::{handler_names, judge_workshop, replay_workshop};
    assert_eq!(
        handler_names(),
        [
            "atomic",
            "no_dedup",
            "check_then_act",
            "two_transactions",
            "insert_or_ignore",
            "insert_or_replace"
        ]
    );
    let two = JsValue::from_f64(2.0);
    for err in [
        judge_workshop(two.clone(), JsValue::UNDEFINED, JsValue::UNDEFINED)
            .expect_err("no workshop handler"),
        replay_workshop(two.clone(), vec![0, 1], JsValue::UNDEFINED)
            .expect_err("no workshop handler"),
        RaceLab::new(two.clone())
            .expect("race lab")
            .start(JsValue::from_str("workshop"))
            .expect_err("no workshop handler"),
    ] {
        assert_eq!(text(&err, "kind").as_deref(), Some("invalid_input"));
        let message = text(&err, "message").unwrap_or_default();
        assert!(message.contains("cargo xtask workshop"), "{message}");
    }
}

/// A batch through the facade (`deliverMany`, what "N different events"
/// sends): each event its own transaction, what they came to counted in
/// Rust; a value that is not an array is refused. In the default WAL
/// journal every commit survives closing and reopening; a rollback journal
/// on request (`"delete"`) keeps the rows, and the default open turns the
/// file back into WAL, rows and all.
#[test]
async fn deliver_many_and_the_journals() {
    let name = "many.sqlite3";
    let mut lab = Lab::open(name.into(), "opfs".into())
        .await
        .expect("open by default");
    lab.reset().expect("reset");
    assert_eq!(
        text(&lab.stack().expect("stack"), "journal_mode").as_deref(),
        Some("wal")
    );
    let events = js_sys::JSON::parse(
        r#"[{"source":"m","event_id":"1","account_id":1,"amount":2},
            {"source":"m","event_id":"2","account_id":1,"amount":2},
            {"source":"m","event_id":"1","account_id":1,"amount":2},
            {"source":"m","event_id":"3","account_id":9,"amount":2}]"#,
    )
    .expect("json");
    let answer = lab.deliver_many(events, JsValue::UNDEFINED).expect("batch");
    assert_eq!(
        js_sys::JSON::stringify(&answer)
            .expect("json")
            .as_string()
            .as_deref(),
        Some(
            r#"{"delivered":4,"outcomes":{"applied":2,"duplicate":1,"unknown_account":1},"verdicts":{"correct":4}}"#
        )
    );
    let refused = lab
        .deliver_many(JsValue::from_str("not a list"), JsValue::UNDEFINED)
        .expect_err("not an array");
    assert_eq!(text(&refused, "kind").as_deref(), Some("invalid_input"));
    lab.close();

    let balance = |lab: &Lab| {
        let accounts = get(&lab.tables().expect("tables"), "accounts");
        get(&js_sys::Array::from(&accounts).get(0), "balance").as_f64()
    };
    let mut lab = Lab::open_with_journal(name.into(), "opfs".into(), Some("delete".into()))
        .await
        .expect("reopen with a rollback journal");
    assert_eq!(
        text(&lab.stack().expect("stack"), "journal_mode").as_deref(),
        Some("delete")
    );
    assert_eq!(balance(&lab), Some(4.0));
    lab.close();
    let mut lab = Lab::open(name.into(), "opfs".into())
        .await
        .expect("reopen by default");
    assert_eq!(
        text(&lab.stack().expect("stack"), "journal_mode").as_deref(),
        Some("wal")
    );
    assert_eq!(balance(&lab), Some(4.0));
    lab.close();
    let err = Lab::open_with_journal(name.into(), "opfs".into(), Some("truncate".into()))
        .await
        .err()
        .expect("an unknown journal is refused");
    assert!(text(&err, "message").is_some_and(|m| m.contains("unknown journal")));
    remove(name).await;
}

/// `checkDelivery`, what a share link's deliveries pass before the first one
/// runs: the rules of `deliver` for the event, the handler and the crash
/// point, each refusal naming what is wrong.
#[test]
fn check_delivery_applies_deliver_s_rules_and_names_the_fault() {
    let event = |json: &str| js_sys::JSON::parse(json).expect("json");
    let good = r#"{"source":"provider-a","event_id":"evt-1","account_id":1,"amount":500}"#;
    check_delivery(event(good), "atomic".into(), JsValue::NULL).expect("a valid delivery");
    check_delivery(event(good), "no_dedup".into(), "after_insert".into())
        .expect("a known handler and crash point");

    let refused = check_delivery(
        event(r#"{"source":"provider-a","event_id":"evt-1","account_id":1,"amount":-5}"#),
        "atomic".into(),
        JsValue::NULL,
    )
    .expect_err("a negative amount");
    assert_eq!(text(&refused, "kind").as_deref(), Some("invalid_input"));
    assert_eq!(text(&refused, "field").as_deref(), Some("amount"));
    let refused = check_delivery(
        event(r#"{"source":"provider-a","event_id":"evt-1","account_id":1,"amount":5,"x":1}"#),
        "atomic".into(),
        JsValue::NULL,
    )
    .expect_err("an extra field");
    assert_eq!(text(&refused, "kind").as_deref(), Some("invalid_input"));
    let refused = check_delivery(event(good), "exactly_once_please".into(), JsValue::NULL)
        .expect_err("an unknown handler");
    assert!(text(&refused, "message").is_some_and(|m| m.contains("exactly_once_please")));
    assert_eq!(text(&refused, "field").as_deref(), Some("handler"));
    let refused = check_delivery(event(good), "atomic".into(), "after_lunch".into())
        .expect_err("an unknown crash point");
    assert!(text(&refused, "message").is_some_and(|m| m.contains("after_lunch")));
    assert_eq!(text(&refused, "field").as_deref(), Some("fault"));
}
