//! The reader's tools around the tables.
//!
//! * [`console`] — the read-only SQL console.
//! * [`transfer`] — export the database; import a file by rebuilding its
//!   rows in a fresh database (the file's schema is never adopted).
//! * [`scenario`] — the article's scenario as a list of checks.
//! * [`budget`] — a step and time budget for SQL nobody here wrote (console
//!   queries, imported files).
//!
//! Invariant: SQL typed or supplied by a reader runs only here, on a
//! [`budget::Budget`], or as a handler text (`labs::handlers`) under the judge's deadline.

pub mod budget;
pub mod console;
pub mod scenario;
pub mod transfer;
