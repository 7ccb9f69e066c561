#![cfg(all(not(target_family = "wasm"), feature = "labs"))]
//! `inbox-lab probe` against real receivers (examples/receivers/, real
//! Python processes on real SQLite and PostgreSQL): the article's pattern is
//! judged idempotent, and each mistake a reader plausibly makes is judged
//! broken by the scenario that shows it — from the balance, which answers
//! alone cannot show.

#[path = "support/receivers.rs"]
mod receivers;

use receivers::{probe, two, Postgres, Probed, Receiver, SECRET};
use tempfile::TempDir;

fn sqlite(dir: &TempDir) -> (String, String) {
    let path = dir.path().join("receiver.sqlite3").display().to_string();
    (format!("sqlite:{path}"), format!("sqlite:{path}"))
}

/// Probes two instances of `handler` sharing one SQLite file, the balance
/// read from that file.
fn probe_sqlite_pair(handler: &str) -> Probed {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (db, state) = sqlite(&dir);
    let [a, b] = two(handler, &db);
    probe(&[
        &a.hooks(),
        &b.hooks(),
        "--secret",
        SECRET,
        "--state",
        &state,
    ])
}

fn assert_idempotent(p: &Probed) {
    assert_eq!(p.code, 0, "{}\n{}", p.doc, p.stderr);
    assert_eq!(p.doc["outcome"], "idempotent");
    let verdicts = p.verdicts();
    assert_eq!(verdicts.len(), 10, "{verdicts:?}");
    assert!(
        verdicts.iter().all(|(_, v)| v == "correct"),
        "every scenario judged from the balance: {verdicts:?}"
    );
}

fn assert_broken_at(p: &Probed, scenario: &str, kind: &str) {
    assert_eq!(p.code, 1, "{}\n{}", p.doc, p.stderr);
    assert_eq!(p.doc["outcome"], "broken");
    assert_eq!(p.first_failure(), Some(scenario), "{:?}", p.verdicts());
    assert_eq!(
        p.scenario(scenario)["kind"],
        kind,
        "{}",
        p.scenario(scenario)
    );
}

/// The article's handler, unchanged, behind signature checks on SQLite,
/// with two processes sharing the file: every scenario correct, and the
/// history shows the burst really was N deliveries.
#[test]
fn the_articles_handler_on_sqlite_is_idempotent() {
    let p = probe_sqlite_pair("article");
    assert_idempotent(&p);
    let burst = p.scenario("concurrent");
    assert_eq!(burst["deliveries"].as_array().map(Vec::len), Some(20));
    assert_eq!(
        burst["balance_after"]
            .as_i64()
            .zip(burst["balance_before"].as_i64())
            .map(|(a, b)| a - b),
        burst["expected_change"].as_i64()
    );
}

/// Dedup in one process's memory: the repeat reaches the other instance,
/// which never saw the event, and pays again.
#[test]
fn dedup_in_process_memory_is_broken_by_the_repeat() {
    assert_broken_at(&probe_sqlite_pair("memory"), "same_again", "credited_twice");
}

/// The credit committed in one transaction and the registration in
/// another: the unique key refuses the repeat's registration after its
/// credit is already in.
#[test]
fn credit_and_registration_in_two_transactions_is_broken_by_the_repeat() {
    assert_broken_at(
        &probe_sqlite_pair("two_transactions"),
        "same_again",
        "credited_twice",
    );
}

/// Dedup keyed on a hash of the body: a new event with an equal body is
/// taken for a repeat and never paid.
#[test]
fn dedup_on_the_body_is_broken_by_a_changed_id() {
    assert_broken_at(
        &probe_sqlite_pair("body_hash"),
        "id_stripped_or_changed",
        "credit_lost",
    );
}

/// The id registered before the signature is checked: a forgery sent first
/// with the real id poisons it, and the genuine event is "duplicate".
#[test]
fn signature_checked_after_the_dedup_insert_is_broken_by_a_forgery_sent_first() {
    assert_broken_at(
        &probe_sqlite_pair("signature_after_dedup"),
        "forged_first",
        "credit_lost",
    );
}

/// Without --state the probe judges the answers alone and says so: the
/// in-memory receiver answers every delivery "200", so by its answers it
/// passes — which is why the balance is read when it can be.
#[test]
fn without_state_only_the_answers_are_judged_and_the_report_says_so() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (db, _) = sqlite(&dir);
    let [a, b] = two("memory", &db);
    let p = probe(&[&a.hooks(), &b.hooks(), "--secret", SECRET]);
    assert_eq!(p.code, 0, "{}", p.doc);
    assert!(
        p.verdicts().iter().all(|(_, v)| v == "answers_only"),
        "{:?}",
        p.verdicts()
    );
    let summary = p.doc["summary"].as_str().unwrap_or("");
    assert!(
        summary.contains("without --state") && summary.contains("could not see"),
        "{summary}"
    );
}

/// The balance read from a URL the receiver serves (`--state-url`).
#[test]
fn the_balance_can_come_from_a_url() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (db, _) = sqlite(&dir);
    let r = Receiver::start("article", &db);
    let balance = format!("{}/balance", r.base);
    assert_idempotent(&probe(&[
        &r.hooks(),
        "--secret",
        SECRET,
        "--state-url",
        &balance,
    ]));
}

/// Probes two instances of `handler` sharing one PostgreSQL database (a
/// throwaway cluster this test owns), the balance read through the
/// `postgres` crate.
fn probe_postgres_pair(handler: &str) -> Probed {
    let pg = Postgres::start();
    let [a, b] = two(handler, &pg.url);
    probe(&[
        &a.hooks(),
        &b.hooks(),
        "--secret",
        SECRET,
        "--state",
        &pg.url,
        "--balance-sql",
        "SELECT balance FROM accounts WHERE id = 1",
    ])
}

/// The article's pattern on PostgreSQL at READ COMMITTED, two receiver
/// processes, the bursts spread over both: INSERT ... ON CONFLICT DO NOTHING
/// makes the second delivery wait for the first and then insert nothing.
#[test]
fn the_pattern_on_postgres_with_two_processes_is_idempotent() {
    let p = probe_postgres_pair("postgres");
    assert_idempotent(&p);
    let urls: std::collections::HashSet<_> = p.scenario("concurrent")["deliveries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["attempts"][0]["url"].to_string())
        .collect();
    assert_eq!(urls.len(), 2, "the burst reached both processes");
}

/// SELECT, then UPDATE and INSERT, at READ COMMITTED with two processes:
/// deliveries at the same moment all see no row, and all credit.
#[test]
fn check_then_act_on_postgres_is_broken_by_concurrent_deliveries() {
    assert_broken_at(
        &probe_postgres_pair("check_then_act"),
        "concurrent",
        "credited_twice",
    );
}
