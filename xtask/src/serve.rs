//! The page's server: `cargo xtask serve`'s, and on a free port the e2e layer's, the bench's
//! and the crash lab's. [`files`] is what it serves and how it is cached, [`relay`] the webhook
//! relay under `/hooks/` (the page asks `GET /relay.json` first, answered here:
//! `{"relay": true}`); this file is the server itself: one thread accepts, each connection gets
//! a thread and one request (`Connection: close`), `GET` and `HEAD` only outside `/hooks/`
//! (else 405), [`CONTENT_SECURITY_POLICY`] on every response. Its limits ([`Limits`]) and why
//! are in docs/webhooks.md, "The relay in `cargo xtask serve`".

mod files;
mod relay;
#[cfg(test)]
mod testing;

use crate::util::say;
use anyhow::{Context, Result};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Sent with every response.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// Printed under [`Server::reader_url`] by `cargo xtask serve` and `workshop`.
pub const READER_NOTE: &str = "(Open this link: only a tab opened with it receives and answers \
     real webhooks, so no other local program can answer in the page's name. Ctrl+C to stop.)";

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
    /// From the end of the request head to the last byte of a body (`POST /hooks/...`).
    pub body_deadline: Duration,
    /// How long a relayed webhook waits for the page's answer before it gets 503.
    pub relay_answer_deadline: Duration,
    /// Webhooks waiting for an answer at once; one more gets 503.
    pub relay_max_pending: usize,
    /// Pages subscribed at once (`GET /hooks/subscribe`); one more gets 503.
    pub relay_max_subscribers: usize,
    /// How often a subscriber is sent a `: keep-alive` comment.
    pub relay_keep_alive: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 64,
            head_deadline: Duration::from_secs(10),
            response_deadline: Duration::from_secs(60),
            body_deadline: Duration::from_secs(10),
            relay_answer_deadline: Duration::from_secs(10),
            relay_max_pending: 32,
            relay_max_subscribers: 4,
            relay_keep_alive: Duration::from_secs(15),
        }
    }
}

/// A running server; stops when [`Server::stop`] is called or it is dropped.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

/// What the acceptor and every connection thread share.
struct Shared {
    root: PathBuf,
    /// Where `/www/` comes from instead of `root`, if set.
    source: Option<PathBuf>,
    /// Its key is the relay's: only a page opened with it may subscribe and answer.
    relay: relay::Relay,
    stop: AtomicBool,
    /// Connections being served (see [`Slot`]).
    in_flight: AtomicUsize,
    limits: Limits,
    log: bool,
}

impl Server {
    /// `http://host:port/`
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// `http://host:port/?relay=<key>`: the link to give the reader (and nobody else), the
    /// only way a page learns the relay's key.
    pub fn reader_url(&self) -> String {
        format!(
            "{}?{}={}",
            self.url(),
            relay::READER_PARAM,
            self.shared.relay.key
        )
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
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

/// One connection in flight, counted until dropped (also if its thread panics or cannot start).
/// Only the acceptor makes one, after [`accept`] waited for room, so the count never passes
/// the cap.
struct Slot(Arc<Shared>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Starts serving `root` on `host:port` (port 0: any free port) with the default [`Limits`];
/// with `source` (the repository root), also the source tree's `www/` under `/www/`, beside the
/// built site, for the e2e tests that load a source module or start a worker by its source path.
pub fn start(
    root: &Path,
    source: Option<&Path>,
    host: &str,
    port: u16,
    log: bool,
) -> Result<Server> {
    start_with(root, source, host, port, log, Limits::default())
}

/// [`start`] with other limits.
fn start_with(
    root: &Path,
    source: Option<&Path>,
    host: &str,
    port: u16,
    log: bool,
    limits: Limits,
) -> Result<Server> {
    let canonical = |dir: &Path| {
        dir.canonicalize()
            .with_context(|| format!("serving {}", dir.display()))
    };
    let bind = format_bind(host, port);
    let listener = TcpListener::bind(&bind).with_context(|| format!("cannot listen on {bind}"))?;
    let addr = listener
        .local_addr()
        .context("reading the listening address")?;
    // Non-blocking accept, so the acceptor notices `stop` within a few ms.
    listener
        .set_nonblocking(true)
        .context("configuring the listener")?;
    let shared = Arc::new(Shared {
        root: canonical(root)?,
        source: source.map(canonical).transpose()?,
        relay: relay::Relay::new(limits)?,
        stop: AtomicBool::new(false),
        in_flight: AtomicUsize::new(0),
        limits,
        log,
    });
    let acceptor = {
        let shared = Arc::clone(&shared);
        thread::Builder::new()
            .name("serve-accept".into())
            .spawn(move || {
                while let Some(stream) = accept(&listener, &shared) {
                    let accepted = Instant::now();
                    shared.in_flight.fetch_add(1, Ordering::SeqCst);
                    let slot = Slot(Arc::clone(&shared));
                    let spawned = thread::Builder::new()
                        .name("serve-conn".into())
                        .spawn(move || handle(&slot.0, stream, accepted));
                    if let Err(e) = spawned {
                        say(format!("serve: cannot start a connection thread: {e}"));
                    }
                }
            })
            .context("starting the server thread")?
    };
    Ok(Server {
        addr,
        shared,
        acceptor: Some(acceptor),
    })
}

/// The next connection once fewer than [`Limits::max_connections`] are in flight (at the cap,
/// no `accept`: new connections wait in the kernel's backlog), or `None` once `stop` is set.
fn accept(listener: &TcpListener, shared: &Shared) -> Option<TcpStream> {
    let (max, log) = (shared.limits.max_connections.max(1), shared.log);
    let mut full = false;
    while !shared.stop.load(Ordering::SeqCst) {
        if shared.in_flight.load(Ordering::SeqCst) >= max {
            if log && !full {
                say(format!(
                    "serve: {max} connections in flight; new ones wait until one ends"
                ));
            }
            full = true;
        } else {
            match listener.accept() {
                Ok((stream, _)) => return Some(stream),
                Err(e) if log && e.kind() != io::ErrorKind::WouldBlock => {
                    say(format!("serve: accept: {e}"))
                }
                Err(_) => {}
            }
        }
        thread::sleep(Duration::from_millis(5));
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

impl Reply {
    fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        let (body, extra) = (body.into(), Vec::new());
        Reply {
            status,
            content_type,
            body,
            extra,
        }
    }

    /// The reply with one more header.
    fn with(mut self, name: &'static str, value: &'static str) -> Reply {
        self.extra.push((name, value));
        self
    }
}

fn text(status: u16, body: &str) -> Reply {
    Reply::new(status, "text/plain; charset=utf-8", body)
}

fn handle(server: &Shared, stream: TcpStream, accepted: Instant) {
    let (limits, log) = (server.limits, server.log);
    // The accepted socket may inherit non-blocking mode on some systems.
    let _ = stream.set_nonblocking(false);
    let (reply, head_only, what) = match read_head(&stream, accepted + limits.head_deadline) {
        Ok(request) => {
            // The target is visible ASCII only (checked), so logging it cannot smuggle
            // terminal escapes; its query is left out, since it may hold the relay's key.
            let path = request.target.split('?').next().unwrap_or("");
            let what = format!("{} {path}", request.method);
            let Some(reply) = respond(server, &stream, &request) else {
                // An event stream, served until it ended (see `Relay::subscribe`).
                if log {
                    say(format!("{what}: event stream ended"));
                }
                return;
            };
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

/// The answer to a request; `None` if the connection became an event stream and was served.
fn respond(server: &Shared, stream: &TcpStream, request: &Request) -> Option<Reply> {
    if let Some(route) = relay::hook_route(&request.target) {
        return server.relay.respond(route, stream, request, &server.stop);
    }
    Some(match request.method.as_str() {
        "GET" | "HEAD" if request.target.split(['?', '#']).next() == Some("/relay.json") => {
            relay::probe()
        }
        "GET" | "HEAD" => {
            let www = server
                .source
                .as_ref()
                .filter(|_| request.target.starts_with("/www/"));
            files::respond_file(www.unwrap_or(&server.root), &request.target)
        }
        _ => text(405, "405 method not allowed\n").with("Allow", "GET, HEAD"),
    })
}

/// The parts of a request head the server uses.
#[derive(Debug)]
struct Request {
    method: String,
    target: String,
    /// Every header line as `(name, value)`, the value without surrounding whitespace.
    headers: Vec<(String, String)>,
    /// Bytes that arrived after the head with it: the start of a body.
    early_body: Vec<u8>,
}

impl Request {
    /// The values of the headers named `name` (case-insensitively).
    fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
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
                if let Some(mut request) = parser.feed(&head)? {
                    request.early_body = head[parser.scanned..].to_vec();
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
                Some(ref mut request) => request.headers.push(parse_header_line(line)?),
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
        headers: Vec::new(),
        early_body: Vec::new(),
    })
}

/// `name: value` (RFC 9112 §5): a token name right before the colon, no control characters
/// but tab in the value, which is returned without the whitespace around it.
fn parse_header_line(line: &[u8]) -> Result<(String, String), HeadError> {
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
    Ok((
        name.to_string(),
        value.trim_matches([' ', '\t']).to_string(),
    ))
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
    // 204, 205 and 304 have no content (RFC 9110 §15.3.5, §15.3.6, §15.4.5); 204 and 304
    // not even a Content-Length. Only a page's answer relayed by the relay can have them.
    let bodyless = matches!(reply.status, 204 | 205 | 304);
    let length = match reply.status {
        204 | 304 => None,
        _ => Some(if bodyless { 0 } else { reply.body.len() }),
    };
    write_by(stream, response_head(reply, length).as_bytes(), deadline)?;
    if !head_only && !bodyless {
        write_by(stream, &reply.body, deadline)?;
    }
    let _ = stream.shutdown(Shutdown::Write);
    Ok(())
}

/// The status line and headers of `reply` (with `Content-Length: length`, if given), the
/// security headers every response carries, and the empty line that ends the head.
fn response_head(reply: &Reply, length: Option<usize>) -> String {
    let (status, content_type) = (reply.status, reply.content_type);
    let length = length.map_or(String::new(), |n| format!("Content-Length: {n}\r\n"));
    // `no-store` unless the reply says otherwise (the built site's files: see `respond_file`).
    let cached = reply
        .extra
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("Cache-Control"));
    let no_store = if cached {
        ""
    } else {
        "Cache-Control: no-store\r\n"
    };
    let extra: String = reply
        .extra
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\n{length}Connection: close\r\n\
         {no_store}Content-Security-Policy: {CONTENT_SECURITY_POLICY}\r\n\
         X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n{extra}\r\n",
        reason_phrase(status)
    )
}

/// The reason phrase of a status (only informative: clients go by the number).
fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => match status / 100 {
            2 => "Success",
            3 => "Redirection",
            4 => "Client Error",
            _ => "Error",
        },
    }
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

/// `%XX` escapes decoded; `None` if one is malformed.
fn percent_decode_bytes(s: &str) -> Option<Vec<u8>> {
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
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

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
        let mut stream = send(&server, b"GET / HTTP/1.1\r\nHost: x\r\n");
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
        let mut stream = send(&server, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
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
        let started = Instant::now();
        let mut stream = send(
            &server,
            b"GET /www/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        );
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
