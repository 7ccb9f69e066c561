//! Storage shims: SQLite VFSes that sit on top of the real one (the OS files
//! natively, the OPFS pool in the browser) to watch or change what reaches
//! storage.
//!
//! [`Shim`] and [`register`] are the base: the VFS vtable written once, every
//! call passed through unless a shim overrides it. [`FileKind`] and [`Op`]
//! are the vocabulary every shim reports in (which file, which call). The
//! shims themselves override only what they observe or change:
//!
//! * `iolog` (feature `labs`) — the crash lab's: counts the calls that change storage and
//!   can crash at any one of them; its control twin answers
//!   `xCheckReservedLock` wrongly on purpose.
//! * `coalesce` — merges adjacent writes into one: the page's storage (over the OPFS
//!   pool), proven by the crash lab, which runs on it; its control twin holds a commit's
//!   last bytes past the commit on purpose.
//!
//! Invariant: a shim changes no behaviour it does not state in its module
//! documentation; with nothing overridden, SQLite cannot tell it is there.

mod shim;

pub mod coalesce;
#[cfg(feature = "labs")]
pub mod iolog;

pub use shim::{register, register_on, Call, File, FileKind, Op, Shim};
