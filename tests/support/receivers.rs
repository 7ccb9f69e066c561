//! Real receivers for `inbox-lab probe` to probe, each owned by the test that
//! starts it and stopped when dropped: the Python receivers of
//! examples/receivers/ (on SQLite or PostgreSQL), and a throwaway PostgreSQL
//! cluster. Shared by the tests/probe*.rs files (each includes it with `#[path]`).
#![allow(dead_code)] // each test file uses a part

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// The secret every reference receiver checks (the Standard Webhooks test vector's).
pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// How long a receiver or the cluster may take to start.
const START: Duration = Duration::from_secs(30);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Debian's Python, whose packages (python3-psycopg2) `cargo xtask setup`
/// installs; a `python3` earlier on PATH may be another one.
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").is_file() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// A child process killed and reaped when dropped.
pub struct Owned(Child);

impl Drop for Owned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One receiver process (examples/receivers/receiver.py) on a free port.
pub struct Receiver {
    _process: Owned,
    pub base: String,
}

impl Receiver {
    /// Starts `handler` on `db` (`sqlite:PATH` or a postgres:// URL) and
    /// waits until it listens.
    pub fn start(handler: &str, db: &str) -> Receiver {
        let mut child = Command::new(python())
            .arg(root().join("examples/receivers/receiver.py"))
            .args([
                "--handler",
                handler,
                "--db",
                db,
                "--secret",
                SECRET,
                "--port",
                "0",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a Python receiver");
        let stdout = child.stdout.take().expect("piped stdout");
        let process = Owned(child);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(START).unwrap_or_default();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("receiver {handler} did not start: {line:?} (see stderr)"))
            .to_owned();
        Receiver {
            _process: process,
            base,
        }
    }

    /// The URL deliveries go to.
    pub fn hooks(&self) -> String {
        format!("{}/hooks/provider-a", self.base)
    }
}

/// Two processes of one receiver sharing `db`, the second started once the
/// first has created the schema.
pub fn two(handler: &str, db: &str) -> [Receiver; 2] {
    let first = Receiver::start(handler, db);
    [first, Receiver::start(handler, db)]
}

/// What one probe run printed (its `--json` document) and its exit code.
pub struct Probed {
    pub code: i32,
    pub doc: Value,
    pub stderr: String,
}

impl Probed {
    pub fn first_failure(&self) -> Option<&str> {
        self.doc["first_failure"].as_str()
    }

    pub fn scenario(&self, name: &str) -> &Value {
        self.doc["scenarios"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == name))
            .unwrap_or_else(|| panic!("no scenario {name} in {}", self.doc))
    }

    /// The verdict words of every scenario, in order.
    pub fn verdicts(&self) -> Vec<(String, String)> {
        self.doc["scenarios"]
            .as_array()
            .map(|all| {
                all.iter()
                    .map(|s| {
                        let word = s["kind"].as_str().or(s["verdict"].as_str());
                        (s["name"].to_string(), word.unwrap_or("").to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Runs `inbox-lab probe --json` with `args`.
pub fn probe(args: &[&str]) -> Probed {
    let out = Command::new(env!("CARGO_BIN_EXE_inbox-lab"))
        .arg("probe")
        .args(args)
        .arg("--json")
        .output()
        .expect("run inbox-lab probe");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Probed {
        code: out.status.code().expect("exited, not killed"),
        doc: serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout:?}, stderr {stderr:?}")),
        stderr,
    }
}

/// A throwaway PostgreSQL cluster on a free port, owned by the test: its
/// data in a temporary directory, stopped and removed when dropped. As
/// root it runs as the `postgres` user (PostgreSQL refuses root).
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub url: String,
}

impl Postgres {
    pub fn start() -> Postgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is not installed (/usr/lib/postgresql): run `cargo xtask setup`")
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|b| b.join("initdb").is_file())
            .max()
            .expect("no /usr/lib/postgresql/*/bin/initdb: run `cargo xtask setup`");
        let dir = tempfile::tempdir().expect("temporary directory");
        let port = free_port();
        let d = dir.path().display().to_string();
        if is_root() {
            let ok = Command::new("chown")
                .args(["postgres", &d])
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown postgres {d}");
        }
        let pg = Postgres {
            bin,
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            dir,
        };
        pg.as_owner(&format!(
            "{} -D {d}/data -A trust -U postgres --no-sync >{d}/initdb.log 2>&1",
            pg.tool("initdb")
        ));
        pg.as_owner(&format!(
            "{} -D {d}/data -o '-k {d} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off' \
             -l {d}/log -w -t 30 start >/dev/null",
            pg.tool("pg_ctl")
        ));
        pg
    }

    /// A new, empty database of the cluster, as a URL.
    pub fn database(&self, name: &str) -> String {
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls).expect("connect");
        client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .expect("CREATE DATABASE");
        let server = self
            .url
            .rsplit_once('/')
            .map_or(&*self.url, |(server, _)| server);
        format!("{server}/{name}")
    }

    fn tool(&self, name: &str) -> String {
        self.bin.join(name).display().to_string()
    }

    fn as_owner(&self, script: &str) {
        let log = || std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
        assert!(
            owner_runs(script),
            "PostgreSQL: `{script}` failed; log: {}",
            log()
        );
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let d = self.dir.path().display();
        // No assert here: a drop during a failing test's unwinding must not panic.
        owner_runs(&format!(
            "{} -D {d}/data -m immediate -w stop >/dev/null",
            self.tool("pg_ctl")
        ));
    }
}

/// Runs `script` as the cluster's owner: `postgres` when we are root.
fn owner_runs(script: &str) -> bool {
    let status = if is_root() {
        Command::new("su")
            .args(["postgres", "-s", "/bin/sh", "-c", script])
            .status()
    } else {
        Command::new("sh").args(["-c", script]).status()
    };
    status.is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
