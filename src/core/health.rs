//! Is the stored database one this build can use? Checked before the page
//! trusts a database it finds in storage.
//!
//! Invariant: a database that passes [`check`] is exactly what inbox-lab's
//! own statements can produce — inbox-lab's schema byte for byte (no extra
//! trigger, index, view or collation), an intact file whose indexes agree
//! with their tables, each key stored once, and every stored value of the
//! type and range the code expects. So the guarantee holds on
//! it as on a fresh one, and no delivery meets a row it cannot read (which
//! would fail the same way on every retry).
//!
//! A database fails it when it was damaged on disk, written by another
//! program, or imported by an older inbox-lab that adopted foreign files.
//! The page then says what is wrong and offers "export as is" and "reset";
//! it never refuses to start.

use rusqlite::Connection;
use sha2::{Digest, Sha256};

use crate::core::error::{Error, StorageCode};
use crate::core::schema;
use crate::core::stored::{read_rows, OnBadRow};

/// Checks the database behind `conn` (already migrated to
/// [`schema::VERSION`], as [`crate::core::db::open`] leaves it).
///
/// # Errors
/// [`Error::Storage`] with [`StorageCode::Unusable`] (a schema that differs,
/// a value of the wrong type or range, a key stored twice) or
/// [`StorageCode::Corrupt`] (`integrity_check` failed: damaged pages, or an
/// index that disagrees with its table), saying what is wrong; neither is
/// retryable.
pub fn check(conn: &Connection) -> Result<(), Error> {
    schema::check_current(conn)?;
    let found = schema_of(conn)?;
    if fingerprint(&found) != CURRENT_SCHEMA {
        compare(&found, &current_schema()?)?;
    }
    // `integrity_check`, not `quick_check`: only it compares every index
    // with its table. An index that disagrees — damage that leaves each page
    // well-formed, such as two index roots swapped in `sqlite_schema` — makes
    // `ON CONFLICT` miss the stored key, and every replay is applied again.
    let problems: Vec<String> = conn
        .prepare("PRAGMA integrity_check(5)")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if problems != ["ok"] {
        return Err(Error::storage_with(
            StorageCode::Corrupt,
            format!("the file is damaged: {}", problems.join("; ")),
        ));
    }
    // The typed reading scans the tables themselves, so it also finds a key
    // stored twice whatever the indexes say.
    read_rows(conn, schema::VERSION, OnBadRow::Refuse)
        .map_err(|reason| Error::storage_with(StorageCode::Unusable, reason.to_string()))?;
    // A header asking for a newer file format to write (bytes 18 and 19)
    // leaves a file SQLite can read but never write: every delivery would
    // fail, so it is the file's problem now, not the first write's.
    if conn.is_readonly(rusqlite::MAIN_DB)? {
        return Err(Error::storage_with(
            StorageCode::Unusable,
            "SQLite can read this file but not write to it: its header asks for a file format newer than this SQLite writes",
        ));
    }
    Ok(())
}

/// The objects of a schema, as `sqlite_schema` stores them: type, name, SQL.
type Objects = Vec<(String, String, Option<String>)>;

/// inbox-lab's schema: what [`schema::migrate`] builds in an empty database.
fn current_schema() -> Result<Objects, Error> {
    let mut fresh = Connection::open_in_memory()?;
    schema::migrate(&mut fresh)?;
    schema_of(&fresh)
}

/// [`fingerprint`] of [`current_schema`]. A stored schema with this
/// fingerprint is inbox-lab's, and the check need not build it: running the
/// migrations on an empty database took 15–35 ms of every page start in the
/// browser, mostly compiling SQLite's code for `CREATE` and `ALTER`, which a
/// start otherwise never runs. The fingerprint covers the migrations' text, so
/// once they change no schema matches a value left stale: the check then
/// builds the schema and compares as before, only slower, and the test
/// `the_current_schema_is_known_by_its_fingerprint` says the new value.
const CURRENT_SCHEMA: &str = "5df3143d3875c3510e18e4d24288c569f9f78af8bfee619d5a432fd87c86f3f4";

/// SHA-256 of the migrations' text and the schema's objects, as lowercase
/// hex. Hashed in their `Debug` form, where every string is quoted and
/// escaped, so no two different schemas read the same.
fn fingerprint(objects: &Objects) -> String {
    let text = format!("{:?}{objects:?}", schema::MIGRATIONS);
    Sha256::digest(text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The stored schema `found` against inbox-lab's `expected`: an error saying
/// what differs.
fn compare(found: &Objects, expected: &Objects) -> Result<(), Error> {
    if found == expected {
        return Ok(());
    }
    let extra = found.iter().find(|o| !expected.contains(o));
    let missing = expected.iter().find(|o| !found.contains(o));
    let what = match (extra, missing) {
        (Some((kind, name, _)), _) => format!("it has a {kind} {name} that inbox-lab's has not"),
        (None, Some((kind, name, _))) => format!("its {kind} {name} is not inbox-lab's"),
        (None, None) => "its objects are in another order".to_string(),
    };
    Err(Error::storage_with(
        StorageCode::Unusable,
        format!("the schema differs from inbox-lab's: {what}"),
    ))
}

/// Every object of the schema, as SQLite stores it (the root page aside).
fn schema_of(conn: &Connection) -> Result<Objects, Error> {
    let mut stmt = conn.prepare(
        "SELECT type, name, sql FROM sqlite_schema ORDER BY type COLLATE BINARY, name COLLATE BINARY",
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
    use crate::{apply, Event};

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
        schema::init(&mut conn, &[1]).unwrap();
        apply(&conn, &Event::new("a", "e-1", 1, 5).unwrap(), None).unwrap();
        conn
    }

    fn code(conn: &Connection) -> Option<&'static str> {
        check(conn).err().map(|e| {
            assert!(!e.retryable(), "{e}");
            e.code()
        })
    }

    /// A database built by inbox-lab's own statements is known by its
    /// fingerprint, so the check builds no schema to compare it with.
    #[test]
    fn the_current_schema_is_known_by_its_fingerprint() {
        let now = fingerprint(&current_schema().unwrap());
        assert_eq!(
            now, CURRENT_SCHEMA,
            "the schema or its migrations changed: set CURRENT_SCHEMA to \"{now}\""
        );
        assert_eq!(fingerprint(&schema_of(&db()).unwrap()), CURRENT_SCHEMA);
    }

    #[test]
    fn a_database_written_by_inbox_lab_is_healthy() {
        let conn = db();
        // Rows without a receipt (what the race lab's mistaken handlers
        // write) are inbox-lab's too.
        conn.execute(
            "INSERT INTO inbox(source, event_id, account_id, amount) VALUES ('a', 'e-2', 1, 5)",
            [],
        )
        .unwrap();
        assert_eq!(code(&conn), None);
    }

    #[test]
    fn an_extra_trigger_or_index_is_unusable() {
        let conn = db();
        conn.execute_batch("CREATE TRIGGER t AFTER INSERT ON inbox BEGIN SELECT 1; END")
            .unwrap();
        assert_eq!(code(&conn), Some("unusable"));
        let conn = db();
        conn.execute_batch("CREATE UNIQUE INDEX i ON inbox(event_id COLLATE NOCASE)")
            .unwrap();
        assert_eq!(code(&conn), Some("unusable"));
    }

    /// A file whose header says it may only be read by this SQLite (a
    /// write version of 3): readable, so only asking says it is unusable.
    #[cfg(not(target_family = "wasm"))]
    #[test]
    fn a_file_sqlite_may_only_read_is_unusable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("newer.sqlite3");
        {
            let mut conn = Connection::open(&path).unwrap();
            schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).unwrap();
            schema::init(&mut conn, &[1]).unwrap();
        }
        let conn = Connection::open(&path).unwrap();
        assert_eq!(code(&conn), None);
        drop(conn);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[18] = 3;
        std::fs::write(&path, bytes).unwrap();
        let conn = Connection::open(&path).unwrap();
        assert_eq!(code(&conn), Some("unusable"));
    }

    #[test]
    fn a_value_of_the_wrong_type_is_unusable() {
        for sql in [
            "UPDATE inbox SET event_id = CAST(event_id AS BLOB)",
            "UPDATE inbox SET source = CAST(x'ff00' AS TEXT)",
            "UPDATE receipt_counter SET last_seq = 9223372036854775807",
            "UPDATE inbox SET receipt_seq = NULL",
        ] {
            let conn = db();
            conn.execute_batch(sql).unwrap();
            assert_eq!(code(&conn), Some("unusable"), "{sql}");
        }
    }
}
