//! Receiving one webhook: check who sent it, then run the article's handler.
//!
//! [`receive`] is what `POST /hooks/{source}` does: [`super::verify`] first
//! (401/413/400 before anything touches the inbox), then
//! [`crate::apply_traced`] on the verified event. Its [`Received`] is the
//! HTTP answer the sender gets — the handler's own status and JSON body —
//! and, for the page, the event and the steps the handler ran.
//!
//! [`Check::Nothing`] is the mistake this lab shows: the same handler
//! behind a receiver that skips the signature ([`super::read_unsigned`]).

use rusqlite::Connection;
use serde::Serialize;

use super::secret::Secret;
use super::verify::{read_unsigned, verify, Request};
use super::DEFAULT_TOLERANCE_SECS;
use crate::core::event::Event;
use crate::core::trace::Trace;

/// What the receiver checks before the handler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The signature, the timestamp and the source's secret: the way to do it.
    Signature,
    /// Nothing but the format (the mistake: anyone may send anything).
    Nothing,
}

/// The answer to one webhook, and what the page shows of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Received {
    /// The HTTP status the sender gets.
    pub status: u16,
    /// The JSON body it gets: `{outcome, http_status, receipt}`, or the
    /// refusal or error `{kind, code, message, http_status, retryable, ...}`.
    pub body: serde_json::Value,
    /// The event that reached the handler; `None` when refused before it.
    pub event: Option<Event>,
    /// What the handler ran (empty when it never ran).
    pub steps: Trace,
}

/// Receives `request` into the inbox on `inbox`: verifies it with the
/// source's `secrets` at `now_secs` (or not, [`Check::Nothing`]), then
/// applies its event.
pub fn receive(
    inbox: &Connection,
    secrets: &[(String, Secret)],
    request: &Request<'_>,
    now_secs: i64,
    check: Check,
) -> Received {
    let event = match check {
        Check::Signature => {
            verify(secrets, request, now_secs, DEFAULT_TOLERANCE_SECS).map(|v| v.into_event())
        }
        Check::Nothing => read_unsigned(request),
    };
    let event = match event {
        Ok(event) => event,
        Err(refusal) => {
            return Received {
                status: refusal.http_status(),
                body: json(&refusal.report()),
                event: None,
                steps: Trace::default(),
            }
        }
    };
    let (answer, steps) = crate::apply_traced(inbox, &event, None);
    let (status, body) = match answer {
        Ok(outcome) => (outcome.http_status(), json(&outcome)),
        Err(err) => (err.http_status(), json(&err.report())),
    };
    Received {
        status,
        body,
        event: Some(event),
        steps,
    }
}

fn json<T: Serialize>(value: &T) -> serde_json::Value {
    // Our own plain structs always serialise; `Null` is never reached.
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::super::sign;
    use super::*;
    use crate::core::schema;

    const NOW: i64 = 1_700_000_000;

    fn inbox() -> Connection {
        let mut conn = Connection::open_in_memory().expect("open");
        schema::prepare(&conn, schema::DEFAULT_BUSY_TIMEOUT).expect("prepare");
        schema::init(&mut conn, &[1]).expect("init");
        conn
    }

    fn balance(conn: &Connection) -> i64 {
        conn.query_row("SELECT balance FROM accounts WHERE id = 1", [], |r| {
            r.get(0)
        })
        .expect("balance")
    }

    /// The lesson: a forger who reuses the genuine event's id first.
    #[test]
    fn without_verification_a_forgery_poisons_the_key_with_it_the_genuine_one_applies() {
        let secret = Secret::from_bytes(&[9; 32]).expect("secret");
        let secrets = vec![("provider-a".to_owned(), secret.clone())];
        let genuine_body = br#"{"account_id": 1, "amount": 500}"#;
        let signature = sign(&secret, "evt-1", NOW, genuine_body);
        let genuine = Request {
            source: "provider-a",
            id: Some("evt-1"),
            timestamp: Some("1700000000"),
            signature: Some(&signature),
            body: genuine_body,
        };
        let forged = Request {
            signature: Some("v1,AAAA"),
            body: br#"{"account_id": 1, "amount": 1}"#,
            ..genuine
        };

        for (check, forged_status, genuine_status, genuine_kind, credited) in [
            (Check::Nothing, 200, 422, "payload_conflict", 1),
            (Check::Signature, 401, 200, "applied", 500),
        ] {
            let conn = inbox();
            let first = receive(&conn, &secrets, &forged, NOW, check);
            assert_eq!(first.status, forged_status, "{check:?}");
            let second = receive(&conn, &secrets, &genuine, NOW, check);
            assert_eq!(second.status, genuine_status, "{check:?}");
            let kind = second.body.get("kind").or(second.body.get("outcome"));
            assert_eq!(kind.and_then(|k| k.as_str()), Some(genuine_kind));
            assert_eq!(balance(&conn), credited, "{check:?}");
            // A replay of the genuine request inside the window: a duplicate.
            let replay = receive(&conn, &secrets, &genuine, NOW + 60, check);
            if check == Check::Signature {
                assert_eq!(replay.body["outcome"], "duplicate");
                // ...and after the window: refused before the inbox.
                let late = receive(&conn, &secrets, &genuine, NOW + 301, check);
                assert_eq!(
                    (late.status, late.body["code"].as_str()),
                    (401, Some("stale_timestamp"))
                );
                assert!(late.steps.steps().is_empty() && late.event.is_none());
            }
        }
    }
}
