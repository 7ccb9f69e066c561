//! Verifying one signed delivery, and the event it yields.

use super::fields::{BODY, WEBHOOK_ID, WEBHOOK_TIMESTAMP};
use super::refusal::{invalid, AuthCode, Refusal};
use super::secret::Secret;
use super::signature::{matches, v1_signatures};
use super::MAX_BODY_BYTES;
use crate::core::error::{Error, InvalidCode, Reason};
use crate::core::event::{self, Event, Field};

/// One delivery as it arrived: `POST /hooks/{source}` with its three
/// headers (`None` when absent) and the body's bytes, untouched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// The URL's `{source}`: selects which secrets to try.
    pub source: &'a str,
    /// `webhook-id`: the event id.
    pub id: Option<&'a str>,
    /// `webhook-timestamp`: seconds since the Unix epoch.
    pub timestamp: Option<&'a str>,
    /// `webhook-signature`: `v1,<base64>` entries separated by spaces.
    pub signature: Option<&'a str>,
    /// The body, exactly as received (the signature covers these bytes).
    pub body: &'a [u8],
}

/// A delivery whose signature verified, and the event it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    event: Event,
    timestamp_secs: i64,
    secret_at: usize,
}

impl Verified {
    /// The event: its source is the one whose secret verified, its id the
    /// `webhook-id`, its account and amount the body's.
    pub fn event(&self) -> &Event {
        &self.event
    }

    pub(crate) fn into_event(self) -> Event {
        self.event
    }

    /// The `webhook-timestamp` that was signed (the tests read it).
    #[cfg(test)]
    pub(crate) fn timestamp_secs(&self) -> i64 {
        self.timestamp_secs
    }

    /// The position, in the `secrets` given to [`verify`], of the secret
    /// that verified (during a rotation: the old one or the new one; the
    /// tests read it).
    #[cfg(test)]
    pub(crate) fn secret_at(&self) -> usize {
        self.secret_at
    }
}

/// Verifies a Standard Webhooks delivery and reads its event.
///
/// `secrets` are `(source, secret)` pairs; only those whose source equals
/// the request's `source` (byte for byte) are tried, in order, and a
/// source may have several during a rotation. `now_secs` is the receiver's
/// clock; a timestamp may differ from it by up to `tolerance_secs` either
/// way ([`super::DEFAULT_TOLERANCE_SECS`]). The order of the checks, and
/// why, is in the module's documentation.
///
/// # Errors
/// A [`Refusal`] (401, 413 or 400, see its table). Nothing is delivered.
///
/// # Example
/// ```
/// use inbox_lab::labs::webhooks::{sign, verify, Request, Secret, DEFAULT_TOLERANCE_SECS};
/// let secret = Secret::from_bytes(&[7; 32]).unwrap();
/// let body = br#"{"account_id": 1, "amount": 500}"#;
/// let signature = sign(&secret, "evt-1", 1_700_000_000, body);
/// let request = Request {
///     source: "provider-a",
///     id: Some("evt-1"),
///     timestamp: Some("1700000000"),
///     signature: Some(&signature),
///     body,
/// };
/// let secrets = [("provider-a", secret)];
/// let verified = verify(&secrets, &request, 1_700_000_010, DEFAULT_TOLERANCE_SECS).unwrap();
/// assert_eq!(verified.event().source(), "provider-a");
/// assert_eq!(verified.event().amount(), 500);
///
/// let forged = Request { body: br#"{"account_id": 1, "amount": 900}"#, ..request };
/// let refusal = verify(&secrets, &forged, 1_700_000_010, DEFAULT_TOLERANCE_SECS).unwrap_err();
/// assert_eq!((refusal.http_status(), refusal.code()), (401, "signature_mismatch"));
/// ```
pub fn verify<S: AsRef<str>>(
    secrets: &[(S, Secret)],
    request: &Request<'_>,
    now_secs: i64,
    tolerance_secs: u64,
) -> Result<Verified, Refusal> {
    // 1. Size, before reading anything. 2. Header syntax: the key rules for
    //    the source and the id, a canonical timestamp, a well-formed
    //    signature header.
    let id = checked_id(request)?;
    let Some(timestamp_text) = request.timestamp else {
        return Err(invalid(event::missing(WEBHOOK_TIMESTAMP), |f| f));
    };
    let timestamp = parse_timestamp(timestamp_text)?;
    let Some(header) = request.signature else {
        return Err(Refusal::Unauthorized {
            reason: Reason::new(
                AuthCode::MissingSignature,
                "the webhook-signature header is missing",
            ),
        });
    };
    let signatures = v1_signatures(header)?;

    // 3. Authenticity: a secret for the source, a fresh timestamp, a match.
    let candidates: Vec<(usize, &str, &Secret)> = secrets
        .iter()
        .enumerate()
        .filter(|(_, (source, _))| source.as_ref() == request.source)
        .map(|(at, (source, secret))| (at, source.as_ref(), secret))
        .collect();
    let quoted = format!("{:?}", request.source);
    if candidates.is_empty() {
        return Err(Refusal::Unauthorized {
            reason: Reason::new(
                AuthCode::UnknownSource,
                format!("no secret is configured for the source {quoted}"),
            )
            .with("source", quoted),
        });
    }
    check_window(timestamp, now_secs, tolerance_secs)?;
    let Some((secret_at, source)) = candidates.iter().find_map(|&(at, source, secret)| {
        signatures
            .iter()
            .any(|tag| matches(secret, id, timestamp_text, request.body, tag))
            .then_some((at, source))
    }) else {
        let (tags, keys) = (signatures.len(), candidates.len());
        return Err(Refusal::Unauthorized {
            reason: Reason::new(
                AuthCode::SignatureMismatch,
                format!(
                    "none of the {tags} v1 signatures matches any of the {keys} secrets of the \
                     source {quoted}"
                ),
            )
            .with("signatures", tags)
            .with("secrets", keys)
            .with("source", quoted),
        });
    };

    // 4. Only now the body: the payload half of an event, as strictly as
    //    `Event::from_json`. The source is the verified one, never the body's.
    let event = read_event(source, id, request.body)?;
    Ok(Verified {
        event,
        timestamp_secs: timestamp,
        secret_at,
    })
}

/// The core's names for what a webhook calls otherwise: the event id is the
/// `webhook-id` header, the event as a whole is the body.
fn rename(field: Field) -> Field {
    match field {
        Field::EVENT_ID => WEBHOOK_ID,
        Field::EVENT => BODY,
        other => other,
    }
}

/// The first checks of every reading, and the `webhook-id` they leave: the
/// body size limit (413, before anything is read), then the event's key
/// rules on the URL's source and the id (when present; checked with
/// placeholder numbers, which always pass), then the id's presence.
fn checked_id<'a>(request: &Request<'a>) -> Result<&'a str, Refusal> {
    if request.body.len() > MAX_BODY_BYTES {
        return Err(Refusal::TooLarge {
            bytes: request.body.len(),
            max: MAX_BODY_BYTES,
        });
    }
    let keys: Result<Event, Error> = Event::new(request.source, request.id.unwrap_or("-"), 1, 1);
    keys.map_err(|e| invalid(e, rename))?;
    request
        .id
        .ok_or_else(|| invalid(event::missing(WEBHOOK_ID), |f| f))
}

/// A canonical, non-negative base-10 integer: the text that was signed is
/// then exactly the number's decimal form.
fn parse_timestamp(text: &str) -> Result<i64, Refusal> {
    let value = event::parse_integer(WEBHOOK_TIMESTAMP, text).map_err(|e| invalid(e, |f| f))?;
    if value < 0 {
        return Err(Refusal::Invalid {
            field: WEBHOOK_TIMESTAMP,
            reason: Reason::new(
                InvalidCode::OutOfRange,
                format!("must be between 0 and {}, got {value}", i64::MAX),
            )
            .with("min", 0)
            .with("max", i64::MAX)
            .with("got", value),
        });
    }
    Ok(value)
}

/// The timestamp is within `tolerance` seconds of `now`, either way.
fn check_window(timestamp: i64, now: i64, tolerance: u64) -> Result<(), Refusal> {
    let code = if timestamp < now && now.abs_diff(timestamp) > tolerance {
        AuthCode::StaleTimestamp
    } else if timestamp > now && timestamp.abs_diff(now) > tolerance {
        AuthCode::FutureTimestamp
    } else {
        return Ok(());
    };
    let how = if code == AuthCode::StaleTimestamp {
        "older"
    } else {
        "further ahead"
    };
    Err(Refusal::Unauthorized {
        reason: Reason::new(
            code,
            format!("the timestamp {timestamp} is {how} than {tolerance} seconds from now ({now})"),
        )
        .with("timestamp", timestamp)
        .with("now", now)
        .with("tolerance", tolerance),
    })
}

/// **The mistake this lab warns about**: reads the event of a delivery
/// without checking its signature — what a receiver does that trusts
/// deduplication to keep it safe. Size, keys and body are checked exactly
/// as by [`verify`]; the signature and the timestamp are ignored, and the
/// source is simply the URL's. Anyone who can reach the endpoint chooses
/// the event, its id included. Used only to show why [`verify`] exists
/// (the page's "verify signatures" switch, off).
///
/// # Errors
/// A [`Refusal`]: 413 or 400, never 401.
pub fn read_unsigned(request: &Request<'_>) -> Result<Event, Refusal> {
    read_event(request.source, checked_id(request)?, request.body)
}

/// The body as the payload half of an event, as strictly as
/// `Event::from_json`; `source` and `id` come from elsewhere.
fn read_event(source: &str, id: &str, body: &[u8]) -> Result<Event, Refusal> {
    let text = std::str::from_utf8(body).map_err(|e| Refusal::Invalid {
        field: BODY,
        reason: Reason::new(InvalidCode::NotJson, format!("not UTF-8 text: {e}")).with("detail", e),
    })?;
    Event::from_json_payload(source, id, text).map_err(|e| invalid(e, rename))
}
