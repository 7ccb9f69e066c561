//! Browser tests for "nothing bricks the page": a stored database the page
//! cannot use — not SQLite, truncated, another program's, a newer schema, a
//! value of the wrong type — is planted byte for byte in the real OPFS pool
//! (the pool's own unchecked import, as if it had been left there by a damaged
//! disk or an older inbox-lab), then opened through the facade exactly as
//! `www/db/worker.js` opens it.
//!
//! Each time: `Lab::open` succeeds; `problem` is a storage error whose code
//! says why and that is not retryable; a delivery answers that problem;
//! "export as is" gives back exactly the planted bytes; `reset` works and a
//! delivery then applies; and closing and opening again (persistence) finds
//! a healthy database holding that delivery.
//!
//! A module of `tests/browser/main.rs` (`wasm-pack test --headless --chrome -- --test browser`).
//! Each test uses its own database name, removed first in case an earlier run
//! left it behind and removed again at the end.

use inbox_lab::wasm::{install_opfs, Lab};
use inbox_lab::{apply, core::schema, Event};
use rusqlite::{Connection, MAIN_DB};
use sqlite_wasm_rs::vfs::transfer::DbTransfer;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{get, hostile_db, remove, text};

const EVENT: &str =
    r#"{"source":"provider-a","event_id":"after-reset","account_id":1,"amount":500}"#;

/// Puts `bytes` in the pool as the database file `name`, unchecked and
/// unchanged (no header validation, no rewrite of the header's versions).
async fn plant(name: &str, bytes: &[u8]) {
    remove(name).await;
    let pool = install_opfs().await.expect("OPFS pool");
    pool.import_db_unchecked(name, bytes)
        .expect("plant the file");
    assert_eq!(
        pool.export_db(name).expect("read it back"),
        bytes,
        "planted as is"
    );
}

/// An inbox-lab database with one applied event, changed by `sql` (run with
/// `writable_schema` on, so it may also edit the schema), as file bytes.
fn inbox_lab_file(sql: &str) -> Vec<u8> {
    let mut conn = Connection::open_in_memory().expect("memory database");
    schema::init(&mut conn, &[1]).expect("schema");
    let event = Event::new("provider-a", "evt-1", 1, 500).expect("event");
    apply(&conn, &event, None).expect("apply");
    conn.execute_batch(&format!(
        "PRAGMA writable_schema = ON; {sql}; PRAGMA writable_schema = OFF;"
    ))
    .expect(sql);
    let data = conn.serialize(MAIN_DB).expect("serialize");
    data.to_vec()
}

fn json(v: &JsValue) -> String {
    js_sys::JSON::stringify(v)
        .expect("stringify")
        .as_string()
        .expect("a string")
}

fn deliver(lab: &mut Lab) -> Result<JsValue, JsValue> {
    let event = js_sys::JSON::parse(EVENT).expect("json");
    lab.deliver(event, JsValue::UNDEFINED, JsValue::UNDEFINED)
}

/// The whole story for one planted file; returns the problem's message.
async fn unusable_file_is_reported_exported_and_reset(
    name: &str,
    bytes: &[u8],
    code: &str,
) -> String {
    plant(name, bytes).await;

    let mut lab = Lab::open(name.into(), "opfs".into())
        .await
        .expect("open succeeds whatever the file holds");
    let problem = lab.problem();
    assert!(!problem.is_null(), "{name}: a problem is reported");
    assert_eq!(text(&problem, "kind").as_deref(), Some("storage"), "{name}");
    assert_eq!(
        text(&problem, "code").as_deref(),
        Some(code),
        "{name}: {}",
        json(&problem)
    );
    assert_eq!(get(&problem, "retryable").as_bool(), Some(false), "{name}");
    assert_eq!(get(&problem, "http_status").as_f64(), Some(500.0), "{name}");

    // Every database call answers the problem, the same object each time.
    let err = deliver(&mut lab).expect_err("deliver answers the problem");
    // A delivery's error also says what it ran: nothing.
    assert_eq!(
        json(&get(&err, "steps")),
        "[]",
        "{name}: deliver ran no SQL"
    );
    // And its verdict: refused before any SQL, nothing changed.
    let verdict = get(&err, "verdict");
    assert_eq!(
        text(&verdict, "heard").as_deref(),
        Some("refused"),
        "{name}"
    );
    assert_eq!(text(&verdict, "kind").as_deref(), Some("correct"), "{name}");
    for added in ["steps", "verdict"] {
        js_sys::Reflect::delete_property(
            err.unchecked_ref::<js_sys::Object>(),
            &JsValue::from_str(added),
        )
        .expect("delete what a delivery adds");
    }
    assert_eq!(json(&err), json(&problem), "{name}: deliver");
    let err = lab.tables().expect_err("tables answers the problem");
    assert_eq!(json(&err), json(&problem), "{name}: tables");
    let err = lab
        .query("SELECT 1".into())
        .expect_err("query answers the problem");
    assert_eq!(json(&err), json(&problem), "{name}: query");
    let err = lab.export().expect_err("export answers the problem");
    assert_eq!(json(&err), json(&problem), "{name}: export");

    // "Export as is": exactly the planted bytes, and asking changes nothing.
    assert_eq!(lab.export_raw().expect("export as is"), bytes, "{name}");
    assert_eq!(lab.export_raw().expect("again"), bytes, "{name}");
    assert!(!lab.problem().is_null(), "{name}: still the problem");

    // Reset always works; then the database does.
    lab.reset().expect("reset");
    assert!(lab.problem().is_null(), "{name}: reset clears the problem");
    let answer = deliver(&mut lab).expect("a delivery applies after reset");
    assert_eq!(text(&answer, "outcome").as_deref(), Some("applied"));

    // Persistence: closed and opened again, the fresh database is healthy
    // and holds the delivery.
    lab.close();
    let mut lab = Lab::open(name.into(), "opfs".into()).await.expect("reopen");
    assert!(lab.problem().is_null(), "{name}: healthy after reopen");
    let answer = deliver(&mut lab).expect("replay");
    assert_eq!(text(&answer, "outcome").as_deref(), Some("duplicate"));
    let tables = lab.tables().expect("tables");
    assert_eq!(
        json(&get(&tables, "accounts")),
        r#"[{"id":1,"balance":500}]"#,
        "{name}"
    );
    drop(lab);
    remove(name).await;
    text(&problem, "message").unwrap_or_default()
}

/// Bytes that are not SQLite at all: `corrupt` ("file is not a database").
#[test]
async fn a_file_that_is_not_sqlite() {
    let bytes: Vec<u8> = b"this is a shopping list, not a database\n"
        .iter()
        .copied()
        .cycle()
        .take(8192)
        .collect();
    let message =
        unusable_file_is_reported_exported_and_reset("plant-text.sqlite3", &bytes, "corrupt").await;
    assert!(message.contains("not a database"), "{message}");
}

/// An inbox-lab database cut short (its header still counts every page):
/// `corrupt`, found by the health check's `quick_check`.
#[test]
async fn a_truncated_sqlite_file() {
    let whole = inbox_lab_file("SELECT 1");
    assert!(whole.len() >= 8 * 4096, "{} bytes", whole.len());
    let bytes = &whole[..whole.len() / 2];
    unusable_file_is_reported_exported_and_reset("plant-truncated.sqlite3", bytes, "corrupt").await;
}

/// A valid SQLite file written by another program: `unusable`, and not
/// touched (no inbox-lab table is created in it: the export is identical).
#[test]
async fn a_sqlite_file_of_another_program() {
    let mut conn = Connection::open_in_memory().expect("memory database");
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1), ('two');")
        .expect("another program's schema");
    let bytes = conn.serialize(MAIN_DB).expect("serialize").to_vec();
    let message =
        unusable_file_is_reported_exported_and_reset("plant-other.sqlite3", &bytes, "unusable")
            .await;
    assert!(message.contains("not an inbox-lab database"), "{message}");
}

/// An inbox-lab database from a newer build (`user_version` above ours):
/// `unusable`, naming the version.
#[test]
async fn a_newer_schema_version() {
    let bytes = inbox_lab_file(&format!("PRAGMA user_version = {}", schema::VERSION + 1));
    let message =
        unusable_file_is_reported_exported_and_reset("plant-newer.sqlite3", &bytes, "unusable")
            .await;
    assert!(
        message.contains(&format!("version {}", schema::VERSION + 1)),
        "{message}"
    );
}

/// What an older inbox-lab's import left behind: an `event_id` stored as a
/// BLOB. Its replay must never be "applied again": the database is
/// `unusable` until reset.
#[test]
async fn an_event_id_stored_as_a_blob() {
    let bytes = inbox_lab_file("UPDATE inbox SET event_id = CAST(event_id AS BLOB)");
    unusable_file_is_reported_exported_and_reset("plant-blob.sqlite3", &bytes, "unusable").await;
}

/// The schema edited through `writable_schema` (a trigger that credits
/// extra, named like SQLite's own): `unusable`, the trigger never runs.
#[test]
async fn a_trigger_planted_through_writable_schema() {
    let bytes = inbox_lab_file(
        "INSERT INTO sqlite_schema(type, name, tbl_name, rootpage, sql) VALUES \
         ('trigger', 'sqlite_autoindex_x', 'inbox', 0, \
          'CREATE TRIGGER sqlite_autoindex_x AFTER INSERT ON inbox BEGIN \
           UPDATE accounts SET balance = balance + 1000000; END')",
    );
    unusable_file_is_reported_exported_and_reset("plant-trigger.sqlite3", &bytes, "unusable").await;
}

/// Issue 27: the inbox's key index and receipt index point at each other's
/// pages (`hostile_db`'s class "index roots swapped"; the schema text is
/// inbox-lab's and `quick_check` passes). Reported as damaged, never
/// trusted; "keep what is sound" rebuilds it from the tables themselves,
/// leaving nothing out, and no replay of a stored event is applied again.
#[test]
async fn swapped_index_roots_are_reported_and_salvaged() {
    let base = hostile_db::base_bytes().expect("base");
    let bytes = hostile_db::index_roots_swapped(&base, hostile_db::INBOX_INDEXES).expect("swap");
    let message =
        unusable_file_is_reported_exported_and_reset("plant-swapped.sqlite3", &bytes, "corrupt")
            .await;
    assert!(message.contains("index"), "{message}");

    let name = "plant-swapped-salvage.sqlite3";
    plant(name, &bytes).await;
    let mut lab = Lab::open(name.into(), "opfs".into()).await.expect("open");
    assert!(!lab.problem().is_null());
    let salvaged = lab.salvage().expect("keep what is sound");
    assert_eq!(json(&get(&salvaged, "dropped")), "[]");
    assert!(lab.problem().is_null(), "{}", json(&lab.problem()));
    let rows = js_sys::Array::from(&get(&lab.tables().expect("tables"), "inbox"));
    assert!(rows.length() >= 5);
    for row in rows.iter() {
        let event = js_sys::Object::new();
        for field in ["source", "event_id", "account_id", "amount"] {
            js_sys::Reflect::set(&event, &field.into(), &get(&row, field)).expect("set");
        }
        let heard = match lab.deliver(event.into(), JsValue::UNDEFINED, JsValue::UNDEFINED) {
            Ok(answer) => text(&answer, "outcome"),
            Err(err) => text(&err, "code"),
        };
        let expected = if get(&row, "receipt").is_null() {
            "no_receipt"
        } else {
            "duplicate"
        };
        assert_eq!(heard.as_deref(), Some(expected), "{}", json(&row));
    }
    lab.close();
    let lab = Lab::open(name.into(), "opfs".into()).await.expect("reopen");
    assert!(lab.problem().is_null(), "healthy after a reload");
    drop(lab);
    remove(name).await;
}

/// A healthy database has no problem, and "export as is" is its export.
#[test]
async fn a_healthy_database_has_no_problem() {
    let name = "healthy.sqlite3";
    remove(name).await;
    let mut lab = Lab::open(name.into(), "opfs".into()).await.expect("open");
    assert!(lab.problem().is_null());
    deliver(&mut lab).expect("deliver");
    let raw = lab.export_raw().expect("export as is");
    assert_eq!(raw, lab.export().expect("export"));
    assert!(raw.starts_with(b"SQLite format 3\0"));
    lab.close();
    remove(name).await;

    let mut lab = Lab::open("healthy-memory".into(), "memory".into())
        .await
        .expect("open in memory");
    assert!(lab.problem().is_null());
    assert!(lab
        .export_raw()
        .expect("export as is")
        .starts_with(b"SQLite format 3\0"));
}

/// The secrets' own database (signed webhooks) damaged: every secret call
/// says so, the inbox is not affected, and "forget all secrets" starts
/// afresh whatever the file holds.
#[test]
async fn a_damaged_secrets_database_is_reported_and_forgotten() {
    let name = "with-secrets.sqlite3";
    remove(name).await;
    plant("hooks.sqlite3", &[0x42; 8192]).await;
    let mut lab = Lab::open(name.into(), "opfs".into()).await.expect("open");
    assert!(lab.problem().is_null(), "the inbox database is fine");

    let source = JsValue::from_str("provider-a");
    let err = lab
        .hook_secret(source.clone(), vec![7; 32])
        .expect_err("a damaged secrets file");
    assert_eq!(
        text(&err, "kind").as_deref(),
        Some("storage"),
        "{}",
        json(&err)
    );
    deliver(&mut lab).expect("deliveries do not need the secrets");

    lab.hook_forget().expect("forget whatever the file holds");
    let answer = lab
        .hook_secret(source.clone(), vec![7; 32])
        .expect("a new secret");
    let secret = text(&answer, "secret").expect("secret");
    assert!(secret.starts_with("whsec_"), "{secret}");
    let again = lab
        .hook_secret(source, vec![8; 32])
        .expect("the same secret");
    assert_eq!(text(&again, "secret"), Some(secret), "kept, not made again");
    lab.close();
    remove(name).await;
    remove("hooks.sqlite3").await;
}

/// An imported file cannot plant a credential: a `hook_secrets` table in it
/// (the secrets' own schema, with a secret the forger knows) is left behind
/// like any foreign object, the source's secret stays the receiver's, and a
/// webhook signed with the planted secret is refused before the inbox.
#[test]
async fn an_imported_file_cannot_plant_a_webhook_secret() {
    use base64::Engine;
    use inbox_lab::labs::webhooks::{sign, Secret};

    let name = "import-secrets.sqlite3";
    remove(name).await;
    remove("hooks.sqlite3").await;
    let planted = Secret::from_bytes(&[0x66; 32]).expect("secret");
    let bytes = inbox_lab_file(&format!(
        "CREATE TABLE hook_secrets (source TEXT PRIMARY KEY, current TEXT NOT NULL, previous TEXT);
         INSERT INTO hook_secrets VALUES ('provider-a', '{}', NULL)",
        planted.to_whsec()
    ));
    let mut lab = Lab::open(name.into(), "opfs".into()).await.expect("open");
    let report = lab.import(bytes).expect("the file's rows are imported");
    assert_eq!(json(&get(&report, "ignored")), r#"["table hook_secrets"]"#);

    let ours = lab
        .hook_secret(JsValue::from_str("provider-a"), vec![9; 32])
        .expect("the receiver's secret");
    assert_ne!(text(&ours, "secret"), Some(planted.to_whsec()));

    let now = (js_sys::Date::now() / 1000.0).floor() as i64;
    let body = br#"{"account_id": 1, "amount": 900}"#;
    let relayed = serde_json::json!({
        "source": "provider-a",
        "headers": {
            "webhook-id": "forged-1",
            "webhook-timestamp": now.to_string(),
            "webhook-signature": sign(&planted, "forged-1", now, body),
        },
        "body_base64": base64::engine::general_purpose::STANDARD.encode(body),
    });
    let relayed = js_sys::JSON::parse(&relayed.to_string()).expect("json");
    let received = lab
        .hook_receive(relayed, JsValue::TRUE)
        .expect("an answer for the sender");
    assert_eq!(
        get(&received, "status").as_f64(),
        Some(401.0),
        "{}",
        json(&received)
    );
    assert!(
        get(&received, "event").is_null(),
        "nothing reached the inbox"
    );
    let tables = lab.tables().expect("tables");
    assert!(!json(&tables).contains("forged-1"));
    lab.close();
    remove(name).await;
    remove("hooks.sqlite3").await;
}
