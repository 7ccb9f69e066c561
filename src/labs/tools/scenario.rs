//! The article's scenario as a list of checks, shared by `inbox-lab demo`,
//! the browser tests and the page's "run the article's scenario" button.
//!
//! The script (`webhook_demo.py`) asserts, in order: a first delivery
//! applies; a repeat is a duplicate; a repeat with another amount is refused;
//! a failure after the INSERT rolls back and the retry applies; 20
//! concurrent deliveries of one event give 1 applied and 19 duplicates; the
//! balance is 1500 and the inbox holds 3 rows. When every check holds, the
//! summary line is exactly the script's:
//! `OK: balance=1500, inbox=3, applied=1, duplicate=19`.
//!
//! How the 20 deliveries run concurrently is the caller's business: real
//! threads with a connection each natively, queued messages in the browser.

use rusqlite::Connection;

use crate::core::tables;
use crate::{apply, Error, Event, Fault, Outcome};

/// The 20 deliveries of `evt-3`.
pub const BURST: usize = 20;

/// One check of the scenario: what was expected, what happened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    pub name: &'static str,
    pub expected: String,
    pub got: String,
}

impl Check {
    fn passed(&self) -> bool {
        self.expected == self.got
    }
}

/// Everything the scenario saw.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    pub balance: Option<i64>,
    pub inbox: usize,
    pub applied: usize,
    pub duplicate: usize,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.checks.iter().all(Check::passed)
    }

    /// `OK: balance=1500, inbox=3, applied=1, duplicate=19`, or `FAILED:`
    /// followed by every check that differed.
    pub fn summary(&self) -> String {
        if self.passed() {
            let balance = self.balance.unwrap_or_default();
            return format!(
                "OK: balance={balance}, inbox={}, applied={}, duplicate={}",
                self.inbox, self.applied, self.duplicate
            );
        }
        let failed: Vec<String> = self
            .checks
            .iter()
            .filter(|c| !c.passed())
            .map(|c| format!("{}: expected {}, got {}", c.name, c.expected, c.got))
            .collect();
        format!("FAILED: {}", failed.join("; "))
    }
}

/// Runs the scenario on `conn`, whose database must be freshly initialised
/// (account 1 at balance 0, empty inbox). `burst` delivers the given event
/// [`BURST`] times, concurrently if it can, and returns every answer.
///
/// # Errors
/// Only if the final tables cannot be read; every other failure is a check
/// that did not pass.
pub fn run(
    conn: &Connection,
    burst: impl FnOnce(&Event) -> Vec<Result<Outcome, Error>>,
) -> Result<Report, Error> {
    let mut checks = Vec::new();
    let mut check = |name: &'static str, expected: &str, got: String| {
        checks.push(Check {
            name,
            expected: expected.to_owned(),
            got,
        });
    };
    let event = |id: &str, amount: i64| Event::new("provider-a", id, 1, amount);

    let (evt1, evt2) = (event("evt-1", 500)?, event("evt-2", 500)?);
    let (evt1_700, crash) = (event("evt-1", 700)?, Some(Fault::AfterInsert));
    let deliveries = [
        ("evt-1 first delivery", "applied", &evt1, None),
        ("evt-1 repeat", "duplicate", &evt1, None),
        ("evt-1 with amount 700", "payload_conflict", &evt1_700, None),
        (
            "evt-2 failing after INSERT",
            "simulated_crash",
            &evt2,
            crash,
        ),
        ("evt-2 retry", "applied", &evt2, None),
    ];
    for (name, expected, e, fault) in deliveries {
        check(name, expected, answer(&apply(conn, e, fault)));
    }

    let results = burst(&event("evt-3", 500)?);
    let count = |kind: &str| results.iter().filter(|r| answer(r) == kind).count();
    let (applied, duplicate) = (count("applied"), count("duplicate"));
    check("evt-3 burst applied", "1", applied.to_string());
    check("evt-3 burst duplicate", "19", duplicate.to_string());
    let others: Vec<String> = results
        .iter()
        .map(answer)
        .filter(|a| a != "applied" && a != "duplicate")
        .collect();
    // Plain values a reader can compare (no Rust debug output): how many,
    // then which.
    let others = match others.as_slice() {
        [] => "0".to_owned(),
        kinds => format!("{}: {}", kinds.len(), kinds.join(", ")),
    };
    check("evt-3 burst other answers", "0", others);

    let t = tables::snapshot(conn)?;
    let balance = t.balance(1);
    let shown = balance.map_or_else(|| "—".to_owned(), |b| b.to_string()); // — : no account 1
    check("balance of account 1", "1500", shown);
    check("inbox rows", "3", t.inbox.len().to_string());

    Ok(Report {
        checks,
        balance,
        inbox: t.inbox.len(),
        applied,
        duplicate,
    })
}

/// `applied`, `duplicate`, or the error's kind.
fn answer(r: &Result<Outcome, Error>) -> String {
    match r {
        Ok(o) => o.kind().to_owned(),
        Err(e) => e.kind().to_owned(),
    }
}
