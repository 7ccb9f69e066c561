//! The labs: what the page builds on the core, each in its own folder. The
//! core ([`crate::core`]) never names them; they use its public face, a few
//! crate-internal helpers (`stored`, `named!`, `code_enum!`) and the storage shims.
//!
//! * [`handlers`] — a handler's one home: the article's, the mistakes it
//!   warns about, and the handler language (text, or Rust: the workshop's).
//! * [`race`] — any handler's deliveries raced statement by statement on
//!   real connections.
//! * [`judge`] — everything the lab knows run against one handler, counted.
//! * [`crash`] — kill the handler at every storage operation of a commit,
//!   recover, check atomicity.
//! * [`scheme_ends`] — where the scheme ends: side effects and the outbox,
//!   business keys, retention.
//! * [`webhooks`] — signed webhooks (Standard Webhooks): verify who sent a
//!   delivery before the inbox sees it; deduplication does not prove
//!   authenticity.
//! * [`tools`] — the reader's tools around the tables: the SQL console,
//!   export and import, the article's scenario, query budgets.
//!
//! Each lab names its own input fields, refusal codes and crash points;
//! [`error_codes`] lists them all with the core's, for the translations.

pub mod crash;
pub mod handlers;
pub mod judge;
pub mod race;
pub mod scheme_ends;
pub mod tools;
pub mod verdicts;
pub mod webhooks;

/// Every `(kind, code)` pair a report can carry — the core's
/// ([`crate::core::error::codes`]) and every lab's refusal codes (under
/// `invalid_input`, and the webhooks' `unauthorized` and `payload_too_large`;
/// a handler text's own mistakes are said by `ParseError`) — for translation checks (`errorCodes()` in the wasm
/// facade, `tests/e2e/unit-i18n.test.mjs`).
///
/// # Example
/// ```
/// let all = inbox_lab::labs::error_codes();
/// assert!(all.contains(&("storage", "full")));
/// assert!(all.contains(&("invalid_input", "sql_writes")));
/// ```
pub fn error_codes() -> Vec<(&'static str, &'static str)> {
    fn invalid<C: crate::core::error::Code>(codes: &[C]) -> Vec<(&'static str, &'static str)> {
        codes
            .iter()
            .map(|&c| ("invalid_input", c.as_str()))
            .collect()
    }
    let mut all = crate::core::error::codes();
    all.extend(invalid(&tools::console::ConsoleCode::ALL));
    all.extend(invalid(&tools::transfer::ImportCode::ALL));
    all.extend(invalid(&scheme_ends::business::BusinessCode::ALL));
    all.extend(invalid(&scheme_ends::retention::RetentionCode::ALL));
    all.extend(invalid(&judge::JudgeCode::ALL));
    all.extend(webhooks::codes());
    all
}
