// The workshop's handler, in Rust. Edit it, then run
//
//     cargo xtask workshop
//
// which judges it (one JSON line, as `inbox-lab judge` prints: the
// article's cases, a fault after every statement with the sender's retry,
// every interleaving of 2 and 3 deliveries, the crash sweep in DELETE and
// WAL mode) and then serves the page with it listed as "workshop" in the
// race lab and the handler panel, to watch it step by step.
//
// This file is compiled into the crate with the feature `workshop`
// (src/labs/handlers/workshop.rs includes it), so it names the crate's items with
// `crate::`. A handler is a step program, the shape of every handler the
// lab runs (src/labs/handlers/rust.rs): at each `step` it names ONE SQL
// statement and the step to continue at (`Next::sql(SQL, then)`), or its
// answer (`Next::Answer(...)`). `last` is what the previous statement did:
// `last.changed()` (rows changed), `last.has_row()`, `last.int("amount")`.
// Parameters: :source, :event_id, :account_id, :amount. Another delivery
// of the same event may run between any two statements (the race), and the
// process may die between any two (the faults). Nothing is added for you:
// no BEGIN, no COMMIT; answering with a transaction open is a failure.
//
// As shipped it is "SELECT, then act" (the built-in check_then_act): it
// looks in the inbox, credits, then records — three separate commits. The
// judge finds a race of two deliveries that credits twice. Make it correct.
// The article's handler, written the same way, is workshop/article.rs (the
// tests judge it correct): read it after you tried.

use crate::labs::handlers::rust::{AnswerKind, Event, Last, Next, StepHandler};

/// The handler `cargo xtask workshop` judges.
pub static HANDLER: Workshop = Workshop;

pub struct Workshop;

const FIND: &str =
    "SELECT account_id, amount FROM inbox WHERE source = :source AND event_id = :event_id";
const CREDIT: &str = "UPDATE accounts SET balance = balance + :amount WHERE id = :account_id";
const RECORD: &str = "INSERT INTO inbox(source, event_id, account_id, amount) \
                      VALUES (:source, :event_id, :account_id, :amount)";

impl StepHandler for Workshop {
    fn next(&self, step: u32, last: &Last, event: &Event) -> Next {
        match step {
            // Seen before?
            0 => Next::sql(FIND, 1),
            1 if last.has_row() => {
                let same = last.int("account_id") == Some(event.account_id())
                    && last.int("amount") == Some(event.amount());
                Next::Answer(if same {
                    AnswerKind::Duplicate
                } else {
                    AnswerKind::Conflict
                })
            }
            // Not yet: credit (committed at once), then record it.
            1 => Next::sql(CREDIT, 2),
            2 if last.changed() == 0 => Next::Answer(AnswerKind::UnknownAccount),
            2 => Next::sql(RECORD, 3),
            _ => Next::Answer(AnswerKind::Applied),
        }
    }
}
