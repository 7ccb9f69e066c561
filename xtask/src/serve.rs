//! A small static file server for the page: `/` (index.html), `/www/**` and `/favicon.ico`.
//!
//! Used by `cargo xtask serve` and, on a free port in a background thread, by the end-to-end
//! layer of `cargo xtask test`.

use crate::util::say;
use anyhow::{Context, Result};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Sent with every response.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The longest request head accepted (request line + headers).
const MAX_HEAD_BYTES: u64 = 16 * 1024;

/// A running server; stops when [`Server::stop`] is called or it is dropped.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
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
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

/// Starts serving `root` on `host:port` (port 0: any free port).
///
/// One thread accepts; each connection gets its own thread, answers one
/// request and is closed (`Connection: close`). No keep-alive means no
/// connection can wait behind another: simple, and it never stalls a page
/// load, which is all a test server needs.
pub fn start(root: &Path, host: &str, port: u16, log: bool) -> Result<Server> {
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
    let acceptor = {
        let stop = Arc::clone(&stop);
        thread::Builder::new()
            .name("serve-accept".into())
            .spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let root = Arc::clone(&root);
                            let spawned = thread::Builder::new()
                                .name("serve-conn".into())
                                .spawn(move || handle(&root, stream, log));
                            if let Err(e) = spawned {
                                say(format!("serve: cannot start a connection thread: {e}"));
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
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
            })
            .context("starting the server thread")?
    };
    Ok(Server {
        addr,
        stop,
        acceptor: Some(acceptor),
    })
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

fn handle(root: &Path, stream: TcpStream, log: bool) {
    // The accepted socket may inherit non-blocking mode on some systems.
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
    let Some((method, url)) = read_request_line(&stream) else {
        return; // not HTTP, or the client went away: nothing to answer
    };
    let reply = match method.as_str() {
        "GET" | "HEAD" => respond_file(root, &url),
        _ => {
            let mut reply = text(405, "405 method not allowed\n");
            reply.extra.push(("Allow", "GET, HEAD"));
            reply
        }
    };
    if log {
        say(format!("{method} {url} -> {}", reply.status));
    }
    if let Err(e) = write_reply(&stream, &reply, method == "HEAD") {
        if log {
            say(format!("serve: answering {url}: {e}"));
        }
    }
}

/// Reads the request head; returns the method and the request target.
fn read_request_line(stream: &TcpStream) -> Option<(String, String)> {
    let mut reader = BufReader::new(stream.take(MAX_HEAD_BYTES));
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    // Drain the headers up to the blank line (GET and HEAD carry no body).
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    let mut parts = first.split_whitespace();
    let method = parts.next()?.to_string();
    let url = parts.next()?.to_string();
    parts.next()?.starts_with("HTTP/").then_some((method, url))
}

fn write_reply(mut stream: &TcpStream, reply: &Reply, head_only: bool) -> std::io::Result<()> {
    let reason = match reply.status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
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
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(&reply.body)?;
    }
    stream.flush()?;
    let _ = stream.shutdown(std::net::Shutdown::Write);
    Ok(())
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
}
