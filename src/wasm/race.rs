//! The race lab in the browser: [`RaceLab`], several real connections to
//! one shared `memdb` database in the worker.

use super::*;
use crate::core::db::Mode;
use crate::labs::handlers::{workshop, Contender};
use crate::labs::race::{self as lab, Arena, Race};

/// The race lab in the browser: several real connections to one shared
/// in-memory database (SQLite's `memdb` VFS, with real locks between
/// connections), one delivery per connection, advanced by the reader.
#[wasm_bindgen]
pub struct RaceLab {
    arena: Arena,
    race: Option<Race>,
}

#[wasm_bindgen]
impl RaceLab {
    /// `deliveries` connections (2 or 3) to a fresh shared database.
    #[wasm_bindgen(constructor)]
    pub fn new(deliveries: JsValue) -> Result<RaceLab, JsValue> {
        let k = number_from_js(lab::DELIVERIES, &deliveries)?;
        let k = usize::try_from(k)
            .map_err(|_| JsValue::from(Error::invalid(lab::DELIVERIES, "must be positive")))?;
        let arena = Arena::new(k, || {
            db::open("file:/race-lab?vfs=memdb", Mode::Create, Duration::ZERO)
        })?;
        Ok(RaceLab { arena, race: None })
    }

    /// Starts a race: every connection delivers the same event by `handler`.
    /// Returns the first statement of each delivery.
    pub fn start(&mut self, handler: JsValue) -> Result<JsValue, JsValue> {
        let handler = contender_from_js(&handler)?;
        let race = Race::new(&self.arena, handler)?;
        let next: Vec<_> = (0..self.arena.deliveries())
            .map(|i| race.next_statements(i))
            .collect();
        self.race = Some(race);
        to_value(&next)
    }

    /// Advances delivery `i` by one statement: `{delivery, statements,
    /// result, committed_balance, committed_inbox, next, verdict}`; `result`
    /// is `ran`, `waiting` (the lock is held elsewhere: advance it again
    /// later), `answered` or `failed`.
    pub fn step(&mut self, i: usize) -> Result<JsValue, JsValue> {
        let race = self
            .race
            .as_mut()
            .ok_or_else(|| JsValue::from(Error::storage("start a race first")))?;
        let log = race.step(&self.arena, i)?;
        let next = race.next_statements(i);
        let verdict = race
            .finished()
            .then(|| race.verdict(&self.arena))
            .transpose()?;
        to_value(&RaceStep { log, next, verdict })
    }

    /// Runs every interleaving of this many deliveries by `handler`:
    /// `{handler, deliveries, interleavings, double_credits, lost_credits,
    /// wrong_answers, failing_schedule}`. Ends any race in progress.
    pub fn explore(&mut self, handler: JsValue) -> Result<JsValue, JsValue> {
        let handler = contender_from_js(&handler)?;
        self.race = None;
        to_value(&lab::explore(&self.arena, handler)?)
    }
}

/// A race's handler: a built-in by name, or `"workshop"` (the workshop's
/// handler in Rust, in a build with the feature `workshop`).
fn contender_from_js(value: &JsValue) -> Result<Contender, Error> {
    if value.as_string().as_deref() == Some(workshop::NAME) {
        return workshop::contender();
    }
    Ok(Contender::Builtin(handler_from_js(value)?))
}

#[derive(Serialize)]
struct RaceStep {
    #[serde(flatten)]
    log: lab::StepLog,
    next: Option<crate::core::trace::Statements>,
    verdict: Option<lab::Verdict>,
}
