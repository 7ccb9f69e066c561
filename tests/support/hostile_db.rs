//! Hostile database files, and the guarantee suite that judges what an import
//! made of each one (issue 11, item 1: "after any accepted import the
//! guarantee is exactly that of a fresh database").
//!
//! Shared by `tests/hostile_files.rs` (native: a connection on a file, and
//! proptest) and `tests/browser/import.rs` (wasm: the `Lab` facade on real
//! OPFS), so it uses only rusqlite and inbox-lab APIs that exist on both
//! targets. Each test crate includes it with `#[path]`.
//!
//! * [`base_bytes`] — a valid export: accounts, events applied by the atomic
//!   handler (with receipts), rows written by the race lab's mistaken
//!   handlers (no receipt: legitimate, see the decisions below), an outbox
//!   message, an order, a clock that moved.
//! * [`catalogue`] — files built from it, by class (triggers, views, ...),
//!   one case per class, and every case a decision of issue 11 pins down
//!   (accepted or refused): names that look like SQLite's own, `writable_schema`
//!   edits, every stored type in every column, counters and balances at
//!   their limits, header fields, plain byte damage. The other hostile edits
//!   of a class are [`SNIPPETS`], which the random mutations draw from.
//! * [`mutate`] — random mutations of an export (byte flips, schema edits
//!   through `writable_schema`, value type changes), described by
//!   [`Mutation`] so that proptest (native) or the small [`Rng`] (browser)
//!   can draw them.
//! * [`judge`], then [`after_reload`] and [`after_reset`] — for one file
//!   offered to a [`Live`] database: either it was refused (`invalid_input`,
//!   field `file`) and the live database is byte for byte what it was, or it
//!   was accepted and the live database keeps the whole guarantee of a fresh
//!   one: inbox-lab's schema byte for byte, `integrity_check` ok, no foreign
//!   key violation, every stored value of its type and range, every receipt
//!   replayed as a duplicate, every other payload a `payload_conflict`, new
//!   events applied exactly once with the next receipt, and then a reload and
//!   a reset that work.
//!
//! Decisions this suite tests (issue 11):
//! * a row with `receipt_seq` and `balance_after` both NULL was written by a
//!   mistaken handler: it is legitimate and imported; replaying it through
//!   the atomic handler answers `no_stored_result` (HTTP 409, not
//!   retryable) — never a retryable 500, never "applied" again. A row with
//!   only one of the two NULL is refused;
//! * the receipt counter and receipt numbers are integers in `0..=2^53-1`,
//!   no receipt above the counter; balances integers in `0..=2^53-1`; keys
//!   by `Event`'s rules; account ids `1..=2^53-1`; amounts `1..=10^9`.
#![allow(dead_code)] // each including test uses its own part

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

use inbox_lab::core::event::{MAX_ACCOUNT_ID, MAX_AMOUNT};
use inbox_lab::core::schema::{self, MAX_BALANCE, MAX_RECEIPT};
use inbox_lab::core::tables;
use inbox_lab::core::tables::{AccountRow, InboxRow};
use inbox_lab::labs::handlers::{Handler, Payload};
use inbox_lab::labs::scheme_ends::outbox::{self, Receiver, Strategy};
use inbox_lab::labs::scheme_ends::{business, retention};
use inbox_lab::{apply, Error, Event, Outcome, Receipt, Tables};
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, MAIN_DB};

/// Every failure of the generator or the suite is a sentence.
type Res<T = ()> = Result<T, String>;

fn say(e: impl Display) -> String {
    e.to_string()
}

/// Largest clock value, outbox id and sequence: like every number the page
/// shows, exact in a JavaScript number.
const MAX_NUMBER: i64 = (1 << 53) - 1;

// ---- The valid export every hostile file starts from ------------------------------------------

/// Events the atomic handler applies in the base file.
const BASE_EVENTS: [(&str, &str, i64, i64); 3] = [
    ("provider-a", "evt-1", 1, 500),
    ("provider-a", "evt-2", 2, 7),
    ("provider-b", "evt-1", 1, 1_000),
];

fn event(source: &str, event_id: &str, account_id: i64, amount: i64) -> Res<Event> {
    Event::new(source, event_id, account_id, amount).map_err(say)
}

/// A valid inbox-lab database with something in every table. `setup` runs
/// on the empty connection first (page size, auto-vacuum, encoding must be
/// set before the first table exists).
pub fn base_conn(setup: &str) -> Res<Connection> {
    let mut conn = Connection::open_in_memory().map_err(say)?;
    conn.execute_batch(setup).map_err(say)?;
    schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).map_err(say)?;
    schema::init(&mut conn, &[1, 2, 3]).map_err(say)?;
    for (source, id, account, amount) in BASE_EVENTS {
        apply(&conn, &event(source, id, account, amount)?, None).map_err(say)?;
    }
    // The clock moved: later rows carry a `received_at` other than 0.
    retention::advance(&conn, 5_000).map_err(say)?;
    apply(&conn, &event("provider-b", "évt-ü", 3, 1)?, None).map_err(say)?;
    // The race lab's mistaken handlers register events without a receipt.
    for (handler, id) in [
        (Handler::CheckThenAct, "evt-r1"),
        (Handler::TwoTransactions, "evt-r2"),
    ] {
        let payload = Payload {
            source: "race-lab".into(),
            event_id: id.into(),
            account_id: 2,
            amount: 3,
        };
        handler.deliver(&conn, &payload, None).map_err(say)?;
    }
    // Where the scheme ends: an outbox message sent, one waiting, an order.
    let receiver = Receiver::open(Connection::open_in_memory().map_err(say)?, true).map_err(say)?;
    for (id, amount) in [("evt-o1", 9), ("evt-o2", 4)] {
        let e = event("provider-c", id, 3, amount)?;
        outbox::deliver(&conn, &receiver, &e, Strategy::Outbox, None).map_err(say)?;
        if id == "evt-o1" {
            outbox::dispatch_one(&conn, &receiver, None).map_err(say)?;
        }
    }
    business::activate(&conn, "shop", "act-1", "order-1").map_err(say)?;
    business::activate(&conn, "shop", "act-2", "order-1").map_err(say)?;
    Ok(conn)
}

/// The base database as the bytes of an export.
pub fn base_bytes() -> Res<Vec<u8>> {
    bytes_of(&mut base_conn("")?)
}

/// A valid file as inbox-lab's version 1 left it (before the clock, the
/// outbox and orders): an older file, still inbox-lab's.
fn version_1_bytes() -> Res<Vec<u8>> {
    let mut conn = Connection::open_in_memory().map_err(say)?;
    schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).map_err(say)?;
    schema::migrate_to(&mut conn, 1).map_err(say)?;
    conn.execute_batch(
        "INSERT INTO accounts(id, balance) VALUES (1, 500), (2, 0);
         INSERT INTO inbox(source, event_id, account_id, amount, receipt_seq, balance_after)
         VALUES ('provider-a', 'evt-1', 1, 500, 1, 500),
                ('race-lab', 'evt-r1', 2, 3, NULL, NULL);
         UPDATE receipt_counter SET last_seq = 1;",
    )
    .map_err(say)?;
    bytes_of(&mut conn)
}

// ---- Editing a copy with plain rusqlite ---------------------------------------------------------

/// The bytes on a private, writable, in-memory connection (no
/// `schema::prepare`: foreign keys stay off, nothing is checked).
pub fn open_copy(bytes: &[u8]) -> Res<Connection> {
    let mut conn = Connection::open_in_memory().map_err(say)?;
    conn.deserialize_read_exact(MAIN_DB, bytes, bytes.len(), false)
        .map_err(say)?;
    // A hostile object must never hang the generator itself: stop any
    // statement after ~2*10^7 virtual-machine steps on this connection.
    let mut calls = 0_u32;
    conn.progress_handler(
        1_000,
        Some(move || {
            calls += 1;
            calls > 20_000
        }),
    )
    .map_err(say)?;
    Ok(conn)
}

/// What `export` would give for this connection.
pub fn bytes_of(conn: &mut Connection) -> Res<Vec<u8>> {
    Ok(conn.serialize(MAIN_DB).map_err(say)?.to_vec())
}

fn exec(conn: &Connection, sql: &str) -> Res {
    conn.execute_batch(sql)
        .map_err(|e| format!("{e} in: {sql}"))
}

/// Runs `sql` with `writable_schema = ON` (direct edits of `sqlite_schema`),
/// then bumps `schema_version` so that this connection re-reads the schema
/// (other connections read the file afresh anyway).
pub fn writable(conn: &Connection, sql: &str) -> Res {
    exec(conn, "PRAGMA writable_schema = ON")?;
    let edited = exec(conn, sql).and_then(|()| bump_schema_version(conn));
    let off = exec(conn, "PRAGMA writable_schema = OFF");
    edited.and(off)
}

fn bump_schema_version(conn: &Connection) -> Res {
    let version: i64 = conn
        .query_row("PRAGMA schema_version", [], |r| r.get(0))
        .map_err(say)?;
    exec(conn, &format!("PRAGMA schema_version = {}", version + 1))
}

/// Sets the stored `sql` of one table (under `writable_schema`).
fn set_table_sql(conn: &Connection, table: &str, sql: &str) -> Res {
    exec(conn, "PRAGMA writable_schema = ON")?;
    let edited = conn
        .execute(
            "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = ?2",
            params![sql, table],
        )
        .map_err(say)
        .and_then(|_| bump_schema_version(conn));
    let off = exec(conn, "PRAGMA writable_schema = OFF");
    edited.and(off)
}

/// Creates an object from `template` (where `{name}` stands for its name)
/// under `name`, even a name SQLite reserves for itself (`sqlite_…` in any
/// letter case): such an object is created under a plain name and renamed
/// through `writable_schema`, as a hostile author would.
fn named(conn: &Connection, name: &str, template: &str) -> Res {
    if !name.to_ascii_lowercase().starts_with("sqlite_") {
        return exec(conn, &template.replace("{name}", name));
    }
    exec(conn, &template.replace("{name}", "hostile_tmp"))?;
    writable(
        conn,
        &format!(
            "UPDATE sqlite_schema SET name = '{name}', sql = replace(sql, 'hostile_tmp', '{name}')
             WHERE name = 'hostile_tmp'"
        ),
    )?;
    has_object(conn, name)
}

/// The edit really left an object called `name` in the file.
fn has_object(conn: &Connection, name: &str) -> Res {
    exec(conn, "PRAGMA writable_schema = ON")?;
    let n: Result<i64, _> = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name = ?1",
        [name],
        |r| r.get(0),
    );
    exec(conn, "PRAGMA writable_schema = OFF")?;
    match n.map_err(say)? {
        0 => Err(format!("the file has no object {name}")),
        _ => Ok(()),
    }
}

/// A table's `sql` with its column types, NOT NULLs and REFERENCES removed
/// (rowid aliases and the keys' structure kept), so that a value of any type
/// is stored exactly as given.
fn relaxed(sql: &str) -> String {
    sql.replace("INTEGER PRIMARY KEY", "\u{1}")
        .replace(" NOT NULL", "")
        .replace("REFERENCES accounts(id)", "")
        .replace(" INTEGER", "")
        .replace(" TEXT", "")
        .replace('\u{1}', "INTEGER PRIMARY KEY")
}

/// Stores the SQL expression `value` in `column` of the `row`-th row (by
/// rowid) of `table`, whatever its type: declared types, NOT NULL and CHECK
/// are bypassed for the update and the table's own `sql` is put back
/// afterwards, so the file says one thing and holds another. Returns how
/// many rows changed.
pub fn set_cell(
    conn: &Connection,
    table: &str,
    column: &str,
    row: usize,
    value: &str,
) -> Res<usize> {
    let original: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )
        .map_err(|e| format!("table {table}: {e}"))?;
    exec(
        conn,
        "PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON;",
    )?;
    let loose = relaxed(&original);
    if loose != original {
        set_table_sql(conn, table, &loose)?;
    }
    let updated = conn
        .execute(
            &format!(
                "UPDATE \"{table}\" SET \"{column}\" = {value}
                 WHERE rowid = (SELECT rowid FROM \"{table}\" ORDER BY rowid LIMIT 1 OFFSET {row})"
            ),
            [],
        )
        .map_err(|e| format!("{table}.{column} = {value}: {e}"));
    if loose != original {
        set_table_sql(conn, table, &original)?;
    }
    exec(conn, "PRAGMA ignore_check_constraints = OFF")?;
    updated
}

/// [`set_cell`] that must change the row.
fn cell(conn: &Connection, table: &str, column: &str, row: usize, value: &str) -> Res {
    match set_cell(conn, table, column, row, value)? {
        0 => Err(format!("{table} has no row {row}")),
        _ => Ok(()),
    }
}

/// The inbox's two unique indexes: its key `(source, event_id)` and its
/// receipt numbers.
pub const INBOX_INDEXES: [&str; 2] = ["sqlite_autoindex_inbox_1", "sqlite_autoindex_inbox_2"];

/// `bytes` with the root pages of indexes `a` and `b` swapped in
/// `sqlite_schema`: a few bytes of damage (or of anyone with access to the
/// origin's storage) that leave the schema text inbox-lab's and every page
/// well-formed, but make each index answer for the other's columns — for the
/// inbox's key, `ON CONFLICT` no longer finds a stored event.
pub fn index_roots_swapped(bytes: &[u8], [a, b]: [&str; 2]) -> Res<Vec<u8>> {
    let mut conn = open_copy(bytes)?;
    let (root_a, root_b) = (root_page(bytes, a)?, root_page(bytes, b)?);
    writable(
        &conn,
        &format!(
            "UPDATE sqlite_schema SET rootpage = {root_b} WHERE name = '{a}';
             UPDATE sqlite_schema SET rootpage = {root_a} WHERE name = '{b}';"
        ),
    )?;
    bytes_of(&mut conn)
}

/// Root page and page size, for damage aimed at one b-tree.
fn root_page(bytes: &[u8], name: &str) -> Res<usize> {
    let conn = open_copy(bytes)?;
    let page: i64 = conn
        .query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .map_err(say)?;
    usize::try_from(page).map_err(say)
}

/// The page size a file's header declares (1 means 65536).
pub fn page_size(bytes: &[u8]) -> usize {
    match bytes.get(16..18) {
        Some([0, 1]) => 65_536,
        Some(&[hi, lo]) => usize::from(u16::from_be_bytes([hi, lo])).max(512),
        _ => 4096,
    }
}

// ---- The catalogue ------------------------------------------------------------------------------

/// What a hostile file must get. Most files may be either refused or
/// accepted (the suite then checks the guarantee); the decisions of issue 11
/// pin some down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Either,
    Accepted,
    Refused,
}

/// One generated file.
#[derive(Debug, Clone)]
pub struct Hostile {
    pub class: &'static str,
    pub name: String,
    pub expect: Expect,
    pub bytes: Vec<u8>,
    /// The file's rows as inbox-lab reads them, when it can: an accepted
    /// file expected to be accepted must be imported exactly so.
    pub rows: Option<Tables>,
}

impl Hostile {
    /// A file with no expectation beyond the guarantee (the mutations).
    pub fn any(class: &'static str, name: String, bytes: Vec<u8>) -> Hostile {
        Hostile {
            class,
            name,
            expect: Expect::Either,
            bytes,
            rows: None,
        }
    }
}

/// The classes, in the order the catalogue lists them.
pub const CLASSES: [&str; 16] = [
    "valid",
    "triggers",
    "views",
    "tables and indexes",
    "collations",
    "columns",
    "inbox replaced",
    "stored types",
    "counters",
    "balances",
    "receipts",
    "header",
    "sqlite_sequence",
    "unparsable schema",
    "byte damage",
    "index roots swapped",
];

struct Gen {
    base: Vec<u8>,
    files: Vec<Hostile>,
    errors: Vec<String>,
}

impl Gen {
    fn push(
        &mut self,
        class: &'static str,
        name: &str,
        expect: Expect,
        built: Res<(Vec<u8>, Option<Tables>)>,
    ) {
        match built {
            Ok((bytes, rows)) => self.files.push(Hostile {
                class,
                name: name.to_owned(),
                expect,
                bytes,
                rows,
            }),
            Err(e) => self.errors.push(format!("{class} / {name}: {e}")),
        }
    }

    /// A file made by editing a copy of the base with SQL.
    fn sql(
        &mut self,
        class: &'static str,
        name: &str,
        expect: Expect,
        edit: impl FnOnce(&Connection) -> Res,
    ) {
        let built = self.edit(&self.base.clone(), edit);
        let built = match built {
            Ok((bytes, _)) if bytes == self.base => Err("the edit changed nothing".to_owned()),
            other => other,
        };
        self.push(class, name, expect, built);
    }

    /// A file made from `start` by `edit`.
    fn edit(
        &self,
        start: &[u8],
        edit: impl FnOnce(&Connection) -> Res,
    ) -> Res<(Vec<u8>, Option<Tables>)> {
        let mut conn = open_copy(start)?;
        edit(&conn)?;
        let rows = tables::snapshot(&conn).ok();
        Ok((bytes_of(&mut conn)?, rows))
    }

    /// A file made by changing the base's bytes.
    fn bytes(
        &mut self,
        class: &'static str,
        name: &str,
        expect: Expect,
        damage: impl FnOnce(&mut Vec<u8>),
    ) {
        let mut bytes = self.base.clone();
        damage(&mut bytes);
        let built = if bytes == self.base {
            Err("the damage changed nothing".to_owned())
        } else {
            Ok((bytes, None))
        };
        self.push(class, name, expect, built);
    }
}

/// Every hostile file, by class. An `Err` lists the variants that could not
/// be built (a generator that silently skips a file would test less than it
/// says).
pub fn catalogue() -> Res<Vec<Hostile>> {
    let mut g = Gen {
        base: base_bytes()?,
        files: Vec::new(),
        errors: Vec::new(),
    };
    valid(&mut g);
    triggers(&mut g);
    views(&mut g);
    tables_and_indexes(&mut g);
    collations(&mut g);
    columns(&mut g);
    replaced(&mut g);
    stored_types(&mut g);
    counters(&mut g);
    balances(&mut g);
    receipts(&mut g);
    header(&mut g);
    sequence(&mut g);
    unparsable(&mut g);
    damage(&mut g);
    index_roots(&mut g);
    if g.errors.is_empty() {
        Ok(g.files)
    } else {
        Err(g.errors.join("\n"))
    }
}

fn valid(g: &mut Gen) {
    const C: &str = "valid";
    let base = g.base.clone();
    let rows = open_copy(&base).and_then(|c| tables::snapshot(&c).map_err(say));
    g.push(
        C,
        "the valid export itself",
        Expect::Accepted,
        rows.map(|r| (base, Some(r))),
    );
    g.push(
        C,
        "a valid file of inbox-lab's version 1",
        Expect::Accepted,
        version_1_bytes().map(|b| (b, None)),
    );
    g.sql(
        C,
        "keys and numbers at their limits",
        Expect::Accepted,
        |c| {
            schema::add_account(c, MAX_ACCOUNT_ID).map_err(say)?;
            let e = event(
                &"s".repeat(255),
                &"é".repeat(127),
                MAX_ACCOUNT_ID,
                MAX_AMOUNT,
            )?;
            apply(c, &e, None).map_err(say).map(drop)
        },
    );
    g.sql(
        C,
        "after a retention purge and VACUUM",
        Expect::Accepted,
        |c| {
            retention::purge(c, 1_000, 2).map_err(say)?;
            exec(c, "VACUUM")
        },
    );
}

fn triggers(g: &mut Gen) {
    g.sql(
        "triggers",
        "trigger Sqlite_stat1: every event delivered twice",
        Expect::Either,
        |c| {
            named(
                c,
                "Sqlite_stat1",
                "CREATE TRIGGER {name} AFTER INSERT ON inbox WHEN NEW.event_id NOT LIKE '%#again' BEGIN
                   INSERT INTO inbox(source, event_id, account_id, amount)
                   VALUES (NEW.source, NEW.event_id || '#again', NEW.account_id, NEW.amount);
                   UPDATE accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id; END",
            )
        },
    );
}

fn views(g: &mut Gen) {
    g.sql(
        "views",
        "accounts_data, named like a shadow table, balances doubled",
        Expect::Either,
        |c| {
            exec(
                c,
                "CREATE VIEW accounts_data AS SELECT id, balance * 2 AS balance FROM accounts",
            )
        },
    );
}

fn tables_and_indexes(g: &mut Gen) {
    g.sql(
        "tables and indexes",
        "a UNIQUE COLLATE NOCASE index hidden as sqlite_autoindex_inbox_3",
        Expect::Either,
        |c| {
            named(
                c,
                "sqlite_autoindex_inbox_3",
                "CREATE UNIQUE INDEX {name} ON inbox(source COLLATE NOCASE, event_id COLLATE NOCASE)",
            )
        },
    );
}

fn collations(g: &mut Gen) {
    g.sql(
        "collations",
        "event_id TEXT COLLATE NOCASE, with keys that differ only in case",
        Expect::Either,
        |c| {
            apply(c, &event("provider-a", "EVT-1", 2, 5)?, None).map_err(say)?;
            writable(
                c,
                "UPDATE sqlite_schema SET sql = replace(sql, 'event_id      TEXT', 'event_id      TEXT COLLATE NOCASE') WHERE name = 'inbox'",
            )
        },
    );
}

fn columns(g: &mut Gen) {
    g.sql("columns", "inbox rebuilt with its columns reordered", Expect::Either, |c| {
        exec(
            c,
            "PRAGMA foreign_keys = OFF;
             CREATE TABLE inbox_new (
                 amount INTEGER NOT NULL CHECK (amount > 0), received_at INTEGER NOT NULL DEFAULT 0,
                 event_id TEXT NOT NULL, balance_after INTEGER, source TEXT NOT NULL,
                 receipt_seq INTEGER UNIQUE, account_id INTEGER NOT NULL REFERENCES accounts(id),
                 PRIMARY KEY (source, event_id));
             INSERT INTO inbox_new(amount, received_at, event_id, balance_after, source, receipt_seq, account_id)
               SELECT amount, received_at, event_id, balance_after, source, receipt_seq, account_id FROM inbox;
             DROP TABLE inbox;
             ALTER TABLE inbox_new RENAME TO inbox;
             CREATE INDEX inbox_received_at ON inbox(received_at);",
        )
    });
}

fn replaced(g: &mut Gen) {
    g.sql("inbox replaced", "inbox is a view", Expect::Either, |c| {
        exec(
            c,
            "PRAGMA foreign_keys = OFF; DROP TABLE inbox;
             CREATE VIEW inbox AS SELECT 'provider-a' AS source, 'evt-1' AS event_id, 1 AS account_id,
               500 AS amount, 1 AS receipt_seq, 500 AS balance_after, 0 AS received_at;",
        )
    });
}

/// Stored-type variants: every column of every carried table (rowid aliases
/// aside: SQLite stores only integers there), every type.
fn stored_types(g: &mut Gen) {
    const C: &str = "stored types";
    // (table, column, holds text?, may be NULL?, pinned by issue 11?)
    let columns: [(&str, &str, bool, bool, bool); 24] = [
        ("inbox", "source", true, false, true),
        ("inbox", "event_id", true, false, true),
        ("inbox", "account_id", false, false, true),
        ("inbox", "amount", false, false, true),
        ("inbox", "receipt_seq", false, false, true),
        ("inbox", "balance_after", false, false, true),
        ("inbox", "received_at", false, false, false),
        ("accounts", "balance", false, false, true),
        ("receipt_counter", "last_seq", false, false, true),
        ("lab_clock", "now", false, false, false),
        ("outbox", "source", true, false, false),
        ("outbox", "event_id", true, false, false),
        ("outbox", "account_id", false, false, false),
        ("outbox", "amount", false, false, false),
        ("outbox", "sent_at", false, true, false),
        ("orders", "order_id", true, false, false),
        ("orders", "source", true, false, false),
        ("orders", "event_id", true, false, false),
        ("order_events", "source", true, false, false),
        ("order_events", "event_id", true, false, false),
        ("order_events", "order_id", true, false, false),
        ("order_events", "result", true, false, false),
        ("sqlite_sequence", "name", true, false, false),
        ("sqlite_sequence", "seq", false, false, false),
    ];
    // (what, SQL value, is text?, is integer?, is NULL?)
    let values: [(&str, &str, bool, bool, bool); 8] = [
        ("a BLOB", "CAST('evt-1' AS BLOB)", false, false, false),
        ("a REAL", "500.0", false, false, false),
        (
            "invalid UTF-8 text",
            "CAST(x'6576ff2d31' AS TEXT)",
            false,
            false,
            false,
        ),
        ("NULL", "NULL", false, false, true),
        ("an integer", "42", false, true, false),
        ("numeric text", "'500'", true, false, false),
        ("text", "'abc'", true, false, false),
        (
            "2 MB of text",
            "replace(hex(zeroblob(1000000)), '00', 'ab')",
            false,
            false,
            false,
        ),
    ];
    // Every value a pinned column refuses, and one case that is free either way: the random
    // mutations store every value in every column.
    let mut free_case = false;
    for (table, column, text_column, nullable, pinned) in columns {
        for (what, value, is_text, is_int, is_null) in values {
            let fits =
                (text_column && is_text) || (!text_column && is_int) || (nullable && is_null);
            let expect = if pinned && !fits {
                Expect::Refused
            } else if free_case {
                continue;
            } else {
                free_case = true;
                Expect::Either
            };
            g.sql(C, &format!("{table}.{column} holds {what}"), expect, |c| {
                cell(c, table, column, 0, value)
            });
        }
    }
}

fn counters(g: &mut Gen) {
    const C: &str = "counters";
    let counter = |g: &mut Gen, name: &str, expect: Expect, value: &str| {
        let value = value.to_owned();
        g.sql(C, name, expect, move |c| {
            cell(c, "receipt_counter", "last_seq", 0, &value)
        });
    };
    counter(
        g,
        "receipt counter at 2^63-1",
        Expect::Refused,
        "9223372036854775807",
    );
    counter(
        g,
        "receipt counter at 2^53",
        Expect::Refused,
        "9007199254740992",
    );
    counter(g, "receipt counter at -1", Expect::Refused, "-1");
    counter(
        g,
        "receipt counter at 2^53-1 (receipts exhausted)",
        Expect::Accepted,
        "9007199254740991",
    );
    g.sql(C, "a receipt number above the counter", Expect::Refused, |c| {
        exec(c, "UPDATE inbox SET receipt_seq = 99 WHERE source = 'provider-a' AND event_id = 'evt-2'")
    });
    g.sql(C, "receipt number 2^53-1 with the counter there too", Expect::Accepted, |c| {
        exec(
            c,
            "UPDATE receipt_counter SET last_seq = 9007199254740991;
             UPDATE inbox SET receipt_seq = 9007199254740991 WHERE source = 'provider-a' AND event_id = 'evt-2';",
        )
    });
    g.sql(C, "receipt number 0", Expect::Either, |c| {
        exec(
            c,
            "UPDATE inbox SET receipt_seq = 0 WHERE source = 'provider-a' AND event_id = 'evt-2'",
        )
    });
    g.sql(
        C,
        "duplicate receipt numbers (inbox rebuilt without UNIQUE)",
        Expect::Refused,
        |c| {
            exec(
                c,
                "PRAGMA foreign_keys = OFF;
             CREATE TABLE inbox_new (
                 source TEXT NOT NULL, event_id TEXT NOT NULL,
                 account_id INTEGER NOT NULL REFERENCES accounts(id),
                 amount INTEGER NOT NULL CHECK (amount > 0), receipt_seq INTEGER,
                 balance_after INTEGER, received_at INTEGER NOT NULL DEFAULT 0,
                 PRIMARY KEY (source, event_id));
             INSERT INTO inbox_new SELECT * FROM inbox;
             DROP TABLE inbox;
             ALTER TABLE inbox_new RENAME TO inbox;
             CREATE INDEX inbox_received_at ON inbox(received_at);
             UPDATE inbox SET receipt_seq = 1 WHERE receipt_seq IS NOT NULL;",
            )
        },
    );
    g.sql(
        C,
        "duplicate receipt numbers (UNIQUE cut out of the schema text)",
        Expect::Refused,
        |c| {
            writable(
                c,
                "UPDATE sqlite_schema SET sql = replace(sql, 'UNIQUE', '') WHERE name = 'inbox';
             DELETE FROM sqlite_schema WHERE name = 'sqlite_autoindex_inbox_2';",
            )?;
            exec(
                c,
                "UPDATE inbox SET receipt_seq = 1 WHERE receipt_seq IS NOT NULL",
            )
        },
    );
    g.sql(C, "two receipt counters", Expect::Refused, |c| {
        exec(
            c,
            "PRAGMA ignore_check_constraints = ON;
             INSERT INTO receipt_counter(id, last_seq) VALUES (2, 1000);",
        )
    });
    g.sql(C, "no receipt counter row", Expect::Refused, |c| {
        exec(c, "DELETE FROM receipt_counter")
    });
    g.sql(C, "lab clock at 2^53", Expect::Either, |c| {
        cell(c, "lab_clock", "now", 0, "9007199254740992")
    });
    g.sql(C, "lab clock at -5", Expect::Either, |c| {
        cell(c, "lab_clock", "now", 0, "-5")
    });
}

fn balances(g: &mut Gen) {
    const C: &str = "balances";
    let cases: [(&str, &str, &str, Expect); 10] = [
        (
            "balance 2^53-1",
            "balance",
            "9007199254740991",
            Expect::Accepted,
        ),
        (
            "balance 2^53",
            "balance",
            "9007199254740992",
            Expect::Refused,
        ),
        (
            "balance 2^63-1",
            "balance",
            "9223372036854775807",
            Expect::Refused,
        ),
        ("balance -1", "balance", "-1", Expect::Refused),
        ("balance REAL 500.0", "balance", "500.0", Expect::Refused),
        ("balance REAL 1e300", "balance", "1e300", Expect::Refused),
        ("balance_after -1", "balance_after", "-1", Expect::Refused),
        (
            "balance_after 2^53",
            "balance_after",
            "9007199254740992",
            Expect::Refused,
        ),
        (
            "balance_after REAL 500.5",
            "balance_after",
            "500.5",
            Expect::Refused,
        ),
        (
            "balance_after 2^53-1",
            "balance_after",
            "9007199254740991",
            Expect::Accepted,
        ),
    ];
    for (name, column, value, expect) in cases {
        let table = if column == "balance" {
            "accounts"
        } else {
            "inbox"
        };
        // Account 3 (row 2) / the first inbox row (provider-a, evt-1).
        let row = if table == "accounts" { 2 } else { 0 };
        g.sql(C, name, expect, |c| cell(c, table, column, row, value));
    }
    let inbox: [(&str, &str, &str); 6] = [
        ("amount 0", "amount", "0"),
        ("amount 10^9+1", "amount", "1000000001"),
        ("amount -5", "amount", "-5"),
        ("account_id 0", "account_id", "0"),
        ("account_id 2^53", "account_id", "9007199254740992"),
        ("account_id of no account", "account_id", "77"),
    ];
    for (name, column, value) in inbox {
        g.sql(C, name, Expect::Refused, |c| {
            cell(c, "inbox", column, 0, value)
        });
    }
}

fn receipts(g: &mut Gen) {
    const C: &str = "receipts";
    g.sql(C, "every row without a receipt", Expect::Accepted, |c| {
        exec(
            c,
            "UPDATE inbox SET receipt_seq = NULL, balance_after = NULL",
        )
    });
    g.sql(
        C,
        "rows of every mistaken handler that registers",
        Expect::Accepted,
        |c| {
            for (handler, id) in [
                (Handler::InsertOrIgnore, "evt-ignore"),
                (Handler::InsertOrReplace, "evt-replace"),
                (Handler::CheckThenAct, "evt-check"),
            ] {
                let payload = Payload {
                    source: "race-lab".into(),
                    event_id: id.into(),
                    account_id: 1,
                    amount: 2,
                };
                handler.deliver(c, &payload, None).map_err(say)?;
            }
            Ok(())
        },
    );
    g.sql(
        C,
        "a receipted row rewritten by INSERT OR REPLACE",
        Expect::Accepted,
        |c| {
            let payload = Payload {
                source: "provider-a".into(),
                event_id: "evt-1".into(),
                account_id: 1,
                amount: 500,
            };
            Handler::InsertOrReplace
                .deliver(c, &payload, None)
                .map_err(say)
                .map(drop)
        },
    );
    g.sql(
        C,
        "receipt_seq NULL, balance_after kept",
        Expect::Refused,
        |c| cell(c, "inbox", "receipt_seq", 0, "NULL"),
    );
    g.sql(
        C,
        "balance_after NULL, receipt_seq kept",
        Expect::Refused,
        |c| cell(c, "inbox", "balance_after", 0, "NULL"),
    );
    g.sql(
        C,
        "a receiptless row given only a balance_after",
        Expect::Refused,
        |c| {
            exec(
                c,
                "UPDATE inbox SET balance_after = 3 WHERE event_id = 'evt-r1'",
            )
        },
    );
}

fn header(g: &mut Gen) {
    const C: &str = "header";
    let pragmas: [(&str, &str, Expect); 3] = [
        (
            "application_id -1",
            "PRAGMA application_id = -1",
            Expect::Either,
        ),
        (
            "user_version 3 (newer than this build)",
            "PRAGMA user_version = 3",
            Expect::Refused,
        ),
        (
            "user_version -1",
            "PRAGMA user_version = -1",
            Expect::Refused,
        ),
    ];
    for (name, sql, expect) in pragmas {
        g.sql(C, name, expect, |c| exec(c, sql));
    }
    let made = base_conn(
        "PRAGMA encoding = 'UTF-16be'; PRAGMA page_size = 1024; PRAGMA auto_vacuum = FULL;",
    )
    .and_then(|mut c| {
        let rows = tables::snapshot(&c).ok();
        Ok((bytes_of(&mut c)?, rows))
    });
    g.push(
        C,
        "UTF-16be, page size 1024, auto_vacuum FULL",
        Expect::Either,
        made,
    );
}

fn sequence(g: &mut Gen) {
    g.sql("sqlite_sequence", "a row for inbox", Expect::Either, |c| {
        exec(
            c,
            "INSERT INTO sqlite_sequence(name, seq) VALUES ('inbox', 5)",
        )
    });
}

fn unparsable(g: &mut Gen) {
    g.sql("unparsable schema", "an index on a column that does not exist", Expect::Either, |c| {
        writable(
            c,
            "UPDATE sqlite_schema SET sql = 'CREATE INDEX inbox_received_at ON inbox(nope)' WHERE name = 'inbox_received_at'",
        )
    });
}

fn damage(g: &mut Gen) {
    const C: &str = "byte damage";
    let size = page_size(&g.base);
    let len = g.base.len();
    g.push(C, "an empty file", Expect::Refused, Ok((Vec::new(), None)));
    g.push(
        C,
        "99 bytes",
        Expect::Refused,
        Ok((g.base[..99].to_vec(), None)),
    );
    g.push(
        C,
        "the header only",
        Expect::Refused,
        Ok((g.base[..100].to_vec(), None)),
    );
    g.push(
        C,
        "text",
        Expect::Refused,
        Ok((b"this is not a database\n".repeat(50), None)),
    );
    g.bytes(C, "magic says format 4", Expect::Refused, |b| b[14] = b'4');
    g.bytes(C, "truncated to half", Expect::Refused, |b| {
        b.truncate(len / 2)
    });
    g.bytes(C, "one byte short", Expect::Either, |b| b.truncate(len - 1));
    g.bytes(
        C,
        "an impossible page type on every page",
        Expect::Refused,
        |b| {
            b[100] = 0xFF;
            for page in (size..len).step_by(size) {
                b[page] = 0xFF;
            }
        },
    );
    g.bytes(C, "page size 3", Expect::Either, |b| {
        b[16..18].copy_from_slice(&[0, 3])
    });
    g.bytes(
        C,
        "page size 65536 declared on a smaller file",
        Expect::Either,
        |b| {
            b[16..18].copy_from_slice(&[0, 1]);
        },
    );
    g.bytes(C, "database size 2^32-1 pages", Expect::Either, |b| {
        b[28..32].copy_from_slice(&[0xFF; 4]);
    });
    g.bytes(
        C,
        "a freelist trunk far outside the file",
        Expect::Either,
        |b| {
            b[32..36].copy_from_slice(&[0x7F, 0xFF, 0xFF, 0xFF]);
            b[36..40].copy_from_slice(&[0, 0, 0, 1]);
        },
    );
    g.bytes(C, "schema cells scrambled", Expect::Either, |b| {
        for byte in &mut b[size - 300..size] {
            *byte ^= 0x5A;
        }
    });
    g.bytes(C, "schema format number 9", Expect::Either, |b| {
        b[44..48].copy_from_slice(&[0, 0, 0, 9])
    });
    g.bytes(
        C,
        "text encoding UTF-16be declared on UTF-8 text",
        Expect::Either,
        |b| {
            b[56..60].copy_from_slice(&[0, 0, 0, 3]);
        },
    );
    g.bytes(C, "zeros after the header", Expect::Either, |b| {
        b[100..].fill(0);
    });
    g.bytes(C, "a garbage page appended", Expect::Either, |b| {
        let mut rng = Rng::new(7);
        b.extend((0..size).map(|_| rng.byte()));
    });
    g.bytes(C, "random bytes after the header", Expect::Refused, |b| {
        let mut rng = Rng::new(11);
        for byte in &mut b[100..] {
            *byte = rng.byte();
        }
    });
    let base = g.base.clone();
    for table in [
        "inbox",
        "accounts",
        "receipt_counter",
        "sqlite_autoindex_inbox_1",
    ] {
        match root_page(&base, table) {
            Ok(root) => {
                let start = (root - 1) * size;
                g.bytes(
                    C,
                    &format!("{table}'s root page zeroed"),
                    Expect::Either,
                    |b| {
                        b[start..start + size].fill(0);
                    },
                );
                g.bytes(
                    C,
                    &format!("{table}'s root page claims 65535 cells"),
                    Expect::Either,
                    |b| {
                        b[start + 3..start + 5].copy_from_slice(&[0xFF, 0xFF]);
                    },
                );
            }
            Err(e) => g.errors.push(format!("{C}: {e}")),
        }
    }
}

/// Indexes that disagree with their tables: `integrity_check` says so,
/// `quick_check` does not.
fn index_roots(g: &mut Gen) {
    const C: &str = "index roots swapped";
    for pair in [
        INBOX_INDEXES,
        ["sqlite_autoindex_inbox_1", "inbox_received_at"],
        [
            "sqlite_autoindex_orders_1",
            "sqlite_autoindex_order_events_1",
        ],
    ] {
        let built = index_roots_swapped(&g.base, pair).map(|bytes| (bytes, None));
        g.push(C, &pair.join(" and "), Expect::Refused, built);
    }
}

// ---- Random mutations (the property tests) -----------------------------------------------------

/// Where a byte flip lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// The 100-byte file header (page size, counters, versions, encoding, ...).
    Header,
    /// The rest of page 1: `sqlite_schema`'s b-tree.
    SchemaPage,
    /// Any byte of the file.
    Anywhere,
}

pub const REGIONS: [Region; 3] = [Region::Header, Region::SchemaPage, Region::Anywhere];

/// One random change to an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// XOR `mask` (not 0) into one byte of `region`; `offset` is taken
    /// modulo the region's length.
    Flip {
        region: Region,
        offset: usize,
        mask: u8,
    },
    /// Runs [`SNIPPETS`]`[i]` with `writable_schema = ON`.
    Schema(usize),
    /// Stores [`VALUES`]`[value]` in the cell [`CELLS`]`[target]` of the
    /// `row`-th row (modulo the rows there are), whatever its type.
    Cell {
        target: usize,
        row: usize,
        value: usize,
    },
}

/// Hostile schema edits, each run with `writable_schema = ON` and followed by
/// a `schema_version` bump. None of them loops when the generator itself
/// writes afterwards (they are bounded or never fire on an UPDATE).
pub const SNIPPETS: [&str; 41] = [
    // Triggers that look like SQLite's own, every timing and event.
    "INSERT INTO sqlite_schema VALUES ('trigger', 'sqlite_x', 'inbox', 0, 'CREATE TRIGGER sqlite_x AFTER INSERT ON inbox BEGIN UPDATE accounts SET balance = balance + 1000000 WHERE id = NEW.account_id; END')",
    "INSERT INTO sqlite_schema VALUES ('trigger', 'SQLITE_autoindex_inbox_9', 'inbox', 0, 'CREATE TRIGGER SQLITE_autoindex_inbox_9 BEFORE INSERT ON inbox BEGIN SELECT RAISE(IGNORE); END')",
    "INSERT INTO sqlite_schema VALUES ('trigger', 'Sqlite_stat1', 'inbox', 0, 'CREATE TRIGGER Sqlite_stat1 BEFORE INSERT ON inbox BEGIN DELETE FROM inbox WHERE source = NEW.source AND event_id = NEW.event_id; END')",
    "INSERT INTO sqlite_schema VALUES ('trigger', 'freeze', 'receipt_counter', 0, 'CREATE TRIGGER freeze BEFORE UPDATE ON receipt_counter BEGIN SELECT RAISE(IGNORE); END')",
    "INSERT INTO sqlite_schema VALUES ('trigger', 'forget', 'inbox', 0, 'CREATE TRIGGER forget AFTER UPDATE ON inbox BEGIN UPDATE inbox SET receipt_seq = NULL WHERE rowid = NEW.rowid; END')",
    "INSERT INTO sqlite_schema VALUES ('trigger', 'undead', 'accounts', 0, 'CREATE TRIGGER undead AFTER DELETE ON accounts BEGIN INSERT INTO accounts(id) VALUES (OLD.id); END')",
    "CREATE TRIGGER million AFTER INSERT ON inbox BEGIN UPDATE accounts SET balance = balance + 1000000; END",
    "CREATE VIEW iv AS SELECT * FROM inbox; CREATE TRIGGER ivi INSTEAD OF INSERT ON iv BEGIN DELETE FROM accounts; END",
    "CREATE TRIGGER never_ends AFTER INSERT ON inbox WHEN (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c) > 0 BEGIN SELECT 1; END",
    // Views: looping, circular, named like a table.
    "INSERT INTO sqlite_schema VALUES ('view', 'loop', 'loop', 0, 'CREATE VIEW loop AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c')",
    "INSERT INTO sqlite_schema VALUES ('view', 'ping', 'ping', 0, 'CREATE VIEW ping AS SELECT * FROM pong'); INSERT INTO sqlite_schema VALUES ('view', 'pong', 'pong', 0, 'CREATE VIEW pong AS SELECT * FROM ping')",
    "INSERT INTO sqlite_schema VALUES ('view', 'INBOX', 'INBOX', 0, 'CREATE VIEW INBOX AS SELECT 1')",
    "CREATE VIEW six AS SELECT count(*) AS last_seq FROM inbox a, inbox b, inbox c, inbox d, inbox e, inbox f",
    // Indexes and collations that change what "the same key" means.
    "CREATE UNIQUE INDEX nocase ON inbox(source COLLATE NOCASE, event_id COLLATE NOCASE)",
    "INSERT INTO sqlite_schema VALUES ('index', 'sqlite_autoindex_inbox_3', 'inbox', (SELECT rootpage FROM sqlite_schema WHERE name = 'sqlite_autoindex_inbox_1'), NULL)",
    "UPDATE sqlite_schema SET sql = replace(sql, 'event_id      TEXT', 'event_id      TEXT COLLATE NOCASE') WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET sql = replace(sql, 'source        TEXT', 'source        TEXT COLLATE nonexistent') WHERE name = 'inbox'",
    // Constraints and declared types.
    "UPDATE sqlite_schema SET sql = replace(sql, 'UNIQUE', '') WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET sql = replace(sql, 'amount        INTEGER', 'amount        TEXT') WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET sql = replace(replace(replace(sql, 'account_id    INTEGER NOT NULL REFERENCES accounts(id)', '#'), 'amount        INTEGER NOT NULL CHECK (amount > 0)', 'account_id    INTEGER NOT NULL REFERENCES accounts(id)'), '#', 'amount        INTEGER NOT NULL CHECK (amount > 0)') WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET sql = sql || ' WITHOUT ROWID' WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET sql = sql || ' STRICT' WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET sql = replace(sql, 'balance INTEGER', 'balance INTEGER COLLATE NOCASE') WHERE name = 'accounts'",
    "UPDATE sqlite_schema SET sql = replace(sql, 'balance INTEGER NOT NULL DEFAULT 0', 'balance INTEGER GENERATED ALWAYS AS (length(hex(zeroblob(300000000)))) VIRTUAL') WHERE name = 'accounts'",
    "UPDATE sqlite_schema SET sql = replace(sql, 'balance INTEGER NOT NULL DEFAULT 0', 'balance INTEGER GENERATED ALWAYS AS (id * 1000000) VIRTUAL') WHERE name = 'accounts'",
    // Names, types and root pages.
    "UPDATE sqlite_schema SET name = 'INBOX', tbl_name = 'INBOX' WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET type = 'view' WHERE name = 'accounts'",
    "UPDATE sqlite_schema SET rootpage = rootpage + 1 WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET rootpage = (SELECT rootpage FROM sqlite_schema WHERE name = 'accounts') WHERE name = 'sqlite_autoindex_inbox_1'",
    "DELETE FROM sqlite_schema WHERE name = 'sqlite_autoindex_inbox_2'",
    "DELETE FROM sqlite_schema WHERE type = 'index'",
    "DELETE FROM sqlite_schema WHERE name = 'receipt_counter'",
    // Unparsable text.
    "UPDATE sqlite_schema SET sql = 'CREATE TABLE inbox(' WHERE name = 'inbox'",
    "UPDATE sqlite_schema SET sql = NULL WHERE name = 'receipt_counter'",
    "UPDATE sqlite_schema SET sql = CAST(x'435245415445205441424c4520ff' AS TEXT) WHERE name = 'lab_clock'",
    "INSERT INTO sqlite_schema VALUES ('garbage', 'junk', 'junk', 0, 'hello world')",
    "INSERT INTO sqlite_schema VALUES ('table', 'vt', 'vt', 0, 'CREATE VIRTUAL TABLE vt USING no_such_module(x)')",
    "UPDATE sqlite_schema SET sql = sql || ' -- ' || hex(zeroblob(500000)) WHERE name = 'accounts'",
    // Header fields and sqlite_sequence.
    "PRAGMA user_version = 3",
    "PRAGMA application_id = -1",
    "UPDATE sqlite_sequence SET seq = 9223372036854775807",
];

/// Cells a value change may hit: every column of every carried table.
pub const CELLS: [(&str, &str); 28] = [
    ("inbox", "source"),
    ("inbox", "event_id"),
    ("inbox", "account_id"),
    ("inbox", "amount"),
    ("inbox", "receipt_seq"),
    ("inbox", "balance_after"),
    ("inbox", "received_at"),
    ("accounts", "id"),
    ("accounts", "balance"),
    ("receipt_counter", "id"),
    ("receipt_counter", "last_seq"),
    ("lab_clock", "id"),
    ("lab_clock", "now"),
    ("outbox", "message_id"),
    ("outbox", "source"),
    ("outbox", "event_id"),
    ("outbox", "account_id"),
    ("outbox", "amount"),
    ("outbox", "sent_at"),
    ("sqlite_sequence", "name"),
    ("sqlite_sequence", "seq"),
    ("orders", "order_id"),
    ("orders", "source"),
    ("orders", "event_id"),
    ("order_events", "source"),
    ("order_events", "event_id"),
    ("order_events", "order_id"),
    ("order_events", "result"),
];

/// Values a cell may get, as SQL expressions: every storage class, the
/// limits of every range, keys that break one rule each.
pub const VALUES: [&str; 34] = [
    "NULL",
    "0",
    "-1",
    "1",
    "2",
    "7",
    "500",
    "1000000000",
    "1000000001",
    "9007199254740991",
    "9007199254740992",
    "9223372036854775807",
    "(-9223372036854775807 - 1)",
    "0.5",
    "500.0",
    "-0.0",
    "1e300",
    "''",
    "' '",
    "'evt-1'",
    "'EVT-1'",
    "'provider-a'",
    "'500'",
    "'abc'",
    "char(0x202E) || 'evt'",
    "'a' || char(0) || 'b'",
    "char(10)",
    "CAST(x'ff' AS TEXT)",
    "CAST(x'6576742dc3' AS TEXT)",
    "x'6576742d31'",
    "zeroblob(0)",
    "CAST('evt-1' AS BLOB)",
    "replace(hex(zeroblob(128)), '00', 'ab')",
    "replace(hex(zeroblob(1000000)), '00', 'ab')",
];

/// The result of [`mutate`]: the bytes, and how many mutations took effect
/// (a schema edit or a value change the copy refuses is skipped).
#[derive(Debug, Clone)]
pub struct Mutated {
    pub bytes: Vec<u8>,
    pub applied: usize,
    pub skipped: usize,
}

/// Applies `mutations` to a copy of `base`: the SQL ones in order on a
/// writable copy, then the byte flips on its bytes.
pub fn mutate(base: &[u8], mutations: &[Mutation]) -> Mutated {
    let mut applied = 0;
    let mut skipped = 0;
    let mut bytes = base.to_vec();
    let edits: Vec<Mutation> = mutations
        .iter()
        .copied()
        .filter(|m| !matches!(m, Mutation::Flip { .. }))
        .collect();
    if !edits.is_empty() {
        let edited = open_copy(base).and_then(|mut conn| {
            for m in &edits {
                let done = match *m {
                    Mutation::Schema(i) => {
                        writable(&conn, SNIPPETS[i % SNIPPETS.len()]).map(|()| 1)
                    }
                    Mutation::Cell { target, row, value } => {
                        let (table, column) = CELLS[target % CELLS.len()];
                        set_cell(&conn, table, column, row % 8, VALUES[value % VALUES.len()])
                    }
                    Mutation::Flip { .. } => Ok(0),
                };
                match done {
                    Ok(n) if n > 0 => applied += 1,
                    _ => skipped += 1,
                }
            }
            bytes_of(&mut conn)
        });
        match edited {
            Ok(edited) => bytes = edited,
            Err(_) => skipped += edits.len(),
        }
    }
    let size = page_size(base);
    for m in mutations {
        if let Mutation::Flip {
            region,
            offset,
            mask,
        } = *m
        {
            let at = match region {
                Region::Header => offset % 100,
                Region::SchemaPage => 100 + offset % (size.min(bytes.len()).max(101) - 100),
                Region::Anywhere => offset % bytes.len().max(1),
            };
            if let Some(byte) = bytes.get_mut(at) {
                *byte ^= mask.max(1);
                applied += 1;
            } else {
                skipped += 1;
            }
        }
    }
    Mutated {
        bytes,
        applied,
        skipped,
    }
}

/// A small seeded generator (SplitMix64): the browser test draws its
/// mutations with it, so a failing case is reproduced from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform enough in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn byte(&mut self) -> u8 {
        self.next_u64().to_le_bytes()[0]
    }

    /// One to four mutations, each kind equally likely.
    pub fn mutations(&mut self) -> Vec<Mutation> {
        (0..1 + self.below(4))
            .map(|_| match self.below(3) {
                0 => Mutation::Flip {
                    region: REGIONS[self.below(REGIONS.len())],
                    offset: self.below(usize::MAX),
                    mask: self.byte().max(1),
                },
                1 => Mutation::Schema(self.below(SNIPPETS.len())),
                _ => Mutation::Cell {
                    target: self.below(CELLS.len()),
                    row: self.below(8),
                    value: self.below(VALUES.len()),
                },
            })
            .collect()
    }
}

// ---- The guarantee suite -----------------------------------------------------------------------

/// A failure as a sender sees it: the fields of `Error::report()` (natively)
/// or of the error object the `Lab` facade throws (in the browser).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: String,
    pub code: String,
    pub field: Option<String>,
    pub http_status: u16,
    pub retryable: bool,
    pub message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let r = e.report();
        Failure {
            kind: r.kind.to_owned(),
            code: r.code.to_owned(),
            field: r.field.map(|f| f.as_str().to_owned()),
            http_status: r.http_status,
            retryable: r.retryable,
            message: r.message,
        }
    }
}

/// A live inbox-lab database as a test drives it: natively a connection,
/// in the browser the `Lab` facade the worker uses.
pub trait Live {
    /// Import `bytes` (Ok: accepted).
    fn import(&mut self, bytes: &[u8]) -> Result<(), Failure>;
    fn export(&mut self) -> Result<Vec<u8>, Failure>;
    /// Deliver `event` through the atomic handler.
    fn deliver(&mut self, event: &Event) -> Result<Outcome, Failure>;
    fn tables(&mut self) -> Result<Tables, Failure>;
    fn add_account(&mut self, id: i64) -> Result<bool, Failure>;
}

/// What a file got.
#[derive(Debug, Clone)]
pub enum Verdict {
    Refused(Failure),
    Accepted(Kept),
}

/// After an accepted file passed the guarantee suite: what a reload must
/// still show.
#[derive(Debug, Clone)]
pub struct Kept {
    baseline: Header,
    tables: Tables,
    /// Events the suite applied, with their receipts: a replay after the
    /// reload must still answer "duplicate" with them.
    applied: Vec<(Event, Receipt)>,
}

/// The header fields and pragmas a fresh database on the live storage has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    page_size: i64,
    auto_vacuum: i64,
    encoding: String,
    application_id: i64,
    user_version: i64,
}

fn tag(what: &str) -> impl Fn(Failure) -> String + '_ {
    move |f| format!("{what}: {} {} ({})", f.kind, f.code, f.message)
}

/// Offers `file` to `live` and judges the answer (see the module comment).
/// After `Verdict::Accepted` the caller reloads the database (reopens it),
/// calls [`after_reload`], resets it and calls [`after_reset`].
///
/// # Errors
/// A sentence saying how the guarantee broke.
pub fn judge(live: &mut impl Live, file: &Hostile) -> Res<Verdict> {
    let before = live.export().map_err(tag("export before the import"))?;
    let before_tables = live.tables().map_err(tag("tables before the import"))?;
    let baseline = header_of(&open_read_only(&before)?)?;
    match live.import(&file.bytes) {
        Err(f) if f.kind == "invalid_input" && f.field.as_deref() == Some("file") => {
            if f.retryable || f.http_status != 400 {
                return Err(format!(
                    "a refused file must be a 400, not retryable: {f:?}"
                ));
            }
            if live.export().map_err(tag("export after the refusal"))? != before {
                return Err(format!(
                    "refused ({}), but the live database changed",
                    f.message
                ));
            }
            if live.tables().map_err(tag("tables after the refusal"))? != before_tables {
                return Err(format!(
                    "refused ({}), but the live tables changed",
                    f.message
                ));
            }
            if file.expect == Expect::Accepted {
                return Err(format!(
                    "refused a file that must be accepted: {}",
                    f.message
                ));
            }
            Ok(Verdict::Refused(f))
        }
        Err(f) => Err(format!(
            "neither refused as a file nor accepted: {} {} (retryable {}): {}",
            f.kind, f.code, f.retryable, f.message
        )),
        Ok(()) => {
            if file.expect == Expect::Refused {
                return Err("accepted a file that must be refused".to_owned());
            }
            let faithful = match file.expect {
                Expect::Accepted => file.rows.as_ref(),
                _ => None,
            };
            guarantee(live, baseline, faithful).map(Verdict::Accepted)
        }
    }
}

/// Amount of the suite's own new events.
const NEW_AMOUNT: i64 = 7;

/// The guarantee, checked on a live database that just accepted a file.
fn guarantee(live: &mut impl Live, baseline: Header, faithful: Option<&Tables>) -> Res<Kept> {
    let stored = inspect(&live.export().map_err(tag("export"))?, &baseline)?;
    let mut tables = live.tables().map_err(tag("tables after the import"))?;
    if tables != stored.tables {
        return Err(format!(
            "tables() disagrees with the stored rows:\n{tables:?}\n{:?}",
            stored.tables
        ));
    }
    if let Some(rows) = faithful {
        if &tables != rows {
            return Err(format!(
                "the file's rows were not imported as they are:\n{tables:?}\n{rows:?}"
            ));
        }
    }
    for row in &stored.tables.inbox {
        replays(live, row, &tables)?;
    }

    // New events: each applies exactly once, with the next receipt; keys
    // that differ only in letter case are different events.
    let account = room_for_new_events(live, &mut tables)?;
    let mut keys = vec![
        ("guarantee".to_owned(), "new-evt".to_owned()),
        ("GUARANTEE".to_owned(), "NEW-EVT".to_owned()),
    ];
    if let Some(first) = tables.inbox.first() {
        let upper = first.event_id.to_uppercase();
        let taken = tables
            .inbox
            .iter()
            .any(|r| r.source == first.source && r.event_id == upper);
        if !taken && upper.len() <= 255 {
            keys.push((first.source.clone(), upper));
        }
    }
    let mut counter = stored.counter;
    let mut applied = Vec::new();
    for (source, event_id) in keys {
        let e = event(&source, &event_id, account, NEW_AMOUNT)?;
        let balance = tables
            .balance(account)
            .ok_or("the chosen account vanished")?;
        let answer = live.deliver(&e);
        if counter == MAX_RECEIPT {
            // Receipts are exhausted: a fresh database holding these rows
            // refuses new events for good, and writes nothing.
            match answer {
                Err(f) if !f.retryable => {}
                other => {
                    return Err(format!(
                        "with the receipt counter at 2^53-1 a new event must be refused for good, got {other:?}"
                    ))
                }
            }
            unchanged(live, &tables, "a refused new event")?;
            continue;
        }
        let receipt = Receipt {
            seq: counter + 1,
            balance_after: balance + NEW_AMOUNT,
        };
        match answer {
            Ok(Outcome::Applied(r)) if r == receipt => {}
            other => {
                return Err(format!(
                "new event {source}/{event_id}: expected applied with {receipt:?}, got {other:?}"
            ))
            }
        }
        counter += 1;
        credit(&mut tables, &e, receipt);
        unchanged(
            live,
            &tables,
            "a new event changed more than its row and its balance",
        )?;
        match live.deliver(&e) {
            Ok(Outcome::Duplicate(r)) if r == receipt => {}
            other => {
                return Err(format!(
                    "replay of a new event: expected duplicate, got {other:?}"
                ))
            }
        }
        conflict(live, &e, e.account_id(), other_amount(e.amount()))?;
        unchanged(live, &tables, "replays of a new event")?;
        applied.push((e, receipt));
    }
    let after = inspect(&live.export().map_err(tag("export"))?, &baseline)?;
    if after.counter != counter || after.tables != tables {
        return Err(format!(
            "after the new events: counter {} (expected {counter}), tables {:?} (expected {tables:?})",
            after.counter, after.tables
        ));
    }
    Ok(Kept {
        baseline,
        tables,
        applied,
    })
}

/// Replays of one imported row: the same payload answers its stored
/// receipt (or `no_stored_result` for a mistaken handler's row), another
/// payload `payload_conflict`; nothing changes.
fn replays(live: &mut impl Live, row: &InboxRow, tables: &Tables) -> Res {
    let e = event(&row.source, &row.event_id, row.account_id, row.amount)
        .map_err(|err| format!("an imported row breaks the event rules: {err}"))?;
    let answer = live.deliver(&e);
    match (row.receipt, answer) {
        (Some(stored), Ok(Outcome::Duplicate(r))) if r == stored => {}
        (None, Err(f)) if f.kind == "no_stored_result" && !f.retryable && f.http_status == 409 => {}
        (stored, other) => {
            return Err(format!(
                "replay of {}/{} (stored receipt {stored:?}): got {other:?}",
                row.source, row.event_id
            ))
        }
    }
    unchanged(live, tables, "a replay")?;
    conflict(live, &e, e.account_id(), other_amount(e.amount()))?;
    let other_account = if e.account_id() < MAX_ACCOUNT_ID {
        e.account_id() + 1
    } else {
        e.account_id() - 1
    };
    conflict(live, &e, other_account, e.amount())?;
    unchanged(live, tables, "a conflicting replay")
}

fn other_amount(amount: i64) -> i64 {
    if amount < MAX_AMOUNT {
        amount + 1
    } else {
        amount - 1
    }
}

/// The key of `e` with another account or amount: `payload_conflict`.
fn conflict(live: &mut impl Live, e: &Event, account_id: i64, amount: i64) -> Res {
    let other = event(e.source(), e.event_id(), account_id, amount)?;
    match live.deliver(&other) {
        Err(f) if f.kind == "payload_conflict" && !f.retryable && f.http_status == 422 => Ok(()),
        other => Err(format!(
            "{}/{} with account {account_id}, amount {amount}: expected payload_conflict, got {other:?}",
            e.source(),
            e.event_id()
        )),
    }
}

fn unchanged(live: &mut impl Live, expected: &Tables, what: &str) -> Res {
    let now = live.tables().map_err(tag(what))?;
    if &now == expected {
        Ok(())
    } else {
        Err(format!(
            "{what}: the tables are\n{now:?}\nexpected\n{expected:?}"
        ))
    }
}

/// An account that can take three new credits: an imported one with room,
/// else a new one.
fn room_for_new_events(live: &mut impl Live, tables: &mut Tables) -> Res<i64> {
    if let Some(a) = tables
        .accounts
        .iter()
        .find(|a| a.balance <= MAX_BALANCE - 3 * NEW_AMOUNT)
    {
        return Ok(a.id);
    }
    let taken: BTreeSet<i64> = tables.accounts.iter().map(|a| a.id).collect();
    let id = (1..).find(|id| !taken.contains(id)).unwrap_or(1);
    match live.add_account(id) {
        Ok(true) => {}
        other => return Err(format!("adding account {id}: {other:?}")),
    }
    tables.accounts.push(AccountRow { id, balance: 0 });
    tables.accounts.sort_by_key(|a| a.id);
    unchanged(live, tables, "a new account")?;
    Ok(id)
}

/// `tables` after `e` applied with `receipt`.
fn credit(tables: &mut Tables, e: &Event, receipt: Receipt) {
    if let Some(a) = tables.accounts.iter_mut().find(|a| a.id == e.account_id()) {
        a.balance = receipt.balance_after;
    }
    tables.inbox.push(InboxRow {
        source: e.source().to_owned(),
        event_id: e.event_id().to_owned(),
        account_id: e.account_id(),
        amount: e.amount(),
        receipt: Some(receipt),
    });
    tables.inbox.sort_by(|a, b| {
        (a.source.as_bytes(), a.event_id.as_bytes())
            .cmp(&(b.source.as_bytes(), b.event_id.as_bytes()))
    });
}

/// After the caller reopened the live database: the same rows, and every
/// event the suite applied still replays as a duplicate.
///
/// # Errors
/// A sentence saying what the reload lost or broke.
pub fn after_reload(live: &mut impl Live, kept: &Kept) -> Res {
    unchanged(live, &kept.tables, "after the reload")?;
    for (e, receipt) in &kept.applied {
        match live.deliver(e) {
            Ok(Outcome::Duplicate(r)) if r == *receipt => {}
            other => {
                return Err(format!(
                    "replay after the reload: expected duplicate, got {other:?}"
                ))
            }
        }
    }
    unchanged(live, &kept.tables, "replays after the reload")?;
    let stored = inspect(
        &live.export().map_err(tag("export after the reload"))?,
        &kept.baseline,
    )?;
    if stored.tables != kept.tables {
        return Err("after the reload the stored rows differ".to_owned());
    }
    Ok(())
}

/// After the caller reset the live database: account 1 at 0, an empty
/// inbox, and the first event gets receipt 1.
///
/// # Errors
/// A sentence saying what the reset left behind.
pub fn after_reset(live: &mut impl Live) -> Res {
    let fresh = Tables {
        accounts: vec![AccountRow { id: 1, balance: 0 }],
        inbox: Vec::new(),
    };
    unchanged(live, &fresh, "after the reset")?;
    let e = event("after-reset", "evt-1", 1, 5)?;
    let receipt = Receipt {
        seq: 1,
        balance_after: 5,
    };
    match live.deliver(&e) {
        Ok(Outcome::Applied(r)) if r == receipt => Ok(()),
        other => Err(format!("first event after the reset: got {other:?}")),
    }
}

// ---- Reading an exported live database: schema, header, every cell -----------------------------

/// What [`inspect`] read from a live database's bytes.
struct Stored {
    tables: Tables,
    counter: i64,
}

fn open_read_only(bytes: &[u8]) -> Res<Connection> {
    let mut conn = Connection::open_in_memory().map_err(say)?;
    conn.deserialize_read_exact(MAIN_DB, bytes, bytes.len(), true)
        .map_err(|e| format!("the live database's bytes do not open: {e}"))?;
    Ok(conn)
}

fn header_of(conn: &Connection) -> Res<Header> {
    let int = |pragma: &str| -> Res<i64> {
        conn.query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0))
            .map_err(|e| format!("PRAGMA {pragma}: {e}"))
    };
    Ok(Header {
        page_size: int("page_size")?,
        auto_vacuum: int("auto_vacuum")?,
        encoding: conn
            .query_row("PRAGMA encoding", [], |r| r.get(0))
            .map_err(say)?,
        application_id: int("application_id")?,
        user_version: int("user_version")?,
    })
}

type SchemaRow = (String, String, String, Option<String>);

fn schema_rows(conn: &Connection) -> Res<Vec<SchemaRow>> {
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")
        .map_err(say)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .map_err(say)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(say)?;
    Ok(rows)
}

fn fresh_schema() -> Res<Vec<SchemaRow>> {
    let mut fresh = Connection::open_in_memory().map_err(say)?;
    schema::migrate(&mut fresh).map_err(say)?;
    schema_rows(&fresh)
}

/// One stored value, as SQLite holds it (no conversion).
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    /// Text that is valid UTF-8.
    Text(String),
    /// Text that is not.
    BadText(Vec<u8>),
    Blob(Vec<u8>),
}

impl Cell {
    fn of(v: ValueRef<'_>) -> Cell {
        match v {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(i) => Cell::Int(i),
            ValueRef::Real(f) => Cell::Real(f),
            ValueRef::Text(t) => match std::str::from_utf8(t) {
                Ok(s) => Cell::Text(s.to_owned()),
                Err(_) => Cell::BadText(t.to_vec()),
            },
            ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
        }
    }

    fn int(&self, what: &str, min: i64, max: i64) -> Res<i64> {
        match *self {
            Cell::Int(v) if (min..=max).contains(&v) => Ok(v),
            ref other => Err(format!(
                "{what} is {other:?}, not an integer in {min}..={max}"
            )),
        }
    }

    fn opt_int(&self, what: &str, min: i64, max: i64) -> Res<Option<i64>> {
        match self {
            Cell::Null => Ok(None),
            other => other.int(what, min, max).map(Some),
        }
    }

    fn text(&self, what: &str) -> Res<String> {
        match self {
            Cell::Text(s) => Ok(s.clone()),
            other => Err(format!("{what} is {other:?}, not valid UTF-8 text")),
        }
    }
}

fn cells(conn: &Connection, sql: &str) -> Res<Vec<Vec<Cell>>> {
    let mut stmt = conn.prepare(sql).map_err(|e| format!("{sql}: {e}"))?;
    let n = stmt.column_count();
    let mut rows = stmt.query([]).map_err(say)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(say)? {
        let mut cells = Vec::with_capacity(n);
        for i in 0..n {
            cells.push(Cell::of(row.get_ref(i).map_err(say)?));
        }
        out.push(cells);
    }
    Ok(out)
}

/// Checks a live database's bytes: the header a fresh database has, the
/// schema byte for byte, `integrity_check`, `foreign_key_check`, and every
/// stored value of its type and range; returns the rows.
fn inspect(bytes: &[u8], baseline: &Header) -> Res<Stored> {
    let conn = open_read_only(bytes)?;
    let header = header_of(&conn)?;
    if &header != baseline {
        return Err(format!(
            "the header is not a fresh database's: {header:?}, expected {baseline:?}"
        ));
    }
    let found = schema_rows(&conn)?;
    let expected = fresh_schema()?;
    if found != expected {
        let extra: Vec<_> = found.iter().filter(|o| !expected.contains(o)).collect();
        let missing: Vec<_> = expected.iter().filter(|o| !found.contains(o)).collect();
        return Err(if extra.is_empty() && missing.is_empty() {
            format!("the schema's objects are not in a fresh database's order: {found:?}")
        } else {
            format!("the schema is not inbox-lab's: extra {extra:?}, missing {missing:?}")
        });
    }
    let integrity = cells(&conn, "PRAGMA integrity_check")?;
    if integrity != [vec![Cell::Text("ok".into())]] {
        return Err(format!("integrity_check: {integrity:?}"));
    }
    let fk = cells(&conn, "PRAGMA foreign_key_check")?;
    if !fk.is_empty() {
        return Err(format!("foreign_key_check: {fk:?}"));
    }

    let mut accounts = Vec::new();
    for row in cells(&conn, "SELECT id, balance FROM accounts ORDER BY id")? {
        accounts.push(AccountRow {
            id: row[0].int("accounts.id", 1, MAX_ACCOUNT_ID)?,
            balance: row[1].int("accounts.balance", 0, MAX_BALANCE)?,
        });
    }
    let counters = cells(&conn, "SELECT id, last_seq FROM receipt_counter")?;
    let counter = match &counters[..] {
        [row] => {
            row[0].int("receipt_counter.id", 1, 1)?;
            row[1].int("receipt_counter.last_seq", 0, MAX_RECEIPT)?
        }
        other => return Err(format!("receipt_counter holds {} rows", other.len())),
    };
    let mut inbox = Vec::new();
    let mut seqs = BTreeSet::new();
    let ids: BTreeSet<i64> = accounts.iter().map(|a| a.id).collect();
    for row in cells(
        &conn,
        "SELECT source, event_id, account_id, amount, receipt_seq, balance_after, received_at
         FROM inbox ORDER BY CAST(source AS BLOB), CAST(event_id AS BLOB)",
    )? {
        let source = row[0].text("inbox.source")?;
        let event_id = row[1].text("inbox.event_id")?;
        let account_id = row[2].int("inbox.account_id", 1, MAX_ACCOUNT_ID)?;
        let amount = row[3].int("inbox.amount", 1, MAX_AMOUNT)?;
        event(&source, &event_id, account_id, amount)
            .map_err(|e| format!("a stored inbox row breaks the event rules: {e}"))?;
        if !ids.contains(&account_id) {
            return Err(format!("inbox row {source}/{event_id} names no account"));
        }
        let seq = row[4].opt_int("inbox.receipt_seq", 0, counter)?;
        let after = row[5].opt_int("inbox.balance_after", 0, MAX_BALANCE)?;
        let receipt = match (seq, after) {
            (Some(seq), Some(balance_after)) => {
                if !seqs.insert(seq) {
                    return Err(format!("receipt number {seq} is stored twice"));
                }
                Some(Receipt { seq, balance_after })
            }
            (None, None) => None,
            _ => return Err(format!("inbox row {source}/{event_id} has half a receipt")),
        };
        row[6].int("inbox.received_at", 0, MAX_NUMBER)?;
        inbox.push(InboxRow {
            source,
            event_id,
            account_id,
            amount,
            receipt,
        });
    }
    match &cells(&conn, "SELECT id, now FROM lab_clock")?[..] {
        [row] => {
            row[0].int("lab_clock.id", 1, 1)?;
            row[1].int("lab_clock.now", 0, MAX_NUMBER)?;
        }
        other => return Err(format!("lab_clock holds {} rows", other.len())),
    }
    for row in cells(&conn, "SELECT name, seq FROM sqlite_sequence")? {
        if row[0] != Cell::Text("outbox".into()) {
            return Err(format!("sqlite_sequence names {:?}", row[0]));
        }
        row[1].int("sqlite_sequence.seq", 0, MAX_NUMBER)?;
    }
    for row in cells(
        &conn,
        "SELECT message_id, source, event_id, account_id, amount, sent_at FROM outbox",
    )? {
        row[0].int("outbox.message_id", 1, MAX_NUMBER)?;
        let e = event(
            &row[1].text("outbox.source")?,
            &row[2].text("outbox.event_id")?,
            row[3].int("outbox.account_id", 1, MAX_ACCOUNT_ID)?,
            row[4].int("outbox.amount", 1, MAX_AMOUNT)?,
        );
        e.map_err(|e| format!("an outbox row breaks the event rules: {e}"))?;
        row[5].opt_int("outbox.sent_at", 0, MAX_NUMBER)?;
    }
    for row in cells(&conn, "SELECT order_id, source, event_id FROM orders")? {
        for (i, what) in ["orders.order_id", "orders.source", "orders.event_id"]
            .iter()
            .enumerate()
        {
            row[i].text(what)?;
        }
    }
    Ok(Stored {
        tables: Tables { accounts, inbox },
        counter,
    })
}

// ---- Counting and reporting (both test files print the same table) -----------

/// Generated, accepted, refused.
pub type Counts = (usize, usize, usize);

/// Counts one file: generated, and accepted or refused.
pub fn tally(counts: &mut Counts, accepted: bool) {
    counts.0 += 1;
    if accepted {
        counts.1 += 1;
    } else {
        counts.2 += 1;
    }
}

/// The catalogue's run, judged alike natively and in the browser: no file broke
/// the guarantee, every class made a file, and both verdicts were given.
pub fn assert_catalogue_run(counts: &BTreeMap<&str, Counts>, failures: &[String], files: usize) {
    assert!(
        failures.is_empty(),
        "{} of {files} files broke the guarantee:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for class in CLASSES {
        let (generated, _, _) = counts.get(class).copied().unwrap_or_default();
        assert!(generated >= 1, "class {class}: no file generated");
    }
    let (accepted, refused) = counts.values().fold((0, 0), |(a, r), c| (a + c.1, r + c.2));
    assert!(
        accepted >= 15 && refused >= 15,
        "the catalogue must exercise both verdicts: {accepted} accepted, {refused} refused"
    );
}

/// The table of a run, one line per class and a summary line.
pub fn report_lines(
    title: &str,
    counts: &std::collections::BTreeMap<&str, Counts>,
    total: Counts,
    seconds: f64,
) -> Vec<String> {
    let mut lines: Vec<String> = counts
        .iter()
        .map(|(class, (g, a, r))| {
            format!("{title}: {class:<20} generated {g:>4}, accepted {a:>4}, refused {r:>4}")
        })
        .collect();
    let classes: Vec<String> = counts
        .iter()
        .map(|(class, (g, a, r))| format!("{class} {g}/{a}/{r}"))
        .collect();
    lines.push(format!(
        "{title} summary (generated/accepted/refused): {}; total {}/{}/{} in {seconds:.1} s",
        classes.join(", "),
        total.0,
        total.1,
        total.2
    ));
    lines
}
