//! Nothing the page can write is something it refuses to read (issue 27).
//!
//! A property test: random sequences of the writes the page's console API
//! offers (`window.inboxLab`: deliveries by every handler, the outbox and
//! its dispatcher, orders, accounts, the lab clock, the purge, an import of
//! the database's own export), run through the same Rust the worker calls,
//! with values at and past every limit. Each call may be refused; after
//! every call the database passes the health check, and after the sequence
//! it reopens through the page's door (`db::open_checked`) — never
//! "unusable".
#![cfg(all(not(target_family = "wasm"), feature = "labs"))]

use inbox_lab::core::db;
use inbox_lab::core::event::{MAX_ACCOUNT_ID, MAX_AMOUNT};
use inbox_lab::core::health;
use inbox_lab::core::schema::{self, DEFAULT_BUSY_TIMEOUT, MAX_STORED};
use inbox_lab::labs::handlers::{Handler, Payload};
use inbox_lab::labs::scheme_ends::outbox::{self, Receiver, Strategy as Notify};
use inbox_lab::labs::scheme_ends::{business, retention};
use inbox_lab::labs::tools::transfer;
use proptest::prelude::*;
use rusqlite::Connection;

const DAY: i64 = 86_400_000;

/// One call of the console API.
#[derive(Debug, Clone)]
enum Write {
    Deliver(Handler, Payload),
    Notify(Notify, Payload),
    Dispatch,
    Activate(String, String),
    AddAccount(i64),
    AdvanceClock(i64),
    Purge(i64),
    ImportOwnExport,
}

fn payload() -> impl Strategy<Value = Payload> {
    (
        prop::sample::select(vec!["a", "b"]),
        prop::sample::select(vec!["e-1", "e-2", "e-3"]),
        prop::sample::select(vec![1, 2, MAX_ACCOUNT_ID]),
        prop::sample::select(vec![1, 500, MAX_AMOUNT]),
    )
        .prop_map(|(source, event_id, account_id, amount)| Payload {
            source: source.into(),
            event_id: event_id.into(),
            account_id,
            amount,
        })
}

/// Steps of the clock and purge windows: small, large, at and past the
/// largest stored number.
fn millis() -> impl Strategy<Value = i64> {
    prop::sample::select(vec![
        0,
        1,
        DAY,
        MAX_STORED / 2,
        MAX_STORED - 1,
        MAX_STORED,
        MAX_STORED + 1,
        i64::MAX,
    ])
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        3 => (prop::sample::select(Handler::ALL.to_vec()), payload())
            .prop_map(|(h, p)| Write::Deliver(h, p)),
        2 => (
            prop::sample::select(vec![
                Notify::Outbox,
                Notify::SendAfterCommit,
                Notify::SendBeforeCommit
            ]),
            payload()
        )
            .prop_map(|(s, p)| Write::Notify(s, p)),
        1 => Just(Write::Dispatch),
        1 => (
            prop::sample::select(vec!["e-1", "e-2"]),
            prop::sample::select(vec!["A-1", "A-2"])
        )
            .prop_map(|(e, o)| Write::Activate(e.into(), o.into())),
        1 => prop::sample::select(vec![2, MAX_ACCOUNT_ID]).prop_map(Write::AddAccount),
        3 => millis().prop_map(Write::AdvanceClock),
        1 => millis().prop_map(Write::Purge),
        1 => Just(Write::ImportOwnExport),
    ]
}

/// Runs one call as the worker would; a refusal is fine, a panic is not.
fn run(conn: &mut Connection, receiver: &Receiver, write: &Write) {
    let _ = match write {
        Write::Deliver(handler, payload) => handler.deliver(conn, payload, None).map(drop),
        Write::Notify(strategy, payload) => payload
            .to_event()
            .and_then(|e| outbox::deliver(conn, receiver, &e, *strategy, None).map(drop)),
        Write::Dispatch => outbox::dispatch_one(conn, receiver, None).map(drop),
        Write::Activate(event_id, order) => {
            business::activate(conn, "shop", event_id, order).map(drop)
        }
        Write::AddAccount(id) => schema::add_account(conn, *id).map(drop),
        Write::AdvanceClock(ms) => retention::advance(conn, *ms).map(drop),
        Write::Purge(keep) => retention::purge(conn, *keep, 100).map(drop),
        Write::ImportOwnExport => transfer::export(conn)
            .and_then(|bytes| transfer::import(conn, &bytes))
            .map(drop),
    };
}

/// Runs `writes` on a new database file: after every call it passes the health check, and after
/// the last one it reopens through the page's door.
fn stays_readable(writes: &[Write]) -> Result<(), String> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir
        .path()
        .join("page.sqlite3")
        .to_string_lossy()
        .into_owned();
    // No flush per commit: what is stored, not when, is under test.
    let open = || {
        db::open_checked(&path, DEFAULT_BUSY_TIMEOUT, |c| {
            Ok(c.execute_batch("PRAGMA synchronous = OFF")?)
        })
    };
    let mut conn = open().expect("a new database opens");
    let receiver =
        Receiver::open(Connection::open_in_memory().expect("memory"), true).expect("receiver");
    for (i, write) in writes.iter().enumerate() {
        run(&mut conn, &receiver, write);
        health::check(&conn).map_err(|e| format!("after call {i} ({write:?}): {e}"))?;
    }
    drop(conn);
    open().map(drop).map_err(|e| format!("the reload: {e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn no_sequence_of_the_pages_writes_leaves_a_database_it_refuses(
        writes in prop::collection::vec(write(), 1..25)
    ) {
        stays_readable(&writes).map_err(TestCaseError::fail)?;
    }
}

/// Found by the property test: a sent message outlives its purged inbox row, and the same key is
/// then applied again for another account. The old message told the truth when it was sent; the
/// health check must not call the database damaged.
#[test]
fn a_sent_message_outlives_its_purged_event_applied_again_elsewhere() {
    let payload = |account_id| Payload {
        source: "a".into(),
        event_id: "e-1".into(),
        account_id,
        amount: 1,
    };
    let writes = [
        Write::Notify(Notify::Outbox, payload(1)),
        Write::AdvanceClock(DAY),
        Write::Dispatch,
        Write::Purge(0),
        Write::AddAccount(2),
        Write::Notify(Notify::Outbox, payload(2)),
    ];
    assert_eq!(stays_readable(&writes), Ok(()));
}
