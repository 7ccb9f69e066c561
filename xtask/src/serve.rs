//! A small static file server for the page: `/` (index.html), `/www/**` and `/favicon.ico`.
//!
//! Used by `cargo xtask serve` and, on a free port in a background thread, by the end-to-end
//! layer of `cargo xtask test`.

use crate::util::say;
use anyhow::{anyhow, Context, Result};
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;
use tiny_http::{Header, Method, Request, Response, ResponseBox};

/// Sent with every response.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

const WORKER_THREADS: usize = 8;

/// A running server; stops when [`Server::stop`] is called or it is dropped.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Server {
    /// `http://host:port/`
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Serves until the process is stopped.
    pub fn wait(mut self) {
        for t in self.threads.drain(..) {
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
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Starts serving `root` on `host:port` (port 0: any free port) with several threads.
pub fn start(root: &Path, host: &str, port: u16, log: bool) -> Result<Server> {
    let root = root
        .canonicalize()
        .with_context(|| format!("serving {}", root.display()))?;
    let bind = format_bind(host, port);
    let server =
        tiny_http::Server::http(&bind).map_err(|e| anyhow!("cannot listen on {bind}: {e}"))?;
    let addr = server
        .server_addr()
        .to_ip()
        .context("the server is not listening on an IP address")?;
    let server = Arc::new(server);
    let root = Arc::new(root);
    let stop = Arc::new(AtomicBool::new(false));
    let threads = (0..WORKER_THREADS)
        .map(|i| {
            let server = Arc::clone(&server);
            let root = Arc::clone(&root);
            let stop = Arc::clone(&stop);
            thread::Builder::new()
                .name(format!("serve-{i}"))
                .spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        match server.recv_timeout(Duration::from_millis(100)) {
                            Ok(Some(request)) => handle(&root, request, log),
                            Ok(None) => {}
                            Err(e) => {
                                if log {
                                    say(format!("serve: {e}"));
                                }
                            }
                        }
                    }
                })
                .context("starting a server thread")
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Server {
        addr,
        stop,
        threads,
    })
}

fn format_bind(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}") // IPv6 literal
    } else {
        format!("{host}:{port}")
    }
}

fn handle(root: &Path, request: Request, log: bool) {
    let method = request.method().clone();
    let url = request.url().to_string();
    let (status, response) = match method {
        Method::Get | Method::Head => respond_file(root, &url),
        _ => {
            let mut response = text(405, "405 method not allowed\n");
            add_header(&mut response, "Allow", "GET, HEAD");
            (405, response)
        }
    };
    let response = with_common_headers(response);
    if log {
        say(format!("{method} {url} -> {status}"));
    }
    // HEAD: tiny_http sends the headers (with Content-Length) and leaves the body out.
    if let Err(e) = request.respond(response) {
        if log {
            say(format!("serve: answering {url}: {e}"));
        }
    }
}

fn respond_file(root: &Path, url: &str) -> (u16, ResponseBox) {
    let Some(file_path) = resolve(root, url) else {
        return (404, text(404, "404 not found\n"));
    };
    match File::open(&file_path) {
        Ok(file) => {
            let mut response = Response::from_file(file).boxed();
            add_header(&mut response, "Content-Type", mime_type(&file_path));
            (200, response)
        }
        Err(_) => (404, text(404, "404 not found\n")),
    }
}

fn text(status: u16, body: &str) -> ResponseBox {
    let mut response = Response::from_string(body).with_status_code(status).boxed();
    add_header(&mut response, "Content-Type", "text/plain; charset=utf-8");
    response
}

fn with_common_headers(mut response: ResponseBox) -> ResponseBox {
    for (name, value) in [
        ("Cache-Control", "no-store"),
        ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
    ] {
        add_header(&mut response, name, value);
    }
    response
}

/// Adds a header; the names and values used here are ASCII constants, which tiny_http accepts.
fn add_header(response: &mut ResponseBox, name: &str, value: &str) {
    if let Ok(h) = Header::from_bytes(name.as_bytes(), value.as_bytes()) {
        response.add_header(h);
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
