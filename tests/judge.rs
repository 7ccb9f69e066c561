#![cfg(all(not(target_family = "wasm"), feature = "labs"))]
//! `inbox-lab judge`, run as a process the way a workshop script runs it:
//! exit 0 for a correct handler, 1 for a broken one, 2 for a file that does
//! not parse (the error on stderr as `FILE:LINE:COLUMN: sentence`), 3 for
//! the lab's own error, 4 past the deadline; one JSON line of the shape on stdout, with the
//! seed that repeats it; `--print-builtin` prints the texts the judge is
//! checked against. The crash sweep runs here (it needs child processes),
//! so these judge with 2 deliveries only.

use std::path::PathBuf;

use serde_json::Value;
use tempfile::TempDir;

#[path = "support/binary.rs"]
mod binary;
use binary::inbox_lab;

/// Writes `text` as `name` in a fresh directory.
fn handler_file(name: &str, text: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write handler");
    (dir, path)
}

fn builtin(name: &str) -> String {
    let run = inbox_lab(&["judge", "--print-builtin", name]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

/// Runs `inbox-lab judge` on `path` with 2 deliveries and `more` options.
fn judge_run(path: &std::path::Path, more: &[&str]) -> binary::Run {
    let p = path.to_str().expect("utf-8");
    let args = ["judge", "--handler", p, "--deliveries", "2"];
    inbox_lab(&[&args[..], more].concat())
}

/// Judges `path` with 2 deliveries: the exit code and the one JSON line.
fn judge(path: &std::path::Path) -> (i32, Value) {
    let run = judge_run(path, &[]);
    assert_eq!(run.stdout.lines().count(), 1, "one line: {}", run.stdout);
    let json = run.json();
    (run.code, json)
}

#[test]
fn the_articles_handler_is_judged_correct_with_every_check_counted() {
    let (_dir, path) = handler_file("mine.inbox", &builtin("atomic"));
    let (code, r) = judge(&path);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["handler"], "mine.inbox");
    assert_eq!(r["verdict"], "correct");
    assert_eq!(r["race"]["deliveries"], serde_json::json!([2]));
    assert!(r["race"]["interleavings"].as_u64() > Some(1), "{r}");
    for (check, field) in [
        ("race", "double_credits"),
        ("race", "lost_credits"),
        ("race", "wrong_answers"),
        ("race", "deadlocks"),
        ("faults", "lost_credits"),
        ("faults", "double_credits"),
        ("faults", "wrong_answers"),
        ("crash", "partial"),
        ("crash", "lost_acknowledged"),
    ] {
        assert_eq!(r[check][field], 0, "{check}.{field}: {r}");
    }
    assert!(r["faults"]["points"].as_u64() >= Some(5), "{r}");
    let crash = &r["crash"];
    assert!(crash["crash_points"].as_u64() > Some(10), "{r}");
    assert_eq!(crash["atomic"], crash["crash_points"], "{r}");
    let cases = r["cases"].as_object().expect("cases");
    assert_eq!(cases.len(), 6, "{r}");
    assert!(cases.values().all(|v| v == "ok"), "{r}");
    assert!(r["first_failure"].is_null(), "{r}");
}

#[test]
fn two_transactions_are_broken_by_the_race_the_faults_and_the_crash_sweep() {
    let (_dir, path) = handler_file("split.inbox", &builtin("two_transactions"));
    let (code, r) = judge(&path);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["verdict"], "broken");
    assert!(r["race"]["wrong_answers"].as_u64() > Some(0), "{r}");
    assert!(r["faults"]["lost_credits"].as_u64() > Some(0), "{r}");
    assert!(r["crash"]["partial"].as_u64() > Some(0), "{r}");
    // The first failure is a race schedule the race lab replays: a
    // delivery index per statement, both deliveries in it.
    let f = &r["first_failure"];
    assert_eq!(f["check"], "race", "{r}");
    assert_eq!(f["deliveries"], 2, "{r}");
    let schedule: Vec<u64> = f["schedule"]
        .as_array()
        .expect("schedule")
        .iter()
        .map(|v| v.as_u64().expect("index"))
        .collect();
    assert!(schedule.contains(&0) && schedule.contains(&1), "{r}");
    assert!(schedule.iter().all(|&i| i < 2), "{r}");
    // Each check's first failure says why, in the reader's words.
    assert_explained(&r);
    let why = |check: &str| {
        let failures = r["failures"].as_array().expect("failures");
        let f = failures.iter().find(|f| f["check"] == check).expect(check);
        f["why"]["en"].as_str().unwrap_or_default().to_owned()
    };
    assert!(why("race").contains("answered duplicate at step"), "{r}");
    assert!(why("race").contains("credit was not committed yet"), "{r}");
    assert!(why("faults").contains("its credit is gone"), "{r}");
    assert!(
        why("crash").contains("A crash right after storage operation"),
        "{r}"
    );
}

#[test]
fn a_file_that_does_not_parse_exits_2_naming_line_and_column_on_stderr() {
    let text = "BEGIN IMMEDIATE\nIF CHANGED 0\nEND\nCOMMIT\nANSWER applied\n";
    let (_dir, path) = handler_file("typo.inbox", text);
    let p = path.to_str().expect("utf-8");
    let run = inbox_lab(&["judge", "--handler", p]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "", "nothing judged");
    assert_eq!(
        run.stderr.trim_end(),
        format!("{p}:2:12: expected =, !=, <, <=, > or >=, found \"0\"")
    );
    let refused = "ATTACH DATABASE '/tmp/x.db' AS x\nANSWER applied\n";
    let (_dir2, path) = handler_file("attach.inbox", refused);
    let run = inbox_lab(&["judge", "--handler", path.to_str().expect("utf-8")]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(":1:1: ATTACH is not allowed"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_arguments_exit_2_with_a_reason() {
    let (_dir, path) = handler_file("ok.inbox", &builtin("atomic"));
    let p = path.to_str().expect("utf-8");
    for (args, says) in [
        (vec!["judge", "--handler", p, "--deliveries", "4"], "2 or 3"),
        (vec!["judge", "--print-builtin", "nope"], "nope"),
        (
            vec!["judge", "--handler", "/no/such/handler.inbox"],
            "cannot read",
        ),
        (vec!["judge"], "--handler"),
        (vec!["judge", "--handler", p, "--seed", "-1"], "--seed"),
        (vec!["judge", "--handler", p, "--seed", "1.5"], "--seed"),
        (
            vec!["judge", "--handler", p, "--seed", "9007199254740992"],
            "--seed",
        ),
        (
            vec!["judge", "--handler", p, "--deadline", "0"],
            "--deadline",
        ),
        (
            vec!["judge", "--handler", p, "--deadline", "2s"],
            "--deadline",
        ),
    ] {
        let run = inbox_lab(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stdout);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
    }
}

/// A handler right for the usual event only (a `production` event is
/// credited without an inbox row) is broken, the case naming the event; the
/// seed printed judges the same events again, line for line.
#[test]
fn a_handler_gaming_one_source_is_broken_and_its_seed_repeats_the_report() {
    let atomic = builtin("atomic");
    let text = format!(
        "SELECT 1 WHERE :source = 'production'\nIF ROW\n\
         UPDATE accounts SET balance = balance + :amount WHERE id = :account_id\n\
         ANSWER applied\nEND\n{atomic}"
    );
    let (_dir, path) = handler_file("gamed.inbox", &text);
    let (code, r) = judge(&path);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["verdict"], "broken", "{r}");
    let replay = r["cases"]["replay"].as_str().unwrap_or_default();
    assert!(replay.contains("from \"production\""), "{r}");
    let seed = r["seed"].as_u64().expect("a seed").to_string();
    let again = |seed: &str| judge_run(&path, &["--seed", seed]).stdout;
    let line = again(&seed);
    assert_eq!(line, again(&seed), "the same seed, the same line");
    let repeated: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(repeated, r, "and the same report as the first run");
}

/// A handler whose one statement takes far longer than the deadline (a
/// search over strings it builds: a single SQLite step, which no progress
/// handler interrupts) ends at the deadline with exit 4 and says so.
#[test]
fn a_run_past_its_deadline_ends_with_exit_4_and_says_why() {
    let slow = "BEGIN IMMEDIATE\n\
        SELECT instr(printf('%.*c', 1000000, 'a'), printf('%.*c', 500000, 'a') || 'b')\n\
        COMMIT\nANSWER applied\n";
    let (_dir, path) = handler_file("slow.inbox", slow);
    let run = judge_run(&path, &["--seed", "5", "--deadline", "1"]);
    assert_eq!(run.code, 4, "{} {}", run.stdout, run.stderr);
    assert_eq!(run.stdout, "", "no report");
    assert_eq!(
        run.stderr.trim_end(),
        "inbox-lab: judge stopped: the deadline of 1 s passed before the judge finished \
         (seed 5): the handler takes too long to judge"
    );
}

#[test]
fn every_builtin_prints_a_text_that_parses() {
    for name in [
        "atomic",
        "no_dedup",
        "check_then_act",
        "two_transactions",
        "insert_or_ignore",
        "insert_or_replace",
    ] {
        let text = builtin(name);
        assert!(text.contains("ANSWER"), "{name}: {text}");
        let (_dir, path) = handler_file("b.inbox", &text);
        // --deliveries 5 is refused only after the file parsed.
        let run = inbox_lab(&[
            "judge",
            "--handler",
            path.to_str().expect("utf-8"),
            "--deliveries",
            "5",
        ]);
        assert!(
            run.stderr.contains("--deliveries"),
            "{name}: {}",
            run.stderr
        );
    }
}

/// `--workshop` judges the handler in Rust the feature compiles in: the
/// starter as shipped (`workshop/handler.rs`, "SELECT, then act") is broken
/// by a race, with the crash sweep run by children that deliver with it too.
#[cfg(feature = "workshop")]
#[test]
fn the_workshop_starter_is_judged_broken_by_a_race_with_every_check_run() {
    let run = inbox_lab(&["judge", "--workshop", "--deliveries", "2"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let r: Value = run.json();
    assert_eq!(r["handler"], "workshop");
    assert_eq!(r["verdict"], "broken");
    assert!(r["race"]["double_credits"].as_u64() > Some(0), "{r}");
    assert_eq!(r["first_failure"]["check"], "race", "{r}");
    assert!(r["crash"]["crash_points"].as_u64() > Some(0), "{r}");
    assert_eq!(r["cases"].as_object().map(|c| c.len()), Some(6), "{r}");
}

/// Without the feature there is no workshop handler: a usage error that
/// says how to get one, nothing judged.
#[cfg(not(feature = "workshop"))]
#[test]
fn without_the_feature_judge_workshop_says_how_to_build_it() {
    let run = inbox_lab(&["judge", "--workshop"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("feature `workshop`"), "{}", run.stderr);
}

/// Every failing check of `r` carries its explanation in both languages
/// and its steps, and nothing in the line is a raw storage error.
fn assert_explained(r: &Value) {
    let line = r.to_string();
    for raw in [
        "cannot be used",
        "no transaction is active",
        "storage error",
    ] {
        assert!(!line.contains(raw), "raw {raw:?}: {r}");
    }
    let failures = r["failures"].as_array().expect("failures");
    assert_eq!(
        failures.first().map(|f| &f["check"]),
        Some(&r["first_failure"]["check"]),
        "{r}"
    );
    for f in failures {
        let (en, ru) = (f["why"]["en"].as_str(), f["why"]["ru"].as_str());
        assert!(en.is_some_and(|s| s.len() > 20), "why.en: {f}");
        assert!(
            ru.is_some_and(|s| s.chars().any(|c| ('а'..='я').contains(&c))),
            "why.ru: {f}"
        );
        let steps = f["steps"].as_array().expect("steps");
        assert!(!steps.is_empty(), "steps: {f}");
        for s in steps {
            assert!(s["en"].is_string() && s["ru"].is_string(), "step: {s}");
        }
    }
}

#[test]
fn a_handler_that_refuses_every_event_is_judged_broken_by_the_case_that_shows_it() {
    for (name, text, said_en, said_ru) in [
        (
            "rollback.inbox",
            "ROLLBACK\nANSWER unknown_account\n",
            "ROLLBACK on line 1 runs with no transaction open",
            "ROLLBACK в строке 1 выполняется без открытой транзакции",
        ),
        (
            "refuse.inbox",
            "SELECT balance FROM accounts WHERE id = :account_id\nANSWER unknown_account\n",
            "the first delivery: answered unknown account (422); expected applied",
            "первая доставка: ответ: «нет такого счёта» (422), а ожидался ответ «применено»",
        ),
    ] {
        let (_dir, path) = handler_file(name, text);
        let run = judge_run(&path, &[]);
        assert_eq!(run.code, 1, "{name}: {} {}", run.stdout, run.stderr);
        let r = run.json();
        assert_eq!(r["verdict"], "broken", "{r}");
        assert_explained(&r);
        let failures = r["failures"].as_array().expect("failures");
        let case = failures
            .iter()
            .find(|f| f["check"] == "case")
            .expect("a case");
        assert_eq!(case["case"], "replay", "{r}");
        let why = &case["why"];
        assert!(
            why["en"].as_str().is_some_and(|s| s.contains(said_en)),
            "{why}"
        );
        assert!(
            why["ru"].as_str().is_some_and(|s| s.contains(said_ru)),
            "{why}"
        );
    }
}

#[test]
fn without_begin_and_commit_every_failing_check_says_why_in_the_handlers_terms() {
    let text: String = builtin("atomic")
        .lines()
        .filter(|l| !l.starts_with("BEGIN") && l.trim() != "COMMIT")
        .map(|l| format!("{l}\n"))
        .collect();
    let (_dir, path) = handler_file("loose.inbox", &text);
    let (code, r) = judge(&path);
    assert_eq!(code, 1, "{r}");
    assert_explained(&r);
    let checks: Vec<&Value> = r["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .map(|f| &f["check"])
        .collect();
    assert!(checks.contains(&&Value::from("race")), "{r}");
    // The duplicate's path ROLLBACKs with no transaction open: its line.
    let line = text
        .lines()
        .position(|l| l.trim() == "ROLLBACK")
        .expect("ROLLBACK")
        + 1;
    let said = format!("ROLLBACK on line {line} runs with no transaction open");
    assert!(r.to_string().contains(&said), "{said}: {r}");
}

#[test]
fn the_labs_own_error_exits_3_never_as_a_verdict() {
    let (_dir, path) = handler_file("mine.inbox", &builtin("atomic"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_inbox-lab"))
        .args([
            "judge",
            "--handler",
            path.to_str().expect("utf-8"),
            "--deliveries",
            "2",
        ])
        .env("TMPDIR", path.join("no-such-directory"))
        .output()
        .expect("run inbox-lab");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(json["error"]["message"].is_string(), "{json}");
    assert!(json.get("verdict").is_none(), "{json}");
}
