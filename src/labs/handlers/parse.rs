//! From text to a [`Program`]: one line at a time, every line either a
//! control word (`IF`, `ELSE`, `END`, `ANSWER`, `ON BUSY ANSWER`), a comment
//! (`#` or `--`), or one SQL statement.
//!
//! Invariant: a [`Program`] exists only for a text that passed every check:
//! known parameters only, one allowed statement per line (SQLite itself
//! prepares each one, under an authorizer, on a scratch copy of the schema),
//! every path ends in `ANSWER`, nothing after an `ANSWER`, within the size
//! limits. A refusal names the line and the column.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;

use super::message::{ParseError, ScriptCode};
use crate::core::schema;

/// The longest handler text, in bytes.
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// The longest line, in bytes.
pub const MAX_LINE_BYTES: usize = 2000;
/// The most SQL statements a handler may hold.
pub const MAX_STATEMENTS: usize = 40;
/// The deepest nesting of IFs.
const MAX_DEPTH: usize = 8;

crate::core::named::named! {
    /// A parameter a statement or a condition may name (`:source`, ...).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Param("parameter") {
        Source => "source",
        EventId => "event_id",
        AccountId => "account_id",
        Amount => "amount",
    }
}

crate::core::named::named! {
    /// What a delivery answers, by its word after `ANSWER`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum AnswerKind("answer") {
        /// 200, the event was applied now.
        Applied => "applied",
        /// 200, it had been applied before.
        Duplicate => "duplicate",
        /// 422, the key is known with another payload.
        Conflict => "conflict",
        /// 422, no such account.
        UnknownAccount => "unknown_account",
    }
}

/// A comparison in a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A value a column is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operand {
    Param(Param),
    Int(i64),
    Text(String),
}

/// One test on what the last statement did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Atom {
    /// `CHANGED op N`: the rows it changed.
    Changed(CmpOp, i64),
    /// `ROW` / `NO ROW`: whether it returned a row.
    Row(bool),
    /// `ROW.col op value`: a column of the first row it returned (false
    /// when it returned none).
    Column(String, CmpOp, Operand),
}

/// A condition: one atom, or several joined by one of AND / OR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cond {
    pub any: bool,
    pub atoms: Vec<Atom>,
}

crate::core::named::named! {
    /// The kind of a statement, by its first word; the name it has in a trace.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Kind("statement kind") {
        Begin => "begin",
        Commit => "commit",
        Rollback => "rollback",
        Select => "select",
        Insert => "insert",
        Update => "update",
        Delete => "delete",
    }
}

/// One SQL line.
#[derive(Debug, Clone)]
pub(crate) struct Statement {
    pub line: usize,
    pub kind: Kind,
    /// The SQL as written (trimmed), shared with every trace that shows it.
    pub shown: &'static [&'static str],
    /// The parameters in SQLite's order (index = position + 1).
    pub params: Vec<Param>,
}

impl Statement {
    pub fn sql(&self) -> &'static str {
        self.shown.first().copied().unwrap_or("")
    }

    /// Its step's name in a trace: what it does to the lab's tables, the
    /// names the built-ins' steps have always had — so the verdicts and the
    /// page read a text's steps as they read the core's. An INSERT into the
    /// inbox is `insert` (`insert_or_ignore`, `insert_or_replace`); an
    /// UPDATE of the accounts is `credit`; a SELECT from the inbox is
    /// `check` until the delivery tried to register (`registering`), then
    /// `read_stored`; anything else is its first word ([`Kind::as_str`]).
    pub(crate) fn op(&self, registering: bool) -> &'static str {
        let sql = self.sql().to_ascii_uppercase();
        let words: Vec<&str> = sql.split_whitespace().collect();
        match (self.kind, words.as_slice()) {
            (Kind::Insert, [_, "OR", "IGNORE", "INTO", table, ..]) if is_inbox(table) => {
                "insert_or_ignore"
            }
            (Kind::Insert, [_, "OR", "REPLACE", "INTO", table, ..]) if is_inbox(table) => {
                "insert_or_replace"
            }
            (Kind::Insert, [_, "INTO", table, ..]) if is_inbox(table) => "insert",
            (Kind::Update, [_, "ACCOUNTS", ..]) => "credit",
            (Kind::Select, _) if words.windows(2).any(|w| w[0] == "FROM" && is_inbox(w[1])) => {
                if registering {
                    "read_stored"
                } else {
                    "check"
                }
            }
            (kind, _) => kind.as_str(),
        }
    }

    /// Whether it is one of the INSERTs that register the event.
    pub(crate) fn registers(&self) -> bool {
        matches!(
            self.op(false),
            "insert" | "insert_or_ignore" | "insert_or_replace"
        )
    }
}

/// Whether a table name (as the SQL has it, upper-cased) is the inbox.
fn is_inbox(table: &str) -> bool {
    table == "INBOX" || table.starts_with("INBOX(")
}

/// One instruction of the compiled program.
#[derive(Debug, Clone)]
pub(crate) enum Instr {
    Sql(usize),
    /// Jump to the target unless the condition holds.
    Unless(Cond, usize),
    Jump(usize),
    Answer(AnswerKind, usize),
}

/// A checked handler, ready to run.
#[derive(Debug)]
pub struct Program {
    pub(super) code: Vec<Instr>,
    pub(super) statements: Vec<Arc<Statement>>,
    pub(super) on_busy: Option<AnswerKind>,
}

impl Program {
    /// Every value the handler writes down: the text and whole-number
    /// literals of its SQL and of its conditions. The judge delivers them
    /// (and their neighbours) so a handler that treats one value apart is
    /// put to the test with that value.
    pub fn literals(&self) -> Literals {
        let mut found = Literals::default();
        // The string literals (`'it''s'` is `it's`) and whole numbers
        // (decimal or `0x` hex) of each statement.
        for (_, token) in self.statements.iter().flat_map(|s| tokens(s.sql())) {
            match token {
                Token::Text(text) => found.texts.push(text),
                Token::Number(word) => {
                    let hex = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X"));
                    found.ints.extend(match hex {
                        Some(h) => i64::from_str_radix(h, 16).ok(),
                        None => word.parse().ok(),
                    });
                }
                Token::Param(_) => {}
            }
        }
        for instr in &self.code {
            let Instr::Unless(cond, _) = instr else {
                continue;
            };
            for atom in &cond.atoms {
                match atom {
                    Atom::Changed(_, n) | Atom::Column(_, _, Operand::Int(n)) => {
                        found.ints.push(*n);
                    }
                    Atom::Column(_, _, Operand::Text(t)) => found.texts.push(t.clone()),
                    Atom::Row(_) | Atom::Column(_, _, Operand::Param(_)) => {}
                }
            }
        }
        found
    }
}

/// The literals of a handler ([`Program::literals`]), in order of
/// appearance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Literals {
    pub texts: Vec<String>,
    pub ints: Vec<i64>,
}

/// What [`tokens`] finds in a statement: a string literal's text, a word
/// that starts with a digit, a parameter as written (`:name`, `@x`, `?1`).
enum Token {
    Text(String),
    Number(String),
    Param(String),
}

/// The literals and parameters of one SQL statement, each with the index of
/// its first character; quoted names (`"…"`, `` `…` ``, `[…]`), the names
/// between them and a trailing `--` comment yield none.
fn tokens(sql: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = sql.chars().collect();
    let end_of = |mut i: usize, part: fn(char) -> bool| {
        while i < chars.len() && (part(chars[i]) || chars[i] == '_') {
            i += 1;
        }
        i
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                let start = i;
                let mut text = String::new();
                i += 1;
                while i < chars.len() {
                    if chars[i] == '\'' && chars.get(i + 1) == Some(&'\'') {
                        text.push('\'');
                        i += 2;
                    } else if chars[i] == '\'' {
                        break;
                    } else {
                        text.push(chars[i]);
                        i += 1;
                    }
                }
                found.push((start, Token::Text(text)));
            }
            '"' | '`' | '[' => {
                let close = if c == '[' { ']' } else { c };
                i += 1;
                while i < chars.len() && chars[i] != close {
                    i += 1;
                }
            }
            '-' if chars.get(i + 1) == Some(&'-') => break,
            ':' | '@' | '$' | '?' => {
                let end = end_of(i + 1, char::is_alphanumeric);
                found.push((i, Token::Param(chars[i..end].iter().collect())));
                i = end;
                continue;
            }
            _ if c.is_ascii_digit() => {
                let end = end_of(i, |c| c.is_ascii_alphanumeric());
                found.push((i, Token::Number(chars[i..end].iter().collect())));
                i = end;
                continue;
            }
            _ if c.is_alphanumeric() || c == '_' => {
                // A name: digits inside it are not numbers.
                i = end_of(i + 1, char::is_alphanumeric);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Parses and checks a handler text.
///
/// # Errors
/// The first [`ParseError`], with its line and column.
pub fn parse(text: &str) -> Result<Arc<Program>, ParseError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(ParseError::new(ScriptCode::TextTooLong, 1, 1)
            .with("bytes", text.len())
            .with("max", MAX_TEXT_BYTES));
    }
    let checker = Checker::new()?;
    let mut p = Parser::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.len() > MAX_LINE_BYTES {
            return Err(ParseError::new(ScriptCode::LineTooLong, line, 1)
                .with("bytes", raw.len())
                .with("max", MAX_LINE_BYTES));
        }
        p.line(&checker, line, raw)?;
    }
    p.finish()
}

#[derive(Default)]
struct Parser {
    code: Vec<Instr>,
    statements: Vec<Arc<Statement>>,
    on_busy: Option<AnswerKind>,
    frames: Vec<Frame>,
    /// The current path has answered, on this line.
    answered: Option<usize>,
    last_line: usize,
}

struct Frame {
    if_line: usize,
    unless: usize,
    /// Set at ELSE: the jump over the else branch, and whether the then
    /// branch answered.
    else_part: Option<(usize, Option<usize>)>,
}

const CONTROL: [&str; 5] = ["IF", "ELSE", "END", "ANSWER", "ON"];

impl Parser {
    fn line(&mut self, checker: &Checker, line: usize, raw: &str) -> Result<(), ParseError> {
        self.last_line = line;
        let indent = raw.chars().take_while(|c| c.is_whitespace()).count();
        let body = raw.trim();
        if body.is_empty() || body.starts_with('#') || body.starts_with("--") {
            return Ok(());
        }
        let col0 = indent + 1;
        let first = body
            .split(|c: char| c.is_whitespace())
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        // `ON` is a control word only as `ON BUSY`.
        let is_control = CONTROL.contains(&first.as_str())
            && (first != "ON" || body.to_ascii_uppercase().starts_with("ON BUSY"));
        if !matches!(first.as_str(), "ELSE" | "END") {
            if let Some(answer_line) = self.answered {
                return Err(ParseError::new(ScriptCode::Unreachable, line, col0)
                    .with("answer_line", answer_line));
            }
        }
        if !is_control {
            return self.statement(checker, line, col0, body);
        }
        let mut t = Tokens::new(body, col0, line);
        let word = t.word()?;
        match word.as_str() {
            "ON" => {
                t.keyword("BUSY")?;
                t.keyword("ANSWER")?;
                let kind = t.answer()?;
                t.end()?;
                if self.on_busy.is_some() || !self.statements.is_empty() || !self.frames.is_empty()
                {
                    return Err(ParseError::new(ScriptCode::OnBusyPlace, line, col0));
                }
                self.on_busy = Some(kind);
            }
            "ANSWER" => {
                let kind = t.answer()?;
                t.end()?;
                if self.statements.is_empty() {
                    return Err(ParseError::new(ScriptCode::BeforeStatement, line, col0)
                        .with("word", "ANSWER"));
                }
                self.code.push(Instr::Answer(kind, line));
                self.answered = Some(line);
            }
            "IF" => {
                let cond = t.cond()?;
                t.end()?;
                if self.statements.is_empty() {
                    return Err(
                        ParseError::new(ScriptCode::BeforeStatement, line, col0).with("word", "IF")
                    );
                }
                if self.frames.len() >= MAX_DEPTH {
                    return Err(
                        ParseError::new(ScriptCode::TooDeep, line, col0).with("max", MAX_DEPTH)
                    );
                }
                self.code.push(Instr::Unless(cond, usize::MAX));
                self.frames.push(Frame {
                    if_line: line,
                    unless: self.code.len() - 1,
                    else_part: None,
                });
            }
            "ELSE" => {
                t.end()?;
                let Some(frame) = self.frames.last_mut() else {
                    return Err(
                        ParseError::new(ScriptCode::WithoutIf, line, col0).with("word", "ELSE")
                    );
                };
                if frame.else_part.is_some() {
                    return Err(ParseError::new(ScriptCode::Expected, line, col0)
                        .with("expected", "END")
                        .with("found", "second_else"));
                }
                self.code.push(Instr::Jump(usize::MAX));
                let jump = self.code.len() - 1;
                let here = self.code.len();
                if let Some(Instr::Unless(_, target)) = self.code.get_mut(frame.unless) {
                    *target = here;
                }
                frame.else_part = Some((jump, self.answered.take()));
            }
            _ => {
                // END
                t.end()?;
                let Some(frame) = self.frames.pop() else {
                    return Err(
                        ParseError::new(ScriptCode::WithoutIf, line, col0).with("word", "END")
                    );
                };
                let here = self.code.len();
                let patch = match frame.else_part {
                    Some((jump, _)) => jump,
                    None => frame.unless,
                };
                if let Some(Instr::Unless(_, target) | Instr::Jump(target)) =
                    self.code.get_mut(patch)
                {
                    *target = here;
                }
                // Past END only if both branches answered (no ELSE: the
                // false path always falls through).
                self.answered = match frame.else_part {
                    Some((_, Some(then_line))) => self.answered.map(|_| then_line),
                    _ => None,
                };
            }
        }
        Ok(())
    }

    fn statement(
        &mut self,
        checker: &Checker,
        line: usize,
        col0: usize,
        sql: &str,
    ) -> Result<(), ParseError> {
        if self.statements.len() >= MAX_STATEMENTS {
            return Err(ParseError::new(ScriptCode::TooManyStatements, line, col0)
                .with("max", MAX_STATEMENTS));
        }
        self.statements
            .push(Arc::new(checker.statement(sql, line, col0)?));
        self.code.push(Instr::Sql(self.statements.len() - 1));
        Ok(())
    }

    fn finish(self) -> Result<Arc<Program>, ParseError> {
        if let Some(frame) = self.frames.last() {
            return Err(
                ParseError::new(ScriptCode::MissingEnd, self.last_line + 1, 1)
                    .with("if_line", frame.if_line),
            );
        }
        if self.statements.is_empty() {
            return Err(ParseError::new(
                ScriptCode::NoStatements,
                self.last_line.max(1),
                1,
            ));
        }
        if self.answered.is_none() {
            return Err(ParseError::new(
                ScriptCode::MissingAnswer,
                self.last_line + 1,
                1,
            ));
        }
        Ok(Arc::new(Program {
            code: self.code,
            statements: self.statements,
            on_busy: self.on_busy,
        }))
    }
}

/// The named parameters of a statement, in order of first appearance (as
/// SQLite numbers them), outside string literals and quoted names.
fn scan_params(sql: &str, line: usize, col0: usize) -> Result<Vec<Param>, ParseError> {
    let mut out: Vec<Param> = Vec::new();
    for (start, token) in tokens(sql) {
        let Token::Param(token) = token else {
            continue;
        };
        let column = col0 + start;
        if token.starts_with('?') {
            return Err(
                ParseError::new(ScriptCode::PositionalParameter, line, column).with("found", token),
            );
        }
        match token.strip_prefix(':').map(str::parse::<Param>) {
            Some(Ok(p)) if !out.contains(&p) => out.push(p),
            Some(Ok(_)) => {}
            _ => {
                return Err(
                    ParseError::new(ScriptCode::UnknownParameter, line, column).with("name", token)
                )
            }
        }
    }
    Ok(out)
}

/// One statement of a handler written in Rust ([`super::rust::StepHandler`]),
/// checked as a text's line is (known parameters, one allowed statement,
/// prepared under the authorizer), once per process: the answer is kept.
///
/// # Errors
/// The reason in English (a Rust handler has no line and column).
pub(super) fn check_statement(sql: &'static str) -> Result<Arc<Statement>, String> {
    type Checked = HashMap<&'static str, Result<Arc<Statement>, String>>;
    static CHECKED: LazyLock<Mutex<Checked>> = LazyLock::new(Mutex::default);
    let text = |e: ParseError| e.text(super::message::Lang::En);
    let mut checked = CHECKED.lock().unwrap_or_else(PoisonError::into_inner);
    let known = checked.entry(sql).or_insert_with(|| {
        let checked = Checker::new().and_then(|c| c.statement(sql, 0, 1));
        checked.map(Arc::new).map_err(text)
    });
    known.clone()
}

/// Every statement text is stored once for the life of the process, so a
/// [`crate::Trace`] can show it like the built-ins' constant SQL. A text
/// seen again (the same handler judged twice) is not stored again.
fn intern(sql: &str) -> &'static [&'static str] {
    static SEEN: LazyLock<Mutex<HashMap<String, &'static [&'static str]>>> =
        LazyLock::new(Mutex::default);
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    seen.entry(sql.to_owned()).or_insert_with(|| {
        let text: &'static str = Box::leak(sql.to_owned().into_boxed_str());
        Box::leak(vec![text].into_boxed_slice())
    })
}

/// Prepares statements on a scratch database with the lab's schema, under
/// an authorizer that allows only what a handler may do.
struct Checker {
    conn: Connection,
    denied: Arc<Mutex<Option<Denied>>>,
}

/// The tables a handler may read and write.
const TABLES: [&str; 3] = ["inbox", "accounts", "receipt_counter"];

impl Checker {
    fn new() -> Result<Checker, ParseError> {
        let fail =
            |e: crate::Error| ParseError::new(ScriptCode::Sql, 1, 1).with("message", e.to_string());
        let mut conn = Connection::open_in_memory().map_err(|e| fail(e.into()))?;
        schema::init(&mut conn, &[1]).map_err(fail)?;
        let denied = Arc::new(Mutex::new(None));
        let log = denied.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            match allowed(&ctx.action) {
                Ok(()) => Authorization::Allow,
                Err(what) => {
                    *log.lock().unwrap_or_else(PoisonError::into_inner) = Some(what);
                    Authorization::Deny
                }
            }
        }))
        .map_err(|e| fail(e.into()))?;
        Ok(Checker { conn, denied })
    }

    /// One SQL line checked: its parameters known, then prepared under the
    /// authorizer.
    fn statement(&self, sql: &str, line: usize, column: usize) -> Result<Statement, ParseError> {
        let params = scan_params(sql, line, column)?;
        *self.denied.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let prepared = self.conn.prepare(sql);
        let denied = self
            .denied
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Err(e) = prepared {
            return Err(match (e, denied) {
                (rusqlite::Error::MultipleStatement, _) => {
                    ParseError::new(ScriptCode::MultipleStatements, line, column)
                }
                (_, Some((action, what))) => refused(line, column, action, what),
                (e, None) => ParseError::new(ScriptCode::Sql, line, column)
                    .with("message", sqlite_message(&e)),
            });
        }
        let first = sql
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let kind = match first.as_str() {
            "BEGIN" => Kind::Begin,
            "COMMIT" | "END" => Kind::Commit,
            "ROLLBACK" => Kind::Rollback,
            "SELECT" | "WITH" | "VALUES" => Kind::Select,
            "INSERT" | "REPLACE" => Kind::Insert,
            "UPDATE" => Kind::Update,
            "DELETE" => Kind::Delete,
            other => return Err(refused(line, column, None, other.to_owned())),
        };
        Ok(Statement {
            line,
            kind,
            shown: intern(sql),
            params,
        })
    }
}

fn sqlite_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    }
}

fn refused(line: usize, column: usize, action: Option<&str>, what: String) -> ParseError {
    let e = ParseError::new(ScriptCode::Refused, line, column).with("what", what);
    match action {
        Some(a) => e.with("action", a),
        None => e,
    }
}

/// What the authorizer refused: the action on a table (`read`, `write`)
/// or none, and the name (a table, or what the statement does).
type Denied = (Option<&'static str>, String);

/// What the authorizer allows: reading and changing the lab's tables,
/// transactions, functions (SQLite's built-ins; no extension can be loaded)
/// and recursive queries (the budget stops endless ones). An allow-list:
/// `ATTACH`, `PRAGMA` (so `writable_schema`), every DDL and savepoints are
/// refused, with their name.
fn allowed(action: &AuthAction<'_>) -> Result<(), Denied> {
    let table_ok = |t: &str| TABLES.contains(&t.to_ascii_lowercase().as_str());
    match action {
        AuthAction::Select | AuthAction::Recursive | AuthAction::Transaction { .. } => Ok(()),
        AuthAction::Function { function_name } => {
            if function_name.eq_ignore_ascii_case("load_extension") {
                Err((None, "load_extension".into()))
            } else {
                Ok(())
            }
        }
        AuthAction::Read { table_name, .. } => {
            // The clock the article's INSERT reads its time from, and a
            // query's own CTEs (the scratch schema has no other tables, so
            // any other name fails to prepare); never SQLite's own tables.
            if !table_name.to_ascii_lowercase().starts_with("sqlite_") {
                Ok(())
            } else {
                Err((Some("read"), table_name.to_string()))
            }
        }
        AuthAction::Insert { table_name }
        | AuthAction::Update { table_name, .. }
        | AuthAction::Delete { table_name } => {
            if table_ok(table_name) {
                Ok(())
            } else if table_name.to_ascii_lowercase().starts_with("sqlite_") {
                // CREATE, DROP, ALTER: SQLite asks first to write its schema.
                Err((Some("schema"), table_name.to_string()))
            } else {
                Err((Some("write"), table_name.to_string()))
            }
        }
        AuthAction::Pragma { pragma_name, .. } => Err((None, format!("PRAGMA {pragma_name}"))),
        AuthAction::Attach { .. } => Err((None, "ATTACH".into())),
        AuthAction::Detach { .. } => Err((None, "DETACH".into())),
        AuthAction::Savepoint { .. } => Err((None, "SAVEPOINT".into())),
        other => Err((
            None,
            format!("{other:?}")
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or("this statement")
                .to_owned(),
        )),
    }
}

/// The words of a control line, with their columns.
struct Tokens {
    toks: Vec<(String, usize)>,
    pos: usize,
    line: usize,
    end_col: usize,
}

impl Tokens {
    fn new(body: &str, col0: usize, line: usize) -> Tokens {
        let chars: Vec<char> = body.chars().collect();
        let mut toks = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_whitespace() {
                i += 1;
                continue;
            }
            if c == '#' {
                break; // a comment to the end of the line
            }
            let start = i;
            if c == '\'' {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i = (i + 1).min(chars.len());
            } else if "=!<>".contains(c) {
                i += 1;
                if i < chars.len() && "=>".contains(chars[i]) {
                    i += 1;
                }
            } else {
                while i < chars.len() && !chars[i].is_whitespace() && !"=!<>'#".contains(chars[i]) {
                    i += 1;
                }
            }
            toks.push((chars[start..i].iter().collect(), col0 + start));
        }
        Tokens {
            toks,
            pos: 0,
            line,
            end_col: col0 + chars.len(),
        }
    }

    fn peek(&self) -> Option<&(String, usize)> {
        self.toks.get(self.pos)
    }

    fn col(&self) -> usize {
        self.peek().map_or(self.end_col, |t| t.1)
    }

    fn expected(&self, what: &str) -> ParseError {
        let found = self
            .peek()
            .map_or_else(|| "end_of_line".to_owned(), |t| format!("{:?}", t.0));
        ParseError::new(ScriptCode::Expected, self.line, self.col())
            .with("expected", what)
            .with("found", found)
    }

    fn next(&mut self, what: &str) -> Result<(String, usize), ParseError> {
        let t = self.peek().cloned().ok_or_else(|| self.expected(what))?;
        self.pos += 1;
        Ok(t)
    }

    fn word(&mut self) -> Result<String, ParseError> {
        Ok(self.next("word")?.0.to_ascii_uppercase())
    }

    fn keyword(&mut self, kw: &str) -> Result<(), ParseError> {
        match self.peek() {
            Some((w, _)) if w.eq_ignore_ascii_case(kw) => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.expected(kw)),
        }
    }

    fn end(&self) -> Result<(), ParseError> {
        self.peek()
            .map_or(Ok(()), |_| Err(self.expected("end_of_line")))
    }

    fn answer(&mut self) -> Result<AnswerKind, ParseError> {
        let (w, col) = self.next("answer")?;
        w.to_ascii_lowercase().parse().map_err(|_| {
            ParseError::new(ScriptCode::UnknownAnswer, self.line, col).with("found", w)
        })
    }

    fn cond(&mut self) -> Result<Cond, ParseError> {
        let mut atoms = vec![self.atom()?];
        let mut joiner: Option<bool> = None;
        while let Some((w, col)) = self.peek().cloned() {
            let any = match w.to_ascii_uppercase().as_str() {
                "AND" => false,
                "OR" => true,
                _ => return Err(self.expected("and_or_end")),
            };
            if joiner.is_some_and(|j| j != any) {
                return Err(ParseError::new(ScriptCode::MixedAndOr, self.line, col));
            }
            joiner = Some(any);
            self.pos += 1;
            atoms.push(self.atom()?);
        }
        Ok(Cond {
            any: joiner.unwrap_or(false),
            atoms,
        })
    }

    fn atom(&mut self) -> Result<Atom, ParseError> {
        const WHAT: &str = "condition";
        let (w, _) = self.next(WHAT)?;
        let upper = w.to_ascii_uppercase();
        if upper == "CHANGED" {
            let op = self.op()?;
            let (n, ncol) = self.next("whole_number")?;
            let n = n.parse::<i64>().map_err(|_| {
                ParseError::new(ScriptCode::Expected, self.line, ncol)
                    .with("expected", "whole_number")
                    .with("found", format!("{n:?}"))
            })?;
            return Ok(Atom::Changed(op, n));
        }
        if upper == "ROW" {
            return Ok(Atom::Row(true));
        }
        if upper == "NO" {
            self.keyword("ROW")?;
            return Ok(Atom::Row(false));
        }
        if let Some(column) = upper.strip_prefix("ROW.") {
            let valid = !column.is_empty()
                && column
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
            if valid {
                let op = self.op()?;
                let value = self.operand()?;
                return Ok(Atom::Column(w[4..].to_owned(), op, value));
            }
        }
        self.pos -= 1;
        Err(self.expected(WHAT))
    }

    fn op(&mut self) -> Result<CmpOp, ParseError> {
        const WHAT: &str = "comparison";
        let (w, _) = self.next(WHAT)?;
        Ok(match w.as_str() {
            "=" | "==" => CmpOp::Eq,
            "!=" | "<>" => CmpOp::Ne,
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Le,
            ">" => CmpOp::Gt,
            ">=" => CmpOp::Ge,
            _ => {
                self.pos -= 1;
                return Err(self.expected(WHAT));
            }
        })
    }

    fn operand(&mut self) -> Result<Operand, ParseError> {
        const WHAT: &str = "operand";
        let (w, col) = self.next(WHAT)?;
        if let Some(name) = w.strip_prefix(':') {
            return name.parse().map(Operand::Param).map_err(|_| {
                ParseError::new(ScriptCode::UnknownParameter, self.line, col).with("name", &w)
            });
        }
        if let Ok(n) = w.parse::<i64>() {
            return Ok(Operand::Int(n));
        }
        if w.len() >= 2 && w.starts_with('\'') && w.ends_with('\'') {
            return Ok(Operand::Text(w[1..w.len() - 1].to_owned()));
        }
        self.pos -= 1;
        Err(self.expected(WHAT))
    }
}
