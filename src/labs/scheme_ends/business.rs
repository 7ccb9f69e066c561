//! Business keys: when two *different* events describe one business
//! operation.
//!
//! Event dedup answers "did I process this event?". It cannot answer "did I
//! already activate this order?": a provider may send `evt-7` and, after a
//! resend from its own admin panel, `evt-8` — both about order `A-1`. Each
//! passes the inbox. The fix is the same idea one level up: a unique
//! **business key** (`orders.order_id`), written in the same transaction.
//! The second event then gets a clear business answer, `already_active`
//! (HTTP 200: the sender did nothing wrong), not a 500 from a constraint.
//!
//! Invariant: an order is activated by exactly one event; every event about
//! it is registered in `order_events` once, with the answer it got.

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use serde::Serialize;

use crate::core::error::{Error, Reason};
use crate::core::event::{Event, Field};

/// The input naming the order an activation event is about.
const ORDER_ID: Field = Field::new("order_id");

crate::core::error::code_enum! {
    /// The `code` of the business-key refusals (field `order_id`).
    BusinessCode {
        /// This event was processed for another order. Params: `event_source`,
        /// `event_id`, `order` (quoted).
        OtherOrder => "other_order",
    }
}

/// The answer to "activate order O" (event `E` from source `S`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Activation {
    /// This event activated the order.
    Activated,
    /// Another event activated it before; this one changed nothing.
    AlreadyActive {
        by_source: String,
        by_event_id: String,
    },
    /// This very event was processed before; its first answer, again.
    Duplicate { first: String },
}

impl Activation {
    pub fn http_status(&self) -> u16 {
        200
    }
}

/// Activates `order_id` once, for the event `(source, event_id)`.
///
/// # Errors
/// [`Error::InvalidInput`] for a bad key or order id (same rules as event
/// keys), or when this event was already processed for another order (the
/// payload-conflict of this operation); busy and storage errors. Nothing is
/// written on error.
pub fn activate(
    conn: &Connection,
    source: &str,
    event_id: &str,
    order_id: &str,
) -> Result<Activation, Error> {
    // Reuse the event rules for the keys (account and amount do not apply).
    Event::new(source, event_id, 1, 1)?;
    Event::new(order_id, "order", 1, 1).map_err(|e| match e {
        Error::InvalidInput { reason, .. } => Error::refused(ORDER_ID, reason),
        other => other,
    })?;
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let registered = tx.execute(
        "INSERT INTO order_events(source, event_id, order_id, result)
         VALUES (?1, ?2, ?3, 'activated')
         ON CONFLICT(source, event_id) DO NOTHING",
        params![source, event_id, order_id],
    )?;
    if registered == 0 {
        let (stored_order, result): (String, String) = tx.query_row(
            "SELECT order_id, result FROM order_events WHERE source = ?1 AND event_id = ?2",
            params![source, event_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if stored_order != order_id {
            return Err(Error::refused(
                ORDER_ID,
                Reason::new(
                    BusinessCode::OtherOrder,
                    format!(
                        "event ({source:?}, {event_id:?}) was already processed for order {stored_order:?}"
                    ),
                )
                .with("event_source", format!("{source:?}"))
                .with("event_id", format!("{event_id:?}"))
                .with("order", format!("{stored_order:?}")),
            ));
        }
        tx.commit()?;
        return Ok(Activation::Duplicate { first: result });
    }
    // The business key decides, exactly as the event key did.
    let activated = tx.execute(
        "INSERT INTO orders(order_id, source, event_id) VALUES (?1, ?2, ?3)
         ON CONFLICT(order_id) DO NOTHING",
        params![order_id, source, event_id],
    )?;
    let answer = if activated == 1 {
        Activation::Activated
    } else {
        let (by_source, by_event_id): (String, String) = tx
            .query_row(
                "SELECT source, event_id FROM orders WHERE order_id = ?1",
                params![order_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?
            .ok_or_else(|| Error::storage("order vanished inside the transaction"))?;
        tx.execute(
            "UPDATE order_events SET result = 'already_active' WHERE source = ?1 AND event_id = ?2",
            params![source, event_id],
        )?;
        Activation::AlreadyActive {
            by_source,
            by_event_id,
        }
    };
    tx.commit()?;
    Ok(answer)
}
