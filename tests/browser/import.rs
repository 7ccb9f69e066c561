//! Hostile database files in the browser (issue 11, item 1): the same
//! generator and guarantee suite as natively (`tests/support/hostile_db.rs`),
//! driven through the `Lab` facade the worker uses, on real OPFS.
//!
//! Each file is planted through the facade's import path (`Lab::import`).
//! Then either it was refused (`invalid_input`, field `file`) and the stored
//! database is byte for byte what it was, or it was accepted and `Lab`'s
//! answers keep the whole guarantee (deliveries, replays, conflicts, tables,
//! the exported bytes' schema, integrity and types), a reopen
//! (`Lab::close`, `Lab::open`) finds a healthy database with the same rows,
//! and `reset()` starts afresh.
//!
//! The random mutations also go in through the back door (`testPlant`, what
//! a file damaged on disk looks like): the page must still open, report
//! the problem as not retryable, and reset.
//!
//! A module of `tests/browser/main.rs` (`wasm-pack test --headless --chrome -- --test browser`).

use std::collections::BTreeMap;

use hostile_db::{
    after_reload, after_reset, assert_catalogue_run, base_bytes, catalogue, judge, mutate,
    report_lines, tally, Counts, Failure, Hostile, Live, Rng, Verdict,
};
use inbox_lab::core::tables::{AccountRow, InboxRow};
use inbox_lab::wasm::{install_opfs, Lab};
use inbox_lab::{Event, Outcome, Receipt, Tables};
use serde_json::{json, Value};
use sqlite_wasm_rs::vfs::transfer::DbTransfer;
use sqlite_wasm_rs::vfs::VfsFilesManager;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::{console_log, wasm_bindgen_test as test};

use super::{hostile_db, remove};

/// How many random mutation cases run in the browser.
const MUTATION_CASES: usize = 120;

/// The live database: a `Lab` on OPFS, reopened by name.
struct LabLive {
    lab: Lab,
    name: String,
}

fn text_of(v: &JsValue) -> String {
    js_sys::JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| format!("{v:?}"))
}

fn json_of(v: &JsValue) -> Result<Value, String> {
    serde_json::from_str(&text_of(v)).map_err(|e| format!("{e}: {}", text_of(v)))
}

/// The error object the facade throws, as a [`Failure`].
fn failure(v: &JsValue) -> Failure {
    let j = json_of(v).unwrap_or(Value::Null);
    let text = |k: &str| j[k].as_str().unwrap_or_default().to_owned();
    Failure {
        kind: text("kind"),
        code: text("code"),
        field: j["field"].as_str().map(str::to_owned),
        http_status: j["http_status"]
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(0),
        // Unknown means "not shown as final": the suite then fails.
        retryable: j["retryable"].as_bool().unwrap_or(true),
        message: if j.is_null() {
            text_of(v)
        } else {
            text("message")
        },
    }
}

fn int(v: &Value, k: &str) -> Result<i64, String> {
    v[k].as_i64()
        .ok_or_else(|| format!("{k} is not an integer in {v}"))
}

fn receipt_of(v: &Value) -> Result<Option<Receipt>, String> {
    match v {
        Value::Null => Ok(None),
        r => Ok(Some(Receipt {
            seq: int(r, "seq")?,
            balance_after: int(r, "balance_after")?,
        })),
    }
}

fn tables_of(v: &JsValue) -> Result<Tables, String> {
    let j = json_of(v)?;
    let list = |k: &str| j[k].as_array().cloned().ok_or(format!("no {k} in {j}"));
    let accounts = list("accounts")?
        .iter()
        .map(|a| {
            Ok(AccountRow {
                id: int(a, "id")?,
                balance: int(a, "balance")?,
            })
        })
        .collect::<Result<_, String>>()?;
    let inbox = list("inbox")?
        .iter()
        .map(|r| {
            let text = |k: &str| {
                r[k].as_str()
                    .map(str::to_owned)
                    .ok_or(format!("{k} in {r}"))
            };
            Ok(InboxRow {
                source: text("source")?,
                event_id: text("event_id")?,
                account_id: int(r, "account_id")?,
                amount: int(r, "amount")?,
                receipt: receipt_of(&r["receipt"])?,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Tables { accounts, inbox })
}

fn as_failure(e: String) -> Failure {
    Failure {
        kind: "unreadable answer".into(),
        code: String::new(),
        field: None,
        http_status: 0,
        retryable: true,
        message: e,
    }
}

impl Live for LabLive {
    fn import(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.lab
            .import(bytes.to_vec())
            .map(drop)
            .map_err(|e| failure(&e))
    }

    fn export(&mut self) -> Result<Vec<u8>, Failure> {
        self.lab.export().map_err(|e| failure(&e))
    }

    fn deliver(&mut self, e: &Event) -> Result<Outcome, Failure> {
        let event = json!({
            "source": e.source(),
            "event_id": e.event_id(),
            "account_id": e.account_id(),
            "amount": e.amount(),
        });
        let event = js_sys::JSON::parse(&event.to_string()).map_err(|e| failure(&e))?;
        let answer = self
            .lab
            .deliver(event, JsValue::UNDEFINED, JsValue::UNDEFINED)
            .map_err(|e| failure(&e))?;
        let j = json_of(&answer).map_err(as_failure)?;
        let receipt = receipt_of(&j["receipt"])
            .map_err(as_failure)?
            .ok_or_else(|| as_failure(format!("no receipt in {j}")))?;
        match j["outcome"].as_str() {
            Some("applied") => Ok(Outcome::Applied(receipt)),
            Some("duplicate") => Ok(Outcome::Duplicate(receipt)),
            _ => Err(as_failure(format!("unknown answer {j}"))),
        }
    }

    fn tables(&mut self) -> Result<Tables, Failure> {
        let t = self.lab.tables().map_err(|e| failure(&e))?;
        tables_of(&t).map_err(as_failure)
    }

    fn add_account(&mut self, id: i64) -> Result<bool, Failure> {
        #[allow(clippy::cast_precision_loss)] // ids are at most 2^53-1
        let id = JsValue::from_f64(id as f64);
        self.lab.add_account(id).map_err(|e| failure(&e))
    }
}

impl LabLive {
    async fn open(name: &str) -> Result<LabLive, String> {
        let pool = install_opfs().await.map_err(|e| e.to_string())?;
        for suffix in ["", "-journal", "-wal"] {
            pool.remove(&format!("{name}{suffix}"))
                .map_err(|e| e.to_string())?;
        }
        let lab = Lab::open(name.into(), "opfs".into())
            .await
            .map_err(|e| text_of(&e))?;
        Ok(LabLive {
            lab,
            name: name.into(),
        })
    }

    /// A fresh database holding events of its own, which a refused import
    /// must keep.
    fn seed(&mut self) -> Result<(), String> {
        self.lab.reset().map_err(|e| text_of(&e))?;
        self.add_account(5).map_err(|f| f.message)?;
        for (id, account, amount) in [("own-1", 1, 11), ("own-2", 5, 22)] {
            let e = Event::new("live", id, account, amount).map_err(|e| e.to_string())?;
            self.deliver(&e).map_err(|f| f.message)?;
        }
        Ok(())
    }

    /// Closes the database and opens it again, as a reload of the page
    /// does; the stored database must be healthy.
    async fn reopen(&mut self) -> Result<(), String> {
        self.lab.close();
        self.lab = Lab::open(self.name.clone(), "opfs".into())
            .await
            .map_err(|e| format!("reopen: {}", text_of(&e)))?;
        let problem = self.lab.problem();
        if problem.is_null() || problem.is_undefined() {
            Ok(())
        } else {
            Err(format!("reopened with a problem: {}", text_of(&problem)))
        }
    }

    fn reset(&mut self) -> Result<(), String> {
        self.lab
            .reset()
            .map_err(|e| format!("reset: {}", text_of(&e)))
    }

    /// The bytes put in place as the stored file, unchecked (a file
    /// damaged on disk): the page still opens, a problem is reported as not
    /// retryable, and reset works.
    async fn plant_and_recover(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.lab.close();
        let pool = install_opfs().await.map_err(|e| format!("plant: {e}"))?;
        for file in [
            self.name.clone(),
            format!("{}-journal", self.name),
            format!("{}-wal", self.name),
        ] {
            pool.remove(&file).map_err(|e| format!("plant: {e}"))?;
        }
        pool.import_db_unchecked(&self.name, bytes)
            .map_err(|e| format!("plant: {e}"))?;
        self.lab = Lab::open(self.name.clone(), "opfs".into())
            .await
            .map_err(|e| format!("opening a planted file threw: {}", text_of(&e)))?;
        let problem = self.lab.problem();
        if !(problem.is_null() || problem.is_undefined()) {
            let f = failure(&problem);
            if f.retryable || f.kind != "storage" {
                return Err(format!(
                    "a stored file the page cannot use must be a storage problem that is not retryable: {f:?}"
                ));
            }
        }
        self.reset()?;
        after_reset(self)
    }
}

/// One file: seed the live database, offer the file through `import`,
/// judge, and after an acceptance reopen and reset.
async fn run(live: &mut LabLive, file: &Hostile) -> Result<bool, String> {
    live.seed()?;
    match judge(live, file)? {
        Verdict::Refused(_) => Ok(false),
        Verdict::Accepted(kept) => {
            live.reopen().await?;
            after_reload(live, &kept)?;
            live.reset()?;
            after_reset(live)?;
            Ok(true)
        }
    }
}

fn report(title: &str, counts: &BTreeMap<&str, Counts>, total: Counts, started: f64) {
    let seconds = (js_sys::Date::now() - started) / 1000.0;
    for line in report_lines(title, counts, total, seconds) {
        console_log!("{line}");
    }
}

/// Every class of the catalogue, one case each and the pinned decisions, through
/// `Lab::import` on OPFS: refused with nothing changed, or accepted with the
/// whole guarantee, a healthy reopen and a working reset.
#[test]
async fn hostile_catalogue_through_the_lab_on_opfs() {
    let started = js_sys::Date::now();
    let name = "hostile-catalogue.sqlite3";
    let files = catalogue().unwrap_or_else(|e| panic!("the generator failed to build:\n{e}"));
    let mut live = LabLive::open(name).await.expect("open the Lab");
    let mut counts: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut failures = Vec::new();
    for file in &files {
        let entry = counts.entry(file.class).or_default();
        entry.0 += 1;
        match run(&mut live, file).await {
            Ok(true) => entry.1 += 1,
            Ok(false) => entry.2 += 1,
            Err(e) => failures.push(format!("{} / {}: {e}", file.class, file.name)),
        }
    }
    let total = counts
        .values()
        .fold((0, 0, 0), |t, c| (t.0 + c.0, t.1 + c.1, t.2 + c.2));
    report("browser hostile files", &counts, total, started);
    live.lab.close();
    remove(name).await;
    assert_catalogue_run(&counts, &failures, files.len());
}

/// Random mutations of a valid export (a fixed seed, so a failure names its
/// case), through `Lab::import` and through the back door: never
/// accepted-and-broken, never a page that cannot start or reset.
#[test]
async fn random_mutations_through_the_lab_on_opfs() {
    let started = js_sys::Date::now();
    let name = "hostile-mutations.sqlite3";
    let base = base_bytes().expect("the valid export");
    let mut rng = Rng::new(0x1111_2026);
    let mut live = LabLive::open(name).await.expect("open the Lab");
    let mut counts: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut total = (0, 0, 0);
    let mut failures = Vec::new();
    for case in 0..MUTATION_CASES {
        let mutations = rng.mutations();
        let mutated = mutate(&base, &mutations);
        let file = Hostile::any("mutation", format!("{mutations:?}"), mutated.bytes);
        let verdict = match run(&mut live, &file).await {
            Ok(accepted) => live.plant_and_recover(&file.bytes).await.map(|()| accepted),
            Err(e) => Err(e),
        };
        match verdict {
            Ok(accepted) => {
                let kinds: std::collections::BTreeSet<&str> = mutations
                    .iter()
                    .map(|m| match m {
                        hostile_db::Mutation::Flip { .. } => "byte flips",
                        hostile_db::Mutation::Schema(_) => "schema edits",
                        hostile_db::Mutation::Cell { .. } => "value changes",
                    })
                    .collect();
                for kind in kinds {
                    tally(counts.entry(kind).or_default(), accepted);
                }
                tally(&mut total, accepted);
            }
            Err(e) => failures.push(format!("case {case}, {mutations:?}: {e}")),
        }
    }
    report("browser random mutations", &counts, total, started);
    live.lab.close();
    remove(name).await;
    assert!(
        failures.is_empty(),
        "{} of {MUTATION_CASES} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(total.0 >= 100, "only {} cases ran", total.0);
    assert!(total.1 >= 10 && total.2 >= 10, "both verdicts: {total:?}");
}
