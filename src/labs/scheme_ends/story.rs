//! The page's side of the experiments: what they did since their receiver
//! started, and the verdicts drawn from it.
//!
//! No table records which events the side-effect experiment delivered or
//! how often the retention experiment saw one event applied; how often each
//! message arrived is the receiver's (`Receiver::arrivals`).
//! A [`Story`] remembers them beside its [`Receiver`] and ends with it: a new
//! receiver (a new database, its outbox ids starting again at 1) is a new
//! story. The verdicts compare that memory with what the database committed
//! and what the receiver showed.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;
use serde::Serialize;

use super::outbox::{self, Crash, Notification, OutboxRow, Receiver, Strategy};
use super::retention::received_at;
use crate::core::error::Error;
use crate::{Event, Outcome};

/// An event's key: `(source, event_id)`.
type Key = (String, String);

/// A receiver, and what the experiments did since it started.
pub struct Story {
    receiver: Receiver,
    delivered: BTreeSet<Key>,
    applied: BTreeMap<Key, u32>,
}

/// What the user was told about one delivered event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Told {
    /// Credited and shown once: what every strategy should achieve.
    Once,
    /// Shown, never credited: a notification sent before a failed `COMMIT`.
    Phantom,
    /// Credited, never shown, nothing waiting: lost for good.
    Lost,
    /// Credited; its message waits in the outbox.
    Pending,
    /// Credited once, shown more than once.
    Duplicate,
    /// Rolled back: no credit, no notification.
    Nothing,
}

impl Told {
    fn of(credited: bool, shown: usize, pending: bool) -> Told {
        match (credited, shown) {
            (false, 0) => Told::Nothing,
            (false, _) => Told::Phantom,
            (true, 0) if pending => Told::Pending,
            (true, 0) => Told::Lost,
            (true, 1) => Told::Once,
            (true, _) => Told::Duplicate,
        }
    }
}

/// One event of the side-effect experiment: credited? shown how often?
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Credit {
    pub source: String,
    pub event_id: String,
    pub credited: bool,
    pub shown: usize,
    pub verdict: Told,
}

/// An outbox message the dispatcher sent more than once: at-least-once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resent {
    pub message_id: i64,
    pub sends: u32,
    /// How often the user saw it: once with the receiver's dedup.
    pub shown: usize,
}

/// Everything the side-effect experiment shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effects {
    pub dedup: bool,
    pub shown: Vec<Notification>,
    pub outbox: Vec<OutboxRow>,
    /// Per event delivered or shown since the receiver started, in the
    /// order of their numbers (`pay-2` before `pay-10`).
    pub verdicts: Vec<Credit>,
    pub resent: Vec<Resent>,
}

/// The answer of the dispatcher's button: it drained the outbox, or it
/// died after sending one message, before marking it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Dispatch {
    Drained { sent: usize },
    Crashed { message_id: i64 },
}

/// A retention delivery's answer, and how many times this story has seen
/// its event applied (more than once: its inbox row had been purged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redelivery {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub applied_times: u32,
}

fn key(source: &str, event_id: &str) -> Key {
    (source.to_owned(), event_id.to_owned())
}

impl Story {
    pub fn new(receiver: Receiver) -> Story {
        Story {
            receiver,
            delivered: BTreeSet::new(),
            applied: BTreeMap::new(),
        }
    }

    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    /// [`outbox::deliver`], remembered (a crash or a refusal included).
    ///
    /// # Errors
    /// As [`outbox::deliver`].
    pub fn deliver(
        &mut self,
        conn: &Connection,
        event: &Event,
        strategy: Strategy,
        crash: Option<Crash>,
    ) -> Result<Outcome, Error> {
        self.delivered.insert(key(event.source(), event.event_id()));
        outbox::deliver(conn, &self.receiver, event, strategy, crash)
    }

    /// The dispatcher's button: drain the outbox, or (`crash`) send the
    /// oldest pending message and die before marking it sent.
    ///
    /// # Errors
    /// Storage errors.
    pub fn dispatch(&self, conn: &Connection, crash: bool) -> Result<Dispatch, Error> {
        if !crash {
            let sent = outbox::dispatch_all(conn, &self.receiver)?;
            return Ok(Dispatch::Drained { sent });
        }
        Ok(match outbox::send_next(conn, &self.receiver)? {
            Some(message_id) => Dispatch::Crashed { message_id },
            None => Dispatch::Drained { sent: 0 },
        })
    }

    /// The retention experiment's delivery: the atomic handler, each
    /// application of an event counted.
    ///
    /// # Errors
    /// As [`crate::apply()`].
    pub fn redeliver(&mut self, conn: &Connection, event: &Event) -> Result<Redelivery, Error> {
        let outcome = crate::apply(conn, event, None)?;
        let times = self
            .applied
            .entry(key(event.source(), event.event_id()))
            .or_default();
        if matches!(outcome, Outcome::Applied(_)) {
            *times += 1;
        }
        Ok(Redelivery {
            outcome,
            applied_times: *times,
        })
    }

    /// What the side-effect experiment shows, with a verdict per event.
    ///
    /// # Errors
    /// Storage errors.
    pub fn effects(&self, conn: &Connection) -> Result<Effects, Error> {
        let shown = self.receiver.shown()?;
        let outbox = outbox::rows(conn)?;
        // Direct sends are named after their event, outbox messages after their row.
        let mut per_event: BTreeMap<Key, usize> =
            self.delivered.iter().map(|k| (k.clone(), 0)).collect();
        for notification in &shown {
            let direct = self
                .delivered
                .iter()
                .find(|(s, e)| outbox::direct_id(s, e) == notification.message_id)
                .cloned();
            let queued = || {
                outbox
                    .iter()
                    .find(|row| outbox::outbox_id(row.message_id) == notification.message_id)
                    .map(|row| key(&row.source, &row.event_id))
            };
            if let Some(event) = direct.or_else(queued) {
                *per_event.entry(event).or_default() += 1;
            }
        }
        let mut verdicts = per_event
            .into_iter()
            .map(|((source, event_id), times)| {
                let credited = received_at(conn, &source, &event_id)?.is_some();
                let pending = outbox.iter().any(|row| {
                    row.sent_at.is_none() && row.source == source && row.event_id == event_id
                });
                Ok(Credit {
                    verdict: Told::of(credited, times, pending),
                    source,
                    event_id,
                    credited,
                    shown: times,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        verdicts.sort_by_key(|c| (number(&c.event_id), c.event_id.clone(), c.source.clone()));
        let resent = self
            .receiver
            .arrivals()?
            .into_iter()
            .filter_map(|(message_id, sends)| {
                let id = message_id.strip_prefix(outbox::OUTBOX_ID)?.parse().ok()?;
                let seen = shown.iter().filter(|n| n.message_id == message_id);
                (sends > 1).then(|| Resent {
                    message_id: id,
                    sends,
                    shown: seen.count(),
                })
            })
            .collect();
        Ok(Effects {
            dedup: self.receiver.dedups(),
            shown,
            outbox,
            verdicts,
            resent,
        })
    }
}

/// The number an event id ends with (`pay-12` → 12; none → 0).
fn number(event_id: &str) -> u64 {
    event_id
        .rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
