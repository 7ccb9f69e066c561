//! The validated event: "credit account A with N units", from sender S,
//! known to the sender as event E.
//!
//! Invariant: an [`Event`] value is valid by construction. Every rule is
//! checked once, in the constructors, before any SQL runs; the rest of the
//! crate never re-checks. The rules:
//!
//! * `source` and `event_id`: not blank (not empty, not only whitespace), at
//!   most [`MAX_KEY_BYTES`] bytes of UTF-8, no control characters. They are
//!   kept and compared **byte for byte**: never trimmed, never normalised, so
//!   `"evt-1"` and `"evt-1 "` are two different events.
//! * `account_id`: an integer in `1..=`[`MAX_ACCOUNT_ID`] (2^53-1, the largest
//!   integer a JavaScript number holds exactly).
//! * `amount`: an integer in `1..=`[`MAX_AMOUNT`] (10^9).
//!
//! Where numbers come from decides what counts as an integer:
//! * text (CLI arguments, JSON text): only canonical base-10 ASCII —
//!   `1.5`, `1e3`, `500.0`, `+5`, `" 5"`, `05`, `0x10` are refused;
//! * JavaScript values: only integral numbers — see [`integer_from_js_number`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Longest `source` or `event_id`, in bytes of UTF-8.
pub const MAX_KEY_BYTES: usize = 255;
/// Largest account id: 2^53-1 (`Number.MAX_SAFE_INTEGER`).
pub const MAX_ACCOUNT_ID: i64 = (1 << 53) - 1;
/// Largest amount of one credit.
pub const MAX_AMOUNT: i64 = 1_000_000_000;

/// One input field of an event, named as in the wire formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Source,
    EventId,
    AccountId,
    Amount,
    /// The event as a whole (e.g. pasted JSON that is not an object).
    Event,
    /// The fault point requested with a delivery.
    Fault,
    /// A statement typed into the read-only SQL console.
    Sql,
    /// A database file offered for import.
    File,
    /// The handler chosen in the race lab.
    Handler,
    /// How many concurrent deliveries the race lab runs.
    Deliveries,
}

impl Field {
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Source => "source",
            Field::EventId => "event_id",
            Field::AccountId => "account_id",
            Field::Amount => "amount",
            Field::Event => "event",
            Field::Fault => "fault",
            Field::Sql => "sql",
            Field::File => "file",
            Field::Handler => "handler",
            Field::Deliveries => "deliveries",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A valid event. Construct with [`Event::new`], [`Event::from_text`] or
/// [`Event::from_json`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Event {
    source: String,
    event_id: String,
    account_id: i64,
    amount: i64,
}

impl Event {
    /// Validates already-typed values.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first field that breaks a rule.
    ///
    /// # Example
    /// ```
    /// use inbox_lab::Event;
    /// let e = Event::new("provider-a", "evt-1", 1, 500).unwrap();
    /// assert_eq!(e.amount(), 500);
    /// assert!(Event::new("provider-a", "evt-1", 1, 0).is_err());
    /// assert!(Event::new(" ", "evt-1", 1, 5).is_err());
    /// ```
    pub fn new(
        source: impl Into<String>,
        event_id: impl Into<String>,
        account_id: i64,
        amount: i64,
    ) -> Result<Event, Error> {
        let source = source.into();
        let event_id = event_id.into();
        check_key(Field::Source, &source)?;
        check_key(Field::EventId, &event_id)?;
        check_range(Field::AccountId, account_id, 1, MAX_ACCOUNT_ID)?;
        check_range(Field::Amount, amount, 1, MAX_AMOUNT)?;
        Ok(Event {
            source,
            event_id,
            account_id,
            amount,
        })
    }

    /// Validates values that arrive as text, such as CLI arguments: the
    /// numbers must be canonical base-10 integers.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the field.
    ///
    /// # Example
    /// ```
    /// use inbox_lab::Event;
    /// assert!(Event::from_text("provider-a", "evt-1", "1", "500").is_ok());
    /// assert!(Event::from_text("provider-a", "evt-1", "1", "500.0").is_err());
    /// ```
    pub fn from_text(
        source: &str,
        event_id: &str,
        account_id: &str,
        amount: &str,
    ) -> Result<Event, Error> {
        // Keys first, in field order, so the error names the first bad field.
        check_key(Field::Source, source)?;
        check_key(Field::EventId, event_id)?;
        let account_id = parse_integer(Field::AccountId, account_id)?;
        let amount = parse_integer(Field::Amount, amount)?;
        Event::new(source, event_id, account_id, amount)
    }

    /// Validates one event given as JSON text:
    /// `{"source": "...", "event_id": "...", "account_id": 1, "amount": 500}`.
    /// Exactly these four fields; numbers must be plain JSON integers (`500`,
    /// not `500.0`, `5e2` or `"500"`).
    ///
    /// # Errors
    /// [`Error::InvalidInput`]: not JSON, not an object, a missing or extra
    /// field, a wrong type, or a value that breaks a rule.
    pub fn from_json(text: &str) -> Result<Event, Error> {
        use serde_json::Value;
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::invalid(Field::Event, format!("not valid JSON: {e}")))?;
        let Value::Object(map) = value else {
            return Err(Error::invalid(
                Field::Event,
                "expected a JSON object with source, event_id, account_id and amount",
            ));
        };
        let known = ["source", "event_id", "account_id", "amount"];
        if let Some(extra) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(Error::invalid(
                Field::Event,
                format!(
                    "unexpected field {extra:?}: only source, event_id, account_id and amount are allowed"
                ),
            ));
        }
        let text_field = |field: Field| match map.get(field.as_str()) {
            None => Err(missing(field)),
            Some(Value::String(s)) => Ok(s.as_str()),
            Some(other) => Err(Error::invalid(
                field,
                format!("must be a string, got {}", json_type(other)),
            )),
        };
        let int_field = |field: Field| match map.get(field.as_str()) {
            None => Err(missing(field)),
            // serde_json keeps integers written without '.', 'e' or 'E' as
            // integers; `500.0` and `5e2` arrive as floats and are refused.
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {
                n.as_i64().ok_or_else(|| out_of_range(field))
            }
            Some(Value::Number(n)) => Err(Error::invalid(
                field,
                format!(
                    "must be a whole number written without a decimal point or exponent, got {n}"
                ),
            )),
            Some(other) => Err(Error::invalid(
                field,
                format!("must be a number, got {}", json_type(other)),
            )),
        };
        let source = text_field(Field::Source)?;
        let event_id = text_field(Field::EventId)?;
        let account_id = int_field(Field::AccountId)?;
        let amount = int_field(Field::Amount)?;
        Event::new(source, event_id, account_id, amount)
    }

    pub fn source(&self) -> &str {
        &self.source
    }
    pub fn event_id(&self) -> &str {
        &self.event_id
    }
    pub fn account_id(&self) -> i64 {
        self.account_id
    }
    pub fn amount(&self) -> i64 {
        self.amount
    }
}

/// Checks `source` / `event_id`. Never trims: the bytes given are the key.
fn check_key(field: Field, value: &str) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::invalid(field, "must not be empty"));
    }
    if value.chars().all(char::is_whitespace) {
        return Err(Error::invalid(field, "must not be only whitespace"));
    }
    if value.len() > MAX_KEY_BYTES {
        return Err(Error::invalid(
            field,
            format!(
                "is {} bytes of UTF-8; at most {MAX_KEY_BYTES} are allowed",
                value.len()
            ),
        ));
    }
    if let Some((at, c)) = value.char_indices().find(|(_, c)| c.is_control()) {
        return Err(Error::invalid(
            field,
            format!(
                "contains the control character U+{:04X} at byte {at}",
                u32::from(c)
            ),
        ));
    }
    Ok(())
}

/// Validates a user-supplied account id (for creating accounts) with the same
/// rule events use.
///
/// # Errors
/// [`Error::InvalidInput`] for `account_id`.
pub fn check_account_id(account_id: i64) -> Result<i64, Error> {
    check_range(Field::AccountId, account_id, 1, MAX_ACCOUNT_ID).map(|()| account_id)
}

fn check_range(field: Field, value: i64, min: i64, max: i64) -> Result<(), Error> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!("must be between {min} and {max}, got {value}"),
        ))
    }
}

/// Parses a canonical base-10 integer: `0`, or an optional `-` and digits
/// without a leading zero. Anything else (`+5`, `05`, ` 5`, `1.5`, `1e3`,
/// `0x10`, `true`, `NaN`, non-ASCII digits) is refused with a message that
/// says why. The range is checked by the caller.
///
/// # Errors
/// [`Error::InvalidInput`] for `field`.
pub fn parse_integer(field: Field, text: &str) -> Result<i64, Error> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    if !canonical {
        let reason = if text.is_empty() {
            "must not be empty".to_string()
        } else {
            format!(
                "must be a base-10 integer without sign, spaces, leading zeros, \
                 decimal point or exponent, got {text:?}"
            )
        };
        return Err(Error::invalid(field, reason));
    }
    text.parse::<i64>().map_err(|_| out_of_range(field))
}

/// Converts a JavaScript number to an integer, accepting only integral
/// values that JavaScript represents exactly (|n| ≤ 2^53-1). `1.5`, `NaN`,
/// `Infinity` and `1e21` are refused. The range is checked by the caller.
///
/// # Errors
/// [`Error::InvalidInput`] for `field`.
pub fn integer_from_js_number(field: Field, n: f64) -> Result<i64, Error> {
    const SAFE: f64 = MAX_ACCOUNT_ID as f64;
    if !n.is_finite() {
        return Err(Error::invalid(
            field,
            format!("must be a whole number, got {n}"),
        ));
    }
    if n.fract() != 0.0 {
        return Err(Error::invalid(
            field,
            format!("must be a whole number, got {n}"),
        ));
    }
    if n.abs() > SAFE {
        return Err(out_of_range(field));
    }
    // Exact: n is integral and within ±2^53-1.
    Ok(n as i64)
}

fn missing(field: Field) -> Error {
    Error::invalid(field, "is missing")
}

fn out_of_range(field: Field) -> Error {
    let max = match field {
        Field::Amount => MAX_AMOUNT,
        _ => MAX_ACCOUNT_ID,
    };
    Error::invalid(field, format!("must be between 1 and {max}"))
}

fn json_type(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    // The same validation tests run natively and, under `wasm-pack test`, in
    // the browser: the rules must not depend on the target.
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    fn field_of(r: Result<Event, Error>) -> Option<Field> {
        match r {
            Err(Error::InvalidInput { field, .. }) => Some(field),
            _ => None,
        }
    }

    #[test]
    fn text_integers_must_be_canonical() {
        for bad in [
            "1.5", "1e3", "500.0", "+5", " 5", "5 ", "05", "0x10", "true", "null", "NaN", "", "-",
            "-0", "٥", "5_0", "inf",
        ] {
            assert_eq!(
                field_of(Event::from_text("s", "e", "1", bad)),
                Some(Field::Amount),
                "amount {bad:?} must be invalid"
            );
            assert_eq!(
                field_of(Event::from_text("s", "e", bad, "5")),
                Some(Field::AccountId),
                "account {bad:?} must be invalid"
            );
        }
        assert!(Event::from_text("s", "e", "9007199254740991", "1000000000").is_ok());
    }

    #[test]
    fn ranges_are_inclusive_and_exact() {
        assert!(Event::new("s", "e", 1, 1).is_ok());
        assert!(Event::new("s", "e", MAX_ACCOUNT_ID, MAX_AMOUNT).is_ok());
        for (a, n, field) in [
            (0, 5, Field::AccountId),
            (-1, 5, Field::AccountId),
            (MAX_ACCOUNT_ID + 1, 5, Field::AccountId),
            (1, 0, Field::Amount),
            (1, -1, Field::Amount),
            (1, MAX_AMOUNT + 1, Field::Amount),
        ] {
            assert_eq!(field_of(Event::new("s", "e", a, n)), Some(field));
        }
        assert_eq!(
            field_of(Event::from_text("s", "e", "1", "99999999999999999999")),
            Some(Field::Amount)
        );
    }

    #[test]
    fn keys_are_checked_but_never_trimmed() {
        for (bad, why) in [
            ("", "empty"),
            ("   ", "spaces"),
            ("\u{3000}", "ideographic space"),
            ("a\u{0}b", "NUL"),
            ("a\nb", "newline"),
            ("a\u{7f}", "DEL"),
            ("a\u{85}", "C1 control"),
        ] {
            assert_eq!(
                field_of(Event::new(bad, "e", 1, 5)),
                Some(Field::Source),
                "{why}"
            );
            assert_eq!(
                field_of(Event::new("s", bad, 1, 5)),
                Some(Field::EventId),
                "{why}"
            );
        }
        assert!(Event::new("s".repeat(255), "e", 1, 5).is_ok());
        assert_eq!(
            field_of(Event::new("s".repeat(256), "e", 1, 5)),
            Some(Field::Source)
        );
        // 85 × 3-byte characters = 255 bytes: fine; one more byte is not.
        assert!(Event::new("€".repeat(85), "e", 1, 5).is_ok());
        assert!(Event::new(format!("{}a", "€".repeat(85)), "e", 1, 5).is_err());
        let spaced = Event::new(" evt-1 ", "e", 1, 5).unwrap();
        assert_eq!(spaced.source(), " evt-1 ");
        let emoji = Event::new("провайдер-🦀", "שלום", 1, 5).unwrap();
        assert_eq!(emoji.event_id(), "שלום");
    }

    #[test]
    fn js_numbers_must_be_integral_and_safe() {
        assert_eq!(integer_from_js_number(Field::Amount, 500.0).ok(), Some(500));
        for bad in [
            1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e21,
            2f64.powi(53),
        ] {
            assert!(
                integer_from_js_number(Field::Amount, bad).is_err(),
                "{bad} must be invalid"
            );
        }
    }

    #[test]
    fn json_accepts_only_the_four_fields_with_plain_integers() {
        let ok = r#"{"source":"provider-a","event_id":"evt-1","account_id":1,"amount":500}"#;
        assert_eq!(
            Event::from_json(ok).unwrap(),
            Event::new("provider-a", "evt-1", 1, 500).unwrap()
        );
        for (bad, field) in [
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":500.0}"#,
                Field::Amount,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":5e2}"#,
                Field::Amount,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":"500"}"#,
                Field::Amount,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":null}"#,
                Field::Amount,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1}"#,
                Field::Amount,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":true,"amount":5}"#,
                Field::AccountId,
            ),
            (
                r#"{"source":5,"event_id":"e","account_id":1,"amount":5}"#,
                Field::Source,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":5,"x":1}"#,
                Field::Event,
            ),
            (r#"[1]"#, Field::Event),
            (r#"{"#, Field::Event),
        ] {
            assert_eq!(field_of(Event::from_json(bad)), Some(field), "{bad}");
        }
    }
}
