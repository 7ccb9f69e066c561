//! The race lab: several deliveries of one event, each by its own handler on
//! its own real connection to one shared database, advanced one statement
//! at a time in an order the reader (or the explorer) chooses.
//!
//! Real SQLite locks decide what may run: a statement that cannot get its
//! lock answers `SQLITE_BUSY` at once (busy timeout 0) and is shown as
//! "waiting for the write lock"; it did nothing and can be tried again.
//!
//! [`explore`] runs **every** schedule — every order of the deliveries'
//! statements that the locks allow — and counts how many end badly:
//! * a **double credit**: the balance grew by more than one amount;
//! * a **lost credit**: it grew by less;
//! * a **wrong answer**: the answers are not exactly one `applied` and the
//!   rest `duplicate`, or a `duplicate` was answered while the credit was not
//!   yet committed (a sender would stop retrying on a promise not kept).

use rusqlite::Connection;
use serde::Serialize;

use crate::core::error::Error;
use crate::core::event::Field;
use crate::core::schema;
use crate::labs::handlers::{Answer, Contender, Payload, Run};

/// The input saying how many concurrent deliveries the race lab runs.
pub const DELIVERIES: Field = Field::new("deliveries");

/// The event every race delivers.
pub fn race_payload() -> Payload {
    Payload {
        source: "provider-a".into(),
        event_id: "evt-1".into(),
        account_id: 1,
        amount: 500,
    }
}

/// Connections to one database: one per delivery, plus an observer that
/// reads what is committed (and resets the tables between schedules).
pub struct Arena {
    conns: Vec<Connection>,
    observer: Connection,
}

impl Arena {
    /// Opens `deliveries` connections and the observer with `open`, which
    /// must return connections to one shared database each call.
    ///
    /// # Errors
    /// Storage errors; [`Error::InvalidInput`] for fewer than 1 or more than
    /// [`MAX_DELIVERIES`] deliveries.
    pub fn new(
        deliveries: usize,
        open: impl Fn() -> Result<Connection, Error>,
    ) -> Result<Arena, Error> {
        if !(1..=MAX_DELIVERIES).contains(&deliveries) {
            return Err(Error::invalid(
                Field::EVENT,
                format!("deliveries must be between 1 and {MAX_DELIVERIES}"),
            ));
        }
        let mut observer = open()?;
        schema::init(&mut observer, &[1])?;
        // Never wait either: a read a writer's lock keeps out is "not
        // readable just now" ([`Arena::committed`]), and a wait there would
        // only stall every schedule (by the busy timeout, each time).
        observer.busy_timeout(std::time::Duration::ZERO)?;
        let conns = (0..deliveries)
            .map(|_| {
                let c = open()?;
                // Never wait: a lock conflict must show as "waiting".
                c.busy_timeout(std::time::Duration::ZERO)?;
                Ok(c)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let arena = Arena { conns, observer };
        arena.reset()?;
        Ok(arena)
    }

    pub fn deliveries(&self) -> usize {
        self.conns.len()
    }

    /// Delivery `i`'s connection.
    pub fn conn(&self, i: usize) -> Option<&Connection> {
        self.conns.get(i)
    }

    /// The observer's connection (the judge holds the write lock on it to
    /// make a delivery wait past its timeout).
    pub fn observer(&self) -> &Connection {
        &self.observer
    }

    /// Back to the start: account 1 at balance 0, empty inbox.
    ///
    /// # Errors
    /// Storage errors (for example a connection still inside a transaction).
    fn reset(&self) -> Result<(), Error> {
        for c in &self.conns {
            if !c.is_autocommit() {
                c.execute_batch("ROLLBACK")?;
            }
        }
        self.observer.execute_batch(
            "BEGIN IMMEDIATE;
             DELETE FROM inbox;
             DELETE FROM accounts;
             INSERT INTO accounts(id, balance) VALUES (1, 0);
             UPDATE receipt_counter SET last_seq = 0;
             COMMIT;",
        )?;
        Ok(())
    }

    /// `Arena::reset`, with the one account numbered `account_id`.
    ///
    /// # Errors
    /// As `Arena::reset`.
    pub fn reset_for(&self, account_id: i64) -> Result<(), Error> {
        self.reset()?;
        self.observer
            .execute("UPDATE accounts SET id = ?1", [account_id])?;
        Ok(())
    }

    /// The committed balance of every account together (there is one:
    /// account 1, or the one a race was started with) and the
    /// number of inbox rows, as another connection reads them; `None` while
    /// a writer's lock keeps readers out (SQLite's `memdb` admits no new
    /// reader while a write transaction is open).
    ///
    /// # Errors
    /// Storage errors other than busy.
    fn committed(&self) -> Result<Option<Committed>, Error> {
        let read = self.observer.query_row(
            "SELECT (SELECT sum(balance) FROM accounts), (SELECT count(*) FROM inbox)",
            [],
            |r| {
                Ok(Committed {
                    balance: r.get(0)?,
                    inbox_rows: r.get(1)?,
                })
            },
        );
        match read.map_err(Error::from) {
            Ok(c) => Ok(Some(c)),
            Err(Error::Busy) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The committed state once every delivery has finished (no locks held).
    fn settled(&self) -> Result<Committed, Error> {
        self.committed()?
            .ok_or_else(|| Error::storage("a connection still holds a lock after the race"))
    }
}

/// What is committed, as another connection sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Committed {
    pub balance: i64,
    pub inbox_rows: i64,
}

/// At most this many concurrent deliveries (schedules grow fast).
pub const MAX_DELIVERIES: usize = 3;

/// What one statement of one delivery did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum StepResult {
    /// Ran; more statements follow.
    Ran,
    /// `SQLITE_BUSY`: another connection holds the lock; nothing happened.
    Waiting,
    /// The delivery answered.
    Answered { answer: Answer },
    /// The delivery failed with this error kind.
    Failed {
        kind: &'static str,
        message: String,
        /// The error itself (the judge says it in the reader's language).
        #[serde(skip)]
        error: Error,
    },
}

/// One step of a race, for the page's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepLog {
    pub delivery: usize,
    pub statements: &'static [&'static str],
    #[serde(flatten)]
    pub result: StepResult,
    /// What is committed after the step, as another connection sees it
    /// (`None`: a writer's lock keeps readers out just now).
    pub committed: Option<Committed>,
    /// Every step this delivery ran so far, with its effect (`open` while
    /// its transaction is).
    pub steps: crate::Trace,
}

/// How a finished race ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub balance: i64,
    pub inbox_rows: i64,
    pub double_credit: bool,
    pub lost_credit: bool,
    pub wrong_answer: bool,
}

/// One race in progress on an [`Arena`] (passed to each call, so a race and
/// its arena can live side by side, as in the browser worker).
pub struct Race {
    payload: Payload,
    runs: Vec<Run>,
    applied: usize,
    duplicates: usize,
    wrong_answer: bool,
}

impl Race {
    /// Resets the arena and starts one delivery of the race event per
    /// connection, each by `handler`.
    ///
    /// # Errors
    /// Storage errors.
    pub fn new(arena: &Arena, contender: impl Into<Contender>) -> Result<Race, Error> {
        Race::with_event(arena, contender, race_payload())
    }

    /// As [`Race::new`], every delivery carrying `payload` (the account is
    /// its account): the judge races the events it varies from a seed.
    ///
    /// # Errors
    /// Storage errors; [`Error::InvalidInput`] for an invalid payload.
    pub fn with_event(
        arena: &Arena,
        contender: impl Into<Contender>,
        payload: Payload,
    ) -> Result<Race, Error> {
        arena.reset_for(payload.account_id)?;
        let contender = contender.into();
        let runs = (0..arena.deliveries())
            .map(|_| contender.run(&payload))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Race {
            payload,
            runs,
            applied: 0,
            duplicates: 0,
            wrong_answer: false,
        })
    }

    /// The statements delivery `i` runs next; `None` once it is finished.
    pub fn next_statements(&self, i: usize) -> Option<&'static [&'static str]> {
        self.runs.get(i).and_then(Run::next_statements)
    }

    pub fn finished(&self) -> bool {
        self.runs.iter().all(Run::finished)
    }

    /// Advances delivery `i` by one statement.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an unknown or finished delivery; storage
    /// errors from the observer.
    pub fn step(&mut self, arena: &Arena, i: usize) -> Result<StepLog, Error> {
        let (Some(run), Some(conn)) = (self.runs.get_mut(i), arena.conns.get(i)) else {
            return Err(Error::invalid(Field::EVENT, format!("no delivery {i}")));
        };
        let Some(statements) = run.next_statements() else {
            return Err(Error::invalid(
                Field::EVENT,
                format!("delivery {i} has finished"),
            ));
        };
        let result = match run.step(conn) {
            Ok(None) => StepResult::Ran,
            Ok(Some(answer)) => StepResult::Answered { answer },
            Err(Error::Busy) => StepResult::Waiting,
            Err(e) => StepResult::Failed {
                kind: e.kind(),
                message: e.to_string(),
                error: e,
            },
        };
        let committed = arena.committed()?;
        match &result {
            StepResult::Answered {
                answer: Answer::Applied,
            } => {
                self.applied += 1;
                self.wrong_answer |= self.applied > 1;
            }
            StepResult::Answered {
                answer: Answer::Duplicate,
            } => {
                self.duplicates += 1;
                // "Already done" must be true when it is said: the credit
                // must be committed (unreadable counts as not shown).
                let credited = committed.is_some_and(|c| c.balance >= self.payload.amount);
                self.wrong_answer |= !credited;
            }
            StepResult::Failed { .. } => self.wrong_answer = true,
            StepResult::Ran | StepResult::Waiting => {}
        }
        Ok(StepLog {
            delivery: i,
            statements,
            result,
            committed,
            steps: run.trace().clone(),
        })
    }

    /// The verdict, once [`Race::finished`].
    ///
    /// # Errors
    /// Storage errors, or a lock still held.
    pub fn verdict(&self, arena: &Arena) -> Result<Verdict, Error> {
        let Committed {
            balance,
            inbox_rows,
        } = arena.settled()?;
        let amount = self.payload.amount;
        let answered_all = self.applied + self.duplicates == self.runs.len();
        Ok(Verdict {
            balance,
            inbox_rows,
            double_credit: balance > amount,
            lost_credit: self.finished() && balance < amount,
            wrong_answer: self.wrong_answer
                || (self.finished() && (!answered_all || self.applied != 1)),
        })
    }
}

/// The explorer's count over every schedule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub handler: String,
    pub deliveries: usize,
    pub interleavings: u64,
    pub double_credits: u64,
    pub lost_credits: u64,
    pub wrong_answers: u64,
    /// Schedules that ended with every unfinished delivery waiting for a
    /// lock another one holds (a deferred `BEGIN` read by two, then both
    /// writing): SQLite would answer busy, so each counts as a wrong answer
    /// too. The built-ins never get here.
    pub deadlocks: u64,
    /// The first schedule that ended badly, as the delivery index of each
    /// statement, to replay step by step.
    pub failing_schedule: Option<Vec<usize>>,
}

/// Runs every schedule of `arena.deliveries()` deliveries by `handler`.
///
/// A schedule is explored by replaying its prefix from the start (SQLite
/// cannot be rewound), so the cost grows with (schedules × length); with at
/// most [`MAX_DELIVERIES`] deliveries and locks pruning most orders, that
/// stays in the thousands.
///
/// # Errors
/// Storage errors.
pub fn explore(arena: &Arena, handler: impl Into<Contender>) -> Result<Summary, Error> {
    explore_event(arena, handler, &race_payload())
}

/// [`explore`] with every delivery carrying `payload` ([`Race::with_event`]).
///
/// # Errors
/// Storage errors.
pub fn explore_event(
    arena: &Arena,
    handler: impl Into<Contender>,
    payload: &Payload,
) -> Result<Summary, Error> {
    let handler = handler.into();
    let mut summary = Summary {
        handler: handler.name(),
        deliveries: arena.deliveries(),
        ..Summary::default()
    };
    let mut prefix = Vec::new();
    dfs(arena, &handler, payload, &mut prefix, &mut summary)?;
    Ok(summary)
}

/// Runs `schedule` (a delivery index per statement) from the start.
///
/// # Errors
/// Storage errors; [`Error::InvalidInput`] for a step of a finished delivery.
pub fn replay(
    arena: &Arena,
    handler: impl Into<Contender>,
    schedule: &[usize],
) -> Result<Race, Error> {
    replay_event(arena, handler, &race_payload(), schedule)
}

/// [`replay`] with every delivery carrying `payload`.
///
/// # Errors
/// As [`replay`].
pub fn replay_event(
    arena: &Arena,
    handler: impl Into<Contender>,
    payload: &Payload,
    schedule: &[usize],
) -> Result<Race, Error> {
    let mut race = Race::with_event(arena, handler, payload.clone())?;
    for &i in schedule {
        race.step(arena, i)?;
    }
    Ok(race)
}

fn dfs(
    arena: &Arena,
    handler: &Contender,
    payload: &Payload,
    prefix: &mut Vec<usize>,
    summary: &mut Summary,
) -> Result<(), Error> {
    let mut moved = false;
    for i in 0..arena.deliveries() {
        let mut race = replay_event(arena, handler.clone(), payload, prefix)?;
        if race.next_statements(i).is_none() {
            continue;
        }
        if race.step(arena, i)?.result == StepResult::Waiting {
            continue; // blocked here: this order is not possible now
        }
        moved = true;
        prefix.push(i);
        if race.finished() {
            let v = race.verdict(arena)?;
            summary.interleavings += 1;
            summary.double_credits += u64::from(v.double_credit);
            summary.lost_credits += u64::from(v.lost_credit);
            summary.wrong_answers += u64::from(v.wrong_answer);
            if (v.double_credit || v.lost_credit || v.wrong_answer)
                && summary.failing_schedule.is_none()
            {
                summary.failing_schedule = Some(prefix.clone());
            }
        } else {
            dfs(arena, handler, payload, prefix, summary)?;
        }
        prefix.pop();
    }
    if !moved {
        // Nobody can go on, and not everyone has answered: a deadlock.
        summary.interleavings += 1;
        summary.deadlocks += 1;
        summary.wrong_answers += 1;
        if summary.failing_schedule.is_none() {
            summary.failing_schedule = Some(prefix.clone());
        }
    }
    Ok(())
}
