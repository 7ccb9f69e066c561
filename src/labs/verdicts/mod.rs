//! Truthful verdicts: every delivery judged from what it really did.
//!
//! An answer says what a handler *claims* ("applied", "duplicate", a 500);
//! a verdict says what is *true*, from two things only:
//! * the delivery's [`Trace`] — which statements ran and which of them were
//!   kept (a credit kept, an inbox row kept);
//! * the tables before and after it — the event's inbox row (its payload
//!   and receipt) and the account's balance — and how many credits this
//!   event has had so far (the [`Referee`] counts the kept credits of every
//!   delivery it watched).
//!
//! [`Kind::Correct`] covers a first application, a true duplicate and a
//! correct refusal. The others name a mistake's lesson: paid twice, lost
//! for good, a "duplicate" that was not one, the stored first delivery
//! rewritten, a failure answered after part of the work was committed.
//!
//! A correct verdict on a mistake is correct *this time*: it names the
//! schedule that breaks the handler ([`Verdict::breaks_on`]), so it never
//! reads like the atomic handler's "correct by construction". A crash point
//! asked for that no step reached says why ([`Verdict::unreached`]).
//!
//! Invariant: the judgement ([`judge`]) is a pure function of the trace and
//! the tables; it never asks the handler what it meant, so a mistaken
//! handler is shown failing in its own words and the atomic handler's prose
//! is never reused for it.

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use crate::core::error::Error;
use crate::core::event::Event;
use crate::core::fault::Fault;
use crate::core::outcome::Receipt;
use crate::core::trace::{Effect, Trace};
use crate::labs::handlers::{Answer, Handler};

#[cfg(test)]
mod tests;

crate::core::named::named! {
    /// What the verdict says about a delivery.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Kind("verdict") {
        /// Applied once, a true duplicate, or a refusal that changed nothing.
        Correct => "correct",
        /// This delivery credited an event that had been credited before.
        CreditedTwice => "credited_twice",
        /// The sender is told to stop (a 200, or an error not worth retrying)
        /// while the event is registered and its credit was never committed.
        CreditLost => "credit_lost",
        /// "Duplicate" answered for a payload other than the stored one.
        FalseDuplicate => "false_duplicate",
        /// The stored first delivery (payload or receipt) was replaced.
        HistoryRewritten => "history_rewritten",
        /// A failure was answered (so the sender will retry), yet part of the
        /// work — the inbox row, the credit — was already committed.
        FailedAfterCommit => "failed_after_commit",
        /// The tables could not be read, so nothing can be said.
        Unknown => "unknown",
    }
}

/// A schedule that breaks a mistaken handler: what a verdict that found it
/// correct this time names ([`Verdict::breaks_on`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// The same event again (a lost response, retried).
    Repeat,
    /// The same key with another payload.
    OtherPayload,
    /// A crash right after the INSERT into inbox.
    CrashAfterInsert,
    /// A crash right after the UPDATE of the balance.
    CrashAfterUpdate,
}

impl Schedule {
    /// What breaks `handler`: each mistake's lesson (its doc comment in
    /// [`Handler`]); `None` for the atomic handler, which nothing breaks.
    fn breaking(handler: Handler) -> Option<Schedule> {
        match handler {
            Handler::Atomic => None,
            Handler::NoDedup | Handler::InsertOrReplace => Some(Schedule::Repeat),
            Handler::CheckThenAct => Some(Schedule::CrashAfterUpdate),
            Handler::TwoTransactions => Some(Schedule::CrashAfterInsert),
            Handler::InsertOrIgnore => Some(Schedule::OtherPayload),
        }
    }
}

/// A crash point asked for that did not fire: `{fault, why}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Unreached {
    pub fault: Fault,
    pub why: Missed,
}

/// Why a crash point did not fire, from the steps that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Missed {
    /// The handler has no such statement (no_dedup has no INSERT into inbox).
    Absent,
    /// It has one, but this delivery answered before running it.
    NotRun,
    /// It ran and changed no row (the INSERT found the key already there).
    NoRow,
}

/// The steps that register the event: the INSERTs into inbox.
const INSERTS: [&str; 3] = ["insert", "insert_or_ignore", "insert_or_replace"];

/// What the sender heard from one delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    Applied,
    Duplicate,
    /// An error answer: its kind, and whether it tells the sender to retry.
    Failed {
        kind: &'static str,
        retryable: bool,
    },
}

impl Heard {
    pub fn of<T>(result: &Result<T, Error>, answer: impl Fn(&T) -> Answer) -> Heard {
        match result {
            Ok(ok) => match answer(ok) {
                Answer::Applied => Heard::Applied,
                Answer::Duplicate => Heard::Duplicate,
            },
            Err(err) => Heard::Failed {
                kind: err.kind(),
                retryable: err.retryable(),
            },
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Heard::Applied => "applied",
            Heard::Duplicate => "duplicate",
            Heard::Failed { kind, .. } => kind,
        }
    }
}

pub use crate::labs::handlers::outcome_answer;

/// The event's inbox row: its payload and the stored first result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Stored {
    pub account_id: i64,
    pub amount: i64,
    pub receipt: Option<Receipt>,
}

/// The tables as one delivery's event sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seen {
    /// The event's inbox row, if registered.
    pub row: Option<Stored>,
    /// The delivered account's balance (`None`: no such account).
    pub balance: Option<i64>,
    /// Credits of this event the referee watched being kept (`None`: it
    /// watched none of its deliveries, e.g. after a reload).
    pub credits: Option<u32>,
}

/// Balance of the delivered account, before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Balance {
    pub account: i64,
    pub before: Option<i64>,
    pub after: Option<i64>,
}

/// What this delivery kept (committed or autocommitted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Kept {
    /// An INSERT of the event's inbox row.
    pub row: bool,
    /// A credit of the account.
    pub credit: bool,
}

/// The verdict on one delivery, with the facts it was drawn from. Wire form:
/// `{kind, handler, heard, credits_before, credits, credits_known, kept,
/// sent, stored_before, stored_after, balance, breaks_on, unreached}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub kind: Kind,
    pub handler: Handler,
    /// `applied`, `duplicate`, an error kind, or `refused` (no SQL ran).
    pub heard: &'static str,
    /// The event's credits before this delivery, and after it.
    pub credits_before: u32,
    pub credits: u32,
    /// Whether the count before is known: the referee watched this event's
    /// deliveries, or there is no row and it watched none (then it counts
    /// as never credited). False: inferred from the row (after a reload).
    pub credits_known: bool,
    pub kept: Kept,
    /// The payload delivered: `{account_id, amount}`.
    pub sent: Option<Sent>,
    pub stored_before: Option<Stored>,
    pub stored_after: Option<Stored>,
    pub balance: Option<Balance>,
    /// On a correct verdict for a mistake: the schedule that breaks it
    /// (`None`: correct by construction, or not correct).
    pub breaks_on: Option<Schedule>,
    /// The crash point asked for, if no step reached it.
    pub unreached: Option<Unreached>,
}

/// The delivered payload, as compared with the stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sent {
    pub account_id: i64,
    pub amount: i64,
}

impl Verdict {
    /// A delivery refused before any SQL ran (the input rules): correct,
    /// nothing changed.
    pub fn refused(handler: Handler) -> Verdict {
        Verdict {
            kind: Kind::Correct,
            handler,
            heard: "refused",
            credits_before: 0,
            credits: 0,
            credits_known: false,
            kept: Kept::default(),
            sent: None,
            stored_before: None,
            stored_after: None,
            balance: None,
            breaks_on: None,
            unreached: None,
        }
    }

    /// Notes that `fault` was asked for and no step crashed, and why: the
    /// handler has no such statement, did not run it, or it changed no row.
    #[must_use]
    fn asked(mut self, fault: Option<Fault>, trace: &Trace) -> Verdict {
        let steps = trace.steps();
        let Some(fault) = fault else { return self };
        if steps.is_empty() || steps.iter().any(|s| s.effect == Effect::Crashed) {
            return self;
        }
        let ops: &[&str] = match fault {
            Fault::AfterInsert => &INSERTS,
            Fault::AfterUpdate => &["credit"],
        };
        let why = if steps.iter().any(|s| ops.contains(&s.op)) {
            Missed::NoRow
        } else if self.handler.has_step(ops) {
            Missed::NotRun
        } else {
            Missed::Absent
        };
        self.unreached = Some(Unreached { fault, why });
        self
    }

    /// A delivery whose tables could not be read afterwards.
    fn unknown(handler: Handler, heard: Heard, trace: &Trace) -> Verdict {
        Verdict {
            kind: Kind::Unknown,
            heard: heard.as_str(),
            kept: kept(trace),
            ..Verdict::refused(handler)
        }
    }
}

/// How many steps named in `ops` this delivery kept with a row changed.
fn kept_steps(trace: &Trace, ops: &[&str]) -> u32 {
    let n = trace
        .steps()
        .iter()
        .filter(|s| ops.contains(&s.op) && s.effect == Effect::Kept && s.rows > 0)
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Rows this delivery kept, from its trace.
fn kept(trace: &Trace) -> Kept {
    Kept {
        row: kept_steps(trace, &INSERTS) > 0,
        credit: kept_steps(trace, &["credit"]) > 0,
    }
}

/// Judges one delivery of `event` by `handler` from what it ran and the
/// tables before and after it.
pub fn judge(
    handler: Handler,
    event: &Event,
    heard: Heard,
    trace: &Trace,
    before: &Seen,
    after: &Seen,
) -> Verdict {
    let sent = Sent {
        account_id: event.account_id(),
        amount: event.amount(),
    };
    let same = |row: &Stored| (row.account_id, row.amount) == (sent.account_id, sent.amount);
    // Unwatched history: a registered row is taken as credited once (the
    // atomic handler's invariant; a mistake's row may lie).
    let credits_before = before.credits.unwrap_or(u32::from(before.row.is_some()));
    let credited = kept_steps(trace, &["credit"]);
    let credits = credits_before.saturating_add(credited);
    let kept = kept(trace);
    let stops = match heard {
        Heard::Applied | Heard::Duplicate => true,
        Heard::Failed { retryable, .. } => !retryable,
    };
    let kind = match (before.row, after.row) {
        (Some(was), Some(now)) if was != now => Kind::HistoryRewritten,
        _ if credited > 0 && credits >= 2 => Kind::CreditedTwice,
        (Some(was), _) if heard == Heard::Duplicate && !same(&was) => Kind::FalseDuplicate,
        (_, Some(now)) if stops && credits == 0 && same(&now) => Kind::CreditLost,
        _ if matches!(heard, Heard::Failed { .. }) && (kept.row || kept.credit) => {
            Kind::FailedAfterCommit
        }
        _ => Kind::Correct,
    };
    Verdict {
        kind,
        handler,
        heard: heard.as_str(),
        credits_before,
        credits,
        credits_known: before.credits.is_some() || before.row.is_none(),
        kept,
        sent: Some(sent),
        stored_before: before.row,
        stored_after: after.row,
        balance: Some(Balance {
            account: sent.account_id,
            before: before.balance,
            after: after.balance,
        }),
        breaks_on: if kind == Kind::Correct {
            Schedule::breaking(handler)
        } else {
            None
        },
        unreached: None,
    }
}

/// Watches deliveries on one database and judges each: remembers how many
/// credits of each event it saw kept (in memory; forgotten with the
/// database — [`Referee::forget`]).
#[derive(Debug, Default)]
pub struct Referee {
    credits: HashMap<(String, String), u32>,
}

impl Referee {
    /// Forgets every event (after the database was reset or replaced).
    pub fn forget(&mut self) {
        self.credits.clear();
    }

    /// The tables as `event` sees them now.
    ///
    /// # Errors
    /// Storage errors.
    pub fn look(&self, conn: &Connection, event: &Event) -> Result<Seen, Error> {
        let row = conn
            .prepare_cached(
                "SELECT account_id, amount, receipt_seq, balance_after FROM inbox
                 WHERE source = ?1 AND event_id = ?2",
            )?
            .query_row(params![event.source(), event.event_id()], |r| {
                Ok(Stored {
                    account_id: r.get(0)?,
                    amount: r.get(1)?,
                    receipt: match (r.get(2)?, r.get(3)?) {
                        (Some(seq), Some(balance_after)) => Some(Receipt { seq, balance_after }),
                        _ => None,
                    },
                })
            })
            .optional()?;
        let balance = conn
            .prepare_cached("SELECT balance FROM accounts WHERE id = ?1")?
            .query_row(params![event.account_id()], |r| r.get(0))
            .optional()?;
        Ok(Seen {
            row,
            balance,
            credits: self.credits.get(&key(event)).copied(),
        })
    }

    /// Judges a delivery that started when the tables were `before` and has
    /// finished with `heard` and `trace`, and counts its credits.
    pub fn judge(
        &mut self,
        conn: &Connection,
        handler: Handler,
        event: &Event,
        heard: Heard,
        trace: &Trace,
        before: Option<Seen>,
    ) -> Verdict {
        let Some(before) = before else {
            return Verdict::unknown(handler, heard, trace);
        };
        let Ok(after) = self.look(conn, event) else {
            return Verdict::unknown(handler, heard, trace);
        };
        let verdict = judge(handler, event, heard, trace, &before, &after);
        self.credits.insert(key(event), verdict.credits);
        verdict
    }

    /// Runs one delivery (`run`, asked to crash at `fault`) and judges it:
    /// the one way the facade and the tests deliver with a verdict.
    /// `answer` reads what a success answered.
    pub fn watch<T>(
        &mut self,
        conn: &Connection,
        handler: Handler,
        fault: Option<Fault>,
        event: &Event,
        answer: impl Fn(&T) -> Answer,
        run: impl FnOnce() -> (Result<T, Error>, Trace),
    ) -> (Result<T, Error>, Trace, Verdict) {
        let before = self.look(conn, event).ok();
        let (result, trace) = run();
        let heard = Heard::of(&result, answer);
        let verdict = self
            .judge(conn, handler, event, heard, &trace, before)
            .asked(fault, &trace);
        (result, trace, verdict)
    }
}

fn key(event: &Event) -> (String, String) {
    (event.source().to_owned(), event.event_id().to_owned())
}
