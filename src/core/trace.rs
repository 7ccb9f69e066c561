//! What a delivery did: the statements it ran, in order, and what became of
//! each — kept, rolled back, the one that failed, where it crashed.
//!
//! The page draws this list (the timeline, step mode, the race lab); it
//! never works out from an answer which statements "must have" run. A
//! handler records each statement as it runs it, so a wrong handler's
//! trace shows its own mistake: the credit kept although the delivery
//! crashed, the INSERT that changed no row and was still answered
//! "duplicate".
//!
//! Invariant: a step's [`Effect`] is only ever what SQLite did. A statement
//! inside a transaction is [`Effect::Open`] until that transaction ends:
//! `COMMIT` makes every open step [`Effect::Kept`], `ROLLBACK` makes it
//! [`Effect::RolledBack`]. A statement in autocommit mode is kept the
//! moment it runs. A step's `tx` is the transaction it ran in, numbered
//! from 1 in the order they began (the first step recorded while none is
//! open begins one; `COMMIT` and `ROLLBACK` end it); `None`: outside any
//! transaction (autocommitted, or a crash after one ended).
//!
//! After a crash the trace also holds what the handler would have run next
//! ([`Trace::not_reached`]): statements that never ran, so none has an
//! effect — the page draws them greyed (two_transactions' second
//! transaction, which the crash left out).

use rusqlite::Connection;
use serde::Serialize;

use crate::core::error::Error;

/// What became of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Ran inside a transaction that has not ended yet (step mode, a race).
    Open,
    /// Ran and is durable: committed, or autocommitted on its own. A
    /// `ROLLBACK` that ran is kept too: it did what it says.
    Kept,
    /// Ran, then its transaction rolled back: nothing of it is left.
    RolledBack,
    /// Went wrong here: an error, or the handler refused the result.
    Failed,
    /// The handler crashed here on purpose (a fault point, step mode's
    /// "throw").
    Crashed,
}

/// The SQL a step runs, as shown to readers.
pub type Statements = &'static [&'static str];

/// One step that ran.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Ran {
    /// The step's stable name: `begin`, `insert`, `credit`, ... (`crash`
    /// for a fault point firing, `rollback` for the ROLLBACK after a failure).
    pub op: &'static str,
    /// The SQL the step ran, as shown to readers (none for `crash`).
    pub statements: Statements,
    /// Rows its statements changed (0 for a read, or for an INSERT that
    /// found the key already there).
    pub rows: usize,
    pub effect: Effect,
    /// The transaction it ran in (1, 2, …); `None`: outside any.
    pub tx: Option<u32>,
}

/// A statement the handler would have run next had it not crashed: it
/// never ran. `tx`: the transaction it would have run in, numbered on from
/// the steps that ran; `None`: outside any.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Unreached {
    pub op: &'static str,
    pub statements: Statements,
    pub tx: Option<u32>,
}

/// The steps of one delivery, in the order they ran. Serialises as the
/// list: `[{op, statements, rows, effect, tx}]` (what was not reached is
/// read with [`Trace::unreached`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Trace {
    steps: Vec<Ran>,
    /// The transaction open now, if any.
    #[serde(skip)]
    open: Option<u32>,
    #[serde(skip)]
    unreached: Vec<Unreached>,
}

/// The statement a failed transaction is ended with.
const ROLLBACK: &[&str] = &["ROLLBACK"];

impl Trace {
    pub fn steps(&self) -> &[Ran] {
        &self.steps
    }

    /// A statement ran inside the open transaction: [`Effect::Open`] until
    /// it ends.
    pub fn ran(&mut self, op: &'static str, statements: Statements, rows: usize) {
        if self.open.is_none() {
            let last = self.steps.iter().filter_map(|s| s.tx).max();
            self.open = Some(last.unwrap_or(0) + 1);
        }
        self.push(op, statements, rows, Effect::Open);
    }

    /// A statement ran on its own, in autocommit mode: kept at once.
    pub fn autocommitted(&mut self, op: &'static str, statements: Statements, rows: usize) {
        self.open = None;
        self.push(op, statements, rows, Effect::Kept);
    }

    /// `COMMIT` ran (recorded as `op`): every open step is kept.
    pub fn committed(&mut self, op: &'static str, statements: Statements) {
        self.push(op, statements, 0, Effect::Kept);
        self.settle(Effect::Kept);
    }

    /// A statement went wrong: it is recorded as [`Effect::Failed`] with the
    /// rows it had changed so far (its transaction, if one is open, is
    /// ended by `Trace::rolled_back`).
    pub fn failed(&mut self, op: &'static str, statements: Statements, rows: usize) {
        self.push(op, statements, rows, Effect::Failed);
    }

    /// The handler crashed on purpose here.
    pub fn crashed(&mut self) {
        self.push("crash", &[], 0, Effect::Crashed);
    }

    /// Right after [`Trace::crashed`], before the rollback: the statements
    /// (`op`, `statements`) the handler would have run next, in order. Each
    /// is given the transaction it would have run in: the one open at the
    /// crash until its `commit` or `rollback`, a new number from a `begin`
    /// on, none in between.
    pub fn not_reached(&mut self, ahead: impl IntoIterator<Item = (&'static str, Statements)>) {
        let mut open = self.open;
        let mut last = self.steps.iter().filter_map(|s| s.tx).max().unwrap_or(0);
        for (op, statements) in ahead {
            if op == "begin" && open.is_none() {
                last += 1;
                open = Some(last);
            }
            self.unreached.push(Unreached {
                op,
                statements,
                tx: open,
            });
            if matches!(op, "commit" | "rollback") {
                open = None;
            }
        }
    }

    /// What a crash left out: the statements the handler would have run
    /// next ([`Trace::not_reached`]); empty unless it crashed.
    pub fn unreached(&self) -> &[Unreached] {
        &self.unreached
    }

    /// `ROLLBACK` ran: every open step is rolled back.
    fn rolled_back(&mut self) {
        self.push("rollback", ROLLBACK, 0, Effect::Kept);
        self.settle(Effect::RolledBack);
    }

    /// Ends the transaction after `err`, keeping `err` as the answer: runs
    /// `ROLLBACK` if one is open and records it; if none is open (BEGIN
    /// itself failed, or SQLite already ended it on this error), its open
    /// steps are marked rolled back. A failing `ROLLBACK` is added to `err`.
    pub fn roll_back(&mut self, conn: &Connection, err: Error) -> Error {
        if conn.is_autocommit() {
            self.rolled_back_by_sqlite();
            return err;
        }
        match self.abort(conn) {
            Ok(()) => err,
            Err(rb) => Error::storage(format!("{err}; then ROLLBACK failed: {rb}")),
        }
    }

    /// Ends an unfinished delivery's open transaction, if any, with
    /// `ROLLBACK`, and records it.
    ///
    /// # Errors
    /// Storage errors from `ROLLBACK`.
    pub fn abort(&mut self, conn: &Connection) -> Result<(), Error> {
        if !conn.is_autocommit() {
            conn.execute_batch("ROLLBACK")?;
            self.rolled_back();
        }
        Ok(())
    }

    /// SQLite ended the transaction itself on an error (or none was
    /// open): every open step is rolled back, and no `ROLLBACK` ran.
    fn rolled_back_by_sqlite(&mut self) {
        self.settle(Effect::RolledBack);
    }

    /// Ends the open transaction: its open steps take `effect`.
    fn settle(&mut self, effect: Effect) {
        self.open = None;
        for step in &mut self.steps {
            if step.effect == Effect::Open {
                step.effect = effect;
            }
        }
    }

    fn push(&mut self, op: &'static str, statements: Statements, rows: usize, effect: Effect) {
        self.steps.push(Ran {
            op,
            statements,
            rows,
            effect,
            tx: self.open,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effects(trace: &Trace) -> Vec<(&str, Effect)> {
        trace.steps().iter().map(|s| (s.op, s.effect)).collect()
    }

    fn transactions(trace: &Trace) -> Vec<(&str, Option<u32>)> {
        trace.steps().iter().map(|s| (s.op, s.tx)).collect()
    }

    #[test]
    fn a_transaction_keeps_or_undoes_only_its_own_open_steps() {
        let mut t = Trace::default();
        t.autocommitted("check", &[], 0);
        t.ran("begin", &[], 0);
        t.ran("insert", &[], 1);
        t.committed("commit", &[]);
        t.ran("begin", &[], 0);
        t.ran("credit", &[], 1);
        t.crashed();
        t.rolled_back();
        assert_eq!(
            effects(&t),
            [
                ("check", Effect::Kept),
                ("begin", Effect::Kept),
                ("insert", Effect::Kept),
                ("commit", Effect::Kept),
                ("begin", Effect::RolledBack),
                ("credit", Effect::RolledBack),
                ("crash", Effect::Crashed),
                ("rollback", Effect::Kept),
            ]
        );
        assert_eq!(
            transactions(&t),
            [
                ("check", None),
                ("begin", Some(1)),
                ("insert", Some(1)),
                ("commit", Some(1)),
                ("begin", Some(2)),
                ("credit", Some(2)),
                ("crash", Some(2)),
                ("rollback", Some(2)),
            ]
        );
    }

    #[test]
    fn a_crash_after_a_commit_is_outside_any_transaction() {
        let mut t = Trace::default();
        t.ran("begin", &[], 0);
        t.committed("commit", &[]);
        t.crashed();
        t.autocommitted("credit", &[], 1);
        assert_eq!(
            transactions(&t),
            [
                ("begin", Some(1)),
                ("commit", Some(1)),
                ("crash", None),
                ("credit", None)
            ]
        );
    }

    /// What a crash left out is numbered on from what ran: the open
    /// transaction continues until its COMMIT, a BEGIN after it is a new one.
    #[test]
    fn what_a_crash_left_out_is_placed_in_the_transactions_it_would_have_run_in() {
        let mut t = Trace::default();
        t.ran("begin", &[], 0);
        t.ran("insert", &[], 1);
        t.crashed();
        t.not_reached([
            ("credit", &[][..]),
            ("commit", &[]),
            ("check", &[]),
            ("begin", &[]),
            ("credit", &[]),
        ]);
        t.rolled_back();
        let left_out: Vec<_> = t.unreached().iter().map(|u| (u.op, u.tx)).collect();
        assert_eq!(
            left_out,
            [
                ("credit", Some(1)),
                ("commit", Some(1)),
                ("check", None),
                ("begin", Some(2)),
                ("credit", Some(2))
            ]
        );
        assert_eq!(transactions(&t).len(), 4, "none of it is a step that ran");
    }

    #[test]
    fn a_transaction_sqlite_ended_itself_is_undone_without_a_rollback_step() {
        let mut t = Trace::default();
        t.ran("begin", &[], 0);
        t.failed("commit", &[], 0);
        t.rolled_back_by_sqlite();
        assert_eq!(
            effects(&t),
            [("begin", Effect::RolledBack), ("commit", Effect::Failed)]
        );
    }

    #[test]
    fn it_serialises_as_the_list_the_page_draws() {
        let mut t = Trace::default();
        t.ran("insert", &["INSERT ..."], 1);
        let wire = serde_json::to_string(&t).expect("json");
        assert_eq!(
            wire,
            r#"[{"op":"insert","statements":["INSERT ..."],"rows":1,"effect":"open","tx":1}]"#
        );
    }
}
