//! A signing secret: `whsec_` and the base64 of the key.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::fields::SECRET;
use crate::core::error::{Error, Reason};

crate::core::error::code_enum! {
    /// The `code` of a refused secret (field `secret`, kind `invalid_input`).
    SecretCode {
        /// Not `whsec_` followed by the key. Params: none (the text is a secret).
        WrongPrefix => "wrong_prefix",
        /// The part after `whsec_` is not standard, padded base64. Params: `detail`.
        BadBase64 => "bad_base64",
        /// The key is empty. Params: none.
        EmptyKey => "empty_key",
        /// Fewer bytes than the specification allows. Params: `bytes`, `min`.
        KeyTooShort => "key_too_short",
        /// More bytes than the specification allows. Params: `bytes`, `max`.
        KeyTooLong => "key_too_long",
    }
}

/// A symmetric signing key, valid by construction: 24 to 64 bytes, as the
/// Standard Webhooks specification requires ("between 24 bytes (192 bits)
/// and 64 bytes (512 bits)").
///
/// Written as `whsec_<base64 of the key>` ([`Secret::parse`],
/// [`Secret::to_whsec`]). `Debug` never shows the key.
///
/// # Example
/// ```
/// use inbox_lab::labs::webhooks::Secret;
/// let s = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
/// assert_eq!(s.key_len(), 24);
/// assert_eq!(s.to_whsec(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
/// assert!(Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_err());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    key: Vec<u8>,
}

impl Secret {
    /// What every secret's text starts with.
    const PREFIX: &'static str = "whsec_";
    /// The shortest key, in bytes.
    pub(crate) const MIN_BYTES: usize = 24;
    /// The longest key, in bytes.
    pub(crate) const MAX_BYTES: usize = 64;

    /// Reads `whsec_<base64>`: the key is the base64-decoded part after the
    /// prefix (standard alphabet, padded).
    ///
    /// # Errors
    /// `invalid_input` for field `secret`: [`SecretCode::WrongPrefix`],
    /// [`SecretCode::BadBase64`], then the key's length
    /// ([`Secret::from_bytes`]).
    pub fn parse(text: &str) -> Result<Secret, Error> {
        let Some(encoded) = text.strip_prefix(Secret::PREFIX) else {
            return Err(Error::refused(
                SECRET,
                Reason::new(
                    SecretCode::WrongPrefix,
                    "must start with \"whsec_\", followed by the key in base64",
                ),
            ));
        };
        let key = STANDARD.decode(encoded).map_err(|e| {
            Error::refused(
                SECRET,
                Reason::new(
                    SecretCode::BadBase64,
                    format!("the part after \"whsec_\" is not base64: {e}"),
                )
                .with("detail", e),
            )
        })?;
        Secret::from_bytes(&key)
    }

    /// A secret with this key (the page generates the bytes).
    ///
    /// # Errors
    /// `invalid_input` for field `secret`: [`SecretCode::EmptyKey`],
    /// [`SecretCode::KeyTooShort`] (under `Secret::MIN_BYTES`),
    /// [`SecretCode::KeyTooLong`] (over `Secret::MAX_BYTES`).
    pub fn from_bytes(key: &[u8]) -> Result<Secret, Error> {
        let (bytes, min, max) = (key.len(), Secret::MIN_BYTES, Secret::MAX_BYTES);
        let reason = if key.is_empty() {
            Reason::new(SecretCode::EmptyKey, "the key is empty")
        } else if bytes < min {
            Reason::new(
                SecretCode::KeyTooShort,
                format!("the key is {bytes} bytes; at least {min} are required"),
            )
            .with("bytes", bytes)
            .with("min", min)
        } else if bytes > max {
            Reason::new(
                SecretCode::KeyTooLong,
                format!("the key is {bytes} bytes; at most {max} are allowed"),
            )
            .with("bytes", bytes)
            .with("max", max)
        } else {
            return Ok(Secret { key: key.to_vec() });
        };
        Err(Error::refused(SECRET, reason))
    }

    /// The text form, `whsec_<base64>`, as [`Secret::parse`] reads it.
    pub fn to_whsec(&self) -> String {
        format!("{}{}", Secret::PREFIX, STANDARD.encode(&self.key))
    }

    /// The key's length in bytes.
    pub fn key_len(&self) -> usize {
        self.key.len()
    }

    /// The key itself, for the HMAC.
    pub(super) fn key(&self) -> &[u8] {
        &self.key
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({} bytes, redacted)", self.key.len())
    }
}
