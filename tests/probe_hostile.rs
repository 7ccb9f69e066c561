#![cfg(all(not(target_family = "wasm"), feature = "labs"))]
//! `inbox-lab probe` against receivers that misbehave at the HTTP level —
//! never answering, dripping, garbage, a connection closed mid-answer, a
//! redirect, a 10 MB body — and against bad arguments: it always ends
//! within its deadlines, with exit 1 (the receiver is broken) or 2 (it
//! could not run) and a message that names what happened.

#[path = "support/receivers.rs"]
mod receivers;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use receivers::SECRET;

/// A TCP server on a free loopback port that treats every connection with
/// `serve` (after reading the request), stopped when dropped.
struct Hostile {
    url: String,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicUsize>,
    accept: Option<JoinHandle<()>>,
}

impl Hostile {
    fn start(serve: impl Fn(&mut TcpStream, &AtomicBool) + Send + Sync + 'static) -> Hostile {
        let serve = Arc::new(serve);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let (s, c) = (stop.clone(), connections.clone());
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let (s, serve) = (s.clone(), serve.clone());
                std::thread::spawn(move || {
                    read_request(&mut conn);
                    serve(&mut conn, &s);
                });
            }
        });
        Hostile {
            url: format!("http://{addr}/hooks/provider-a"),
            stop,
            connections,
            accept: Some(accept),
        }
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(addr) = self
            .url
            .strip_prefix("http://")
            .and_then(|u| u.split('/').next())
        {
            let _ = TcpStream::connect(addr); // wakes the accept loop
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Reads one request's head and body (by content-length), or gives up after a second.
fn read_request(conn: &mut TcpStream) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(1)));
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = conn.read(&mut buf) {
        if n == 0 {
            return;
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen).to_lowercase();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return;
            }
        }
    }
}

fn hold_until_stopped(stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the probe (human report) with short deadlines, killing it if it
/// outlives them by far: a hang fails the test instead of stalling it.
fn probe(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_inbox-lab"))
        .arg("probe")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run inbox-lab probe");
    let limit = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if Instant::now() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the probe hung: still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().expect("exited, not killed"), text)
}

fn probe_quickly(url: &str) -> (i32, String) {
    probe(&[
        url,
        "--secret",
        SECRET,
        "--timeout",
        "1",
        "--deadline",
        "20",
    ])
}

fn assert_says(code: i32, text: &str, want_code: i32, phrases: &[&str]) {
    assert_eq!(code, want_code, "{text}");
    for phrase in phrases {
        assert!(text.contains(phrase), "expected {phrase:?} in:\n{text}");
    }
}

#[test]
fn a_receiver_that_never_answers_is_broken_with_no_answer_within_the_timeout() {
    let h = Hostile::start(|_, stop| hold_until_stopped(stop));
    let (code, text) = probe_quickly(&h.url);
    assert_says(
        code,
        &text,
        1,
        &[
            "BROKEN at new_event",
            "no_answer",
            "no complete answer within 1.0 s",
        ],
    );
}

#[test]
fn a_receiver_that_answers_slowly_is_broken_by_the_request_timeout() {
    let h = Hostile::start(|conn, stop| {
        for byte in b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok" {
            if stop.load(Ordering::SeqCst) || conn.write_all(&[*byte]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    let (code, text) = probe_quickly(&h.url);
    assert_says(
        code,
        &text,
        1,
        &["BROKEN at new_event", "no complete answer within 1.0 s"],
    );
}

/// "200" to everything, with a body that means nothing: it accepts a body
/// stripped of its webhook-id, which its answer alone shows; the control
/// bytes of its answer reach the report escaped, not raw to the terminal.
#[test]
fn a_receiver_that_answers_200_garbage_to_everything_accepts_a_stripped_id() {
    let h = Hostile::start(|conn, _| {
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\n\x00\xff{]@#");
    });
    let (code, text) = probe_quickly(&h.url);
    assert_says(
        code,
        &text,
        1,
        &[
            "BROKEN at id_stripped_or_changed",
            "must be refused was accepted",
            "\\u{0}",
        ],
    );
    assert!(!text.contains('\0'), "{text:?}");
    // Unsigned, the forged and stale scenarios cannot be played, and say so.
    let (code, text) = probe(&[&h.url, "--unsigned", "--timeout", "1"]);
    assert_says(
        code,
        &text,
        1,
        &["skipped       forged_first", "needs --secret"],
    );
}

#[test]
fn a_receiver_that_answers_bytes_that_are_not_http_is_broken() {
    let h = Hostile::start(|conn, _| {
        let _ = conn.write_all(b"\x00\xffnot http at all\r\n\r\n");
    });
    let (code, text) = probe_quickly(&h.url);
    assert_says(code, &text, 1, &["BROKEN at new_event", "no_answer"]);
}

#[test]
fn a_receiver_that_closes_mid_answer_is_broken() {
    let h = Hostile::start(|conn, _| {
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"outc");
    });
    let (code, text) = probe_quickly(&h.url);
    assert_says(code, &text, 1, &["BROKEN at new_event", "no_answer"]);
}

/// A redirect is reported, and not followed: its target is never contacted.
#[test]
fn a_redirect_is_reported_and_not_followed() {
    let elsewhere = Hostile::start(|conn, _| {
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    });
    let answer = format!(
        "HTTP/1.1 302 Found\r\nlocation: {}\r\ncontent-length: 0\r\n\r\n",
        elsewhere.url
    );
    let h = Hostile::start(move |conn, _| {
        let _ = conn.write_all(answer.as_bytes());
    });
    let (code, text) = probe_quickly(&h.url);
    assert_says(
        code,
        &text,
        1,
        &["BROKEN at new_event", "302, a redirect", "follows none"],
    );
    assert_eq!(
        elsewhere.connections.load(Ordering::SeqCst),
        0,
        "the redirect's target was contacted"
    );
}

#[test]
fn a_10_mb_answer_is_cut_at_the_limit_and_reported() {
    let h = Hostile::start(|conn, _| {
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 10485760\r\n\r\n");
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..160 {
            if conn.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    let (code, text) = probe_quickly(&h.url);
    assert_says(
        code,
        &text,
        1,
        &["BROKEN at new_event", "larger than 65536 bytes"],
    );
}

#[test]
fn nothing_listening_means_it_could_not_run() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port"); // closed again: nothing listens there
    let (code, text) = probe_quickly(&format!("http://127.0.0.1:{port}/hooks/a"));
    assert_says(code, &text, 2, &["COULD NOT RUN", "connection refused"]);
}

/// Arguments are checked before anything is sent: a URL off this machine
/// (never contacted: the address is TEST-NET), a bad secret, a state file
/// that is not there, a missing secret.
#[test]
fn bad_arguments_mean_it_could_not_run_and_nothing_is_sent() {
    let h = Hostile::start(|conn, _| {
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    });
    let dir = tempfile::tempdir().expect("temporary directory");
    let template = dir.path().join("body.json");
    std::fs::write(&template, r#"{"amount": 5}"#).expect("write");
    let template = template.display().to_string();
    for (args, phrase) in [
        (
            vec!["http://192.0.2.1/hooks/a", "--secret", SECRET],
            "not this machine",
        ),
        (vec![h.url.as_str(), "--secret", "whsec_short"], "--secret"),
        (
            vec![
                h.url.as_str(),
                "--secret",
                SECRET,
                "--state",
                "sqlite:/nonexistent/x.db",
            ],
            "no such file",
        ),
        (
            vec![h.url.as_str(), "--secret", SECRET, "--state", "mysql://x"],
            "expected sqlite:FILE",
        ),
        (
            vec!["https://127.0.0.1/hooks/a", "--secret", SECRET],
            "https is not supported",
        ),
        (vec![h.url.as_str()], "--secret"),
        (
            vec![
                h.url.as_str(),
                "--secret",
                SECRET,
                "--body-template",
                &template,
            ],
            "it has no {account_id}",
        ),
    ] {
        let (code, text) = probe(&args);
        assert_says(code, &text, 2, &[phrase]);
    }
    assert_eq!(
        h.connections.load(Ordering::SeqCst),
        0,
        "something was sent"
    );
}

/// The whole run's deadline holds even when every request could wait longer.
#[test]
fn the_run_deadline_ends_a_run_that_would_take_longer() {
    let h = Hostile::start(|_, stop| hold_until_stopped(stop));
    let (code, text) = probe(&[
        &h.url,
        "--secret",
        SECRET,
        "--timeout",
        "30",
        "--deadline",
        "2",
    ]);
    assert_says(
        code,
        &text,
        2,
        &["COULD NOT RUN", "deadline (--deadline) passed"],
    );
}
