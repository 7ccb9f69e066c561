//! The `inbox-lab` binary run as a process, as workshop scripts and outside
//! checks run it: what it printed and the exit code. Shared by
//! `tests/cli.rs` and `tests/judge.rs` (each includes it with `#[path]`).

use std::process::{Command, Output};

use serde_json::Value;

/// What one run of the binary printed and returned.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `inbox-lab` with `args` and waits for it.
pub fn inbox_lab(args: &[&str]) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_inbox-lab"))
        .args(args)
        .output()
        .expect("run inbox-lab");
    Run {
        code: status.code().expect("exited, not killed"),
        stdout: String::from_utf8(stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(stderr).expect("UTF-8 stderr"),
    }
}

impl Run {
    /// The one JSON line on stdout.
    pub fn json(&self) -> Value {
        assert!(
            self.stdout.ends_with('\n') && self.stdout.lines().count() == 1,
            "expected one JSON line, got {:?} (stderr {:?})",
            self.stdout,
            self.stderr
        );
        serde_json::from_str(&self.stdout).expect("stdout is JSON")
    }
}
