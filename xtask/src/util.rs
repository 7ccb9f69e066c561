//! Small helpers: where the repository is, finding programs, running commands.

use anyhow::{bail, Context, Result};
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;

/// When this xtask began (set by [`started`], else by the first [`say`]).
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Notes the time xtask began: every [`say`] line shows the seconds since, so a run's log says
/// where its time went (`xtask 83.2s: $ cargo clippy …`).
pub fn started() {
    STARTED.get_or_init(std::time::Instant::now);
}

/// Prints a progress or status line on stderr, prefixed so it stands out from tool output, with
/// the seconds since xtask began.
pub fn say(msg: impl std::fmt::Display) {
    let seconds = STARTED
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64();
    eprintln!("xtask {seconds:.1}s: {msg}");
}

/// The repository root (the directory holding the root `Cargo.toml`).
pub fn root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// `cargo`, the same one that started us when run through `cargo xtask`.
pub fn cargo() -> Command {
    cmd(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// A command for `program`, run from the repository root.
pub fn cmd(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(root());
    cmd
}

/// Looks `name` up on `PATH`, like `command -v`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt;
            let m = std::fs::metadata(candidate);
            m.is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Whether we run as root (then `apt-get` may be used).
pub fn is_root() -> bool {
    output_of(Command::new("id").arg("-u")).as_deref() == Some("0")
}

/// Every file under `dir` for which `keep` says so, in a stable order; `node_modules` left out.
pub fn files_under(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("listing {}", d.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "node_modules") {
                    todo.push(path);
                }
            } else if keep(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Human-readable form of a command line, for messages.
pub fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        let arg = arg.to_string_lossy();
        s.push(' ');
        if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '\'') {
            s.push_str(&format!("{arg:?}"));
        } else {
            s.push_str(&arg);
        }
    }
    s
}

/// Runs a command with inherited stdio; fails if it cannot start or exits non-zero.
pub fn run(cmd: &mut Command) -> Result<()> {
    say(format!("$ {}", show(cmd)));
    let status = cmd
        .status()
        .with_context(|| format!("could not start `{}`", show(cmd)))?;
    if !status.success() {
        bail!("`{}` failed ({status})", show(cmd));
    }
    Ok(())
}

/// Runs a command (shown first) with stdin closed and stderr shown; fails if it cannot start or
/// exits non-zero, else returns its stdout.
pub fn stdout_of(cmd: &mut Command) -> Result<String> {
    say(format!("$ {}", show(cmd)));
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("could not start `{}`", show(cmd)))?;
    if !out.status.success() {
        bail!("`{}` failed ({})", show(cmd), out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs a command quietly and returns its trimmed stdout if it succeeded.
pub fn output_of(cmd: &mut Command) -> Option<String> {
    let out = cmd
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What a command printed, captured while it was also shown live ("tee").
pub struct Teed {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Teed {
    /// stdout then stderr, with terminal colour codes removed: the text to parse.
    pub fn text(&self) -> String {
        strip_ansi(&format!("{}\n{}", self.stdout, self.stderr))
    }
}

/// Runs a command, capturing its stdout and stderr and showing them: as they come if `live`,
/// else when it ends (so that two commands at once do not mix their lines).
pub fn run_tee(cmd: &mut Command, live: bool) -> Result<Teed> {
    say(format!("$ {}", show(cmd)));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start `{}`", show(cmd)))?;
    let out = child.stdout.take().context("no stdout pipe")?;
    let err = child.stderr.take().context("no stderr pipe")?;
    let out_thread = thread::spawn(move || copy_and_keep(out, live.then(std::io::stdout)));
    let err_thread = thread::spawn(move || copy_and_keep(err, live.then(std::io::stderr)));
    let status = child
        .wait()
        .with_context(|| format!("waiting for `{}`", show(cmd)))?;
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    if !live {
        print!("{stdout}");
        eprint!("{stderr}");
    }
    Ok(Teed {
        status,
        stdout,
        stderr,
    })
}

/// Everything `from` gives, also written to `to` (if any) as it comes.
fn copy_and_keep(mut from: impl Read, mut to: Option<impl Write>) -> String {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                // Showing output is best effort; a closed terminal must not stop the capture.
                if let Some(to) = &mut to {
                    let _ = to.write_all(&buf[..n]);
                    let _ = to.flush();
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Removes ANSI escape sequences (`ESC [ ... letter`) and carriage returns.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next_if_eq(&'[').is_some() {
                chars.by_ref().find(char::is_ascii_alphabetic);
            }
        } else if c != '\r' {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colour_codes() {
        assert_eq!(
            strip_ansi("\u{1b}[32mtest result: ok\u{1b}[0m.\r"),
            "test result: ok."
        );
    }

    #[test]
    fn shows_commands_readably() {
        let mut c = Command::new("cargo");
        c.args(["clippy", "--", "-D", "warnings", "a b"]);
        assert_eq!(show(&c), "cargo clippy -- -D warnings \"a b\"");
    }
}
