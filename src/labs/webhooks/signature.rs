//! The `v1` signature: computing it, reading the header that carries it,
//! and comparing in constant time.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::refusal::{AuthCode, Refusal};
use super::secret::Secret;
use crate::core::error::Reason;

type HmacSha256 = Hmac<Sha256>;

/// The only version this module signs and checks.
pub(super) const VERSION: &str = "v1";

/// The HMAC of `"{id}.{timestamp}.{body}"`, before finalisation: the
/// content Standard Webhooks signs.
fn mac(secret: &Secret, msg_id: &str, timestamp: &str, body: &[u8]) -> HmacSha256 {
    // HMAC takes a key of any length (longer ones are hashed first), so
    // this cannot fail; a `Secret` is 24 to 64 bytes anyway.
    let mut mac = match HmacSha256::new_from_slice(secret.key()) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of any length"),
    };
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// Signs a message the Standard Webhooks way: `v1,` and the base64 of
/// HMAC-SHA256(key, `"{msg_id}.{timestamp_secs}.{body}"`). The body is
/// signed byte for byte, exactly as sent.
///
/// # Example
/// The specification's test vector:
/// ```
/// use inbox_lab::labs::webhooks::{sign, Secret};
/// let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
/// assert_eq!(
///     sign(&secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#),
///     "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
/// );
/// ```
pub fn sign(secret: &Secret, msg_id: &str, timestamp_secs: i64, body: &[u8]) -> String {
    let tag = mac(secret, msg_id, &timestamp_secs.to_string(), body)
        .finalize()
        .into_bytes();
    format!("{VERSION},{}", STANDARD.encode(tag))
}

/// Whether `tag` is the signature of the message under `secret`, compared
/// in constant time (`verify_slice`; a tag of the wrong length is simply
/// no match).
pub(super) fn matches(
    secret: &Secret,
    msg_id: &str,
    timestamp: &str,
    body: &[u8],
    tag: &[u8],
) -> bool {
    mac(secret, msg_id, timestamp, body)
        .verify_slice(tag)
        .is_ok()
}

/// The `v1` signatures of a `webhook-signature` header, decoded.
///
/// The header is a list of `version,base64` entries separated by spaces;
/// entries of other versions are ignored (they are for other schemes).
///
/// # Errors
/// 401: [`AuthCode::MalformedSignature`] for an empty header, an entry
/// without a comma, or a `v1` entry that is not base64;
/// [`AuthCode::NoV1Signature`] when no entry is `v1`.
pub(super) fn v1_signatures(header: &str) -> Result<Vec<Vec<u8>>, Refusal> {
    let malformed = |detail: String| Refusal::Unauthorized {
        reason: Reason::new(
            AuthCode::MalformedSignature,
            format!("malformed webhook-signature header: {detail}"),
        )
        .with("detail", detail),
    };
    let mut signatures = Vec::new();
    let mut versions = Vec::new();
    let mut entries = 0usize;
    for (n, entry) in (1..).zip(header.split(' ').filter(|e| !e.is_empty())) {
        entries += 1;
        let Some((version, encoded)) = entry.split_once(',') else {
            return Err(malformed(format!(
                "entry {n} has no comma (expected \"v1,<base64>\")"
            )));
        };
        if version != VERSION {
            versions.push(version);
            continue;
        }
        match STANDARD.decode(encoded) {
            Ok(tag) => signatures.push(tag),
            Err(e) => {
                return Err(malformed(format!(
                    "the signature of entry {n} is not base64 ({e})"
                )))
            }
        }
    }
    if entries == 0 {
        return Err(malformed("it is empty".to_string()));
    }
    if signatures.is_empty() {
        let listed = versions.join(", ");
        return Err(Refusal::Unauthorized {
            reason: Reason::new(
                AuthCode::NoV1Signature,
                format!("no v1 signature in webhook-signature (only versions: {listed})"),
            )
            .with("versions", listed),
        });
    }
    Ok(signatures)
}
