//! Why a signed webhook was refused, with the HTTP status a receiver sends.

use crate::core::error::{Error, ErrorReport, Meta, Params, Reason};
use crate::core::event::Field;

crate::core::error::code_enum! {
    /// The `code` of an `unauthorized` refusal (HTTP 401): the delivery is
    /// not proven to come from the source it is addressed to.
    AuthCode {
        /// No `webhook-signature` header. Params: none.
        MissingSignature => "missing_signature",
        /// A `webhook-signature` header that is empty, has an entry without
        /// a comma, or a `v1` entry that is not base64. Params: `detail`.
        MalformedSignature => "malformed_signature",
        /// Only signatures of other versions (`v1a,...`): none to check.
        /// Params: `versions`.
        NoV1Signature => "no_v1_signature",
        /// No secret is configured for the URL's source. Params: `source` (quoted).
        UnknownSource => "unknown_source",
        /// The timestamp is older than the tolerance allows (a replay, or a
        /// very late retry; a sender re-signs each attempt). Params:
        /// `timestamp`, `now`, `tolerance`.
        StaleTimestamp => "stale_timestamp",
        /// The timestamp is further ahead than the tolerance allows.
        /// Params: `timestamp`, `now`, `tolerance`.
        FutureTimestamp => "future_timestamp",
        /// No `v1` signature matches any secret of the source. Params:
        /// `source` (quoted), `signatures`, `secrets`.
        SignatureMismatch => "signature_mismatch",
    }
}

/// A signed webhook refused before delivery.
///
/// | case | HTTP | kind / code |
/// |---|---|---|
/// | body over `super::MAX_BODY_BYTES` | 413 | `payload_too_large/body_too_large` |
/// | missing `webhook-signature` | 401 | `unauthorized/missing_signature` |
/// | empty, no comma, bad base64 | 401 | `unauthorized/malformed_signature` |
/// | only non-`v1` signatures | 401 | `unauthorized/no_v1_signature` |
/// | no secret for the source | 401 | `unauthorized/unknown_source` |
/// | timestamp too old / too far ahead | 401 | `unauthorized/stale_timestamp`, `future_timestamp` |
/// | no signature matches | 401 | `unauthorized/signature_mismatch` |
/// | missing id or timestamp header | 400 | `invalid_input/missing_field` |
/// | timestamp not a canonical integer | 400 | `invalid_input/empty`, `not_canonical_integer`, `out_of_range` |
/// | source or id breaks a key rule | 400 | `invalid_input/empty`, `whitespace_only`, `too_long`, `control_char`, `invisible_char` |
/// | body not the expected JSON | 400 | `invalid_input/not_json`, `not_object`, `unexpected_field`, `duplicate_field`, `missing_field`, `wrong_type`, `decimal_or_exponent`, `out_of_range` |
///
/// None is retryable: the same bytes are refused the same way (a sender's
/// retry is a new attempt with a fresh timestamp and signature).
///
/// Why not [`Error`]: `Error` is what a delivery answers, and every
/// variant's status is fixed by what happened to the *delivery* (400 for
/// input, 422, 409, 5xx). 401 and 413 happen before any delivery, and
/// adding them to the core's enum would make the core name a lab's
/// concern. So the 400s reuse the core's `invalid_input` (its codes, its
/// `field`), and the two new kinds live here, reported in the same wire
/// shape ([`ErrorReport`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The request is not authenticated. HTTP 401.
    #[error("unauthorized: {reason}")]
    Unauthorized { reason: Reason },
    /// The body is larger than the limit. HTTP 413.
    #[error("the body is {bytes} bytes; at most {max} are accepted")]
    TooLarge { bytes: usize, max: usize },
    /// A header, the source or the body broke a rule. HTTP 400.
    #[error("invalid {field}: {reason}")]
    Invalid { field: Field, reason: Reason },
}

impl Refusal {
    /// The kind of a 401.
    pub(crate) const UNAUTHORIZED: &'static str = "unauthorized";
    /// The kind of a 413.
    pub(crate) const TOO_LARGE: &'static str = "payload_too_large";
    /// The code of a 413.
    pub(crate) const BODY_TOO_LARGE: &'static str = "body_too_large";

    /// Kind, code, HTTP status and "retry?" (never: the same bytes are
    /// refused the same way), from one table.
    pub fn meta(&self) -> Meta {
        match self {
            Refusal::Unauthorized { reason } => {
                Meta::new(Refusal::UNAUTHORIZED, reason.code(), 401, false)
            }
            Refusal::TooLarge { .. } => {
                Meta::new(Refusal::TOO_LARGE, Refusal::BODY_TOO_LARGE, 413, false)
            }
            Refusal::Invalid { reason, .. } => {
                Meta::new("invalid_input", reason.code(), 400, false)
            }
        }
    }

    /// The stable, machine-readable name of this refusal.
    pub fn kind(&self) -> &'static str {
        self.meta().kind
    }

    /// Why, within the kind.
    pub fn code(&self) -> &'static str {
        self.meta().code
    }

    /// The status a receiver answers with.
    pub fn http_status(&self) -> u16 {
        self.meta().http_status
    }

    /// The values the message mentions, by name.
    pub fn params(&self) -> Params {
        match self {
            Refusal::Unauthorized { reason } | Refusal::Invalid { reason, .. } => {
                reason.params().clone()
            }
            Refusal::TooLarge { bytes, max } => {
                Params::from([("bytes", bytes.to_string()), ("max", max.to_string())])
            }
        }
    }

    /// The input at fault, for a 400.
    pub fn field(&self) -> Option<Field> {
        match self {
            Refusal::Invalid { field, .. } => Some(*field),
            Refusal::Unauthorized { .. } | Refusal::TooLarge { .. } => None,
        }
    }

    /// The wire form, the same shape as [`Error::report`]:
    /// `{kind, code, message, http_status, retryable, params, field?}`.
    pub fn report(&self) -> ErrorReport {
        self.meta()
            .report(self.to_string(), self.field(), self.params())
    }
}

/// A core refusal (`invalid_input`) becomes a 400 naming the same field,
/// with `rename` applied (the core's `event_id` is the `webhook-id` header,
/// its `event` the body). Any other error — none of the checks used here
/// makes one — is kept as a 400 with its message.
pub(super) fn invalid(err: Error, rename: impl Fn(Field) -> Field) -> Refusal {
    match err {
        Error::InvalidInput { field, reason } => Refusal::Invalid {
            field: rename(field),
            reason,
        },
        other => Refusal::Invalid {
            field: rename(Field::EVENT),
            reason: Reason::from(other.to_string()),
        },
    }
}
