//! Every way a delivery can fail, in one enum.
//!
//! An [`Error`] is what a webhook handler would answer with a non-2xx status.
//! Each variant knows three things a sender needs: its stable [`Error::kind`]
//! string, the [`Error::http_status`] a handler would send, and whether the
//! sender should [`Error::retryable`] the same delivery later.
//!
//! A *duplicate* is deliberately **not** here: it is a success
//! ([`crate::Outcome::Duplicate`]). And a lock timeout ([`Error::Busy`]) is
//! deliberately **not** a duplicate: not getting the lock proves nothing
//! about whether the event was processed before.

use serde::Serialize;

use crate::event::Field;
use crate::fault::Fault;

/// A failed delivery. Nothing the failed call tried to write was kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The input broke a validation rule. Fix the input; retrying the same
    /// bytes will fail the same way. HTTP 400.
    #[error("invalid {field}: {reason}")]
    InvalidInput { field: Field, reason: String },

    /// The same `(source, event_id)` was already applied with another
    /// payload. This is a contract violation by the sender, never a silent
    /// success. HTTP 422.
    #[error(
        "event ({event_source:?}, {event_id:?}) was already applied as account {stored_account_id}, \
         amount {stored_amount}; this delivery says account {account_id}, amount {amount}"
    )]
    PayloadConflict {
        event_source: String,
        event_id: String,
        stored_account_id: i64,
        stored_amount: i64,
        account_id: i64,
        amount: i64,
    },

    /// The event names an account that does not exist. The foreign key on
    /// `inbox.account_id` refused the row, so the inbox is unchanged. HTTP 422.
    #[error("account {account_id} does not exist")]
    UnknownAccount { account_id: i64 },

    /// The credit would take the balance past 2^53-1, the largest integer a
    /// JavaScript number holds exactly. Nothing was written. HTTP 422.
    #[error(
        "crediting {amount} to account {account_id} (balance {balance}) would pass \
         the balance limit {limit}"
    )]
    BalanceLimit {
        account_id: i64,
        balance: i64,
        amount: i64,
        limit: i64,
    },

    /// Another connection held the write lock longer than the busy timeout.
    /// Nothing was written and nothing is known about earlier deliveries:
    /// retry later. HTTP 503.
    #[error("the database is locked by another connection; nothing was written, retry later")]
    Busy,

    /// A fault point fired on purpose (teaching): the transaction was rolled
    /// back. HTTP 500, retry.
    #[error("simulated crash {fault}: the transaction was rolled back")]
    SimulatedCrash { fault: Fault },

    /// SQLite or the storage under it failed (disk full, I/O error, not an
    /// inbox-lab database, ...). HTTP 500, retry.
    #[error("storage error: {message}")]
    Storage { message: String },
}

impl Error {
    /// The stable, machine-readable name of this error.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::InvalidInput { .. } => "invalid_input",
            Error::PayloadConflict { .. } => "payload_conflict",
            Error::UnknownAccount { .. } => "unknown_account",
            Error::BalanceLimit { .. } => "balance_limit",
            Error::Busy => "busy",
            Error::SimulatedCrash { .. } => "simulated_crash",
            Error::Storage { .. } => "storage",
        }
    }

    /// The status a webhook handler would answer with.
    pub fn http_status(&self) -> u16 {
        match self {
            Error::InvalidInput { .. } => 400,
            Error::PayloadConflict { .. }
            | Error::UnknownAccount { .. }
            | Error::BalanceLimit { .. } => 422,
            Error::Busy => 503,
            Error::SimulatedCrash { .. } | Error::Storage { .. } => 500,
        }
    }

    /// Whether the sender should deliver the same event again later.
    /// Only temporary conditions are retryable; a 4xx means "fix the request".
    pub fn retryable(&self) -> bool {
        self.http_status() >= 500
    }

    /// Shorthand for [`Error::InvalidInput`].
    pub fn invalid(field: Field, reason: impl Into<String>) -> Self {
        Error::InvalidInput {
            field,
            reason: reason.into(),
        }
    }

    /// Shorthand for [`Error::Storage`].
    pub fn storage(message: impl Into<String>) -> Self {
        Error::Storage {
            message: message.into(),
        }
    }

    /// The JSON-ready description sent to senders (CLI, worker, page).
    pub fn report(&self) -> ErrorReport {
        ErrorReport {
            kind: self.kind(),
            message: self.to_string(),
            http_status: self.http_status(),
            retryable: self.retryable(),
            field: match self {
                Error::InvalidInput { field, .. } => Some(*field),
                _ => None,
            },
        }
    }
}

/// What a sender sees of an [`Error`]: `{kind, message, http_status,
/// retryable}` plus, for invalid input, the `field` at fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorReport {
    pub kind: &'static str,
    pub message: String,
    pub http_status: u16,
    pub retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<Field>,
}

/// Classifies SQLite failures that are not about one particular statement.
///
/// `SQLITE_BUSY`/`SQLITE_LOCKED` become [`Error::Busy`] — never a duplicate.
/// Everything else is [`Error::Storage`]; statement-specific meanings (such as
/// a foreign-key failure meaning "unknown account") are decided where the
/// statement runs, in [`crate::apply`].
impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        match err.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Error::Busy,
            Some(ErrorCode::DiskFull) => Error::storage(
                "the storage is full (database or disk full); the transaction was rolled back, \
                 retry after freeing space",
            ),
            _ => Error::storage(err.to_string()),
        }
    }
}
