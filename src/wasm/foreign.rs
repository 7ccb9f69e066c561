//! Foreign work as the database worker sees it (`www/db/foreign.js`): the
//! deadline it enforces from outside on each piece of work it hands to a
//! worker of its own, and the error that work ends with when stopped then.
//! The work itself (a console query on a copy, an import's check and
//! rebuild, the judge) is in `guest.rs`.

use std::time::Duration;

use wasm_bindgen::prelude::*;

use crate::core::error::Error;
use crate::core::event::Field;
use crate::labs::judge::{self, JUDGE_BUDGET};
use crate::labs::tools::budget::Budget;
use crate::labs::tools::{console, transfer};

/// Whether a console query reads only a setting of the connection
/// (`PRAGMA journal_mode`): the one kind the database worker answers itself.
#[wasm_bindgen(js_name = readsOnlySettings)]
pub fn reads_only_settings(sql: &str) -> bool {
    console::reads_only_settings(sql)
}

/// The input naming a judge run's limit in seconds (`judge.run`'s option).
const SECONDS: Field = Field::new("seconds");

/// A judge run's limit: `seconds` (a whole number from 1 to the judge's
/// budget), or the whole budget when 0.
fn judge_seconds(seconds: f64) -> Result<u64, Error> {
    let max = JUDGE_BUDGET.time.as_secs();
    if seconds == 0.0 {
        return Ok(max);
    }
    if seconds.fract() == 0.0 && (1.0..=max as f64).contains(&seconds) {
        // Checked just above: a whole number from 1 to max.
        return Ok(seconds as u64);
    }
    Err(Error::invalid(
        SECONDS,
        format!("a judge's limit is a whole number of seconds from 1 to {max}"),
    ))
}

/// The foreign work named `work` and its limit: "console", "import" of
/// `size` bytes, "judge" within `size` seconds (0: the judge's budget).
fn budget_of(work: &str, size: f64) -> Result<Budget, JsValue> {
    match work {
        "console" => Ok(Budget::CONSOLE),
        // A JS number of bytes; a file's length is always a whole number.
        "import" => Ok(Budget::import(size.max(0.0) as usize)),
        "judge" => Ok(Budget {
            time: Duration::from_secs(judge_seconds(size)?),
            ..JUDGE_BUDGET
        }),
        other => Err(JsValue::from_str(&format!(
            "unknown foreign work {other:?}"
        ))),
    }
}

/// The wall-clock deadline of `work` (see `budget_of` for `size`), in ms
/// ([`Budget::deadline`]): the database worker terminates the worker
/// running it then. Throws for a judge's limit out of range.
#[wasm_bindgen(js_name = deadlineMs)]
pub fn deadline_ms(work: &str, size: f64) -> Result<f64, JsValue> {
    Ok(budget_of(work, size)?.deadline().as_secs_f64() * 1000.0)
}

/// The error `work` ends with when it was stopped at its deadline: the same
/// refusal its budget gives from inside (`query_budget`, `import_budget`),
/// or the judge's `judge_budget`, naming the `check` it was running.
#[wasm_bindgen(js_name = overDeadline)]
pub fn over_deadline(work: &str, size: f64, check: &str) -> Result<JsValue, JsValue> {
    let budget = budget_of(work, size)?;
    Ok(match work {
        "console" => console::over_budget(),
        "import" => transfer::over_budget(size.max(0.0) as usize),
        _ => judge::over_deadline(budget.time.as_secs(), check),
    }
    .into())
}
