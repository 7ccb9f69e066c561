//! Sending: the requests a provider sends, and what came back.
//!
//! Every request is a real HTTP POST in the Standard Webhooks format
//! (`webhook-id`, `webhook-timestamp`, `webhook-signature`), signed with
//! the lab's own [`sign`] unless `--unsigned` (a scenario may strip a header on purpose). Every answer is read with a timeout and at most
//! [`MAX_ANSWER_BYTES`], so a receiver that never answers, drips bytes, or
//! sends megabytes cannot hang or flood the probe.

use std::io::Write;
use std::net::{IpAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::labs::webhooks::{sign, Secret};

/// The most of an answer's body the probe reads; more is a failure.
pub(crate) const MAX_ANSWER_BYTES: u64 = 64 * 1024;
/// How much of an answer the history keeps.
const KEPT_ANSWER_CHARS: usize = 500;
/// How many times a genuine delivery is sent when answered "try again"
/// (5xx, 409, 429) or not answered, as a provider retries; then the last
/// answer stands.
const ATTEMPTS: usize = 3;
/// The pause before such a retry.
const RETRY_PAUSE: Duration = Duration::from_millis(200);
/// The key forged requests are signed with: not the receiver's.
const FORGER_KEY: [u8; 32] = [0x42; 32];

/// A receiver's URL, checked: plain HTTP, and on this machine unless
/// `--allow-remote`.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub url: String,
    authority: String,
    path: String,
}

impl Target {
    /// # Errors
    /// A message naming the URL: not `http://host[:port]/path`, HTTPS (this
    /// build has no TLS), or a host that is not loopback without `allow_remote`.
    pub fn parse(url: &str, allow_remote: bool) -> Result<Target, String> {
        let uri: ureq::http::Uri = url.parse().map_err(|e| format!("{url}: not a URL ({e})"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(format!(
                    "{url}: https is not supported (this build has no TLS); probe the plain-HTTP \
                     endpoint on this machine"
                ))
            }
            _ => return Err(format!("{url}: expected http://host[:port]/path")),
        }
        let (Some(host), Some(authority)) = (uri.host(), uri.authority()) else {
            return Err(format!("{url}: no host"));
        };
        if !allow_remote && !is_loopback(host) {
            return Err(format!(
                "{url}: {host} is not this machine; the probe sends forged and repeated \
                 payments, so it only targets loopback (127.0.0.1, localhost, [::1]) unless \
                 --allow-remote is given"
            ));
        }
        Ok(Target {
            url: url.to_owned(),
            authority: authority.to_string(),
            path: uri
                .path_and_query()
                .map_or("/".to_owned(), |p| p.to_string()),
        })
    }
}

fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// How a request is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Signing {
    /// With the receiver's secret (or not at all with `--unsigned`).
    Genuine,
    /// With a key that is not the receiver's.
    Forged,
}

/// One request as it goes on the wire.
#[derive(Debug, Clone)]
pub(crate) struct Message {
    /// The `webhook-id` header; `None` strips it (the signature still
    /// covers the id it was made for).
    pub id: Option<String>,
    pub signed_id: String,
    pub timestamp: i64,
    pub body: String,
    pub signing: Signing,
}

/// What a delivery's answer must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Expect {
    /// Accepted (2xx), after retries a provider would make.
    Accepted,
    /// Refused (4xx): a forged, stale or id-less request.
    Refused,
    /// Not a 5xx (which a provider would retry forever).
    Settled,
    /// Nothing: the probe closed the connection without reading.
    Lost,
}

/// Why a request got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoAnswer {
    /// Nothing accepted the connection: the probe could not run.
    Unreachable,
    /// The run's deadline passed before the request was sent.
    Deadline,
    /// The receiver took the request and then failed to answer properly.
    Failed,
}

/// One request and its answer, as the history shows it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Exchange {
    pub url: String,
    pub webhook_id: Option<String>,
    pub webhook_timestamp: i64,
    pub signed: Signing,
    pub body: String,
    /// Milliseconds since the run started, when the request was sent.
    pub at_ms: u128,
    pub took_ms: u128,
    pub status: Option<u16>,
    pub answer: Option<String>,
    pub error: Option<String>,
    #[serde(skip)]
    pub no_answer: Option<NoAnswer>,
}

/// One delivery: what it expected and every attempt it took.
#[derive(Debug, Clone, Serialize)]
pub struct Delivery {
    pub what: &'static str,
    pub expect: Expect,
    pub attempts: Vec<Exchange>,
}

impl Delivery {
    pub(crate) fn last(&self) -> Option<&Exchange> {
        self.attempts.last()
    }
}

/// Sends to the targets, in turn.
pub(crate) struct Sender {
    pub targets: Vec<Target>,
    pub secret: Option<Secret>,
    pub template: String,
    pub account: i64,
    pub concurrency: usize,
    pub timeout: Duration,
    pub started: Instant,
    pub deadline: Instant,
    pub next: AtomicUsize,
}

impl Sender {
    /// An event id no earlier run used, so that runs against the same
    /// database do not meet each other's events.
    pub fn event_id(&self, n: usize) -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("probe-{nanos:x}-{n}")
    }

    /// A genuine message for event `id` crediting `amount`, stamped now.
    pub fn message(&self, id: &str, amount: i64) -> Message {
        Message {
            id: Some(id.to_owned()),
            signed_id: id.to_owned(),
            timestamp: now_secs(),
            body: self
                .template
                .replace("{account_id}", &self.account.to_string())
                .replace("{amount}", &amount.to_string()),
            signing: Signing::Genuine,
        }
    }

    pub(crate) fn signed(&self) -> bool {
        self.secret.is_some()
    }

    fn target(&self) -> &Target {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        &self.targets[i % self.targets.len()]
    }

    /// Sends `msg`; for [`Expect::Accepted`], again after a "try again"
    /// answer, up to [`ATTEMPTS`] times (each with a fresh timestamp, as a
    /// provider's retry has).
    pub(crate) fn deliver(&self, what: &'static str, msg: &Message, expect: Expect) -> Delivery {
        let mut attempts = vec![self.send(msg)];
        while expect == Expect::Accepted && attempts.len() < ATTEMPTS {
            let last = attempts.last();
            match (last.and_then(|e| e.status), last.and_then(|e| e.no_answer)) {
                (Some(s), _) if s >= 500 || s == 409 || s == 429 => {}
                (None, Some(NoAnswer::Failed)) => {} // no answer: a provider retries too
                _ => break,
            }
            std::thread::sleep(RETRY_PAUSE);
            let retry = Message {
                timestamp: now_secs(),
                ..msg.clone()
            };
            attempts.push(self.send(&retry));
        }
        Delivery {
            what,
            expect,
            attempts,
        }
    }

    fn headers(&self, msg: &Message) -> Vec<(&'static str, String)> {
        let mut headers = vec![("content-type", "application/json".to_owned())];
        if let Some(id) = &msg.id {
            headers.push(("webhook-id", id.clone()));
        }
        headers.push(("webhook-timestamp", msg.timestamp.to_string()));
        let key = match msg.signing {
            Signing::Genuine => self.secret.clone(),
            Signing::Forged => Secret::from_bytes(&FORGER_KEY).ok(),
        };
        if let Some(key) = key {
            let signature = sign(&key, &msg.signed_id, msg.timestamp, msg.body.as_bytes());
            headers.push(("webhook-signature", signature));
        }
        headers
    }

    fn blank(&self, target: &Target, msg: &Message) -> Exchange {
        Exchange {
            url: target.url.clone(),
            webhook_id: msg.id.clone(),
            webhook_timestamp: msg.timestamp,
            signed: msg.signing,
            body: msg.body.clone(),
            at_ms: self.started.elapsed().as_millis(),
            took_ms: 0,
            status: None,
            answer: None,
            error: None,
            no_answer: None,
        }
    }

    /// What is left of the run's deadline, capped at one request's timeout.
    fn budget(&self) -> Option<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| left.min(self.timeout))
    }

    /// One POST, its answer read within the budget.
    fn send(&self, msg: &Message) -> Exchange {
        let target = self.target();
        let mut ex = self.blank(target, msg);
        let Some(budget) = self.budget() else {
            return failed(
                ex,
                NoAnswer::Deadline,
                "the run's deadline (--deadline) passed".into(),
            );
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_idle_connections(0)
            .proxy(None)
            .timeout_global(Some(budget))
            .build()
            .into();
        let mut request = agent.post(&target.url);
        for (name, value) in self.headers(msg) {
            request = request.header(name, value);
        }
        let started = Instant::now();
        let result = request.send(msg.body.as_str()).and_then(|mut answer| {
            let status = answer.status().as_u16();
            let body = answer
                .body_mut()
                .with_config()
                .limit(MAX_ANSWER_BYTES)
                .read_to_vec()?;
            Ok((status, body))
        });
        ex.took_ms = started.elapsed().as_millis();
        match result {
            Ok((status, body)) => {
                ex.status = Some(status);
                ex.answer = Some(printable(&body));
                ex
            }
            Err(e) => {
                let (kind, text) = explain(&e, budget);
                failed(ex, kind, text)
            }
        }
    }

    /// Sends `msg` and closes the connection without reading a byte: the
    /// answer is lost, as when a provider's request times out in flight.
    pub(crate) fn send_and_close(&self, msg: &Message) -> Delivery {
        let target = self.target();
        let ex = self.blank(target, msg);
        let mut request = format!(
            "POST {} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\nconnection: close\r\n",
            target.path,
            target.authority,
            msg.body.len()
        );
        for (name, value) in self.headers(msg) {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&msg.body);
        let send = |budget| -> std::io::Result<()> {
            let addr = target.authority.to_socket_addrs()?.next();
            let addr = addr.ok_or_else(|| std::io::Error::other("no address"))?;
            let mut stream = TcpStream::connect_timeout(&addr, budget)?;
            stream.set_write_timeout(Some(budget))?;
            stream.write_all(request.as_bytes())
            // `stream` drops here: closed without reading the answer.
        };
        let sent = match self.budget() {
            None => Err("the run's deadline (--deadline) passed".to_owned()),
            Some(budget) => send(budget).map_err(|e| e.to_string()),
        };
        let attempts = vec![match sent {
            Ok(()) => ex,
            Err(e) => failed(ex, NoAnswer::Unreachable, format!("could not send: {e}")),
        }];
        Delivery {
            what: "sent, then the connection closed before the answer",
            expect: Expect::Lost,
            attempts,
        }
    }
}

/// The start of an answer, its control characters escaped: a receiver's
/// bytes never reach the terminal raw.
fn printable(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .chars()
        .take(KEPT_ANSWER_CHARS)
        .flat_map(|c| match c.is_control() {
            true => c.escape_default().collect(),
            false => vec![c],
        })
        .collect()
}

fn failed(mut ex: Exchange, kind: NoAnswer, text: String) -> Exchange {
    ex.no_answer = Some(kind);
    ex.error = Some(text);
    ex
}

/// A failed exchange in words a receiver's author can act on.
fn explain(e: &ureq::Error, budget: Duration) -> (NoAnswer, String) {
    use std::io::ErrorKind;
    match e {
        ureq::Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => (
            NoAnswer::Unreachable,
            format!("connection refused: is the receiver running? ({io})"),
        ),
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => {
            (NoAnswer::Unreachable, format!("could not connect: {e}"))
        }
        ureq::Error::Timeout(_) => (
            NoAnswer::Failed,
            format!("no complete answer within {:.1} s", budget.as_secs_f64()),
        ),
        ureq::Error::BodyExceedsLimit(_) => (
            NoAnswer::Failed,
            format!("the answer's body is larger than {MAX_ANSWER_BYTES} bytes"),
        ),
        ureq::Error::Io(io) => (
            NoAnswer::Failed,
            format!("the connection failed before a complete answer: {io}"),
        ),
        other => (
            NoAnswer::Failed,
            format!("not a valid HTTP answer: {other}"),
        ),
    }
}

pub(crate) fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::Target;

    /// The probe sends forged and repeated payments: only to this machine,
    /// unless asked, and a host that merely starts like a loopback name is not one.
    #[test]
    fn only_loopback_targets_unless_allowed() {
        for url in [
            "http://127.0.0.1:9/h",
            "http://localhost/h",
            "http://[::1]:8080/h",
            "http://127.3.4.5/",
        ] {
            assert!(Target::parse(url, false).is_ok(), "{url}");
        }
        for url in [
            "http://127.0.0.1.example.com/h",
            "http://localhost.example/h",
            "http://192.0.2.1/h",
            "http://10.0.0.1/h",
        ] {
            let refused = Target::parse(url, false).expect_err(url);
            assert!(refused.contains("--allow-remote"), "{refused}");
            assert!(
                Target::parse(url, true).is_ok(),
                "{url} with --allow-remote"
            );
        }
        for url in [
            "https://127.0.0.1/h",
            "ftp://127.0.0.1/h",
            "127.0.0.1:80",
            "http://",
        ] {
            assert!(Target::parse(url, true).is_err(), "{url}");
        }
    }
}
