//! The situations a provider's real deliveries produce, and how each is
//! judged.
//!
//! Each scenario uses events of its own (fresh ids, an amount no other
//! event has), so it is judged alone: what the answers must be, and by how
//! much the balance must move ([`Played::expected`]). A receiver that moves
//! it by more paid something twice or paid a forgery; by less, it lost a
//! genuine event. [`Scenario::more`] and [`Scenario::less`] say which
//! mistake that shows in *this* scenario.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Barrier;
use std::time::Duration;

use serde::Serialize;

use super::deliver::{Delivery, Expect, Message, NoAnswer, Sender, Signing};
use super::report::{Judged, Run};
use super::state::State;

/// How far `webhook-timestamp` is moved for the stale and future requests:
/// twice the Standard Webhooks tolerance of 5 minutes.
const SKEW_SECS: i64 = 600;
/// The pause between a lost delivery and its retry.
const LOST_PAUSE: Duration = Duration::from_millis(300);
/// How long the second attempt of "retry while running" waits after the first.
const RETRY_GAP: Duration = Duration::from_millis(20);
/// A second read of the balance, after this, before a difference is
/// believed: a lost delivery may still be committing.
const SETTLE: Duration = Duration::from_millis(500);

/// What a wrong balance means in one scenario: a verdict word and why.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finding {
    pub kind: &'static str,
    pub why: &'static str,
}

// The page's verdict words (`crate::labs::verdicts::Kind`), where they fit.
const CREDITED_TWICE: &str = "credited_twice";
const CREDIT_LOST: &str = "credit_lost";
/// A delivery the receiver never answered properly, after retries.
const NO_ANSWER: &str = "no_answer";
/// A credit that no genuine event asked for.
const FORGED_CREDIT: &str = "forged_credit";

const LOST_NEW: Finding = Finding {
    kind: CREDIT_LOST,
    why: "an event it accepted was never credited",
};

/// One scenario: its name, what it sends, and what a wrong balance means.
pub(crate) struct Scenario {
    pub name: &'static str,
    pub title: &'static str,
    /// Forged and stale requests mean nothing without signatures.
    pub needs_signing: bool,
    pub more: Finding,
    pub less: Finding,
    play: fn(&Events<'_>) -> Played,
}

/// What a scenario sent, and how much it should have been credited.
pub(crate) struct Played {
    pub deliveries: Vec<Delivery>,
    pub expected: i64,
}

impl Played {
    fn new(deliveries: Vec<Delivery>, expected: i64) -> Played {
        Played {
            deliveries,
            expected,
        }
    }
}

/// Every scenario, in the order they run.
const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "new_event",
        title: "a new event",
        needs_signing: false,
        more: Finding {
            kind: CREDITED_TWICE,
            why: "one delivery of one event credited more than its amount",
        },
        less: LOST_NEW,
        play: new_event,
    },
    Scenario {
        name: "same_again",
        title: "the same event again",
        needs_signing: false,
        more: Finding {
            kind: CREDITED_TWICE,
            why: "a repeat of an event already processed was credited again: nothing durable and \
                  shared said it was seen before the credit committed (no record, a record in \
                  one process's memory that another instance or a restart lacks, or a credit \
                  committed before the registration that refuses the repeat)",
        },
        less: LOST_NEW,
        play: same_again,
    },
    Scenario {
        name: "concurrent",
        title: "identical deliveries at once",
        needs_signing: false,
        more: Finding {
            kind: CREDITED_TWICE,
            why: "identical deliveries at the same moment were credited more than once: \
                  checking for the event and registering it are separate steps (check-then-act, \
                  or a credit committed apart from the registration), so two of them both saw \
                  \"new\"",
        },
        less: LOST_NEW,
        play: concurrent,
    },
    Scenario {
        name: "lost_response",
        title: "a lost answer, then the retry",
        needs_signing: false,
        more: Finding {
            kind: CREDITED_TWICE,
            why: "the retry after a lost answer was credited again",
        },
        less: Finding {
            kind: CREDIT_LOST,
            why: "the event was never credited: the attempt whose answer was lost registered it \
                  without its credit, and the retry was taken as a duplicate",
        },
        play: lost_response,
    },
    Scenario {
        name: "retry_while_running",
        title: "a retry while the first attempt still runs",
        needs_signing: false,
        more: Finding {
            kind: CREDITED_TWICE,
            why: "a retry that arrived while the first attempt was still running was credited \
                  too: the first attempt had not yet made its registration visible",
        },
        less: LOST_NEW,
        play: retry_while_running,
    },
    Scenario {
        name: "id_stripped_or_changed",
        title: "webhook-id stripped, then changed, same body",
        needs_signing: false,
        more: Finding {
            kind: CREDITED_TWICE,
            why: "the body sent again without its webhook-id was credited again: a delivery \
                  with no id cannot be deduplicated and must be refused",
        },
        less: Finding {
            kind: CREDIT_LOST,
            why: "a new event whose body equals an earlier one's was not credited: the receiver \
                  deduplicates on the body, not on webhook-id (two equal payments are two events)",
        },
        play: id_stripped_or_changed,
    },
    Scenario {
        name: "other_payload",
        title: "the same id with another payload",
        needs_signing: false,
        more: Finding {
            kind: CREDITED_TWICE,
            why: "another payload under an id already processed was applied: the receiver \
                  replaced or re-applied the stored event instead of refusing the conflict",
        },
        less: LOST_NEW,
        play: other_payload,
    },
    Scenario {
        name: "forged_first",
        title: "a forged signature sent first with the real id",
        needs_signing: true,
        more: Finding {
            kind: FORGED_CREDIT,
            why: "a request with a forged signature was credited",
        },
        less: Finding {
            kind: CREDIT_LOST,
            why: "the genuine event was never credited: the forged request sent first \
                  registered its id, so the genuine one was taken as a duplicate (the signature \
                  is checked after the dedup insert: dedup poisoning)",
        },
        play: forged_first,
    },
    Scenario {
        name: "stale_and_future",
        title: "a stale and a future timestamp",
        needs_signing: true,
        more: Finding {
            kind: FORGED_CREDIT,
            why: "a request stamped 10 minutes in the past or future was credited: without a \
                  timestamp check a captured request can be replayed under a fresh id forever",
        },
        less: LOST_NEW,
        play: stale_and_future,
    },
    Scenario {
        name: "interleaved",
        title: "deliveries of different events interleaved",
        needs_signing: false,
        more: Finding {
            kind: CREDITED_TWICE,
            why: "with deliveries of several events interleaved, one of them was credited twice",
        },
        less: Finding {
            kind: CREDIT_LOST,
            why: "with deliveries of several events interleaved, one of them was never credited",
        },
        play: interleaved,
    },
];

/// Fresh events for a scenario: a new id and an amount no other event of
/// the run has, so that one balance tells every event's credits apart and
/// no two bodies are equal unless a scenario makes them so.
struct Events<'a> {
    pub sender: &'a Sender,
    next: AtomicI64,
}

impl Events<'_> {
    fn fresh(&self) -> (String, i64) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        (self.sender.event_id(n as usize), 100 + n)
    }

    fn genuine(&self) -> (Message, i64) {
        let (id, amount) = self.fresh();
        (self.sender.message(&id, amount), amount)
    }
}

fn new_event(ev: &Events<'_>) -> Played {
    let (msg, amount) = ev.genuine();
    Played::new(
        vec![ev.sender.deliver("the event", &msg, Expect::Accepted)],
        amount,
    )
}

fn same_again(ev: &Events<'_>) -> Played {
    let (msg, amount) = ev.genuine();
    let first = ev.sender.deliver("first delivery", &msg, Expect::Accepted);
    let again = ev
        .sender
        .deliver("the same event again", &fresh_stamp(&msg), Expect::Accepted);
    Played::new(vec![first, again], amount)
}

fn concurrent(ev: &Events<'_>) -> Played {
    let (msg, amount) = ev.genuine();
    let n = ev.sender.concurrency;
    let barrier = Barrier::new(n);
    let deliveries = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait(); // all of them leave together
                    ev.sender
                        .deliver("one of the identical deliveries", &msg, Expect::Accepted)
                })
            })
            .collect();
        joined(handles)
    });
    Played::new(deliveries, amount)
}

fn lost_response(ev: &Events<'_>) -> Played {
    let (msg, amount) = ev.genuine();
    let lost = ev.sender.send_and_close(&msg);
    std::thread::sleep(LOST_PAUSE);
    let retry = ev
        .sender
        .deliver("the retry", &fresh_stamp(&msg), Expect::Accepted);
    Played::new(vec![lost, retry], amount)
}

fn retry_while_running(ev: &Events<'_>) -> Played {
    let (msg, amount) = ev.genuine();
    let deliveries = std::thread::scope(|s| {
        let first = s.spawn(|| ev.sender.deliver("first attempt", &msg, Expect::Accepted));
        std::thread::sleep(RETRY_GAP);
        let retry = fresh_stamp(&msg);
        let second = s.spawn(move || ev.sender.deliver("the retry", &retry, Expect::Accepted));
        joined(vec![first, second])
    });
    Played::new(deliveries, amount)
}

fn other_payload(ev: &Events<'_>) -> Played {
    let (msg, amount) = ev.genuine();
    let first = ev.sender.deliver("the event", &msg, Expect::Accepted);
    let (_, other_amount) = ev.fresh();
    let other = ev.sender.message(&msg.signed_id, other_amount);
    let conflict = ev
        .sender
        .deliver("its id with another amount", &other, Expect::Settled);
    Played::new(vec![first, conflict], amount)
}

fn forged_first(ev: &Events<'_>) -> Played {
    let (msg, amount) = ev.genuine();
    let (_, forged_amount) = ev.fresh();
    let forged = Message {
        signing: Signing::Forged,
        ..ev.sender.message(&msg.signed_id, forged_amount)
    };
    let forged = ev
        .sender
        .deliver("forged, sent first", &forged, Expect::Refused);
    let genuine = ev
        .sender
        .deliver("the genuine event", &msg, Expect::Accepted);
    Played::new(vec![forged, genuine], amount)
}

fn stale_and_future(ev: &Events<'_>) -> Played {
    let deliveries = [
        ("stale (10 min old)", -SKEW_SECS),
        ("from 10 min ahead", SKEW_SECS),
    ]
    .into_iter()
    .map(|(what, skew)| {
        let (msg, _) = ev.genuine();
        let skewed = Message {
            timestamp: msg.timestamp + skew,
            ..msg
        };
        ev.sender.deliver(what, &skewed, Expect::Refused)
    })
    .collect();
    Played::new(deliveries, 0)
}

fn id_stripped_or_changed(ev: &Events<'_>) -> Played {
    let (msg, amount) = ev.genuine();
    let first = ev.sender.deliver("the event", &msg, Expect::Accepted);
    let stripped = Message {
        id: None,
        ..fresh_stamp(&msg)
    };
    let stripped = ev
        .sender
        .deliver("its body without webhook-id", &stripped, Expect::Refused);
    let (new_id, _) = ev.fresh();
    let changed = Message {
        id: Some(new_id.clone()),
        signed_id: new_id,
        ..fresh_stamp(&msg)
    };
    let changed = ev
        .sender
        .deliver("a new event with the same body", &changed, Expect::Accepted);
    Played::new(vec![first, stripped, changed], 2 * amount)
}

fn interleaved(ev: &Events<'_>) -> Played {
    let events: Vec<(Message, i64)> = (0..3).map(|_| ev.genuine()).collect();
    // a b a c b c: every event twice, each repeat overlapping another event.
    let order = [0, 1, 0, 2, 1, 2];
    let deliveries = std::thread::scope(|s| {
        let handles: Vec<_> = order
            .iter()
            .map(|&i| {
                let msg = fresh_stamp(&events[i].0);
                let handle =
                    s.spawn(move || ev.sender.deliver("interleaved", &msg, Expect::Accepted));
                std::thread::sleep(Duration::from_millis(5));
                handle
            })
            .collect();
        joined(handles)
    });
    Played::new(deliveries, events.iter().map(|(_, amount)| amount).sum())
}

/// The same message with the timestamp of now, as a provider's retry has.
fn fresh_stamp(msg: &Message) -> Message {
    Message {
        timestamp: super::deliver::now_secs(),
        ..msg.clone()
    }
}

fn joined(handles: Vec<std::thread::ScopedJoinHandle<'_, Delivery>>) -> Vec<Delivery> {
    handles
        .into_iter()
        .filter_map(|h| h.join().ok()) // a delivery thread does not panic
        .collect()
}

/// The verdict on one scenario.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The answers were right and the balance moved by what was expected.
    Correct,
    /// The answers were right; the balance was not given, so not seen.
    AnswersOnly,
    /// Not run (forged and stale requests need `--secret`).
    Skipped { why: String },
    /// What went wrong, in the page's verdict words where they fit.
    Broken { kind: String, why: String },
}

/// Runs every scenario against `sender`'s targets, reading `state` around each.
pub(crate) fn run_all(sender: &Sender, mut state: State) -> Run {
    let mut run = Run::new(sender, &state);
    let events = Events {
        sender,
        next: AtomicI64::new(1),
    };
    for (i, scenario) in SCENARIOS.iter().enumerate() {
        super::report::progress(i, SCENARIOS.len(), scenario);
        if scenario.needs_signing && !sender.signed() {
            let why = "needs --secret (requests are unsigned)".to_owned();
            run.push(Judged::new(
                scenario,
                Verdict::Skipped { why },
                None,
                None,
                None,
            ));
            continue;
        }
        let before = match state.balance() {
            Ok(b) => b,
            Err(e) => return run.stop(format!("cannot read the receiver's state: {e}")),
        };
        let played = (scenario.play)(&events);
        if let Some(stop) = could_not_run(&played) {
            return run.stop(stop);
        }
        let mut after = state.balance();
        if after
            .clone()
            .ok()
            .flatten()
            .zip(before)
            .is_some_and(|(a, b)| a - b != played.expected)
        {
            std::thread::sleep(SETTLE);
            after = state.balance();
        }
        let after = match after {
            Ok(a) => a,
            Err(e) => return run.stop(format!("cannot read the receiver's state: {e}")),
        };
        let verdict = judge(scenario, &played, before.zip(after));
        // A receiver that does not answer would only time out again.
        let silent = matches!(&verdict, Verdict::Broken { kind, .. } if kind == NO_ANSWER);
        run.push(Judged::new(scenario, verdict, Some(played), before, after));
        if silent {
            break;
        }
    }
    super::report::progress_done();
    run
}

/// The reason the run cannot go on: nothing listens, or time is up.
fn could_not_run(played: &Played) -> Option<String> {
    played
        .deliveries
        .iter()
        .flat_map(|d| &d.attempts)
        .find(|e| {
            matches!(
                e.no_answer,
                Some(NoAnswer::Unreachable | NoAnswer::Deadline)
            )
        })
        .map(|e| format!("{}: {}", e.url, e.error.as_deref().unwrap_or("no answer")))
}

/// Judges a scenario: first the answers, then the balance (`before`,
/// `after`), if it was read.
pub fn judge(scenario: &Scenario, played: &Played, balance: Option<(i64, i64)>) -> Verdict {
    if let Some(why) = played.deliveries.iter().find_map(wrong_answer) {
        let kind = if why.starts_with("no answer") {
            NO_ANSWER
        } else {
            "wrong_answer"
        };
        return Verdict::Broken {
            kind: kind.to_owned(),
            why,
        };
    }
    let Some((before, after)) = balance else {
        return Verdict::AnswersOnly;
    };
    let finding = match (after - before).cmp(&played.expected) {
        std::cmp::Ordering::Equal => return Verdict::Correct,
        std::cmp::Ordering::Greater => scenario.more,
        std::cmp::Ordering::Less => scenario.less,
    };
    Verdict::Broken {
        kind: finding.kind.to_owned(),
        why: finding.why.to_owned(),
    }
}

/// Why a delivery's answer is wrong for what it expected, if it is.
fn wrong_answer(d: &Delivery) -> Option<String> {
    let last = d.last()?;
    let what = d.what;
    let Some(status) = last.status else {
        return match d.expect {
            Expect::Lost => None,
            _ => Some(format!(
                "no answer to {what}: {}",
                last.error.as_deref().unwrap_or("nothing came back")
            )),
        };
    };
    let answer = last.answer.as_deref().unwrap_or("");
    match (d.expect, status) {
        (Expect::Accepted, 200..=299) | (Expect::Refused, 400..=499) => None,
        (Expect::Settled, 200..=299 | 400..=499) => None,
        (_, 300..=399) => Some(format!(
            "{what} was answered {status}, a redirect: the probe follows none (a provider may \
             not either); give it the final URL"
        )),
        (Expect::Accepted, 400..=499) => Some(format!(
            "{what} was answered {status} {answer}: a genuine delivery refused{}",
            if matches!(status, 401 | 403) {
                " (is --secret the receiver's secret?)"
            } else {
                ""
            }
        )),
        (Expect::Refused, 200..=299) => Some(format!(
            "{what} was answered {status} {answer}: a request that must be refused was accepted"
        )),
        (_, 500..=599) => Some(format!(
            "{what} was answered {status} {answer} ({} attempts): a provider retries a 5xx, so \
             nothing ends this delivery; answer 2xx for a duplicate and 4xx for a request that \
             must not be applied",
            d.attempts.len()
        )),
        _ => Some(format!(
            "{what} was answered {status} {answer}, which no provider expects"
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::labs::verdicts::Kind;

    #[test]
    fn the_verdict_words_are_the_pages() {
        assert_eq!(super::CREDITED_TWICE, Kind::CreditedTwice.as_str());
        assert_eq!(super::CREDIT_LOST, Kind::CreditLost.as_str());
    }
}
