//! The sweep's table: one row per crash point, and the summary line
//! (`{mode, crash_points, atomic, partial, lost_acknowledged}`).

use serde::Serialize;

use super::classify::{Recovery, Verdict};
use super::workload::JournalMode;

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
        let count = |o: Verdict| rows.iter().filter(|r| r.outcome == o).count();
        Summary {
            mode,
            crash_points: rows.len(),
            atomic: count(Verdict::Atomic),
            partial: count(Verdict::Partial),
            lost_acknowledged: count(Verdict::LostAcknowledged),
        }
    }
}
