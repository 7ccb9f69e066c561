//! Why a handler text was refused: a stable code, the line and column it
//! points at, the values the sentence mentions, and the sentence in English
//! and in Russian.
//!
//! Invariant: every [`ScriptCode`] has a text in both languages (the match below
//! is exhaustive), and a refusal always names a line and a column (1-based;
//! column 1 when the whole line is meant).

use std::fmt;

use serde::Serialize;

use super::HANDLER;
use crate::core::error::{Error, Params, Reason};

/// The languages a refusal is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Ru,
}

crate::core::error::code_enum! {
    /// Why a handler text does not parse or is not allowed.
    ScriptCode {
        /// Params: `expected` (a phrase key, see `phrase`, or a keyword),
        /// `found` (a quoted token, or a phrase key).
        Expected => "expected",
        /// Params: `name`.
        UnknownParameter => "unknown_parameter",
        /// Params: `found` (`?`, `?1`).
        PositionalParameter => "positional_parameter",
        /// Params: `found`.
        UnknownAnswer => "unknown_answer",
        /// Params: `word` (`ELSE`, `END`).
        WithoutIf => "without_if",
        /// Params: `if_line`.
        MissingEnd => "missing_end",
        /// Params: none. A path reaches the end of the text without ANSWER.
        MissingAnswer => "missing_answer",
        /// Params: `answer_line`.
        Unreachable => "unreachable",
        /// Params: `word` (`IF`, `ANSWER`).
        BeforeStatement => "before_statement",
        /// Params: `what` (`ATTACH`, `PRAGMA x`, `CREATE`, or a table's
        /// name), `action` (`read`, `write`, `schema`; only with a table).
        Refused => "refused",
        /// Params: `message` (SQLite's own).
        Sql => "sql",
        /// Params: none.
        MultipleStatements => "multiple_statements",
        /// Params: `bytes`, `max`.
        LineTooLong => "line_too_long",
        /// Params: `bytes`, `max`.
        TextTooLong => "text_too_long",
        /// Params: `max`.
        TooManyStatements => "too_many_statements",
        /// Params: `max`.
        TooDeep => "too_deep",
        /// Params: none.
        NoStatements => "no_statements",
        /// Params: none. `ON BUSY` after the first statement, or twice.
        OnBusyPlace => "on_busy_place",
        /// Params: none.
        MixedAndOr => "mixed_and_or",
        /// While running (the handler's own mistake, `ParseError::into_error`):
        /// COMMIT or ROLLBACK with no transaction open. Params: `word`.
        NoTransaction => "no_transaction",
        /// While running: BEGIN inside an open transaction. Params: none.
        NestedBegin => "nested_begin",
        /// While running: ANSWER with the transaction still open. Params:
        /// `step` for a handler in Rust (else the line).
        AnsweredOpen => "answered_open",
    }
}

/// A refused handler text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParseError {
    pub code: ScriptCode,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub params: Params,
}

impl ParseError {
    pub(super) fn new(code: ScriptCode, line: usize, column: usize) -> ParseError {
        ParseError {
            code,
            line,
            column,
            params: Params::new(),
        }
    }

    #[must_use]
    pub(super) fn with(mut self, name: &'static str, value: impl fmt::Display) -> ParseError {
        self.params.insert(name, value.to_string());
        self
    }

    fn p(&self, name: &str) -> &str {
        self.params.get(name).map_or("", String::as_str)
    }

    /// The sentence, without the position.
    pub fn text(&self, lang: Lang) -> String {
        use ScriptCode::*;
        let p = |n| self.p(n);
        match (lang, self.code) {
            (_, Expected) => {
                let (expected, found) = (phrase(lang, p("expected")), phrase(lang, p("found")));
                match lang {
                    Lang::En => format!("expected {expected}, found {found}"),
                    Lang::Ru => format!("ожидалось {expected}, а здесь {found}"),
                }
            }
            (Lang::En, UnknownParameter) => format!(
                "unknown parameter {}: a handler has :source, :event_id, :account_id and :amount",
                p("name")
            ),
            (Lang::Ru, UnknownParameter) => format!(
                "неизвестный параметр {}: у обработчика есть :source, :event_id, :account_id и :amount",
                p("name")
            ),
            (Lang::En, PositionalParameter) => format!(
                "{} is a positional parameter; name it: :source, :event_id, :account_id or :amount",
                p("found")
            ),
            (Lang::Ru, PositionalParameter) => format!(
                "{} — позиционный параметр; назовите его: :source, :event_id, :account_id или :amount",
                p("found")
            ),
            (Lang::En, UnknownAnswer) => format!(
                "unknown answer {}: expected applied, duplicate, conflict or unknown_account",
                p("found")
            ),
            (Lang::Ru, UnknownAnswer) => format!(
                "неизвестный ответ {}: ожидался applied, duplicate, conflict или unknown_account",
                p("found")
            ),
            (Lang::En, WithoutIf) => format!("{} without an IF", p("word")),
            (Lang::Ru, WithoutIf) => format!("{} без IF", p("word")),
            (Lang::En, MissingEnd) => {
                format!("the IF of line {} is never closed: expected END", p("if_line"))
            }
            (Lang::Ru, MissingEnd) => {
                format!("IF из строки {} не закрыт: нужен END", p("if_line"))
            }
            (Lang::En, MissingAnswer) => {
                "a path reaches the end of the handler without ANSWER".to_owned()
            }
            (Lang::Ru, MissingAnswer) => {
                "один из путей доходит до конца обработчика без ANSWER".to_owned()
            }
            (Lang::En, Unreachable) => format!(
                "this line never runs: the delivery already answered on line {}",
                p("answer_line")
            ),
            (Lang::Ru, Unreachable) => format!(
                "эта строка никогда не выполнится: доставка уже ответила в строке {}",
                p("answer_line")
            ),
            (Lang::En, BeforeStatement) => format!(
                "{} before any statement: it has nothing to look at yet",
                p("word")
            ),
            (Lang::Ru, BeforeStatement) => format!(
                "{} до первого оператора: смотреть ещё не на что",
                p("word")
            ),
            (Lang::En, Refused) => {
                let what = match p("action") {
                    "read" => format!("reading {}", p("what")),
                    "write" => format!("writing {}", p("what")),
                    "schema" => "changing the schema (CREATE, DROP, ALTER)".to_owned(),
                    _ => p("what").to_owned(),
                };
                format!(
                    "{what} is not allowed in a handler: only BEGIN, COMMIT, ROLLBACK, SELECT, INSERT, UPDATE and DELETE on the lab's tables"
                )
            }
            (Lang::Ru, Refused) => {
                let refused = match p("action") {
                    "read" => format!("чтение таблицы {} в обработчике запрещено", p("what")),
                    "write" => format!("запись в таблицу {} в обработчике запрещена", p("what")),
                    "schema" => {
                        "менять схему (CREATE, DROP, ALTER) в обработчике запрещено".to_owned()
                    }
                    _ => format!("{} в обработчике запрещено", p("what")),
                };
                format!(
                    "{refused}: можно только BEGIN, COMMIT, ROLLBACK, SELECT, INSERT, UPDATE и DELETE над таблицами лаборатории"
                )
            }
            (Lang::En, Sql) => format!("SQLite does not accept this statement: {}", p("message")),
            (Lang::Ru, Sql) => format!("SQLite не принимает этот оператор: {}", p("message")),
            (Lang::En, MultipleStatements) => {
                "one statement per line: this line holds more than one".to_owned()
            }
            (Lang::Ru, MultipleStatements) => {
                "один оператор на строку, а здесь их несколько".to_owned()
            }
            (Lang::En, LineTooLong) => {
                format!("the line is {} bytes; at most {} are allowed", p("bytes"), p("max"))
            }
            (Lang::Ru, LineTooLong) => {
                format!("в строке {} байт, а можно не больше {}", p("bytes"), p("max"))
            }
            (Lang::En, TextTooLong) => {
                format!("the handler is {} bytes; at most {} are allowed", p("bytes"), p("max"))
            }
            (Lang::Ru, TextTooLong) => {
                format!("в обработчике {} байт, а можно не больше {}", p("bytes"), p("max"))
            }
            (Lang::En, TooManyStatements) => {
                format!("more than {} statements; a handler needs a handful", p("max"))
            }
            (Lang::Ru, TooManyStatements) => {
                format!("больше {} операторов; обработчику хватает нескольких", p("max"))
            }
            (Lang::En, TooDeep) => format!("IFs nested deeper than {}", p("max")),
            (Lang::Ru, TooDeep) => format!("IF вложены глубже {} уровней", p("max")),
            (Lang::En, NoStatements) => "the handler runs no statement".to_owned(),
            (Lang::Ru, NoStatements) => "обработчик не выполняет ни одного оператора".to_owned(),
            (Lang::En, OnBusyPlace) => {
                "ON BUSY comes once, before the first statement".to_owned()
            }
            (Lang::Ru, OnBusyPlace) => {
                "ON BUSY пишется один раз, до первого оператора".to_owned()
            }
            (Lang::En, MixedAndOr) => {
                "AND and OR in one condition: use one of them, or nest two IFs".to_owned()
            }
            (Lang::Ru, MixedAndOr) => {
                "AND и OR в одном условии: оставьте одно из них или вложите два IF".to_owned()
            }
            (Lang::En, NoTransaction) => format!(
                "{}{} runs with no transaction open: the handler's own mistake (its BEGIN is missing, or its transaction already ended)",
                p("word"), self.on_line(lang)
            ),
            (Lang::Ru, NoTransaction) => format!(
                "{}{} выполняется без открытой транзакции: ошибка самого обработчика (нет BEGIN, или транзакция уже закончилась)",
                p("word"), self.on_line(lang)
            ),
            (Lang::En, NestedBegin) => format!(
                "BEGIN{} runs inside a transaction already open: the handler's own mistake (the first one never ended)",
                self.on_line(lang)
            ),
            (Lang::Ru, NestedBegin) => format!(
                "BEGIN{} выполняется внутри уже открытой транзакции: ошибка самого обработчика (первая так и не закончилась)",
                self.on_line(lang)
            ),
            (Lang::En, AnsweredOpen) => {
                let at = match self.params.get("step") {
                    Some(step) => format!("at step {step}"),
                    None => format!("on line {}", self.line),
                };
                format!("the handler answered {at} with its transaction still open; it was rolled back")
            }
            (Lang::Ru, AnsweredOpen) => {
                let at = match self.params.get("step") {
                    Some(step) => format!("на шаге {step}"),
                    None => format!("в строке {}", self.line),
                };
                format!("обработчик ответил {at} при открытой транзакции; она откатена")
            }
        }
    }

    /// ` on line L` (` в строке L`); nothing for a handler in Rust (line 0).
    fn on_line(&self, lang: Lang) -> String {
        match (self.line, lang) {
            (0, _) => String::new(),
            (line, Lang::En) => format!(" on line {line}"),
            (line, Lang::Ru) => format!(" в строке {line}"),
        }
    }

    /// `line L, column C: sentence` (`строка L, столбец C: …`).
    pub fn render(&self, lang: Lang) -> String {
        match lang {
            Lang::En => format!(
                "line {}, column {}: {}",
                self.line,
                self.column,
                self.text(lang)
            ),
            Lang::Ru => format!(
                "строка {}, столбец {}: {}",
                self.line,
                self.column,
                self.text(lang)
            ),
        }
    }
}

/// The words an "expected …" sentence names, keyed so that each language
/// has its own; anything else (a keyword such as `END`, a quoted token) is
/// shown as it is.
fn phrase(lang: Lang, key: &str) -> &str {
    let (en, ru) = match key {
        "end_of_line" => ("the end of the line", "конец строки"),
        "word" => ("a word", "слово"),
        "second_else" => ("a second ELSE", "второй ELSE"),
        "answer" => (
            "applied, duplicate, conflict or unknown_account",
            "applied, duplicate, conflict или unknown_account",
        ),
        "and_or_end" => ("AND, OR or the end of the line", "AND, OR или конец строки"),
        "condition" => (
            "CHANGED, ROW, NO ROW or ROW.column",
            "CHANGED, ROW, NO ROW или ROW.столбец",
        ),
        "whole_number" => ("a whole number", "целое число"),
        "comparison" => ("=, !=, <, <=, > or >=", "=, !=, <, <=, > или >="),
        "operand" => (
            "a parameter (:amount), a whole number or a 'text'",
            "параметр (:amount), целое число или 'текст'",
        ),
        _ => return key,
    };
    match lang {
        Lang::En => en,
        Lang::Ru => ru,
    }
}

impl ParseError {
    /// A mistake the handler made while it ran ([`ScriptCode::NoTransaction`],
    /// …) as its delivery's error: `invalid_input` of the field `handler`,
    /// the line among its params, the English sentence as its message.
    pub(crate) fn into_error(self) -> Error {
        let mut reason = Reason::new(self.code, self.text(Lang::En)).with("line", self.line);
        for (&name, value) in &self.params {
            reason = reason.with(name, value);
        }
        Error::refused(HANDLER, reason)
    }

    /// The handler's own mistake that `err` is (`ParseError::into_error`),
    /// to say it in either language.
    pub fn of(err: &Error) -> Option<ParseError> {
        let Error::InvalidInput { field, reason } = err else {
            return None;
        };
        let params = reason.params();
        (*field == HANDLER).then_some(())?;
        Some(ParseError {
            code: reason.code().parse().ok()?,
            line: params.get("line").and_then(|l| l.parse().ok()).unwrap_or(0),
            column: 1,
            params: params.clone(),
        })
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Lang::En))
    }
}

impl std::error::Error for ParseError {}
