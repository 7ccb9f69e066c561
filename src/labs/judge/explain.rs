//! Why a check failed, in the reader's words (English and Russian), and
//! what ran, one statement per step, to replay at the reader's pace: what
//! the page shows under each check's first failure. Every sentence is made
//! from what really ran; a handler's own mistake is said as its mistake on
//! its line ([`ParseError::of`]), never as a damaged database.

use rusqlite::Connection;
use serde::Serialize;

use super::Failure;
use crate::core::error::Error;
use crate::labs::crash::{Row, Verdict as CrashVerdict};
use crate::labs::handlers::{Answer, Contender, Lang, ParseError, Payload, Run};
use crate::labs::race::{Arena, Race, StepResult};

/// A sentence in both languages of the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Said {
    pub en: String,
    pub ru: String,
}

pub(super) fn said(en: impl Into<String>, ru: impl Into<String>) -> Said {
    Said {
        en: en.into(),
        ru: ru.into(),
    }
}

/// The first failure of one check: which, why it is wrong, and its steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explained {
    #[serde(flatten)]
    pub failure: Failure,
    pub why: Said,
    pub steps: Vec<Said>,
}

/// Delivery `i`'s letter (A, B, C, …).
fn letter(i: usize) -> char {
    char::from(b'A' + u8::try_from(i % 26).unwrap_or(0))
}

/// An answer or an error kind in the learner's words, never the code's
/// name (`payload_conflict`): the page's `outcome.*` texts
/// (www/lib/errors.js), the Russian in quotes.
fn word(name: &str) -> Said {
    let (en, ru) = match name {
        "applied" => ("applied", "применено"),
        "duplicate" => ("duplicate", "дубликат"),
        "invalid_input" => ("invalid input", "неверный ввод"),
        "payload_conflict" => ("payload conflict", "конфликт данных"),
        "unknown_account" => ("unknown account", "нет такого счёта"),
        "no_stored_result" => ("no stored result", "нет сохранённого результата"),
        "balance_limit" => ("balance limit", "превышен предел баланса"),
        "busy" => ("busy", "занято"),
        "simulated_crash" => ("simulated crash", "имитация сбоя"),
        "storage" => ("storage error", "ошибка хранилища"),
        other => (other, other),
    };
    said(en, format!("«{ru}»"))
}

/// How a delivery ended: its answer, or why it failed.
pub(super) fn answered(result: &Result<Answer, Error>) -> Said {
    match result {
        Ok(a) => {
            let w = word(a.as_str());
            said(format!("answered {}", w.en), format!("ответ: {}", w.ru))
        }
        Err(e) => failed(e),
    }
}

fn failed(e: &Error) -> Said {
    if let Some(mistake) = ParseError::of(e) {
        return said(
            format!("failed: {}", mistake.text(Lang::En)),
            format!("ошибка: {}", mistake.text(Lang::Ru)),
        );
    }
    match e {
        // SQLite's own words (a constraint the handler's statement broke),
        // or a handler in Rust refused.
        Error::Storage { message, .. } => {
            said(format!("failed: {message}"), format!("ошибка: {message}"))
        }
        Error::InvalidInput { field, .. } if *field == crate::labs::handlers::HANDLER => {
            said(format!("failed: {e}"), format!("ошибка: {e}"))
        }
        e => {
            let (kind, status) = (word(e.kind()), e.http_status());
            said(
                format!("answered {} ({status})", kind.en),
                format!("ответ: {} ({status})", kind.ru),
            )
        }
    }
}

/// How an event is named: `event "evt-1" from "provider-a" (account 1,
/// amount 500)`.
pub(super) fn shown(e: &Payload) -> Said {
    let (id, source, account, amount) = (&e.event_id, &e.source, e.account_id, e.amount);
    said(
        format!("event {id:?} from {source:?} (account {account}, amount {amount})"),
        format!("событие {id:?} от {source:?} (счёт {account}, сумма {amount})"),
    )
}

/// The steps of a failure, one line each.
#[derive(Debug, Default)]
pub(super) struct Log(pub Vec<Said>);

impl Log {
    /// Delivery `who` ran `statements` (on `line`, if known) with `result`;
    /// `balance`: what is committed after it, if known.
    pub(super) fn step(
        &mut self,
        who: usize,
        line: Option<usize>,
        statements: &[&str],
        result: &Said,
        balance: Option<i64>,
    ) {
        let who = letter(who);
        let sql = statements.join("; ");
        let (line_en, line_ru) = line.map_or_else(Default::default, |l| {
            (format!(", line {l}"), format!(", строка {l}"))
        });
        let (bal_en, bal_ru) = balance.map_or_else(Default::default, |b| {
            (
                format!(" (committed balance {b})"),
                format!(" (зафиксированный баланс {b})"),
            )
        });
        self.0.push(said(
            format!("{who}{line_en}: {sql} → {}{bal_en}", result.en),
            format!("{who}{line_ru}: {sql} → {}{bal_ru}", result.ru),
        ));
    }

    pub(super) fn note(&mut self, s: Said) {
        self.0.push(s);
    }
}

/// The line of the statement `run` runs next (a handler text's).
pub(super) fn line(run: &Run) -> Option<usize> {
    match run {
        Run::Script(s) => s.next_line().filter(|&l| l > 0),
        Run::Atomic(_) => None,
    }
}

/// [`super::deliver`], each statement logged as delivery `who`'s step.
///
/// # Errors
/// As [`super::deliver`].
pub(super) fn deliver(
    conn: &Connection,
    contender: &Contender,
    payload: &Payload,
    who: usize,
    log: &mut Log,
) -> Result<Answer, Error> {
    let mut run = match contender.run(payload) {
        Ok(run) => run,
        Err(refused) => {
            let r = Err(refused);
            let how = answered(&r);
            log.note(said(
                format!("{}: before any statement: {}", letter(who), how.en),
                format!("{}: до первого оператора: {}", letter(who), how.ru),
            ));
            return r;
        }
    };
    loop {
        let (at, statements) = (line(&run), run.next_statements().unwrap_or(&[]));
        let result = match run.step(conn) {
            Ok(None) => {
                log.step(who, at, statements, &said("ran", "выполнен"), None);
                continue;
            }
            Ok(Some(answer)) => Ok(answer),
            Err(Error::Busy) => run.time_out(conn),
            Err(e) => Err(e),
        };
        log.step(who, at, statements, &answered(&result), None);
        return result;
    }
}

/// The race `schedule` of `event` replayed on `arena`, step by step, and
/// why it is wrong: the first wrong answer or failure, then how it ended.
pub(super) fn race(
    arena: &Arena,
    contender: &Contender,
    event: &Payload,
    schedule: Vec<usize>,
) -> Result<Explained, Error> {
    let mut race = Race::with_event(arena, contender.clone(), event.clone())?;
    let amount = event.amount;
    let mut log = Log::default();
    let mut first: Option<Said> = None;
    let mut applied = None;
    for (n, &i) in schedule.iter().enumerate() {
        let n = n + 1;
        let step = race.step(arena, i)?;
        let balance = step.committed.map(|c| c.balance);
        let result = match &step.result {
            StepResult::Ran => said("ran", "выполнен"),
            StepResult::Waiting => said(
                "waits: another delivery holds the write lock",
                "ждёт: блокировку записи держит другая доставка",
            ),
            StepResult::Answered { answer } => answered(&Ok(*answer)),
            StepResult::Failed { error, .. } => failed(error),
        };
        log.step(i, None, step.statements, &result, balance);
        let (x, other) = (letter(i), schedule[..n].iter().find(|&&j| j != i));
        let other = other.map_or('?', |&j| letter(j));
        let wrong = match &step.result {
            StepResult::Answered {
                answer: Answer::Duplicate,
            } if balance.is_none_or(|b| b < amount) => Some(said(
                format!(
                    "{x} answered duplicate at step {n} while {other}'s credit was not committed \
                     yet; if {other} then fails, the credit is lost."
                ),
                format!(
                    "Доставка {x} ответила «дубликат» на шаге {n}, когда зачисление доставки {other} ещё не было \
                     зафиксировано; если {other} затем упадёт, зачисление потеряно."
                ),
            )),
            StepResult::Answered {
                answer: Answer::Applied,
            } => applied.replace((x, n)).map(|(a, at)| {
                said(
                    format!(
                        "{a} answered applied at step {at}, and {x} again at step {n}: each took \
                         the event for new."
                    ),
                    format!(
                        "Доставка {a} ответила «применено» на шаге {at}, и доставка {x} — снова на шаге {n}: каждая \
                         приняла событие за новое."
                    ),
                )
            }),
            StepResult::Failed { .. } => Some(said(
                format!("{x} at step {n}: {}.", result.en),
                format!("Доставка {x} на шаге {n}: {}.", result.ru),
            )),
            _ => None,
        };
        first = first.or(wrong);
    }
    let n = schedule.len();
    let end = if race.finished() {
        let v = race.verdict(arena)?;
        let b = v.balance;
        if v.double_credit {
            said(
                format!(
                    " The account was credited more than once: balance {b}, expected {amount}."
                ),
                format!(" Счёт пополнен больше одного раза: баланс {b}, а должен быть {amount}."),
            )
        } else if v.lost_credit {
            said(
                format!(" The credit is lost: balance {b}, expected {amount}."),
                format!(" Зачисление потеряно: баланс {b}, а должен быть {amount}."),
            )
        } else if first.is_none() {
            said(
                " No delivery answered applied exactly once, as one of them must.",
                " Ни одна доставка не ответила «применено» ровно один раз, а одна должна.",
            )
        } else {
            said("", "")
        }
    } else {
        said(
            format!(
                " After step {n} every unfinished delivery waits for a lock another one holds: \
                 a deadlock (SQLite answers busy to one of them)."
            ),
            format!(
                " После шага {n} каждая незавершённая доставка ждёт блокировку, которую держит \
                 другая: взаимная блокировка (одной из них SQLite ответит busy)."
            ),
        )
    };
    let first = first.unwrap_or_else(|| said("", ""));
    Ok(Explained {
        failure: Failure::Race {
            deliveries: arena.deliveries(),
            schedule,
            event: event.clone(),
        },
        why: said(
            format!("{}{}", first.en, end.en).trim().to_owned(),
            format!("{}{}", first.ru, end.ru).trim().to_owned(),
        ),
        steps: log.0,
    })
}

/// Why a fault point failed: the delivery died after statement `n` (`sql`
/// on `line`), the retry then `retry`; `balance` against the event's
/// amount.
pub(super) fn fault(
    n: u64,
    event: &Payload,
    retry: &Result<Answer, Error>,
    balance: i64,
    log: Log,
) -> Explained {
    let (a, how) = (event.amount, answered(retry));
    let (en, ru) = if balance > a {
        ("the event was credited twice", "событие зачислено дважды")
    } else if balance < a {
        (
            "the event counts as done, but its credit is gone",
            "событие считается обработанным, а зачисления нет",
        )
    } else {
        (
            "a retry must answer applied or duplicate",
            "повтор должен ответить applied или duplicate",
        )
    };
    let e = shown(event);
    Explained {
        failure: Failure::Faults {
            after_statements: n,
            what: format!(
                "{}: the retry {}; balance {balance} (expected {a})",
                e.en, how.en
            ),
            event: event.clone(),
        },
        why: said(
            format!(
                "{}: A died after its statement {n}, and what it had not committed was \
                 lost. The sender's retry B then {}; balance {balance}, expected {a}: {en}.",
                upper(&e.en),
                how.en
            ),
            format!(
                "{}: доставка A упала после своего оператора {n}, и незафиксированное пропало. \
                 Повтор отправителя B — {}; баланс {balance}, а должен быть {a}: {ru}.",
                upper(&e.ru),
                how.ru
            ),
        ),
        steps: log.0,
    }
}

/// `text` with its first letter upper-case (a sentence that starts with it).
fn upper(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// The note where the fault check kills delivery A.
pub(super) fn dies(n: u64) -> Said {
    said(
        format!("A dies after statement {n}: what it has not committed is rolled back, and any answer is lost"),
        format!("A умирает после оператора {n}: незафиксированное откатывается, ответ (если был) потерян"),
    )
}

/// The article's cases as the reader reads them.
fn case_title(case: &str) -> Said {
    let (en, ru) = match case {
        "replay" => (
            "the same event delivered twice",
            "одно событие доставлено дважды",
        ),
        "other_payload" => (
            "the same key with another amount",
            "тот же ключ с другой суммой",
        ),
        "missing_account" => ("an account that does not exist", "несуществующий счёт"),
        "amount_0" => ("amount 0", "сумма 0"),
        "provider_b" => (
            "the same event id from another source",
            "тот же id события из другого источника",
        ),
        _ => (
            "another connection holding the lock past the timeout",
            "другое соединение держит блокировку дольше таймаута",
        ),
    };
    said(en, ru)
}

/// Why case `case` failed with `event`.
pub(super) fn case(case: &str, event: &Payload, wrong: &Said, log: Log) -> Explained {
    let (t, e) = (case_title(case), shown(event));
    Explained {
        failure: Failure::Case {
            case: case.to_owned(),
            what: format!("{}: {}", e.en, wrong.en),
            event: event.clone(),
        },
        why: said(
            format!("Case “{}”, {}: {}.", t.en, e.en, wrong.en),
            format!("Случай «{}», {}: {}.", t.ru, e.ru, wrong.ru),
        ),
        steps: log.0,
    }
}

/// `what` answered `got` where `want` is right; `None` when it is.
pub(super) fn expect(what: Said, got: &Result<Answer, Error>, want: &str) -> Option<Said> {
    let kind = match got {
        Ok(a) => a.as_str(),
        Err(e) => e.kind(),
    };
    (kind != want).then(|| {
        let (how, want) = (answered(got), word(want));
        said(
            format!("{}: {}; expected {}", what.en, how.en, want.en),
            format!("{}: {}, а ожидался ответ {}", what.ru, how.ru, want.ru),
        )
    })
}

/// `balance` where `want` is right, after `what`; `None` when it is.
pub(super) fn balance(balance: i64, want: i64, what: Said) -> Option<Said> {
    (balance != want).then(|| {
        said(
            format!("balance {balance} {}; expected {want}", what.en),
            format!("баланс {balance} {}, а должен быть {want}", what.ru),
        )
    })
}

/// The crash sweep's first failing try: `rows[at]` of a sweep in `mode`,
/// with the storage operations up to its crash as the steps.
pub fn crash(mode: &str, rows: &[Row], at: usize) -> Explained {
    let row = &rows[at];
    let mut steps: Vec<Said> = rows[..=at]
        .iter()
        .filter_map(|r| r.last.as_ref())
        .map(|o| {
            let (op, file) = (
                format!("{:?}", o.op).to_lowercase(),
                format!("{:?}", o.file).to_lowercase(),
            );
            let (k, offset, len) = (o.k, o.offset, o.len);
            said(
                format!("{k}: {op} {file}, offset {offset}, {len} bytes"),
                format!("{k}: {op} {file}, смещение {offset}, {len} байт"),
            )
        })
        .collect();
    steps.push(said(
        "the process is killed here; the next open recovers the file",
        "здесь процесс убит; следующее открытие восстанавливает файл",
    ));
    let (en, ru) = match row.outcome {
        CrashVerdict::LostAcknowledged => (
            "an event the sender was told was applied is missing after recovery",
            "после восстановления нет события, о котором отправителю ответили «применено»",
        ),
        _ => (
            "half an event survived: registered without its credit, or credited without its record",
            "уцелела половина события: запись без зачисления или зачисление без записи",
        ),
    };
    let k = row.k;
    Explained {
        failure: Failure::Crash {
            mode: mode.to_owned(),
            k,
        },
        why: said(
            format!("A crash right after storage operation {k} ({mode} journal): {en}."),
            format!("Обрыв сразу после операции записи {k} (журнал {mode}): {ru}."),
        ),
        steps,
    }
}
