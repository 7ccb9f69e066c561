//! A handler's one home: which handlers there are ([`Handler`]: the
//! article's and the mistakes it warns about), a delivery by any of them in
//! progress ([`Run`]), and the handler language — a handler written as text
//! ([`parse`], [`Script`]) or in Rust ([`rust::StepHandler`], the
//! workshop's, [`workshop`]).
//!
//! The article explains why "SELECT, then act" fails and why `INSERT OR
//! IGNORE` / `INSERT OR REPLACE` are wrong. Each mistake is a handler text
//! ([`builtin`], `builtin/*.inbox`: its one definition), run by the same
//! [`Script`] as a reader's text, so a reader can watch it fail — and watch
//! [`Handler::Atomic`] (the article's handler, the core's [`crate::apply()`];
//! `builtin/atomic.inbox` is its text) survive the same schedule.
//!
//! Every handler runs as a sequence of steps, each a single SQL statement but
//! the atomic handler's receipt (two) ([`Handler::run`] gives a [`Run`]), so
//! the race lab can interleave two handlers step by step on two real connections. A statement that cannot get its
//! lock returns [`Error::Busy`] and stays pending ("waiting for the write
//! lock"); calling [`Run::step`] again retries it.
//!
//! (A handler text has one statement a line; the language:
//! `docs/handler-language.md`.)
//!
//! Invariant: only [`Handler::Atomic`] may be used for real. The others
//! exist to be raced and to fail; each one's doc comment names its mistake.
//!
//! Invariant: validation runs before *every* handler. [`Handler::run`] turns
//! the sender's [`Payload`] into an [`Event`] (the rules of
//! [`crate::core::event`]) before any handler sees it, and the mistakes hold that
//! `Event`, so no handler can store a negative amount or a 300-byte key in
//! the live database. The mistakes are wrong about deduplication — they may
//! credit twice or lose a credit — and about nothing else: a lesson about
//! `INSERT OR IGNORE` must not be able to write a row that no rule allows.
//!
//! Invariant: a handler text runs only after it parsed and passed every
//! check, only on scratch connections, and under a budget.

use std::sync::{Arc, OnceLock};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::core::apply::{Delivery, Progress};
use crate::core::error::Error;
use crate::core::event::{Event, Field};
use crate::core::fault::Fault;
use crate::core::trace::Trace;

pub mod message;
mod parse;
mod run;
pub mod rust;
pub mod workshop;

pub use message::{Lang, ParseError, ScriptCode};
pub use parse::{parse, Literals, Program, MAX_LINE_BYTES, MAX_STATEMENTS, MAX_TEXT_BYTES};
pub use run::Script;
use rust::StepHandler;

/// The text of a built-in handler.
pub fn builtin(handler: Handler) -> &'static str {
    match handler {
        Handler::Atomic => include_str!("builtin/atomic.inbox"),
        Handler::NoDedup => include_str!("builtin/no_dedup.inbox"),
        Handler::CheckThenAct => include_str!("builtin/check_then_act.inbox"),
        Handler::TwoTransactions => include_str!("builtin/two_transactions.inbox"),
        Handler::InsertOrIgnore => include_str!("builtin/insert_or_ignore.inbox"),
        Handler::InsertOrReplace => include_str!("builtin/insert_or_replace.inbox"),
    }
}

/// The input naming the handler (the race lab, the handler selector).
pub const HANDLER: Field = Field::new("handler");

crate::core::named::named! {
    /// Which handler processes a delivery.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Handler("handler") {
        /// The article's handler: unique key + one transaction. Correct.
        Atomic => "atomic",
        /// Mistake: no deduplication at all — credits every delivery, so every
        /// retry of a lost response is paid again.
        NoDedup => "no_dedup",
        /// Mistake: "SELECT, then act" — looks in the inbox, credits, then
        /// records, each its own autocommit statement. Two handlers can both see
        /// "not there yet" and both credit.
        CheckThenAct => "check_then_act",
        /// Mistake: registers the event in one transaction and credits in a
        /// second. A crash between the two leaves the event "processed" without
        /// its credit, and a concurrent repeat answers "duplicate" before the
        /// money is there.
        TwoTransactions => "two_transactions",
        /// Mistake: `INSERT OR IGNORE` — takes "no row inserted" for "seen
        /// before" and never compares payloads: a redelivery of a known key with
        /// another amount or account is answered "duplicate" (200) instead of
        /// `payload_conflict` (422), so the sender's different payload is
        /// silently accepted as a repeat. (It would swallow a CHECK failure the
        /// same way; validation first keeps such rows from reaching it.)
        InsertOrIgnore => "insert_or_ignore",
        /// Mistake: `INSERT OR REPLACE` — deletes the first record and writes the
        /// new one: every repeat is applied again, and a replay with another
        /// payload rewrites history.
        InsertOrReplace => "insert_or_replace",
    }
}

impl Handler {
    /// A mistake's program: its text ([`builtin`]), parsed once per
    /// process — the one definition of what it runs.
    ///
    /// # Errors
    /// [`Error::Storage`] if the text does not parse (a build's own texts
    /// always do: the tests parse each).
    fn program(self) -> Result<Arc<Program>, Error> {
        static PARSED: OnceLock<Vec<Result<Arc<Program>, String>>> = OnceLock::new();
        let parsed = PARSED.get_or_init(|| {
            Handler::ALL
                .iter()
                .map(|h| parse(builtin(*h)).map_err(|e| format!("{h}: {e}")))
                .collect()
        });
        let at = Handler::ALL.iter().position(|h| *h == self).unwrap_or(0);
        parsed[at].clone().map_err(Error::storage)
    }

    /// Whether its text has a statement whose step is one of `ops`
    /// (`insert`, `credit`, ...): a crash point after a statement it lacks
    /// can never fire (no_dedup has no INSERT into inbox).
    pub fn has_step(self, ops: &[&str]) -> bool {
        self.program()
            .is_ok_and(|p| p.statements.iter().any(|s| ops.contains(&s.op(false))))
    }

    /// A delivery of `payload` by this handler, not yet started. The payload
    /// is validated into an [`Event`] first, whichever the handler: the
    /// mistakes get their lesson wrong, not the input rules.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the payload is not a valid [`Event`]; then
    /// no handler runs and nothing is written.
    ///
    /// # Example
    /// ```
    /// use inbox_lab::labs::handlers::{Handler, Payload};
    ///
    /// let negative = Payload {
    ///     source: "provider-a".into(),
    ///     event_id: "evt-1".into(),
    ///     account_id: 1,
    ///     amount: -500,
    /// };
    /// for handler in Handler::ALL {
    ///     let refused = handler.run(&negative, None).map(|_| ()).unwrap_err();
    ///     assert_eq!(refused.kind(), "invalid_input");
    /// }
    /// ```
    pub fn run(self, payload: &Payload, fault: Option<Fault>) -> Result<Run, Error> {
        let event = payload.to_event()?;
        Ok(match self {
            Handler::Atomic => Run::Atomic(Delivery::new(event, fault)),
            mistake => Run::Script(Script::new(mistake.program()?, event).with_fault(fault)),
        })
    }

    /// Runs one whole delivery. A busy statement gives up at once (SQLite
    /// already waited its timeout).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] before any SQL if the payload is not a valid
    /// [`Event`] (see [`Handler::run`]); otherwise whatever the handler
    /// answers; a busy statement is [`Error::Busy`].
    pub fn deliver(
        self,
        conn: &Connection,
        payload: &Payload,
        fault: Option<Fault>,
    ) -> Result<Answer, Error> {
        self.deliver_traced(conn, payload, fault).0
    }

    /// [`Handler::deliver`], and the [`Trace`] of what the handler ran (empty
    /// when the payload was refused before any SQL): what the page draws,
    /// so a mistake is shown failing in its own statements.
    pub fn deliver_traced(
        self,
        conn: &Connection,
        payload: &Payload,
        fault: Option<Fault>,
    ) -> (Result<Answer, Error>, Trace) {
        let mut run = match self.run(payload, fault) {
            Ok(run) => run,
            Err(refused) => return (Err(refused), Trace::default()),
        };
        let result = loop {
            match run.step(conn) {
                Ok(Some(answer)) => break Ok(answer),
                Ok(None) => {}
                Err(err) => break Err(run.give_up(conn, err)),
            }
        };
        (result, run.into_trace())
    }
}

/// An event's four fields as the sender sent them, not yet validated.
/// [`Handler::run`] validates it into an [`Event`] before any handler —
/// careless or not — runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Payload {
    pub source: String,
    pub event_id: String,
    pub account_id: i64,
    pub amount: i64,
}

impl Payload {
    /// Validates into an [`Event`].
    ///
    /// # Errors
    /// [`Error::InvalidInput`].
    pub fn to_event(&self) -> Result<Event, Error> {
        Event::new(
            self.source.clone(),
            self.event_id.clone(),
            self.account_id,
            self.amount,
        )
    }
}

impl From<&Event> for Payload {
    fn from(e: &Event) -> Self {
        Payload {
            source: e.source().to_owned(),
            event_id: e.event_id().to_owned(),
            account_id: e.account_id(),
            amount: e.amount(),
        }
    }
}

crate::core::named::named! {
    /// What a handler answered, as the sender hears it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Answer("answer") {
        Applied => "applied",
        Duplicate => "duplicate",
    }
}

/// The atomic handler's outcome as the sender hears it.
pub fn outcome_answer(outcome: &crate::Outcome) -> Answer {
    match outcome {
        crate::Outcome::Applied(_) => Answer::Applied,
        crate::Outcome::Duplicate(_) => Answer::Duplicate,
    }
}

/// One delivery in progress, by any handler.
#[derive(Debug, Clone)]
pub enum Run {
    Atomic(Delivery),
    /// A handler written in the handler language ([`crate::labs::handlers`]).
    Script(Script),
}

/// Who handles a race's or a judge's deliveries: a built-in handler, a
/// handler program (with the name it is shown by), or a handler written in
/// Rust (the workshop's, [`crate::labs::handlers::workshop`]).
#[derive(Debug, Clone)]
pub enum Contender {
    Builtin(Handler),
    Script { name: String, program: Arc<Program> },
    Rust(&'static dyn StepHandler),
}

impl Contender {
    pub fn name(&self) -> String {
        match self {
            Contender::Builtin(h) => h.as_str().to_owned(),
            Contender::Script { name, .. } => name.clone(),
            Contender::Rust(h) => h.name().to_owned(),
        }
    }

    /// A delivery of `payload`, not yet started (validated first, as
    /// [`Handler::run`] does).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the payload is not a valid [`Event`].
    pub fn run(&self, payload: &Payload) -> Result<Run, Error> {
        match self {
            Contender::Builtin(h) => h.run(payload, None),
            Contender::Script { program, .. } => Ok(Run::Script(Script::new(
                program.clone(),
                payload.to_event()?,
            ))),
            Contender::Rust(h) => Ok(Run::Script(Script::rust(*h, payload.to_event()?)?)),
        }
    }
}

impl From<Handler> for Contender {
    fn from(h: Handler) -> Self {
        Contender::Builtin(h)
    }
}

impl Run {
    /// The SQL the next [`Run::step`] runs; `None` when finished.
    pub fn next_statements(&self) -> Option<&'static [&'static str]> {
        match self {
            Run::Atomic(d) => d.next_step().map(|s| s.statements()),
            Run::Script(s) => s.next_statements(),
        }
    }

    /// Runs the next statement: `Ok(None)` — more to run; `Ok(Some)` — the
    /// answer.
    ///
    /// # Errors
    /// [`Error::Busy`]: nothing happened, try the same statement later.
    /// Anything else: the delivery failed (an open transaction was rolled
    /// back) and is finished.
    pub fn step(&mut self, conn: &Connection) -> Result<Option<Answer>, Error> {
        match self {
            Run::Atomic(d) => Ok(match d.step(conn)? {
                Progress::Next(_) => None,
                Progress::Done(outcome) => Some(outcome_answer(&outcome)),
            }),
            Run::Script(s) => s.step(conn),
        }
    }

    /// The statements run so far, each with its effect.
    pub fn trace(&self) -> &Trace {
        match self {
            Run::Atomic(d) => d.trace(),
            Run::Script(s) => s.trace(),
        }
    }

    fn into_trace(self) -> Trace {
        match self {
            Run::Atomic(d) => d.into_trace(),
            Run::Script(s) => s.into_trace(),
        }
    }

    /// Ends the delivery after `err` from [`Run::step`]. Only an
    /// [`Error::Busy`] leaves it unfinished: that statement is recorded as
    /// failed and the transaction rolled back. Returns `err`.
    fn give_up(&mut self, conn: &Connection, err: Error) -> Error {
        if self.finished() {
            return err;
        }
        match self {
            Run::Atomic(d) => d.give_up(conn, err),
            Run::Script(s) => s.give_up(conn, err),
        }
    }

    /// The next statement waited past the lock timeout: the delivery ends.
    /// A built-in answers [`Error::Busy`] (503, never "duplicate"); a
    /// handler program answers what its `ON BUSY` line says, if it has one.
    ///
    /// # Errors
    /// [`Error::Busy`], or the error its `ON BUSY` answer means.
    pub fn time_out(&mut self, conn: &Connection) -> Result<Answer, Error> {
        match self {
            Run::Script(s) => s.time_out(conn),
            other => Err(other.give_up(conn, Error::Busy)),
        }
    }

    /// Whether the delivery has answered or failed.
    pub fn finished(&self) -> bool {
        match self {
            Run::Atomic(d) => d.next_step().is_none(),
            Run::Script(s) => s.finished(),
        }
    }

    /// Ends the delivery, rolling back an open transaction.
    ///
    /// # Errors
    /// Storage errors from `ROLLBACK`.
    pub fn abort(&mut self, conn: &Connection) -> Result<(), Error> {
        match self {
            Run::Atomic(d) => d.abort(conn),
            Run::Script(s) => s.abort(conn),
        }
    }
}
