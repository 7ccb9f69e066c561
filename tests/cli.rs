#![cfg(all(not(target_family = "wasm"), feature = "labs"))]
//! The `inbox-lab` binary, run as a process the way workshop scripts and
//! outside checks run it: `demo`, `init`, `apply`, `show`, their exact JSON
//! lines and exit codes (0 success, 1 a reported error with JSON on stdout,
//! 2 a usage error), and every validation rule as seen from the command line.

use rusqlite::Connection;
use serde_json::{json, Value};
use tempfile::TempDir;

// ---- helpers ----------------------------------------------------------------------------------

#[path = "support/binary.rs"]
mod binary;
use binary::{inbox_lab, Run};

impl Run {
    /// Asserts exit 1 with `{"error": {...}}` of `kind`; returns the inner object.
    fn error(&self, kind: &str) -> Value {
        assert_eq!(
            self.code, 1,
            "stdout {:?} stderr {:?}",
            self.stdout, self.stderr
        );
        let v = self.json();
        let obj = v.as_object().expect("an object");
        assert_eq!(obj.keys().collect::<Vec<_>>(), ["error"], "{v}");
        let err = v["error"].clone();
        assert_eq!(err["kind"], kind, "{v}");
        let mut keys: Vec<&String> = err.as_object().expect("error object").keys().collect();
        keys.sort();
        // `code` and `params` say why, for programs and translations.
        let expected: &[&str] = if kind == "invalid_input" {
            &[
                "code",
                "field",
                "http_status",
                "kind",
                "message",
                "params",
                "retryable",
            ]
        } else {
            &[
                "code",
                "http_status",
                "kind",
                "message",
                "params",
                "retryable",
            ]
        };
        assert_eq!(keys, expected, "{v}");
        assert!(
            err["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{v}"
        );
        err
    }
}

/// A temporary directory and a database path in it (not created).
struct Db {
    _dir: TempDir,
    path: String,
}

impl Db {
    fn path_only() -> Db {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("lab.sqlite3");
        let path = path.to_str().expect("UTF-8 path").to_owned();
        Db { _dir: dir, path }
    }

    /// `inbox-lab init --db PATH` plus `extra` arguments, which must succeed.
    fn init(extra: &[&str]) -> Db {
        let db = Db::path_only();
        let run = db.run("init", extra);
        assert_eq!((run.code, run.stdout.as_str()), (0, "{\"ok\":true}\n"));
        db
    }

    fn run(&self, command: &str, extra: &[&str]) -> Run {
        let mut args = vec![command, "--db", self.path.as_str()];
        args.extend_from_slice(extra);
        inbox_lab(&args)
    }

    /// `apply` with the given event fields and extra flags.
    fn apply(
        &self,
        source: &str,
        event_id: &str,
        account: &str,
        amount: &str,
        flags: &[&str],
    ) -> Run {
        let mut extra = vec![
            "--source",
            source,
            "--event-id",
            event_id,
            "--account",
            account,
            "--amount",
            amount,
        ];
        extra.extend_from_slice(flags);
        self.run("apply", &extra)
    }

    fn show(&self) -> String {
        let run = self.run("show", &[]);
        assert_eq!(run.code, 0, "show: {} {}", run.stdout, run.stderr);
        run.stdout
    }

    fn sql(&self) -> Connection {
        Connection::open(&self.path).expect("open with rusqlite")
    }
}

// ---- demo ---------------------------------------------------------------------------------------

/// `inbox-lab demo` prints exactly the script's line and exits 0.
#[test]
fn demo_prints_the_scripts_ok_line() {
    let run = inbox_lab(&["demo"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "OK: balance=1500, inbox=3, applied=1, duplicate=19\n"
    );
    assert_eq!(run.stderr, "");
}

// ---- init ---------------------------------------------------------------------------------------

/// `init` creates account 1 when none is given, and running it again changes
/// nothing — not even a balance already credited.
#[test]
fn init_is_idempotent_and_never_resets() {
    let db = Db::init(&[]);
    let empty = r#"{"accounts":[{"id":1,"balance":0}],"inbox":[]}"#;
    assert_eq!(db.show(), format!("{empty}\n"));
    let again = db.run("init", &[]);
    assert_eq!((again.code, again.stdout.as_str()), (0, "{\"ok\":true}\n"));
    assert_eq!(db.show(), format!("{empty}\n"));

    assert_eq!(db.apply("provider-a", "evt-1", "1", "500", &[]).code, 0);
    assert_eq!(db.run("init", &["--account", "1"]).code, 0);
    assert_eq!(
        db.apply("provider-a", "evt-1", "1", "500", &[]).json()["outcome"],
        "duplicate"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&db.show()).expect("json")["accounts"],
        json!([{"id": 1, "balance": 500}])
    );
}

/// `--account` may be repeated (and repeat an id); only the given accounts
/// are created, listed by id.
#[test]
fn init_creates_each_given_account() {
    let db = Db::init(&["--account", "3", "--account", "1", "--account", "3"]);
    assert_eq!(
        db.show(),
        "{\"accounts\":[{\"id\":1,\"balance\":0},{\"id\":3,\"balance\":0}],\"inbox\":[]}\n"
    );
    assert_eq!(db.run("init", &["--account", "2"]).code, 0);
    let ids: Vec<i64> = serde_json::from_str::<Value>(&db.show()).expect("json")["accounts"]
        .as_array()
        .expect("array")
        .iter()
        .map(|a| a["id"].as_i64().expect("id"))
        .collect();
    assert_eq!(ids, [1, 2, 3]);
}

/// An invalid account id is `invalid_input` (exit 1, JSON): all ids are
/// checked before anything is written, so a valid id given alongside is not
/// created either, and a fresh path does not even get a file.
#[test]
fn init_refuses_invalid_accounts_and_writes_nothing() {
    let db = Db::init(&[]);
    let before = db.show();
    for bad in ["0", "-1", "9007199254740992", "abc", "1.5", "+2", ""] {
        let run = db.run("init", &["--account", "2", "--account", bad]);
        let err = run.error("invalid_input");
        assert_eq!(err["field"], "account_id", "{bad:?}");
        assert_eq!(
            (err["http_status"].clone(), err["retryable"].clone()),
            (json!(400), json!(false))
        );
        assert_eq!(db.show(), before, "{bad:?}: nothing written");
    }
    let fresh = Db::path_only();
    for bad in ["abc", "0"] {
        fresh
            .run("init", &["--account", bad])
            .error("invalid_input");
        assert!(
            !std::path::Path::new(&fresh.path).exists(),
            "--account {bad:?} must not create {}",
            fresh.path
        );
    }
}

// ---- apply --------------------------------------------------------------------------------------

/// `apply` prints exactly one JSON line: applied, then for a repeat the
/// duplicate with the very same receipt.
#[test]
fn apply_prints_applied_then_duplicate_with_the_same_receipt() {
    let db = Db::init(&[]);
    let first = db.apply("provider-a", "evt-1", "1", "500", &[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(
        first.stdout,
        "{\"outcome\":\"applied\",\"http_status\":200,\"receipt\":{\"seq\":1,\"balance_after\":500}}\n"
    );
    let again = db.apply("provider-a", "evt-1", "1", "500", &[]);
    assert_eq!(again.code, 0);
    assert_eq!(
        again.stdout,
        "{\"outcome\":\"duplicate\",\"http_status\":200,\"receipt\":{\"seq\":1,\"balance_after\":500}}\n"
    );
    // Exercise 1 from the command line: another source, a new event.
    let b = db.apply("provider-b", "evt-1", "1", "500", &[]);
    assert_eq!(
        b.json()["receipt"],
        json!({"seq": 2, "balance_after": 1000})
    );
}

/// Each error the command line can meet, with its JSON shape, status and
/// retry advice; the database is unchanged after every one of them.
#[test]
fn apply_reports_each_error_kind_as_json_with_exit_1() {
    let db = Db::init(&[]);
    db.apply("provider-a", "evt-1", "1", "500", &[]);
    let before = db.show();

    let cases: [(Run, &str, u16, bool); 5] = [
        (
            db.apply("provider-a", "evt-1", "1", "700", &[]),
            "payload_conflict",
            422,
            false,
        ),
        (
            db.apply("provider-a", "evt-2", "2", "500", &[]),
            "unknown_account",
            422,
            false,
        ),
        (
            db.apply("provider-a", "evt-2", "1", "0", &[]),
            "invalid_input",
            400,
            false,
        ),
        (
            db.apply("provider-a", "evt-2", "1", "500", &["--fail-after-insert"]),
            "simulated_crash",
            500,
            true,
        ),
        (
            db.apply("provider-a", "evt-2", "1", "500", &["--fail-after-update"]),
            "simulated_crash",
            500,
            true,
        ),
    ];
    for (run, kind, status, retryable) in &cases {
        let err = run.error(kind);
        assert_eq!(err["http_status"], *status, "{kind}");
        assert_eq!(err["retryable"], *retryable, "{kind}");
        assert_eq!(db.show(), before, "{kind}: nothing written");
    }
    // After both simulated crashes the retry applies, receipt number 2: no gap.
    assert_eq!(
        db.apply("provider-a", "evt-2", "1", "500", &[]).stdout,
        "{\"outcome\":\"applied\",\"http_status\":200,\"receipt\":{\"seq\":2,\"balance_after\":1000}}\n"
    );

    // balance_limit: put the balance 1 below 2^53-1, then credit 2.
    db.sql()
        .execute(
            "UPDATE accounts SET balance = 9007199254740990 WHERE id = 1",
            [],
        )
        .expect("set balance");
    let err = db
        .apply("provider-a", "evt-3", "1", "2", &[])
        .error("balance_limit");
    assert_eq!(
        (err["http_status"].clone(), err["retryable"].clone()),
        (json!(422), json!(false))
    );
    let ok = db.apply("provider-a", "evt-3", "1", "1", &[]);
    assert_eq!(
        ok.json()["receipt"],
        json!({"seq": 3, "balance_after": 9007199254740991_i64})
    );
}

/// Storage problems are `storage` (500): a missing database (which `apply`
/// never creates; SQLite cannot open it, retryable like any open failure),
/// a file that is not a database, a newer schema (both not retryable: the
/// same file fails the same way every time).
#[test]
fn apply_reports_storage_errors() {
    let missing = Db::path_only();
    let err = missing
        .apply("provider-a", "evt-1", "1", "500", &[])
        .error("storage");
    assert_eq!(
        (err["http_status"].clone(), err["retryable"].clone()),
        (json!(500), json!(true))
    );
    assert!(!std::path::Path::new(&missing.path).exists());

    let text = Db::path_only();
    std::fs::write(&text.path, "not a database\n".repeat(100)).expect("write");
    let err = text
        .apply("provider-a", "evt-1", "1", "500", &[])
        .error("storage");
    assert_eq!(
        (err["code"].clone(), err["retryable"].clone()),
        (json!("corrupt"), json!(false))
    );
    text.run("show", &[]).error("storage");

    let newer = Db::init(&[]);
    newer
        .sql()
        .pragma_update(None, "user_version", 99)
        .expect("pragma");
    let err = newer
        .apply("provider-a", "evt-1", "1", "500", &[])
        .error("storage");
    assert_eq!(
        (err["code"].clone(), err["retryable"].clone()),
        (json!("unusable"), json!(false))
    );
    newer.run("show", &[]).error("storage");
    newer.run("init", &[]).error("storage");
}

/// While another connection holds the write lock past the CLI's 5 s busy
/// timeout, `apply` answers `busy` (503, retry) — not duplicate — and once
/// the lock is gone the same event applies.
#[test]
fn apply_reports_busy_while_another_connection_holds_the_lock() {
    let db = Db::init(&[]);
    let holder = db.sql();
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the lock");
    let err = db
        .apply("provider-a", "evt-1", "1", "500", &[])
        .error("busy");
    assert_eq!(
        (err["http_status"].clone(), err["retryable"].clone()),
        (json!(503), json!(true))
    );
    holder.execute_batch("ROLLBACK").expect("release the lock");
    assert_eq!(
        db.apply("provider-a", "evt-1", "1", "500", &[]).json()["outcome"],
        "applied"
    );
}

/// Amount 0 for an event id that was applied is `invalid_input`, never a
/// duplicate: validation comes before the inbox is consulted.
#[test]
fn amount_zero_is_invalid_input_even_for_a_known_event() {
    let db = Db::init(&[]);
    assert_eq!(db.apply("provider-a", "evt-1", "1", "500", &[]).code, 0);
    let err = db
        .apply("provider-a", "evt-1", "1", "0", &[])
        .error("invalid_input");
    assert_eq!(err["field"], "amount");
}

/// A value that is present but invalid is `invalid_input` (exit 1, JSON on
/// stdout); only a missing or unknown option is a usage error (exit 2, clap's
/// message on stderr, nothing on stdout).
#[test]
fn usage_errors_exit_2_but_present_invalid_values_exit_1() {
    let db = Db::init(&[]);
    for (amount, field) in [("1.5", "amount"), ("-5", "amount")] {
        let err = db
            .apply("provider-a", "evt-1", "1", amount, &[])
            .error("invalid_input");
        assert_eq!(err["field"], field, "--amount {amount}");
    }
    let err = db.apply("", "evt-1", "1", "5", &[]).error("invalid_input");
    assert_eq!(err["field"], "source");

    let p = db.path.as_str();
    let usage: [&[&str]; 6] = [
        &[
            "apply",
            "--db",
            p,
            "--source",
            "a",
            "--event-id",
            "e",
            "--account",
            "1",
        ],
        &[
            "apply",
            "--db",
            p,
            "--source",
            "a",
            "--event-id",
            "e",
            "--account",
            "1",
            "--amount",
            "5",
            "--bogus",
        ],
        &[
            "apply",
            "--db",
            p,
            "--source",
            "a",
            "--event-id",
            "e",
            "--account",
            "1",
            "--amount",
            "5",
            "--fail-after-insert",
            "--fail-after-update",
        ],
        &[
            "apply",
            "--source",
            "a",
            "--event-id",
            "e",
            "--account",
            "1",
            "--amount",
            "5",
        ],
        &["show"],
        &[],
    ];
    for args in usage {
        let run = inbox_lab(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(!run.stderr.is_empty(), "{args:?}");
    }
    assert_eq!(
        db.show(),
        "{\"accounts\":[{\"id\":1,\"balance\":0}],\"inbox\":[]}\n"
    );
}

/// Every validation rule, as the command line meets it: numbers must be
/// canonical base-10 integers in range; keys must not be blank, longer than
/// 255 bytes or hold control characters, and are never trimmed. Each refusal
/// names its field and writes nothing.
#[test]
fn validation_rules_seen_from_the_command_line() {
    let db = Db::init(&[]);
    let not_integers = [
        "1.5", "1e3", "500.0", "+5", " 5", "5 ", "05", "0x10", "true", "null", "NaN", "", "   ",
        "٥",
    ];
    let mut cases: Vec<(&str, String)> = Vec::new();
    for bad in not_integers {
        cases.push(("amount", bad.to_owned()));
        cases.push(("account", bad.to_owned()));
    }
    for bad in ["0", "-1", "-5", "1000000001", "99999999999999999999"] {
        cases.push(("amount", bad.to_owned()));
    }
    for bad in ["0", "-1", "9007199254740992"] {
        cases.push(("account", bad.to_owned()));
    }
    let long = "k".repeat(256);
    for bad in [
        "",
        " ",
        "   ",
        "\t",
        "\u{3000}",
        long.as_str(),
        "a\nb",
        "a\tb",
        "\u{7f}",
        "a\u{85}",
    ] {
        cases.push(("source", bad.to_owned()));
        cases.push(("event-id", bad.to_owned()));
    }

    for (option, bad) in &cases {
        let (mut source, mut event_id, mut account, mut amount) =
            ("provider-a", "evt-1", "1", "500");
        match *option {
            "source" => source = bad,
            "event-id" => event_id = bad,
            "account" => account = bad,
            _ => amount = bad,
        }
        let run = db.apply(source, event_id, account, amount, &[]);
        let err = run.error("invalid_input");
        let field = match *option {
            "event-id" => "event_id",
            "account" => "account_id",
            other => other,
        };
        assert_eq!(err["field"], field, "--{option} {bad:?}");
        assert_eq!(
            (err["http_status"].clone(), err["retryable"].clone()),
            (json!(400), json!(false)),
            "--{option} {bad:?}"
        );
    }
    assert_eq!(
        db.show(),
        "{\"accounts\":[{\"id\":1,\"balance\":0}],\"inbox\":[]}\n",
        "no refused delivery wrote anything"
    );

    // The edges that are valid: 255-byte keys, the largest amount, the
    // largest account id (valid, but it does not exist), and keys kept byte
    // for byte — "evt-1 " is not "evt-1".
    let key255 = "k".repeat(255);
    assert_eq!(
        db.apply(&key255, &key255, "1", "1000000000", &[]).json()["outcome"],
        "applied"
    );
    assert_eq!(
        db.apply("provider-a", "evt-1", "1", "1", &[]).json()["outcome"],
        "applied"
    );
    assert_eq!(
        db.apply("provider-a", "evt-1 ", "1", "1", &[]).json()["outcome"],
        "applied"
    );
    assert_eq!(
        db.apply(" provider-a", "evt-1", "1", "1", &[]).json()["outcome"],
        "applied"
    );
    db.apply("provider-a", "evt-2", "9007199254740991", "1", &[])
        .error("unknown_account");
    let shown: Value = serde_json::from_str(&db.show()).expect("json");
    assert_eq!(shown["inbox"].as_array().expect("array").len(), 4);
    assert_eq!(
        shown["accounts"],
        json!([{"id": 1, "balance": 1_000_000_003}])
    );
}

// ---- show ---------------------------------------------------------------------------------------

/// `show` prints both tables in one exact shape: accounts by id, inbox by
/// `(source, event_id)` compared as bytes (so `Zeta` < `provider-a` <
/// `é-source`, and `evt-10` < `evt-2`), whatever order they were applied in.
#[test]
fn show_prints_both_tables_in_a_stable_order() {
    let db = Db::init(&["--account", "3", "--account", "1", "--account", "2"]);
    for (source, event_id, account, amount) in [
        ("provider-a", "evt-2", "2", "20"),
        ("é-source", "evt-1", "1", "5"),
        ("provider-a", "evt-10", "1", "100"),
        ("Zeta", "evt-1", "3", "7"),
    ] {
        assert_eq!(db.apply(source, event_id, account, amount, &[]).code, 0);
    }
    let expected = concat!(
        r#"{"accounts":[{"id":1,"balance":105},{"id":2,"balance":20},{"id":3,"balance":7}],"#,
        r#""inbox":["#,
        r#"{"source":"Zeta","event_id":"evt-1","account_id":3,"amount":7,"receipt":{"seq":4,"balance_after":7}},"#,
        r#"{"source":"provider-a","event_id":"evt-10","account_id":1,"amount":100,"receipt":{"seq":3,"balance_after":105}},"#,
        r#"{"source":"provider-a","event_id":"evt-2","account_id":2,"amount":20,"receipt":{"seq":1,"balance_after":20}},"#,
        r#"{"source":"é-source","event_id":"evt-1","account_id":1,"amount":5,"receipt":{"seq":2,"balance_after":5}}"#,
        "]}\n"
    );
    assert_eq!(db.show(), expected);
}
