//! The verdict on a recovered database: integrity ok, every event entirely
//! there or entirely absent, nothing acknowledged lost (the lab's invariant
//! is in [`super`]).

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::core::error::Error;
use crate::core::tables;
use crate::labs::scheme_ends::outbox;
use crate::Event;

/// What a recovered database looked like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recovered {
    pub integrity: String,
    /// Events whose inbox row exists.
    pub registered: Vec<usize>,
    /// Events whose credit is in the balance (decoded from its bits).
    pub credited: Vec<usize>,
    /// How many events were acknowledged before the crash.
    pub acknowledged: usize,
}

/// The verdict of one try.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Integrity ok and every event entirely there or entirely absent.
    Atomic,
    /// Something half-done survived (or integrity failed).
    Partial,
    /// Atomic, but an acknowledged event is missing.
    LostAcknowledged,
}

impl Recovered {
    pub fn verdict(&self) -> Verdict {
        let prefix = |v: &[usize]| v.iter().enumerate().all(|(i, &e)| i == e);
        if self.integrity != "ok" || self.registered != self.credited || !prefix(&self.registered) {
            Verdict::Partial
        } else if self.registered.len() < self.acknowledged {
            Verdict::LostAcknowledged
        } else {
            Verdict::Atomic
        }
    }
}

/// Reads a recovered database (opening it has already run SQLite's
/// recovery) and describes what survived of `events`.
///
/// # Errors
/// Storage errors while reading.
pub fn classify(
    conn: &Connection,
    events: &[Event],
    acknowledged: usize,
) -> Result<Recovered, Error> {
    let integrity = integrity(conn)?;
    let t = tables::snapshot(conn)?;
    let balance = t.balance(1).unwrap_or(-1);
    let registered = events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            t.inbox
                .iter()
                .any(|r| r.source == e.source() && r.event_id == e.event_id())
        })
        .map(|(i, _)| i)
        .collect();
    let credited = (0..events.len())
        .filter(|i| balance >= 0 && balance & (1 << i) != 0)
        .collect();
    Ok(Recovered {
        integrity,
        registered,
        credited,
        acknowledged,
    })
}

/// What a receiver saw after a dispatcher crash and the restarted
/// dispatcher's run: how many times each message was shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivered {
    pub integrity: String,
    /// `shown[i]`: times message `outbox:<i+1>` was shown.
    pub shown: Vec<usize>,
}

impl Delivered {
    /// [`Verdict::Atomic`]: every message shown exactly once;
    /// [`Verdict::Partial`]: one shown twice (or integrity failed);
    /// [`Verdict::LostAcknowledged`]: one never shown.
    fn verdict(&self) -> Verdict {
        if self.integrity != "ok" || self.shown.iter().any(|&n| n > 1) {
            Verdict::Partial
        } else if self.shown.contains(&0) {
            Verdict::LostAcknowledged
        } else {
            Verdict::Atomic
        }
    }
}

/// After a dispatcher crash: restarts the dispatcher (drains the outbox)
/// and counts what the receiver showed for each of `messages` messages.
///
/// # Errors
/// Storage errors.
pub fn classify_dispatch(
    conn: &Connection,
    receiver: &outbox::Receiver,
    messages: usize,
) -> Result<Delivered, Error> {
    let integrity = integrity(conn)?;
    outbox::dispatch_all(conn, receiver)?;
    let shown = receiver.shown()?;
    let counts = (1..=messages)
        .map(|id| {
            let message_id = format!("outbox:{id}");
            shown.iter().filter(|s| s.message_id == message_id).count()
        })
        .collect();
    Ok(Delivered {
        integrity,
        shown: counts,
    })
}

/// `PRAGMA integrity_check`'s answer: `"ok"`, or its findings joined.
///
/// # Errors
/// Storage errors.
pub fn integrity(conn: &Connection) -> Result<String, Error> {
    let lines: Vec<String> = conn
        .prepare("PRAGMA integrity_check")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(lines.join("; "))
}

/// What a try found after recovery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Recovery {
    Apply(Recovered),
    Dispatch(Delivered),
}

impl Recovery {
    pub fn verdict(&self) -> Verdict {
        match self {
            Recovery::Apply(r) => r.verdict(),
            Recovery::Dispatch(d) => d.verdict(),
        }
    }
}
