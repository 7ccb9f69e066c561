//! Where the secrets live: a small database of their own, apart from the
//! inbox's.
//!
//! Why apart: a secret is a credential, not data. The inbox database can be
//! exported, replaced by an imported file or reset; none of that may plant,
//! leak or drop a credential. A file a reader imports cannot give a forger
//! a secret it knows, and a reset does not make a provider's deliveries
//! fail. (In the browser both files live in the same OPFS pool.)
//!
//! Each source has a `current` secret and, after a rotation, the `previous`
//! one: both verify until the next rotation, so deliveries signed just
//! before a rotation (or by a sender that signs with both) still arrive.
//!
//! *Invariant:* secrets are written only here, only as the canonical
//! `whsec_` text of a [`Secret`]; a stored one that does not parse makes
//! that source's deliveries fail loudly (a storage error), never verify.

use rusqlite::{params, Connection, OptionalExtension};

use super::secret::Secret;
use crate::core::error::{Error, StorageCode};
use crate::core::event::Event;

/// The secrets database's file name (next to the inbox's).
pub const FILE: &str = "hooks.sqlite3";

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS hook_secrets (
    source   TEXT PRIMARY KEY,
    current  TEXT NOT NULL,
    previous TEXT
)";

/// Creates the table if needed.
///
/// # Errors
/// Storage errors.
pub fn prepare(conn: &Connection) -> Result<(), Error> {
    conn.execute_batch(SCHEMA)?;
    Ok(())
}

/// The secrets that verify deliveries for `source`, the current one first,
/// as the `(source, secret)` pairs [`super::verify`] takes. Empty when the
/// source has none.
///
/// # Errors
/// Storage errors; a stored secret that does not parse is `unusable`.
pub fn secrets(conn: &Connection, source: &str) -> Result<Vec<(String, Secret)>, Error> {
    let stored: Option<(String, Option<String>)> = conn
        .query_row(
            "SELECT current, previous FROM hook_secrets WHERE source = ?1",
            params![source],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((current, previous)) = stored else {
        return Ok(Vec::new());
    };
    [Some(current), previous]
        .into_iter()
        .flatten()
        .map(|text| {
            Secret::parse(&text)
                .map(|s| (source.to_owned(), s))
                .map_err(|e| {
                    Error::storage_with(
                        StorageCode::Unusable,
                        format!("the stored secret of {source:?} cannot be used: {e}"),
                    )
                })
        })
        .collect()
}

/// The current secret of `source`, made from `fresh_key` when it has none
/// yet (the caller draws the key from a secure random source).
///
/// # Errors
/// `invalid_input` for a source that breaks the key rules or a bad key;
/// storage errors.
pub fn current(conn: &Connection, source: &str, fresh_key: &[u8]) -> Result<Secret, Error> {
    check_source(source)?;
    if let Some((_, secret)) = secrets(conn, source)?.into_iter().next() {
        return Ok(secret);
    }
    let secret = Secret::from_bytes(fresh_key)?;
    conn.execute(
        "INSERT INTO hook_secrets(source, current) VALUES (?1, ?2)",
        params![source, secret.to_whsec()],
    )?;
    Ok(secret)
}

/// Rotates the secret of `source`: `fresh_key` becomes the current one and
/// the current one the previous (both verify until the next rotation); the
/// previous one before that stops verifying. Returns the new secret.
///
/// # Errors
/// As [`current`].
pub fn rotate(conn: &Connection, source: &str, fresh_key: &[u8]) -> Result<Secret, Error> {
    check_source(source)?;
    let secret = Secret::from_bytes(fresh_key)?;
    conn.execute(
        "INSERT INTO hook_secrets(source, current) VALUES (?1, ?2)
         ON CONFLICT(source) DO UPDATE SET previous = current, current = excluded.current",
        params![source, secret.to_whsec()],
    )?;
    Ok(secret)
}

/// A source follows the event's key rules (it becomes the inbox key's first
/// half).
fn check_source(source: &str) -> Result<(), Error> {
    Event::new(source, "-", 1, 1).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let conn = Connection::open_in_memory().expect("open");
        prepare(&conn).expect("prepare");
        conn
    }

    #[test]
    fn a_source_gets_one_secret_and_keeps_it() {
        let conn = db();
        assert!(secrets(&conn, "provider-a").expect("read").is_empty());
        let first = current(&conn, "provider-a", &[1; 32]).expect("create");
        let again = current(&conn, "provider-a", &[2; 32]).expect("read");
        assert_eq!(
            first.to_whsec(),
            again.to_whsec(),
            "the fresh key is not used twice"
        );
        assert!(secrets(&conn, "provider-b").expect("read").is_empty());
    }

    #[test]
    fn rotation_keeps_the_previous_secret_until_the_next_rotation() {
        let conn = db();
        let a = current(&conn, "p", &[1; 32]).expect("create");
        let b = rotate(&conn, "p", &[2; 32]).expect("rotate");
        let listed: Vec<String> = secrets(&conn, "p")
            .expect("read")
            .iter()
            .map(|(_, s)| s.to_whsec())
            .collect();
        assert_eq!(listed, [b.to_whsec(), a.to_whsec()]);
        let c = rotate(&conn, "p", &[3; 32]).expect("rotate");
        let listed: Vec<String> = secrets(&conn, "p")
            .expect("read")
            .iter()
            .map(|(_, s)| s.to_whsec())
            .collect();
        assert_eq!(listed, [c.to_whsec(), b.to_whsec()], "a is gone");
    }

    #[test]
    fn bad_sources_keys_and_stored_text_are_refused() {
        let conn = db();
        let long = "x".repeat(256);
        for source in ["", " ", "a\u{0}b", long.as_str()] {
            let err = current(&conn, source, &[1; 32]).map(|_| ()).unwrap_err();
            assert_eq!(err.kind(), "invalid_input", "{source:?}");
        }
        let err = current(&conn, "p", &[1; 3]).map(|_| ()).unwrap_err();
        assert_eq!(err.kind(), "invalid_input");
        assert!(
            secrets(&conn, "p").expect("read").is_empty(),
            "nothing written"
        );

        conn.execute(
            "INSERT INTO hook_secrets(source, current) VALUES ('q', 'whsec_!!')",
            [],
        )
        .expect("plant");
        let err = secrets(&conn, "q").map(|_| ()).unwrap_err();
        assert_eq!((err.kind(), err.code()), ("storage", "unusable"));
    }
}
