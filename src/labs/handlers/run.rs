//! A handler program's delivery, on the same step machine as the built-in
//! handlers: [`Script::step`] runs exactly one SQL statement, records it in
//! the [`Trace`], then follows the control words up to the next statement
//! or the `ANSWER`.
//!
//! Invariants:
//! * nothing is added implicitly: no `BEGIN`, no `COMMIT`. What the text
//!   says is what runs.
//! * a statement that fails ends the delivery with its error, and its open
//!   transaction is rolled back (as every built-in does: the handler's
//!   error unwinds, the connection's transaction ends);
//! * an `ANSWER` given while the handler's own transaction is still open is
//!   a failure ("answered with the transaction open"): that transaction is
//!   rolled back, so nothing the answer promised is kept;
//! * a lock that cannot be had is [`Error::Busy`], and the statement stays
//!   next (the race lab waits); only [`Script::time_out`] turns it into the
//!   `ON BUSY` answer, if the text has one.

use std::sync::Arc;

use rusqlite::types::Value;
use rusqlite::Connection;

use super::message::{ParseError, ScriptCode};
use super::parse::{
    check_statement, AnswerKind, Atom, CmpOp, Cond, Instr, Kind, Operand, Param, Program, Statement,
};
use super::rust::{Last, Next, StepHandler};
use super::Answer;
use crate::core::apply::is_foreign_key;
use crate::core::error::Error;
use crate::core::event::Event;
use crate::core::fault::Fault;
use crate::core::trace::Trace;

/// Where the steps come from: a parsed text, or a handler in Rust.
#[derive(Debug, Clone)]
enum Source {
    /// A text; `pc` indexes its code.
    Text { program: Arc<Program>, pc: usize },
    /// A [`StepHandler`]; `ahead` is what it said comes next.
    Rust {
        handler: &'static dyn StepHandler,
        ahead: Ahead,
    },
}

/// What a Rust handler does next, its statement checked.
#[derive(Debug, Clone)]
enum Ahead {
    Sql(Arc<Statement>, u32),
    Answer(AnswerKind, u32),
    /// Its statement did not pass the checks: the reason.
    Refused(String),
}

/// Where an answer is given: its line, or a handler in Rust's step.
struct At(usize, Option<u32>);

/// What comes next, whatever the source.
enum Upcoming {
    Sql(Arc<Statement>),
    /// The answer, and where it is given.
    Answer(AnswerKind, At),
    /// The delivery cannot go on: why.
    Stuck(String),
}

/// One delivery of an event by a handler program (a text or Rust).
#[derive(Debug, Clone)]
pub struct Script {
    source: Source,
    event: Event,
    finished: bool,
    last: Last,
    trace: Trace,
    /// The teaching fault point to die at, if any ([`Script::with_fault`]).
    fault: Option<Fault>,
    /// An INSERT into the inbox has run: a SELECT of it now reads the
    /// stored row ([`Statement::op`]).
    registering: bool,
    /// "After insert" waits for the COMMIT that comes next.
    fault_at_commit: bool,
    /// What the last statement that returned a row returned (a refusal
    /// names the stored values, even after its ROLLBACK).
    read: Last,
}

impl Script {
    /// A delivery not yet started.
    pub fn new(program: Arc<Program>, event: Event) -> Script {
        Script::start(Source::Text { program, pc: 0 }, event)
    }

    fn start(source: Source, event: Event) -> Script {
        Script {
            source,
            event,
            finished: false,
            last: Last::default(),
            trace: Trace::default(),
            fault: None,
            registering: false,
            fault_at_commit: false,
            read: Last::default(),
        }
    }

    /// The same delivery, dying at `fault`: "after update" right after the
    /// credit; "after insert" right after the INSERT that registered the
    /// event — or, when the handler commits that registration on its own
    /// next, right after that COMMIT (two_transactions' lesson: between
    /// its two transactions).
    pub(crate) fn with_fault(mut self, fault: Option<Fault>) -> Script {
        self.fault = fault;
        self
    }

    /// A delivery by a handler written in Rust, not yet started.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if its first step is not a statement that
    /// passes the checks (a handler answers only after running one).
    pub(crate) fn rust(handler: &'static dyn StepHandler, event: Event) -> Result<Script, Error> {
        let name = handler.name();
        let why = match ahead(handler, 0, &Last::default(), &event) {
            ahead @ Ahead::Sql(..) => {
                return Ok(Script::start(Source::Rust { handler, ahead }, event))
            }
            Ahead::Answer(..) => format!("{name}: step 0 answers before any statement ran"),
            Ahead::Refused(why) => why,
        };
        Err(Error::invalid(super::HANDLER, why))
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    pub(crate) fn into_trace(self) -> Trace {
        self.trace
    }

    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    /// The SQL the next step runs; `None` when finished.
    pub(crate) fn next_statements(&self) -> Option<&'static [&'static str]> {
        if self.finished {
            return None;
        }
        match self.upcoming() {
            Upcoming::Sql(s) => Some(s.shown),
            _ => None,
        }
    }

    /// The line of the next statement (1-based; 0 for a handler in Rust),
    /// for messages.
    pub fn next_line(&self) -> Option<usize> {
        match self.upcoming() {
            Upcoming::Sql(s) => Some(s.line),
            _ => None,
        }
    }

    fn upcoming(&self) -> Upcoming {
        match &self.source {
            Source::Text { program, pc } => match program.code.get(*pc) {
                Some(Instr::Sql(i)) => match program.statements.get(*i) {
                    Some(s) => Upcoming::Sql(s.clone()),
                    None => Upcoming::Stuck("no such statement".into()),
                },
                Some(Instr::Answer(kind, line)) => Upcoming::Answer(*kind, At(*line, None)),
                _ => Upcoming::Stuck("the handler ended without ANSWER".into()),
            },
            Source::Rust { ahead, .. } => match ahead {
                Ahead::Sql(s, _) => Upcoming::Sql(s.clone()),
                Ahead::Answer(kind, step) => Upcoming::Answer(*kind, At(0, Some(*step))),
                Ahead::Refused(why) => Upcoming::Stuck(why.clone()),
            },
        }
    }

    /// The statements a text would run from here to its next `ANSWER`
    /// when no `IF` ahead is taken — the way on when nothing goes wrong
    /// (each condition ahead reads a statement that has not run). Empty for
    /// a handler in Rust: its next step depends on what each one returns.
    fn ahead(&self) -> Vec<(&'static str, &'static [&'static str])> {
        let Source::Text { program, pc } = &self.source else {
            return Vec::new();
        };
        let (mut pc, mut registering, mut ahead) = (*pc, self.registering, Vec::new());
        // Every jump goes forward, so this ends.
        while let Some(instr) = program.code.get(pc) {
            match instr {
                Instr::Sql(i) => {
                    if let Some(s) = program.statements.get(*i) {
                        ahead.push((s.op(registering), s.shown));
                        registering |= s.registers();
                    }
                    pc += 1;
                }
                Instr::Jump(target) | Instr::Unless(_, target) => pc = *target,
                Instr::Answer(..) => break,
            }
        }
        ahead
    }

    /// Moves past the statement that just ran, to the next statement or
    /// answer.
    fn advance(&mut self) {
        match &mut self.source {
            Source::Text { program, pc } => {
                *pc += 1;
                settle(program, pc, &self.last, &self.event);
            }
            Source::Rust { handler, ahead } => {
                if let Ahead::Sql(_, then) = *ahead {
                    *ahead = self::ahead(*handler, then, &self.last, &self.event);
                }
            }
        }
    }

    /// Whether the handler answers a refusal next (`conflict`,
    /// `unknown_account`), right away or after its own ROLLBACK.
    fn refuses_next(&self) -> bool {
        let refusal = |u: Upcoming| {
            matches!(
                u,
                Upcoming::Answer(AnswerKind::Conflict | AnswerKind::UnknownAccount, _)
            )
        };
        match self.upcoming() {
            Upcoming::Sql(s) if s.kind == Kind::Rollback => {
                let mut after = self.clone();
                after.last = Last::default();
                after.advance();
                refusal(after.upcoming())
            }
            next => refusal(next),
        }
    }

    /// Whether the fault point fires after `stmt`, which changed `rows`
    /// (see [`Script::with_fault`]); "after insert" before a COMMIT that
    /// comes next waits for it.
    fn fires(&mut self, fault: Fault, stmt: &Statement, rows: usize) -> bool {
        match fault {
            Fault::AfterUpdate => stmt.op(self.registering) == "credit" && rows > 0,
            Fault::AfterInsert if self.fault_at_commit => stmt.kind == Kind::Commit,
            Fault::AfterInsert if stmt.registers() && rows > 0 => {
                let commit_next =
                    matches!(self.upcoming(), Upcoming::Sql(s) if s.kind == Kind::Commit);
                self.fault_at_commit = commit_next;
                !commit_next
            }
            Fault::AfterInsert => false,
        }
    }

    fn on_busy(&self) -> Option<AnswerKind> {
        match &self.source {
            Source::Text { program, .. } => program.on_busy,
            Source::Rust { handler, .. } => handler.on_busy(),
        }
    }

    /// Runs the next statement; `Ok(Some)` once the handler answered.
    ///
    /// # Errors
    /// [`Error::Busy`]: nothing happened, the statement is still next.
    /// Anything else: the delivery failed and is finished (its transaction
    /// rolled back).
    pub(crate) fn step(&mut self, conn: &Connection) -> Result<Option<Answer>, Error> {
        if self.finished {
            return Err(Error::storage("this delivery has already finished"));
        }
        let stmt = match self.upcoming() {
            Upcoming::Sql(stmt) => stmt,
            Upcoming::Stuck(why) => return Err(self.end(conn, Error::storage(why))),
            Upcoming::Answer(..) => {
                return Err(Error::storage("this delivery has already finished"))
            }
        };
        let in_transaction = !conn.is_autocommit();
        let op = stmt.op(self.registering);
        if let Some(mistake) = misplaced(&stmt, in_transaction) {
            self.trace.failed(op, stmt.shown, 0);
            return Err(self.end(conn, mistake));
        }
        if stmt.kind == Kind::Rollback && in_transaction {
            // The trace's own ROLLBACK: it marks what it undoes.
            if let Err(e) = self.trace.abort(conn) {
                self.trace.failed(op, stmt.shown, 0);
                return Err(self.end(conn, e));
            }
            self.last = Last::default();
            self.advance();
        } else {
            let last = match self.run_sql(conn, &stmt) {
                Ok(last) => last,
                Err(Error::Busy) => return Err(Error::Busy),
                Err(e) => {
                    self.trace.failed(op, stmt.shown, 0);
                    return Err(self.end(conn, e));
                }
            };
            let rows = usize::try_from(last.changed).unwrap_or(0);
            if last.has_row() {
                self.read = last.clone();
            }
            self.last = last;
            self.advance();
            // What it read made the handler refuse: the step where it went
            // wrong, as in every built-in's trace.
            if self.refuses_next() {
                self.trace.failed(op, stmt.shown, rows);
            } else if stmt.kind == Kind::Commit && in_transaction {
                self.trace.committed(op, stmt.shown);
            } else if conn.is_autocommit() {
                self.trace.autocommitted(op, stmt.shown, rows);
            } else {
                self.trace.ran(op, stmt.shown, rows);
            }
            self.registering |= stmt.registers();
            if let Some(fault) = self.fault.filter(|&f| self.fires(f, &stmt, rows)) {
                self.trace.crashed();
                let ahead = self.ahead();
                self.trace.not_reached(ahead);
                return Err(self.end(conn, fault.crash()));
            }
        }
        match self.upcoming() {
            Upcoming::Answer(kind, at) => self.answer(conn, kind, at).map(Some),
            Upcoming::Sql(_) => Ok(None),
            Upcoming::Stuck(why) => Err(self.end(conn, Error::storage(why))),
        }
    }

    /// Ends the delivery after `err` (a lock it will not wait for any
    /// more): the statement that could not run is recorded as failed, the
    /// transaction rolled back. Returns `err`.
    pub(crate) fn give_up(&mut self, conn: &Connection, err: Error) -> Error {
        if self.finished {
            return err;
        }
        if let Upcoming::Sql(s) = self.upcoming() {
            self.trace.failed(s.op(self.registering), s.shown, 0);
        }
        self.end(conn, err)
    }

    /// The lock was not had within the timeout: the `ON BUSY` answer if the
    /// text gives one, else [`Error::Busy`] (503, retry later).
    ///
    /// # Errors
    /// [`Error::Busy`], or what the `ON BUSY` answer means.
    pub(crate) fn time_out(&mut self, conn: &Connection) -> Result<Answer, Error> {
        let err = self.give_up(conn, Error::Busy);
        match self.on_busy() {
            None => Err(err),
            Some(kind) => self.verdict(kind),
        }
    }

    /// Ends the delivery, rolling back an open transaction.
    ///
    /// # Errors
    /// Storage errors from `ROLLBACK`.
    pub(crate) fn abort(&mut self, conn: &Connection) -> Result<(), Error> {
        self.finished = true;
        self.trace.abort(conn)
    }

    fn end(&mut self, conn: &Connection, err: Error) -> Error {
        self.finished = true;
        self.trace.roll_back(conn, err)
    }

    fn answer(&mut self, conn: &Connection, kind: AnswerKind, at: At) -> Result<Answer, Error> {
        if !conn.is_autocommit() {
            let mut open = ParseError::new(ScriptCode::AnsweredOpen, at.0, 1);
            if let Some(step) = at.1 {
                open = open.with("step", step);
            }
            return Err(self.end(conn, open.into_error()));
        }
        self.finished = true;
        self.verdict(kind)
    }

    fn verdict(&self, kind: AnswerKind) -> Result<Answer, Error> {
        let e = &self.event;
        match kind {
            AnswerKind::Applied => Ok(Answer::Applied),
            AnswerKind::Duplicate => Ok(Answer::Duplicate),
            AnswerKind::Conflict => {
                let stored = (
                    self.read.int("account_id").unwrap_or(e.account_id()),
                    self.read.int("amount").unwrap_or(e.amount()),
                );
                Err(Error::payload_conflict(e, stored))
            }
            AnswerKind::UnknownAccount => Err(Error::UnknownAccount {
                account_id: e.account_id(),
            }),
        }
    }

    /// Runs one statement with its parameters bound; what it did.
    fn run_sql(&self, conn: &Connection, statement: &Statement) -> Result<Last, Error> {
        let (sql, params) = (statement.sql(), &statement.params);
        // BEGIN and COMMIT change no row (SQLite's count is the last write's).
        let writes = matches!(statement.kind, Kind::Insert | Kind::Update | Kind::Delete);
        let run = || -> Result<Last, rusqlite::Error> {
            let mut stmt = conn.prepare_cached(sql)?;
            for (i, p) in params.iter().enumerate() {
                stmt.raw_bind_parameter(i + 1, param(&self.event, *p))?;
            }
            let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
            let mut rows = stmt.raw_query();
            let row = match rows.next()? {
                Some(r) => Some(
                    names
                        .iter()
                        .enumerate()
                        .map(|(i, n)| Ok((n.clone(), r.get::<_, Value>(i)?)))
                        .collect::<Result<Vec<_>, rusqlite::Error>>()?,
                ),
                None => None,
            };
            // Run it to the end (an UPDATE ... RETURNING finishes only then).
            while rows.next()?.is_some() {}
            drop(rows);
            let changed = if writes {
                i64::try_from(conn.changes()).unwrap_or(i64::MAX)
            } else {
                0
            };
            Ok(Last { changed, row })
        };
        run().map_err(|err| {
            if is_foreign_key(&err) {
                return Error::UnknownAccount {
                    account_id: self.event.account_id(),
                };
            }
            match err.sqlite_error_code() {
                // A constraint is the handler's mistake, not a damaged
                // database: SQLite's own words.
                Some(rusqlite::ErrorCode::ConstraintViolation) => Error::storage(err.to_string()),
                _ => Error::from(err),
            }
        })
    }
}

/// A transaction word where it cannot run (COMMIT or ROLLBACK with none
/// open, BEGIN inside one): the handler's own mistake, on its line.
fn misplaced(stmt: &Statement, in_transaction: bool) -> Option<Error> {
    let code = match stmt.kind {
        Kind::Commit | Kind::Rollback if !in_transaction => ScriptCode::NoTransaction,
        Kind::Begin if in_transaction => ScriptCode::NestedBegin,
        _ => return None,
    };
    let word = stmt.kind.as_str().to_ascii_uppercase();
    Some(
        ParseError::new(code, stmt.line, 1)
            .with("word", word)
            .into_error(),
    )
}

/// What a Rust handler does at `step`, its statement checked.
fn ahead(handler: &dyn StepHandler, step: u32, last: &Last, event: &Event) -> Ahead {
    match handler.next(step, last, event) {
        Next::Answer(kind) => Ahead::Answer(kind, step),
        Next::Sql { sql, then } => match check_statement(sql) {
            Ok(stmt) => Ahead::Sql(stmt, then),
            Err(why) => Ahead::Refused(format!(
                "{}: the statement of step {step} is refused: {why}",
                handler.name()
            )),
        },
    }
}

/// Follows a text's jumps and conditions to the next statement or answer.
fn settle(program: &Program, pc: &mut usize, last: &Last, event: &Event) {
    // Every jump goes forward, so this ends.
    while let Some(instr) = program.code.get(*pc) {
        match instr {
            Instr::Jump(target) => *pc = *target,
            Instr::Unless(cond, target) => {
                if holds(cond, last, event) {
                    *pc += 1;
                } else {
                    *pc = *target;
                }
            }
            Instr::Sql(_) | Instr::Answer(..) => return,
        }
    }
}

fn param(e: &Event, p: Param) -> Value {
    match p {
        Param::Source => Value::Text(e.source().to_owned()),
        Param::EventId => Value::Text(e.event_id().to_owned()),
        Param::AccountId => Value::Integer(e.account_id()),
        Param::Amount => Value::Integer(e.amount()),
    }
}

fn holds(cond: &Cond, last: &Last, event: &Event) -> bool {
    let mut results = cond.atoms.iter().map(|a| atom(a, last, event));
    if cond.any {
        results.any(|b| b)
    } else {
        results.all(|b| b)
    }
}

fn atom(atom: &Atom, last: &Last, event: &Event) -> bool {
    match atom {
        Atom::Changed(op, n) => compare(*op, last.changed.cmp(n)),
        Atom::Row(wanted) => last.row.is_some() == *wanted,
        Atom::Column(name, op, operand) => {
            let Some(have) = last.value(name) else {
                return false;
            };
            let want = match operand {
                Operand::Param(p) => param(event, *p),
                Operand::Int(n) => Value::Integer(*n),
                Operand::Text(t) => Value::Text(t.clone()),
            };
            match (have, &want) {
                (Value::Integer(a), Value::Integer(b)) => compare(*op, a.cmp(b)),
                (Value::Text(a), Value::Text(b)) => compare(*op, a.cmp(b)),
                // NULL or another type: only "not equal" holds.
                _ => *op == CmpOp::Ne,
            }
        }
    }
}

fn compare(op: CmpOp, ord: std::cmp::Ordering) -> bool {
    match op {
        CmpOp::Eq => ord.is_eq(),
        CmpOp::Ne => ord.is_ne(),
        CmpOp::Lt => ord.is_lt(),
        CmpOp::Le => ord.is_le(),
        CmpOp::Gt => ord.is_gt(),
        CmpOp::Ge => ord.is_ge(),
    }
}
