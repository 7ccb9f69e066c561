//! The read-only SQL console: explore the tables with `SELECT` and read-only
//! `PRAGMA`s, never change them, and never hold the worker for long.
//!
//! Invariant: a console query cannot write and cannot change how the
//! connection behaves. Two of SQLite's own checks enforce it, not string
//! matching:
//! * an authorizer, active while the console prepares *and runs* its
//!   statement, allows only what reading needs — `SELECT`, reading columns,
//!   calling functions, recursive CTEs — and `PRAGMA`s from two allow-lists:
//!   `PRAGMAS_READING_WHEN_BARE` (a setting or a fact, read when given no
//!   value: `PRAGMA journal_mode`) and `PRAGMAS_READING_AN_ARGUMENT` (the
//!   argument names what to read: `PRAGMA table_info(inbox)`). Everything
//!   else is denied: a `PRAGMA` with a value (`foreign_keys = OFF`; flag
//!   pragmas act while the statement is *prepared*, so this must be refused
//!   there), a `PRAGMA` not on the lists (`PRAGMA optimize` would run
//!   `ANALYZE` and write `sqlite_stat1`), transactions, `ATTACH`, and every
//!   write — also one that SQLite prepares while the statement runs, as
//!   `optimize` or a `pragma_*` table-valued function would;
//! * `sqlite3_stmt_readonly()` ([`rusqlite::Statement::readonly`]) refuses
//!   statements that would write the database. It also says "writes" for
//!   `PRAGMA journal_mode` (its opcode can change the mode), so a statement
//!   that is nothing but one allow-listed bare pragma is let through: the
//!   authorizer has already checked that it only reads.
//!
//! Invariant: a console query ends within [`Budget::CONSOLE`] (2 s or 10^8
//! virtual-machine steps; [`crate::labs::tools::budget`]) with its result or a clear
//! refusal, and hands back a bounded result: at most `MAX_ROWS` rows, each
//! text or blob shown up to `MAX_CELL_CHARS` characters, and everything it
//! returns — column names, numbers and nulls too, as their JSON — counted
//! against `MAX_RESULT_BYTES`. A value cut short is listed in
//! [`QueryResult::truncated_values`], so nothing is ever shown shorter (or
//! empty) without saying so. What it refuses, and why, is [`ConsoleCode`]:
//! `value_too_big` (`SELECT randomblob(3e8)`) at once instead of a 300 MB
//! allocation, `result_too_big` (`SELECT 1 AS "xxxx…"`, many times) before
//! any row is read.
//!
//! Invariant: on the page, a console query never runs where the database
//! is. It runs in a worker of its own on a copy ([`query_copy`]: the bytes
//! the database worker serialised, read-only in memory), which the page
//! terminates at the budget's [`Budget::deadline`] or when the reader
//! presses Cancel: one SQLite step can outlast any step count, and the
//! worker that answers deliveries must never wait for it. Only a bare
//! pragma that reads a setting of the connection itself
//! ([`reads_only_settings`]: `PRAGMA journal_mode`, which a copy in memory
//! would answer differently) runs on the database's own connection; it does
//! no work proportional to anything.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode};
use serde::Serialize;

use crate::core::error::{Error, Reason};
use crate::core::event::Field;
use crate::labs::tools::budget::{self, Budget};

/// The input holding the statement typed into the console.
pub const SQL: Field = Field::new("sql");

crate::core::error::code_enum! {
    /// The `code` of the console's `invalid_input` refusals (field `sql`).
    ConsoleCode {
        /// The SQL console got no statement.
        SqlEmpty => "sql_empty",
        /// The SQL console got more than one statement.
        SqlMultiple => "sql_multiple",
        /// `sqlite3_stmt_readonly` says the statement would write.
        SqlWrites => "sql_writes",
        /// The authorizer refused a statement that changes the connection.
        SqlChangesConnection => "sql_changes_connection",
        /// SQLite could not prepare the statement. Params: `detail` (SQLite's words).
        SqlRejected => "sql_rejected",
        /// A console query ran past its budget ([`crate::labs::tools::budget::Budget::CONSOLE`])
        /// and was stopped. Params: `seconds`, `steps` (the budget).
        QueryBudget => "query_budget",
        /// A console query would produce a string or blob longer than the
        /// console allows (`SQLITE_LIMIT_LENGTH`). Params: `max` (bytes).
        ValueTooBig => "value_too_big",
        /// A console query needed more memory than SQLite may use in the
        /// worker (its hard heap limit, [`budget::HEAP_LIMIT_BYTES`]). Params: `mib`.
        QueryMemory => "query_memory",
        /// A `PRAGMA` the console does not run: not on its list of pragmas
        /// that only read. Params: `name`.
        SqlPragmaNotAllowed => "sql_pragma_not_allowed",
        /// A query whose column names alone pass `MAX_RESULT_BYTES`.
        /// Params: `bytes` (the names'), `max`.
        ResultTooBig => "result_too_big",
    }
}

/// At most this many rows are returned; the rest is reported as truncated.
const MAX_ROWS: usize = 500;

/// A text or blob cell is shown up to this many characters (a blob as
/// `x'…'` hex, two characters a byte); a longer one is cut and listed in
/// [`QueryResult::truncated_values`].
const MAX_CELL_CHARS: usize = 10_000;

/// At most this many bytes in a result, counted as the JSON it is sent as:
/// the column names first, then each cell (text and blobs as shown, a number
/// or null as written), each with its separator. Once they are used, the
/// remaining text cells of the row are cut (and listed) and no further row
/// is added (`truncated`). A number, a null and the note of a cut cell
/// cannot be cut, so the last row may pass the mark by them: less than
/// 64 bytes a column (a number's JSON, ≤ 24 bytes, or an empty text cut
/// there and its note in [`QueryResult::truncated_values`], ≤ 60 bytes).
const MAX_RESULT_BYTES: usize = 4 << 20;

/// A query's result, ready to show as a table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueryResult {
    pub columns: Vec<String>,
    /// Values as JSON: null, numbers, text; integers beyond ±2^53-1 and
    /// blobs (`x'0A1B'`) as text so JavaScript shows them exactly. A cell
    /// listed in `truncated_values` holds only the beginning of its value.
    pub rows: Vec<Vec<serde_json::Value>>,
    /// True when rows were left out: more than `MAX_ROWS` matched, or the
    /// result reached `MAX_RESULT_BYTES`.
    pub truncated: bool,
    /// The cells shown cut short, in row order.
    pub truncated_values: Vec<TruncatedValue>,
}

/// One cell of a [`QueryResult`] that holds only the beginning of its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TruncatedValue {
    /// Index into `rows`.
    pub row: usize,
    /// Index into `columns`.
    pub column: usize,
    /// The whole value's size in bytes (UTF-8 text as stored, or the blob).
    pub bytes: usize,
}

/// Runs one read-only statement within [`Budget::CONSOLE`].
///
/// # Errors
/// [`Error::InvalidInput`] (field `sql`) for an empty text, several
/// statements, a statement SQLite cannot prepare or run, one that would
/// write or change the connection, one that ran past its budget
/// (`query_budget`), a value over the length limit (`value_too_big`) or
/// over the heap limit (`query_memory`); storage errors while reading.
///
/// # Example
/// ```
/// # let mut conn = rusqlite::Connection::open_in_memory().unwrap();
/// # inbox_lab::core::schema::init(&mut conn, &[1]).unwrap();
/// let r = inbox_lab::labs::tools::console::query(&mut conn, "SELECT id, balance FROM accounts").unwrap();
/// assert_eq!(r.columns, ["id", "balance"]);
/// assert!(inbox_lab::labs::tools::console::query(&mut conn, "DELETE FROM accounts").is_err());
/// ```
pub fn query(conn: &mut Connection, sql: &str) -> Result<QueryResult, Error> {
    let sql = sql.trim();
    if sql.is_empty() {
        return Err(refuse(Reason::new(
            ConsoleCode::SqlEmpty,
            "type a SELECT statement or a read-only PRAGMA",
        )));
    }
    let log = Arc::new(Mutex::new(AuthLog::default()));
    let hook = {
        let log = Arc::clone(&log);
        move |ctx: AuthContext<'_>| authorize(&mut lock(&log), &ctx.action)
    };
    budget::within(conn, Budget::CONSOLE, |conn| {
        // The authorizer stays on while the statement runs: what SQLite
        // prepares on the way (`pragma_*` functions) is checked too.
        conn.authorizer(Some(hook))?;
        let result = run(conn, sql, &log);
        conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>)?;
        result
    })
    .unwrap_or_else(|_| Err(over_budget()))
}

/// [`query`] on a copy of a database: `bytes`, as [`crate::labs::tools::transfer::export`]
/// made them, opened read-only in memory.
///
/// # Errors
/// As [`query`]; a storage error if `bytes` are not a database.
pub fn query_copy(bytes: &[u8], sql: &str) -> Result<QueryResult, Error> {
    let mut copy = Connection::open_in_memory()?;
    copy.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), true)?;
    copy.pragma_update(None, "foreign_keys", true)?;
    query(&mut copy, sql)
}

/// The bare pragmas that read a setting of the connection rather than the
/// data (a copy in memory has settings of its own): answered by the
/// database's connection, at no cost proportional to anything.
const PRAGMAS_READING_THE_CONNECTION: [&str; 16] = [
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "data_version",
    "database_list",
    "foreign_keys",
    "hard_heap_limit",
    "journal_mode",
    "journal_size_limit",
    "locking_mode",
    "mmap_size",
    "query_only",
    "soft_heap_limit",
    "synchronous",
    "temp_store",
    "wal_autocheckpoint",
];

/// Whether `sql` is one bare pragma of `PRAGMAS_READING_THE_CONNECTION`
/// (`PRAGMA journal_mode`, `pragma main.synchronous;`): a test of the text
/// alone, so deciding costs nothing either.
pub fn reads_only_settings(sql: &str) -> bool {
    let sql = sql.trim();
    let sql = sql.strip_suffix(';').unwrap_or(sql).trim_end();
    let Some((keyword, name)) = sql.split_once(char::is_whitespace) else {
        return false;
    };
    let name = name.trim_start().to_ascii_lowercase();
    let name = name.strip_prefix("main.").unwrap_or(&name);
    keyword.eq_ignore_ascii_case("pragma") && PRAGMAS_READING_THE_CONNECTION.contains(&name)
}

fn run(conn: &Connection, sql: &str, log: &Mutex<AuthLog>) -> Result<QueryResult, Error> {
    let mut stmt = conn
        .prepare(sql)
        .map_err(|e| refusal(e, log, Stage::Prepare))?;
    let only_a_bare_pragma = {
        let prepared = lock(log);
        prepared.asked == 1 && prepared.first_was_bare_pragma
    };
    if !stmt.readonly() && !only_a_bare_pragma {
        return Err(denied(Some(Denial::Writes)));
    }
    let columns: Vec<String> = stmt.column_names().map(String::from).collect();
    // The names are returned too: they count first, and alone they may not
    // fill the result (a name is the expression's text when not given).
    let names: usize = columns.iter().map(json_bytes).sum();
    if names > MAX_RESULT_BYTES {
        return Err(refuse(
            Reason::new(
                ConsoleCode::ResultTooBig,
                format!(
                    "the column names alone are {names} bytes; a result holds at most \
                     {MAX_RESULT_BYTES}: give the columns short names with AS"
                ),
            )
            .with("bytes", names)
            .with("max", MAX_RESULT_BYTES),
        ));
    }
    let mut rows = Vec::new();
    let mut truncated = false;
    let mut truncated_values = Vec::new();
    // And the result's own frame: its keys, brackets, `truncated`.
    let frame = json_bytes(&QueryResult {
        truncated: true,
        ..QueryResult::default()
    });
    let mut used = frame + names;
    let mut cursor = stmt.query([]).map_err(|e| refusal(e, log, Stage::Run))?;
    while let Some(row) = cursor.next().map_err(|e| refusal(e, log, Stage::Run))? {
        if rows.len() == MAX_ROWS || used >= MAX_RESULT_BYTES {
            truncated = true;
            break;
        }
        used += 2; // the row's brackets
        let mut values = Vec::with_capacity(columns.len());
        for column in 0..columns.len() {
            let value = row
                .get_ref(column)
                .map_err(|e| refusal(e, log, Stage::Run))?;
            // The room for its text: what is left, less its quotes and comma.
            let shown = Cell::of(value, MAX_RESULT_BYTES.saturating_sub(used + 3));
            used += json_bytes(&shown.json);
            if let Some(bytes) = shown.cut_from {
                let note = TruncatedValue {
                    row: rows.len(),
                    column,
                    bytes,
                };
                used += json_bytes(&note);
                truncated_values.push(note);
            }
            values.push(shown.json);
        }
        rows.push(values);
    }
    Ok(QueryResult {
        columns,
        rows,
        truncated,
        truncated_values,
    })
}

/// Pragmas that only read when given no value: they report a setting or a
/// fact about the database. With a value most of them change the
/// connection, so the value form is refused (except for
/// [`PRAGMAS_READING_AN_ARGUMENT`]). Left out on purpose: `optimize`
/// (runs `ANALYZE`, which writes), `wal_checkpoint` and `incremental_vacuum`
/// (write the database file), `shrink_memory` (acts), and the deprecated
/// and debugging ones.
const PRAGMAS_READING_WHEN_BARE: [&str; 49] = [
    "analysis_limit",
    "application_id",
    "auto_vacuum",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "cell_size_check",
    "checkpoint_fullfsync",
    "collation_list",
    "compile_options",
    "data_version",
    "database_list",
    "defer_foreign_keys",
    "encoding",
    "foreign_key_check",
    "foreign_keys",
    "freelist_count",
    "fullfsync",
    "function_list",
    "hard_heap_limit",
    "ignore_check_constraints",
    "integrity_check",
    "journal_mode",
    "journal_size_limit",
    "legacy_alter_table",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "module_list",
    "page_count",
    "page_size",
    "pragma_list",
    "query_only",
    "quick_check",
    "read_uncommitted",
    "recursive_triggers",
    "reverse_unordered_selects",
    "schema_version",
    "secure_delete",
    "soft_heap_limit",
    "synchronous",
    "table_list",
    "temp_store",
    "threads",
    "trusted_schema",
    "user_version",
    "wal_autocheckpoint",
    "writable_schema",
];

/// Pragmas whose argument names what to read rather than a new setting
/// (SQLite offers these as table-valued `pragma_*` functions too).
const PRAGMAS_READING_AN_ARGUMENT: [&str; 10] = [
    "table_info",
    "table_xinfo",
    "table_list",
    "index_info",
    "index_xinfo",
    "index_list",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
];

/// What the authorizer saw of one console statement.
#[derive(Debug, Default)]
struct AuthLog {
    /// Authorizations asked so far (while preparing, then while running).
    asked: usize,
    /// Whether the first one was an allowed bare pragma of
    /// [`PRAGMAS_READING_WHEN_BARE`].
    first_was_bare_pragma: bool,
    /// Why the last denial was made.
    denied: Option<Denial>,
}

/// Why the authorizer said no.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Denial {
    /// A write of any kind (`INSERT`, `CREATE`, `ANALYZE`, ...).
    Writes,
    /// A `PRAGMA` with a value, a transaction, `ATTACH` or `DETACH`.
    ChangesConnection,
    /// A `PRAGMA` on neither list, by its lower-case name.
    Pragma(String),
}

fn lock(log: &Mutex<AuthLog>) -> std::sync::MutexGuard<'_, AuthLog> {
    // A panic cannot happen while the log is held; if one did, the log is
    // still just counters.
    log.lock().unwrap_or_else(PoisonError::into_inner)
}

fn authorize(log: &mut AuthLog, action: &AuthAction<'_>) -> Authorization {
    log.asked += 1;
    match judge(action) {
        Ok(bare_pragma) => {
            if log.asked == 1 {
                log.first_was_bare_pragma = bare_pragma;
            }
            Authorization::Allow
        }
        Err(denial) => {
            log.denied = Some(denial);
            Authorization::Deny
        }
    }
}

/// Whether the console allows `action`: `Ok(true)` for a bare pragma of
/// [`PRAGMAS_READING_WHEN_BARE`], `Ok(false)` for the rest of what reading
/// needs, else why not. An allow-list: what SQLite may add one day is
/// refused until someone looks at it.
fn judge(action: &AuthAction<'_>) -> Result<bool, Denial> {
    match action {
        AuthAction::Select
        | AuthAction::Read { .. }
        | AuthAction::Function { .. }
        | AuthAction::Recursive => Ok(false),
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => {
            let name = pragma_name.to_ascii_lowercase();
            if PRAGMAS_READING_AN_ARGUMENT.contains(&name.as_str()) {
                Ok(false)
            } else if pragma_value.is_some() {
                Err(Denial::ChangesConnection)
            } else if PRAGMAS_READING_WHEN_BARE.contains(&name.as_str()) {
                Ok(true)
            } else {
                Err(Denial::Pragma(name))
            }
        }
        AuthAction::Transaction { .. }
        | AuthAction::Savepoint { .. }
        | AuthAction::Attach { .. }
        | AuthAction::Detach { .. } => Err(Denial::ChangesConnection),
        _ => Err(Denial::Writes),
    }
}

/// Where a SQLite error came from: preparing (the text itself is at fault)
/// or running.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Prepare,
    Run,
}

/// A SQLite error of a console statement, as the reader should see it.
fn refusal(e: rusqlite::Error, log: &Mutex<AuthLog>, stage: Stage) -> Error {
    if matches!(e, rusqlite::Error::MultipleStatement) {
        return refuse(Reason::new(
            ConsoleCode::SqlMultiple,
            "only one statement at a time",
        ));
    }
    let heap_limit = budget::heap_limit();
    match e.sqlite_error_code() {
        Some(ErrorCode::AuthorizationForStatementDenied) => denied(lock(log).denied.clone()),
        Some(ErrorCode::TooBig) => value_too_big(),
        Some(ErrorCode::OutOfMemory) if heap_limit > 0 => out_of_memory(heap_limit),
        // Syntax, an unknown name, a wrong argument: the SQL is at fault.
        _ if stage == Stage::Prepare => rejected(e),
        // While running, too: an integer overflow, a type mismatch. Not
        // the storage (busy, I/O, corrupt), which keeps its own kind.
        Some(ErrorCode::Unknown | ErrorCode::TypeMismatch | ErrorCode::ConstraintViolation) => {
            rejected(e)
        }
        _ => Error::from(e),
    }
}

fn rejected(e: rusqlite::Error) -> Error {
    refuse(
        Reason::new(
            ConsoleCode::SqlRejected,
            format!("SQLite cannot run this: {e}"),
        )
        .with("detail", e),
    )
}

fn denied(denial: Option<Denial>) -> Error {
    match denial {
        Some(Denial::Writes) => refuse(Reason::new(
            ConsoleCode::SqlWrites,
            "this statement would write to the database; the console is read-only \
             (use the delivery form to change data)",
        )),
        Some(Denial::Pragma(name)) => refuse(
            Reason::new(
                ConsoleCode::SqlPragmaNotAllowed,
                format!(
                    "PRAGMA {name} is not one the console runs: only pragmas that read are \
                     allowed (such as journal_mode, page_size or table_info(inbox))"
                ),
            )
            .with("name", name),
        ),
        Some(Denial::ChangesConnection) | None => refuse(Reason::new(
            ConsoleCode::SqlChangesConnection,
            "this statement would change the connection (a PRAGMA with a value, a transaction \
             or ATTACH); the console is read-only",
        )),
    }
}

/// The budget ran out: inside, when SQLite stopped the query, or from
/// outside, when the page stopped the worker running it at the budget's
/// deadline. The reader is told the budget, not what was spent (that
/// differs from run to run, and the page translates the message).
pub fn over_budget() -> Error {
    let Budget { steps, time, .. } = Budget::CONSOLE;
    let seconds = time.as_secs_f64();
    refuse(
        Reason::new(
            ConsoleCode::QueryBudget,
            format!(
                "the query was stopped: it used up the console's budget of {seconds} s or \
                 {steps} steps of SQLite's virtual machine; nothing was changed (narrow it \
                 with WHERE or LIMIT)"
            ),
        )
        .with("seconds", seconds)
        .with("steps", steps),
    )
}

fn value_too_big() -> Error {
    let max = Budget::CONSOLE.max_value_bytes;
    refuse(
        Reason::new(
            ConsoleCode::ValueTooBig,
            format!(
                "a value would be longer than {max} bytes, the most the console computes; \
                 ask for a part of it (substr) or its length (length)"
            ),
        )
        .with("max", max),
    )
}

fn out_of_memory(heap_limit: i64) -> Error {
    let mib = heap_limit >> 20;
    refuse(
        Reason::new(
            ConsoleCode::QueryMemory,
            format!(
                "the query needed more memory than SQLite may use here ({mib} MiB) and was \
                 stopped; nothing was changed (ask for fewer or shorter rows)"
            ),
        )
        .with("mib", mib),
    )
}

/// One value as shown.
struct Cell {
    json: serde_json::Value,
    /// The whole value's size in bytes, if only its beginning is shown.
    cut_from: Option<usize>,
}

/// What `v` adds to a result: its JSON and a separator (counted as it is
/// written, nothing kept).
fn json_bytes(v: &impl Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(1);
    // Writing to a counter cannot fail, nor can serialising plain values.
    let _ = serde_json::to_writer(&mut count, v);
    count.0
}

impl Cell {
    /// `v` as JSON, its text or hex cut to [`MAX_CELL_CHARS`] characters
    /// and `room` bytes.
    fn of(v: ValueRef<'_>, room: usize) -> Cell {
        use serde_json::Value;
        const SAFE: i64 = (1 << 53) - 1;
        let whole = |json: Value| Cell {
            json,
            cut_from: None,
        };
        match v {
            ValueRef::Null => whole(Value::Null),
            ValueRef::Integer(i) if (-SAFE..=SAFE).contains(&i) => whole(Value::from(i)),
            ValueRef::Integer(i) => whole(Value::from(i.to_string())),
            ValueRef::Real(f) => whole(
                serde_json::Number::from_f64(f)
                    .map(Value::Number)
                    .unwrap_or_else(|| Value::from(f.to_string())),
            ),
            ValueRef::Text(t) => {
                let text = String::from_utf8_lossy(t);
                let shown = prefix(&text, MAX_CELL_CHARS, room);
                Cell {
                    cut_from: (shown.len() < text.len()).then_some(t.len()),
                    json: Value::from(shown),
                }
            }
            ValueRef::Blob(b) => {
                // `x'`, two hex digits a byte, `'`; cut, the closing quote is
                // left off.
                let room = room.min(MAX_CELL_CHARS);
                let fits = 3 + 2 * b.len() <= room;
                let shown = match (fits, room) {
                    (true, _) => b,
                    (false, 0 | 1) => &[][..],
                    (false, _) => &b[..(room - 2) / 2],
                };
                let mut hex = String::with_capacity(3 + 2 * shown.len());
                if fits || room >= 2 {
                    hex.push_str("x'");
                }
                for byte in shown {
                    let _ = write!(hex, "{byte:02X}");
                }
                if fits {
                    hex.push('\'');
                }
                Cell {
                    cut_from: (!fits).then_some(b.len()),
                    json: Value::from(hex),
                }
            }
        }
    }
}

/// The longest beginning of `s` with at most `max_chars` characters and
/// `max_bytes` bytes, cut between characters.
fn prefix(s: &str, max_chars: usize, max_bytes: usize) -> &str {
    for (count, (at, ch)) in s.char_indices().enumerate() {
        if count == max_chars || at + ch.len_utf8() > max_bytes {
            return &s[..at];
        }
    }
    s
}

fn refuse(reason: Reason) -> Error {
    Error::refused(SQL, reason)
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    /// What one cell of the last row may add past [`MAX_RESULT_BYTES`]: a
    /// number's JSON (≤ 24 bytes) or an empty text cut there and its note in
    /// [`QueryResult::truncated_values`] (≤ 60 bytes).
    const ROW_SLACK: usize = 64;

    const ENDLESS: &str =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::core::schema::prepare(&conn, crate::core::schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        crate::core::schema::init(&mut conn, &[1, 2]).unwrap();
        conn
    }

    /// Only a bare pragma reading a setting of the connection is answered by
    /// the database's own connection; everything else runs on a copy.
    #[test]
    fn settings_pragmas_are_told_apart_by_their_text() {
        for sql in [
            "PRAGMA journal_mode",
            "pragma main.synchronous;",
            "  PRAGMA\tforeign_keys ; ",
            "PRAGMA MAIN.LOCKING_MODE",
        ] {
            assert!(reads_only_settings(sql), "{sql}");
        }
        for sql in [
            "PRAGMA integrity_check",
            "PRAGMA journal_mode = DELETE",
            "PRAGMA journal_mode; SELECT 1",
            "PRAGMA table_info(inbox)",
            "SELECT * FROM pragma_journal_mode",
            "PRAGMA temp.journal_mode",
            "",
            "PRAGMA",
        ] {
            assert!(!reads_only_settings(sql), "{sql}");
        }
    }

    /// A query on a copy reads what the database held when it was copied,
    /// and is as read-only as one on the database.
    #[test]
    fn a_query_on_a_copy_reads_the_copied_database() {
        let mut conn = db();
        let copy = crate::labs::tools::transfer::export(&mut conn).unwrap();
        conn.execute("UPDATE accounts SET balance = 5 WHERE id = 1", [])
            .unwrap();
        let r = query_copy(&copy, "SELECT id, balance FROM accounts ORDER BY id").unwrap();
        assert_eq!(r.rows.len(), 2);
        assert_eq!(r.rows[0], [serde_json::json!(1), serde_json::json!(0)]);
        let foreign_keys = query_copy(&copy, "PRAGMA foreign_keys").unwrap();
        assert_eq!(foreign_keys.rows, [[serde_json::json!(1)]]);
        match query_copy(&copy, "DELETE FROM accounts") {
            Err(err) => assert_eq!(err.code(), "sql_writes"),
            Ok(r) => panic!("a write ran on the copy: {r:?}"),
        }
        assert!(query_copy(b"not a database", "SELECT 1").is_err());
    }

    /// The refusal's code; panics if `sql` was answered or failed otherwise.
    fn refusal_code(conn: &mut Connection, sql: &str) -> &'static str {
        match query(conn, sql) {
            Err(err @ Error::InvalidInput { field: SQL, .. }) => {
                let report = err.report();
                // Every value a translation may use is in the English sentence.
                for value in report.params.values() {
                    assert!(report.message.contains(value.as_str()), "{report:?}");
                }
                assert!(!report.retryable, "{report:?}");
                report.code
            }
            other => panic!("{sql:?} must be refused, got {other:?}"),
        }
    }

    /// A delivery on the same connection, which must apply.
    fn delivery_applies(conn: &Connection, event_id: &str) {
        let event = crate::Event::new("console-test", event_id, 1, 5).unwrap();
        let outcome = crate::apply(conn, &event, None).unwrap();
        assert!(matches!(outcome, crate::Outcome::Applied(_)), "{outcome:?}");
    }

    #[test]
    fn reads_are_answered_as_a_table() {
        let mut conn = db();
        let r = query(
            &mut conn,
            "SELECT id, balance, x'0aff', 9007199254740992 FROM accounts ORDER BY id",
        )
        .unwrap();
        assert_eq!(r.columns.len(), 4);
        assert_eq!(r.rows.len(), 2);
        assert_eq!(r.rows[0][2], serde_json::json!("x'0AFF'"));
        assert_eq!(r.rows[0][3], serde_json::json!("9007199254740992"));
        assert!(r.truncated_values.is_empty());
        assert!(query(&mut conn, "PRAGMA table_info(inbox)").is_ok());
        assert!(query(&mut conn, "PRAGMA user_version").is_ok());
        assert!(query(&mut conn, "PRAGMA integrity_check").is_ok());
        assert!(query(&mut conn, "PRAGMA foreign_key_check(inbox)").is_ok());
        assert!(query(&mut conn, "SELECT name FROM pragma_table_info('inbox')").is_ok());
        let many = query(&mut conn, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 600) SELECT i FROM n").unwrap();
        assert_eq!((many.rows.len(), many.truncated), (MAX_ROWS, true));
    }

    #[test]
    fn writes_and_connection_changes_are_refused() {
        let mut conn = db();
        for (sql, code) in [
            ("DELETE FROM accounts", "sql_writes"),
            ("UPDATE accounts SET balance = 5", "sql_writes"),
            ("INSERT INTO accounts(id) VALUES (9)", "sql_writes"),
            ("DROP TABLE inbox", "sql_writes"),
            ("CREATE TABLE t(x)", "sql_writes"),
            ("EXPLAIN DELETE FROM accounts", "sql_writes"),
            ("VACUUM", "sql_writes"),
            ("VACUUM INTO 'copy.sqlite3'", "sql_writes"),
            ("ANALYZE", "sql_writes"),
            ("CREATE TEMP TABLE t(x)", "sql_writes"),
            ("PRAGMA foreign_keys = OFF", "sql_changes_connection"),
            ("PRAGMA user_version = 7", "sql_changes_connection"),
            ("PRAGMA journal_mode = WAL", "sql_changes_connection"),
            ("PRAGMA main.journal_mode = OFF", "sql_changes_connection"),
            ("PRAGMA page_size = 512", "sql_changes_connection"),
            ("PRAGMA writable_schema = ON", "sql_changes_connection"),
            ("BEGIN", "sql_changes_connection"),
            ("ATTACH ':memory:' AS other", "sql_changes_connection"),
            // Not on the lists: these act (optimize runs ANALYZE, which
            // creates and writes sqlite_stat1), or are unknown.
            ("PRAGMA optimize", "sql_pragma_not_allowed"),
            ("PRAGMA wal_checkpoint", "sql_pragma_not_allowed"),
            ("PRAGMA incremental_vacuum", "sql_pragma_not_allowed"),
            ("PRAGMA shrink_memory", "sql_pragma_not_allowed"),
            ("PRAGMA no_such_pragma", "sql_pragma_not_allowed"),
            ("SELECT 1; SELECT 2", "sql_multiple"),
            // The statement after the first is prepared (and authorized)
            // too, so its write is what is refused, before anything runs.
            ("SELECT 1; DELETE FROM accounts", "sql_writes"),
            (
                "SELECT 1; PRAGMA foreign_keys = OFF",
                "sql_changes_connection",
            ),
            ("", "sql_empty"),
            ("SELEC 1", "sql_rejected"),
        ] {
            assert_eq!(refusal_code(&mut conn, sql), code, "{sql:?}");
        }
        // The same pragma through its table-valued function is checked
        // while the statement runs.
        assert_eq!(
            refusal_code(&mut conn, "SELECT * FROM pragma_optimize"),
            "sql_pragma_not_allowed"
        );
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(fk, 1, "foreign keys still on");
        let n: i64 = conn
            .query_row("SELECT count(*) FROM accounts", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 2, "nothing deleted");
        let stats: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlite_stat%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stats, 0, "no ANALYZE ran");
        // The authorizer is removed afterwards: the app's own writes work.
        assert!(crate::core::schema::add_account(&conn, 3).unwrap());
    }

    /// Every pragma of the list answers when given no value, changes
    /// nothing, and is refused with a value. `stmt_readonly` alone called
    /// `PRAGMA journal_mode` a write.
    #[test]
    fn read_only_pragmas_are_answered_and_their_settings_refused() {
        let mut conn = db();
        let mode = query(&mut conn, "PRAGMA journal_mode").unwrap();
        let expected: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode.rows, [[serde_json::json!(expected)]]);
        let size = query(&mut conn, "pragma PAGE_SIZE").unwrap();
        let expected: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        assert_eq!(size.rows, [[serde_json::json!(expected)]]);
        let fk = query(&mut conn, "PRAGMA foreign_keys").unwrap();
        assert_eq!(fk.rows, [[serde_json::json!(1)]]);

        let settings = |conn: &Connection| -> Vec<String> {
            [
                "journal_mode",
                "page_size",
                "foreign_keys",
                "user_version",
                "schema_version",
                "synchronous",
                "writable_schema",
                "query_only",
                "locking_mode",
                "cache_size",
            ]
            .iter()
            .map(|p| {
                conn.query_row(&format!("PRAGMA {p}"), [], |r| {
                    r.get::<_, rusqlite::types::Value>(0)
                })
                .map(|v| format!("{p}={v:?}"))
                .unwrap()
            })
            .collect()
        };
        let before = settings(&conn);
        let changes = conn.total_changes();
        for name in PRAGMAS_READING_WHEN_BARE {
            if let Err(e) = query(&mut conn, &format!("PRAGMA {name}")) {
                panic!("PRAGMA {name}: {e}");
            }
            // With a value it would be a setting, unless the value only
            // says what to read (`integrity_check(1)`: report one problem).
            let set = format!("PRAGMA {name} = 1");
            if PRAGMAS_READING_AN_ARGUMENT.contains(&name) {
                // Answered, or refused as SQL (`foreign_key_check(1)`: no
                // such table); nothing changes either way (checked below).
                let _ = query(&mut conn, &set);
            } else {
                assert_eq!(
                    refusal_code(&mut conn, &set),
                    "sql_changes_connection",
                    "{set}"
                );
            }
        }
        assert_eq!(settings(&conn), before, "no setting changed");
        assert_eq!(conn.total_changes(), changes, "nothing written");
        delivery_applies(&conn, "after-pragmas");
    }

    /// The query of issue 11 that never returned: now it ends within the
    /// budget with `query_budget`, and a delivery right after applies.
    #[test]
    fn an_endless_query_ends_with_query_budget() {
        let mut conn = db();
        let started = web_time::Instant::now();
        let err = query(&mut conn, ENDLESS).unwrap_err();
        let elapsed = started.elapsed();
        assert_eq!(err.code(), "query_budget", "{err}");
        assert!(
            elapsed < Budget::CONSOLE.time + std::time::Duration::from_secs(3),
            "took {elapsed:?}"
        );
        let params = err.params();
        assert_eq!(params["seconds"], "2");
        assert_eq!(params["steps"], "100000000");
        assert_eq!(refusal_code(&mut conn, ENDLESS), "query_budget");
        delivery_applies(&conn, "after-endless");
    }

    /// `SELECT randomblob(3e8)` blocked the worker for 38 s, then answered
    /// an empty string: now it is refused at once, naming the limit.
    #[test]
    fn a_huge_value_is_value_too_big() {
        let mut conn = db();
        let started = web_time::Instant::now();
        let err = query(&mut conn, "SELECT randomblob(3e8)").unwrap_err();
        assert_eq!(err.code(), "value_too_big", "{err}");
        assert_eq!(err.params()["max"], "1048576");
        assert!(
            started.elapsed() < Budget::CONSOLE.time,
            "{:?}",
            started.elapsed()
        );
        for sql in [
            "SELECT zeroblob(2000000)",
            "SELECT length(hex(randomblob(600000)))",
            "SELECT group_concat(hex(randomblob(1000)), '') FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 1000) SELECT i FROM n)",
        ] {
            assert_eq!(refusal_code(&mut conn, sql), "value_too_big", "{sql}");
        }
        delivery_applies(&conn, "after-huge");
    }

    /// A long value is shown cut, and the result says which cell and how
    /// long the value is: never a silently shorter or empty value.
    #[test]
    fn a_long_value_is_cut_with_a_note() {
        let mut conn = db();
        let r = query(
            &mut conn,
            "SELECT hex(zeroblob(50000)) AS t, zeroblob(60000) AS b, \
             replace(hex(zeroblob(6000)), '0', 'я') AS cyr, 'short' AS s",
        )
        .unwrap();
        let text = |column: usize| r.rows[0][column].as_str().unwrap().to_string();
        assert_eq!(text(0), "0".repeat(MAX_CELL_CHARS));
        assert_eq!(text(1).len(), MAX_CELL_CHARS);
        assert!(text(1).starts_with("x'0000") && !text(1).ends_with('\''));
        assert_eq!(
            text(2),
            "я".repeat(MAX_CELL_CHARS),
            "cut between characters"
        );
        assert_eq!(text(3), "short");
        assert_eq!(
            r.truncated_values,
            [
                TruncatedValue {
                    row: 0,
                    column: 0,
                    bytes: 100_000
                },
                TruncatedValue {
                    row: 0,
                    column: 1,
                    bytes: 60_000
                },
                TruncatedValue {
                    row: 0,
                    column: 2,
                    bytes: 24_000
                },
            ]
        );
        assert!(!r.truncated);
        let wire = serde_json::to_value(&r).unwrap();
        assert_eq!(
            wire["truncated_values"][1],
            serde_json::json!({"row": 0, "column": 1, "bytes": 60000})
        );
    }

    /// A result's JSON is at most MAX_RESULT_BYTES (and the last row's
    /// slack): the text cell that reaches it is cut (and listed), and no
    /// further row is added.
    #[test]
    fn a_result_is_capped_in_total() {
        let mut conn = db();
        let r = query(
            &mut conn,
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 600) \
             SELECT i, hex(zeroblob(5000)) FROM n",
        )
        .unwrap();
        assert!(r.truncated);
        let last = r.rows.len() - 1;
        assert_eq!(
            r.truncated_values,
            [TruncatedValue {
                row: last,
                column: 1,
                bytes: MAX_CELL_CHARS
            }]
        );
        assert!(r.rows[..last]
            .iter()
            .all(|row| row[1].as_str().unwrap().len() == MAX_CELL_CHARS));
        let sent = serde_json::to_string(&r).unwrap().len();
        assert!(sent <= MAX_RESULT_BYTES + 100, "{sent}");
        assert!(sent > MAX_RESULT_BYTES - 100, "{sent}: filled");
    }

    /// Whatever a result is made of — long column names, many columns of
    /// numbers and nulls, text that JSON escapes — what is sent is bounded by
    /// MAX_RESULT_BYTES, passed at most by the last row's slack.
    #[test]
    fn everything_a_result_returns_counts_against_its_cap() {
        let mut conn = db();
        let rows_of = |select: String| {
            format!(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 500) \
                 SELECT {select} FROM n"
            )
        };
        let columns = |n: usize, each: &dyn Fn(usize) -> String| {
            (0..n).map(each).collect::<Vec<_>>().join(", ")
        };
        let long_name = "n".repeat(3_000);
        for (what, sql) in [
            (
                "long names",
                rows_of(columns(1_000, &|i| format!("i AS \"{long_name}{i}\""))),
            ),
            (
                "numbers and nulls",
                rows_of(columns(1_900, &|i| {
                    if i % 2 == 0 {
                        "NULL"
                    } else {
                        "-1.2345678901234567e300"
                    }
                    .to_owned()
                })),
            ),
            (
                "escapes",
                rows_of(columns(1_900, &|_| "char(1, 2, 3, 4)".to_owned())),
            ),
        ] {
            let r = query(&mut conn, &sql).unwrap_or_else(|e| panic!("{what}: {e}"));
            let sent = serde_json::to_string(&r).unwrap().len();
            let last_row = ROW_SLACK * r.columns.len();
            assert!(r.truncated, "{what}: {} rows", r.rows.len());
            assert!(
                sent <= MAX_RESULT_BYTES + last_row,
                "{what}: {sent} bytes sent"
            );
        }
    }

    /// Column names that alone pass the cap are refused before any row.
    #[test]
    fn column_names_alone_over_the_cap_are_result_too_big() {
        let mut conn = db();
        let name = "x".repeat(MAX_CELL_CHARS);
        let select: Vec<String> = (0..500).map(|i| format!("1 AS \"{name}{i}\"")).collect();
        let sql = format!("SELECT {}", select.join(", "));
        assert_eq!(refusal_code(&mut conn, &sql), "result_too_big");
    }

    #[test]
    fn prefix_cuts_between_characters() {
        assert_eq!(prefix("abc", 2, 10), "ab");
        assert_eq!(prefix("abc", 5, 10), "abc");
        assert_eq!(prefix("яяя", 5, 5), "яя");
        assert_eq!(prefix("яяя", 5, 1), "");
    }
}
