//! The judge: everything the lab knows, run against one handler on scratch
//! connections, counted.
//!
//! * **cases** — the article's: a replay, another payload, a missing
//!   account, amount 0, the same id from another source, a lock held past
//!   the timeout (never "duplicate");
//! * **faults** — the handler dies after its 1st, 2nd, … statement (what is
//!   uncommitted is lost), then the sender retries;
//! * **race** — every interleaving of 2 and 3 deliveries ([`explore`](crate::labs::race::explore));
//! * **crash** — every storage operation of its commits, DELETE and WAL:
//!   run by the caller (natively a child process per try, `crate::cli`)
//!   and passed in.
//!
//! The cases, the faults and the race run over every event of a
//! `Sample` drawn from a seed (the report's `seed`); each check goes
//! through the events in order and stops at the first event it finds
//! wrong (the handler is broken; the rest would only cost time).
//!
//! Invariant: every count comes from deliveries that really ran on real
//! SQLite; the first failure of each check is explained in the reader's
//! words, EN and RU, with the steps that ran ([`explain`]), and is
//! replayable (a race schedule with its event goes to
//! [`crate::labs::race::replay_event`] as it is; the seed gives the same
//! report again). A handler that parses always gets a verdict: an `Err`
//! here is the lab's own failure (the CLI's exit 3).

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::Serialize;

use crate::core::error::Error;
use crate::core::event::{MAX_ACCOUNT_ID, MAX_AMOUNT};
use crate::labs::crash::Summary as CrashSummary;
use crate::labs::handlers::{Answer, Contender, Payload};
use crate::labs::race::{explore_event, race_payload, replay_event, Arena};
use crate::labs::tools::budget::{Budget, Meter, Spent};
pub use explain::Explained;
use explain::{Log, Said};
use sample::Sample;

pub mod explain;
pub mod sample;
// Natively: they judge on scratch files.
#[cfg(all(test, not(target_family = "wasm")))]
mod tests;
#[cfg(all(test, not(target_family = "wasm")))]
mod workshop_tests;

/// The judge's whole budget: every statement of every delivery it runs.
pub const JUDGE_BUDGET: Budget = Budget::JUDGE;

crate::core::error::code_enum! {
    /// The judge's own refusal (field `handler`).
    JudgeCode {
        /// The page stopped the judge's worker at [`Budget::deadline`]: one
        /// statement ran longer than the whole budget, where the meter
        /// cannot reach it. Params: `seconds`, `check`.
        JudgeBudget => "judge_budget",
    }
}

/// The judge did not finish within its limit of `seconds` and was stopped
/// from outside while running `check` (`cases`, `faults`, `race_2`,
/// `race_3`).
pub fn over_deadline(seconds: u64, check: &str) -> Error {
    Error::refused(
        crate::labs::handlers::HANDLER,
        crate::core::error::Reason::new(
            JudgeCode::JudgeBudget,
            format!(
                "the judge was stopped at its limit of {seconds} s while running the {check} \
                 check: a statement of this handler runs far too long; nothing was judged"
            ),
        )
        .with("seconds", seconds)
        .with("check", check),
    )
}

/// A connection to the judge's scratch database file at `path` (created on
/// first use): no fsync and the rollback journal in memory — nothing there
/// must survive a crash, and SQLite's locks, which the race is about, are
/// the file's own all the same.
///
/// # Errors
/// Storage errors.
pub fn open_scratch(path: &str) -> Result<Connection, Error> {
    let conn = crate::core::db::open(
        path,
        crate::core::db::Mode::Create,
        crate::core::schema::DEFAULT_BUSY_TIMEOUT,
    )?;
    conn.execute_batch("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY")?;
    Ok(conn)
}

/// The race check's counts, over every deliveries setting judged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RaceCounts {
    pub deliveries: Vec<usize>,
    /// Events raced (each number of deliveries stops at the first event
    /// with a failing schedule).
    pub events: usize,
    pub interleavings: u64,
    pub double_credits: u64,
    pub lost_credits: u64,
    pub wrong_answers: u64,
    pub deadlocks: u64,
}

/// The fault check's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FaultCounts {
    pub points: u64,
    pub lost_credits: u64,
    pub double_credits: u64,
    pub wrong_answers: u64,
}

/// The crash sweep's counts, both journal modes together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CrashCounts {
    pub crash_points: usize,
    pub atomic: usize,
    pub partial: usize,
    pub lost_acknowledged: usize,
}

impl CrashCounts {
    pub fn add(&mut self, s: &CrashSummary) {
        self.crash_points += s.crash_points;
        self.atomic += s.atomic;
        self.partial += s.partial;
        self.lost_acknowledged += s.lost_acknowledged;
    }
}

/// The first thing that went wrong, replayable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum Failure {
    /// A race schedule of `event`: the delivery index of each statement.
    Race {
        deliveries: usize,
        schedule: Vec<usize>,
        event: Payload,
    },
    /// Delivering `event`, the handler died after this many statements;
    /// the retry then did `what`.
    Faults {
        after_statements: u64,
        what: String,
        event: Payload,
    },
    /// A crash after storage operation `k`.
    Crash { mode: String, k: usize },
    /// One of the article's cases, with `event`.
    Case {
        case: String,
        what: String,
        event: Payload,
    },
}

/// The judge's report: the CLI's one JSON line.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub handler: String,
    pub verdict: &'static str,
    /// The seed of the events delivered: `--seed` repeats this report.
    pub seed: u64,
    /// How many events the checks delivered (`Sample`).
    pub events: usize,
    pub race: RaceCounts,
    pub faults: FaultCounts,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash: Option<CrashCounts>,
    pub cases: BTreeMap<&'static str, String>,
    pub first_failure: Option<Failure>,
    /// The first failure of each check that failed (race, faults, crash,
    /// cases, in this order; the first is `first_failure`), explained.
    pub failures: Vec<Explained>,
    /// Why the judge stopped early (its budget ran out), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// What a case expects, and the name it is reported by.
const CASES: [&str; 6] = [
    "replay",
    "other_payload",
    "missing_account",
    "amount_0",
    "provider_b",
    "lock_timeout",
];

/// Judges `contender` over the events of `seed` (`Sample::of`): the
/// cases, the faults, the race with each number of `deliveries`, then the
/// caller's crash sweep `crash` (its counts and its first failing crash
/// point, [`explain::crash`]; `None` where it cannot run). `open` must return a new connection
/// to one shared scratch database each call.
///
/// # Errors
/// Storage errors of the scratch database itself.
pub fn judge(
    contender: &Contender,
    deliveries: &[usize],
    open: impl Fn() -> Result<Connection, Error>,
    budget: Budget,
    seed: u64,
    crash: impl FnOnce() -> Result<Option<(CrashCounts, Option<Explained>)>, Error>,
) -> Result<Report, Error> {
    judge_reporting(
        contender,
        deliveries,
        open,
        budget,
        seed,
        crash,
        &mut |_| {},
    )
}

/// Where the judge is: `done` of `total` checks finished, and the one it
/// starts now (`cases`, `faults`, `race_2`, `race_3`; `done` once they all
/// ran — the crash sweep, which its caller runs, is not counted), for a
/// progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    pub check: &'static str,
}

/// [`judge`], telling `progress` as each check starts.
///
/// # Errors
/// As [`judge`].
pub fn judge_reporting(
    contender: &Contender,
    deliveries: &[usize],
    open: impl Fn() -> Result<Connection, Error>,
    budget: Budget,
    seed: u64,
    crash: impl FnOnce() -> Result<Option<(CrashCounts, Option<Explained>)>, Error>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, Error> {
    let sample = Sample::of(seed, contender);
    let total = 2 + deliveries.len();
    let mut done = 0;
    let mut tell = |check: &'static str, done: usize| progress(Progress { done, total, check });
    let meter = Meter::new(budget);
    let metered = || -> Result<Connection, Error> {
        let mut c = open()?;
        meter.install(&mut c)?;
        Ok(c)
    };
    let mut report = Report {
        handler: contender.name(),
        verdict: "broken",
        seed,
        events: sample.events.len(),
        race: RaceCounts {
            deliveries: deliveries.to_vec(),
            ..RaceCounts::default()
        },
        ..Report::default()
    };
    let single = Arena::new(1, metered)?;
    tell("cases", done);
    let mut case_failure = None;
    for case in CASES {
        let mut what = "ok".to_owned();
        for (i, event) in sample.events.iter().enumerate() {
            let mut log = Log::default();
            let wrong = run_case(&single, contender, case, &sample, i, &mut log)?;
            if let Some(stop) = stopped(&meter, wrong.as_ref().map_or("", |w| w.en.as_str())) {
                report.stopped = Some(stop);
                return Ok(report);
            }
            if let Some(wrong) = wrong {
                let failed = explain::case(case, event, &wrong, log);
                if let Failure::Case { what: said, .. } = &failed.failure {
                    what.clone_from(said);
                }
                case_failure = case_failure.or(Some(failed));
                break;
            }
        }
        report.cases.insert(case, what);
    }
    done += 1;
    tell("faults", done);
    let mut fault_failure = None;
    for event in &sample.events {
        fault_failure = faults(&single, contender, event, &mut report.faults)?;
        if fault_failure.is_some() || meter.exceeded().is_some() {
            break;
        }
    }
    done += 1;
    if let Some(stop) = stopped(&meter, "") {
        report.stopped = Some(stop);
        return Ok(report);
    }
    drop(single);
    let mut race_failure = None;
    for &k in deliveries {
        tell(if k == 3 { "race_3" } else { "race_2" }, done);
        let arena = Arena::new(k, metered)?;
        for event in &sample.events {
            let explored = explore_event(&arena, contender.clone(), event);
            // Once the budget interrupts a statement, a replayed schedule
            // no longer runs as it first did (the explorer may then fail):
            // the budget is what is reported.
            if let Some(stop) = stopped(&meter, "") {
                report.stopped = Some(stop);
                return Ok(report);
            }
            let s = explored?;
            let r = &mut report.race;
            r.events += 1;
            r.interleavings += s.interleavings;
            r.double_credits += s.double_credits;
            r.lost_credits += s.lost_credits;
            r.wrong_answers += s.wrong_answers;
            r.deadlocks += s.deadlocks;
            if let Some(schedule) = s.failing_schedule {
                if race_failure.is_none() {
                    race_failure = Some(explain::race(&arena, contender, event, schedule)?);
                }
                break;
            }
        }
        done += 1;
    }
    tell("done", done);
    let mut crash_failure = None;
    // Last, and only for a handler that stayed within the budget: the
    // sweep's tries run it where no budget reaches.
    if let Some((counts, failure)) = crash()? {
        report.crash = Some(counts);
        crash_failure = failure;
    }
    report.failures = [race_failure, fault_failure, crash_failure, case_failure]
        .into_iter()
        .flatten()
        .collect();
    report.first_failure = report.failures.first().map(|f| f.failure.clone());
    if report.first_failure.is_none() {
        report.verdict = "correct";
    }
    Ok(report)
}

/// The budget's message once it ran out (`what` may already say where).
fn stopped(meter: &Meter, what: &str) -> Option<String> {
    let spent = meter.exceeded()?;
    let how = match spent.spent {
        Spent::Steps => format!("{} SQLite steps", spent.steps),
        Spent::Time => format!("{:.1} s", spent.elapsed.as_secs_f64()),
    };
    Some(if what.is_empty() || what == "ok" {
        format!("stopped by the judge's budget after {how}: a statement runs far too long")
    } else {
        format!("stopped by the judge's budget after {how}: {what}")
    })
}

/// The event of `seed`'s sample that the race `schedule` fails with: the
/// first one on which it replays to a wrong end (the judge races the events
/// in order and reports the first that fails, so this is that one), or
/// the article's event when none does.
///
/// # Errors
/// Storage errors.
pub fn raced_event(
    arena: &Arena,
    contender: &Contender,
    seed: u64,
    schedule: &[usize],
) -> Result<Payload, Error> {
    for event in Sample::of(seed, contender).events {
        let Ok(race) = replay_event(arena, contender.clone(), &event, schedule) else {
            continue; // the schedule does not fit this event's run
        };
        let wrong = !race.finished()
            || race
                .verdict(arena)
                .is_ok_and(|v| v.double_credit || v.lost_credit || v.wrong_answer);
        if wrong {
            return Ok(event);
        }
    }
    Ok(race_payload())
}

/// One whole delivery on `conn`; a lock it cannot have ends it as the
/// handler answers a lock timeout.
pub fn deliver(
    conn: &Connection,
    contender: &Contender,
    payload: &Payload,
) -> Result<Answer, Error> {
    explain::deliver(conn, contender, payload, 0, &mut Log::default())
}

/// The committed balance of `account`, the number of inbox rows and the
/// balance of every other account together.
fn settled(arena: &Arena, account: i64) -> Result<(i64, i64, i64), Error> {
    arena
        .observer()
        .query_row(
            "SELECT (SELECT coalesce(sum(balance), 0) FROM accounts WHERE id = ?1),
                    (SELECT count(*) FROM inbox),
                    (SELECT coalesce(sum(balance), 0) FROM accounts WHERE id != ?1)",
            [account],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|e| match Error::from(e) {
            Error::Busy => Error::storage("a lock is still held after the case"),
            other => other,
        })
}

/// Runs one of the article's cases with event `i` of `sample` on a fresh
/// database (the event's account at balance 0), its deliveries' steps into
/// `log`: `None`, or what went wrong.
fn run_case(
    arena: &Arena,
    contender: &Contender,
    case: &str,
    sample: &Sample,
    i: usize,
    log: &mut Log,
) -> Result<Option<Said>, Error> {
    use explain::{balance, expect, said as words};
    let p = &sample.events[i];
    let next = sample.next(i);
    arena.reset_for(p.account_id)?;
    let conn = arena
        .conn(0)
        .ok_or_else(|| Error::storage("no delivery connection"))?;
    let amount = p.amount;
    let account = p.account_id;
    let mut who = 0;
    let mut deliver = |payload: &Payload| {
        who += 1;
        explain::deliver(conn, contender, payload, who - 1, log)
    };
    let nothing_left = |arena: &Arena| -> Result<Option<Said>, Error> {
        let (balance, rows, _) = settled(arena, account)?;
        Ok((balance != 0 || rows != 0).then(|| {
            words(
                format!("left balance {balance} and {rows} inbox rows behind"),
                format!("оставила баланс {balance} и строк в inbox: {rows}"),
            )
        }))
    };
    let wrong = match case {
        "replay" => {
            let first = deliver(p);
            let second = deliver(p);
            let (b, _, _) = settled(arena, account)?;
            expect(
                words("the first delivery", "первая доставка"),
                &first,
                "applied",
            )
            .or_else(|| expect(words("the replay", "повтор"), &second, "duplicate"))
            .or_else(|| balance(b, amount, words("after a replay", "после повтора")))
        }
        "other_payload" => {
            let _ = deliver(p);
            let other = Payload {
                amount: if amount + 200 <= MAX_AMOUNT {
                    amount + 200
                } else {
                    amount - 200
                },
                ..p.clone()
            };
            let second = deliver(&other);
            let (b, _, _) = settled(arena, account)?;
            let a = other.amount;
            expect(
                words(
                    format!("the same key with amount {a}"),
                    format!("тот же ключ с суммой {a}"),
                ),
                &second,
                "payload_conflict",
            )
            .or_else(|| {
                let after = words("after another payload", "после другого содержимого");
                balance(b, amount, after)
            })
        }
        "missing_account" => {
            let missing = if next.account_id != account {
                next.account_id
            } else if account < MAX_ACCOUNT_ID {
                account + 1
            } else {
                account - 1
            };
            let elsewhere = Payload {
                account_id: missing,
                ..p.clone()
            };
            let got = deliver(&elsewhere);
            let what = words(format!("account {missing}"), format!("счёт {missing}"));
            expect(what, &got, "unknown_account")
                .map_or_else(|| nothing_left(arena), |w| Ok(Some(w)))?
        }
        "amount_0" => {
            let p0 = Payload {
                amount: 0,
                ..p.clone()
            };
            let got = deliver(&p0);
            expect(words("amount 0", "сумма 0"), &got, "invalid_input")
                .map_or_else(|| nothing_left(arena), |w| Ok(Some(w)))?
        }
        "provider_b" => {
            let _ = deliver(p);
            let source = [next.source.as_str(), "provider-b", "provider-a"]
                .into_iter()
                .find(|s| *s != p.source)
                .unwrap_or("provider-b");
            let b = Payload {
                source: source.to_owned(),
                ..p.clone()
            };
            let got = deliver(&b);
            let (after, _, _) = settled(arena, account)?;
            let what = words(
                format!("the same event id from {source:?}"),
                format!("тот же id события из {source:?}"),
            );
            expect(what, &got, "applied").or_else(|| {
                let two = words("with two events", "при двух событиях");
                balance(after, 2 * amount, two)
            })
        }
        _ => {
            // lock_timeout: another connection holds the write lock.
            arena.observer().execute_batch("BEGIN IMMEDIATE")?;
            let got = deliver(p);
            arena.observer().execute_batch("ROLLBACK")?;
            let (held, _, _) = settled(arena, account)?;
            let retry = deliver(p);
            let (after, _, _) = settled(arena, account)?;
            let waited = words(
                "a delivery that waited past the lock timeout",
                "доставка, ждавшая дольше таймаута блокировки",
            );
            expect(waited, &got, "busy")
                .or_else(|| {
                    balance(
                        held,
                        0,
                        words("while the lock was held", "пока держалась блокировка"),
                    )
                })
                .or_else(|| {
                    let freed = words(
                        "the retry after the lock was freed",
                        "повтор после снятия блокировки",
                    );
                    expect(freed, &retry, "applied")
                })
                .or_else(|| balance(after, amount, words("after the retry", "после повтора")))
        }
    };
    // Whatever the case, no other account may have moved.
    let (_, _, others) = settled(arena, account)?;
    Ok(wrong.or_else(|| {
        (others != 0).then(|| {
            words(
                format!("credited {others} to another account"),
                format!("зачислила {others} на другой счёт"),
            )
        })
    }))
}

/// The fault check: for n = 1, 2, …, the delivery dies after n statements
/// (its open transaction rolled back, as when a process dies), then the
/// sender retries. Counts into `counts`; returns the first failure.
fn faults(
    arena: &Arena,
    contender: &Contender,
    p: &Payload,
    counts: &mut FaultCounts,
) -> Result<Option<Explained>, Error> {
    let conn = arena
        .conn(0)
        .ok_or_else(|| Error::storage("no delivery connection"))?;
    let mut first = None;
    for n in 1u64.. {
        arena.reset_for(p.account_id)?;
        let mut log = Log::default();
        let mut run = contender.run(p)?;
        let mut ran = 0;
        while ran < n && !run.finished() {
            let (at, statements) = (explain::line(&run), run.next_statements().unwrap_or(&[]));
            let result = match run.step(conn) {
                Err(Error::Busy) => run.time_out(conn).map(Some),
                other => {
                    ran += 1;
                    other
                }
            };
            let said = match &result {
                Ok(None) => explain::said("ran", "выполнен"),
                Ok(Some(a)) => explain::answered(&Ok(*a)),
                Err(e) => explain::answered(&Err(e.clone())),
            };
            log.step(0, at, statements, &said, None);
        }
        if ran < n {
            break; // the delivery ended before n statements: every point done
        }
        let answered = run.finished();
        // The process dies here: whatever is not committed is lost (and a
        // finished delivery's answer never reaches the sender).
        run.abort(conn)?;
        log.note(explain::dies(n));
        let retry = explain::deliver(conn, contender, p, 1, &mut log);
        let (balance, _, others) = settled(arena, p.account_id)?;
        counts.points += 1;
        let double = balance > p.amount || others != 0;
        let lost = balance < p.amount;
        let wrong = !matches!(retry, Ok(Answer::Applied | Answer::Duplicate));
        counts.double_credits += u64::from(double);
        counts.lost_credits += u64::from(lost);
        counts.wrong_answers += u64::from(wrong);
        if (double || lost || wrong) && first.is_none() {
            first = Some(explain::fault(n, p, &retry, balance, log));
        }
        if answered {
            break; // the last point: after the answer, which was lost
        }
    }
    Ok(first)
}
