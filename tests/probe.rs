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

fn sqlite(dir: &TempDir) -> String {
    format!("sqlite:{}", dir.path().join("receiver.sqlite3").display())
}

/// Probes two instances of `handler` sharing `db`, the balance read from
/// `state`.
fn probe_pair(handler: &str, db: &str, state: &[&str]) -> Probed {
    let [a, b] = two(handler, db);
    let mut args = vec![a.hooks(), b.hooks(), "--secret".into(), SECRET.into()];
    args.extend(state.iter().map(|s| s.to_string()));
    probe(&args.iter().map(String::as_str).collect::<Vec<_>>())
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

/// The reference receivers of examples/receivers/ and what the probe must
/// say of each: nothing wrong, or the first scenario that shows its mistake
/// and the verdict word.
const REFERENCES: &[(&str, Store, FirstFailure)] = &[
    // The article's handler, unchanged, on SQLite.
    ("article", Store::Sqlite, None),
    // The pattern on PostgreSQL at READ COMMITTED: INSERT ... ON CONFLICT DO
    // NOTHING makes a second delivery wait for the first, then insert nothing.
    ("postgres", Store::Postgres, None),
    // The repeat reaches the other instance, which never saw the event.
    (
        "memory",
        Store::Sqlite,
        Some(("same_again", "credited_twice")),
    ),
    // The credit commits before the unique key refuses the registration.
    (
        "two_transactions",
        Store::Sqlite,
        Some(("same_again", "credited_twice")),
    ),
    // SELECT, then act: deliveries at the same moment all see no row.
    (
        "check_then_act",
        Store::Postgres,
        Some(("concurrent", "credited_twice")),
    ),
    // A new event with an equal body is taken for a repeat.
    (
        "body_hash",
        Store::Sqlite,
        Some(("id_stripped_or_changed", "credit_lost")),
    ),
    // A forgery sent first registers the id; the genuine event is "duplicate".
    (
        "signature_after_dedup",
        Store::Sqlite,
        Some(("forged_first", "credit_lost")),
    ),
];

/// The scenario a receiver first fails, and the verdict word; `None`: idempotent.
type FirstFailure = Option<(&'static str, &'static str)>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Store {
    Sqlite,
    Postgres,
}

/// Every reference receiver, two processes sharing its database (a file,
/// or a database of one throwaway PostgreSQL cluster this test owns), is
/// judged as [`REFERENCES`] says — from the balance, which the broken
/// ones' answers ("200") do not show — and docs/probe.md's table is what these
/// runs printed (`PROBE_TABLE=write cargo test --test probe` rewrites it).
#[test]
fn every_reference_receiver_is_judged_as_expected_and_the_readme_shows_it() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let pg = Postgres::start();
    let mut runs = Vec::new();
    let mut wrong = Vec::new();
    for (handler, store, expected) in REFERENCES {
        let p = match store {
            Store::Sqlite => {
                let db = format!(
                    "sqlite:{}",
                    dir.path().join(format!("{handler}.sqlite3")).display()
                );
                probe_pair(handler, &db, &["--state", &db])
            }
            Store::Postgres => {
                let db = pg.database(&format!("receiver_{handler}"));
                probe_pair(
                    handler,
                    &db,
                    &[
                        "--state",
                        &db,
                        "--balance-sql",
                        "SELECT balance FROM accounts WHERE id = 1",
                    ],
                )
            }
        };
        let got = p.first_failure().map(|s| {
            (
                s.to_owned(),
                p.scenario(s)["kind"].as_str().unwrap_or("").to_owned(),
            )
        });
        let want = expected.map(|(s, k)| (s.to_owned(), k.to_owned()));
        let want_code = if expected.is_some() { 1 } else { 0 };
        if got != want
            || p.code != want_code
            || !p
                .verdicts()
                .iter()
                .all(|(_, v)| v != "answers_only" && v != "skipped")
        {
            wrong.push(format!(
                "{handler}: exit {} first failure {got:?}, expected exit {want_code} {want:?}\n{}",
                p.code, p.stderr
            ));
        }
        runs.push((*handler, *store, p));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let (article, postgres) = (&runs[0].2, &runs[1].2);
    assert_eq!(
        article.scenario("concurrent")["deliveries"]
            .as_array()
            .map(Vec::len),
        Some(20)
    );
    let urls: std::collections::HashSet<_> = postgres.scenario("concurrent")["deliveries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["attempts"][0]["url"].to_string())
        .collect();
    assert_eq!(urls.len(), 2, "the burst reached both PostgreSQL receivers");
    readme_table(&table(&runs));
}

/// The table docs/probe.md shows: scenario × receiver, each cell the verdict
/// word, the first failure in bold; then each broken receiver's first
/// failure in the probe's words.
fn table(runs: &[(&str, Store, Probed)]) -> String {
    let store = |s: &Store| {
        if *s == Store::Sqlite {
            "SQLite"
        } else {
            "PostgreSQL"
        }
    };
    let mut out = format!(
        "| scenario | {} |\n|---|{}\n",
        runs.iter()
            .map(|(h, s, _)| format!("`{h}` ({})", store(s)))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(runs.len())
    );
    let names: Vec<String> = runs[0]
        .2
        .verdicts()
        .into_iter()
        .map(|(n, _)| n.trim_matches('"').to_owned())
        .collect();
    for name in &names {
        let cells: Vec<String> = runs
            .iter()
            .map(|(_, _, p)| {
                let verdict = p.scenario(name);
                let word = verdict["kind"].as_str().unwrap_or("ok").to_owned();
                if p.first_failure() == Some(name.as_str()) {
                    format!("**{word}**")
                } else {
                    word
                }
            })
            .collect();
        out += &format!("| {name} | {} |\n", cells.join(" | "));
    }
    out += &format!(
        "| exit | {} |\n\n",
        runs.iter()
            .map(|(_, _, p)| p.code.to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    for (handler, _, p) in runs {
        if let Some(first) = p.first_failure() {
            out += &format!(
                "- `{handler}`, {first}: {}.\n",
                p.scenario(first)["why"].as_str().unwrap_or("")
            );
        }
    }
    out
}

/// Compares docs/probe.md's block with `table`, or writes it there when
/// `PROBE_TABLE=write`.
fn readme_table(table: &str) {
    const START: &str =
        "<!-- probe-table: written by `PROBE_TABLE=write cargo test --test probe` -->\n";
    const END: &str = "<!-- /probe-table -->";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/probe.md");
    let readme = std::fs::read_to_string(&path).expect("docs/probe.md");
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        panic!("docs/probe.md has no {START:?} ... {END:?} block");
    };
    let shown = &readme[start + START.len()..end];
    if std::env::var("PROBE_TABLE").as_deref() == Ok("write") {
        let updated = format!(
            "{}{table}{}",
            &readme[..start + START.len()],
            &readme[end..]
        );
        std::fs::write(&path, updated).expect("write docs/probe.md");
    } else {
        assert_eq!(shown, table, "docs/probe.md's probe table is not what the probe printed: run `PROBE_TABLE=write cargo test --test probe`");
    }
}

/// Without --state the probe judges the answers alone and says so: the
/// in-memory receiver answers every delivery "200", so by its answers it
/// passes — which is why the balance is read when it can be.
#[test]
fn without_state_only_the_answers_are_judged_and_the_report_says_so() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = sqlite(&dir);
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

/// The balance read from a URL the receiver serves (`--state-url`), and
/// the body from a template of the reader's (`--body-template`).
#[test]
fn the_balance_can_come_from_a_url() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = sqlite(&dir);
    let r = Receiver::start("article", &db);
    let balance = format!("{}/balance", r.base);
    let template = dir.path().join("body.json");
    std::fs::write(
        &template,
        "{\"amount\": {amount},\n \"account_id\": {account_id}}",
    )
    .expect("write");
    let p = probe(&[
        &r.hooks(),
        "--secret",
        SECRET,
        "--state-url",
        &balance,
        "--body-template",
        &template.display().to_string(),
    ]);
    assert_idempotent(&p);
    let sent = &p.scenario("new_event")["deliveries"][0]["attempts"][0]["body"];
    assert_eq!(sent, "{\"amount\": 101,\n \"account_id\": 1}");
}
