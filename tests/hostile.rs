#![cfg(not(target_family = "wasm"))]
//! Hostile input, natively: more than 10,000 generated inputs through every
//! door of [`Event`] — typed values (the wasm facade's), text (the CLI's),
//! JSON text (the page's "paste JSON" box) — and the valid ones on through
//! [`apply`] into a real SQLite database.
//!
//! The generators lean on what breaks input handling: empty and blank keys
//! (including Unicode spaces), 255/256-byte boundaries in multi-byte text,
//! control characters and NUL, emoji with joiners, right-to-left text and
//! bidi overrides, markup and SQL, non-canonical numbers (`05`, `+5`, `1e3`,
//! `٥`, 30-digit integers), JSON with missing, extra, repeated and
//! mistyped fields.
//!
//! Each input is judged twice: by `Event`'s constructors, and by an oracle
//! here that restates the rules from ARCHITECTURE.md independently. They
//! must agree on *whether* the input is valid and, if not, on the field at
//! fault and the reason code. Every refusal must also be presentable: its
//! report serialises, carries a listed `(kind, code)`, and mentions every
//! param it declares. Nothing may panic. Valid events must be stored byte for
//! byte and applied exactly once; invalid ones never reach the database.

use std::collections::BTreeMap;

use inbox_lab::core::db::{self, Mode};
use inbox_lab::core::error::codes;
use inbox_lab::core::event::{is_default_ignorable, MAX_ACCOUNT_ID, MAX_AMOUNT, MAX_KEY_BYTES};
use inbox_lab::core::schema::{self, DEFAULT_BUSY_TIMEOUT};
use inbox_lab::core::tables;
use inbox_lab::{apply, Error, Event, Field, Outcome};
use proptest::prelude::*;
use serde_json::{json, Value};

// ---- The oracle: the rules, restated ---------------------------------------------------------

/// Why a key is refused, if it is: not blank, at most 255 bytes, no control characters
/// (C0, C1, DEL, and the bidirectional embeddings, overrides and isolates) and no other
/// default-ignorable character (the first such character decides the code).
fn key_problem(key: &str) -> Option<&'static str> {
    if key.is_empty() {
        Some("empty")
    } else if key.chars().all(char::is_whitespace) {
        Some("whitespace_only")
    } else if key.len() > MAX_KEY_BYTES {
        Some("too_long")
    } else {
        key.chars().find_map(|c| {
            if c.is_control() || matches!(u32::from(c), 0x202A..=0x202E | 0x2066..=0x2069) {
                Some("control_char")
            } else if is_default_ignorable(c) {
                Some("invisible_char")
            } else {
                None
            }
        })
    }
}

fn range_of(field: Field) -> (i64, i64) {
    if field == Field::AMOUNT {
        (1, MAX_AMOUNT)
    } else {
        (1, MAX_ACCOUNT_ID)
    }
}

fn range_problem(field: Field, value: i64) -> Option<&'static str> {
    let (min, max) = range_of(field);
    (!(min..=max).contains(&value)).then_some("out_of_range")
}

/// A number written as text: canonical means "what Rust would print for
/// the same integer" (no `+`, no leading zeros, no `-0`).
fn text_number_problem(field: Field, text: &str) -> Result<i64, &'static str> {
    if text.is_empty() {
        return Err("empty");
    }
    match text.parse::<i128>() {
        Ok(v) if v.to_string() == text => match i64::try_from(v) {
            Ok(v) => range_problem(field, v).map_or(Ok(v), Err),
            Err(_) => Err("out_of_range"),
        },
        Ok(_) => Err("not_canonical_integer"),
        // Longer than i128 but written canonically: still only too big.
        Err(_) => {
            let digits = text.strip_prefix('-').unwrap_or(text);
            let canonical = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && !digits.starts_with('0');
            Err(if canonical {
                "out_of_range"
            } else {
                "not_canonical_integer"
            })
        }
    }
}

/// The verdict on one input: `Ok(())`, or the field at fault and the code.
type Verdict = Result<(), (Field, &'static str)>;

fn judge_typed(source: &str, event_id: &str, account_id: i64, amount: i64) -> Verdict {
    let checks = [
        (Field::SOURCE, key_problem(source)),
        (Field::EVENT_ID, key_problem(event_id)),
        (
            Field::ACCOUNT_ID,
            range_problem(Field::ACCOUNT_ID, account_id),
        ),
        (Field::AMOUNT, range_problem(Field::AMOUNT, amount)),
    ];
    match checks.into_iter().find_map(|(f, p)| p.map(|p| (f, p))) {
        Some(fault) => Err(fault),
        None => Ok(()),
    }
}

fn judge_text(source: &str, event_id: &str, account_id: &str, amount: &str) -> Verdict {
    if let Some(p) = key_problem(source) {
        return Err((Field::SOURCE, p));
    }
    if let Some(p) = key_problem(event_id) {
        return Err((Field::EVENT_ID, p));
    }
    text_number_problem(Field::ACCOUNT_ID, account_id).map_err(|p| (Field::ACCOUNT_ID, p))?;
    text_number_problem(Field::AMOUNT, amount).map_err(|p| (Field::AMOUNT, p))?;
    Ok(())
}

/// How the generator wrote one JSON value, so the oracle knows what the
/// text says without re-parsing it.
#[derive(Debug, Clone)]
enum Json {
    Str(String),
    Int(i64),
    /// Above i64::MAX, written as digits.
    BigInt(u64),
    /// Written with a decimal point or an exponent.
    Float(f64),
    Bool(bool),
    Null,
    Array,
    Object,
}

impl Json {
    fn to_value(&self) -> Value {
        match self {
            Json::Str(s) => json!(s),
            Json::Int(i) => json!(i),
            Json::BigInt(u) => json!(u),
            Json::Float(f) => json!(f),
            Json::Bool(b) => json!(b),
            Json::Null => Value::Null,
            Json::Array => json!([1, "two"]),
            Json::Object => json!({"nested": true}),
        }
    }
}

const FIELDS: [(Field, &str); 4] = [
    (Field::SOURCE, "source"),
    (Field::EVENT_ID, "event_id"),
    (Field::ACCOUNT_ID, "account_id"),
    (Field::AMOUNT, "amount"),
];

fn judge_json(fields: &BTreeMap<String, Json>) -> Verdict {
    // Extra fields first (keys in the object's order: sorted, as serde_json keeps them).
    if fields
        .keys()
        .any(|k| !FIELDS.iter().any(|(_, name)| name == k))
    {
        return Err((Field::EVENT, "unexpected_field"));
    }
    for (field, name) in FIELDS {
        let Some(value) = fields.get(name) else {
            return Err((field, "missing_field"));
        };
        let is_key = matches!(field, Field::SOURCE | Field::EVENT_ID);
        match (is_key, value) {
            (true, Json::Str(s)) => {
                if let Some(p) = key_problem(s) {
                    return Err((field, p));
                }
            }
            (false, Json::Int(i)) => {
                if let Some(p) = range_problem(field, *i) {
                    return Err((field, p));
                }
            }
            (false, Json::BigInt(_)) => return Err((field, "out_of_range")),
            (false, Json::Float(f)) => {
                let huge = f.fract() == 0.0 && f.abs() >= 9.2e18;
                return Err((
                    field,
                    if huge {
                        "out_of_range"
                    } else {
                        "decimal_or_exponent"
                    },
                ));
            }
            _ => return Err((field, "wrong_type")),
        }
    }
    Ok(())
}

// ---- Checking one answer ------------------------------------------------------------------------

/// The constructor's answer agrees with the oracle, and a refusal is presentable.
fn agree(result: &Result<Event, Error>, verdict: Verdict) -> Result<(), TestCaseError> {
    match (result, verdict) {
        (Ok(_), Ok(())) => Ok(()),
        (Err(err), Err((field, code))) => {
            let report = err.report();
            prop_assert_eq!(report.kind, "invalid_input");
            prop_assert_eq!((report.field, report.code), (Some(field), code), "{}", err);
            presentable(err)
        }
        (got, expected) => Err(TestCaseError::fail(format!(
            "constructor says {got:?}, the rules say {expected:?}"
        ))),
    }
}

/// A report a page can show in two languages: a listed code, JSON that
/// round-trips, an English sentence that mentions every param.
fn presentable(err: &Error) -> Result<(), TestCaseError> {
    let report = err.report();
    prop_assert!(codes().contains(&(report.kind, report.code)), "{report:?}");
    prop_assert_eq!(&report.message, &err.to_string());
    let field = report.field.map(|f| f.to_string()).unwrap_or_default();
    let prefix = format!("invalid {field}: ");
    prop_assert!(report.message.starts_with(&prefix), "{}", report.message);
    for (name, value) in &report.params {
        prop_assert!(
            report.message.contains(value.as_str()),
            "param {} = {:?} is not in {:?}",
            name,
            value,
            report.message
        );
    }
    let json = serde_json::to_value(&report).expect("a report serialises");
    prop_assert_eq!(&json["code"], report.code);
    prop_assert!(json["params"].is_object());
    Ok(())
}

// ---- Generators ------------------------------------------------------------------------------

/// Keys that break naive input handling, and ordinary ones.
fn key() -> BoxedStrategy<String> {
    let blank = prop::collection::vec(
        prop::sample::select(vec![
            ' ', '\t', '\n', '\u{3000}', '\u{a0}', '\u{2028}', '\u{feff}',
        ]),
        0..4,
    )
    .prop_map(|cs| cs.into_iter().collect::<String>());
    let special = prop::sample::select(vec![
        "🦀 provider",
        "👩‍👩‍👧‍👦",
        "שלום",
        "مرحبا",
        "\u{202e}evil",
        "a\u{2067}b",
        "\u{200f}rtl mark",
        "<img src=x onerror=alert(1)>",
        "<script>alert(1)</script>",
        "'; DROP TABLE inbox; --",
        "Robert'); DROP TABLE accounts;--",
        "1 OR 1=1",
        "%s%n ${x} \\x00",
        "café",
        "cafe\u{301}",
        " evt-1 ",
        "evt-1",
        "a\u{0}b",
        "\u{1b}[31m",
        "a\u{7f}",
        "a\u{85}",
        "NULL",
    ])
    .prop_map(str::to_string);
    // Around the 255-byte boundary, with 1-, 2-, 3- and 4-byte characters.
    let boundary = (
        prop::sample::select(vec!["a", "ж", "€", "🦀"]),
        60usize..=260,
    )
        .prop_map(|(c, n)| {
            let mut s = c.repeat(n.div_ceil(c.len()));
            while s.len() > n {
                s.pop();
            }
            s
        });
    prop_oneof![
        3 => "[a-z0-9-]{1,12}",
        2 => special,
        2 => blank,
        2 => boundary,
        2 => any::<String>(),
        1 => "\\PC{0,20}[\\x00-\\x1f\\x7f-\\u{9f}]\\PC{0,5}",
    ]
    .boxed()
}

fn number() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => 1i64..=1_000,
        2 => prop::sample::select(vec![
            0,
            -1,
            1,
            MAX_AMOUNT,
            MAX_AMOUNT + 1,
            MAX_ACCOUNT_ID,
            MAX_ACCOUNT_ID + 1,
            i64::MIN,
            i64::MAX,
            -MAX_ACCOUNT_ID,
        ]),
        1 => any::<i64>(),
    ]
}

fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => number().prop_map(|n| n.to_string()),
        2 => prop::sample::select(vec![
            "", "-", "-0", "+5", "05", " 5", "5 ", "1.5", "500.0", "1e3", "0x10", "٥", "５",
            "5_0", "NaN", "inf", "Infinity", "null", "true", "1,000", "9007199254740992",
            "99999999999999999999", "-99999999999999999999",
        ])
        .prop_map(str::to_string),
        1 => "-?[0-9]{1,30}",
        1 => "\\PC{0,6}",
    ]
}

fn json_value(is_key: bool) -> BoxedStrategy<Json> {
    let typed = if is_key {
        key().prop_map(Json::Str).boxed()
    } else {
        number().prop_map(Json::Int).boxed()
    };
    prop_oneof![
        6 => typed,
        1 => key().prop_map(Json::Str),
        1 => number().prop_map(Json::Int),
        1 => ((i64::MAX as u64 + 1)..=u64::MAX).prop_map(Json::BigInt),
        1 => prop_oneof![
            Just(500.0),
            Just(1e21),
            Just(1e300),
            Just(0.5),
            Just(-2.5),
            Just(1.0),
            any::<f64>().prop_filter("JSON has no NaN or Infinity", |f| f.is_finite()),
        ]
        .prop_map(Json::Float),
        1 => any::<bool>().prop_map(Json::Bool),
        1 => Just(Json::Null),
        1 => Just(Json::Array),
        1 => Just(Json::Object),
    ]
    .boxed()
}

/// An event object: each field present most of the time, sometimes an extra one.
fn json_object() -> BoxedStrategy<BTreeMap<String, Json>> {
    (
        prop::option::weighted(0.9, json_value(true)),
        prop::option::weighted(0.9, json_value(true)),
        prop::option::weighted(0.9, json_value(false)),
        prop::option::weighted(0.9, json_value(false)),
        prop::option::weighted(
            0.1,
            (
                prop::sample::select(vec!["currency", "Amount", "__proto__", "", "amount "]),
                json_value(false),
            ),
        ),
    )
        .prop_map(|(s, e, a, n, extra)| {
            let mut map = BTreeMap::new();
            for ((_, name), value) in FIELDS.iter().zip([s, e, a, n]) {
                if let Some(v) = value {
                    map.insert(name.to_string(), v);
                }
            }
            if let Some((name, v)) = extra {
                map.insert(name.to_string(), v);
            }
            map
        })
        .boxed()
}

fn to_text(fields: &BTreeMap<String, Json>, pretty: bool) -> String {
    let value = Value::Object(
        fields
            .iter()
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect(),
    );
    if pretty {
        serde_json::to_string_pretty(&value).expect("serialises")
    } else {
        value.to_string()
    }
}

/// Any text at all, junk made of JSON's own characters, and JSON that is
/// not an object. Boxed: the composed strategies are deep enough to
/// overflow a debug-build test thread otherwise.
fn any_text() -> BoxedStrategy<String> {
    prop_oneof![
        any::<String>().boxed(),
        "[\\[\\]{}\":,0-9a-z .eE+-]{0,40}".boxed(),
        json_value(false)
            .prop_map(|v| v.to_value().to_string())
            .boxed(),
    ]
    .boxed()
}

/// An event object with one of its fields written a second time.
fn repeated_field() -> BoxedStrategy<(String, String)> {
    (
        json_object(),
        prop::sample::select(vec!["source", "event_id", "account_id", "amount", "extra"]),
    )
        .prop_map(|(fields, repeated)| {
            let mut fields = fields;
            fields.entry(repeated.to_string()).or_insert(Json::Int(1));
            let text = to_text(&fields, false);
            let body = text.strip_suffix('}').expect("an object");
            (format!("{body},\"{repeated}\":2}}"), repeated.to_string())
        })
        .boxed()
}

// ---- The properties ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 4_000, ..ProptestConfig::default() })]

    /// Typed values (what the wasm facade passes on): 4,000 inputs.
    #[test]
    fn typed_values_are_judged_by_the_rules(
        source in key(), event_id in key(), account_id in number(), amount in number(),
    ) {
        let result = Event::new(source.clone(), event_id.clone(), account_id, amount);
        agree(&result, judge_typed(&source, &event_id, account_id, amount))?;
        if let Ok(event) = result {
            // Never trimmed, never normalised.
            prop_assert_eq!(event.source(), source.as_str());
            prop_assert_eq!(event.event_id(), event_id.as_str());
        }
    }

    /// Text (what the CLI passes on): 4,000 inputs.
    #[test]
    fn text_is_judged_by_the_rules(
        source in key(), event_id in key(), account_id in number_text(), amount in number_text(),
    ) {
        let result = Event::from_text(&source, &event_id, &account_id, &amount);
        agree(&result, judge_text(&source, &event_id, &account_id, &amount))?;
    }

    /// JSON text (the paste box): 4,000 objects, compact or pretty-printed.
    #[test]
    fn json_objects_are_judged_by_the_rules(fields in json_object(), pretty in any::<bool>()) {
        let text = to_text(&fields, pretty);
        let result = Event::from_json(&text);
        agree(&result, judge_json(&fields))?;
        if let Ok(event) = &result {
            // What was pasted is what is stored: the same bytes.
            let Some(Json::Str(source)) = fields.get("source") else { unreachable!() };
            prop_assert_eq!(event.source(), source.as_str());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// Any text at all in the paste box, and JSON that is not an object:
    /// refused as such, never a panic. 2,000 inputs.
    #[test]
    fn any_text_is_refused_cleanly_or_accepted(text in any_text()) {
        match Event::from_json(&text) {
            Ok(event) => {
                // Only a well-formed object with exactly the four fields gets here.
                let value: Value = serde_json::from_str(&text).expect("it was JSON");
                let object = value.as_object().expect("an object");
                prop_assert_eq!(object.len(), 4);
                prop_assert_eq!(object["source"].as_str(), Some(event.source()));
            }
            Err(err) => {
                prop_assert_eq!(err.kind(), "invalid_input");
                presentable(&err)?;
                let code = err.report().code;
                match serde_json::from_str::<Value>(&text) {
                    Err(_) => prop_assert_eq!(code, "not_json"),
                    Ok(v) if !v.is_object() => prop_assert_eq!(code, "not_object"),
                    Ok(_) => prop_assert_ne!(code, "not_json"),
                }
            }
        }
    }

    /// A field written twice is refused as such, whatever else is wrong:
    /// parsers disagree on which value counts. 2,000 inputs.
    #[test]
    fn a_repeated_field_is_refused((text, repeated) in repeated_field()) {
        let err = Event::from_json(&text).expect_err("a repeated field");
        let report = err.report();
        prop_assert_eq!((report.field, report.code), (Some(Field::EVENT), "duplicate_field"));
        prop_assert_eq!(&report.params["name"], &format!("{repeated:?}"));
        presentable(&err)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// Valid and invalid events, mixed, delivered twice each into a real
    /// (in-memory) database: the valid ones are stored byte for byte and
    /// credited once; the rest never reach it. 500 sequences of up to 12
    /// events (about 3,000 more inputs).
    #[test]
    fn valid_events_are_stored_exactly_and_applied_once(
        inputs in prop::collection::vec((key(), key(), 1i64..=3, number()), 1..12),
    ) {
        let mut conn = db::open(":memory:", Mode::Create, DEFAULT_BUSY_TIMEOUT).expect("open");
        schema::init(&mut conn, &[1, 2, 3]).expect("accounts");
        // (source, event_id) → (account_id, amount) of its first application.
        let mut expected: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
        for (source, event_id, account_id, amount) in inputs {
            let Ok(event) = Event::new(source.clone(), event_id.clone(), account_id, amount) else {
                prop_assert!(judge_typed(&source, &event_id, account_id, amount).is_err());
                continue;
            };
            let key = (source, event_id);
            for attempt in 0..2 {
                let answer = apply(&conn, &event, None);
                match expected.get(&key) {
                    None => {
                        prop_assert!(matches!(answer, Ok(Outcome::Applied(_))), "{:?}", answer);
                        expected.insert(key.clone(), (account_id, amount));
                    }
                    Some(&first) if first == (account_id, amount) => {
                        prop_assert!(matches!(answer, Ok(Outcome::Duplicate(_))), "attempt {}: {:?}", attempt, answer);
                    }
                    Some(_) => {
                        prop_assert!(matches!(answer, Err(Error::PayloadConflict { .. })), "{:?}", answer);
                    }
                }
            }
        }
        let snapshot = tables::snapshot(&conn).expect("tables");
        let stored: BTreeMap<(String, String), (i64, i64)> = snapshot
            .inbox
            .iter()
            .map(|row| ((row.source.clone(), row.event_id.clone()), (row.account_id, row.amount)))
            .collect();
        prop_assert_eq!(&stored, &expected, "the inbox holds exactly the valid events, byte for byte");
        for account in &snapshot.accounts {
            let credits: i64 = expected.values().filter(|(a, _)| *a == account.id).map(|(_, n)| n).sum();
            prop_assert_eq!(account.balance, credits, "one credit per event, account {}", account.id);
        }
    }
}

/// The catalogue of the issue, named one by one (the generators above cover
/// them by chance; these make sure each is tried on every run).
#[test]
fn the_named_catalogue() {
    let ok = |s: &str, e: &str| Event::new(s, e, 1, 5);
    // (name, what the constructor said, the expected refusal or None for valid)
    type Case = (
        &'static str,
        Result<Event, Error>,
        Option<(Field, &'static str)>,
    );
    let cases: Vec<Case> = vec![
        ("empty id", ok("s", ""), Some((Field::EVENT_ID, "empty"))),
        (
            "whitespace id",
            ok("s", " \t "),
            Some((Field::EVENT_ID, "whitespace_only")),
        ),
        (
            "256 bytes",
            ok(&"a".repeat(256), "e"),
            Some((Field::SOURCE, "too_long")),
        ),
        (
            "NUL",
            ok("s", "a\0b"),
            Some((Field::EVENT_ID, "control_char")),
        ),
        (
            "control",
            ok("s\u{7}", "e"),
            Some((Field::SOURCE, "control_char")),
        ),
        ("emoji", ok("🦀", "👍🏽"), None),
        (
            "emoji joined by U+200D",
            ok("🦀", "👩‍👩‍👧‍👦"),
            Some((Field::EVENT_ID, "invisible_char")),
        ),
        (
            "zero width space",
            ok("s\u{200B}", "e"),
            Some((Field::SOURCE, "invisible_char")),
        ),
        ("RTL", ok("שלום", "مرحبا"), None),
        ("HTML", ok("<img src=x onerror=alert(1)>", "<script>"), None),
        ("SQL", ok("'; DROP TABLE inbox; --", "1 OR 1=1"), None),
        (
            "amount 0",
            Event::new("s", "e", 1, 0),
            Some((Field::AMOUNT, "out_of_range")),
        ),
        (
            "amount -1",
            Event::new("s", "e", 1, -1),
            Some((Field::AMOUNT, "out_of_range")),
        ),
        (
            "amount 10^9+1",
            Event::new("s", "e", 1, MAX_AMOUNT + 1),
            Some((Field::AMOUNT, "out_of_range")),
        ),
        (
            "account 0",
            Event::new("s", "e", 0, 5),
            Some((Field::ACCOUNT_ID, "out_of_range")),
        ),
        (
            "account -1",
            Event::new("s", "e", -1, 5),
            Some((Field::ACCOUNT_ID, "out_of_range")),
        ),
        (
            "account 2^53",
            Event::new("s", "e", 1 << 53, 5),
            Some((Field::ACCOUNT_ID, "out_of_range")),
        ),
        (
            "amount 1.5 (text)",
            Event::from_text("s", "e", "1", "1.5"),
            Some((Field::AMOUNT, "not_canonical_integer")),
        ),
        (
            "amount \"500\" (JSON)",
            Event::from_json(r#"{"source":"s","event_id":"e","account_id":1,"amount":"500"}"#),
            Some((Field::AMOUNT, "wrong_type")),
        ),
        (
            "amount 1e21 (JSON)",
            Event::from_json(r#"{"source":"s","event_id":"e","account_id":1,"amount":1e21}"#),
            Some((Field::AMOUNT, "out_of_range")),
        ),
        (
            "amount null (JSON)",
            Event::from_json(r#"{"source":"s","event_id":"e","account_id":1,"amount":null}"#),
            Some((Field::AMOUNT, "wrong_type")),
        ),
        (
            "missing field (JSON)",
            Event::from_json(r#"{"source":"s","event_id":"e","account_id":1}"#),
            Some((Field::AMOUNT, "missing_field")),
        ),
        (
            "extra field (JSON)",
            Event::from_json(r#"{"source":"s","event_id":"e","account_id":1,"amount":5,"x":0}"#),
            Some((Field::EVENT, "unexpected_field")),
        ),
        (
            "repeated field (JSON)",
            Event::from_json(
                r#"{"source":"s","event_id":"e","account_id":1,"amount":5,"amount":500}"#,
            ),
            Some((Field::EVENT, "duplicate_field")),
        ),
    ];
    for (name, result, expected) in cases {
        match (result, expected) {
            (Ok(_), None) => {}
            (Err(err), Some((field, code))) => {
                let report = err.report();
                assert_eq!((report.field, report.code), (Some(field), code), "{name}");
                presentable(&err).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}
