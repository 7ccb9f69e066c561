//! The sweep's table: one row per crash point, and the summary line
//! (`{mode, crash_points, atomic, partial, lost_acknowledged}`).

use serde::Serialize;

use super::classify::{Recovery, Verdict};
use super::workload::JournalMode;
use crate::core::event::Field;

/// The input holding the verdicts a summary counts.
pub const OUTCOMES: Field = Field::new("outcomes");

/// One row of the sweep's table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Crash after this many operations.
    pub k: usize,
    /// The last operation that reached storage (`None` for k = 0).
    pub last: Option<crate::storage::iolog::IoOp>,
    pub outcome: Verdict,
    pub recovered: Recovery,
}

/// The sweep's summary line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub mode: JournalMode,
    pub crash_points: usize,
    pub atomic: usize,
    pub partial: usize,
    pub lost_acknowledged: usize,
}

impl Summary {
    pub fn of(mode: JournalMode, rows: &[Row]) -> Summary {
        Summary::count(mode, rows.iter().map(|r| r.outcome))
    }

    /// The summary of a sweep whose crash points had these verdicts (the
    /// browser's sweep: its rows come from several workers, one per kill).
    pub fn count(mode: JournalMode, verdicts: impl IntoIterator<Item = Verdict>) -> Summary {
        let mut summary = Summary {
            mode,
            crash_points: 0,
            atomic: 0,
            partial: 0,
            lost_acknowledged: 0,
        };
        for verdict in verdicts {
            summary.crash_points += 1;
            *match verdict {
                Verdict::Atomic => &mut summary.atomic,
                Verdict::Partial => &mut summary.partial,
                Verdict::LostAcknowledged => &mut summary.lost_acknowledged,
            } += 1;
        }
        summary
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    #[test]
    fn the_summary_counts_each_verdict_in_the_cli_s_key_order() {
        use Verdict::*;
        let s = Summary::count(
            JournalMode::Wal,
            [Atomic, Partial, Atomic, LostAcknowledged, Atomic],
        );
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"mode":"wal","crash_points":5,"atomic":3,"partial":1,"lost_acknowledged":1}"#
        );
        assert_eq!(Summary::count(JournalMode::Delete, []).crash_points, 0);
    }
}
