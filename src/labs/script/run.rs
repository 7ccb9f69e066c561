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

use super::parse::{AnswerKind, Atom, CmpOp, Cond, Instr, Kind, Operand, Param, Program};
use crate::core::apply::is_foreign_key;
use crate::core::error::Error;
use crate::core::event::Event;
use crate::core::trace::Trace;
use crate::labs::race::handlers::Answer;

/// What the last statement did, for the conditions.
#[derive(Debug, Clone, Default)]
struct Last {
    changed: i64,
    row: Option<Vec<(String, Value)>>,
}

/// One delivery of an event by a handler program.
#[derive(Debug, Clone)]
pub struct Script {
    program: Arc<Program>,
    event: Event,
    pc: usize,
    finished: bool,
    last: Last,
    trace: Trace,
}

impl Script {
    /// A delivery not yet started.
    pub fn new(program: Arc<Program>, event: Event) -> Script {
        Script {
            program,
            event,
            pc: 0,
            finished: false,
            last: Last::default(),
            trace: Trace::default(),
        }
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    pub fn into_trace(self) -> Trace {
        self.trace
    }

    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The SQL the next step runs; `None` when finished.
    pub fn next_statements(&self) -> Option<&'static [&'static str]> {
        if self.finished {
            return None;
        }
        match self.program.code.get(self.pc) {
            Some(Instr::Sql(i)) => self.program.statements.get(*i).map(|s| s.shown),
            _ => None,
        }
    }

    /// The line of the next statement (1-based), for messages.
    pub fn next_line(&self) -> Option<usize> {
        match self.program.code.get(self.pc) {
            Some(Instr::Sql(i)) => self.program.statements.get(*i).map(|s| s.line),
            _ => None,
        }
    }

    /// Runs the next statement; `Ok(Some)` once the handler answered.
    ///
    /// # Errors
    /// [`Error::Busy`]: nothing happened, the statement is still next.
    /// Anything else: the delivery failed and is finished (its transaction
    /// rolled back).
    pub fn step(&mut self, conn: &Connection) -> Result<Option<Answer>, Error> {
        let Some(Instr::Sql(i)) = self.program.code.get(self.pc).cloned() else {
            return Err(Error::storage("this delivery has already finished"));
        };
        let program = self.program.clone();
        let Some(stmt) = program.statements.get(i) else {
            return Err(Error::storage("no such statement"));
        };
        let in_transaction = !conn.is_autocommit();
        if stmt.kind == Kind::Rollback && in_transaction {
            // The trace's own ROLLBACK: it marks what it undoes.
            if let Err(e) = self.trace.abort(conn) {
                self.trace.failed(stmt.kind.op(), stmt.shown, 0);
                return Err(self.end(conn, e));
            }
            self.last = Last::default();
        } else {
            match self.run_sql(conn, stmt.sql(), &stmt.params) {
                Ok(last) => {
                    let rows = usize::try_from(last.changed).unwrap_or(0);
                    if stmt.kind == Kind::Commit && in_transaction {
                        self.trace.committed(stmt.kind.op(), stmt.shown);
                    } else if conn.is_autocommit() {
                        self.trace.autocommitted(stmt.kind.op(), stmt.shown, rows);
                    } else {
                        self.trace.ran(stmt.kind.op(), stmt.shown, rows);
                    }
                    self.last = last;
                }
                Err(Error::Busy) => return Err(Error::Busy),
                Err(e) => {
                    self.trace.failed(stmt.kind.op(), stmt.shown, 0);
                    return Err(self.end(conn, e));
                }
            }
        }
        self.pc += 1;
        self.settle();
        match self.program.code.get(self.pc).cloned() {
            Some(Instr::Answer(kind, line)) => self.answer(conn, kind, line).map(Some),
            Some(Instr::Sql(_)) => Ok(None),
            _ => Err(self.end(conn, Error::storage("the handler ended without ANSWER"))),
        }
    }

    /// Ends the delivery after `err` (a lock it will not wait for any
    /// more): the statement that could not run is recorded as failed, the
    /// transaction rolled back. Returns `err`.
    pub fn give_up(&mut self, conn: &Connection, err: Error) -> Error {
        if self.finished {
            return err;
        }
        if let Some(Instr::Sql(i)) = self.program.code.get(self.pc) {
            if let Some(s) = self.program.statements.get(*i) {
                self.trace.failed(s.kind.op(), s.shown, 0);
            }
        }
        self.end(conn, err)
    }

    /// The lock was not had within the timeout: the `ON BUSY` answer if the
    /// text gives one, else [`Error::Busy`] (503, retry later).
    ///
    /// # Errors
    /// [`Error::Busy`], or what the `ON BUSY` answer means.
    pub fn time_out(&mut self, conn: &Connection) -> Result<Answer, Error> {
        let err = self.give_up(conn, Error::Busy);
        match self.program.on_busy {
            None => Err(err),
            Some(kind) => self.verdict(kind),
        }
    }

    /// Ends the delivery, rolling back an open transaction.
    ///
    /// # Errors
    /// Storage errors from `ROLLBACK`.
    pub fn abort(&mut self, conn: &Connection) -> Result<(), Error> {
        self.finished = true;
        self.trace.abort(conn)
    }

    fn end(&mut self, conn: &Connection, err: Error) -> Error {
        self.finished = true;
        self.trace.roll_back(conn, err)
    }

    /// Follows jumps and conditions to the next statement or answer.
    fn settle(&mut self) {
        // Every jump goes forward, so this ends.
        while let Some(instr) = self.program.code.get(self.pc) {
            match instr {
                Instr::Jump(target) => self.pc = *target,
                Instr::Unless(cond, target) => {
                    if self.holds(cond) {
                        self.pc += 1;
                    } else {
                        self.pc = *target;
                    }
                }
                Instr::Sql(_) | Instr::Answer(..) => return,
            }
        }
    }

    fn answer(
        &mut self,
        conn: &Connection,
        kind: AnswerKind,
        line: usize,
    ) -> Result<Answer, Error> {
        if !conn.is_autocommit() {
            let err = Error::storage(format!(
                "the handler answered on line {line} with its transaction still open; \
                 it was rolled back"
            ));
            return Err(self.end(conn, err));
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
                    self.column_int("account_id").unwrap_or(e.account_id()),
                    self.column_int("amount").unwrap_or(e.amount()),
                );
                Err(Error::payload_conflict(e, stored))
            }
            AnswerKind::UnknownAccount => Err(Error::UnknownAccount {
                account_id: e.account_id(),
            }),
        }
    }

    fn column(&self, name: &str) -> Option<&Value> {
        self.last
            .row
            .as_ref()?
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    fn column_int(&self, name: &str) -> Option<i64> {
        match self.column(name) {
            Some(Value::Integer(i)) => Some(*i),
            _ => None,
        }
    }

    fn param(&self, p: Param) -> Value {
        let e = &self.event;
        match p {
            Param::Source => Value::Text(e.source().to_owned()),
            Param::EventId => Value::Text(e.event_id().to_owned()),
            Param::AccountId => Value::Integer(e.account_id()),
            Param::Amount => Value::Integer(e.amount()),
        }
    }

    fn holds(&self, cond: &Cond) -> bool {
        let mut results = cond.atoms.iter().map(|a| self.atom(a));
        if cond.any {
            results.any(|b| b)
        } else {
            results.all(|b| b)
        }
    }

    fn atom(&self, atom: &Atom) -> bool {
        match atom {
            Atom::Changed(op, n) => compare(*op, self.last.changed.cmp(n)),
            Atom::Row(wanted) => self.last.row.is_some() == *wanted,
            Atom::Column(name, op, operand) => {
                let Some(have) = self.column(name) else {
                    return false;
                };
                let want = match operand {
                    Operand::Param(p) => self.param(*p),
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

    /// Runs one statement with its parameters bound; what it did.
    fn run_sql(&self, conn: &Connection, sql: &str, params: &[Param]) -> Result<Last, Error> {
        let run = || -> Result<Last, rusqlite::Error> {
            let mut stmt = conn.prepare_cached(sql)?;
            for (i, p) in params.iter().enumerate() {
                stmt.raw_bind_parameter(i + 1, self.param(*p))?;
            }
            let readonly = stmt.readonly();
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
            let changed = if readonly {
                0
            } else {
                i64::try_from(conn.changes()).unwrap_or(i64::MAX)
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

fn compare(op: CmpOp, ord: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CmpOp::Eq => ord == Equal,
        CmpOp::Ne => ord != Equal,
        CmpOp::Lt => ord == Less,
        CmpOp::Le => ord != Greater,
        CmpOp::Gt => ord == Greater,
        CmpOp::Ge => ord != Less,
    }
}
