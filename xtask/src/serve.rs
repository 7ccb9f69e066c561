//! A small static file server for the page: `/` (index.html), `/www/**` and `/favicon.ico`.
//!
//! Used by `cargo xtask serve` and, on a free port in a background thread, by the end-to-end
//! layer of `cargo xtask test` and by `cargo xtask bench`.
//!
//! One thread accepts; each connection gets its own thread, answers one request and is closed
//! (`Connection: close`): no keep-alive, so no request waits behind another on a connection.
//! `GET` and `HEAD` only (anything else: 405). Every response carries
//! [`CONTENT_SECURITY_POLICY`].
//!
//! So that slow or hostile clients cannot pin it, the server has limits ([`Limits`]):
//!
//! - **Connections in flight**, 64 by default. At the cap the acceptor stops calling
//!   `accept`: new connections wait in the kernel's accept backlog and are served as soon as
//!   one in flight ends (if the backlog itself fills, the kernel drops the SYN and the client
//!   retries). This is what nginx (`worker_connections`), Apache (`MaxRequestWorkers`) and
//!   Go's `netutil.LimitListener` do. Answering 503 was the alternative, but a browser does
//!   not retry a 503 on a script or wasm load: a burst would break the page, where waiting
//!   only slows it down. Every connection in flight is bounded by the deadlines below, so the
//!   wait is bounded too.
//! - **One deadline for the whole request head**, 10 s from accept by default: request line
//!   and headers together. Each read waits only for what is left of it, so a client trickling
//!   a byte at a time cannot extend it. When it passes, a client that sent part of a head gets
//!   `408 Request Timeout` and the connection is closed; a connection that sent nothing is
//!   just closed (an idle or speculative browser connection must not receive an answer to a
//!   request it never made; Go's net/http does the same).
//! - **Head size**: [`MAX_HEAD_BYTES`] = 16 KiB, empty lines before the request line
//!   included; a larger head gets `431 Request Header Fields Too Large`.
//! - **A well-formed head**, else `400 Bad Request`: the request line must be
//!   `method SP target SP version` with single spaces, the method a token, the target in
//!   origin form (starts with `/`, visible ASCII only), the version `HTTP/1.0` to `HTTP/1.9`
//!   (`HTTP/2.0` too is refused, as Go does); every header line must be UTF-8 and
//!   `name: value` with a token name (so no whitespace before the colon and no obsolete line
//!   folding) and no control characters but tab in the value; and the head must end with an
//!   empty line, not with the client's end of stream. A byte that cannot be part of a request
//!   line is refused as soon as it arrives (a TLS handshake gets its 400 at once, not after
//!   the deadline). Lines may end with CRLF or a bare LF, and empty lines before the request
//!   line are skipped (RFC 9112 §2.2). A `Host` header is not required.
//! - **One deadline for the whole response**, 60 s by default: a client that reads a few
//!   bytes now and then cannot hold its connection for longer.
//!
//! After answering, the server half-closes the connection and reads and drops what the client
//! still sends (up to 64 KiB, for up to 2 s) before closing: closing with unread input would
//! make the kernel reset the connection, which can destroy the response before the client
//! reads it (the "lingering close" of Apache and nginx).

use crate::util::say;
use anyhow::{Context, Result};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Sent with every response.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The longest request head accepted (request line + headers); a longer one gets 431.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// How long, and how much, the server reads and drops after answering (lingering close).
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 64 * 1024;

/// The limits of a server (see the module comment); [`start`] uses the defaults.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections served at once; more wait in the accept backlog.
    pub max_connections: usize,
    /// From accept to the end of the request head.
    pub head_deadline: Duration,
    /// From the first byte of the response to the last.
    pub response_deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 64,
            head_deadline: Duration::from_secs(10),
            response_deadline: Duration::from_secs(60),
        }
    }
}

/// A running server; stops when [`Server::stop`] is called or it is dropped.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    #[cfg(test)]
    slots: Arc<Slots>,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    /// `http://host:port/`
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Serves until the process is stopped.
    pub fn wait(mut self) {
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }

    pub fn stop(self) {
        drop(self);
    }

    /// Connections accepted and not yet finished.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        *self.slots.lock()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

/// Counts the connections in flight. Only the acceptor adds one (after [`Slots::wait_for_room`]),
/// so it never goes over the cap; a connection gives its [`Slot`] back when its thread ends.
struct Slots {
    max: usize,
    used: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    fn lock(&self) -> MutexGuard<'_, usize> {
        self.used.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until fewer than `max` connections are in flight; `false` if `stop` is set first.
    fn wait_for_room(&self, stop: &AtomicBool, log: bool) -> bool {
        let mut used = self.lock();
        if *used >= self.max && log {
            say(format!(
                "serve: {} connections in flight; new ones wait until one ends",
                self.max
            ));
        }
        while *used >= self.max {
            if stop.load(Ordering::SeqCst) {
                return false;
            }
            used = self
                .freed
                .wait_timeout(used, Duration::from_millis(50))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        !stop.load(Ordering::SeqCst)
    }

    fn take(self: &Arc<Self>) -> Slot {
        *self.lock() += 1;
        Slot(Arc::clone(self))
    }
}

/// One connection in flight; given back when dropped (also if its thread panics or cannot start).
struct Slot(Arc<Slots>);

impl Drop for Slot {
    fn drop(&mut self) {
        *self.0.lock() -= 1;
        self.0.freed.notify_one();
    }
}

/// Starts serving `root` on `host:port` (port 0: any free port) with the default [`Limits`].
pub fn start(root: &Path, host: &str, port: u16, log: bool) -> Result<Server> {
    start_with(root, host, port, log, Limits::default())
}

/// [`start`] with other limits.
pub fn start_with(root: &Path, host: &str, port: u16, log: bool, limits: Limits) -> Result<Server> {
    let root = root
        .canonicalize()
        .with_context(|| format!("serving {}", root.display()))?;
    let bind = format_bind(host, port);
    let listener = TcpListener::bind(&bind).with_context(|| format!("cannot listen on {bind}"))?;
    let addr = listener
        .local_addr()
        .context("reading the listening address")?;
    // Non-blocking accept, so the acceptor notices `stop` within a few ms.
    listener
        .set_nonblocking(true)
        .context("configuring the listener")?;
    let root = Arc::new(root);
    let stop = Arc::new(AtomicBool::new(false));
    let slots = Arc::new(Slots {
        max: limits.max_connections.max(1),
        used: Mutex::new(0),
        freed: Condvar::new(),
    });
    let acceptor = {
        let stop = Arc::clone(&stop);
        let slots = Arc::clone(&slots);
        thread::Builder::new()
            .name("serve-accept".into())
            .spawn(move || {
                // At the cap, no `accept`: new connections wait in the kernel's backlog.
                while slots.wait_for_room(&stop, log) {
                    let Some(stream) = accept(&listener, &stop, log) else {
                        break;
                    };
                    let accepted = Instant::now();
                    let slot = slots.take();
                    let root = Arc::clone(&root);
                    let spawned =
                        thread::Builder::new()
                            .name("serve-conn".into())
                            .spawn(move || {
                                let _slot = slot;
                                handle(&root, stream, accepted, limits, log);
                            });
                    if let Err(e) = spawned {
                        say(format!("serve: cannot start a connection thread: {e}"));
                    }
                }
            })
            .context("starting the server thread")?
    };
    Ok(Server {
        addr,
        stop,
        #[cfg(test)]
        slots,
        acceptor: Some(acceptor),
    })
}

/// The next connection, or `None` once `stop` is set.
fn accept(listener: &TcpListener, stop: &AtomicBool, log: bool) -> Option<TcpStream> {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => return Some(stream),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5));
            }
            Err(e) => {
                if log {
                    say(format!("serve: accept: {e}"));
                }
                thread::sleep(Duration::from_millis(5));
            }
        }
    }
    None
}

fn format_bind(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}") // IPv6 literal
    } else {
        format!("{host}:{port}")
    }
}

/// A response before it is written: status, content type, body.
struct Reply {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    extra: Vec<(&'static str, &'static str)>,
}

fn text(status: u16, body: &str) -> Reply {
    Reply {
        status,
        content_type: "text/plain; charset=utf-8",
        body: body.as_bytes().to_vec(),
        extra: Vec::new(),
    }
}

fn handle(root: &Path, stream: TcpStream, accepted: Instant, limits: Limits, log: bool) {
    // The accepted socket may inherit non-blocking mode on some systems.
    let _ = stream.set_nonblocking(false);
    let (reply, head_only, what) = match read_head(&stream, accepted + limits.head_deadline) {
        Ok(request) => {
            let reply = match request.method.as_str() {
                "GET" | "HEAD" => respond_file(root, &request.target),
                _ => {
                    let mut reply = text(405, "405 method not allowed\n");
                    reply.extra.push(("Allow", "GET, HEAD"));
                    reply
                }
            };
            let what = format!("{} {}", request.method, request.target);
            (reply, request.method == "HEAD", what)
        }
        // Nothing to answer: the client went away, or never sent a byte.
        Err(HeadError::Gone) => return,
        Err(HeadError::Timeout) => (
            text(408, "408 request timeout: the request head took too long\n"),
            false,
            "(request head too slow)".to_string(),
        ),
        Err(HeadError::TooLarge) => (
            text(431, "431 request head too large (the limit is 16 KiB)\n"),
            false,
            "(request head too large)".to_string(),
        ),
        Err(HeadError::Bad(why)) => (
            text(400, &format!("400 bad request: {why}\n")),
            false,
            format!("(bad request: {why})"),
        ),
    };
    if log {
        // The target is visible ASCII only (checked), so this cannot smuggle terminal escapes.
        say(format!("{what} -> {}", reply.status));
    }
    let deadline = Instant::now() + limits.response_deadline;
    match write_reply(&stream, &reply, head_only, deadline) {
        Ok(()) => linger(&stream),
        Err(e) => {
            if log {
                say(format!("serve: answering {what}: {e}"));
            }
        }
    }
}

/// The parts of a request head the server uses.
#[derive(Debug)]
struct Request {
    method: String,
    target: String,
}

/// Why no request came out of a connection.
#[derive(Debug, PartialEq)]
enum HeadError {
    /// Closed, failed, or silent until the deadline: close without answering.
    Gone,
    /// Part of a head arrived, but not all of it before the deadline: 408.
    Timeout,
    /// Over [`MAX_HEAD_BYTES`]: 431.
    TooLarge,
    /// Malformed: 400, with the reason.
    Bad(&'static str),
}

/// Reads the request head, all of it before `deadline`.
fn read_head(stream: &TcpStream, deadline: Instant) -> Result<Request, HeadError> {
    let mut parser = HeadParser::default();
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        // Never more than one byte past the limit (`feed` refuses that), so memory is bounded.
        let want = (MAX_HEAD_BYTES + 1 - head.len()).min(chunk.len());
        match read_by(stream, &mut chunk[..want], deadline) {
            Ok(0) if head.is_empty() => return Err(HeadError::Gone),
            Ok(0) => {
                return Err(HeadError::Bad(
                    "the request head ended before its empty line",
                ))
            }
            Ok(n) => {
                head.extend_from_slice(&chunk[..n]);
                if let Some(request) = parser.feed(&head)? {
                    return Ok(request);
                }
            }
            Err(e) if is_timeout(&e) && !head.is_empty() => return Err(HeadError::Timeout),
            Err(_) => return Err(HeadError::Gone),
        }
    }
}

/// The request head, parsed line by line as its bytes arrive.
#[derive(Default)]
struct HeadParser {
    /// Where the line being received starts.
    line_start: usize,
    /// How far the bytes have been looked at.
    scanned: usize,
    /// The request line, once received.
    request: Option<Request>,
}

impl HeadParser {
    /// Looks at the bytes of `head` not seen yet (`head` only grows between calls); the request
    /// once its head is complete.
    fn feed(&mut self, head: &[u8]) -> Result<Option<Request>, HeadError> {
        while self.scanned < head.len() {
            let byte = head[self.scanned];
            self.scanned += 1;
            if byte != b'\n' {
                // Refuse at once what cannot be a request line (a TLS handshake, say) rather
                // than waiting for a line end that may never come.
                if self.request.is_none()
                    && !(byte.is_ascii_graphic() || byte == b' ' || byte == b'\r')
                {
                    return Err(HeadError::Bad(
                        "the request line has a byte that is not visible ASCII",
                    ));
                }
                continue;
            }
            if self.scanned > MAX_HEAD_BYTES {
                return Err(HeadError::TooLarge);
            }
            let line = &head[self.line_start..self.scanned - 1];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            self.line_start = self.scanned;
            match self.request {
                None if line.is_empty() => {} // empty lines before the request line: skipped
                None => self.request = Some(parse_request_line(line)?),
                Some(_) if line.is_empty() => return Ok(self.request.take()),
                Some(_) => check_header_line(line)?,
            }
        }
        if head.len() > MAX_HEAD_BYTES {
            return Err(HeadError::TooLarge);
        }
        Ok(None)
    }
}

/// `method SP request-target SP HTTP-version` (RFC 9112 §3), strictly.
fn parse_request_line(line: &[u8]) -> Result<Request, HeadError> {
    let line =
        std::str::from_utf8(line).map_err(|_| HeadError::Bad("the request line is not UTF-8"))?;
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts.as_slice() else {
        return Err(HeadError::Bad(
            "the request line is not `method target version` with single spaces",
        ));
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(HeadError::Bad("the method is not a token"));
    }
    if !target.starts_with('/') {
        return Err(HeadError::Bad("the request target does not start with /"));
    }
    if !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(HeadError::Bad(
            "the request target has a byte that is not visible ASCII",
        ));
    }
    let v = version.as_bytes();
    if !(v.len() == 8 && v.starts_with(b"HTTP/1.") && v[7].is_ascii_digit()) {
        return Err(HeadError::Bad("the version is not HTTP/1.x"));
    }
    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
    })
}

/// `name: value` (RFC 9112 §5): a token name right before the colon, no control characters
/// but tab in the value. The value itself is not used.
fn check_header_line(line: &[u8]) -> Result<(), HeadError> {
    let line =
        std::str::from_utf8(line).map_err(|_| HeadError::Bad("a header line is not UTF-8"))?;
    let Some((name, value)) = line.split_once(':') else {
        return Err(HeadError::Bad("a header line has no colon"));
    };
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(HeadError::Bad(
            "a header name is not a token (whitespace before the colon, or a folded line?)",
        ));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(HeadError::Bad("a header value has a control character"));
    }
    Ok(())
}

/// `tchar` of RFC 9110 §5.6.2.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// One read that waits no later than `deadline` (a timeout error once it has passed).
fn read_by(mut stream: &TcpStream, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            result => return result,
        }
    }
}

/// Writes all of `bytes` before `deadline`, or fails.
fn write_by(mut stream: &TcpStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the response deadline passed",
            ));
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn write_reply(
    stream: &TcpStream,
    reply: &Reply,
    head_only: bool,
    deadline: Instant,
) -> io::Result<()> {
    let reason = match reply.status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Cache-Control: no-store\r\nContent-Security-Policy: {CONTENT_SECURITY_POLICY}\r\n\
         X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n",
        reply.status,
        reply.content_type,
        reply.body.len()
    );
    for (name, value) in &reply.extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    write_by(stream, head.as_bytes(), deadline)?;
    if !head_only {
        write_by(stream, &reply.body, deadline)?;
    }
    let _ = stream.shutdown(Shutdown::Write);
    Ok(())
}

/// After the response: reads and drops what the client still sends, until it closes (or
/// [`LINGER`] / [`LINGER_BYTES`]), so that closing does not reset the connection under the
/// response.
fn linger(stream: &TcpStream) {
    let deadline = Instant::now() + LINGER;
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    while drained < LINGER_BYTES {
        match read_by(stream, &mut sink, deadline) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

fn respond_file(root: &Path, url: &str) -> Reply {
    let Some(file_path) = resolve(root, url) else {
        return text(404, "404 not found\n");
    };
    match std::fs::read(&file_path) {
        Ok(body) => Reply {
            status: 200,
            content_type: mime_type(&file_path),
            body,
            extra: Vec::new(),
        },
        Err(_) => text(404, "404 not found\n"),
    }
}

/// The file a request path names, or `None` (answered with 404) if it is not one of the files
/// served: `/` or `/index.html`, `/favicon.ico`, and files under `/www/`. Rejects `..`, `.`,
/// hidden names, empty segments, backslashes and NUL, also when percent-encoded, and checks
/// that the resolved file (after symlinks) is still inside what is served.
pub fn resolve(root: &Path, url: &str) -> Option<PathBuf> {
    let rel = allowed_relative_path(url)?;
    let full = root.join(&rel).canonicalize().ok()?;
    let inside = if rel.starts_with("www") {
        full.starts_with(root.join("www"))
    } else {
        full == root.join(&rel)
    };
    (inside && full.is_file()).then_some(full)
}

/// The pure, file-system-free part of [`resolve`].
fn allowed_relative_path(url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let path = path.strip_prefix('/')?;
    let decoded = percent_decode(path)?;
    if decoded.is_empty() {
        return Some(PathBuf::from("index.html"));
    }
    if decoded.contains(['\\', '\0']) {
        return None;
    }
    let segments: Vec<&str> = decoded.split('/').collect();
    if segments
        .iter()
        .any(|s| s.is_empty() || s.starts_with('.') || s.contains(':'))
    {
        return None;
    }
    let allowed = matches!(
        segments.as_slice(),
        ["index.html"] | ["favicon.ico"] | ["www", _, ..]
    );
    allowed.then(|| segments.iter().collect())
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The Content-Type for a file, by extension.
pub fn mime_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("txt" | "md") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(url: &str) -> Option<String> {
        allowed_relative_path(url).map(|p| p.display().to_string())
    }

    #[test]
    fn maps_served_paths() {
        assert_eq!(allowed("/").as_deref(), Some("index.html"));
        assert_eq!(allowed("/?x=1").as_deref(), Some("index.html"));
        assert_eq!(allowed("/index.html").as_deref(), Some("index.html"));
        assert_eq!(allowed("/favicon.ico").as_deref(), Some("favicon.ico"));
        assert_eq!(
            allowed("/www/pkg/inbox_lab.js?v=2").as_deref(),
            Some("www/pkg/inbox_lab.js")
        );
        assert_eq!(allowed("/www/a%20b.css").as_deref(), Some("www/a b.css"));
    }

    #[test]
    fn refuses_everything_else() {
        for url in [
            "",
            "index.html",
            "http://127.0.0.1/index.html",
            "/Cargo.toml",
            "/src/lib.rs",
            "/www",
            "/www/",
            "/www//x.js",
            "/www/../Cargo.toml",
            "/www/%2e%2e/Cargo.toml",
            "/www/%2E%2E/Cargo.toml",
            "/www/..%2fCargo.toml",
            "/www/%2e%2e%2fCargo.toml",
            "/www/./x.js",
            "/www/.hidden",
            "/www/pkg/.gitignore",
            "/www/..\\Cargo.toml",
            "/www/x%00.js",
            "/www/x%zz.js",
            "/www/x%2",
            "//etc/passwd",
            "/%2fetc/passwd",
            "/www/c:/x",
        ] {
            assert_eq!(allowed(url), None, "{url:?} must not be served");
        }
    }

    #[test]
    fn mime_types() {
        assert_eq!(
            mime_type(Path::new("a/inbox_lab.js")),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            mime_type(Path::new("w.mjs")),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(mime_type(Path::new("x_bg.wasm")), "application/wasm");
        assert_eq!(
            mime_type(Path::new("index.html")),
            "text/html; charset=utf-8"
        );
        assert_eq!(mime_type(Path::new("s.CSS")), "text/css; charset=utf-8");
        assert_eq!(mime_type(Path::new("d.json")), "application/json");
        assert_eq!(mime_type(Path::new("i.svg")), "image/svg+xml");
        assert_eq!(mime_type(Path::new("i.png")), "image/png");
        assert_eq!(mime_type(Path::new("noext")), "application/octet-stream");
    }

    // Unit tests of the head parser (no sockets).

    fn parse(head: &[u8]) -> Result<Option<Request>, HeadError> {
        HeadParser::default().feed(head)
    }

    #[test]
    fn parses_heads_fed_a_byte_at_a_time() {
        let head = b"\r\nGET /www/a.js?x=1 HTTP/1.0\nHost: h\r\nX-Empty:\r\nX-Tab: a\tb\r\n\r\n";
        let mut parser = HeadParser::default();
        for end in 1..head.len() {
            assert!(parser.feed(&head[..end]).unwrap().is_none(), "{end}");
        }
        let request = parser.feed(head).unwrap().expect("a complete head");
        assert_eq!(request.method, "GET");
        assert_eq!(request.target, "/www/a.js?x=1");
        assert!(parse(b"GET / HTTP/1.1\r\nHost: h\r\n").unwrap().is_none());
    }

    #[test]
    fn head_size_limit() {
        let mut head = b"GET / HTTP/1.1\r\nX: ".to_vec();
        head.resize(MAX_HEAD_BYTES - 4, b'a');
        head.extend_from_slice(b"\r\n\r\n");
        assert_eq!(head.len(), MAX_HEAD_BYTES);
        assert!(parse(&head).unwrap().is_some(), "exactly at the limit");
        head.insert(20, b'a');
        assert_eq!(parse(&head).unwrap_err(), HeadError::TooLarge);
        assert_eq!(
            parse(&vec![b'a'; MAX_HEAD_BYTES + 1]).unwrap_err(),
            HeadError::TooLarge
        );
    }

    // Real sockets against a server on port 0.

    /// A temporary directory to serve, removed on drop.
    struct Site(PathBuf);

    const INDEX: &str = "<!doctype html><title>inbox-lab test</title>\n";

    impl Site {
        fn new(name: &str) -> Site {
            let dir =
                std::env::temp_dir().join(format!("xtask-serve-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("www")).unwrap();
            std::fs::write(dir.join("index.html"), INDEX).unwrap();
            std::fs::write(dir.join("www/app.js"), "console.log(1);\n").unwrap();
            std::fs::write(dir.join("secret.txt"), "not served\n").unwrap();
            Site(dir)
        }

        fn serve(&self, limits: Limits) -> Server {
            start_with(&self.0, "127.0.0.1", 0, false, limits).unwrap()
        }
    }

    impl Drop for Site {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Generous bound for anything that should happen "at once", on a loaded machine.
    const SOON: Duration = Duration::from_secs(20);

    fn connect(server: &Server) -> TcpStream {
        let stream = TcpStream::connect(server.addr).unwrap();
        stream.set_read_timeout(Some(SOON)).unwrap();
        stream
    }

    /// Sends `request`, returns everything the server answers until it closes.
    fn exchange(server: &Server, request: &[u8]) -> String {
        let mut stream = connect(server);
        stream.write_all(request).unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    fn status(response: &str) -> u16 {
        let line = response.lines().next().unwrap_or("");
        assert!(
            line.starts_with("HTTP/1.1 "),
            "not a response: {response:?}"
        );
        line[9..12].parse().unwrap()
    }

    fn get(server: &Server, target: &str) -> String {
        exchange(
            server,
            format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes(),
        )
    }

    /// Polls `done` until it holds, for at most [`SOON`]; how long it took.
    fn wait_until(what: &str, done: impl Fn() -> bool) -> Duration {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < SOON, "not within {SOON:?}: {what}");
            thread::sleep(Duration::from_millis(10));
        }
        started.elapsed()
    }

    #[test]
    fn serves_get_and_head_with_the_csp_and_nothing_else() {
        let site = Site::new("normal");
        let server = site.serve(Limits::default());

        let ok = get(&server, "/");
        assert_eq!(status(&ok), 200, "{ok}");
        assert!(ok.contains(&format!(
            "\r\nContent-Security-Policy: {CONTENT_SECURITY_POLICY}\r\n"
        )));
        assert!(ok.contains("\r\nConnection: close\r\n"));
        assert!(ok.contains("\r\nContent-Type: text/html; charset=utf-8\r\n"));
        assert!(ok.contains(&format!("\r\nContent-Length: {}\r\n", INDEX.len())));
        assert!(ok.ends_with(&format!("\r\n\r\n{INDEX}")));

        let js = get(&server, "/www/app.js");
        assert_eq!(status(&js), 200, "{js}");
        assert!(js.contains("\r\nContent-Type: text/javascript; charset=utf-8\r\n"));

        let head = exchange(&server, b"HEAD / HTTP/1.0\r\n\r\n");
        assert_eq!(status(&head), 200, "{head}");
        assert!(head.ends_with("\r\n\r\n"), "HEAD has no body: {head}");

        // Bare LF line ends and empty lines before the request line are accepted.
        let lf = exchange(&server, b"\r\n\nGET /www/app.js HTTP/1.1\nHost: x\n\n");
        assert_eq!(status(&lf), 200, "{lf}");

        let post = exchange(&server, b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi");
        assert_eq!(status(&post), 405, "{post}");
        assert!(post.contains("\r\nAllow: GET, HEAD\r\n"));
        assert!(post.contains("Content-Security-Policy: "));

        for target in [
            "/secret.txt",
            "/www/../secret.txt",
            "/www/%2e%2e/secret.txt",
        ] {
            let no = get(&server, target);
            assert_eq!(status(&no), 404, "{target}: {no}");
            assert!(no.contains("Content-Security-Policy: "));
        }
        wait_until("every connection ends", || server.in_flight() == 0);
    }

    #[test]
    fn malformed_heads_get_400() {
        let site = Site::new("malformed");
        let server = site.serve(Limits::default());
        let cases: [&[u8]; 24] = [
            b"GET /\r\n\r\n",
            b"GET\r\n\r\n",
            b"GET / HTTP/1.1 extra\r\n\r\n",
            b"GET  / HTTP/1.1\r\n\r\n",
            b" GET / HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1 \r\n\r\n",
            b"G(T / HTTP/1.1\r\n\r\n",
            b"G\"T / HTTP/1.1\r\n\r\n",
            b"GET\t/ HTTP/1.1\r\n\r\n",
            b"GET index.html HTTP/1.1\r\n\r\n",
            b"GET http://127.0.0.1/ HTTP/1.1\r\n\r\n",
            b"GET * HTTP/1.1\r\n\r\n",
            b"GET / HTTP/2.0\r\n\r\n",
            b"GET / HTTP/1.10\r\n\r\n",
            b"GET / http/1.1\r\n\r\n",
            b"GET / HTTP/1\r\n\r\n",
            b"GET /\xc3\xa9 HTTP/1.1\r\n\r\n",
            b"GET /\xff HTTP/1.1\r\n\r\n",
            b"GET /a\rb HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: \xff\xfe\r\n\r\n",
        ];
        for request in cases {
            let answer = exchange(&server, request);
            assert_eq!(
                status(&answer),
                400,
                "{:?} -> {answer}",
                String::from_utf8_lossy(request)
            );
            assert!(answer.contains("\r\nConnection: close\r\n"));
            assert!(answer.contains("Content-Security-Policy: "));
        }

        // Refused as soon as the bad byte arrives, without waiting for a line end (the head
        // deadline is 10 s; the exchange must not take it): the start of a TLS ClientHello.
        let started = Instant::now();
        let tls = exchange(&server, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03");
        assert_eq!(status(&tls), 400, "{tls}");
        assert!(started.elapsed() < Limits::default().head_deadline);

        // A head cut short by the client's end of stream (its write side closed).
        let mut stream = connect(&server);
        stream.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
        stream.shutdown(Shutdown::Write).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert_eq!(status(&answer), 400, "{answer}");

        // The server still serves.
        assert_eq!(status(&get(&server, "/")), 200);
    }

    #[test]
    fn oversized_head_gets_431() {
        let site = Site::new("oversized");
        let server = site.serve(Limits::default());
        let big = |len: usize| {
            let mut request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ".to_vec();
            request.resize(request.len() + len, b'a');
            request.extend_from_slice(b"\r\n\r\n");
            request
        };
        let answer = exchange(&server, &big(20 * 1024));
        assert_eq!(status(&answer), 431, "{answer}");
        assert!(answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(answer.contains("\r\nConnection: close\r\n"));
        assert!(answer.contains("Content-Security-Policy: "));

        // Many headers adding up, and a request line alone over the limit.
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..2000 {
            many.extend_from_slice(format!("X-{i}: value\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(status(&exchange(&server, &many)), 431);
        let long_target = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(20 * 1024));
        assert_eq!(status(&exchange(&server, long_target.as_bytes())), 431);

        // Just under the limit is still served.
        assert_eq!(status(&exchange(&server, &big(15 * 1024))), 200);
    }

    #[test]
    fn slow_head_is_cut_off_at_one_deadline() {
        let site = Site::new("slow");
        let deadline = Duration::from_secs(1);
        let server = site.serve(Limits {
            head_deadline: deadline,
            ..Limits::default()
        });
        let started = Instant::now();
        let mut stream = connect(&server);
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .unwrap();
        // One byte every 200 ms, never finishing the head, until the server answers: a read
        // timeout renewed by each byte would never fire.
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let (mut answer, mut sent, mut buf) = (Vec::new(), 0, [0u8; 1024]);
        loop {
            assert!(
                started.elapsed() < SOON,
                "still reading a head after {SOON:?} ({sent} bytes trickled)"
            );
            match stream.read(&mut buf) {
                Ok(0) => break, // closed by the server
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(e) if is_timeout(&e) => {
                    if answer.is_empty() && stream.write_all(b"a").is_ok() {
                        sent += 1;
                    }
                }
                Err(e) => panic!("after {sent} bytes trickled: {e}"),
            }
        }
        let elapsed = started.elapsed();
        let answer = String::from_utf8_lossy(&answer);
        assert_eq!(status(&answer), 408, "{answer}");
        assert!(answer.contains("\r\nConnection: close\r\n"));
        assert!(sent >= 1, "the client trickled nothing");
        assert!(
            elapsed >= deadline,
            "cut off before the deadline: {elapsed:?}"
        );
        assert!(
            elapsed < deadline + Duration::from_secs(10),
            "cut off long after the deadline: {elapsed:?}"
        );
        drop(stream);
        wait_until("the slow connection ends", || server.in_flight() == 0);
    }

    #[test]
    fn silent_connection_is_closed_without_an_answer() {
        let site = Site::new("silent");
        let deadline = Duration::from_secs(1);
        let server = site.serve(Limits {
            head_deadline: deadline,
            ..Limits::default()
        });
        let started = Instant::now();
        let mut stream = connect(&server);
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).unwrap();
        let elapsed = started.elapsed();
        assert!(answer.is_empty(), "{:?}", String::from_utf8_lossy(&answer));
        assert!(
            elapsed >= deadline,
            "closed before the deadline: {elapsed:?}"
        );
        assert!(elapsed < deadline + Duration::from_secs(10), "{elapsed:?}");
    }

    #[test]
    fn connections_over_the_cap_wait_in_the_backlog() {
        let site = Site::new("cap");
        let cap = 4;
        let server = site.serve(Limits {
            max_connections: cap,
            // Long enough that the idle connections below are not cut off during the test.
            head_deadline: Duration::from_secs(300),
            ..Limits::default()
        });
        let idle: Vec<TcpStream> = (0..cap).map(|_| connect(&server)).collect();
        wait_until("the idle connections are accepted", || {
            server.in_flight() == cap
        });

        let request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        let mut extra: Vec<TcpStream> = (0..3)
            .map(|_| {
                let mut stream = connect(&server);
                stream.write_all(request).unwrap();
                stream
            })
            .collect();
        thread::sleep(Duration::from_millis(500));
        assert_eq!(server.in_flight(), cap, "accepted past the cap");
        for stream in &mut extra {
            stream
                .set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            match stream.read(&mut [0u8; 64]) {
                Err(e) if is_timeout(&e) => {}
                other => panic!("a connection over the cap was answered: {other:?}"),
            }
        }

        // Once the idle ones close, the waiting ones are served, then new ones.
        drop(idle);
        for mut stream in extra {
            stream.set_read_timeout(Some(SOON)).unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            assert_eq!(status(&answer), 200, "{answer}");
            assert!(answer.ends_with(INDEX));
        }
        let fresh = get(&server, "/");
        assert_eq!(status(&fresh), 200, "{fresh}");
        wait_until("every connection ends", || server.in_flight() == 0);
    }

    #[test]
    fn slow_reader_is_cut_off_at_one_response_deadline() {
        let site = Site::new("slow-reader");
        // Far more than the kernel buffers of both ends hold for a client that reads slowly.
        let size = 32 << 20;
        std::fs::write(site.0.join("www/big.bin"), vec![b'x'; size]).unwrap();
        let deadline = Duration::from_secs(1);
        let server = site.serve(Limits {
            response_deadline: deadline,
            ..Limits::default()
        });
        let mut stream = connect(&server);
        let started = Instant::now();
        stream
            .write_all(b"GET /www/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        wait_until("the connection is accepted", || server.in_flight() == 1);

        // 256 KiB every 50 ms (at most 5 MiB/s): the server's writes keep making progress, so a
        // timeout per write would never fire, but the whole file would take over 6 s.
        let fast = Arc::new(AtomicBool::new(false));
        let reader = {
            let fast = Arc::clone(&fast);
            thread::spawn(move || {
                let (mut total, mut buf) = (0, vec![0u8; 256 * 1024]);
                loop {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return total,
                        Ok(n) => total += n,
                    }
                    if !fast.load(Ordering::SeqCst) {
                        thread::sleep(Duration::from_millis(50));
                    }
                }
            })
        };
        wait_until("the server gives up on the slow reader", || {
            server.in_flight() == 0
        });
        let elapsed = started.elapsed();
        // Read the rest at full speed: the response must be cut short.
        fast.store(true, Ordering::SeqCst);
        let total = reader.join().unwrap();
        assert!(total < size, "the whole response was sent ({total} bytes)");
        assert!(
            elapsed >= deadline,
            "cut off before the deadline: {elapsed:?}"
        );
        assert!(elapsed < deadline + SOON, "{elapsed:?}");
    }
}
