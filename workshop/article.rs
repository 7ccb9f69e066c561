// The article's handler as a step program: the unique key decides which
// delivery is first, and ONE transaction registers the event and credits
// the account (src/labs/handlers/builtin/atomic.inbox says the same in the
// handler language). The tests (src/labs/judge/workshop_tests.rs) judge it
// correct, with exactly the built-in atomic handler's counts. Copy it into
// workshop/handler.rs only after you tried.

use crate::labs::handlers::rust::{AnswerKind, Event, Last, Next, StepHandler};

pub static HANDLER: Article = Article;

pub struct Article;

const BEGIN: &str = "BEGIN IMMEDIATE";
const REGISTER: &str = "INSERT INTO inbox(source, event_id, account_id, amount, received_at) \
     VALUES (:source, :event_id, :account_id, :amount, (SELECT now FROM lab_clock)) \
     ON CONFLICT(source, event_id) DO NOTHING";
const STORED: &str = "SELECT account_id, amount, receipt_seq, balance_after FROM inbox \
     WHERE source = :source AND event_id = :event_id";
const CREDIT: &str = "UPDATE accounts SET balance = balance + :amount \
     WHERE id = :account_id AND balance <= 9007199254740991 - :amount RETURNING balance";
const RECEIPT: &str =
    "UPDATE receipt_counter SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq";
const STAMP: &str = "UPDATE inbox SET receipt_seq = (SELECT last_seq FROM receipt_counter WHERE id = 1), \
     balance_after = (SELECT balance FROM accounts WHERE id = :account_id) \
     WHERE source = :source AND event_id = :event_id";

impl StepHandler for Article {
    fn name(&self) -> &'static str {
        "article"
    }

    fn next(&self, step: u32, last: &Last, event: &Event) -> Next {
        match step {
            0 => Next::sql(BEGIN, 1),
            1 => Next::sql(REGISTER, 2),
            // Seen before: the same payload is a duplicate, another one a conflict.
            2 if last.changed() == 0 => Next::sql(STORED, 10),
            2 => Next::sql(CREDIT, 3),
            3 if !last.has_row() => Next::sql("ROLLBACK", 20),
            3 => Next::sql(RECEIPT, 4),
            4 => Next::sql(STAMP, 5),
            5 => Next::sql("COMMIT", 6),
            6 => Next::Answer(AnswerKind::Applied),
            10 if last.int("account_id") == Some(event.account_id())
                && last.int("amount") == Some(event.amount()) =>
            {
                Next::sql("COMMIT", 11)
            }
            10 => Next::sql("ROLLBACK", 12),
            11 => Next::Answer(AnswerKind::Duplicate),
            12 => Next::Answer(AnswerKind::Conflict),
            _ => Next::Answer(AnswerKind::UnknownAccount),
        }
    }
}
