//! The workshop's handler, written in Rust by the participant: the file
//! `workshop/handler.rs` (or the one `INBOX_LAB_WORKSHOP` names, see
//! `build.rs`), compiled in with the feature `workshop`. It implements
//! [`StepHandler`] (the step-program shape of every handler the lab runs),
//! and is judged and listed as `"workshop"`: `inbox-lab judge --workshop`,
//! the page's race lab and handler panel. `cargo xtask workshop` judges it
//! and serves the page with it.
//!
//! Without the feature there is no workshop handler ([`handler`] is
//! `None`), and asking for it is a clear error ([`MISSING`]).

use super::rust::StepHandler;

/// The name it is listed by (the race lab, the handler panel, the judge).
pub const NAME: &str = "workshop";

/// Why there is no workshop handler in this build.
pub const MISSING: &str =
    "this build has no workshop handler: build with the feature `workshop` (cargo xtask workshop)";

#[cfg(feature = "workshop")]
mod participant {
    include!(env!("INBOX_LAB_WORKSHOP_FILE"));
}

/// The workshop's handler, when the crate is built with the feature
/// `workshop`.
pub fn handler() -> Option<&'static dyn StepHandler> {
    #[cfg(feature = "workshop")]
    {
        Some(&participant::HANDLER)
    }
    #[cfg(not(feature = "workshop"))]
    {
        None
    }
}

/// The workshop's handler to judge, or the `invalid_input` refusal (field
/// `handler`) saying [`MISSING`].
///
/// # Errors
/// Without the feature `workshop`.
pub fn contender() -> Result<super::Contender, crate::Error> {
    handler()
        .map(super::Contender::Rust)
        .ok_or_else(|| crate::Error::invalid(super::HANDLER, MISSING))
}

/// The handler behind `name`, if it is the workshop's and this build has
/// it.
pub fn named(name: &str) -> Option<&'static dyn StepHandler> {
    (name == NAME).then(handler).flatten()
}
