//! A database at schema version 1 (before the outbox, orders and the lab clock) holding one
//! applied event: `provider-a`/`evt-1` credited 500 to account 1, receipt 1. The native
//! (`tests/scheme_ends.rs`) and browser (`tests/browser/scheme.rs`) migration tests share it.

use std::time::Duration;

use inbox_lab::core::schema;
use rusqlite::Connection;

/// Writes that version-1 database into `conn` (a new, empty file).
pub fn write(conn: &mut Connection, busy_timeout: Duration) {
    schema::prepare(conn, busy_timeout).expect("prepare");
    schema::migrate_to(conn, 1).expect("v1");
    conn.execute_batch(
        "INSERT INTO accounts(id, balance) VALUES (1, 500);
         INSERT INTO inbox(source, event_id, account_id, amount, receipt_seq, balance_after)
         VALUES ('provider-a', 'evt-1', 1, 500, 1, 500);
         UPDATE receipt_counter SET last_seq = 1;",
    )
    .expect("v1 rows");
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version");
    assert_eq!(v, 1);
}
