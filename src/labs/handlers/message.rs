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

    /// The sentence, without the position: the code's template in `lang`,
    /// each `{name}` filled with that param (or with the line's words).
    pub fn text(&self, lang: Lang) -> String {
        use ScriptCode::*;
        let (en, ru) = match self.code {
            Expected => ("expected {expected}, found {found}", "ожидалось {expected}, а здесь {found}"),
            UnknownParameter => (
                "unknown parameter {name}: a handler has :source, :event_id, :account_id and :amount",
                "неизвестный параметр {name}: у обработчика есть :source, :event_id, :account_id и :amount",
            ),
            PositionalParameter => (
                "{found} is a positional parameter; name it: :source, :event_id, :account_id or :amount",
                "{found} — позиционный параметр; назовите его: :source, :event_id, :account_id или :amount",
            ),
            UnknownAnswer => (
                "unknown answer {found}: expected applied, duplicate, conflict or unknown_account",
                "неизвестный ответ {found}: ожидался applied, duplicate, conflict или unknown_account",
            ),
            WithoutIf => ("{word} without an IF", "{word} без IF"),
            MissingEnd => (
                "the IF of line {if_line} is never closed: expected END",
                "IF из строки {if_line} не закрыт: нужен END",
            ),
            MissingAnswer => (
                "a path reaches the end of the handler without ANSWER",
                "один из путей доходит до конца обработчика без ANSWER",
            ),
            Unreachable => (
                "this line never runs: the delivery already answered on line {answer_line}",
                "эта строка никогда не выполнится: доставка уже ответила в строке {answer_line}",
            ),
            BeforeStatement => (
                "{word} before any statement: it has nothing to look at yet",
                "{word} до первого оператора: смотреть ещё не на что",
            ),
            Refused => (
                "{refused} is not allowed in a handler: only BEGIN, COMMIT, ROLLBACK, SELECT, INSERT, UPDATE and DELETE on the lab's tables",
                "{refused}: можно только BEGIN, COMMIT, ROLLBACK, SELECT, INSERT, UPDATE и DELETE над таблицами лаборатории",
            ),
            Sql => (
                "SQLite does not accept this statement: {message}",
                "SQLite не принимает этот оператор: {message}",
            ),
            MultipleStatements => (
                "one statement per line: this line holds more than one",
                "один оператор на строку, а здесь их несколько",
            ),
            LineTooLong => (
                "the line is {bytes} bytes; at most {max} are allowed",
                "в строке {bytes} байт, а можно не больше {max}",
            ),
            TextTooLong => (
                "the handler is {bytes} bytes; at most {max} are allowed",
                "в обработчике {bytes} байт, а можно не больше {max}",
            ),
            TooManyStatements => (
                "more than {max} statements; a handler needs a handful",
                "больше {max} операторов; обработчику хватает нескольких",
            ),
            TooDeep => ("IFs nested deeper than {max}", "IF вложены глубже {max} уровней"),
            NoStatements => (
                "the handler runs no statement",
                "обработчик не выполняет ни одного оператора",
            ),
            OnBusyPlace => (
                "ON BUSY comes once, before the first statement",
                "ON BUSY пишется один раз, до первого оператора",
            ),
            MixedAndOr => (
                "AND and OR in one condition: use one of them, or nest two IFs",
                "AND и OR в одном условии: оставьте одно из них или вложите два IF",
            ),
            NoTransaction => (
                "{word}{on_line} runs with no transaction open: the handler's own mistake (its BEGIN is missing, or its transaction already ended)",
                "{word}{on_line} выполняется без открытой транзакции: ошибка самого обработчика (нет BEGIN, или транзакция уже закончилась)",
            ),
            NestedBegin => (
                "BEGIN{on_line} runs inside a transaction already open: the handler's own mistake (the first one never ended)",
                "BEGIN{on_line} выполняется внутри уже открытой транзакции: ошибка самого обработчика (первая так и не закончилась)",
            ),
            AnsweredOpen => (
                "the handler answered {at} with its transaction still open; it was rolled back",
                "обработчик ответил {at} при открытой транзакции; она откатена",
            ),
        };
        let template = if lang == Lang::En { en } else { ru };
        let mut out = String::new();
        let mut rest = template;
        while let Some((before, after)) = rest.split_once('{') {
            let (name, after) = after.split_once('}').unwrap_or((after, ""));
            out.push_str(before);
            out.push_str(&self.word(lang, name));
            rest = after;
        }
        out.push_str(rest);
        out
    }

    /// What `{name}` stands for in a sentence in `lang`: a param (a phrase
    /// key translated), or the words made from several.
    fn word(&self, lang: Lang, name: &str) -> String {
        let en = lang == Lang::En;
        let p = |n: &str| self.params.get(n).map_or("", String::as_str);
        match name {
            "expected" | "found" if self.code == ScriptCode::Expected => {
                phrase(lang, p(name)).to_owned()
            }
            // ` on line L` (` в строке L`); nothing for a handler in Rust (line 0).
            "on_line" if self.line == 0 => String::new(),
            "on_line" if en => format!(" on line {}", self.line),
            "on_line" => format!(" в строке {}", self.line),
            "at" => match (self.params.get("step"), en) {
                (Some(step), true) => format!("at step {step}"),
                (Some(step), false) => format!("на шаге {step}"),
                (None, true) => format!("on line {}", self.line),
                (None, false) => format!("в строке {}", self.line),
            },
            "refused" => {
                let what = p("what");
                match (p("action"), en) {
                    ("read", true) => format!("reading {what}"),
                    ("write", true) => format!("writing {what}"),
                    ("schema", true) => "changing the schema (CREATE, DROP, ALTER)".to_owned(),
                    (_, true) => what.to_owned(),
                    ("read", false) => format!("чтение таблицы {what} в обработчике запрещено"),
                    ("write", false) => format!("запись в таблицу {what} в обработчике запрещена"),
                    ("schema", false) => {
                        "менять схему (CREATE, DROP, ALTER) в обработчике запрещено".to_owned()
                    }
                    (_, false) => format!("{what} в обработчике запрещено"),
                }
            }
            _ => p(name).to_owned(),
        }
    }

    /// `line L, column C: sentence` (`строка L, столбец C: …`).
    pub fn render(&self, lang: Lang) -> String {
        let (line, column, text) = (self.line, self.column, self.text(lang));
        match lang {
            Lang::En => format!("line {line}, column {column}: {text}"),
            Lang::Ru => format!("строка {line}, столбец {column}: {text}"),
        }
    }

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

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Lang::En))
    }
}

impl std::error::Error for ParseError {}
