#![cfg(not(target_family = "wasm"))]
//! The crate against the article's own script: random delivery sequences run
//! through our [`apply`] and through the script's `apply_credit`
//! (`tests/oracle/webhook_demo.py`, driven by `tests/oracle/run_oracle.py`)
//! must give the same outcome for every delivery and the same final tables.
//!
//! The sequences stay where the two sets of rules agree. Both refuse amount
//! 0, -1 and 10^9+1, account ids 0 and below, and empty keys. They are *not*
//! generated where ours are deliberately stricter than the script's:
//! whitespace-only keys (`" "`), keys over 255 bytes, keys with control
//! characters, account ids over 2^53-1 — the script accepts all of these —
//! and balances near 2^53-1 (the script has no balance limit). Those rules
//! have their own tests in `tests/apply.rs` and `tests/cli.rs`.
//!
//! python3 is required: without it these tests fail, they do not skip.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::event::MAX_AMOUNT;
use inbox_lab::core::schema::{self, DEFAULT_BUSY_TIMEOUT};
use inbox_lab::{apply, core::tables, Event, Fault};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde::{Deserialize, Serialize};

// ---- the two sides ----------------------------------------------------------------------------

/// One delivery, in `run_oracle.py`'s input format. Not validated: invalid
/// values are part of what is compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Delivery {
    source: String,
    event_id: String,
    account_id: i64,
    amount: i64,
    fail_after_insert: bool,
}

/// A fresh database with account 1 (the script's SCHEMA creates it) plus
/// `accounts`, then `deliveries` in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Sequence {
    accounts: Vec<i64>,
    deliveries: Vec<Delivery>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Account {
    id: i64,
    balance: i64,
}

/// An inbox row without our receipt columns (the script has none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct InboxRow {
    source: String,
    event_id: String,
    account_id: i64,
    amount: i64,
}

/// What one side saw: an outcome per delivery (`applied`, `duplicate` or an
/// error kind) and both tables in `show` order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Observed {
    outcomes: Vec<String>,
    accounts: Vec<Account>,
    inbox: Vec<InboxRow>,
}

#[derive(Deserialize)]
struct OracleBatch {
    results: Vec<Observed>,
}

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle")
}

/// A directory for thousands of small transactions. Each commit syncs to
/// disk, so tmpfs (`/dev/shm`, when there is one) makes the test several times
/// faster; the file locking and transactions are the same either way.
fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(dir) = tempfile::tempdir_in(shm) {
            return dir;
        }
    }
    tempfile::tempdir().expect("temporary directory")
}

/// Starts python3, or fails the test saying what is missing.
fn python3(args: &[&Path]) -> Command {
    let probe = Command::new("python3").arg("--version").output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "python3 --version failed ({}): the differential tests need python3 to run the \
             article's script tests/oracle/webhook_demo.py",
            out.status
        ),
        Err(e) => panic!(
            "python3 not found ({e}): the differential tests need python3 (3.8 or newer, with \
             its standard sqlite3 module) to run the article's script \
             tests/oracle/webhook_demo.py — install it, e.g. `apt-get install python3`"
        ),
    }
    let mut cmd = Command::new("python3");
    cmd.arg("-B").args(args); // -B: no __pycache__ in the source tree
    cmd
}

/// Runs every sequence through the script in ONE python3 process.
fn run_oracle(sequences: &[Sequence], dir: &Path) -> Vec<Observed> {
    let input = serde_json::to_vec(&serde_json::json!({ "sequences": sequences })).expect("json");
    let script = oracle_dir().join("run_oracle.py");
    let mut child = python3(&[&script, dir])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait for python3");
    writer
        .join()
        .expect("writer thread")
        .expect("write to python3");
    assert!(
        out.status.success(),
        "run_oracle.py failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let batch: OracleBatch = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "run_oracle.py printed something that is not its result format: {e}\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(
        batch.results.len(),
        sequences.len(),
        "one result per sequence"
    );
    batch.results
}

/// Runs one sequence through our `apply` on a fresh file database.
fn run_ours(sequence: &Sequence, path: &Path) -> Observed {
    let path = path.to_str().expect("UTF-8 path");
    let mut conn = db::open(path, Mode::Create, DEFAULT_BUSY_TIMEOUT).expect("create db");
    let mut accounts = vec![1];
    accounts.extend(&sequence.accounts);
    schema::init(&mut conn, &accounts).expect("init");

    let outcomes = sequence
        .deliveries
        .iter()
        .map(|d| {
            let fault = d.fail_after_insert.then_some(Fault::AfterInsert);
            let answer = Event::new(&*d.source, &*d.event_id, d.account_id, d.amount)
                .and_then(|event| apply(&conn, &event, fault));
            match answer {
                Ok(outcome) => outcome.kind().to_owned(),
                Err(err) => err.kind().to_owned(),
            }
        })
        .collect();

    let t = tables::snapshot(&conn).expect("snapshot");
    Observed {
        outcomes,
        accounts: t
            .accounts
            .into_iter()
            .map(|a| Account {
                id: a.id,
                balance: a.balance,
            })
            .collect(),
        inbox: t
            .inbox
            .into_iter()
            .map(|r| InboxRow {
                source: r.source,
                event_id: r.event_id,
                account_id: r.account_id,
                amount: r.amount,
            })
            .collect(),
    }
}

fn run_all_ours(sequences: &[Sequence], dir: &Path) -> Vec<Observed> {
    sequences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let path = dir.join(format!("ours-{i}.sqlite3"));
            let observed = run_ours(s, &path);
            std::fs::remove_file(&path).expect("remove db");
            observed
        })
        .collect()
}

/// `None` when both sides agree on every sequence, else a readable report of
/// the first sequence that differs. When an outcome differs, the report stops
/// at that delivery: the sequence is deterministic, so that prefix alone
/// reproduces the difference.
fn first_difference(
    sequences: &[Sequence],
    ours: &[Observed],
    oracle: &[Observed],
) -> Option<String> {
    let i = (0..sequences.len()).find(|&i| ours[i] != oracle[i])?;
    let (seq, us, them) = (&sequences[i], &ours[i], &oracle[i]);
    let outcome = |o: &Observed, n: usize| o.outcomes.get(n).cloned().unwrap_or_default();
    let first_bad = (0..seq.deliveries.len()).find(|&n| outcome(us, n) != outcome(them, n));
    let shown = first_bad.map_or(seq.deliveries.len(), |n| n + 1);

    let mut r = String::new();
    let _ = writeln!(
        r,
        "sequence {i} of {} differs; its database has account 1 plus extra accounts {:?}",
        sequences.len(),
        seq.accounts
    );
    let _ = writeln!(r, "  #  {:<60} {:<17} script", "delivery", "ours");
    for (n, d) in seq.deliveries.iter().enumerate().take(shown) {
        let what = format!(
            "{:?}/{:?} -> account {}, amount {}{}",
            d.source,
            d.event_id,
            d.account_id,
            d.amount,
            if d.fail_after_insert {
                ", fail_after_insert"
            } else {
                ""
            }
        );
        let (a, b) = (outcome(us, n), outcome(them, n));
        let mark = if a == b { "" } else { "   <<< differs" };
        let _ = writeln!(r, "{n:>3}  {what:<60} {a:<17} {b}{mark}");
    }
    let replay = match first_bad {
        Some(n) => {
            let _ = writeln!(
                r,
                "(delivery {n} is the first to differ; {} later deliveries not shown)",
                seq.deliveries.len() - shown
            );
            Sequence {
                accounts: seq.accounts.clone(),
                deliveries: seq.deliveries[..shown].to_vec(),
            }
        }
        None => {
            for (name, a, b) in [
                ("accounts", json(&us.accounts), json(&them.accounts)),
                ("inbox", json(&us.inbox), json(&them.inbox)),
            ] {
                let mark = if a == b { "same" } else { "DIFFER" };
                let _ = writeln!(r, "final {name} ({mark}):\n  ours:   {a}\n  script: {b}");
            }
            seq.clone()
        }
    };
    let _ = writeln!(
        r,
        "replay with: echo '<JSON below>' | python3 tests/oracle/run_oracle.py\n{}",
        json(&replay)
    );
    Some(r)
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("json")
}

/// Both sides over the same sequences; the report of the first difference.
fn compare(sequences: &[Sequence]) -> Result<Vec<Observed>, String> {
    let dir = scratch_dir();
    let oracle = run_oracle(sequences, dir.path());
    let ours = run_all_ours(sequences, dir.path());
    match first_difference(sequences, &ours, &oracle) {
        Some(report) => Err(report),
        None => Ok(ours),
    }
}

// ---- random sequences -------------------------------------------------------------------------

/// One delivery: few sources and ids (so keys repeat a lot), amounts mostly
/// from a small set (so repeats often carry the same payload), some accounts
/// that may not exist, some faults, and invalid values both sides refuse.
fn delivery() -> impl Strategy<Value = Delivery> {
    let source = prop_oneof![
        16 => Just("provider-a"),
        8 => Just("provider-b"),
        2 => Just("провайдер-🦀"),
        1 => Just(""),
    ];
    let event_id = prop_oneof![
        24 => (0..5_u8).prop_map(|n| format!("evt-{n}")),
        1 => Just("evt-1 ".to_owned()), // byte for byte: not "evt-1"
        1 => Just(String::new()),
    ];
    let account_id = prop_oneof![
        20 => Just(1_i64),
        6 => Just(2),
        4 => Just(3),
        2 => Just(4), // never created
        1 => Just(0),
        1 => Just(-7),
    ];
    let amount = prop_oneof![
        24 => prop::sample::select(vec![500_i64, 700, 1]),
        6 => 1..=MAX_AMOUNT,
        1 => Just(0_i64),
        1 => Just(-1),
        1 => Just(MAX_AMOUNT + 1),
    ];
    let fail_after_insert = prop::bool::weighted(0.15);
    (source, event_id, account_id, amount, fail_after_insert).prop_map(
        |(source, event_id, account_id, amount, fail_after_insert)| Delivery {
            source: source.to_owned(),
            event_id,
            account_id,
            amount,
            fail_after_insert,
        },
    )
}

/// A sequence of 5–40 deliveries; about a third of them re-send an earlier
/// delivery of the same sequence (a sender's retry), with a fault of their own.
fn sequence() -> impl Strategy<Value = Sequence> {
    let accounts = prop::sample::subsequence(vec![2_i64, 3], 0..=2);
    let step = (delivery(), prop::option::weighted(0.35, any::<Index>()));
    (accounts, prop::collection::vec(step, 5..=40)).prop_map(|(accounts, steps)| {
        let mut deliveries: Vec<Delivery> = Vec::with_capacity(steps.len());
        for (fresh, resend) in steps {
            let d = match resend {
                Some(index) if !deliveries.is_empty() => Delivery {
                    fail_after_insert: fresh.fail_after_insert,
                    ..deliveries[index.index(deliveries.len())].clone()
                },
                _ => fresh,
            };
            deliveries.push(d);
        }
        Sequence {
            accounts,
            deliveries,
        }
    })
}

// ---- tests ------------------------------------------------------------------------------------

/// The oracle is the article's script, unmodified: its pinned SHA-256, the
/// seed file byte for byte when the seed folder is next to this repository,
/// and its own demo still printing the article's OK line.
#[test]
fn the_oracle_is_the_articles_script_unmodified() {
    let script = oracle_dir().join("webhook_demo.py");
    let bytes = std::fs::read(&script).expect("read tests/oracle/webhook_demo.py");
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/seed/webhook_demo.py");
    if let Ok(original) = std::fs::read(&seed) {
        assert!(
            bytes == original,
            "tests/oracle/webhook_demo.py differs from {}",
            seed.display()
        );
    }
    let hash = python3(&[])
        .args([
            "-c",
            "import hashlib,sys;print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())",
        ])
        .arg(&script)
        .output()
        .expect("run python3");
    assert_eq!(
        String::from_utf8_lossy(&hash.stdout).trim(),
        "758bfc462b41db5abd8ed17043ad656fe132329af20232eed008339ba69fe95d",
        "tests/oracle/webhook_demo.py must stay the article's script, unmodified"
    );
    let demo = python3(&[&script]).output().expect("run python3");
    assert!(
        demo.status.success(),
        "{}",
        String::from_utf8_lossy(&demo.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&demo.stdout),
        "OK: balance=1500, inbox=3, applied=1, duplicate=19\n"
    );
}

/// The harness itself, on a sequence with known answers (the article's
/// scenario without threads, its exercises, and each invalid value): both
/// sides must give exactly these outcomes and tables — so an agreement in
/// the random test cannot come from both sides being wrong the same way.
#[test]
fn both_sides_give_the_known_answers_for_the_articles_scenario() {
    let d = |source: &str, event_id: &str, account_id: i64, amount: i64, fail: bool| Delivery {
        source: source.into(),
        event_id: event_id.into(),
        account_id,
        amount,
        fail_after_insert: fail,
    };
    let sequence = Sequence {
        accounts: vec![2],
        deliveries: vec![
            d("provider-a", "evt-1", 1, 500, false),
            d("provider-a", "evt-1", 1, 500, false),
            d("provider-a", "evt-1", 1, 700, false),
            d("provider-a", "evt-2", 1, 500, true),
            d("provider-a", "evt-2", 1, 500, false),
            d("provider-b", "evt-1", 1, 500, false),
            d("provider-a", "evt-3", 9, 500, false),
            d("provider-a", "evt-3", 2, 40, true),
            d("provider-a", "evt-3", 2, 40, false),
            d("provider-a", "evt-4", 1, 0, false),
            d("provider-a", "evt-4", 1, -1, false),
            d("provider-a", "evt-4", 1, MAX_AMOUNT + 1, false),
            d("provider-a", "evt-4", 0, 5, false),
            d("", "evt-4", 1, 5, false),
            d("provider-a", "", 1, 5, false),
        ],
    };
    let expected_outcomes = [
        "applied",
        "duplicate",
        "payload_conflict",
        "simulated_crash",
        "applied",
        "applied",
        "unknown_account",
        "simulated_crash",
        "applied",
        "invalid_input",
        "invalid_input",
        "invalid_input",
        "invalid_input",
        "invalid_input",
        "invalid_input",
    ];
    let row = |source: &str, event_id: &str, account_id, amount| InboxRow {
        source: source.into(),
        event_id: event_id.into(),
        account_id,
        amount,
    };
    let expected = Observed {
        outcomes: expected_outcomes.iter().map(|s| s.to_string()).collect(),
        accounts: vec![
            Account {
                id: 1,
                balance: 1500,
            },
            Account { id: 2, balance: 40 },
        ],
        inbox: vec![
            row("provider-a", "evt-1", 1, 500),
            row("provider-a", "evt-2", 1, 500),
            row("provider-a", "evt-3", 2, 40),
            row("provider-b", "evt-1", 1, 500),
        ],
    };
    let dir = scratch_dir();
    let oracle = run_oracle(std::slice::from_ref(&sequence), dir.path());
    assert_eq!(oracle, std::slice::from_ref(&expected), "the script");
    let ours = run_all_ours(std::slice::from_ref(&sequence), dir.path());
    assert_eq!(ours, [expected], "the crate");
}

/// Hundreds of random delivery sequences give the same outcome for every
/// delivery and the same final tables through our `apply` as through the
/// article's `apply_credit`. On a difference the test prints the first
/// differing sequence, delivery by delivery, with both sides' answers.
#[test]
fn random_sequences_match_the_articles_script() {
    const BATCHES: u32 = 8;
    let batch = prop::collection::vec(sequence(), 40..=60);
    let seen: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());
    let sequences_run = Mutex::new(0_usize);

    let mut runner = TestRunner::new(Config {
        cases: BATCHES,
        // Each case is a whole batch in one python3 process; a failure prints
        // the differing sequence itself, so no regression file is written.
        failure_persistence: None,
        max_shrink_time: 30_000,
        ..Config::default()
    });
    let result = runner.run(&batch, |sequences| {
        let ours = compare(&sequences).map_err(TestCaseError::fail)?;
        *sequences_run.lock().expect("lock") += sequences.len();
        let mut seen = seen.lock().expect("lock");
        for outcome in ours.iter().flat_map(|o| &o.outcomes) {
            *seen.entry(outcome.clone()).or_default() += 1;
        }
        Ok(())
    });
    match result {
        Ok(()) => {}
        // Only our report: proptest's own message would add the whole batch.
        Err(TestError::Fail(report, _batch)) => {
            panic!("our apply and the article's script disagree:\n{report}")
        }
        Err(e) => panic!("{e}"),
    }

    // The sequences really exercised every behaviour both sides share.
    let total = sequences_run.into_inner().expect("lock");
    assert!(total >= 300, "only {total} sequences ran");
    let seen = seen.into_inner().expect("lock");
    for kind in [
        "applied",
        "duplicate",
        "payload_conflict",
        "invalid_input",
        "simulated_crash",
        "unknown_account",
    ] {
        let n = seen.get(kind).copied().unwrap_or(0);
        assert!(
            n >= 20,
            "only {n} {kind} outcomes in {total} sequences: {seen:?}"
        );
    }
    assert_eq!(
        seen.len(),
        6,
        "an outcome outside the shared kinds: {seen:?}"
    );
}
