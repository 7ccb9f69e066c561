//! Signed webhooks: who may deliver an event at all.
//!
//! The inbox answers "did I process this event before?". It does **not**
//! answer "did this event come from the sender it names?". Anyone who can
//! reach the handler can invent a fresh `(source, event_id)` — the inbox
//! will register it once, exactly as designed, and credit the account.
//! *Deduplication does not prove authenticity*: exactly-once processing of
//! a forged event is still a forged credit. Authenticity needs a secret the
//! sender and the receiver share, checked before anything is delivered.
//!
//! ## What Standard Webhooks signs
//!
//! This module verifies deliveries in the [Standard Webhooks] format. A
//! delivery is `POST /hooks/{source}` with three headers and a body:
//!
//! * `webhook-id` — the message id; stays the same across retries, so it is
//!   the event id of the inbox's key;
//! * `webhook-timestamp` — seconds since the Unix epoch, set at each
//!   attempt;
//! * `webhook-signature` — space-separated `v1,<base64>` entries (several
//!   during a secret rotation; other versions such as `v1a,` are ignored);
//! * the body, here `{"account_id": N, "amount": N}`.
//!
//! The signature is `base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}"))`,
//! where the key is the base64-decoded part of the secret `whsec_<base64>`
//! ([`Secret`], [`sign`]). So the signature covers:
//!
//! * the **body** byte for byte — change an amount and it no longer verifies;
//! * the **id** — a captured body cannot be replayed under a fresh id to
//!   slip past the inbox;
//! * the **timestamp** — a captured delivery can be replayed unchanged only
//!   within the tolerance window (5 minutes by default, both ways); inside
//!   the window, the replay has the same id, and the inbox turns it into a
//!   duplicate. The two defences need each other.
//!
//! It does **not** cover the source: the URL's `{source}` only says which
//! secrets to try, and the event's source is the one whose secret verified
//! ([`Verified::event`]). A body that names a source is refused (an
//! unexpected field), so no field of the body can move an event to another
//! sender's key.
//!
//! ## What [`verify`] checks, in order
//!
//! 1. the body size (`MAX_BODY_BYTES`) — 413;
//! 2. header syntax: the source and the id pass the event's key rules, the
//!    timestamp is a canonical integer (400); the signature header is
//!    present and well formed (401);
//! 3. the source has a secret (401), the timestamp is within the tolerance
//!    (401), a `v1` signature matches a secret of the source, compared in
//!    constant time (`hmac`'s `verify_slice`) (401);
//! 4. only then the body is parsed, as strictly as
//!    [`crate::Event::from_json`] (400).
//!
//! *Invariant:* nothing but the size and the headers' syntax is looked at
//! before the signature is checked, and a [`Verified`] event's source is
//! the one whose secret verified it.
//!
//! ## Refusals
//!
//! A refusal is not an [`crate::core::Error`]: that enum is what a
//! *delivery* can answer, and its only refusal (`invalid_input`) is a 400.
//! A signed webhook can also be refused as unauthenticated (401) or too
//! large (413) before any delivery is attempted, so [`Refusal`] is this
//! lab's own type with the same wire shape ([`Refusal::report`] returns the
//! core's [`crate::core::ErrorReport`]). See [`Refusal`] for the table.
//!
//! [Standard Webhooks]: https://www.standardwebhooks.com/

mod receive;
mod refusal;
mod secret;
mod signature;
pub mod store;
mod verify;

#[cfg(test)]
mod tests;

pub use receive::{receive, Check, Received};
pub use refusal::{AuthCode, Refusal};
pub use secret::{Secret, SecretCode};
pub use signature::sign;
pub use verify::{read_unsigned, verify, Request, Verified};

use crate::core::event::Field;

/// The largest body accepted, in bytes: checked before anything else (413).
const MAX_BODY_BYTES: usize = 64 * 1024;

/// How far a timestamp may be from the receiver's clock, in seconds, either
/// way: the specification's default, 5 minutes.
pub const DEFAULT_TOLERANCE_SECS: u64 = 5 * 60;

/// The inputs a refusal can name, as on the wire (`snake_case`).
pub mod fields {
    use super::Field;

    /// A secret given as `whsec_<base64>` ([`super::Secret::parse`]).
    pub(crate) const SECRET: Field = Field::new("secret");
    /// The `webhook-id` header.
    pub const WEBHOOK_ID: Field = Field::new("webhook_id");
    /// The `webhook-timestamp` header.
    pub const WEBHOOK_TIMESTAMP: Field = Field::new("webhook_timestamp");
    /// The request body as a whole.
    pub const BODY: Field = Field::new("body");
}

/// Every `(kind, code)` pair this lab can report: the 401s
/// ([`AuthCode`], kind `unauthorized`), the 413
/// (`payload_too_large`/`body_too_large`) and its own `invalid_input` codes
/// ([`SecretCode`]). Its other 400s carry the core's codes.
///
/// [`crate::labs::error_codes`] includes them (so the page has a text for
/// each, in English and Russian).
///
/// # Example
/// ```
/// let all = inbox_lab::labs::webhooks::codes();
/// assert!(all.contains(&("unauthorized", "signature_mismatch")));
/// assert!(all.contains(&("payload_too_large", "body_too_large")));
/// ```
pub fn codes() -> Vec<(&'static str, &'static str)> {
    let mut all: Vec<_> = AuthCode::ALL
        .iter()
        .map(|c| (Refusal::UNAUTHORIZED, c.as_str()))
        .collect();
    all.push((Refusal::TOO_LARGE, Refusal::BODY_TOO_LARGE));
    all.extend(
        SecretCode::ALL
            .iter()
            .map(|c| ("invalid_input", c.as_str())),
    );
    all
}
