//! Step mode on the reader's database: one step of the article's handler
//! (one statement; the receipt's two) per call, its transaction open between calls. In the page's full
//! module only: the worker hands the database over before a stepped delivery
//! begins, so none is ever open at a hand-over ([`Lab::release`]).

use super::lab::Lab;
use super::*;
use crate::labs::handlers::Answer;
use crate::labs::verdicts::{outcome_answer, Heard};
use crate::{Delivery, Outcome, Progress, Step};

#[wasm_bindgen]
impl Lab {
    /// Step mode: starts a delivery without running anything. Returns the
    /// first step, `{next: {step, statements}, outcome: null, steps: []}`.
    #[wasm_bindgen(js_name = stepStart)]
    pub fn step_start(&mut self, event: JsValue, fault: JsValue) -> Result<JsValue, JsValue> {
        let event = event_from_js(&event)?;
        let fault = fault_from_js(&fault)?;
        let conn = self.writer()?;
        let before = self.referee.look(conn, &event).ok();
        let delivery = Delivery::new(event, fault);
        let answer = StepAnswer::new(None, delivery.next_step(), None);
        self.stepping = Some((delivery, before));
        with_steps(to_value(&answer), &Trace::default(), None)
    }

    /// Step mode: runs the next statement. Returns `{ran, next, outcome,
    /// steps}` (`steps`: every step so far with its effect, `open` until the
    /// transaction ends); throws the delivery's error, with its `steps` (its
    /// transaction already rolled back).
    #[wasm_bindgen(js_name = stepNext)]
    pub fn step_next(&mut self) -> Result<JsValue, JsValue> {
        self.conn()?; // the database's problem, if it has one
        let conn = self.conn.as_ref().ok_or_else(|| JsValue::from(closed()))?;
        let (mut delivery, before) = self.stepping.take().ok_or_else(not_stepping)?;
        let ran = delivery.next_step();
        let result = match delivery.step(conn) {
            // This worker holds the only connection, so nothing else can
            // hold the lock; if something did, end the delivery cleanly.
            Err(Error::Busy) => Err(delivery.give_up(conn, Error::Busy)),
            other => other,
        };
        let steps = delivery.trace().clone();
        let verdict = if delivery.next_step().is_none() {
            // Finished (answered or failed): judged like any delivery.
            let heard = Heard::of(&result, |progress| match progress {
                Progress::Done(outcome) => outcome_answer(outcome),
                Progress::Next(_) => Answer::Applied, // unreachable: finished
            });
            let event = delivery.event();
            Some(
                self.referee
                    .judge(conn, Handler::Atomic, event, heard, &steps, before),
            )
        } else {
            self.stepping = Some((delivery, before));
            None
        };
        let answer = result
            .map_err(JsValue::from)
            .and_then(|progress| match progress {
                Progress::Next(step) => to_value(&StepAnswer::new(ran, Some(step), None)),
                Progress::Done(outcome) => to_value(&StepAnswer::new(ran, None, Some(outcome))),
            });
        with_steps(answer, &steps, verdict.as_ref())
    }

    /// Step mode: "throw" — the handler fails here; the open transaction is
    /// rolled back. Throws the resulting `simulated_crash` error object, with
    /// the delivery's `steps`.
    #[wasm_bindgen(js_name = stepThrow)]
    pub fn step_throw(&mut self) -> Result<(), JsValue> {
        self.conn()?; // the database's problem, if it has one
        let conn = self.conn.as_ref().ok_or_else(|| JsValue::from(closed()))?;
        let (mut delivery, before) = self.stepping.take().ok_or_else(not_stepping)?;
        let crash = delivery.throw(conn)?;
        let heard = Heard::of::<()>(&Err(crash.clone()), |()| Answer::Applied);
        let verdict = self.referee.judge(
            conn,
            Handler::Atomic,
            delivery.event(),
            heard,
            delivery.trace(),
            before,
        );
        with_steps(Err(crash.into()), delivery.trace(), Some(&verdict)).map(|_| ())
    }
}

/// Step mode's refusal when no delivery was started.
fn not_stepping() -> Error {
    Error::storage("no delivery is being stepped")
}

/// One step as shown to readers.
#[derive(Serialize)]
struct StepInfo {
    step: Step,
    statements: crate::core::trace::Statements,
}

/// Step mode's answer: the step that just ran, the next one, and the
/// outcome once committed.
#[derive(Serialize)]
struct StepAnswer {
    ran: Option<Step>,
    next: Option<StepInfo>,
    outcome: Option<Outcome>,
}

impl StepAnswer {
    fn new(ran: Option<Step>, next: Option<Step>, outcome: Option<Outcome>) -> Self {
        let next = next.map(|step| StepInfo {
            step,
            statements: step.statements(),
        });
        StepAnswer { ran, next, outcome }
    }
}
