//! The read-only SQL console: explore the tables with `SELECT` and read-only
//! `PRAGMA`s, never change them.
//!
//! Invariant: a console query cannot write and cannot change how the
//! connection behaves. Two of SQLite's own checks enforce it, not string
//! matching:
//! * `sqlite3_stmt_readonly()` ([`rusqlite::Statement::readonly`]) refuses
//!   statements that would write the database;
//! * an authorizer, active only while the console prepares its statement,
//!   refuses what `stmt_readonly` lets through but would still change the
//!   connection: a `PRAGMA` with an argument (`foreign_keys = OFF`),
//!   transaction control, `ATTACH`/`DETACH`.

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde::Serialize;

use crate::error::{Error, InvalidCode, Reason};

/// At most this many rows are returned; the rest is reported as truncated.
pub const MAX_ROWS: usize = 500;

/// A query's result, ready to show as a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryResult {
    pub columns: Vec<String>,
    /// Values as JSON: null, numbers, text; integers beyond ±2^53-1 and
    /// blobs (`x'0A1B'`) as text so JavaScript shows them exactly.
    pub rows: Vec<Vec<serde_json::Value>>,
    /// True when more than [`MAX_ROWS`] rows matched.
    pub truncated: bool,
}

/// Runs one read-only statement.
///
/// # Errors
/// [`Error::InvalidInput`] (field `sql`) for an empty text, several
/// statements, a statement SQLite cannot prepare, or one that would write or
/// change the connection; storage errors while reading.
///
/// # Example
/// ```
/// # let mut conn = rusqlite::Connection::open_in_memory().unwrap();
/// # inbox_lab::schema::init(&mut conn, &[1]).unwrap();
/// let r = inbox_lab::console::query(&mut conn, "SELECT id, balance FROM accounts").unwrap();
/// assert_eq!(r.columns, ["id", "balance"]);
/// assert!(inbox_lab::console::query(&mut conn, "DELETE FROM accounts").is_err());
/// ```
pub fn query(conn: &mut Connection, sql: &str) -> Result<QueryResult, Error> {
    let sql = sql.trim();
    if sql.is_empty() {
        return Err(refuse(Reason::new(
            InvalidCode::SqlEmpty,
            "type a SELECT statement or a read-only PRAGMA",
        )));
    }
    conn.authorizer(Some(read_only_authorizer))?;
    let result = run(conn, sql);
    conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>)?;
    result
}

fn run(conn: &Connection, sql: &str) -> Result<QueryResult, Error> {
    let mut stmt = conn.prepare(sql).map_err(|e| match e {
        rusqlite::Error::MultipleStatement => refuse(Reason::new(
            InvalidCode::SqlMultiple,
            "only one statement at a time",
        )),
        e if e.sqlite_error_code() == Some(rusqlite::ErrorCode::AuthorizationForStatementDenied) => {
            refuse(Reason::new(InvalidCode::SqlChangesConnection, "this statement would change the connection (a PRAGMA with a value, a transaction or ATTACH); the console is read-only"))
        }
        e => refuse(
            Reason::new(InvalidCode::SqlRejected, format!("SQLite cannot run this: {e}"))
                .with("detail", e),
        ),
    })?;
    if !stmt.readonly() {
        return Err(refuse(Reason::new(
            InvalidCode::SqlWrites,
            "this statement would write to the database; the console is read-only \
             (use the delivery form to change data)",
        )));
    }
    let columns: Vec<String> = stmt.column_names().map(String::from).collect();
    let mut rows = Vec::new();
    let mut truncated = false;
    let mut cursor = stmt.query([])?;
    while let Some(row) = cursor.next()? {
        if rows.len() == MAX_ROWS {
            truncated = true;
            break;
        }
        let values = (0..columns.len())
            .map(|i| row.get_ref(i).map(to_json))
            .collect::<Result<Vec<_>, _>>()?;
        rows.push(values);
    }
    Ok(QueryResult {
        columns,
        rows,
        truncated,
    })
}

/// Pragmas whose argument names what to read rather than a new setting
/// (SQLite offers exactly these as table-valued `pragma_*` functions too).
const PRAGMAS_READING_AN_ARGUMENT: [&str; 8] = [
    "table_info",
    "table_xinfo",
    "index_info",
    "index_xinfo",
    "index_list",
    "foreign_key_list",
    "integrity_check",
    "quick_check",
];

fn read_only_authorizer(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        // `PRAGMA name` reads. `PRAGMA name = value` changes the connection —
        // flag pragmas take effect while the statement is *prepared*, so
        // this must be refused here, before SQLite acts on it.
        AuthAction::Pragma {
            pragma_name,
            pragma_value: Some(_),
        } if !PRAGMAS_READING_AN_ARGUMENT.contains(&pragma_name.to_ascii_lowercase().as_str()) => {
            Authorization::Deny
        }
        AuthAction::Transaction { .. }
        | AuthAction::Savepoint { .. }
        | AuthAction::Attach { .. }
        | AuthAction::Detach { .. } => Authorization::Deny,
        _ => Authorization::Allow,
    }
}

fn to_json(v: ValueRef<'_>) -> serde_json::Value {
    use serde_json::Value;
    const SAFE: i64 = (1 << 53) - 1;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) if (-SAFE..=SAFE).contains(&i) => Value::from(i),
        ValueRef::Integer(i) => Value::from(i.to_string()),
        ValueRef::Real(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::from(f.to_string())),
        ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => {
            let hex: String = b.iter().map(|byte| format!("{byte:02X}")).collect();
            Value::from(format!("x'{hex}'"))
        }
    }
}

fn refuse(reason: Reason) -> Error {
    Error::refused(crate::event::Field::Sql, reason)
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::prepare(&conn, crate::schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        crate::schema::init(&mut conn, &[1, 2]).unwrap();
        conn
    }

    fn refused(conn: &mut Connection, sql: &str) -> bool {
        matches!(
            query(conn, sql),
            Err(Error::InvalidInput {
                field: crate::event::Field::Sql,
                ..
            })
        )
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
        assert!(query(&mut conn, "PRAGMA table_info(inbox)").is_ok());
        assert!(query(&mut conn, "PRAGMA user_version").is_ok());
        assert!(query(&mut conn, "PRAGMA integrity_check").is_ok());
        assert!(query(&mut conn, "SELECT name FROM pragma_table_info('inbox')").is_ok());
        let many = query(&mut conn, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 600) SELECT i FROM n").unwrap();
        assert_eq!((many.rows.len(), many.truncated), (MAX_ROWS, true));
    }

    #[test]
    fn writes_and_connection_changes_are_refused() {
        let mut conn = db();
        for sql in [
            "DELETE FROM accounts",
            "UPDATE accounts SET balance = 5",
            "INSERT INTO accounts(id) VALUES (9)",
            "DROP TABLE inbox",
            "CREATE TABLE t(x)",
            "PRAGMA foreign_keys = OFF",
            "PRAGMA user_version = 7",
            "PRAGMA journal_mode = WAL",
            "BEGIN",
            "ATTACH ':memory:' AS other",
            "SELECT 1; DELETE FROM accounts",
            "",
            "SELEC 1",
        ] {
            assert!(refused(&mut conn, sql), "{sql:?} must be refused");
        }
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(fk, 1, "foreign keys still on");
        let n: i64 = conn
            .query_row("SELECT count(*) FROM accounts", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 2, "nothing deleted");
        // The authorizer is removed afterwards: the app's own writes work.
        assert!(crate::schema::add_account(&conn, 3).unwrap());
    }
}
