//! Export the database as a `.sqlite3` file, and import one — but only one
//! that is verifiably an intact inbox-lab database.
//!
//! Invariant: an import either replaces the whole database with a file that
//! passed every check, or changes nothing. The checks run on a private
//! in-memory copy (SQLite header, `PRAGMA integrity_check`, the schema
//! version, the exact schema, committed receipts); only then does SQLite's
//! backup API copy it over the live database, in one transaction.

use rusqlite::backup::Backup;
use rusqlite::{Connection, MAIN_DB};

use crate::error::{Error, InvalidCode, Reason};
use crate::event::Field;
use crate::schema;

/// Largest file accepted for import.
pub const MAX_IMPORT_BYTES: usize = 64 << 20;

const HEADER: &[u8; 16] = b"SQLite format 3\0";

/// The whole database as the bytes of a `.sqlite3` file.
///
/// # Errors
/// Storage errors.
pub fn export(conn: &mut Connection) -> Result<Vec<u8>, Error> {
    let data = conn.serialize(MAIN_DB)?;
    Ok(data.to_vec())
}

/// Checks `bytes` without touching any database and returns an in-memory
/// connection holding them.
///
/// # Errors
/// [`Error::InvalidInput`] (field `file`) saying what is wrong.
pub fn validate(bytes: &[u8]) -> Result<Connection, Error> {
    let reject = |code: InvalidCode, text: String| Reason::new(code, text);
    let refuse = |reason: Reason| Error::refused(Field::File, reason);
    if bytes.len() > MAX_IMPORT_BYTES {
        return Err(refuse(
            reject(
                InvalidCode::FileTooBig,
                format!(
                    "the file is {} bytes; at most {MAX_IMPORT_BYTES} are accepted",
                    bytes.len()
                ),
            )
            .with("bytes", bytes.len())
            .with("max", MAX_IMPORT_BYTES),
        ));
    }
    if bytes.len() < 100 || !bytes.starts_with(HEADER) {
        return Err(refuse(reject(
            InvalidCode::NotSqlite,
            "not a SQLite database: the file does not start with the SQLite header".into(),
        )));
    }
    let mut copy = Connection::open_in_memory()?;
    copy.deserialize_read_exact(MAIN_DB, bytes, bytes.len(), false)
        .map_err(unreadable)?;
    let integrity = read(&copy, "PRAGMA integrity_check")?;
    if integrity != ["ok"] {
        let detail = integrity.join("; ");
        return Err(refuse(
            reject(
                InvalidCode::IntegrityFailed,
                format!("integrity_check failed: {detail}"),
            )
            .with("detail", detail),
        ));
    }
    let version = read(&copy, "PRAGMA user_version")?;
    let version: i64 = version.join("").parse().unwrap_or(-1);
    if !(1..=schema::VERSION).contains(&version) {
        return Err(refuse(
            reject(
                InvalidCode::UnsupportedVersion,
                format!(
                    "schema version {version} is not one this build reads (1 to {})",
                    schema::VERSION
                ),
            )
            .with("version", version)
            .with("max", schema::VERSION),
        ));
    }
    // A file from an older inbox-lab is brought up to date, in the copy.
    schema::migrate(&mut copy).map_err(|e| {
        refuse(
            reject(
                InvalidCode::FileUnreadable,
                format!("SQLite cannot read this file: {e}"),
            )
            .with("detail", e),
        )
    })?;
    let expected = {
        let mut fresh = Connection::open_in_memory()?;
        schema::migrate(&mut fresh)?;
        schema_of(&fresh)?
    };
    if schema_of(&copy)? != expected {
        return Err(refuse(reject(
            InvalidCode::SchemaDiffers,
            "the tables are not inbox-lab's: the schema differs from the expected one".into(),
        )));
    }
    let problems = read(
        &copy,
        "SELECT 'dangling_account' FROM pragma_foreign_key_check
         UNION ALL
         SELECT 'receipt_above_counter' FROM inbox
           WHERE receipt_seq > (SELECT last_seq FROM receipt_counter)
         LIMIT 1",
    )?;
    match problems.first().map(String::as_str) {
        Some("dangling_account") => {
            return Err(refuse(reject(
                InvalidCode::DanglingAccount,
                "inconsistent data: an inbox row points to a missing account".into(),
            )))
        }
        Some(_) => {
            return Err(refuse(reject(
                InvalidCode::ReceiptAboveCounter,
                "inconsistent data: a receipt number is above the receipt counter".into(),
            )))
        }
        None => {}
    }
    schema::prepare(&copy, schema::DEFAULT_BUSY_TIMEOUT)?;
    Ok(copy)
}

/// "SQLite cannot read this file", with SQLite's own words as the detail.
fn unreadable(e: rusqlite::Error) -> Error {
    Error::refused(
        Field::File,
        Reason::new(
            InvalidCode::FileUnreadable,
            format!("SQLite cannot read this file: {e}"),
        )
        .with("detail", e),
    )
}

/// Replaces the database behind `conn` with the validated `bytes`.
///
/// # Errors
/// [`Error::InvalidInput`] if the file is refused (nothing changed);
/// [`Error::Busy`] or storage errors from the copy (SQLite rolls it back).
pub fn import(conn: &mut Connection, bytes: &[u8]) -> Result<(), Error> {
    let source = validate(bytes)?;
    let backup = Backup::new(&source, conn)?;
    // All pages in one step: one write transaction on the destination.
    backup.step(-1)?;
    drop(backup);
    schema::check_current(conn)
}

/// Runs a query of one column, as strings; any failure means "cannot read
/// this file".
fn read(conn: &Connection, sql: &str) -> Result<Vec<String>, Error> {
    let mut stmt = conn.prepare(sql).map_err(unreadable)?;
    let rows = stmt
        .query_map([], |r| {
            use rusqlite::types::Value;
            Ok(match r.get::<_, Value>(0)? {
                Value::Text(t) => t,
                Value::Integer(i) => i.to_string(),
                other => format!("{other:?}"),
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(unreadable)?;
    Ok(rows)
}

fn schema_of(conn: &Connection) -> Result<Vec<(String, String, Option<String>)>, Error> {
    let mut stmt = conn.prepare(
        "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
    )?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;
    use crate::{apply, tables, Event};

    fn db_with_one_event() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut conn, &[1]).unwrap();
        let e = Event::new("provider-a", "evt-1", 1, 500).unwrap();
        apply(&conn, &e, None).unwrap();
        conn
    }

    #[test]
    fn export_then_import_round_trips() {
        let mut a = db_with_one_event();
        let bytes = export(&mut a).unwrap();
        let mut b = Connection::open_in_memory().unwrap();
        schema::prepare(&b, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut b, &[7]).unwrap();
        import(&mut b, &bytes).unwrap();
        assert_eq!(tables::snapshot(&b).unwrap(), tables::snapshot(&a).unwrap());
    }

    #[test]
    fn bad_files_are_refused_and_change_nothing() {
        let mut live = db_with_one_event();
        let before = tables::snapshot(&live).unwrap();
        let good = export(&mut live).unwrap();

        let mut truncated = good.clone();
        truncated.truncate(good.len() / 2);
        // Every b-tree page after the first gets an impossible page type.
        let mut corrupt = good.clone();
        let page_size = usize::from(u16::from_be_bytes([good[16], good[17]]));
        for page in (page_size..good.len()).step_by(page_size) {
            corrupt[page] = 0xFF;
        }
        let other = {
            let mut c = Connection::open_in_memory().unwrap();
            c.execute_batch("CREATE TABLE t(x); PRAGMA user_version = 1;")
                .unwrap();
            export(&mut c).unwrap()
        };
        let newer = {
            let mut c = db_with_one_event();
            c.pragma_update(None, "user_version", schema::VERSION + 1)
                .unwrap();
            export(&mut c).unwrap()
        };
        let cases: [(&str, Vec<u8>); 6] = [
            ("empty", Vec::new()),
            ("text", b"hello, this is not a database".repeat(10)),
            ("truncated", truncated),
            ("corrupt", corrupt),
            ("other schema", other),
            ("newer version", newer),
        ];
        for (name, bytes) in cases {
            match import(&mut live, &bytes) {
                Err(Error::InvalidInput {
                    field: Field::File, ..
                }) => {}
                other => panic!("{name}: expected a refused file, got {other:?}"),
            }
            assert_eq!(
                tables::snapshot(&live).unwrap(),
                before,
                "{name} changed the database"
            );
        }
    }
}
