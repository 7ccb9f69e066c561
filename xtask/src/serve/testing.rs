//! What the server's tests share: a site to serve, and a raw HTTP client on real sockets.

use super::{is_timeout, start_with, Limits, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

// Real sockets against a server on port 0.

/// A temporary directory to serve, removed on drop.
pub(super) struct Site(pub(super) PathBuf);

pub(super) const INDEX: &str = "<!doctype html><title>inbox-lab test</title>\n";

impl Site {
    pub(super) fn new(name: &str) -> Site {
        let dir = std::env::temp_dir().join(format!("xtask-serve-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::write(dir.join("index.html"), INDEX).unwrap();
        std::fs::write(dir.join("www/app.js"), "console.log(1);\n").unwrap();
        std::fs::write(dir.join("secret.txt"), "not served\n").unwrap();
        Site(dir)
    }

    pub(super) fn serve(&self, limits: Limits) -> Server {
        start_with(&self.0, None, "127.0.0.1", 0, false, limits).unwrap()
    }
}

impl Server {
    /// Connections accepted and not yet finished.
    pub(super) fn in_flight(&self) -> usize {
        self.shared
            .in_flight
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Pages subscribed to the relay.
    pub(super) fn subscribers(&self) -> usize {
        self.shared.relay.subscriber_count()
    }

    /// Webhooks waiting for an answer.
    pub(super) fn pending(&self) -> usize {
        self.shared.relay.pending_count()
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Generous bound for anything that should happen "at once", on a loaded machine.
pub(super) const SOON: Duration = Duration::from_secs(20);

pub(super) fn connect(server: &Server) -> TcpStream {
    let stream = TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(SOON)).unwrap();
    stream
}

/// Sends `request`, returns everything the server answers until it closes (within
/// [`SOON`] in all, so an answer that never ends, like an event stream, fails the test).
pub(super) fn exchange(server: &Server, request: &[u8]) -> String {
    read_all(&mut send(server, request))
}

/// A new connection on which `request` has been sent.
pub(super) fn send(server: &Server, request: &[u8]) -> TcpStream {
    let mut stream = connect(server);
    stream.write_all(request).unwrap();
    stream
}

pub(super) fn read_all(stream: &mut TcpStream) -> String {
    let started = Instant::now();
    let (mut answer, mut chunk) = (Vec::new(), [0u8; 8192]);
    loop {
        let left = SOON.saturating_sub(started.elapsed());
        let got =
            |answer: &[u8]| String::from_utf8_lossy(&answer[..answer.len().min(2000)]).into_owned();
        assert!(
            !left.is_zero(),
            "no end of answer within {SOON:?}: {}",
            got(&answer)
        );
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            Err(e) if is_timeout(&e) => {} // the assertion above decides
            Err(e) => panic!("reading an answer: {e} (after {})", got(&answer)),
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

pub(super) fn status(response: &str) -> u16 {
    let line = response.lines().next().unwrap_or("");
    assert!(
        line.starts_with("HTTP/1.1 "),
        "not a response: {response:?}"
    );
    line[9..12].parse().unwrap()
}

pub(super) fn get(server: &Server, target: &str) -> String {
    exchange(
        server,
        format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes(),
    )
}

/// Polls `done` until it holds, for at most [`SOON`]; how long it took.
pub(super) fn wait_until(what: &str, done: impl Fn() -> bool) -> Duration {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < SOON, "not within {SOON:?}: {what}");
        thread::sleep(Duration::from_millis(10));
    }
    started.elapsed()
}
