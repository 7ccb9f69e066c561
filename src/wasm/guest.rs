//! What the guest workers (`www/db/guest.js`) run, none of it on the
//! reader's database: a console query on a copy of it (bytes in), an
//! imported file checked and rebuilt (bytes out, for [`Lab::adopt`]), a
//! handler text (or the workshop's handler in Rust) judged on fresh `memdb`
//! databases of its own, and a reported schedule replayed. Built only into
//! the full module (feature `full`): the database worker does none of it.

use super::*;
use crate::core::db::Mode;
use crate::labs::handlers::workshop;
use crate::labs::handlers::{self, Contender};
use crate::labs::race::{self as lab, Arena, Race};
use crate::labs::tools::{budget, console, transfer};

/// One console query on `copy`, the bytes of a database
/// ([`super::Lab::snapshot`]): `{columns, rows, truncated, truncated_values}`.
#[wasm_bindgen(js_name = queryCopy)]
pub fn query_copy(copy: Vec<u8>, sql: String) -> Result<JsValue, JsValue> {
    budget::set_heap_limit(budget::HEAP_LIMIT_BYTES);
    to_value(&console::query_copy(&copy, &sql)?)
}

/// Checks an imported file and rebuilds its rows in a fresh database:
/// `{bytes: Uint8Array, report: {accounts, inbox, …}}`, `bytes` for
/// [`super::Lab::adopt`].
#[wasm_bindgen(js_name = rebuildImport)]
pub fn rebuild_import(file: Vec<u8>) -> Result<JsValue, JsValue> {
    budget::set_heap_limit(budget::HEAP_LIMIT_BYTES);
    let (bytes, report) = transfer::rebuild_to_bytes(&file)?;
    let answer = js_sys::Object::new();
    // Setting a property of a plain object we just made cannot fail.
    let _ = js_sys::Reflect::set(
        &answer,
        &"bytes".into(),
        &js_sys::Uint8Array::from(&bytes[..]),
    );
    let _ = js_sys::Reflect::set(&answer, &"report".into(), &to_value(&report)?);
    Ok(answer.into())
}

/// The judge's answer in the browser: the report, or why the text does not
/// parse (an outcome of judging a text, not an error of the lab).
#[derive(Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
enum Judged {
    /// `crash_sweep` says where the crash sweep runs: natively only
    /// (`inbox-lab judge`); the report carries no crash counts here.
    Report {
        report: Box<crate::labs::judge::Report>,
        crash_sweep: &'static str,
    },
    /// Line and column (1-based), the code, and the sentence in both
    /// languages.
    ParseError {
        code: crate::labs::handlers::ScriptCode,
        line: usize,
        column: usize,
        en: String,
        ru: String,
    },
}

/// Judges a handler `text` with `deliveries` (2 or 3; both when undefined)
/// on a fresh shared in-memory database of its own (never the reader's):
/// `{result: "report", report, crash_sweep: "native_only"}` or
/// `{result: "parse_error", code, line, column, en, ru}`. `progress`, if a
/// function, is called with `{done, total, check}` as each check starts.
/// `seed` (optional, a report's `seed`) repeats that report's events; a
/// fresh one when undefined.
#[wasm_bindgen(js_name = judgeHandler)]
pub fn judge_handler(
    text: JsValue,
    deliveries: JsValue,
    progress: JsValue,
    seed: JsValue,
) -> Result<JsValue, JsValue> {
    use crate::labs::handlers::Lang;
    let text = string_from_js(crate::labs::handlers::HANDLER, &text)?;
    let deliveries = judged_deliveries(&deliveries)?;
    let seed = seed_from_js(&seed)?.unwrap_or_else(fresh_seed);
    let program = match handlers::parse(&text) {
        Ok(p) => p,
        Err(e) => {
            return to_value(&Judged::ParseError {
                code: e.code,
                line: e.line,
                column: e.column,
                en: e.text(Lang::En),
                ru: e.text(Lang::Ru),
            })
        }
    };
    judge_contender(
        &Contender::Script {
            name: "handler".to_owned(),
            program,
        },
        deliveries,
        &progress,
        seed,
    )
}

/// A judge's seed: `None` when undefined or null.
fn seed_from_js(seed: &JsValue) -> Result<Option<u64>, Error> {
    use crate::labs::judge::sample;
    if seed.is_undefined() || seed.is_null() {
        return Ok(None);
    }
    sample::seed(number_from_js(sample::SEED, seed)?).map(Some)
}

/// A seed no run has chosen (`Math.random`'s 53 bits).
fn fresh_seed() -> u64 {
    let max = crate::labs::judge::sample::MAX_SEED;
    // In [0, 1): the product is below 2^53, and the cast keeps it whole.
    (js_sys::Math::random() * max as f64) as u64
}

/// `deliveries` of the judge: 2 or 3; both when undefined.
fn judged_deliveries(deliveries: &JsValue) -> Result<Vec<usize>, Error> {
    if deliveries.is_undefined() {
        return Ok(vec![2, 3]);
    }
    match number_from_js(lab::DELIVERIES, deliveries)? {
        k @ (2 | 3) => Ok(vec![usize::try_from(k).unwrap_or(2)]),
        _ => Err(Error::invalid(lab::DELIVERIES, "must be 2 or 3")),
    }
}

/// Judges `contender` on a fresh shared in-memory database of its own,
/// telling `progress` (if a function) as each check starts.
fn judge_contender(
    contender: &Contender,
    deliveries: Vec<usize>,
    progress: &JsValue,
    seed: u64,
) -> Result<JsValue, JsValue> {
    use crate::labs::judge;
    let name = fresh_memdb("judge");
    let progress = progress.dyn_ref::<js_sys::Function>();
    let report = judge::judge_reporting(
        contender,
        &deliveries,
        || db::open(&name, Mode::Create, Duration::ZERO),
        judge::JUDGE_BUDGET,
        seed,
        || Ok(None),
        &mut |p| {
            if let (Some(f), Ok(value)) = (progress, to_value(&p)) {
                // A listener that throws changes nothing about the judge.
                let _ = f.call1(&JsValue::NULL, &value);
            }
        },
    )?;
    to_value(&Judged::Report {
        report: Box::new(report),
        crash_sweep: "native_only",
    })
}

/// Judges the workshop's handler in Rust (a build with the feature
/// `workshop`) as [`judge_handler`] judges a text: `{result: "report", …}`.
#[wasm_bindgen(js_name = judgeWorkshop)]
pub fn judge_workshop(
    deliveries: JsValue,
    progress: JsValue,
    seed: JsValue,
) -> Result<JsValue, JsValue> {
    let deliveries = judged_deliveries(&deliveries)?;
    let seed = seed_from_js(&seed)?.unwrap_or_else(fresh_seed);
    judge_contender(&workshop::contender()?, deliveries, &progress, seed)
}

/// One step of a replayed schedule.
#[derive(Serialize)]
struct Replayed {
    steps: Vec<lab::StepLog>,
    verdict: Option<lab::Verdict>,
}

/// Replays `schedule` (the delivery index of each statement, as the judge
/// reports a race failure) of `deliveries` deliveries of handler `text`, on
/// a fresh `memdb` database: `{steps: [{delivery, statements, result, …}],
/// verdict}` (`verdict` null while a delivery is still waiting: a
/// deadlock). With `seed` (optional: the report's), the schedule replays
/// with the event of that seed it failed with; without, with the article's.
#[wasm_bindgen(js_name = replayHandler)]
pub fn replay_handler(
    text: JsValue,
    deliveries: JsValue,
    schedule: Vec<u32>,
    seed: JsValue,
) -> Result<JsValue, JsValue> {
    let text = string_from_js(crate::labs::handlers::HANDLER, &text)?;
    let program = crate::labs::handlers::parse(&text)
        .map_err(|e| Error::invalid(crate::labs::handlers::HANDLER, e.to_string()))?;
    replay_contender(
        Contender::Script {
            name: "handler".to_owned(),
            program,
        },
        &deliveries,
        schedule,
        &seed,
    )
}

/// Replays `schedule` of the workshop's handler in Rust, as
/// [`replay_handler`] does a text's.
#[wasm_bindgen(js_name = replayWorkshop)]
pub fn replay_workshop(
    deliveries: JsValue,
    schedule: Vec<u32>,
    seed: JsValue,
) -> Result<JsValue, JsValue> {
    replay_contender(workshop::contender()?, &deliveries, schedule, &seed)
}

fn replay_contender(
    contender: Contender,
    deliveries: &JsValue,
    schedule: Vec<u32>,
    seed: &JsValue,
) -> Result<JsValue, JsValue> {
    let k = number_from_js(lab::DELIVERIES, deliveries)?;
    let k = usize::try_from(k)
        .map_err(|_| JsValue::from(Error::invalid(lab::DELIVERIES, "must be positive")))?;
    let name = fresh_memdb("replay");
    let arena = Arena::new(k, || db::open(&name, Mode::Create, Duration::ZERO))?;
    let event = match seed_from_js(seed)? {
        Some(seed) => {
            let schedule: Vec<usize> = schedule.iter().map(|&i| i as usize).collect();
            crate::labs::judge::raced_event(&arena, &contender, seed, &schedule)?
        }
        None => lab::race_payload(),
    };
    let mut race = Race::with_event(&arena, contender, event)?;
    let mut steps = Vec::with_capacity(schedule.len());
    for i in schedule {
        steps.push(race.step(&arena, i as usize)?);
    }
    let verdict = race.finished().then(|| race.verdict(&arena)).transpose()?;
    to_value(&Replayed { steps, verdict })
}

/// A `memdb` database no earlier judge or replay of this worker used.
fn fresh_memdb(what: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    format!("file:/{what}-{run}?vfs=memdb")
}
