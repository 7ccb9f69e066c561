//! Six handlers × six things a sender does, and the verdict each must get.
//! The table is written by reasoning about each mistake (the comments say
//! why), not by running the code.

use rusqlite::Connection;

use super::*;
use crate::core::schema;
use crate::labs::handlers::Payload;

// The tests judge single deliveries: the referee watching one handler's
// delivery of a payload.
impl Referee {
    /// One delivery of `payload` by `handler`, judged: refused before any
    /// SQL if it breaks the input rules (then correct: nothing changed).
    fn deliver(
        &mut self,
        conn: &Connection,
        handler: Handler,
        payload: &Payload,
        fault: Option<Fault>,
    ) -> (Result<Answer, Error>, Trace, Verdict) {
        let event = match payload.to_event() {
            Ok(event) => event,
            Err(refused) => return (Err(refused), Trace::default(), Verdict::refused(handler)),
        };
        self.watch(
            conn,
            handler,
            fault,
            &event,
            |a| *a,
            || handler.deliver_traced(conn, payload, fault),
        )
    }
}

/// What the sender does with one event.
#[derive(Debug, Clone, Copy)]
enum Case {
    /// Delivers it once.
    Plain,
    /// The response is lost: delivers it again.
    LostResponse,
    /// The first attempt crashes after the INSERT; retried if the answer
    /// says so.
    CrashAfterInsert,
    /// The first attempt crashes after the UPDATE; retried if told to.
    CrashAfterUpdate,
    /// Amount 0: the input rules refuse it for every handler.
    AmountZero,
    /// Delivers it, then the same key with another amount.
    OtherPayload,
}

const CASES: [Case; 6] = [
    Case::Plain,
    Case::LostResponse,
    Case::CrashAfterInsert,
    Case::CrashAfterUpdate,
    Case::AmountZero,
    Case::OtherPayload,
];

use Kind::{
    Correct as C, CreditLost as Lost, CreditedTwice as Twice, FalseDuplicate as FalseDup,
    HistoryRewritten as Rewritten,
};

/// The verdict on the LAST delivery of each case, in the order of [`CASES`].
const EXPECTED: [(Handler, [Kind; 6]); 6] = [
    // Unique key + one transaction: right every time.
    (Handler::Atomic, [C, C, C, C, C, C]),
    // No inbox: a first delivery is right, every repeat pays again. It has
    // no INSERT, so "crash after insert" never fires (one clean delivery);
    // after the UPDATE the credit is already kept (autocommit) and the
    // retry credits again; another payload is credited on top.
    (Handler::NoDedup, [C, Twice, C, Twice, C, Twice]),
    // SELECT, UPDATE, INSERT, each autocommitted. After the INSERT both are
    // kept, so the retry is a true duplicate; after the UPDATE the credit is
    // kept but not the row: the retry finds nothing and credits again. It
    // does compare payloads (422).
    (Handler::CheckThenAct, [C, C, C, Twice, C, C]),
    // The event is registered in its own transaction: a crash after it (or
    // after the credit, rolled back alone) leaves the row without the
    // credit, and the retry is answered "duplicate": lost for good.
    (Handler::TwoTransactions, [C, C, Lost, Lost, C, C]),
    // One transaction, so crashes roll back; but another payload is taken
    // for a repeat ("duplicate", 200).
    (Handler::InsertOrIgnore, [C, C, C, C, C, FalseDup]),
    // One transaction, so crashes roll back; but every repeat replaces the
    // row and credits again, and another payload rewrites the stored one.
    (Handler::InsertOrReplace, [C, Twice, C, C, C, Rewritten]),
];

fn fresh() -> Connection {
    let mut conn = Connection::open_in_memory().expect("memory");
    schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).expect("prepare");
    schema::init(&mut conn, &[1]).expect("init");
    conn
}

fn payload(amount: i64) -> Payload {
    Payload {
        source: "provider-a".into(),
        event_id: "evt-1".into(),
        account_id: 1,
        amount,
    }
}

/// Runs `case` with `handler` on a fresh database; every verdict, in order.
fn play(handler: Handler, case: Case) -> Vec<Verdict> {
    let conn = fresh();
    let mut referee = Referee::default();
    let mut deliver = |amount, fault| referee.deliver(&conn, handler, &payload(amount), fault);
    let mut verdicts = Vec::new();
    match case {
        Case::Plain => verdicts.push(deliver(500, None).2),
        Case::AmountZero => verdicts.push(deliver(0, None).2),
        Case::LostResponse | Case::OtherPayload => {
            verdicts.push(deliver(500, None).2);
            let again = if matches!(case, Case::OtherPayload) {
                700
            } else {
                500
            };
            verdicts.push(deliver(again, None).2);
        }
        Case::CrashAfterInsert | Case::CrashAfterUpdate => {
            let fault = if matches!(case, Case::CrashAfterInsert) {
                Fault::AfterInsert
            } else {
                Fault::AfterUpdate
            };
            let (answer, _, verdict) = deliver(500, Some(fault));
            verdicts.push(verdict);
            if answer.is_err_and(|e| e.retryable()) {
                verdicts.push(deliver(500, None).2);
            }
        }
    }
    verdicts
}

#[test]
fn every_handler_and_case_gets_the_verdict_its_mistake_earns() {
    let mut wrong = Vec::new();
    for (handler, kinds) in EXPECTED {
        for (case, expected) in CASES.into_iter().zip(kinds) {
            let verdicts = play(handler, case);
            let last = verdicts.last().expect("at least one delivery");
            if last.kind != expected {
                wrong.push(format!(
                    "{handler} × {case:?}: {:?}, expected {expected:?}",
                    last.kind
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

#[test]
fn a_crash_that_kept_part_of_the_work_is_not_called_a_rollback() {
    // The first attempt's verdict: what the crash left behind.
    let cases = [
        (
            Handler::Atomic,
            Case::CrashAfterUpdate,
            Kind::Correct,
            (false, false),
        ),
        (
            Handler::NoDedup,
            Case::CrashAfterUpdate,
            Kind::FailedAfterCommit,
            (false, true),
        ),
        (
            Handler::CheckThenAct,
            Case::CrashAfterInsert,
            Kind::FailedAfterCommit,
            (true, true),
        ),
        (
            Handler::CheckThenAct,
            Case::CrashAfterUpdate,
            Kind::FailedAfterCommit,
            (false, true),
        ),
        (
            Handler::TwoTransactions,
            Case::CrashAfterInsert,
            Kind::FailedAfterCommit,
            (true, false),
        ),
        (
            Handler::TwoTransactions,
            Case::CrashAfterUpdate,
            Kind::FailedAfterCommit,
            (true, false),
        ),
        (
            Handler::InsertOrIgnore,
            Case::CrashAfterUpdate,
            Kind::Correct,
            (false, false),
        ),
    ];
    for (handler, case, kind, (row, credit)) in cases {
        let first = play(handler, case).remove(0);
        assert_eq!(first.heard, "simulated_crash", "{handler} × {case:?}");
        assert_eq!(
            (first.kind, first.kept),
            (kind, Kept { row, credit }),
            "{handler} × {case:?}"
        );
    }
}

#[test]
fn the_facts_behind_a_verdict_are_the_tables() {
    let lost = play(Handler::TwoTransactions, Case::CrashAfterInsert);
    let retry = lost.last().expect("retried");
    assert_eq!((retry.heard, retry.credits), ("duplicate", 0));
    assert_eq!(
        retry.balance,
        Some(Balance {
            account: 1,
            before: Some(0),
            after: Some(0)
        })
    );
    let twice = play(Handler::NoDedup, Case::LostResponse);
    let second = twice.last().expect("delivered twice");
    assert_eq!((second.credits_before, second.credits), (1, 2));
    assert_eq!(
        second.balance.map(|b| (b.before, b.after)),
        Some((Some(500), Some(1000)))
    );
    let rewritten = play(Handler::InsertOrReplace, Case::OtherPayload);
    let second = rewritten.last().expect("delivered twice");
    assert_eq!(second.stored_before.map(|s| s.amount), Some(500));
    assert_eq!(second.stored_after.map(|s| s.amount), Some(700));
    let refused = play(Handler::InsertOrIgnore, Case::AmountZero);
    assert_eq!(refused[0].heard, "refused");
}

#[test]
fn an_unwatched_registered_row_counts_as_credited_once() {
    let conn = fresh();
    let mut first = Referee::default();
    let (applied, _, _) = first.deliver(&conn, Handler::Atomic, &payload(500), None);
    assert_eq!(applied.expect("applied"), Answer::Applied);
    // A new referee (a reloaded page) did not watch that credit.
    let mut later = Referee::default();
    let (_, _, verdict) = later.deliver(&conn, Handler::NoDedup, &payload(500), None);
    assert!(!verdict.credits_known);
    assert_eq!((verdict.kind, verdict.credits), (Kind::CreditedTwice, 2));
}

#[test]
fn a_mistake_right_this_time_names_the_schedule_that_breaks_it() {
    for handler in Handler::ALL {
        let first = play(handler, Case::Plain).remove(0);
        assert_eq!(first.kind, Kind::Correct, "{handler}");
        assert_eq!(first.breaks_on, Schedule::breaking(handler), "{handler}");
        assert_eq!(
            play(handler, Case::AmountZero)[0].breaks_on,
            None,
            "{handler}: a refusal by the input rules"
        );
        let Some(schedule) = first.breaks_on else {
            assert_eq!(
                handler,
                Handler::Atomic,
                "only atomic is correct by construction"
            );
            continue;
        };
        // The schedule named really breaks it, and the wrong verdict names none.
        let case = match schedule {
            Schedule::Repeat => Case::LostResponse,
            Schedule::OtherPayload => Case::OtherPayload,
            Schedule::CrashAfterInsert => Case::CrashAfterInsert,
            Schedule::CrashAfterUpdate => Case::CrashAfterUpdate,
        };
        let last = play(handler, case).pop().expect("delivered");
        assert_ne!(
            last.kind,
            Kind::Correct,
            "{handler}: {schedule:?} did not break it"
        );
        assert_eq!(last.breaks_on, None, "{handler}");
    }
}

#[test]
fn a_crash_point_no_step_reached_says_why() {
    let missed = |handler, fault, repeat: bool| {
        let conn = fresh();
        let mut referee = Referee::default();
        if repeat {
            let (first, _, _) = referee.deliver(&conn, handler, &payload(500), None);
            assert_eq!(first.expect("applied"), Answer::Applied);
        }
        let (_, _, verdict) = referee.deliver(&conn, handler, &payload(500), Some(fault));
        verdict.unreached.map(|u| (u.fault, u.why))
    };
    let insert = Fault::AfterInsert;
    let update = Fault::AfterUpdate;
    // no_dedup has no INSERT into inbox at all.
    assert_eq!(
        missed(Handler::NoDedup, insert, false),
        Some((insert, Missed::Absent))
    );
    // A repeat: atomic's INSERT finds the key; check_then_act answers before its UPDATE.
    assert_eq!(
        missed(Handler::Atomic, insert, true),
        Some((insert, Missed::NoRow))
    );
    assert_eq!(
        missed(Handler::CheckThenAct, update, true),
        Some((update, Missed::NotRun))
    );
    // Reached: nothing to say.
    assert_eq!(missed(Handler::Atomic, insert, false), None);
    assert_eq!(missed(Handler::NoDedup, update, false), None);
}
