// The same tests run natively and, under `wasm-pack test`, in the browser:
// the verification must not depend on the target. The property test is
// native only (proptest is a native dev-dependency).
#[cfg(target_family = "wasm")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::*;
use crate::core::Event;

/// The Standard Webhooks test vector, from the specification repository's
/// libraries (standard-webhooks/standard-webhooks,
/// `libraries/php/tests/WebhookTest.php`, `testSignFunctionWorks`; the
/// same values appear in its other libraries' tests). Checked independently
/// with Python's `hmac` before being written here.
mod vector {
    pub(crate) const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    pub const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    pub(crate) const TIMESTAMP: i64 = 1_614_265_330;
    pub(crate) const BODY: &[u8] = br#"{"test": 2432232314}"#;
    pub(crate) const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
}

/// The Rust library's own vector (`libraries/rust/src/lib.rs`, `test_sign`).
mod rust_vector {
    pub(crate) const SECRET: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    pub const ID: &str = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    pub(crate) const TIMESTAMP: i64 = 1_649_367_553;
    pub(crate) const BODY: &[u8] = br#"{"email":"test@example.com","username":"test_user"}"#;
    pub(crate) const SIGNATURE: &str = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";
}

const NOW: i64 = 1_700_000_000;
const NOW_TEXT: &str = "1700000000";
const SOURCE: &str = "provider-a";
const ID: &str = "evt-1";
const BODY: &[u8] = br#"{"account_id": 1, "amount": 500}"#;

fn secret(byte: u8) -> Secret {
    Secret::from_bytes(&[byte; 32]).unwrap()
}

/// One secret for `provider-a` (key of 1s), one for `provider-b` (2s).
fn keyring() -> Vec<(String, Secret)> {
    vec![(SOURCE.into(), secret(1)), ("provider-b".into(), secret(2))]
}

/// A request for `provider-a` signed with its secret at `NOW`.
struct Case {
    source: &'static str,
    id: Option<String>,
    timestamp: Option<String>,
    signature: Option<String>,
    body: Vec<u8>,
}

impl Case {
    fn signed() -> Case {
        Case {
            source: SOURCE,
            id: Some(ID.into()),
            timestamp: Some(NOW_TEXT.into()),
            signature: Some(sign(&secret(1), ID, NOW, BODY)),
            body: BODY.to_vec(),
        }
    }

    /// Signed with `key` over this id, timestamp and body.
    fn signed_with(key: &Secret, id: &str, timestamp: i64, body: &[u8]) -> Case {
        Case {
            source: SOURCE,
            id: Some(id.into()),
            timestamp: Some(timestamp.to_string()),
            signature: Some(sign(key, id, timestamp, body)),
            body: body.to_vec(),
        }
    }

    fn verify_with(&self, secrets: &[(String, Secret)], now: i64) -> Result<Verified, Refusal> {
        let request = Request {
            source: self.source,
            id: self.id.as_deref(),
            timestamp: self.timestamp.as_deref(),
            signature: self.signature.as_deref(),
            body: &self.body,
        };
        verify(secrets, &request, now, DEFAULT_TOLERANCE_SECS)
    }

    fn verify(&self) -> Result<Verified, Refusal> {
        self.verify_with(&keyring(), NOW)
    }
}

/// `(status, kind, code)` of a refusal, or `(200, "verified", "")`.
fn outcome(r: &Result<Verified, Refusal>) -> (u16, &'static str, &'static str) {
    match r {
        Ok(_) => (200, "verified", ""),
        Err(refusal) => (refusal.http_status(), refusal.kind(), refusal.code()),
    }
}

const OK: (u16, &str, &str) = (200, "verified", "");

fn unauthorized(code: &'static str) -> (u16, &'static str, &'static str) {
    (401, "unauthorized", code)
}

fn invalid(code: &'static str) -> (u16, &'static str, &'static str) {
    (400, "invalid_input", code)
}

#[test]
fn a_valid_signature_yields_the_event_of_the_verified_source() {
    let verified = Case::signed().verify().unwrap();
    assert_eq!(verified.event(), &Event::new(SOURCE, ID, 1, 500).unwrap());
    assert_eq!(verified.timestamp_secs(), NOW);
    assert_eq!(verified.secret_at(), 0);
}

#[test]
fn the_table_of_cases() {
    let tolerance = i64::try_from(DEFAULT_TOLERANCE_SECS).unwrap();
    let other_key = secret(9);
    let b_key = secret(2);
    let good = sign(&secret(1), ID, NOW, BODY);
    let good_tag = good.strip_prefix("v1,").unwrap().to_string();
    let cases: Vec<(&str, Case, (u16, &str, &str))> = vec![
        ("valid", Case::signed(), OK),
        // Secrets.
        (
            "wrong secret",
            Case::signed_with(&other_key, ID, NOW, BODY),
            unauthorized("signature_mismatch"),
        ),
        (
            "another source's secret",
            Case::signed_with(&b_key, ID, NOW, BODY),
            unauthorized("signature_mismatch"),
        ),
        (
            "unknown source",
            Case {
                source: "provider-z",
                ..Case::signed()
            },
            unauthorized("unknown_source"),
        ),
        // Tampering: each signed part changed after signing.
        (
            "tampered body",
            Case {
                body: br#"{"account_id": 1, "amount": 900}"#.to_vec(),
                ..Case::signed()
            },
            unauthorized("signature_mismatch"),
        ),
        (
            "tampered id",
            Case {
                id: Some("evt-2".into()),
                ..Case::signed()
            },
            unauthorized("signature_mismatch"),
        ),
        (
            "tampered timestamp",
            Case {
                timestamp: Some((NOW - 1).to_string()),
                ..Case::signed()
            },
            unauthorized("signature_mismatch"),
        ),
        // The window: exactly at the tolerance passes, one second beyond fails.
        (
            "old, at the tolerance",
            Case::signed_with(&secret(1), ID, NOW - tolerance, BODY),
            OK,
        ),
        (
            "stale, one second beyond",
            Case::signed_with(&secret(1), ID, NOW - tolerance - 1, BODY),
            unauthorized("stale_timestamp"),
        ),
        (
            "ahead, at the tolerance",
            Case::signed_with(&secret(1), ID, NOW + tolerance, BODY),
            OK,
        ),
        (
            "future, one second beyond",
            Case::signed_with(&secret(1), ID, NOW + tolerance + 1, BODY),
            unauthorized("future_timestamp"),
        ),
        (
            "timestamp 0",
            Case::signed_with(&secret(1), ID, 0, BODY),
            unauthorized("stale_timestamp"),
        ),
        // The signature header.
        (
            "missing signature",
            Case {
                signature: None,
                ..Case::signed()
            },
            unauthorized("missing_signature"),
        ),
        (
            "empty signature",
            Case {
                signature: Some(String::new()),
                ..Case::signed()
            },
            unauthorized("malformed_signature"),
        ),
        (
            "only spaces",
            Case {
                signature: Some("   ".into()),
                ..Case::signed()
            },
            unauthorized("malformed_signature"),
        ),
        (
            "no comma",
            Case {
                signature: Some(format!("v1{good_tag}")),
                ..Case::signed()
            },
            unauthorized("malformed_signature"),
        ),
        (
            "bare base64",
            Case {
                signature: Some(good_tag.clone()),
                ..Case::signed()
            },
            unauthorized("malformed_signature"),
        ),
        (
            "bad base64",
            Case {
                signature: Some("v1,not*base64!".into()),
                ..Case::signed()
            },
            unauthorized("malformed_signature"),
        ),
        (
            "base64 without padding",
            Case {
                signature: Some(format!("v1,{}", good_tag.trim_end_matches('='))),
                ..Case::signed()
            },
            unauthorized("malformed_signature"),
        ),
        (
            "a short valid base64 tag",
            Case {
                signature: Some("v1,bm9wZQ==".into()),
                ..Case::signed()
            },
            unauthorized("signature_mismatch"),
        ),
        (
            "the right tag under another version only",
            Case {
                signature: Some(format!("v1a,{good_tag}")),
                ..Case::signed()
            },
            unauthorized("no_v1_signature"),
        ),
        (
            "another version first, then v1",
            Case {
                signature: Some(format!("v1a,{good_tag} {good}")),
                ..Case::signed()
            },
            OK,
        ),
        (
            "double spaces between entries",
            Case {
                signature: Some(format!("v1,bm9wZQ==  {good}")),
                ..Case::signed()
            },
            OK,
        ),
        // The id and timestamp headers.
        (
            "missing id",
            Case {
                id: None,
                ..Case::signed()
            },
            invalid("missing_field"),
        ),
        (
            "empty id",
            Case::signed_with(&secret(1), "", NOW, BODY),
            invalid("empty"),
        ),
        (
            "blank id",
            Case::signed_with(&secret(1), "  ", NOW, BODY),
            invalid("whitespace_only"),
        ),
        (
            "id with a control character",
            Case::signed_with(&secret(1), "evt\n1", NOW, BODY),
            invalid("control_char"),
        ),
        (
            "id over 255 bytes",
            Case::signed_with(&secret(1), &"e".repeat(256), NOW, BODY),
            invalid("too_long"),
        ),
        (
            "id of 255 bytes",
            Case::signed_with(&secret(1), &"e".repeat(255), NOW, BODY),
            OK,
        ),
        (
            "missing timestamp",
            Case {
                timestamp: None,
                ..Case::signed()
            },
            invalid("missing_field"),
        ),
        (
            "empty timestamp",
            Case {
                timestamp: Some(String::new()),
                ..Case::signed()
            },
            invalid("empty"),
        ),
        (
            "non-numeric timestamp",
            Case {
                timestamp: Some("yesterday".into()),
                ..Case::signed()
            },
            invalid("not_canonical_integer"),
        ),
        (
            "timestamp with a leading zero",
            Case {
                timestamp: Some(format!("0{NOW_TEXT}")),
                ..Case::signed()
            },
            invalid("not_canonical_integer"),
        ),
        (
            "timestamp in milliseconds-with-a-point",
            Case {
                timestamp: Some(format!("{NOW_TEXT}.0")),
                ..Case::signed()
            },
            invalid("not_canonical_integer"),
        ),
        (
            "negative timestamp",
            Case {
                timestamp: Some("-5".into()),
                ..Case::signed()
            },
            invalid("out_of_range"),
        ),
        (
            "timestamp past i64",
            Case {
                timestamp: Some("99999999999999999999".into()),
                ..Case::signed()
            },
            invalid("out_of_range"),
        ),
        // The source (the URL's).
        (
            "blank source",
            Case {
                source: " ",
                ..Case::signed()
            },
            invalid("whitespace_only"),
        ),
        // The body: size first, then (after the signature) strict JSON.
        (
            "body over the limit",
            Case::signed_with(&secret(1), ID, NOW, &vec![b' '; MAX_BODY_BYTES + 1]),
            (413, "payload_too_large", "body_too_large"),
        ),
        (
            "body over the limit, unsigned",
            Case {
                signature: None,
                body: vec![b'x'; MAX_BODY_BYTES + 1],
                ..Case::signed()
            },
            (413, "payload_too_large", "body_too_large"),
        ),
        (
            "body at the limit (spaces around the object)",
            {
                let mut body = BODY.to_vec();
                body.resize(MAX_BODY_BYTES, b' ');
                Case::signed_with(&secret(1), ID, NOW, &body)
            },
            OK,
        ),
        (
            "extra field",
            Case::signed_with(
                &secret(1),
                ID,
                NOW,
                br#"{"account_id": 1, "amount": 500, "note": "x"}"#,
            ),
            invalid("unexpected_field"),
        ),
        (
            "a source in the body",
            Case::signed_with(
                &secret(1),
                ID,
                NOW,
                br#"{"source": "provider-b", "account_id": 1, "amount": 500}"#,
            ),
            invalid("unexpected_field"),
        ),
        (
            "an event_id in the body",
            Case::signed_with(
                &secret(1),
                ID,
                NOW,
                br#"{"event_id": "evt-9", "account_id": 1, "amount": 500}"#,
            ),
            invalid("unexpected_field"),
        ),
        (
            "string amount",
            Case::signed_with(
                &secret(1),
                ID,
                NOW,
                br#"{"account_id": 1, "amount": "500"}"#,
            ),
            invalid("wrong_type"),
        ),
        (
            "decimal amount",
            Case::signed_with(
                &secret(1),
                ID,
                NOW,
                br#"{"account_id": 1, "amount": 500.0}"#,
            ),
            invalid("decimal_or_exponent"),
        ),
        (
            "zero amount",
            Case::signed_with(&secret(1), ID, NOW, br#"{"account_id": 1, "amount": 0}"#),
            invalid("out_of_range"),
        ),
        (
            "missing amount",
            Case::signed_with(&secret(1), ID, NOW, br#"{"account_id": 1}"#),
            invalid("missing_field"),
        ),
        (
            "repeated amount",
            Case::signed_with(
                &secret(1),
                ID,
                NOW,
                br#"{"account_id": 1, "amount": 1, "amount": 9}"#,
            ),
            invalid("duplicate_field"),
        ),
        (
            "an array",
            Case::signed_with(&secret(1), ID, NOW, b"[1, 500]"),
            invalid("not_object"),
        ),
        (
            "not JSON",
            Case::signed_with(&secret(1), ID, NOW, b"account_id=1&amount=500"),
            invalid("not_json"),
        ),
        (
            "not UTF-8",
            Case::signed_with(&secret(1), ID, NOW, b"{\"account_id\": 1, \xff}"),
            invalid("not_json"),
        ),
        (
            "empty body",
            Case::signed_with(&secret(1), ID, NOW, b""),
            invalid("not_json"),
        ),
    ];
    let mut failures = Vec::new();
    for (name, case, expected) in &cases {
        let got = outcome(&case.verify());
        if got != *expected {
            failures.push(format!("{name}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn nothing_but_size_and_header_syntax_is_read_before_the_signature() {
    // An unsigned body that is not even JSON, with a forged signature: the
    // answer is about the signature, never about the body.
    let forged = Case {
        signature: Some(format!("v1,{}", "A".repeat(43) + "=")),
        body: b"{not json".to_vec(),
        ..Case::signed()
    };
    assert_eq!(
        outcome(&forged.verify()),
        unauthorized("signature_mismatch")
    );
    // A stale delivery with a bad body: stale, not 400.
    let stale = Case {
        timestamp: Some("1".into()),
        body: b"[]".to_vec(),
        ..Case::signed()
    };
    assert_eq!(outcome(&stale.verify()), unauthorized("stale_timestamp"));
}

#[test]
fn rotation_either_secret_verifies_and_any_signature_may_match() {
    let old = secret(1);
    let new = secret(3);
    let both = vec![
        (SOURCE.to_string(), old.clone()),
        (SOURCE.to_string(), new.clone()),
    ];
    for (key, at) in [(&old, 0), (&new, 1)] {
        let verified = Case::signed_with(key, ID, NOW, BODY)
            .verify_with(&both, NOW)
            .unwrap();
        assert_eq!(verified.secret_at(), at);
        assert_eq!(verified.event().source(), SOURCE);
    }
    // Only the old secret is configured; the sender signs with both, the
    // old one second.
    let by_new = sign(&new, ID, NOW, BODY);
    let by_old = sign(&old, ID, NOW, BODY);
    let case = Case {
        signature: Some(format!("{by_new} {by_old}")),
        ..Case::signed()
    };
    let verified = case.verify_with(&[(SOURCE.to_string(), old)], NOW).unwrap();
    assert_eq!(verified.secret_at(), 0);
    // Neither configured: no match, whatever the count.
    let case = Case {
        signature: Some(format!("{by_new} {by_new}")),
        ..Case::signed()
    };
    let refused = case.verify_with(&keyring(), NOW).unwrap_err();
    assert_eq!(refused.code(), "signature_mismatch");
    assert_eq!(refused.params()["signatures"], "2");
    assert_eq!(refused.params()["secrets"], "1");
}

#[test]
fn the_source_is_the_secrets_never_the_bodys() {
    // Signed by provider-b's secret, sent to provider-a's URL: refused, not
    // credited to either.
    let case = Case::signed_with(&secret(2), ID, NOW, BODY);
    assert_eq!(outcome(&case.verify()), unauthorized("signature_mismatch"));
    // Sent to provider-b's URL: provider-b's event.
    let case = Case {
        source: "provider-b",
        ..case
    };
    assert_eq!(case.verify().unwrap().event().source(), "provider-b");
    // A body naming a source is refused even with a valid signature.
    let body = br#"{"account_id": 1, "amount": 500, "source": "provider-b"}"#;
    let refused = Case::signed_with(&secret(1), ID, NOW, body)
        .verify()
        .unwrap_err();
    let report = refused.report();
    assert_eq!(
        (report.code, report.field),
        ("unexpected_field", Some(fields::BODY))
    );
    assert_eq!(report.params["name"], "\"source\"");
    // Sources are compared byte for byte: "provider-a " has no secret.
    let case = Case {
        source: "provider-a ",
        ..Case::signed()
    };
    assert_eq!(outcome(&case.verify()), unauthorized("unknown_source"));
}

#[test]
fn the_specification_test_vector() {
    for (secret_text, id, timestamp, body, signature) in [
        (
            vector::SECRET,
            vector::ID,
            vector::TIMESTAMP,
            vector::BODY,
            vector::SIGNATURE,
        ),
        (
            rust_vector::SECRET,
            rust_vector::ID,
            rust_vector::TIMESTAMP,
            rust_vector::BODY,
            rust_vector::SIGNATURE,
        ),
    ] {
        let key = Secret::parse(secret_text).unwrap();
        assert_eq!(sign(&key, id, timestamp, body), signature);
        // `verify` accepts it at its own time, up to the check of the
        // payload (which is not an inbox-lab event): the refusal is about
        // the body, after the signature verified.
        let timestamp_text = timestamp.to_string();
        let request = Request {
            source: "vector",
            id: Some(id),
            timestamp: Some(&timestamp_text),
            signature: Some(signature),
            body,
        };
        let secrets = [("vector", key.clone())];
        let refused = verify(&secrets, &request, timestamp, DEFAULT_TOLERANCE_SECS).unwrap_err();
        assert_eq!(
            (refused.http_status(), refused.code()),
            (400, "unexpected_field"),
            "{refused}"
        );
        // The same vector signature over an inbox-lab body is of course not
        // valid; a fresh one with the same secret, id and time is.
        let body = br#"{"account_id": 7, "amount": 42}"#;
        let signature = sign(&key, id, timestamp, body);
        let request = Request {
            signature: Some(&signature),
            body,
            ..request
        };
        let verified = verify(&secrets, &request, timestamp, DEFAULT_TOLERANCE_SECS).unwrap();
        assert_eq!(verified.event(), &Event::new("vector", id, 7, 42).unwrap());
        // One second off in the signed timestamp and the vector fails.
        let off = (timestamp + 1).to_string();
        let request = Request {
            timestamp: Some(&off),
            ..request
        };
        assert!(verify(&secrets, &request, timestamp, DEFAULT_TOLERANCE_SECS).is_err());
    }
}

#[test]
fn the_vector_signature_verifies_as_a_signature() {
    // The vector's own body is not an event, so `verify` refuses it after
    // the signature check; that the refusal is a 400 and not a 401 is what
    // proves the signature matched. Check the converse too: with one byte
    // of the body changed, the answer is a 401.
    let key = Secret::parse(vector::SECRET).unwrap();
    let ts = vector::TIMESTAMP.to_string();
    let secrets = [("vector", key)];
    let mut body = vector::BODY.to_vec();
    let request = Request {
        source: "vector",
        id: Some(vector::ID),
        timestamp: Some(&ts),
        signature: Some(vector::SIGNATURE),
        body: &body,
    };
    let refused = verify(&secrets, &request, vector::TIMESTAMP, 0).unwrap_err();
    assert_eq!(refused.http_status(), 400);
    body[2] = b'T';
    let request = Request {
        source: "vector",
        id: Some(vector::ID),
        timestamp: Some(&ts),
        signature: Some(vector::SIGNATURE),
        body: &body,
    };
    let refused = verify(&secrets, &request, vector::TIMESTAMP, 0).unwrap_err();
    assert_eq!(refused.code(), "signature_mismatch");
}

#[test]
fn secrets_parse_and_format_strictly() {
    let key = Secret::parse(vector::SECRET).unwrap();
    assert_eq!(key.to_whsec(), vector::SECRET);
    assert_eq!(Secret::parse(&key.to_whsec()).unwrap(), key);
    assert_eq!(format!("{key:?}"), "Secret(24 bytes, redacted)");
    let b64 = |n: usize| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(vec![5u8; n])
    };
    for (text, code) in [
        (
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_string(),
            "wrong_prefix",
        ),
        ("whsec".to_string(), "wrong_prefix"),
        (
            "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_string(),
            "wrong_prefix",
        ),
        (
            "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_string(),
            "wrong_prefix",
        ),
        ("whsec_".to_string(), "empty_key"),
        ("whsec_!!!!".to_string(), "bad_base64"),
        (
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS".to_string(),
            "bad_base64",
        ),
        (
            " whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_string(),
            "wrong_prefix",
        ),
        (
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw ".to_string(),
            "bad_base64",
        ),
        (format!("whsec_{}", b64(23)), "key_too_short"),
        (format!("whsec_{}", b64(1)), "key_too_short"),
        (format!("whsec_{}", b64(65)), "key_too_long"),
    ] {
        let err = Secret::parse(&text).unwrap_err();
        let report = err.report();
        assert_eq!(
            (report.kind, report.code, report.field, report.http_status),
            ("invalid_input", code, Some(fields::SECRET), 400),
            "{text:?}"
        );
        // A message never repeats the secret.
        assert!(!report.message.contains("MfKQ9r8G"), "{report:?}");
    }
    for n in [Secret::MIN_BYTES, 32, Secret::MAX_BYTES] {
        assert_eq!(
            Secret::parse(&format!("whsec_{}", b64(n)))
                .unwrap()
                .key_len(),
            n
        );
    }
    assert_eq!(
        Secret::from_bytes(&[]).unwrap_err().report().code,
        "empty_key"
    );
    assert_eq!(
        Secret::from_bytes(&[0; 65]).unwrap_err().report().code,
        "key_too_long"
    );
}

#[test]
fn refusals_report_in_the_errors_wire_shape() {
    let samples = [
        Case {
            signature: None,
            ..Case::signed()
        }
        .verify(),
        Case {
            signature: Some("v1".into()),
            ..Case::signed()
        }
        .verify(),
        Case {
            signature: Some("v2,abc".into()),
            ..Case::signed()
        }
        .verify(),
        Case {
            source: "nobody",
            ..Case::signed()
        }
        .verify(),
        Case::signed_with(&secret(1), ID, 1, BODY).verify(),
        Case::signed_with(&secret(1), ID, NOW + 3600, BODY).verify(),
        Case::signed_with(&secret(7), ID, NOW, BODY).verify(),
        Case::signed_with(&secret(1), ID, NOW, &vec![b' '; MAX_BODY_BYTES + 1]).verify(),
        Case::signed_with(&secret(1), ID, NOW, b"{}").verify(),
        Case {
            timestamp: Some("x".into()),
            ..Case::signed()
        }
        .verify(),
    ];
    let listed = codes();
    let mut seen_401 = std::collections::BTreeSet::new();
    for result in samples {
        let refusal = result.unwrap_err();
        let report = refusal.report();
        let json = serde_json::to_value(&report).unwrap();
        for key in [
            "kind",
            "code",
            "message",
            "http_status",
            "retryable",
            "params",
        ] {
            assert!(json.get(key).is_some(), "{json}");
        }
        assert!(!report.retryable);
        assert_eq!(report.http_status, refusal.http_status());
        match report.http_status {
            401 => {
                assert_eq!(report.kind, "unauthorized");
                assert_eq!(report.field, None);
                seen_401.insert(report.code);
            }
            413 => assert_eq!(report.kind, "payload_too_large"),
            400 => {
                assert_eq!(report.kind, "invalid_input");
                assert!(report.field.is_some());
            }
            other => panic!("unexpected status {other}"),
        }
        if report.kind != "invalid_input" {
            assert!(listed.contains(&(report.kind, report.code)), "{report:?}");
        } else {
            assert!(
                crate::labs::error_codes().contains(&(report.kind, report.code)),
                "{report:?}"
            );
        }
        // Every param is mentioned by the sentence (the core's convention).
        for value in report.params.values() {
            assert!(report.message.contains(value.as_str()), "{report:?}");
        }
    }
    // Every 401 code was produced by some sample.
    let all_401: std::collections::BTreeSet<_> = AuthCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(seen_401, all_401);
}

#[test]
fn codes_are_unique_and_match_serde() {
    let all = codes();
    let unique: std::collections::BTreeSet<_> = all.iter().collect();
    assert_eq!(unique.len(), all.len());
    for code in AuthCode::ALL {
        assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
    }
    for code in SecretCode::ALL {
        assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
    }
    // The lab's codes are listed with everyone's, each pair once: no
    // collision with another lab's or the core's.
    let everyone = crate::labs::error_codes();
    for &(kind, code) in &all {
        let listed = everyone
            .iter()
            .filter(|&&pair| pair == (kind, code))
            .count();
        assert_eq!(listed, 1, "{kind}/{code}");
    }
}

#[cfg(not(target_family = "wasm"))]
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Which signed part a bit is flipped in.
    #[derive(Debug, Clone, Copy)]
    enum Part {
        Id,
        Timestamp,
        Body,
    }

    fn flip(bytes: &mut [u8], bit: usize) {
        let bit = bit % (bytes.len() * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Flipping any single bit of the id, the timestamp text or the
        /// body after signing never verifies: it is refused, as a
        /// signature mismatch, a timestamp out of the window, or a header
        /// that is malformed (an id or timestamp text that is no longer
        /// valid, or no longer UTF-8 text at all — which a header string
        /// cannot carry, so it never reaches `verify`).
        #[test]
        fn one_flipped_bit_never_verifies(
            part in prop_oneof![Just(Part::Id), Just(Part::Timestamp), Just(Part::Body)],
            bit in any::<usize>(),
            id in "[a-zA-Z0-9_-]{1,40}",
            account in 1i64..=1000,
            amount in 1i64..=1_000_000,
            skew in -300i64..=300,
        ) {
            let timestamp = NOW + skew;
            let body = format!(r#"{{"account_id": {account}, "amount": {amount}}}"#).into_bytes();
            let signature = sign(&secret(1), &id, timestamp, &body);
            let secrets = keyring();
            let verify_parts = |id: &[u8], ts: &[u8], body: &[u8]| -> Option<Result<Verified, Refusal>> {
                let id = std::str::from_utf8(id).ok()?;
                let ts = std::str::from_utf8(ts).ok()?;
                let request = Request {
                    source: SOURCE,
                    id: Some(id),
                    timestamp: Some(ts),
                    signature: Some(&signature),
                    body,
                };
                Some(verify(&secrets, &request, NOW, DEFAULT_TOLERANCE_SECS))
            };
            let (mut id_bytes, mut ts_bytes, mut body_bytes) =
                (id.clone().into_bytes(), timestamp.to_string().into_bytes(), body.clone());
            // Unflipped, it verifies: the property is not vacuous.
            let original = verify_parts(&id_bytes, &ts_bytes, &body_bytes);
            prop_assert!(matches!(original, Some(Ok(_))), "{original:?}");
            match part {
                Part::Id => flip(&mut id_bytes, bit),
                Part::Timestamp => flip(&mut ts_bytes, bit),
                Part::Body => flip(&mut body_bytes, bit),
            }
            match verify_parts(&id_bytes, &ts_bytes, &body_bytes) {
                None => {} // not UTF-8: no header string can hold it
                Some(Ok(v)) => prop_assert!(false, "a flipped bit verified: {v:?}"),
                Some(Err(refusal)) => {
                    let code = refusal.code();
                    prop_assert!(
                        matches!(refusal.http_status(), 400 | 401),
                        "{refusal}"
                    );
                    if matches!(part, Part::Body) {
                        // The body is only read after the signature.
                        prop_assert_eq!(code, "signature_mismatch");
                    }
                }
            }
        }
    }
}
