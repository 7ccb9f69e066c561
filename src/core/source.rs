//! The Rust a reader can read while it runs: `src/core/apply.rs`, embedded
//! in the build ([`APPLY_SOURCE`]), and where in it each [`Step`] of the
//! transaction is ([`step_lines`]). Step mode shows it beside its buttons
//! and marks the lines of the step that runs next.
//!
//! Invariant: the lines are found in the embedded text itself — the arm
//! `Step::Begin => {` … `}` of `Delivery::run` — so they can never point
//! into another version of the file than the one shown. A step whose arm
//! is not found (the file was reshaped) has no lines, and a test fails.

use crate::core::apply::Step;

/// The file, as a path in this repository.
pub const APPLY_PATH: &str = "src/core/apply.rs";

/// The file's text, as it was when this crate was built.
pub const APPLY_SOURCE: &str = include_str!("apply.rs");

/// Every step of the transaction, in the order they run.
pub const STEPS: [Step; 6] = Step::ALL;

/// The lines of [`APPLY_SOURCE`] (1-based, first and last included) of the
/// arm of `Delivery::run` that runs `step`; `None` if the file no longer
/// has that shape.
///
/// # Example
/// ```
/// use inbox_lab::core::source::{step_lines, APPLY_SOURCE};
/// use inbox_lab::Step;
/// let (first, _last) = step_lines(Step::Credit).unwrap();
/// let line = APPLY_SOURCE.lines().nth(first - 1).unwrap();
/// assert_eq!(line.trim(), "Step::Credit => {");
/// ```
pub fn step_lines(step: Step) -> Option<(usize, usize)> {
    let lines: Vec<&str> = APPLY_SOURCE.lines().collect();
    let run = lines
        .iter()
        .position(|line| line.trim_start().starts_with("fn run(&mut self"))?;
    let head = format!("Step::{step:?} => {{");
    let first = run + lines[run..].iter().position(|line| line.trim() == head)?;
    let indent = indent_of(lines[first]);
    let last = first
        + lines[first..]
            .iter()
            .position(|line| line.trim() == "}" && indent_of(line) == indent)?;
    Some((first + 1, last + 1))
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every step is found, in order, without overlapping, and its lines
    /// hold the SQL constants the step runs — the lines shown are the step's.
    #[test]
    fn every_step_has_its_own_lines_in_the_embedded_file() {
        let lines: Vec<&str> = APPLY_SOURCE.lines().collect();
        let mut previous_last = 0;
        for step in STEPS {
            let (first, last) = step_lines(step).unwrap_or_else(|| panic!("no lines for {step:?}"));
            assert!(
                first > previous_last,
                "{step:?} starts after the step before it"
            );
            assert!(last > first, "{step:?} spans more than its head");
            previous_last = last;
            let arm = lines[first - 1..last].join("\n");
            let constants = match step {
                Step::Begin => &["SQL_BEGIN"][..],
                Step::Insert => &["SQL_INSERT"],
                Step::ReadStored => &["SQL_READ_STORED"],
                Step::Credit => &["SQL_CREDIT"],
                Step::StoreReceipt => &["SQL_BUMP_SEQ", "SQL_WRITE_RECEIPT"],
                Step::Commit => &["SQL_COMMIT"],
            };
            for constant in constants {
                assert!(arm.contains(constant), "{step:?}'s lines run {constant}");
            }
            assert_eq!(step.statements().len(), constants.len());
        }
    }

    #[test]
    fn the_embedded_file_is_apply_rs() {
        assert!(APPLY_SOURCE.starts_with("//! The apply transaction"));
        assert!(APPLY_PATH.ends_with("apply.rs"));
    }
}
