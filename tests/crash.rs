//! The crash lab, natively: a child process is killed at every storage
//! operation of a commit, the database is reopened, and every crash point
//! must leave it exactly "before" or exactly "after" — while the control
//! (recovery with sahpool's old, broken lock check) must be caught leaving
//! partial commits. A lab that cannot catch that bug would prove nothing.
#![cfg(all(not(target_family = "wasm"), feature = "labs"))]

use std::process::Command;

use serde_json::Value;

fn crash_lab(args: &[&str]) -> (Value, bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_inbox-lab"))
        .arg("crash-lab")
        .args(args)
        .output()
        .expect("run inbox-lab crash-lab");
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    let summary: Value = serde_json::from_str(line.trim()).expect("one JSON line");
    (
        summary,
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn number(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// Every crash point of one apply and of a burst of three, in both journal
/// modes: all atomic, nothing acknowledged lost, exit 0.
#[test]
fn every_crash_point_recovers_atomically() {
    for mode in ["delete", "wal"] {
        for events in ["1", "3"] {
            let (s, ok, table) = crash_lab(&["--mode", mode, "--events", events]);
            assert!(ok, "{mode}/{events}: {s}\n{table}");
            assert_eq!(s["mode"], mode);
            let points = number(&s, "crash_points");
            // A commit touches the journal or WAL and the database several times.
            assert!(points >= 10, "{mode}/{events}: only {points} operations");
            assert_eq!(number(&s, "atomic"), points, "{mode}/{events}: {s}");
            assert_eq!(number(&s, "partial"), 0);
            assert_eq!(number(&s, "lost_acknowledged"), 0);
            // The table names each crash point's file and operation.
            assert!(table.contains("sync"), "{table}");
        }
    }
}

/// The control: recovering with a lock check that always says "someone else
/// holds RESERVED" skips the hot-journal rollback, and the sweep catches the
/// database pages written before the crash — partial commits.
#[test]
fn the_control_with_a_broken_lock_check_is_caught() {
    let (s, caught, table) = crash_lab(&["--mode", "delete", "--control"]);
    assert!(
        caught,
        "the control must report partial commits: {s}\n{table}"
    );
    assert!(number(&s, "partial") > 0, "{s}");
    assert!(table.contains("Partial"), "{table}");
}

/// Bad arguments are reported as errors, not run.
#[test]
fn crash_lab_refuses_bad_arguments() {
    for args in [
        &["--mode", "truncate"][..],
        &["--events", "0"],
        &["--events", "1.5"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_inbox-lab"))
            .arg("crash-lab")
            .args(args)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["error"]["kind"], "invalid_input", "{args:?}");
    }
}

/// The outbox dispatcher killed at every storage operation of its drain,
/// then restarted: with a deduplicating receiver every notification is shown
/// exactly once; without, the crash after sending and before marking shows
/// duplicates — the outbox is at-least-once, never at-most-once.
#[test]
fn dispatcher_crashes_need_a_deduplicating_receiver() {
    for mode in ["delete", "wal"] {
        let (s, ok, table) =
            crash_lab(&["--workload", "dispatch", "--mode", mode, "--events", "3"]);
        assert!(ok, "{mode}: {s}\n{table}");
        let points = number(&s, "crash_points");
        assert!(points >= 6, "{mode}: {s}");
        assert_eq!(
            number(&s, "atomic"),
            points,
            "{mode}: every message exactly once"
        );
        assert_eq!(number(&s, "lost_acknowledged"), 0);
    }
    let (s, ok, _) = crash_lab(&["--workload", "dispatch", "--events", "3", "--no-dedup"]);
    assert!(!ok, "duplicates must be reported: {s}");
    assert!(number(&s, "partial") > 0, "{s}");
    assert_eq!(
        number(&s, "lost_acknowledged"),
        0,
        "at-least-once: nothing lost"
    );
}
