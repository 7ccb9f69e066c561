//! The webhook relay of `cargo xtask serve`, under `/hooks/`. Its protocol (the three
//! endpoints, every limit and every refusal) is in docs/webhooks.md, "The relay in `cargo
//! xtask serve`".
//!
//! The page handles webhooks in its worker, with its database in the browser; this server has
//! no database. So that a real HTTP client (`curl`, a webhook sender's test tool) can deliver
//! a webhook to it, the server *relays*: it hands each webhook request to the open page and
//! answers with whatever the page's handler answered. It is for local use, like the rest of
//! `cargo xtask serve`, which listens on `127.0.0.1` unless `--host` says otherwise.
//!
//! **Who may do what.** Anyone who reaches the port may send a webhook: checking its Standard
//! Webhooks signature is the page's job. Only the page may receive webhooks and answer them,
//! since a sender that hears `200` forgets the event. The server makes a random key at start
//! ([`KEY_BYTES`], 128 bits) and gives it out in one place only: the link it prints for the
//! reader to open ([`super::Server::reader_url`], `/?relay=<key>`, as Jupyter does with its
//! token). The page keeps it for its tab and sends it as `?key=<key>` on `GET /hooks/subscribe`
//! and `POST /hooks/answer/{id}`; without it (or with another), both get **`403 not_the_page`**
//! before anything else happens: no subscriber slot taken, no page displaced, no webhook
//! answered (its sender still gets the page's answer, or a 503). No response of this server
//! holds the key and its log leaves queries out, so a local process that can only make HTTP
//! requests cannot learn it; one that can read the reader's terminal or browser profile can,
//! and is not defended against.
//!
//! Inside: the connection thread of each subscriber waits on its socket (for
//! the page's end of stream) and sends the keep-alives; the thread of a webhook writes the
//! event to the subscriber's socket itself (one writer at a time, by a mutex per subscriber)
//! and then waits on an `mpsc` channel of capacity 1 that the answering request's thread sends
//! the answer on. One mutex guards the list of subscribers and the map of waiting webhooks
//! (relay id → sender); it is never held while reading or writing a socket. An answer and a
//! deadline cannot both win: whichever removes the relay id from the map first decides.

use super::{
    is_timeout, percent_decode_bytes, read_by, response_head, text, write_by, Limits, Reply,
    Request,
};
use anyhow::Result;
use base64::{engine::general_purpose::STANDARD as BASE64, Engine};
use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// `GET /relay.json`: the page asks whether this server relays webhooks (www/panels/hooks/
/// relay.js). `dist/relay.json` says `{"relay": false}` for static hosts; this server answers
/// the path itself, whatever the root holds.
pub(super) fn probe() -> Reply {
    Reply::new(200, "application/json", b"{\"relay\": true}\n".as_slice())
}

/// The largest body of a webhook, and of a page's answer: 64 KiB.
pub const MAX_HOOK_BODY_BYTES: usize = 64 * 1024;

/// The longest webhook source accepted, in bytes of UTF-8 once percent-decoded.
pub const MAX_SOURCE_BYTES: usize = 255;

/// The three Standard Webhooks headers relayed to the page (all others are not).
const HOOK_HEADERS: [&str; 3] = ["webhook-id", "webhook-timestamp", "webhook-signature"];

/// How long writing one event (or keep-alive) to a subscriber may take before the subscriber
/// is given up on: a page reads its event stream at once, so a full socket buffer means it is
/// gone or stuck.
const EVENT_WRITE_DEADLINE: Duration = Duration::from_secs(2);

/// How often a subscriber's thread looks at the server's stop flag.
const SUBSCRIBER_POLL: Duration = Duration::from_millis(200);

/// Sent first on every event stream: the browser reconnects 2 s after losing it.
const SSE_RETRY: &[u8] = b"retry: 2000\n\n";

/// The query parameter of [`super::Server::reader_url`] that hands the page the relay's key
/// (www/panels/hooks/relay.js reads it).
pub(super) const READER_PARAM: &str = "relay";

/// The query parameter that carries the key on `GET /hooks/subscribe` and
/// `POST /hooks/answer/{id}`.
const KEY_PARAM: &str = "key";

/// Random bytes in the relay's key: 128 bits, beyond guessing.
const KEY_BYTES: usize = 16;

/// The relay's shared state, behind one mutex that is never held during a socket operation.
pub(super) struct Relay {
    limits: Limits,
    /// Made at start, in lowercase hex; given out only in [`super::Server::reader_url`].
    pub(super) key: String,
    /// Relay ids (`r1`, `r2`, ...) and subscriber ids, never reused.
    next_id: AtomicU64,
    state: Mutex<RelayState>,
}

#[derive(Default)]
struct RelayState {
    /// Oldest first; the last one gets each webhook.
    subscribers: Vec<Arc<Subscriber>>,
    /// Webhooks waiting for an answer, by relay id: where to send the page's answer (see
    /// [`parse_answer`]).
    pending: HashMap<String, mpsc::SyncSender<Reply>>,
}

/// A page's event stream.
struct Subscriber {
    id: u64,
    /// Its connection, for writing: one event at a time.
    out: Mutex<TcpStream>,
}

impl Subscriber {
    fn out(&self) -> MutexGuard<'_, TcpStream> {
        self.out.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A webhook request, checked and read.
struct Hook {
    source: String,
    /// Those of [`HOOK_HEADERS`] the request had.
    headers: serde_json::Map<String, serde_json::Value>,
    body: Vec<u8>,
}

impl Relay {
    pub(super) fn new(limits: Limits) -> Result<Relay> {
        let mut bytes = [0u8; KEY_BYTES];
        getrandom::fill(&mut bytes)
            .map_err(|e| anyhow::anyhow!("no random bytes for the relay's key: {e}"))?;
        Ok(Relay {
            limits,
            key: bytes.iter().map(|b| format!("{b:02x}")).collect(),
            next_id: AtomicU64::new(1),
            state: Mutex::new(RelayState::default()),
        })
    }

    /// The answer to a request for a relay endpoint; `None` if it became an event stream and
    /// was served.
    pub(super) fn respond(
        &self,
        route: HookRoute<'_>,
        stream: &TcpStream,
        request: &Request,
        stop: &AtomicBool,
    ) -> Option<Reply> {
        let body_deadline = Instant::now() + self.limits.body_deadline;
        // Only the page holds the key: anyone else is refused before anything else is looked at.
        let page = self.holds_key(&request.target);
        Some(match (route, request.method.as_str()) {
            (HookRoute::Subscribe, "GET") if page => return self.subscribe(stream, stop),
            (HookRoute::Answer(id), "POST") if page => read_body(stream, request, body_deadline)
                .map_or_else(|refused| refused, |body| self.answer(id, &body)),
            (HookRoute::Subscribe, "GET") | (HookRoute::Answer(_), "POST") => not_the_page(),
            (HookRoute::Subscribe, _) => not_allowed("GET"),
            (HookRoute::Hook(segment), "POST") => {
                hook_request(stream, request, segment, body_deadline)
                    .map_or_else(|refused| refused, |hook| self.relay(hook))
            }
            (HookRoute::Answer(_) | HookRoute::Hook(_), _) => not_allowed("POST"),
            (HookRoute::Unknown, _) => error_reply(
                404,
                "no_such_path",
                "the relay serves GET /hooks/subscribe, POST /hooks/answer/{id} and \
                 POST /hooks/{source}",
            ),
        })
    }

    /// Whether `target`'s query holds the relay's key, once (`?key=<key>`). Compared in
    /// constant time, so how long a refusal takes says nothing about how close a guess was.
    fn holds_key(&self, target: &str) -> bool {
        let query = target.split_once('?').map_or("", |(_, q)| q);
        let keys: Vec<&str> = query
            .split('&')
            .filter_map(|pair| pair.strip_prefix(KEY_PARAM)?.strip_prefix('='))
            .collect();
        let [given] = keys.as_slice() else {
            return false;
        };
        given.len() == self.key.len()
            && given
                .bytes()
                .zip(self.key.bytes())
                .fold(0, |diff, (a, b)| diff | (a ^ b))
                == 0
    }

    fn lock(&self) -> MutexGuard<'_, RelayState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    fn remove_subscriber(&self, id: u64) {
        self.lock().subscribers.retain(|s| s.id != id);
    }

    /// `GET /hooks/subscribe`: serves the event stream until the page goes away (or the
    /// server stops) and returns `None`; `Some(503)` if there are enough subscribers already.
    fn subscribe(&self, stream: &TcpStream, stop: &AtomicBool) -> Option<Reply> {
        let Ok(out) = stream.try_clone() else {
            return Some(error_reply(500, "socket", "cannot set up the event stream"));
        };
        let subscriber = Arc::new(Subscriber {
            id: self.new_id(),
            out: Mutex::new(out),
        });
        // Holding its writer from before it is listed until the stream's head is written, so
        // that no event can be written before the head.
        let out = subscriber.out();
        {
            let mut state = self.lock();
            let max = self.limits.relay_max_subscribers;
            if state.subscribers.len() >= max {
                let why = format!("{max} pages are subscribed already; close one");
                return Some(unavailable("too_many_subscribers", why, "5"));
            }
            state.subscribers.push(Arc::clone(&subscriber));
        }
        // No Content-Length: the stream lasts as long as the page.
        let head = response_head(&Reply::new(200, "text/event-stream", Vec::new()), None);
        let deadline = Instant::now() + EVENT_WRITE_DEADLINE;
        let opened = write_by(&out, head.as_bytes(), deadline)
            .and_then(|()| write_by(&out, SSE_RETRY, deadline))
            .is_ok();
        drop(out);
        if opened {
            self.keep_alive(stream, &subscriber, stop);
        }
        self.remove_subscriber(subscriber.id);
        let _ = stream.shutdown(Shutdown::Both);
        None
    }

    /// Waits for the subscriber to go away: its end of stream (a page sends nothing after its
    /// request), a failed write, a shutdown by [`Relay::send_to_newest`], or the server's stop.
    /// Sends `: keep-alive` every [`Limits::relay_keep_alive`], so a dead peer is noticed.
    fn keep_alive(&self, stream: &TcpStream, subscriber: &Subscriber, stop: &AtomicBool) {
        let mut next_ping = Instant::now() + self.limits.relay_keep_alive;
        let mut sink = [0u8; 1024];
        while !stop.load(Ordering::SeqCst) {
            let wake = next_ping.min(Instant::now() + SUBSCRIBER_POLL);
            match read_by(stream, &mut sink, wake) {
                Ok(0) => return,
                Ok(_) => {} // not expected from an event-stream client; dropped
                Err(e) if is_timeout(&e) => {}
                Err(_) => return,
            }
            if Instant::now() >= next_ping {
                let out = subscriber.out();
                let by = Instant::now() + EVENT_WRITE_DEADLINE;
                if write_by(&out, b": keep-alive\n\n", by).is_err() {
                    return;
                }
                next_ping = Instant::now() + self.limits.relay_keep_alive;
            }
        }
    }

    /// Writes `event` to the newest subscriber; one that cannot take it is dropped and the
    /// next newest tried. `false` if none could.
    fn send_to_newest(&self, event: &[u8], deadline: Instant) -> bool {
        loop {
            let Some(subscriber) = self.lock().subscribers.last().cloned() else {
                return false;
            };
            let out = subscriber.out();
            let by = deadline.min(Instant::now() + EVENT_WRITE_DEADLINE);
            if write_by(&out, event, by).is_ok() {
                return true;
            }
            // Its thread sees the shutdown as an end of stream, and ends.
            let _ = out.shutdown(Shutdown::Both);
            drop(out);
            self.remove_subscriber(subscriber.id);
        }
    }

    /// `POST /hooks/{source}`, read and checked: relays it and answers with the page's answer,
    /// or with 503.
    fn relay(&self, hook: Hook) -> Reply {
        let (id, answers) = {
            let mut state = self.lock();
            if state.subscribers.is_empty() {
                return no_page();
            }
            let max = self.limits.relay_max_pending;
            if state.pending.len() >= max {
                let why =
                    format!("{max} webhooks are waiting for the page already; retry in a second");
                return unavailable("queue_full", why, "1");
            }
            let id = format!("r{}", self.new_id());
            // Capacity 1: the one answer is sent without blocking, under the lock.
            let (sender, answers) = mpsc::sync_channel(1);
            state.pending.insert(id.clone(), sender);
            (id, answers)
        };
        let deadline = Instant::now() + self.limits.relay_answer_deadline;
        let event = serde_json::json!({
            "id": id,
            "source": hook.source,
            "headers": hook.headers,
            "body_base64": BASE64.encode(&hook.body),
        });
        // Compact JSON has no line break, so it fits one `data:` line.
        let event = format!("event: hook\ndata: {event}\n\n");
        if !self.send_to_newest(event.as_bytes(), deadline) {
            // No subscriber could take it (they went away since the check above).
            return self.withdraw(&id, &answers).unwrap_or_else(no_page);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let answer = answers.recv_timeout(left).ok();
        answer
            .or_else(|| self.withdraw(&id, &answers))
            .unwrap_or_else(|| {
                let ms = self.limits.relay_answer_deadline.as_millis();
                let why = format!("the page did not answer within {ms} ms; retry later");
                unavailable("no_answer", why, "5")
            })
    }

    /// Takes webhook `id` off the waiting list; its answer if one came in before that.
    fn withdraw(&self, id: &str, answers: &mpsc::Receiver<Reply>) -> Option<Reply> {
        let mut state = self.lock();
        if state.pending.remove(id).is_some() {
            return None; // still unanswered: a later answer gets 404
        }
        // Answered: `answer` sent it under the lock, so it is in the channel now.
        answers.try_recv().ok()
    }

    /// `POST /hooks/answer/{id}` with its body.
    fn answer(&self, id: &str, body: &[u8]) -> Reply {
        let answer = match parse_answer(body) {
            Ok(answer) => answer,
            Err(why) => return error_reply(400, "bad_answer", why),
        };
        let mut state = self.lock();
        match state.pending.remove(id) {
            Some(sender) if sender.try_send(answer).is_ok() => text(204, ""),
            _ => error_reply(
                404,
                "unknown_relay_id",
                "no webhook is waiting under this relay id (unknown, answered, or past its \
                 deadline)",
            ),
        }
    }
}

#[cfg(test)]
impl Relay {
    pub(super) fn subscriber_count(&self) -> usize {
        self.lock().subscribers.len()
    }

    pub(super) fn pending_count(&self) -> usize {
        self.lock().pending.len()
    }
}

/// A subscription or an answer without the relay's key: it could come from any local process.
fn not_the_page() -> Reply {
    error_reply(
        403,
        "not_the_page",
        "only the page opened with the link `cargo xtask serve` printed (?relay=...) may \
         subscribe to the relay or answer for it",
    )
}

fn no_page() -> Reply {
    let why = "no page is open to handle the webhook; open the page and retry";
    unavailable("no_page", why, "5")
}

/// A 503, which a webhook sender retries after `retry_after` seconds.
fn unavailable(code: &str, message: impl Into<String>, retry_after: &'static str) -> Reply {
    error_reply(503, code, message).with("Retry-After", retry_after)
}

/// A JSON error in the project's shape (`kind`, `code`, `message`, `http_status`,
/// `retryable`), as the relay's own 4xx and 5xx answers carry; the kind follows the status.
fn error_reply(status: u16, code: &str, message: impl Into<String>) -> Reply {
    let (kind, retryable) = match status {
        400 | 411 => ("invalid_input", false),
        403 => ("forbidden", false),
        404 => ("not_found", false),
        405 => ("method_not_allowed", false),
        408 => ("timeout", true),
        413 => ("payload_too_large", false),
        503 => ("unavailable", true),
        _ => ("internal", true),
    };
    let body = serde_json::json!({
        "kind": kind,
        "code": code,
        "message": message.into(),
        "http_status": status,
        "retryable": retryable,
    });
    Reply::new(status, "application/json", body.to_string())
}

fn not_allowed(allow: &'static str) -> Reply {
    let why = format!("this path takes {allow} only");
    error_reply(405, "method_not_allowed", why).with("Allow", allow)
}

/// Which relay endpoint a `/hooks/...` target names.
#[derive(Debug, PartialEq)]
pub(super) enum HookRoute<'a> {
    /// `/hooks/subscribe`
    Subscribe,
    /// `/hooks/answer/{id}`: the raw id.
    Answer(&'a str),
    /// `/hooks/{source}`: the raw (percent-encoded) segment.
    Hook(&'a str),
    /// Any other path under `/hooks/`.
    Unknown,
}

/// The relay endpoint of a request target (its query ignored); `None` outside `/hooks/`.
pub(super) fn hook_route(target: &str) -> Option<HookRoute<'_>> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let rest = path.strip_prefix("/hooks/")?;
    Some(match rest.strip_prefix("answer/") {
        _ if rest == "subscribe" => HookRoute::Subscribe,
        Some(id) if !id.contains('/') => HookRoute::Answer(id),
        None if !rest.contains('/') => HookRoute::Hook(rest),
        _ => HookRoute::Unknown,
    })
}

/// The source a `/hooks/{source}` segment names: percent-decoded, UTF-8,
/// 1..=[`MAX_SOURCE_BYTES`] bytes, no control characters.
fn hook_source(segment: &str) -> Result<String, &'static str> {
    let bytes = percent_decode_bytes(segment).ok_or("the source has a malformed %-escape")?;
    let source = String::from_utf8(bytes).map_err(|_| "the source is not UTF-8")?;
    if source.is_empty() {
        return Err("the source is empty");
    }
    if source.len() > MAX_SOURCE_BYTES {
        return Err("the source is longer than 255 bytes");
    }
    if source.chars().any(char::is_control) {
        return Err("the source has a control character");
    }
    Ok(source)
}

/// Checks and reads a webhook request (the body with [`read_body`]).
fn hook_request(
    stream: &TcpStream,
    request: &Request,
    segment: &str,
    body_deadline: Instant,
) -> Result<Hook, Reply> {
    let source = hook_source(segment).map_err(|why| error_reply(400, "bad_source", why))?;
    let mut headers = serde_json::Map::new();
    for name in HOOK_HEADERS {
        let values: Vec<&str> = request.header_values(name).collect();
        if values.len() > 1 {
            let why = format!("the request has more than one {name} header");
            return Err(error_reply(400, "duplicate_header", why));
        }
        if let [value] = values.as_slice() {
            headers.insert(name.to_string(), (*value).into());
        }
    }
    let body = read_body(stream, request, body_deadline)?;
    Ok(Hook {
        source,
        headers,
        body,
    })
}

/// Reads a request body framed by `Content-Length`, at most [`MAX_HOOK_BODY_BYTES`], all of
/// it before `deadline`; or the error to answer.
fn read_body(stream: &TcpStream, request: &Request, deadline: Instant) -> Result<Vec<u8>, Reply> {
    let invalid = |status, code, message: &str| Err(error_reply(status, code, message));
    if request.header_values("transfer-encoding").next().is_some() {
        return invalid(
            411,
            "transfer_encoding",
            "Transfer-Encoding (chunked) is not supported: send the body with Content-Length",
        );
    }
    let lengths: Vec<&str> = request.header_values("content-length").collect();
    let length = match lengths.as_slice() {
        [] => {
            return invalid(
                411,
                "length_required",
                "send the body with a Content-Length header",
            )
        }
        [value] if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
            // Too many digits for a usize is over the limit too.
            value.parse::<usize>().unwrap_or(usize::MAX)
        }
        [_] => return invalid(400, "bad_content_length", "Content-Length is not a number"),
        _ => {
            return invalid(
                400,
                "bad_content_length",
                "the request has more than one Content-Length",
            )
        }
    };
    if length > MAX_HOOK_BODY_BYTES {
        let why = format!("the body is {length} bytes; at most {MAX_HOOK_BODY_BYTES} are accepted");
        return invalid(413, "body_too_large", &why);
    }
    let mut body = request.early_body.clone();
    body.truncate(length);
    if body.len() < length
        && request
            .header_values("expect")
            .any(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        // curl, for one, waits a second for this before it sends a body over 1 KiB.
        let _ = write_by(stream, b"HTTP/1.1 100 Continue\r\n\r\n", deadline);
    }
    let mut chunk = [0u8; 8192];
    while body.len() < length {
        let want = (length - body.len()).min(chunk.len());
        match read_by(stream, &mut chunk[..want], deadline) {
            Ok(0) => {
                return invalid(
                    400,
                    "body_incomplete",
                    "the body ended before Content-Length bytes",
                )
            }
            Ok(n) => body.extend_from_slice(&chunk[..n]),
            Err(e) if is_timeout(&e) => {
                return invalid(408, "body_too_slow", "the body did not arrive in time")
            }
            Err(_) => return invalid(400, "body_incomplete", "the body could not be read"),
        }
    }
    Ok(body)
}

/// A page's answer to one webhook, `{"status": 200..=599, "body": <any JSON>}` (other keys
/// ignored), as the webhook's response: the page's status and JSON, nothing added.
fn parse_answer(body: &[u8]) -> Result<Reply, &'static str> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| "the answer is not JSON")?;
    let object = value.as_object().ok_or("the answer is not a JSON object")?;
    let status = object
        .get("status")
        .and_then(serde_json::Value::as_u64)
        .ok_or("the answer's status is not a whole number")?;
    if !(100..=599).contains(&status) {
        return Err("the answer's status is not in 100..=599");
    }
    if status < 200 {
        // A 1xx is an interim response in HTTP/1.1: the client would wait for another.
        return Err("the answer's status is 1xx, which cannot end an HTTP request");
    }
    let body = object.get("body").ok_or("the answer has no body")?;
    Ok(Reply::new(
        status as u16,
        "application/json",
        body.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::{Server, CONTENT_SECURITY_POLICY};
    use super::*;
    use std::io::{Read, Write};
    use std::thread;

    #[test]
    fn routes_hook_paths() {
        assert_eq!(hook_route("/"), None);
        assert_eq!(hook_route("/hooks"), None);
        assert_eq!(hook_route("/www/hooks/a"), None);
        assert_eq!(hook_route("/hooks/subscribe"), Some(HookRoute::Subscribe));
        assert_eq!(hook_route("/hooks/subscribe?x"), Some(HookRoute::Subscribe));
        assert_eq!(
            hook_route("/hooks/answer/r7"),
            Some(HookRoute::Answer("r7"))
        );
        assert_eq!(hook_route("/hooks/answer/"), Some(HookRoute::Answer("")));
        assert_eq!(hook_route("/hooks/bank"), Some(HookRoute::Hook("bank")));
        assert_eq!(
            hook_route("/hooks/b%20a?q=1"),
            Some(HookRoute::Hook("b%20a"))
        );
        assert_eq!(hook_route("/hooks/"), Some(HookRoute::Hook("")));
        assert_eq!(hook_route("/hooks/a/b"), Some(HookRoute::Unknown));
        assert_eq!(hook_route("/hooks/answer/r1/x"), Some(HookRoute::Unknown));
    }

    #[test]
    fn checks_sources() {
        assert_eq!(hook_source("bank").unwrap(), "bank");
        assert_eq!(hook_source("b%20a%C3%A9").unwrap(), "b aé");
        assert_eq!(hook_source(&"a".repeat(255)).unwrap().len(), 255);
        for bad in [
            "",
            "%00",
            "%FF",
            "a%0Ab",
            "%7F",
            "%C2%85",
            "%zz",
            "%4",
            &"a".repeat(256),
            &"%C3%A9".repeat(128),
        ] {
            assert!(hook_source(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parses_answers() {
        let a = parse_answer(br#"{"status": 422, "body": {"kind": "x"}, "extra": 1}"#).unwrap();
        assert_eq!(
            (a.status, a.body.as_slice()),
            (422, &br#"{"kind":"x"}"#[..])
        );
        let a = parse_answer(br#"{"status": 200, "body": null}"#).unwrap();
        assert_eq!((a.status, a.body.as_slice()), (200, &b"null"[..]));
        for bad in [
            &b""[..],
            b"not json",
            b"[200, null]",
            br#"{"body": 1}"#,
            br#"{"status": 200}"#,
            br#"{"status": "200", "body": 1}"#,
            br#"{"status": 200.5, "body": 1}"#,
            br#"{"status": -1, "body": 1}"#,
            br#"{"status": 99, "body": 1}"#,
            br#"{"status": 100, "body": 1}"#,
            br#"{"status": 600, "body": 1}"#,
        ] {
            assert!(
                parse_answer(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// A page subscribed to the relay: a raw client reading the event stream.
    struct Page {
        stream: TcpStream,
        buf: Vec<u8>,
    }

    /// The relay's key, taken from the link the server prints, as a reader's browser gets it.
    fn key_of(server: &Server) -> String {
        let link = server.reader_url();
        let (base, key) = link.split_once("?relay=").expect("a link with the key");
        assert_eq!(base, server.url());
        assert!(
            key.len() == 2 * KEY_BYTES && key.bytes().all(|b| b.is_ascii_hexdigit()),
            "{link}"
        );
        key.to_string()
    }

    impl Page {
        fn subscribe(server: &Server) -> Page {
            let mut stream = connect(server);
            let request = format!(
                "GET /hooks/subscribe?key={} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                key_of(server)
            );
            stream.write_all(request.as_bytes()).unwrap();
            let mut page = Page {
                stream,
                buf: Vec::new(),
            };
            let head = page.read_until(b"\r\n\r\n");
            assert_eq!(status(&head), 200, "{head}");
            assert!(
                head.contains("\r\nContent-Type: text/event-stream\r\n"),
                "{head}"
            );
            assert!(head.contains("\r\nCache-Control: no-store\r\n"), "{head}");
            assert!(head.contains(&format!(
                "\r\nContent-Security-Policy: {CONTENT_SECURITY_POLICY}\r\n"
            )));
            assert!(!head.contains("Content-Length"), "{head}");
            assert_eq!(page.next_block(), "retry: 2000");
            page
        }

        /// Everything up to `end`, which is consumed too.
        fn read_until(&mut self, end: &[u8]) -> String {
            let started = Instant::now();
            loop {
                let left = SOON.saturating_sub(started.elapsed());
                assert!(
                    !left.is_zero(),
                    "no {end:?} within {SOON:?}: {:?}",
                    String::from_utf8_lossy(&self.buf)
                );
                if let Some(at) = self.buf.windows(end.len()).position(|w| w == end) {
                    let text = String::from_utf8(self.buf[..at].to_vec()).unwrap();
                    self.buf.drain(..at + end.len());
                    return text;
                }
                let mut chunk = [0u8; 4096];
                self.stream.set_read_timeout(Some(left)).unwrap();
                match self.stream.read(&mut chunk) {
                    Ok(0) => panic!("the event stream ended: {:?}", self.buf),
                    Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                    Err(e) if is_timeout(&e) => {} // the assertion above decides
                    Err(e) => panic!("reading the event stream: {e}"),
                }
            }
        }

        /// One event-stream block, without its closing empty line.
        fn next_block(&mut self) -> String {
            self.read_until(b"\n\n")
        }

        /// The next `hook` event's data (keep-alive comments skipped).
        fn next_hook(&mut self) -> serde_json::Value {
            let started = Instant::now();
            loop {
                assert!(started.elapsed() < SOON, "no hook within {SOON:?}");
                let block = self.next_block();
                if block == ": keep-alive" {
                    continue;
                }
                let data = block
                    .strip_prefix("event: hook\ndata: ")
                    .unwrap_or_else(|| panic!("not a hook event: {block:?}"));
                assert!(!data.contains('\n'), "{block:?}");
                return serde_json::from_str(data).unwrap();
            }
        }

        /// Asserts that nothing arrives for a while.
        fn receives_nothing(&mut self) {
            self.stream
                .set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            match self.stream.read(&mut [0u8; 256]) {
                Err(e) if is_timeout(&e) => {}
                other => panic!("this page was sent something: {other:?}"),
            }
            assert!(self.buf.is_empty());
        }
    }

    fn post(server: &Server, target: &str, headers: &str, body: &[u8]) -> String {
        let mut request = format!(
            "POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        exchange(server, &request)
    }

    /// [`post`] on another thread (a webhook waiting for the page).
    fn post_later(
        server: &Server,
        target: &str,
        headers: &str,
        body: &[u8],
    ) -> thread::JoinHandle<String> {
        let request = {
            let mut r = format!(
                "POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            r.extend_from_slice(body);
            r
        };
        let addr = server.addr;
        thread::spawn(move || {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.set_read_timeout(Some(SOON)).unwrap();
            stream.write_all(&request).unwrap();
            read_all(&mut stream)
        })
    }

    /// `n` webhooks sent, each received by `page`: their senders (waiting) and relay ids.
    fn hooks_waiting(
        server: &Server,
        page: &mut Page,
        n: usize,
    ) -> (Vec<thread::JoinHandle<String>>, Vec<String>) {
        let hooks = (0..n)
            .map(|_| post_later(server, "/hooks/bank", "", b"{}"))
            .collect();
        let ids = (0..n)
            .map(|_| page.next_hook()["id"].as_str().unwrap().to_string())
            .collect();
        (hooks, ids)
    }

    /// The page's answer to webhook `id` (with the relay's key).
    fn answer(server: &Server, id: &str, json: &str) -> String {
        let target = format!("/hooks/answer/{id}?key={}", key_of(server));
        post(server, &target, "", json.as_bytes())
    }

    fn body_of(response: &str) -> &str {
        let (_, body) = response.split_once("\r\n\r\n").expect("a response");
        body
    }

    /// Asserts a relay error: status, the JSON error shape, the CSP.
    fn assert_error(response: &str, http_status: u16, kind: &str, code: &str) {
        assert_eq!(status(response), http_status, "{response}");
        assert!(
            response.contains("\r\nContent-Type: application/json\r\n"),
            "{response}"
        );
        assert!(
            response.contains("\r\nContent-Security-Policy: "),
            "{response}"
        );
        let error: serde_json::Value = serde_json::from_str(body_of(response)).unwrap();
        let error = error.as_object().unwrap();
        let mut keys: Vec<&str> = error.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["code", "http_status", "kind", "message", "retryable"],
            "{response}"
        );
        assert_eq!(error["kind"], kind, "{response}");
        assert_eq!(error["code"], code, "{response}");
        assert_eq!(error["http_status"], http_status, "{response}");
        assert_eq!(error["retryable"], http_status == 503 || http_status == 408);
        assert!(!error["message"].as_str().unwrap().is_empty());
    }

    #[test]
    fn hook_without_a_page_gets_503_no_page() {
        let site = Site::new("no-page");
        let server = site.serve(Limits::default());
        let answer = post(
            &server,
            "/hooks/bank",
            "webhook-id: msg_1\r\n",
            br#"{"account_id": 1, "amount": 5}"#,
        );
        assert_error(&answer, 503, "unavailable", "no_page");
        assert!(answer.contains("\r\nRetry-After: 5\r\n"), "{answer}");
        wait_until("every connection ends", || server.in_flight() == 0);
    }

    #[test]
    fn hook_is_relayed_to_the_page_and_answered_with_its_answer() {
        let site = Site::new("relay");
        let server = site.serve(Limits::default());
        let mut page = Page::subscribe(&server);
        assert_eq!(server.subscribers(), 1);

        // Every byte value, and what would end a head or an event if not encoded.
        let body: Vec<u8> = (0..=255u8).chain(*b"\r\n\r\n\n\ndata: x").collect();
        let hook = post_later(
            &server,
            "/hooks/bank%20a%C3%A9?x=1",
            "Webhook-Id: msg_1\r\nWEBHOOK-TIMESTAMP:  1700000000 \r\n\
             webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=\r\n\
             X-Other: not relayed\r\n",
            &body,
        );
        let event = page.next_hook();
        let id = event["id"].as_str().unwrap().to_string();
        assert!(id.starts_with('r') && id.len() > 1, "{event}");
        assert_eq!(event["source"], "bank aé");
        assert_eq!(
            event["headers"],
            serde_json::json!({
                "webhook-id": "msg_1",
                "webhook-timestamp": "1700000000",
                "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
            })
        );
        assert_eq!(
            BASE64
                .decode(event["body_base64"].as_str().unwrap())
                .unwrap(),
            body
        );
        assert_eq!(event.as_object().unwrap().len(), 4, "{event}");
        assert_eq!(server.pending(), 1);

        // Malformed answers are refused and leave the webhook waiting.
        for bad in [
            "",
            "{",
            r#"{"status": 99, "body": 1}"#,
            r#"{"status": 200}"#,
        ] {
            assert_error(
                &answer(&server, &id, bad),
                400,
                "invalid_input",
                "bad_answer",
            );
        }
        let too_big = format!(r#"{{"status": 200, "body": "{}"}}"#, "a".repeat(64 * 1024));
        assert_error(
            &answer(&server, &id, &too_big),
            413,
            "payload_too_large",
            "body_too_large",
        );
        assert_error(
            &answer(&server, "r999999", r#"{"status": 200, "body": 1}"#),
            404,
            "not_found",
            "unknown_relay_id",
        );
        assert_eq!(server.pending(), 1);

        let ok = answer(
            &server,
            &id,
            r#"{"status": 409, "body": {"kind": "payload_conflict", "n": [1, 2]}}"#,
        );
        assert_eq!(status(&ok), 204, "{ok}");
        assert!(!ok.contains("Content-Length"), "{ok}");
        assert!(ok.ends_with("\r\n\r\n"), "{ok}");

        let got = hook.join().unwrap();
        assert_eq!(status(&got), 409, "{got}");
        assert!(
            got.contains("\r\nContent-Type: application/json\r\n"),
            "{got}"
        );
        assert!(got.contains("\r\nContent-Security-Policy: "), "{got}");
        assert!(!got.contains("Retry-After"), "{got}");
        assert_eq!(body_of(&got), r#"{"kind":"payload_conflict","n":[1,2]}"#);

        // Answered once: a second answer finds nothing.
        assert_error(
            &answer(&server, &id, r#"{"status": 200, "body": 1}"#),
            404,
            "not_found",
            "unknown_relay_id",
        );
        assert_eq!(server.pending(), 0);

        // A hook without the Standard Webhooks headers and with an empty body; a 200 answer;
        // a fresh relay id.
        let hook = post_later(&server, "/hooks/x", "", b"");
        let event = page.next_hook();
        assert_eq!(event["headers"], serde_json::json!({}));
        assert_eq!(event["body_base64"], "");
        assert_ne!(event["id"], id.as_str());
        let id2 = event["id"].as_str().unwrap();
        let ok = answer(&server, id2, r#"{"status": 200, "body": null}"#);
        assert_eq!(status(&ok), 204, "{ok}");
        let got = hook.join().unwrap();
        assert_eq!(status(&got), 200, "{got}");
        assert_eq!(body_of(&got), "null");

        // 204 has no content (nor Content-Length), whatever the page's body.
        let hook = post_later(&server, "/hooks/x", "", b"");
        let id3 = page.next_hook()["id"].as_str().unwrap().to_string();
        let ok = answer(
            &server,
            &id3,
            r#"{"status": 204, "body": {"ignored": true}}"#,
        );
        assert_eq!(status(&ok), 204, "{ok}");
        let got = hook.join().unwrap();
        assert_eq!(status(&got), 204, "{got}");
        assert!(got.ends_with("\r\n\r\n"), "{got}");
        assert!(!got.contains("Content-Length"), "{got}");
        drop(page);
        wait_until("every connection ends", || server.in_flight() == 0);
    }

    #[test]
    fn late_answer_gets_404_after_the_hook_got_503() {
        let site = Site::new("late");
        let deadline = Duration::from_millis(200);
        let server = site.serve(Limits {
            relay_answer_deadline: deadline,
            ..Limits::default()
        });
        let mut page = Page::subscribe(&server);
        let started = Instant::now();
        let hook = post_later(&server, "/hooks/bank", "", b"{}");
        let id = page.next_hook()["id"].as_str().unwrap().to_string();
        let got = hook.join().unwrap();
        assert!(started.elapsed() >= deadline, "{:?}", started.elapsed());
        assert_error(&got, 503, "unavailable", "no_answer");
        assert!(got.contains("\r\nRetry-After: 5\r\n"), "{got}");
        assert_eq!(server.pending(), 0);
        assert_error(
            &answer(&server, &id, r#"{"status": 200, "body": 1}"#),
            404,
            "not_found",
            "unknown_relay_id",
        );
    }

    #[test]
    fn hook_bodies_are_framed_by_a_bounded_content_length() {
        let site = Site::new("bodies");
        let server = site.serve(Limits {
            body_deadline: Duration::from_millis(500),
            ..Limits::default()
        });

        // Over the limit: 413 at once, without waiting for (or reading) the body.
        let started = Instant::now();
        let mut stream = send(
            &server,
            b"POST /hooks/bank HTTP/1.1\r\nContent-Length: 65537\r\n\r\n",
        );
        let got = read_all(&mut stream);
        assert_error(&got, 413, "payload_too_large", "body_too_large");
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "waited for a body"
        );
        let huge = exchange(
            &server,
            b"POST /hooks/bank HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        );
        assert_error(&huge, 413, "payload_too_large", "body_too_large");

        // At the limit: read and accepted (then 503: no page).
        let full = post(&server, "/hooks/bank", "", &vec![b'x'; MAX_HOOK_BODY_BYTES]);
        assert_error(&full, 503, "unavailable", "no_page");

        // Expect: 100-continue gets its interim answer before the body is sent.
        let mut stream = send(
            &server,
            b"POST /hooks/bank HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
        );
        let mut interim = [0u8; 25];
        stream.read_exact(&mut interim).unwrap();
        assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
        stream.write_all(b"{}").unwrap();
        let got = read_all(&mut stream);
        assert_error(&got, 503, "unavailable", "no_page");

        let missing = exchange(&server, b"POST /hooks/bank HTTP/1.1\r\nHost: x\r\n\r\n{}");
        assert_error(&missing, 411, "invalid_input", "length_required");
        let chunked = exchange(
            &server,
            b"POST /hooks/bank HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        );
        assert_error(&chunked, 411, "invalid_input", "transfer_encoding");
        let both = exchange(
            &server,
            b"POST /hooks/bank HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}",
        );
        assert_error(&both, 411, "invalid_input", "transfer_encoding");
        for length in ["abc", "-1", "+2", "2, 2", ""] {
            let request =
                format!("POST /hooks/bank HTTP/1.1\r\nContent-Length: {length}\r\n\r\n{{}}");
            let got = exchange(&server, request.as_bytes());
            assert_error(&got, 400, "invalid_input", "bad_content_length");
        }
        let twice = exchange(
            &server,
            b"POST /hooks/bank HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        );
        assert_error(&twice, 400, "invalid_input", "bad_content_length");

        // A body cut short by the client, and one too slow.
        let mut stream = send(
            &server,
            b"POST /hooks/bank HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}",
        );
        stream.shutdown(Shutdown::Write).unwrap();
        let got = read_all(&mut stream);
        assert_error(&got, 400, "invalid_input", "body_incomplete");
        let started = Instant::now();
        let mut stream = send(
            &server,
            b"POST /hooks/bank HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}",
        );
        let got = read_all(&mut stream);
        assert_error(&got, 408, "timeout", "body_too_slow");
        assert!(started.elapsed() >= Duration::from_millis(500));

        // A duplicated Standard Webhooks header is ambiguous.
        let dup = post(
            &server,
            "/hooks/bank",
            "webhook-id: a\r\nWebhook-Id: b\r\n",
            b"{}",
        );
        assert_error(&dup, 400, "invalid_input", "duplicate_header");
    }

    #[test]
    fn bad_sources_get_400() {
        let site = Site::new("sources");
        let server = site.serve(Limits::default());
        let long = "a".repeat(256);
        for source in [
            "%00",
            "%FF",
            "%C3",
            "a%0Ab",
            "%7F",
            "%zz",
            "",
            long.as_str(),
        ] {
            let got = post(&server, &format!("/hooks/{source}"), "", b"{}");
            assert_error(&got, 400, "invalid_input", "bad_source");
        }
        // 255 bytes is a source (no page, though).
        let got = post(&server, &format!("/hooks/{}", "a".repeat(255)), "", b"{}");
        assert_error(&got, 503, "unavailable", "no_page");
    }

    #[test]
    fn full_queue_gets_503_queue_full() {
        let site = Site::new("queue");
        let server = site.serve(Limits {
            relay_max_pending: 2,
            ..Limits::default()
        });
        let mut page = Page::subscribe(&server);
        let (waiting, ids) = hooks_waiting(&server, &mut page, 2);
        assert_eq!(server.pending(), 2);
        let full = post(&server, "/hooks/bank", "", b"{}");
        assert_error(&full, 503, "unavailable", "queue_full");
        assert!(full.contains("\r\nRetry-After: 1\r\n"), "{full}");
        page.receives_nothing();

        for id in &ids {
            let ok = answer(&server, id, r#"{"status": 201, "body": "done"}"#);
            assert_eq!(status(&ok), 204, "{ok}");
        }
        for hook in waiting {
            let got = hook.join().unwrap();
            assert_eq!(status(&got), 201, "{got}");
            assert_eq!(body_of(&got), r#""done""#);
        }
        // Room again.
        let hook = post_later(&server, "/hooks/bank", "", b"{}");
        let id = page.next_hook()["id"].as_str().unwrap().to_string();
        answer(&server, &id, r#"{"status": 422, "body": {}}"#);
        assert_eq!(status(&hook.join().unwrap()), 422);
    }

    #[test]
    fn fifth_subscriber_gets_503() {
        let site = Site::new("five");
        let server = site.serve(Limits::default());
        let mut pages: Vec<Page> = (0..4).map(|_| Page::subscribe(&server)).collect();
        let fifth = get(
            &server,
            &format!("/hooks/subscribe?key={}", key_of(&server)),
        );
        assert_error(&fifth, 503, "unavailable", "too_many_subscribers");
        assert!(fifth.contains("\r\nRetry-After: 5\r\n"), "{fifth}");
        assert_eq!(server.subscribers(), 4);
        // The subscribers count as connections in flight (the fifth's has ended).
        wait_until("the fifth connection ends", || server.in_flight() == 4);

        pages.pop();
        wait_until("the closed page is dropped", || server.subscribers() == 3);
        pages.push(Page::subscribe(&server));
        assert_eq!(server.subscribers(), 4);
    }

    #[test]
    fn the_newest_live_page_gets_each_hook() {
        let site = Site::new("newest");
        let server = site.serve(Limits::default());
        let mut older = Page::subscribe(&server);
        let mut newer = Page::subscribe(&server);

        let hook = post_later(&server, "/hooks/a", "", b"1");
        let id = newer.next_hook()["id"].as_str().unwrap().to_string();
        older.receives_nothing();
        answer(&server, &id, r#"{"status": 200, "body": "newer"}"#);
        assert_eq!(body_of(&hook.join().unwrap()), r#""newer""#);

        // The newer page closes: it is dropped, and the older one gets the next hook.
        drop(newer);
        wait_until("the closed page is dropped", || server.subscribers() == 1);
        let hook = post_later(&server, "/hooks/a", "", b"2");
        let event = older.next_hook();
        assert_eq!(
            BASE64
                .decode(event["body_base64"].as_str().unwrap())
                .unwrap(),
            b"2"
        );
        let id = event["id"].as_str().unwrap();
        answer(&server, id, r#"{"status": 200, "body": "older"}"#);
        assert_eq!(body_of(&hook.join().unwrap()), r#""older""#);

        // No page left: 503 no_page at once.
        drop(older);
        wait_until("the closed page is dropped", || server.subscribers() == 0);
        let got = post(&server, "/hooks/a", "", b"3");
        assert_error(&got, 503, "unavailable", "no_page");
        wait_until("every connection ends", || server.in_flight() == 0);
    }

    #[test]
    fn subscribers_get_keep_alives_outlive_the_response_deadline_and_end_with_the_server() {
        let site = Site::new("keep-alive");
        let server = site.serve(Limits {
            relay_keep_alive: Duration::from_millis(100),
            response_deadline: Duration::from_millis(300),
            ..Limits::default()
        });
        let mut page = Page::subscribe(&server);
        let started = Instant::now();
        for _ in 0..2 {
            assert_eq!(page.next_block(), ": keep-alive");
        }
        thread::sleep(Duration::from_millis(500));
        assert!(started.elapsed() > Duration::from_millis(300));
        assert_eq!(page.next_block(), ": keep-alive");
        assert_eq!(server.subscribers(), 1);
        // Still relays after the response deadline.
        let hook = post_later(&server, "/hooks/a", "", b"");
        let id = page.next_hook()["id"].as_str().unwrap().to_string();
        answer(&server, &id, r#"{"status": 202, "body": []}"#);
        assert_eq!(status(&hook.join().unwrap()), 202);

        server.stop();
        // The stream ends (within SOON, though keep-alives would otherwise go on).
        read_all(&mut page.stream);
    }

    #[test]
    fn static_files_are_served_while_hooks_wait() {
        let site = Site::new("static-pending");
        let server = site.serve(Limits::default());
        let mut page = Page::subscribe(&server);
        let (hooks, ids) = hooks_waiting(&server, &mut page, 3);
        assert_eq!(server.pending(), 3);
        let index = get(&server, "/");
        assert_eq!(status(&index), 200, "{index}");
        assert!(index.ends_with(INDEX));
        assert_eq!(status(&get(&server, "/www/app.js")), 200);
        for id in &ids {
            answer(&server, id, r#"{"status": 200, "body": 0}"#);
        }
        for hook in hooks {
            assert_eq!(status(&hook.join().unwrap()), 200);
        }
    }

    #[test]
    fn hook_paths_allow_only_their_methods() {
        let site = Site::new("hook-methods");
        let server = site.serve(Limits::default());
        for (request, allow) in [
            (&b"GET /hooks/bank HTTP/1.1\r\n\r\n"[..], "POST"),
            (
                b"PUT /hooks/bank HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
                "POST",
            ),
            (b"GET /hooks/answer/r1 HTTP/1.1\r\n\r\n", "POST"),
            (b"DELETE /hooks/answer/r1 HTTP/1.1\r\n\r\n", "POST"),
            (
                b"POST /hooks/subscribe HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
                "GET",
            ),
        ] {
            let got = exchange(&server, request);
            assert_error(&got, 405, "method_not_allowed", "method_not_allowed");
            assert!(got.contains(&format!("\r\nAllow: {allow}\r\n")), "{got}");
        }
        let head = exchange(&server, b"HEAD /hooks/subscribe HTTP/1.1\r\n\r\n");
        assert_eq!(status(&head), 405, "{head}");
        assert!(head.contains("\r\nAllow: GET\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "HEAD has no body: {head}");
        for target in ["/hooks/a/b", "/hooks/answer/r1/x"] {
            let got = post(&server, target, "", b"{}");
            assert_error(&got, 404, "not_found", "no_such_path");
        }
        // Outside /hooks/, unchanged.
        let post_root = exchange(&server, b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(status(&post_root), 405, "{post_root}");
        assert!(post_root.contains("\r\nAllow: GET, HEAD\r\n"));
        assert_eq!(status(&get(&server, "/hooks")), 404);
    }

    // Only the page answers for the page (issue 27): what a local process without the key tries.

    /// Targets on `path` that do not carry the relay's key once and exactly: none, empty, one
    /// hex digit off, cut short, one too long, given twice, under the page's parameter name.
    fn without_the_key(server: &Server, path: &str) -> Vec<String> {
        let key = key_of(server);
        let other_first = if key.starts_with('0') { '1' } else { '0' };
        let off_by_one = format!("{other_first}{}", &key[1..]);
        vec![
            path.to_string(),
            format!("{path}?key="),
            format!("{path}?key={off_by_one}"),
            format!("{path}?key={}", &key[..key.len() - 1]),
            format!("{path}?key={key}0"),
            format!("{path}?key={key}&key={key}"),
            format!("{path}?{READER_PARAM}={key}"),
        ]
    }

    const APPLIED: &str = r#"{"status": 200, "body": {"outcome": "applied"}}"#;

    #[test]
    fn without_the_key_nobody_subscribes_or_answers_and_the_page_is_not_displaced() {
        let site = Site::new("hijack");
        let server = site.serve(Limits::default());
        let mut page = Page::subscribe(&server);
        // A hijacker subscribes after the page: refused at once, taking no slot.
        for target in without_the_key(&server, "/hooks/subscribe") {
            assert_error(&get(&server, &target), 403, "forbidden", "not_the_page");
        }
        assert_eq!(server.subscribers(), 1);

        // The next webhook still goes to the page. Answers to its real relay id from anyone
        // without the key are refused, and the webhook keeps waiting for the page's answer.
        let hook = post_later(&server, "/hooks/bank", "webhook-id: msg_1\r\n", b"{}");
        let id = page.next_hook()["id"].as_str().unwrap().to_string();
        for target in without_the_key(&server, &format!("/hooks/answer/{id}")) {
            let forged = post(&server, &target, "", APPLIED.as_bytes());
            assert_error(&forged, 403, "forbidden", "not_the_page");
        }
        assert_eq!(server.pending(), 1);
        answer(&server, &id, r#"{"status": 422, "body": "the page's"}"#);
        let got = hook.join().unwrap();
        assert_eq!(status(&got), 422, "{got}");
        assert_eq!(body_of(&got), r#""the page's""#);
    }

    /// The hijack issue 27 found: a plain HTTP client subscribes, then answers every webhook
    /// it is sent with `200 applied`. A correctly signed sender must never hear a 2xx for an
    /// event the page did not apply, on its first try or on a retry.
    #[test]
    fn a_hijacker_never_makes_a_sender_hear_2xx() {
        let site = Site::new("hijack-503");
        let server = site.serve(Limits {
            relay_answer_deadline: Duration::from_millis(300),
            ..Limits::default()
        });
        let signed = "webhook-id: msg_1\r\nwebhook-timestamp: 1700000000\r\n\
                      webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=\r\n";
        // No page open: the hijacker's subscription is refused, and the sender hears 503.
        assert_error(
            &get(&server, "/hooks/subscribe"),
            403,
            "forbidden",
            "not_the_page",
        );
        for _try in 0..2 {
            let got = post(&server, "/hooks/bank", signed, b"{}");
            assert_error(&got, 503, "unavailable", "no_page");
            assert!(got.contains("\r\nRetry-After: 5\r\n"), "{got}");
        }
        // The page open but not answering in time: the hijacker answers the real relay id
        // first, is refused, and the sender hears 503 again.
        let mut page = Page::subscribe(&server);
        for _try in 0..2 {
            let hook = post_later(&server, "/hooks/bank", signed, b"{}");
            let id = page.next_hook()["id"].as_str().unwrap().to_string();
            let forged = post(
                &server,
                &format!("/hooks/answer/{id}"),
                "",
                APPLIED.as_bytes(),
            );
            assert_error(&forged, 403, "forbidden", "not_the_page");
            let got = hook.join().unwrap();
            assert_error(&got, 503, "unavailable", "no_answer");
            assert!(got.contains("\r\nRetry-After: 5\r\n"), "{got}");
        }
    }

    /// A page that stops reading its event stream, but keeps it open, is dropped once one
    /// write to it has waited [`EVENT_WRITE_DEADLINE`], long before a webhook's answer
    /// deadline; what reached it before can still be answered, and later webhooks find no page.
    #[test]
    fn a_subscriber_that_stops_reading_is_dropped_at_the_write_deadline() {
        let site = Site::new("stalled");
        let answer_deadline = Duration::from_secs(60);
        let server = site.serve(Limits {
            relay_answer_deadline: answer_deadline,
            relay_max_pending: 1000,
            max_connections: 2000,
            ..Limits::default()
        });
        let mut stalled = Page::subscribe(&server);
        let started = Instant::now();
        // Webhooks of 64 KiB, until the socket buffers between the server and the page are
        // full and a write waits past its deadline.
        let body = vec![b'x'; MAX_HOOK_BODY_BYTES];
        let mut hooks = Vec::new();
        while server.subscribers() == 1 {
            assert!(
                started.elapsed() < answer_deadline / 4,
                "still subscribed after {:?} and {} webhooks",
                started.elapsed(),
                hooks.len()
            );
            if hooks.len() < 400 {
                hooks.extend((0..8).map(|_| post_later(&server, "/hooks/bank", "", &body)));
            }
            thread::sleep(Duration::from_millis(50));
        }
        let dropped_after = started.elapsed();
        assert!(dropped_after >= EVENT_WRITE_DEADLINE, "{dropped_after:?}");

        // The page reads again: its stream ends after the events written before the drop
        // (the last one maybe cut short), and each whole one can still be answered.
        stalled
            .buf
            .extend(read_all(&mut stalled.stream).into_bytes());
        let text = String::from_utf8(std::mem::take(&mut stalled.buf)).unwrap();
        let ids: Vec<String> = text
            .split("\n\n")
            .filter_map(|block| block.strip_prefix("event: hook\ndata: "))
            .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
            .map(|event| event["id"].as_str().unwrap().to_string())
            .collect();
        assert!(!ids.is_empty(), "nothing was written before the stall");
        for id in &ids {
            assert_eq!(status(&answer(&server, id, APPLIED)), 204, "{id}");
        }
        let (mut applied, mut no_page) = (0, 0);
        for hook in hooks {
            let got = hook.join().unwrap();
            if status(&got) == 200 {
                applied += 1;
            } else {
                assert_error(&got, 503, "unavailable", "no_page");
                no_page += 1;
            }
        }
        assert_eq!(applied, ids.len());
        assert!(no_page >= 1, "the webhook whose write failed got no 503");
        wait_until("every connection ends", || server.in_flight() == 0);
    }
}
