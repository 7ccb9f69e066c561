//! The validated event: "credit account A with N units", from sender S,
//! known to the sender as event E.
//!
//! Invariant: an [`Event`] value is valid by construction. Every rule is
//! checked once, in the constructors, before any SQL runs; the rest of the
//! crate never re-checks. The rules:
//!
//! * `source` and `event_id`: not blank (not empty, not only whitespace), at
//!   most [`MAX_KEY_BYTES`] bytes of UTF-8, and no character that does not
//!   show as itself (`refused_in_key`, the one rule for that): control
//!   characters (C0, C1, DEL), the bidirectional embeddings, overrides and
//!   isolates, and every other default-ignorable code point (zero-width
//!   spaces and joiners, U+FEFF, fillers, variation selectors, tag
//!   characters, …), so two keys that look the same are the same key. They
//!   are kept and compared **byte for byte**: never trimmed, never
//!   normalised, so `"evt-1"` and `"evt-1 "` are two different events.
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

use crate::core::error::{Error, InvalidCode, Reason};

/// Longest `source` or `event_id`, in bytes of UTF-8.
pub const MAX_KEY_BYTES: usize = 255;
/// Largest account id: 2^53-1 (`Number.MAX_SAFE_INTEGER`).
pub const MAX_ACCOUNT_ID: i64 = (1 << 53) - 1;
/// Largest amount of one credit.
pub const MAX_AMOUNT: i64 = 1_000_000_000;

/// The input at fault in an `invalid_input` report: its `field`, named as
/// in the wire formats.
///
/// An open set: the core names the event's fields and the fault point; a
/// lab names its own inputs with [`Field::new`] (the console's `sql`, the
/// import's `file`, ...), so the core never has to know them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Field(&'static str);

impl Field {
    pub const SOURCE: Field = Field("source");
    pub const EVENT_ID: Field = Field("event_id");
    pub const ACCOUNT_ID: Field = Field("account_id");
    pub const AMOUNT: Field = Field("amount");
    /// The event as a whole (e.g. pasted JSON that is not an object).
    pub const EVENT: Field = Field("event");
    /// The fault point requested with a delivery.
    pub const FAULT: Field = Field("fault");

    /// A field of some other input, named as on the wire (`snake_case`).
    pub const fn new(name: &'static str) -> Field {
        Field(name)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A valid event. Construct with [`Event::new`], [`Event::from_text`],
/// [`Event::from_json`] or [`Event::from_json_payload`].
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
        check_key(Field::SOURCE, &source)?;
        check_key(Field::EVENT_ID, &event_id)?;
        check_range(Field::ACCOUNT_ID, account_id)?;
        check_range(Field::AMOUNT, amount)?;
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
    /// [`Error::InvalidInput`] naming the first field, in the order
    /// source, event_id, account_id, amount, that breaks a rule.
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
        // Field by field, so the error names the first bad field.
        check_key(Field::SOURCE, source)?;
        check_key(Field::EVENT_ID, event_id)?;
        let account_id = parse_integer(Field::ACCOUNT_ID, account_id)?;
        check_range(Field::ACCOUNT_ID, account_id)?;
        let amount = parse_integer(Field::AMOUNT, amount)?;
        Event::new(source, event_id, account_id, amount)
    }

    /// Validates one event given as JSON text:
    /// `{"source": "...", "event_id": "...", "account_id": 1, "amount": 500}`.
    /// Exactly these four fields; numbers must be plain JSON integers (`500`,
    /// not `500.0`, `5e2` or `"500"`).
    ///
    /// # Errors
    /// [`Error::InvalidInput`]: not JSON or not an object (field `event`), an
    /// unexpected field (field `event`), then — field by field, in the order
    /// source, event_id, account_id, amount — a missing field, a wrong type,
    /// or a value that breaks a rule.
    ///
    /// # Example
    /// ```
    /// use inbox_lab::{Event, Field};
    /// let e = Event::from_json(r#"{"source":"a","event_id":"e","account_id":1,"amount":5}"#);
    /// assert_eq!(e.unwrap().amount(), 5);
    /// let err = Event::from_json(r#"{"source":"a","event_id":"e","account_id":1,"amount":"5"}"#);
    /// assert_eq!(err.unwrap_err().report().field, Some(Field::AMOUNT));
    /// ```
    pub fn from_json(text: &str) -> Result<Event, Error> {
        let map = json_object(text, &FIELDS)?;
        let source = text_field(&map, Field::SOURCE)?;
        let event_id = text_field(&map, Field::EVENT_ID)?;
        let account_id = int_field(&map, Field::ACCOUNT_ID)?;
        let amount = int_field(&map, Field::AMOUNT)?;
        Event::new(source, event_id, account_id, amount)
    }

    /// Validates an event whose keys arrive apart from its payload (a
    /// webhook's URL and headers): `source` and `event_id` as given, and the
    /// payload as JSON text `{"account_id": 1, "amount": 500}`, with exactly
    /// these two fields and the same strictness as [`Event::from_json`]
    /// (plain JSON integers, no repeated field, nothing else — a `source` in
    /// the payload is an unexpected field, never a second opinion).
    ///
    /// # Errors
    /// [`Error::InvalidInput`]: a key that breaks a rule (`source`, then
    /// `event_id`), then the payload's errors in [`Event::from_json`]'s
    /// order (field `event` for the payload as a whole).
    ///
    /// # Example
    /// ```
    /// use inbox_lab::{Event, Field};
    /// let e = Event::from_json_payload("a", "e", r#"{"account_id":1,"amount":5}"#).unwrap();
    /// assert_eq!((e.source(), e.amount()), ("a", 5));
    /// let err = Event::from_json_payload("a", "e", r#"{"source":"b","account_id":1,"amount":5}"#);
    /// assert_eq!(err.unwrap_err().report().code, "unexpected_field");
    /// ```
    pub fn from_json_payload(source: &str, event_id: &str, text: &str) -> Result<Event, Error> {
        check_key(Field::SOURCE, source)?;
        check_key(Field::EVENT_ID, event_id)?;
        let map = json_object(text, &PAYLOAD_FIELDS)?;
        let account_id = int_field(&map, Field::ACCOUNT_ID)?;
        let amount = int_field(&map, Field::AMOUNT)?;
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

/// The first key that appears twice in a JSON object, if any (only the
/// object's own keys; whatever the values hold is skipped).
struct FirstRepeatedKey(Option<String>);

impl<'de> Deserialize<'de> for FirstRepeatedKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = FirstRepeatedKey;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut seen = std::collections::HashSet::new();
                let mut repeated = None;
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    if !seen.insert(key.clone()) && repeated.is_none() {
                        repeated = Some(key);
                    }
                }
                Ok(FirstRepeatedKey(repeated))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

/// The four fields of an event, in the order they are checked.
const FIELDS: [&str; 4] = ["source", "event_id", "account_id", "amount"];

/// The payload's fields when the keys arrive elsewhere
/// ([`Event::from_json_payload`]).
const PAYLOAD_FIELDS: [&str; 2] = ["account_id", "amount"];

/// A parsed JSON object.
type Object = serde_json::Map<String, serde_json::Value>;

/// Parses JSON text that must be an object with no repeated key and no key
/// outside `allowed` (absent ones are the caller's to report).
fn json_object(text: &str, allowed: &[&str]) -> Result<Object, Error> {
    use serde_json::Value;
    let value: Value = serde_json::from_str(text).map_err(|e| {
        Error::refused(
            Field::EVENT,
            Reason::new(InvalidCode::NotJson, format!("not valid JSON: {e}"))
                .with("line", e.line())
                .with("column", e.column())
                .with("detail", e),
        )
    })?;
    let Value::Object(map) = value else {
        return Err(object_expected(ValueType::of_json(&value), allowed));
    };
    // `{"amount": 1, "amount": 1000000}` is valid JSON, and parsers
    // disagree on which amount it means (serde_json keeps the last, others
    // the first). A sender and a handler that disagree on the payload is
    // exactly what the inbox must not allow, so a repeated field is refused.
    if let Ok(FirstRepeatedKey(Some(name))) = serde_json::from_str(text) {
        return Err(Error::refused(
            Field::EVENT,
            Reason::new(
                InvalidCode::DuplicateField,
                format!("duplicate field {name:?}: each field may appear only once"),
            )
            .with("name", format!("{name:?}")),
        ));
    }
    if let Some(extra) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(field_not_allowed(extra, allowed));
    }
    Ok(map)
}

/// A key field of a parsed object: present, a string, and valid.
fn text_field(map: &Object, field: Field) -> Result<&str, Error> {
    use serde_json::Value;
    match map.get(field.as_str()) {
        None => Err(missing(field)),
        Some(Value::String(s)) => check_key(field, s).map(|()| s.as_str()),
        Some(other) => Err(wrong_type(
            field,
            ValueType::String,
            ValueType::of_json(other),
        )),
    }
}

/// A number field of a parsed object: present, a plain JSON integer, in range.
fn int_field(map: &Object, field: Field) -> Result<i64, Error> {
    use serde_json::Value;
    let n = match map.get(field.as_str()) {
        None => return Err(missing(field)),
        Some(Value::Number(n)) => n,
        Some(other) => {
            return Err(wrong_type(
                field,
                ValueType::Number,
                ValueType::of_json(other),
            ))
        }
    };
    // serde_json keeps integers written without '.', 'e' or 'E' as
    // integers; `500.0` and `5e2` arrive as floats and are refused.
    // Integers past u64 also arrive as floats: out of range, not a
    // matter of notation.
    let value = match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i,
        (None, Some(_), _) => return Err(out_of_range(field, n)),
        (None, None, Some(f)) if f.fract() == 0.0 && f.abs() >= 9.2e18 => {
            return Err(out_of_range(field, n))
        }
        _ => {
            return Err(Error::refused(
                field,
                Reason::new(
                    InvalidCode::DecimalOrExponent,
                    format!(
                        "must be a whole number written without a decimal point or \
                         exponent, got {n}"
                    ),
                )
                .with("got", n),
            ))
        }
    };
    check_range(field, value).map(|()| value)
}

/// Checks `source` / `event_id`. Never trims: the bytes given are the key.
fn check_key(field: Field, value: &str) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::refused(
            field,
            Reason::new(InvalidCode::Empty, "must not be empty"),
        ));
    }
    if value.chars().all(char::is_whitespace) {
        return Err(Error::refused(
            field,
            Reason::new(InvalidCode::WhitespaceOnly, "must not be only whitespace"),
        ));
    }
    if value.len() > MAX_KEY_BYTES {
        return Err(Error::refused(
            field,
            Reason::new(
                InvalidCode::TooLong,
                format!(
                    "is {} bytes of UTF-8; at most {MAX_KEY_BYTES} are allowed",
                    value.len()
                ),
            )
            .with("bytes", value.len())
            .with("max", MAX_KEY_BYTES),
        ));
    }
    if let Some((at, c, code)) = value
        .char_indices()
        .find_map(|(at, c)| refused_in_key(c).map(|code| (at, c, code)))
    {
        let char = format!("U+{:04X}", u32::from(c));
        let what = match code {
            InvalidCode::ControlChar => "control",
            _ => "invisible",
        };
        return Err(Error::refused(
            field,
            Reason::new(
                code,
                format!("contains the {what} character {char} at byte {at}"),
            )
            .with("char", char)
            .with("at", at),
        ));
    }
    Ok(())
}

/// Why `c` may not be part of a key, if it may not: the one rule for
/// characters in `source` and `event_id` (stored rows are held to it too,
/// through [`Event::new`]).
///
/// Both are refused rather than shown escaped because a key is read by
/// people: a key holding U+202E displays its bytes in reverse, and one
/// holding U+200B or U+3164 looks like the key without it, so two different
/// keys could look identical in the tables ("Trojan Source").
fn refused_in_key(c: char) -> Option<InvalidCode> {
    if c.is_control() || is_bidi_control(c) {
        Some(InvalidCode::ControlChar)
    } else if is_default_ignorable(c) {
        Some(InvalidCode::InvisibleChar)
    } else {
        None
    }
}

/// The explicit bidirectional controls (Unicode's `Bidi_Control` embeddings,
/// overrides and isolates: U+202A–U+202E, U+2066–U+2069), reported as
/// control characters. (The implicit marks U+200E, U+200F and U+061C are
/// default-ignorable, refused as invisible.)
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Unicode's `Default_Ignorable_Code_Point` property: what a renderer shows
/// as nothing when it cannot show it otherwise.
pub fn is_default_ignorable(c: char) -> bool {
    let c = u32::from(c);
    // The first range that does not end below `c` holds it, if any does.
    let i = DEFAULT_IGNORABLE.partition_point(|&(_, hi)| hi < c);
    DEFAULT_IGNORABLE.get(i).is_some_and(|&(lo, _)| lo <= c)
}

/// `Default_Ignorable_Code_Point`, as ranges in order: Unicode 16.0.0,
/// `DerivedCoreProperties.txt` (the same table `regex-syntax` generates with
/// `ucd-generate`; a test holds the two together).
const DEFAULT_IGNORABLE: [(u32, u32); 17] = [
    (0x00AD, 0x00AD),   // SOFT HYPHEN
    (0x034F, 0x034F),   // COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),   // ARABIC LETTER MARK
    (0x115F, 0x1160),   // HANGUL CHOSEONG / JUNGSEONG FILLER
    (0x17B4, 0x17B5),   // KHMER VOWEL INHERENT AQ, AA
    (0x180B, 0x180F),   // MONGOLIAN FREE VARIATION SELECTORS, VOWEL SEPARATOR
    (0x200B, 0x200F),   // ZERO WIDTH SPACE … RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),   // bidirectional embeddings and overrides
    (0x2060, 0x206F),   // WORD JOINER … NOMINAL DIGIT SHAPES (isolates included)
    (0x3164, 0x3164),   // HANGUL FILLER
    (0xFE00, 0xFE0F),   // VARIATION SELECTOR-1 … 16
    (0xFEFF, 0xFEFF),   // ZERO WIDTH NO-BREAK SPACE (byte order mark)
    (0xFFA0, 0xFFA0),   // HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),   // unassigned, reserved default-ignorable
    (0x1BCA0, 0x1BCA3), // SHORTHAND FORMAT CONTROLS
    (0x1D173, 0x1D17A), // MUSICAL SYMBOL BEGIN BEAM … END PHRASE
    (0xE0000, 0xE0FFF), // tag characters, VARIATION SELECTOR-17 … 256, reserved
];

/// Validates a user-supplied account id (for creating accounts) with the same
/// rule events use.
///
/// # Errors
/// [`Error::InvalidInput`] for `account_id`.
pub fn check_account_id(account_id: i64) -> Result<i64, Error> {
    check_range(Field::ACCOUNT_ID, account_id).map(|()| account_id)
}

/// The inclusive range of a numeric field.
fn range_of(field: Field) -> (i64, i64) {
    match field {
        Field::AMOUNT => (1, MAX_AMOUNT),
        _ => (1, MAX_ACCOUNT_ID),
    }
}

fn check_range(field: Field, value: i64) -> Result<(), Error> {
    let (min, max) = range_of(field);
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(out_of_range(field, value))
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
            Reason::new(InvalidCode::Empty, "must not be empty")
        } else {
            let got = format!("{text:?}");
            Reason::new(
                InvalidCode::NotCanonicalInteger,
                format!(
                    "must be a base-10 integer without a plus sign, spaces, leading zeros, \
                     decimal point or exponent, got {got}"
                ),
            )
            .with("got", got)
        };
        return Err(Error::refused(field, reason));
    }
    // Canonical digits that do not fit an i64 are simply out of range.
    text.parse::<i64>().map_err(|_| out_of_range(field, text))
}

/// Converts a JavaScript number to an integer, accepting only integral
/// values that JavaScript represents exactly (|n| ≤ 2^53-1). `1.5`, `NaN`,
/// `Infinity` and `1e21` are refused. The range is checked by the caller.
///
/// # Errors
/// [`Error::InvalidInput`] for `field`.
pub fn integer_from_js_number(field: Field, n: f64) -> Result<i64, Error> {
    const SAFE: f64 = MAX_ACCOUNT_ID as f64;
    if !n.is_finite() || n.fract() != 0.0 {
        let got = js_number_text(n);
        return Err(Error::refused(
            field,
            Reason::new(
                InvalidCode::NotWholeNumber,
                format!("must be a whole number, got {got}"),
            )
            .with("got", got),
        ));
    }
    if n.abs() > SAFE {
        return Err(out_of_range(field, js_number_text(n)));
    }
    // Exact: n is integral and within ±2^53-1.
    Ok(n as i64)
}

/// A number as JavaScript's `String(n)` writes it, near enough for messages:
/// `NaN`, `Infinity`, `1.5`, `1e+21`.
fn js_number_text(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if n != 0.0 && (n.abs() >= 1e21 || n.abs() < 1e-6) {
        let e = format!("{n:e}");
        match e.split_once('e') {
            Some((m, exp)) if !exp.starts_with('-') => format!("{m}e+{exp}"),
            _ => e,
        }
    } else {
        n.to_string()
    }
}

crate::core::named::named! {
    /// The type of a value that arrived where another was expected, named as
    /// JavaScript and JSON name them. The wire name (`as_str`) goes into the
    /// `params` of a `wrong_type` report; the page translates it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ValueType("type") {
        Null => "null",
        Undefined => "undefined",
        Boolean => "boolean",
        Number => "number",
        BigInt => "bigint",
        String => "string",
        Symbol => "symbol",
        Function => "function",
        Array => "array",
        Object => "object",
    }
}

impl ValueType {
    /// How an English sentence says it: `null`, `a boolean`, `an array`.
    fn english(self) -> String {
        match self {
            ValueType::Null | ValueType::Undefined => self.to_string(),
            ValueType::BigInt => "a BigInt".to_owned(),
            ValueType::Array | ValueType::Object => format!("an {self}"),
            _ => format!("a {self}"),
        }
    }

    /// The type of a JSON value.
    fn of_json(v: &serde_json::Value) -> ValueType {
        use serde_json::Value;
        match v {
            Value::Null => ValueType::Null,
            Value::Bool(_) => ValueType::Boolean,
            Value::Number(_) => ValueType::Number,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::Object(_) => ValueType::Object,
        }
    }
}

// The reasons below are shared with the wasm facade, which checks JavaScript
// values with the same words and codes.

/// `field` is absent.
pub fn missing(field: Field) -> Error {
    Error::refused(field, Reason::new(InvalidCode::MissingField, "is missing"))
}

/// `field` holds a value of type `got` instead of `expected`.
pub fn wrong_type(field: Field, expected: ValueType, got: ValueType) -> Error {
    Error::refused(
        field,
        Reason::new(
            InvalidCode::WrongType,
            format!("must be {}, got {}", expected.english(), got.english()),
        )
        .with("expected", expected.as_str())
        .with("got", got.as_str()),
    )
}

/// A number field holds the string `value` (JavaScript's `"500"`).
pub fn string_for_number(field: Field, value: &str) -> Error {
    let quoted = format!("{value:?}");
    Error::refused(
        field,
        Reason::new(
            InvalidCode::StringForNumber,
            format!("must be a number, got the string {quoted}"),
        )
        .with("value", quoted),
    )
}

/// A JavaScript string with an unpaired surrogate.
pub fn lone_surrogate(field: Field) -> Error {
    Error::refused(
        field,
        Reason::new(
            InvalidCode::LoneSurrogate,
            "contains a lone surrogate (invalid UTF-16), which has no UTF-8 form",
        ),
    )
}

/// An event with a field it does not have.
pub fn unexpected_field(name: &str) -> Error {
    field_not_allowed(name, &FIELDS)
}

/// An event that is not an object at all.
pub fn not_an_object(got: ValueType) -> Error {
    object_expected(got, &FIELDS)
}

/// `name` is not one of the `allowed` fields.
fn field_not_allowed(name: &str, allowed: &[&str]) -> Error {
    let quoted = format!("{name:?}");
    Error::refused(
        Field::EVENT,
        Reason::new(
            InvalidCode::UnexpectedField,
            format!(
                "unexpected field {quoted}: only {} are allowed",
                english_list(allowed)
            ),
        )
        .with("name", quoted),
    )
}

/// An object with the `allowed` fields was expected, `got` arrived.
fn object_expected(got: ValueType, allowed: &[&str]) -> Error {
    Error::refused(
        Field::EVENT,
        Reason::new(
            InvalidCode::NotObject,
            format!(
                "expected an object with {}, got {}",
                english_list(allowed),
                got.english()
            ),
        )
        .with("got", got.as_str()),
    )
}

/// `a`, `a and b`, `a, b and c`.
fn english_list(names: &[&str]) -> String {
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// `got` is not one of the names `expected` lists (e.g. fault points).
pub fn unknown_value(field: Field, got: &str, expected: &[&str]) -> Error {
    let quoted = format!("{got:?}");
    let expected = expected.join(", ");
    Error::refused(
        field,
        Reason::new(
            InvalidCode::UnknownValue,
            format!("is {quoted}, expected one of: {expected}"),
        )
        .with("got", quoted)
        .with("expected", expected),
    )
}

/// A whole number outside the field's range; `got` as written.
fn out_of_range(field: Field, got: impl fmt::Display) -> Error {
    let (min, max) = range_of(field);
    Error::refused(
        field,
        Reason::new(
            InvalidCode::OutOfRange,
            format!("must be between {min} and {max}, got {got}"),
        )
        .with("min", min)
        .with("max", max)
        .with("got", got),
    )
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
                Some(Field::AMOUNT),
                "amount {bad:?} must be invalid"
            );
            assert_eq!(
                field_of(Event::from_text("s", "e", bad, "5")),
                Some(Field::ACCOUNT_ID),
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
            (0, 5, Field::ACCOUNT_ID),
            (-1, 5, Field::ACCOUNT_ID),
            (MAX_ACCOUNT_ID + 1, 5, Field::ACCOUNT_ID),
            (1, 0, Field::AMOUNT),
            (1, -1, Field::AMOUNT),
            (1, MAX_AMOUNT + 1, Field::AMOUNT),
        ] {
            assert_eq!(field_of(Event::new("s", "e", a, n)), Some(field));
        }
        assert_eq!(
            field_of(Event::from_text("s", "e", "1", "99999999999999999999")),
            Some(Field::AMOUNT)
        );
    }

    /// Each kind of character that shows as nothing is refused in either
    /// key, with its code and where it is.
    #[test]
    fn invisible_characters_are_refused_in_both_keys_with_their_code() {
        for (c, name) in [
            ('\u{200B}', "zero width space"),
            ('\u{200C}', "zero width non-joiner"),
            ('\u{200D}', "zero width joiner"),
            ('\u{200E}', "left-to-right mark"),
            ('\u{200F}', "right-to-left mark"),
            ('\u{2060}', "word joiner"),
            ('\u{2064}', "invisible plus"),
            ('\u{FEFF}', "zero width no-break space"),
            ('\u{00AD}', "soft hyphen"),
            ('\u{034F}', "combining grapheme joiner"),
            ('\u{061C}', "arabic letter mark"),
            ('\u{115F}', "hangul choseong filler"),
            ('\u{1160}', "hangul jungseong filler"),
            ('\u{3164}', "hangul filler"),
            ('\u{FFA0}', "halfwidth hangul filler"),
            ('\u{180E}', "mongolian vowel separator"),
            ('\u{FE0F}', "variation selector-16"),
            ('\u{1D173}', "musical symbol begin beam"),
            ('\u{E0000}', "reserved tag"),
            ('\u{E0001}', "language tag"),
            ('\u{E0041}', "tag latin capital a"),
            ('\u{E007F}', "cancel tag"),
            ('\u{E0100}', "variation selector-17"),
            ('\u{E0FFF}', "last default-ignorable"),
        ] {
            let key = format!("evt{c}1");
            let at_3 = |e: Result<Event, Error>, field: Field| {
                let r = e.expect_err(name).report();
                assert_eq!((r.field, r.code), (Some(field), "invisible_char"), "{name}");
                assert_eq!(r.params["at"], "3", "{name}");
                assert_eq!(
                    r.params["char"],
                    format!("U+{:04X}", u32::from(c)),
                    "{name}"
                );
            };
            at_3(Event::new(key.as_str(), "e", 1, 5), Field::SOURCE);
            at_3(Event::new("s", key.as_str(), 1, 5), Field::EVENT_ID);
        }
        // Their neighbours are ordinary characters.
        for c in [
            '\u{200A}',
            '\u{2010}',
            '\u{3163}',
            '\u{3165}',
            '\u{FFA1}',
            '\u{E1000}',
        ] {
            let key = format!("a{c}");
            assert!(
                Event::new(key.as_str(), key.as_str(), 1, 5).is_ok(),
                "U+{:04X}",
                u32::from(c)
            );
        }
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
            ("\u{202e}evil", "right-to-left override"),
            ("a\u{2066}b", "left-to-right isolate"),
            ("a\u{2069}", "pop directional isolate"),
            ("\u{202a}", "left-to-right embedding"),
        ] {
            assert_eq!(
                field_of(Event::new(bad, "e", 1, 5)),
                Some(Field::SOURCE),
                "{why}"
            );
            assert_eq!(
                field_of(Event::new("s", bad, 1, 5)),
                Some(Field::EVENT_ID),
                "{why}"
            );
        }
        assert!(Event::new("s".repeat(255), "e", 1, 5).is_ok());
        assert_eq!(
            field_of(Event::new("s".repeat(256), "e", 1, 5)),
            Some(Field::SOURCE)
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
        assert_eq!(integer_from_js_number(Field::AMOUNT, 500.0).ok(), Some(500));
        for bad in [
            1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e21,
            2f64.powi(53),
        ] {
            assert!(
                integer_from_js_number(Field::AMOUNT, bad).is_err(),
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
                Field::AMOUNT,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":5e2}"#,
                Field::AMOUNT,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":"500"}"#,
                Field::AMOUNT,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":null}"#,
                Field::AMOUNT,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1}"#,
                Field::AMOUNT,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":true,"amount":5}"#,
                Field::ACCOUNT_ID,
            ),
            (
                r#"{"source":5,"event_id":"e","account_id":1,"amount":5}"#,
                Field::SOURCE,
            ),
            (
                r#"{"source":"a","event_id":"e","account_id":1,"amount":5,"x":1}"#,
                Field::EVENT,
            ),
            (r#"[1]"#, Field::EVENT),
            (r#"{"#, Field::EVENT),
        ] {
            assert_eq!(field_of(Event::from_json(bad)), Some(field), "{bad}");
        }
    }

    #[test]
    fn a_payload_with_keys_from_elsewhere_is_as_strict_as_an_event() {
        let payload = |text: &str| Event::from_json_payload("a", "e", text);
        assert_eq!(
            payload(r#"{"account_id":1,"amount":5}"#).unwrap(),
            Event::new("a", "e", 1, 5).unwrap()
        );
        for (bad, field) in [
            (r#"{"account_id":1,"amount":5,"source":"b"}"#, Field::EVENT),
            (
                r#"{"account_id":1,"amount":5,"event_id":"x"}"#,
                Field::EVENT,
            ),
            (r#"{"account_id":1,"amount":1,"amount":5}"#, Field::EVENT),
            (r#"{"account_id":1,"amount":"5"}"#, Field::AMOUNT),
            (r#"{"account_id":1,"amount":5.0}"#, Field::AMOUNT),
            (r#"{"amount":5}"#, Field::ACCOUNT_ID),
            (r#"[]"#, Field::EVENT),
        ] {
            assert_eq!(field_of(payload(bad)), Some(field), "{bad}");
        }
        let err = payload(r#"{"account_id":1,"amount":5,"source":"b"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid event: unexpected field \"source\": only account_id and amount are allowed"
        );
        // The keys are checked first, with the event's rules.
        assert_eq!(
            field_of(Event::from_json_payload("", "e", "{")),
            Some(Field::SOURCE)
        );
        assert_eq!(
            field_of(Event::from_json_payload("a", "e\n", "{")),
            Some(Field::EVENT_ID)
        );
    }

    fn code_of(r: Result<Event, Error>) -> Option<(Field, &'static str)> {
        match r {
            Err(e @ Error::InvalidInput { .. }) => {
                let report = e.report();
                Some((report.field?, report.code))
            }
            _ => None,
        }
    }

    #[test]
    fn every_refusal_has_a_specific_code() {
        const SOURCE: Field = Field::SOURCE;
        const EVENT_ID: Field = Field::EVENT_ID;
        const ACCOUNT_ID: Field = Field::ACCOUNT_ID;
        const AMOUNT: Field = Field::AMOUNT;
        const WHOLE: Field = Field::EVENT;
        let ok = |s: &str| Event::from_json(s);
        for (input, expected) in [
            (
                ok(r#"{"source":"","event_id":"e","account_id":1,"amount":5}"#),
                (SOURCE, "empty"),
            ),
            (
                ok(r#"{"source":" \t","event_id":"e","account_id":1,"amount":5}"#),
                (SOURCE, "whitespace_only"),
            ),
            (
                ok(r#"{"source":"a","event_id":"a\u0000b","account_id":1,"amount":5}"#),
                (EVENT_ID, "control_char"),
            ),
            (
                ok(r#"{"source":"a","event_id":"e","account_id":0,"amount":5}"#),
                (ACCOUNT_ID, "out_of_range"),
            ),
            (
                ok(r#"{"source":"a","event_id":"e","account_id":1,"amount":1e21}"#),
                (AMOUNT, "out_of_range"),
            ),
            (
                ok(r#"{"source":"a","event_id":"e","account_id":1,"amount":18446744073709551615}"#),
                (AMOUNT, "out_of_range"),
            ),
            (
                ok(r#"{"source":"a","event_id":"e","account_id":1,"amount":1.5}"#),
                (AMOUNT, "decimal_or_exponent"),
            ),
            (
                ok(r#"{"source":"a","event_id":"e","account_id":1,"amount":"500"}"#),
                (AMOUNT, "wrong_type"),
            ),
            (
                ok(r#"{"source":"a","event_id":"e","account_id":1}"#),
                (AMOUNT, "missing_field"),
            ),
            (
                ok(r#"{"source":"a","event_id":"e","account_id":1,"amount":5,"x":1}"#),
                (WHOLE, "unexpected_field"),
            ),
            (ok(r#"[]"#), (WHOLE, "not_object")),
            (
                ok(r#"{"source":"a","event_id":"e","account_id":1,"amount":1,"amount":9}"#),
                (WHOLE, "duplicate_field"),
            ),
            (
                ok(r#"{"source":"\ud800","event_id":"e","account_id":1,"amount":5}"#),
                (WHOLE, "not_json"),
            ),
            (ok("NaN"), (WHOLE, "not_json")),
            (
                Event::from_text("s", "e", "05", "5"),
                (ACCOUNT_ID, "not_canonical_integer"),
            ),
            (Event::from_text("s", "e", "1", ""), (AMOUNT, "empty")),
            (
                Event::from_text("s", "e", "1", "99999999999999999999"),
                (AMOUNT, "out_of_range"),
            ),
            (Event::new("s".repeat(256), "e", 1, 5), (SOURCE, "too_long")),
        ] {
            assert_eq!(code_of(input), Some(expected));
        }
        let err = integer_from_js_number(AMOUNT, f64::INFINITY).unwrap_err();
        assert_eq!(err.report().code, "not_whole_number");
        assert_eq!(err.report().params["got"], "Infinity");
        let err = integer_from_js_number(AMOUNT, 1e21).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid amount: must be between 1 and 1000000000, got 1e+21"
        );
    }

    #[test]
    fn the_first_bad_field_in_order_is_named() {
        // An out-of-range account and a malformed amount: the account comes first.
        assert_eq!(
            field_of(Event::from_text("s", "e", "0", "x")),
            Some(Field::ACCOUNT_ID)
        );
        assert_eq!(
            field_of(Event::from_json(
                r#"{"source":"","event_id":"e","account_id":true,"amount":5}"#
            )),
            Some(Field::SOURCE)
        );
    }

    // Native only: proptest is a native dev-dependency. Its regex strategy
    // draws from regex-syntax's own Unicode tables, so these hold the table
    // above to an independent copy of the property, from both sides.
    #[cfg(not(target_family = "wasm"))]
    mod invisible {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            #[test]
            fn any_key_holding_a_default_ignorable_is_refused(
                key in "[a-z0-9 ]{0,8}\\p{Default_Ignorable_Code_Point}[a-z0-9 ]{0,8}"
            ) {
                let code = |r: Result<Event, Error>| r.map_err(|e| e.report().code);
                let expected = if key.chars().any(is_bidi_control) { "control_char" } else { "invisible_char" };
                prop_assert_eq!(code(Event::new(key.as_str(), "e", 1, 5)).err(), Some(expected));
                prop_assert_eq!(code(Event::new("s", key.as_str(), 1, 5)).err(), Some(expected));
            }

            #[test]
            fn a_key_of_other_printable_characters_is_accepted(
                key in "a[\\P{Default_Ignorable_Code_Point}&&\\P{Cc}]{0,20}"
            ) {
                prop_assume!(key.len() <= MAX_KEY_BYTES);
                prop_assert!(Event::new(key.as_str(), key.as_str(), 1, 5).is_ok(), "{:?}", key);
            }
        }
    }
}
