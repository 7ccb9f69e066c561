//! How a call fails, in one enum.
//!
//! An [`Error`] is what a webhook handler would answer with a non-2xx status:
//! a delivery's failures (conflict, unknown account, balance limit, busy,
//! storage) and input refused before any SQL ([`Error::InvalidInput`]). The
//! labs built on the core fail the same way, with their own refusal codes
//! under `invalid_input` and their own crash points
//! ([`Error::SimulatedCrash`] carries only a point's name).
//! Each variant knows three things a sender needs: its stable [`Error::kind`]
//! string, the [`Error::http_status`] a handler would send, and whether the
//! sender should [`Error::retryable`] the same delivery later.
//!
//! A *duplicate* is deliberately **not** here: it is a success
//! ([`crate::Outcome::Duplicate`]). And a lock timeout ([`Error::Busy`]) is
//! deliberately **not** a duplicate: not getting the lock proves nothing
//! about whether the event was processed before.
//!
//! ## One reason, two languages
//!
//! The English sentence ([`Error`]'s `Display`, the report's `message`) is
//! for the CLI, logs and tests. A page that speaks English and Russian needs
//! something stable to translate instead of parsing English, so every report
//! also carries:
//!
//! * `code` — why, as a `snake_case` name unique within its `kind`
//!   (`invalid_input`/`too_long`, `storage`/`full`, ...), see [`codes`]
//!   (the core's) and `labs::error_codes` (with every lab's);
//! * `params` — the values the sentence mentions, as strings
//!   (`{"bytes": "256", "max": "255"}`).
//!
//! The page shows `t("error.<kind>.<code>", params)` (`www/lib/errors.js`) and
//! falls back to `message`. `tests/e2e/unit-i18n.test.mjs` checks that every
//! pair [`codes`] lists has an English and a Russian text.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::core::event::Field;

/// The values a message mentions, by name, as display strings. Strings
/// (not numbers) because some of them do not fit a JavaScript number and
/// all of them are only ever shown.
pub type Params = BTreeMap<&'static str, String>;

/// A failed delivery. Nothing the failed call tried to write was kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The input broke a validation rule. Fix the input; retrying the same
    /// bytes will fail the same way. HTTP 400.
    #[error("invalid {field}: {reason}")]
    InvalidInput { field: Field, reason: Reason },

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

    /// The event was registered before, with the same payload, but without a
    /// stored first result: only the race lab's mistaken handlers write such
    /// rows. Whether it was credited is unknown, so there is no answer to
    /// replay; the same delivery will meet the same row. HTTP 409, not
    /// retryable.
    #[error(
        "event ({event_source:?}, {event_id:?}) was registered without a stored result (by a \
         mistaken handler); whether it was credited is unknown, so there is no first answer to replay"
    )]
    NoStoredResult {
        event_source: String,
        event_id: String,
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

    /// A crash point fired on purpose (teaching). `point` is its stable
    /// name: one of the handler's [`crate::Fault`]s, step mode's "throw"
    /// ([`crate::Delivery::THROWN`]), or a lab's own point; whether the
    /// transaction was still open when it fired is documented with each
    /// point. HTTP 500, retry.
    #[error("simulated crash {point}: the handler died here; whatever it had not yet committed is undone")]
    SimulatedCrash { point: &'static str },

    /// SQLite or the storage under it failed (disk full, I/O error, not an
    /// inbox-lab database, ...). `code` says which, `message` the details.
    /// HTTP 500; retryable only when `code` is temporary ([`StorageCode::retryable`]).
    #[error("storage error: {}", storage_text(*code, message))]
    Storage { code: StorageCode, message: String },
}

/// Why an input was refused: a stable code (the core's [`InvalidCode`], or
/// a lab's own), the values the sentence mentions, and the English sentence
/// itself.
///
/// # Example
/// ```
/// use inbox_lab::core::error::{InvalidCode, Reason};
/// let r = Reason::new(InvalidCode::TooLong, "is 300 bytes of UTF-8; at most 255 are allowed")
///     .with("bytes", 300)
///     .with("max", 255);
/// assert_eq!(r.code(), "too_long");
/// assert_eq!(r.params()["bytes"], "300");
/// assert_eq!(r.to_string(), "is 300 bytes of UTF-8; at most 255 are allowed");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text}")]
pub struct Reason {
    code: &'static str,
    params: Params,
    text: String,
}

impl Reason {
    pub fn new(code: impl Code, text: impl Into<String>) -> Reason {
        Reason {
            code: code.as_str(),
            params: Params::new(),
            text: text.into(),
        }
    }

    /// Adds one value the sentence mentions.
    #[must_use]
    pub fn with(mut self, name: &'static str, value: impl fmt::Display) -> Reason {
        self.params.insert(name, value.to_string());
        self
    }

    /// The code's stable wire name.
    pub fn code(&self) -> &'static str {
        self.code
    }

    pub fn params(&self) -> &Params {
        &self.params
    }
}

/// A sentence without a code of its own (from code that only has English to
/// say): [`InvalidCode::Other`], with the sentence as the `text` param, so a
/// translation can at least frame it.
impl From<String> for Reason {
    fn from(text: String) -> Reason {
        Reason::new(InvalidCode::Other, text.clone()).with("text", text)
    }
}

impl From<&str> for Reason {
    fn from(text: &str) -> Reason {
        Reason::from(text.to_string())
    }
}

/// A refusal code: a `snake_case` name, stable on the wire and the last
/// part of the translation key `error.<kind>.<code>` (`invalid_input` for most). The core's are
/// [`InvalidCode`]; each lab defines its own enum with the crate's `code_enum!`
/// macro, which implements this trait.
pub trait Code: Copy {
    /// The stable wire name.
    fn as_str(self) -> &'static str;
}

/// Defines a code enum with its wire name and the list of all its values
/// (the crate's `named!`), and implements [`Code`] for it.
macro_rules! code_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)* }) => {
        $crate::core::named::named! {
            $(#[$meta])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ::serde::Serialize)]
            #[serde(rename_all = "snake_case")]
            pub enum $name("code") {
                $($(#[$vmeta])* $variant => $text,)*
            }
        }

        impl $crate::core::error::Code for $name {
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }
        }
    };
}
// Used by the labs (and only when they are built).
#[cfg_attr(not(feature = "labs"), allow(unused_imports))]
pub(crate) use code_enum;

code_enum! {
    /// The `code` of an `invalid_input` report: which rule the input broke.
    InvalidCode {
        /// `""`. Params: none.
        Empty => "empty",
        /// Only whitespace (`"  "`, `"\u{3000}"`). Keys are never trimmed.
        WhitespaceOnly => "whitespace_only",
        /// More than 255 bytes of UTF-8. Params: `bytes`, `max`.
        TooLong => "too_long",
        /// A control character (NUL, newline, DEL, C1, or a bidirectional embedding, override or
        /// isolate). Params: `char` (`U+0000`), `at` (byte).
        ControlChar => "control_char",
        /// A default-ignorable character, which shows as nothing (U+200B,
        /// U+FEFF, U+3164, tag characters, …). Params: `char`, `at` (byte).
        InvisibleChar => "invisible_char",
        /// A JavaScript string with an unpaired surrogate: it has no UTF-8 form.
        LoneSurrogate => "lone_surrogate",
        /// Text that is not a canonical base-10 integer (`"05"`, `"1.5"`, `"+5"`). Params: `got`.
        NotCanonicalInteger => "not_canonical_integer",
        /// A JavaScript number that is not whole (`1.5`, `NaN`, `Infinity`). Params: `got`.
        NotWholeNumber => "not_whole_number",
        /// A JSON number written with a decimal point or exponent (`500.0`, `5e2`). Params: `got`.
        DecimalOrExponent => "decimal_or_exponent",
        /// A whole number outside the field's range. Params: `min`, `max`, `got`.
        OutOfRange => "out_of_range",
        /// A value of the wrong type. Params: `expected`, `got` (type names, see [`crate::core::event::ValueType`]).
        WrongType => "wrong_type",
        /// A string where a number belongs (`"500"` from JavaScript). Params: `value` (quoted).
        StringForNumber => "string_for_number",
        /// A required field is absent.
        MissingField => "missing_field",
        /// A field the event does not have. Params: `name` (quoted).
        UnexpectedField => "unexpected_field",
        /// A JSON field given twice (`{"amount": 1, "amount": 2}`). Params: `name` (quoted).
        DuplicateField => "duplicate_field",
        /// Pasted text that is not JSON. Params: `detail`, `line`, `column`.
        NotJson => "not_json",
        /// JSON or a JavaScript value that is not an object. Params: `got` (a type name).
        NotObject => "not_object",
        /// A name that is not one of the allowed ones (a fault point). Params: `got` (quoted), `expected`.
        UnknownValue => "unknown_value",
        // Stored rows, read with typed checks (`core::stored`): why a stored
        // database (health) or an imported file (the tools lab) is refused.
        /// SQLite cannot read the file's rows. Params: `detail` (SQLite's words).
        FileUnreadable => "file_unreadable",
        /// The file lacks one of inbox-lab's tables or columns. Params: `detail`.
        SchemaDiffers => "schema_differs",
        /// A stored receipt number above the receipt counter. Params: `seq`, `last_seq`.
        ReceiptAboveCounter => "receipt_above_counter",
        /// A stored value of the wrong type or range. Params: `row`, `table`,
        /// `column`, `detail`.
        RowInvalid => "row_invalid",
        /// Rows that contradict each other or inbox-lab's constraints. Params: `detail`.
        Inconsistent => "inconsistent",
        Other => "other",
    }
}

code_enum! {
    /// The `code` of a `storage` report: what failed underneath. Whether a
    /// retry can succeed depends on it, see [`StorageCode::retryable`].
    StorageCode {
        /// The storage is full: SQLITE_FULL, which OPFS quota errors become.
        /// Retryable: it succeeds once space is freed.
        Full => "full",
        /// A read, write, sync or open of the storage failed (SQLITE_IOERR,
        /// SQLITE_CANTOPEN, SQLITE_PROTOCOL, SQLITE_READONLY). Retryable.
        Io => "io",
        /// SQLite ran out of memory (SQLITE_NOMEM). Retryable.
        NoMemory => "no_memory",
        /// The browser's origin private file system could not be used.
        /// Retryable: another tab may release it.
        OpfsUnavailable => "opfs_unavailable",
        /// The file is damaged (SQLITE_CORRUPT, SQLITE_NOTADB). Not
        /// retryable: the same bytes fail the same way; export it as is, or
        /// reset.
        Corrupt => "corrupt",
        /// The stored database cannot be used by this build: not inbox-lab's,
        /// a newer schema, a schema that differs from inbox-lab's, a row of
        /// the wrong type, receipt numbers exhausted. Not retryable.
        Unusable => "unusable",
        /// Anything else; `message` says what. Not retryable: nothing says a
        /// retry would go differently.
        Other => "other",
    }
}

impl StorageCode {
    /// Whether the same request can succeed later without anyone changing
    /// the stored data. The table in docs/errors.md lists each.
    pub fn retryable(self) -> bool {
        match self {
            StorageCode::Full
            | StorageCode::Io
            | StorageCode::NoMemory
            | StorageCode::OpfsUnavailable => true,
            StorageCode::Corrupt | StorageCode::Unusable | StorageCode::Other => false,
        }
    }

    /// How a SQLite failure is classified (see `From<rusqlite::Error>`);
    /// `None` for a lock conflict, which is [`Error::Busy`].
    pub fn of(err: &rusqlite::Error) -> Option<StorageCode> {
        use rusqlite::ErrorCode;
        Some(match err {
            // A stored value our code cannot read as the type it wrote.
            rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::Utf8Error(..)
            | rusqlite::Error::QueryReturnedNoRows => StorageCode::Unusable,
            _ => match err.sqlite_error_code() {
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => return None,
                Some(ErrorCode::DiskFull) => StorageCode::Full,
                Some(
                    ErrorCode::SystemIoFailure
                    | ErrorCode::CannotOpen
                    | ErrorCode::FileLockingProtocolFailed
                    | ErrorCode::ReadOnly,
                ) => StorageCode::Io,
                Some(ErrorCode::OutOfMemory) => StorageCode::NoMemory,
                Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StorageCode::Corrupt,
                Some(
                    ErrorCode::ConstraintViolation
                    | ErrorCode::TypeMismatch
                    | ErrorCode::TooBig
                    | ErrorCode::Unknown,
                ) => StorageCode::Unusable,
                _ => StorageCode::Other,
            },
        })
    }
}

/// The English detail of a storage error, by code.
fn storage_text(code: StorageCode, message: &str) -> String {
    match code {
        StorageCode::Full => "the storage is full (database or disk full); the transaction was \
                              rolled back, retry after freeing space"
            .to_string(),
        StorageCode::OpfsUnavailable => format!("OPFS storage is unavailable: {message}"),
        StorageCode::NoMemory => format!("out of memory ({message})"),
        StorageCode::Unusable => format!("the stored database cannot be used: {message}"),
        StorageCode::Corrupt | StorageCode::Io | StorageCode::Other => message.to_string(),
    }
}

/// What a sender reads of a failure besides its sentence: written once per
/// variant, in [`Error::meta`] (and `Refusal::meta` in the webhooks lab).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// The stable, machine-readable name of the failure.
    pub kind: &'static str,
    /// Why, within the kind: stable, for programs and translations.
    pub code: &'static str,
    /// The status a webhook handler would answer with.
    pub http_status: u16,
    /// Whether the sender should deliver the same event again later.
    pub retryable: bool,
}

impl Meta {
    pub const fn new(
        kind: &'static str,
        code: &'static str,
        http_status: u16,
        retryable: bool,
    ) -> Meta {
        Meta {
            kind,
            code,
            http_status,
            retryable,
        }
    }

    /// The wire form: this, the English sentence, the field at fault and the
    /// values the sentence mentions.
    pub fn report(self, message: String, field: Option<Field>, params: Params) -> ErrorReport {
        ErrorReport {
            kind: self.kind,
            code: self.code,
            message,
            http_status: self.http_status,
            retryable: self.retryable,
            field,
            params,
        }
    }
}

// The kinds with one code each. A 4xx means "fix the request"; of the 5xx, a
// lock timeout and a simulated crash pass, so they are retryable.
const PAYLOAD_CONFLICT: Meta = Meta::new("payload_conflict", "payload_differs", 422, false);
const NO_STORED_RESULT: Meta = Meta::new("no_stored_result", "no_receipt", 409, false);
const UNKNOWN_ACCOUNT: Meta = Meta::new("unknown_account", "no_such_account", 422, false);
const BALANCE_LIMIT: Meta = Meta::new("balance_limit", "over_limit", 422, false);
const BUSY: Meta = Meta::new("busy", "locked", 503, true);
const SIMULATED_CRASH: Meta = Meta::new("simulated_crash", "fault", 500, true);

/// Every `(kind, code)` pair a report can carry, for translation checks.
///
/// # Example
/// ```
/// assert!(inbox_lab::core::error::codes().contains(&("storage", "full")));
/// ```
pub fn codes() -> Vec<(&'static str, &'static str)> {
    let fixed = [
        PAYLOAD_CONFLICT,
        NO_STORED_RESULT,
        UNKNOWN_ACCOUNT,
        BALANCE_LIMIT,
        BUSY,
        SIMULATED_CRASH,
    ];
    let invalid = InvalidCode::ALL.map(|c| ("invalid_input", c.as_str()));
    let storage = StorageCode::ALL.map(|c| ("storage", c.as_str()));
    invalid
        .into_iter()
        .chain(fixed.map(|m| (m.kind, m.code)))
        .chain(storage)
        .collect()
}

impl Error {
    /// Kind, code, HTTP status and "retry?" of this error, from one table:
    /// storage failures are retryable only when they are temporary
    /// ([`StorageCode::retryable`]), as a damaged or unusable database
    /// fails the same way every time.
    pub fn meta(&self) -> Meta {
        match self {
            Error::InvalidInput { reason, .. } => {
                Meta::new("invalid_input", reason.code, 400, false)
            }
            Error::PayloadConflict { .. } => PAYLOAD_CONFLICT,
            Error::NoStoredResult { .. } => NO_STORED_RESULT,
            Error::UnknownAccount { .. } => UNKNOWN_ACCOUNT,
            Error::BalanceLimit { .. } => BALANCE_LIMIT,
            Error::Busy => BUSY,
            Error::SimulatedCrash { .. } => SIMULATED_CRASH,
            Error::Storage { code, .. } => {
                Meta::new("storage", code.as_str(), 500, code.retryable())
            }
        }
    }

    /// The stable, machine-readable name of this error.
    pub fn kind(&self) -> &'static str {
        self.meta().kind
    }

    /// Why, within the kind: stable, for programs and translations.
    pub fn code(&self) -> &'static str {
        self.meta().code
    }

    /// The status a webhook handler would answer with.
    pub fn http_status(&self) -> u16 {
        self.meta().http_status
    }

    /// Whether the sender should deliver the same event again later: only
    /// when a retry can succeed (see [`Error::meta`]).
    pub fn retryable(&self) -> bool {
        self.meta().retryable
    }

    /// The values the message mentions, by name.
    pub fn params(&self) -> Params {
        match self {
            Error::InvalidInput { reason, .. } => reason.params.clone(),
            Error::PayloadConflict {
                event_source,
                event_id,
                stored_account_id,
                stored_amount,
                account_id,
                amount,
            } => Params::from([
                ("event_source", format!("{event_source:?}")),
                ("event_id", format!("{event_id:?}")),
                ("stored_account_id", stored_account_id.to_string()),
                ("stored_amount", stored_amount.to_string()),
                ("account_id", account_id.to_string()),
                ("amount", amount.to_string()),
            ]),
            Error::NoStoredResult {
                event_source,
                event_id,
            } => Params::from([
                ("event_source", format!("{event_source:?}")),
                ("event_id", format!("{event_id:?}")),
            ]),
            Error::UnknownAccount { account_id } => {
                Params::from([("account_id", account_id.to_string())])
            }
            Error::BalanceLimit {
                account_id,
                balance,
                amount,
                limit,
            } => Params::from([
                ("account_id", account_id.to_string()),
                ("balance", balance.to_string()),
                ("amount", amount.to_string()),
                ("limit", limit.to_string()),
            ]),
            Error::Busy
            | Error::Storage {
                code: StorageCode::Full,
                ..
            } => Params::new(),
            Error::SimulatedCrash { point } => Params::from([("fault", point.to_string())]),
            Error::Storage { message, .. } => Params::from([("detail", message.clone())]),
        }
    }

    /// Shorthand for [`Error::InvalidInput`] with only an English sentence
    /// ([`InvalidCode::Other`]). Prefer [`Error::refused`] with a coded
    /// [`Reason`], which the page can say in Russian too.
    pub fn invalid(field: Field, reason: impl Into<String>) -> Self {
        Error::refused(field, Reason::from(reason.into()))
    }

    /// [`Error::InvalidInput`] for a coded [`Reason`].
    pub fn refused(field: Field, reason: Reason) -> Self {
        Error::InvalidInput { field, reason }
    }

    /// [`Error::PayloadConflict`]: `event` arrived for a key already stored
    /// with `stored` = `(account_id, amount)`.
    pub fn payload_conflict(event: &crate::core::Event, stored: (i64, i64)) -> Self {
        Error::PayloadConflict {
            event_source: event.source().to_owned(),
            event_id: event.event_id().to_owned(),
            stored_account_id: stored.0,
            stored_amount: stored.1,
            account_id: event.account_id(),
            amount: event.amount(),
        }
    }

    /// Shorthand for [`Error::Storage`] with [`StorageCode::Other`].
    pub fn storage(message: impl Into<String>) -> Self {
        Error::storage_with(StorageCode::Other, message)
    }

    /// Shorthand for [`Error::Storage`] with a code.
    pub fn storage_with(code: StorageCode, message: impl Into<String>) -> Self {
        Error::Storage {
            code,
            message: message.into(),
        }
    }

    /// The JSON-ready description sent to senders (CLI, worker, page).
    pub fn report(&self) -> ErrorReport {
        let field = match self {
            Error::InvalidInput { field, .. } => Some(*field),
            _ => None,
        };
        self.meta().report(self.to_string(), field, self.params())
    }
}

/// What a sender sees of an [`Error`]: `{kind, code, message, http_status,
/// retryable, params}` plus, for invalid input, the `field` at fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorReport {
    pub kind: &'static str,
    pub code: &'static str,
    pub message: String,
    pub http_status: u16,
    pub retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<Field>,
    pub params: Params,
}

/// Classifies SQLite failures that are not about one particular statement.
///
/// `SQLITE_BUSY`/`SQLITE_LOCKED` become [`Error::Busy`] — never a duplicate.
/// Everything else is [`Error::Storage`] with the [`StorageCode`] that says
/// whether a retry can help: full (an OPFS quota error arrives as
/// `SQLITE_FULL`), I/O, out of memory, corrupt, and "unusable" for what our
/// own statements can only meet in data they did not write (a constraint
/// failing, a missing table, a stored value of the wrong type).
/// Statement-specific meanings (such as a foreign-key failure meaning
/// "unknown account") are decided where the statement runs, in
/// [`crate::apply()`].
impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Self {
        match StorageCode::of(&err) {
            Some(code) => Error::storage_with(code, err.to_string()),
            None => Error::Busy,
        }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    #[test]
    fn wire_names_match_serde_and_are_unique_per_kind() {
        for code in InvalidCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
        for code in StorageCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
        let all = codes();
        let unique: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len());
    }

    #[test]
    fn every_error_reports_a_listed_code() {
        let samples = [
            Error::invalid(Field::AMOUNT, "anything"),
            Error::PayloadConflict {
                event_source: "s".into(),
                event_id: "e".into(),
                stored_account_id: 1,
                stored_amount: 2,
                account_id: 1,
                amount: 3,
            },
            Error::UnknownAccount { account_id: 42 },
            Error::NoStoredResult {
                event_source: "s".into(),
                event_id: "e".into(),
            },
            Error::BalanceLimit {
                account_id: 1,
                balance: 2,
                amount: 3,
                limit: 4,
            },
            Error::Busy,
            Error::SimulatedCrash {
                point: crate::Fault::AfterInsert.as_str(),
            },
            Error::storage("boom"),
            Error::storage_with(StorageCode::Full, "database or disk is full"),
        ];
        for err in samples {
            let report = err.report();
            assert!(
                codes().contains(&(report.kind, report.code)),
                "{report:?} has an unlisted code"
            );
            // Every param is mentioned by the English sentence, so a
            // translation that uses the params says the same thing.
            for value in report.params.values() {
                assert!(report.message.contains(value.as_str()), "{report:?}");
            }
        }
    }

    #[test]
    fn full_storage_has_a_clear_message_and_no_raw_detail() {
        let err = Error::storage_with(StorageCode::Full, "database or disk is full");
        let report = err.report();
        assert_eq!((report.kind, report.code), ("storage", "full"));
        assert!(report.message.contains("the storage is full"));
        assert!(report.retryable);
        assert!(report.params.is_empty());
    }
}
