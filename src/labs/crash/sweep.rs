//! The sweep's table: one row per crash point, and the summary line
//! (`{mode, crash_points, atomic, partial, lost_acknowledged}`).

use serde::Serialize;

use super::classify::{Recovery, Verdict};
use super::workload::JournalMode;
use crate::core::event::Field;
use crate::storage::iolog;

/// The input holding the verdicts a summary counts.
pub const OUTCOMES: Field = Field::new("outcomes");

crate::core::named::named! {
    /// What a sweep runs on: the page's stack (write coalescing over the
    /// counting shim), or one of the two controls — variants broken on purpose
    /// that a sweep which proves anything must catch.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Control("control") {
        /// No control: the page's stack, every crash point must be atomic.
        None => "none",
        /// Recovery with a lock check that always answers "someone else holds
        /// RESERVED" (sahpool before 0.3): the hot journal is never rolled
        /// back, so the sweep must find partial commits.
        BrokenLock => "broken-lock",
        /// Coalescing that lets a commit return with its last bytes still held
        /// back (`Variant::HoldsCommits`):
        /// in WAL mode the sweep must find acknowledged events lost.
        HoldsCommits => "holds-commits",
    }
}

impl Control {
    /// The VFS the workload writes through.
    pub fn write_vfs(self) -> &'static str {
        match self {
            Control::None | Control::BrokenLock => iolog::COALESCED_VFS_NAME,
            Control::HoldsCommits => iolog::HOLDING_VFS_NAME,
        }
    }

    /// The VFS the database is reopened (recovered) through.
    pub fn recover_vfs(self) -> &'static str {
        match self {
            Control::None | Control::HoldsCommits => iolog::COALESCED_VFS_NAME,
            Control::BrokenLock => iolog::COALESCED_BROKEN_LOCK_VFS_NAME,
        }
    }

    /// Did the sweep say what it must? No control: nothing partial, nothing
    /// lost. A control: caught (something partial or lost).
    pub fn passed(self, summary: &Summary) -> bool {
        let clean = summary.partial == 0 && summary.lost_acknowledged == 0;
        match self {
            Control::None => clean,
            Control::BrokenLock | Control::HoldsCommits => !clean,
        }
    }
}

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
