//! Handlers in Rust judged as texts are: the article's handler
//! (`workshop/article.rs`) exactly as the built-in atomic text, the starter
//! as shipped (`workshop/handler.rs`, feature `workshop`) exactly as
//! check_then_act, a broken fixture broken for its reason, and statements
//! the checks refuse or an answer with the transaction open as failures
//! with their reason, never a panic.

use crate::labs::handlers::rust::{AnswerKind, Event, Last, Next, StepHandler};
use crate::labs::handlers::{builtin, parse};
use crate::labs::handlers::{workshop, Contender, Handler};
use crate::labs::judge::{judge, open_scratch, Report, JUDGE_BUDGET};

mod article {
    include!("../../../workshop/article.rs");
}

mod two_transactions {
    include!("../../../tests/fixtures/workshop_two_transactions.rs");
}

/// The seed of the events judged, as in the language's tests.
const SEED: u64 = 27;

/// Judges with 2 deliveries on a fresh scratch file, without the crash
/// sweep (child processes: `tests/judge.rs`), as the language's tests do.
fn judged(contender: &Contender) -> Report {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("judge.sqlite3");
    let path = path.to_str().expect("utf-8");
    judge(
        contender,
        &[2],
        || open_scratch(path),
        JUDGE_BUDGET,
        SEED,
        || Ok(None),
    )
    .expect("the judge runs")
}

fn text(h: Handler) -> Contender {
    Contender::Script {
        name: h.as_str().to_owned(),
        program: parse(builtin(h)).expect("a built-in parses"),
    }
}

/// Everything but the name is the same.
fn assert_same(rust: &Report, text: &Report) {
    assert_eq!(rust.verdict, text.verdict);
    assert_eq!(rust.race, text.race, "race");
    assert_eq!(rust.faults, text.faults, "faults");
    assert_eq!(rust.cases, text.cases, "cases");
    assert_eq!(rust.first_failure, text.first_failure, "first failure");
    assert_eq!(rust.stopped, None);
}

#[test]
fn the_articles_handler_in_rust_is_judged_exactly_as_the_atomic_text() {
    let rust = judged(&Contender::Rust(&article::HANDLER));
    assert_eq!(rust.handler, "article");
    assert_eq!(rust.verdict, "correct", "{rust:?}");
    assert!(rust.race.interleavings >= 2, "{:?}", rust.race);
    assert!(rust.faults.points >= 5, "{:?}", rust.faults);
    assert_same(&rust, &judged(&text(Handler::Atomic)));
}

#[cfg(feature = "workshop")]
#[test]
fn the_workshop_starter_as_shipped_is_judged_exactly_as_check_then_act() {
    let starter = workshop::handler().expect("the feature compiles the starter in");
    assert_eq!(starter.name(), "workshop");
    assert!(workshop::named("workshop").is_some());
    let rust = judged(&Contender::Rust(starter));
    assert_eq!(rust.handler, "workshop");
    assert_eq!(rust.verdict, "broken");
    assert!(rust.race.double_credits > 0, "{:?}", rust.race);
    assert!(
        matches!(
            rust.first_failure,
            Some(crate::labs::judge::Failure::Race { deliveries: 2, .. })
        ),
        "{:?}",
        rust.first_failure
    );
    assert_same(&rust, &judged(&text(Handler::CheckThenAct)));
}

#[cfg(not(feature = "workshop"))]
#[test]
fn without_the_feature_there_is_no_workshop_handler() {
    assert!(workshop::handler().is_none());
    assert!(workshop::named("workshop").is_none());
}

#[test]
fn a_handler_with_two_transactions_loses_a_credit_to_a_fault() {
    let rust = judged(&Contender::Rust(&two_transactions::HANDLER));
    assert_eq!(rust.verdict, "broken");
    assert!(rust.faults.lost_credits > 0, "{:?}", rust.faults);
    assert_same(&rust, &judged(&text(Handler::TwoTransactions)));
}

/// A handler whose second statement the checks refuse.
struct Refused;

impl StepHandler for Refused {
    fn name(&self) -> &'static str {
        "refused"
    }

    fn next(&self, step: u32, _: &Last, _: &Event) -> Next {
        match step {
            0 => Next::sql("BEGIN IMMEDIATE", 1),
            1 => Next::sql("DROP TABLE inbox", 2),
            2 => Next::sql("COMMIT", 3),
            _ => Next::Answer(AnswerKind::Applied),
        }
    }
}

/// A handler that answers inside its transaction.
struct AnswersOpen;

impl StepHandler for AnswersOpen {
    fn next(&self, step: u32, _: &Last, _: &Event) -> Next {
        match step {
            0 => Next::sql("BEGIN IMMEDIATE", 1),
            1 => Next::sql(
                "UPDATE accounts SET balance = balance + :amount WHERE id = :account_id",
                2,
            ),
            _ => Next::Answer(AnswerKind::Applied),
        }
    }
}

/// A handler that commits before it began.
struct CommitsFirst;

impl StepHandler for CommitsFirst {
    fn next(&self, step: u32, _: &Last, _: &Event) -> Next {
        match step {
            0 => Next::sql("COMMIT", 1),
            _ => Next::Answer(AnswerKind::Applied),
        }
    }
}

#[test]
fn a_rust_handlers_misplaced_commit_is_its_own_mistake_with_no_line_to_name() {
    static FIRST: CommitsFirst = CommitsFirst;
    let report = judged(&Contender::Rust(&FIRST));
    assert_eq!(report.verdict, "broken");
    let replay = &report.cases["replay"];
    assert!(
        replay.contains("failed: COMMIT runs with no transaction open: the handler's own mistake"),
        "{replay}"
    );
}

#[test]
fn a_refused_statement_or_an_answer_with_the_transaction_open_fails_with_its_reason() {
    static REFUSED: Refused = Refused;
    let report = judged(&Contender::Rust(&REFUSED));
    assert_eq!(report.verdict, "broken");
    let replay = &report.cases["replay"];
    assert!(
        replay.contains("refused: the statement of step 1 is refused"),
        "{replay}"
    );
    assert!(replay.contains("DROP"), "{replay}");

    static OPEN: AnswersOpen = AnswersOpen;
    let report = judged(&Contender::Rust(&OPEN));
    assert_eq!(report.verdict, "broken");
    let replay = &report.cases["replay"];
    assert!(
        replay.contains("answered at step 2 with its transaction still open"),
        "{replay}"
    );
}
