//! The crash lab, natively: a child process is killed at every storage
//! operation of a commit, the database is reopened, and every crash point
//! must leave it exactly "before" or exactly "after" — while the control
//! (recovery with sahpool's old, broken lock check) must be caught leaving
//! partial commits. A lab that cannot catch that bug would prove nothing.
//!
//! The sweeps run on the page's stack: write coalescing on top of the
//! counting shim. The coalescing control (a variant that lets a commit
//! return with its last bytes still held back) must be caught too.
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

/// The write lengths in a sweep's table (its `write` rows).
fn write_lengths(table: &str) -> Vec<u64> {
    table
        .lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            (cols.get(2) == Some(&"write")).then(|| cols[4].parse().expect("a length"))
        })
        .collect()
}

/// Every crash point of one apply and of a burst of three, in both journal
/// modes, on the coalesced stack: all atomic, nothing acknowledged lost,
/// exit 0.
#[test]
fn every_crash_point_recovers_atomically() {
    for mode in ["delete", "wal"] {
        for events in ["1", "3"] {
            let (s, ok, table) = crash_lab(&["--mode", mode, "--events", events]);
            assert!(ok, "{mode}/{events}: {s}\n{table}");
            assert_eq!(s["mode"], mode);
            let points = number(&s, "crash_points");
            // A rollback-journal commit touches the journal and the database
            // several times; a WAL commit is (at least) a write and a sync.
            let least = match mode {
                "delete" => 10,
                _ => 2 * events.parse::<u64>().unwrap() + 2,
            };
            assert!(points >= least, "{mode}/{events}: only {points} operations");
            // Coalescing is under test: no write is a lone WAL frame header
            // (24 bytes) or journal page number (4), which SQLite sends
            // separately and coalescing merges with the page after it.
            let writes = write_lengths(&table);
            assert!(!writes.is_empty(), "{table}");
            assert!(
                writes.iter().all(|&len| len != 24 && len != 4),
                "{mode}/{events}: uncoalesced writes {writes:?}"
            );
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

/// The coalescing control: a variant that lets syncs and file controls pass
/// with a commit's last bytes still held back acknowledges events that a
/// crash then loses. The sweep on a WAL burst must catch it (exit 0 means
/// caught); the same sweep with the real coalescing found nothing above.
#[test]
fn the_control_holding_a_commit_past_its_sync_is_caught() {
    let (s, caught, table) = crash_lab(&["--mode", "wal", "--events", "3", "--control-coalescing"]);
    assert!(
        caught,
        "the control must lose acknowledged events: {s}\n{table}"
    );
    assert!(number(&s, "lost_acknowledged") > 0, "{s}");
    assert!(table.contains("LostAcknowledged"), "{table}");
    // The two controls are one or the other.
    let out = Command::new(env!("CARGO_BIN_EXE_inbox-lab"))
        .args(["crash-lab", "--control", "--control-coalescing"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "a usage error");
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
