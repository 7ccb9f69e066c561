//! The probe's result: a report for people, or one JSON document — every
//! request, answer and balance read, and the verdict — that someone else
//! can check.

use std::io::IsTerminal;

use serde::Serialize;

use super::deliver::{Delivery, Sender, Signing};
use super::scenarios::{Played, Scenario, Verdict};
use super::state::State;

/// What the exit code says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Idempotent,
    Broken,
    CouldNotRun,
}

/// The whole run.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Run {
    urls: Vec<String>,
    state: String,
    signed: bool,
    concurrency: usize,
    scenarios: Vec<Judged>,
    /// Why the run stopped before its end (exit 2).
    could_not_run: Option<String>,
}

/// One scenario, what it sent and saw, and its verdict.
#[derive(Debug, Serialize)]
pub(crate) struct Judged {
    name: &'static str,
    title: &'static str,
    #[serde(flatten)]
    verdict: Verdict,
    balance_before: Option<i64>,
    balance_after: Option<i64>,
    /// By how much the genuine events of the scenario should move the balance.
    expected_change: Option<i64>,
    deliveries: Vec<Delivery>,
}

impl Judged {
    /// `played` and the balances read around it; `None` for a skipped scenario.
    pub fn new(
        scenario: &Scenario,
        verdict: Verdict,
        played: Option<Played>,
        balance_before: Option<i64>,
        balance_after: Option<i64>,
    ) -> Judged {
        Judged {
            name: scenario.name,
            title: scenario.title,
            verdict,
            balance_before,
            balance_after,
            expected_change: played.as_ref().map(|p| p.expected),
            deliveries: played.map(|p| p.deliveries).unwrap_or_default(),
        }
    }
}

impl Run {
    pub fn new(sender: &Sender, state: &State) -> Run {
        Run {
            urls: sender.targets.iter().map(|t| t.url.clone()).collect(),
            state: state.describe(),
            signed: sender.signed(),
            concurrency: sender.concurrency,
            scenarios: Vec::new(),
            could_not_run: None,
        }
    }

    /// A run stopped before it sent anything (bad arguments, no state).
    pub(crate) fn could_not_start(message: String) -> Run {
        Run {
            could_not_run: Some(message),
            ..Run::default()
        }
    }

    pub(crate) fn push(&mut self, judged: Judged) {
        self.scenarios.push(judged);
    }

    pub(crate) fn stop(mut self, message: String) -> Run {
        progress_done();
        self.could_not_run = Some(message);
        self
    }

    pub fn outcome(&self) -> Outcome {
        if self.could_not_run.is_some() {
            Outcome::CouldNotRun
        } else if self.first_failure().is_some() {
            Outcome::Broken
        } else {
            Outcome::Idempotent
        }
    }

    fn first_failure(&self) -> Option<&Judged> {
        self.scenarios
            .iter()
            .find(|j| matches!(j.verdict, Verdict::Broken { .. }))
    }

    fn seen(&self) -> bool {
        self.scenarios.iter().any(|j| j.balance_before.is_some())
    }

    /// The verdict in one sentence.
    fn summary(&self) -> String {
        if let Some(why) = &self.could_not_run {
            return format!("COULD NOT RUN: {why}");
        }
        match self.first_failure() {
            Some(Judged {
                name,
                title,
                verdict: Verdict::Broken { kind, why },
                ..
            }) => format!("BROKEN at {name} ({title}): {kind}: {why}"),
            _ if self.seen() => {
                "IDEMPOTENT: every answer was right and every genuine event was credited exactly \
                 once"
                    .to_owned()
            }
            _ => "IDEMPOTENT BY ITS ANSWERS: every answer was right, but without --state the \
                  probe could not see the effect (a double credit answers 200 too)"
                .to_owned(),
        }
    }
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    run: &'a Run,
    outcome: Outcome,
    first_failure: Option<&'static str>,
    summary: String,
}

/// Prints the report (or `--json`'s document) on stdout.
pub fn print(run: &Run, json: bool) {
    if json {
        let doc = Document {
            run,
            outcome: run.outcome(),
            first_failure: run.first_failure().map(|j| j.name),
            summary: run.summary(),
        };
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("inbox-lab probe: cannot encode the history as JSON: {e}"),
        }
        return;
    }
    if !run.urls.is_empty() {
        println!("probe: {}", run.urls.join(", "));
        println!(
            "state: {}; {}; {} deliveries at once",
            run.state,
            if run.signed { "signed" } else { "unsigned" },
            run.concurrency
        );
    }
    for j in &run.scenarios {
        let (word, detail) = match &j.verdict {
            Verdict::Correct => ("ok", None),
            Verdict::AnswersOnly => ("ok (answers)", None),
            Verdict::Skipped { why } => ("skipped", Some(why.clone())),
            Verdict::Broken { kind, why } => ("BROKEN", Some(format!("{kind}: {why}"))),
        };
        println!("  {word:<13} {:<24} {}", j.name, j.title);
        if let Some(detail) = detail {
            println!("  {:<13} {detail}", "");
        }
    }
    println!("{}", run.summary());
    if let Some(failed) = run.first_failure() {
        println!("history of {}:", failed.name);
        if let (Some(before), Some(after), Some(expected)) = (
            failed.balance_before,
            failed.balance_after,
            failed.expected_change,
        ) {
            println!(
                "  balance {before} -> {after}: moved by {}, while its genuine events add up to \
                 {expected}",
                after - before
            );
        }
        for d in &failed.deliveries {
            for e in &d.attempts {
                let answer = match (e.status, &e.error) {
                    (Some(s), _) => format!("{s} {}", e.answer.as_deref().unwrap_or("")),
                    (None, Some(err)) => format!("no answer: {err}"),
                    (None, None) => "(not read)".to_owned(),
                };
                println!(
                    "  +{}ms {} [{}] webhook-id={} ts={} signed={} {} -> {} ({} ms)",
                    e.at_ms,
                    e.url,
                    d.what,
                    e.webhook_id.as_deref().unwrap_or("(none)"),
                    e.webhook_timestamp,
                    if e.signed == Signing::Forged {
                        "forged"
                    } else {
                        "genuine"
                    },
                    e.body,
                    answer.trim_end(),
                    e.took_ms
                );
            }
        }
    }
}

/// The progress line on stderr: rewritten in place on a terminal, one line
/// per scenario otherwise.
pub(crate) fn progress(i: usize, n: usize, scenario: &Scenario) {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[Kprobe [{}/{n}] {}", i + 1, scenario.name);
    } else {
        eprintln!("probe [{}/{n}] {}", i + 1, scenario.name);
    }
}

pub(crate) fn progress_done() {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
}
