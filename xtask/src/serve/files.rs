//! The files the server serves (`/`, `/sw.js`, `/favicon.ico`, `/assets/**`, `/www/**`) and
//! how they are cached ([`respond_file`]).

use super::{percent_decode_bytes, text, Reply};
use std::path::{Path, PathBuf};

/// A file, cached as a static host would: the built site's `assets/` (content-hashed names,
/// so a name never gets other bytes) for a year, `immutable`; every other file
/// (`index.html`, `sw.js`) checked again on each use (`no-cache`); the source tree's `www/`
/// not kept (`no-store`), since its names stay while its bytes change.
pub(super) fn respond_file(root: &Path, url: &str) -> Reply {
    let Some(file_path) = resolve(root, url) else {
        return text(404, "404 not found\n");
    };
    let cache = if file_path.starts_with(root.join("assets")) {
        IMMUTABLE
    } else if file_path.starts_with(root.join("www")) {
        "no-store"
    } else {
        "no-cache"
    };
    match std::fs::read(&file_path) {
        Ok(body) => Reply::new(200, mime_type(&file_path), body).with("Cache-Control", cache),
        Err(_) => text(404, "404 not found\n"),
    }
}

/// How the built site's hashed assets are cached (what `dist/_headers` asks hosts for).
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The file a request path names, or `None` (answered with 404) if it is not one of the files
/// served: `/` or `/index.html`, `/favicon.ico`, `/sw.js`, and files under `/assets/` (the
/// built site, `dist/`) or `/www/` (the source tree, for `--root`). Rejects `..`, `.`, hidden
/// names, empty segments, backslashes and NUL, also when percent-encoded, and checks that the
/// resolved file (after symlinks) is still inside what is served.
fn resolve(root: &Path, url: &str) -> Option<PathBuf> {
    let rel = allowed_relative_path(url)?;
    let full = root.join(&rel).canonicalize().ok()?;
    let mut parts = rel.components();
    let first = parts.next()?;
    let inside = if parts.next().is_some() {
        full.starts_with(root.join(first))
    } else {
        full == root.join(&rel)
    };
    (inside && full.is_file()).then_some(full)
}

/// The pure, file-system-free part of [`resolve`].
fn allowed_relative_path(url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let path = path.strip_prefix('/')?;
    let decoded = String::from_utf8(percent_decode_bytes(path)?).ok()?;
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
        ["index.html"] | ["favicon.ico"] | ["sw.js"] | ["assets" | "www", _, ..]
    );
    allowed.then(|| segments.iter().collect())
}

/// The Content-Type for a file, by extension.
fn mime_type(path: &Path) -> &'static str {
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
    use super::super::testing::*;
    use super::super::Limits;
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
        assert_eq!(allowed("/sw.js").as_deref(), Some("sw.js"));
        assert_eq!(
            allowed("/assets/app-0123abcd.js").as_deref(),
            Some("assets/app-0123abcd.js")
        );
        assert_eq!(allowed("/assets/"), None);
        assert_eq!(
            allowed("/relay.json"),
            None,
            "answered by the server, not a file"
        );
    }

    /// The built site's caching, as a static host's: hashed assets for ever, the page
    /// revalidated; `/relay.json` says there is a relay whatever the root holds.
    #[test]
    fn caches_the_built_site_like_a_static_host_and_answers_the_relay_probe() {
        let site = Site::new("dist");
        std::fs::create_dir_all(site.0.join("assets")).unwrap();
        std::fs::write(site.0.join("assets/app-1234.js"), "x").unwrap();
        std::fs::write(site.0.join("relay.json"), "{\"relay\": false}").unwrap();
        let server = site.serve(Limits::default());
        let asset = get(&server, "/assets/app-1234.js");
        assert_eq!(status(&asset), 200, "{asset}");
        assert!(
            asset.contains(&format!("\r\nCache-Control: {IMMUTABLE}\r\n")),
            "{asset}"
        );
        assert!(!asset.contains("no-store"), "{asset}");
        let page = get(&server, "/");
        assert!(page.contains("\r\nCache-Control: no-cache\r\n"), "{page}");
        let source = get(&server, "/www/app.js");
        assert!(
            source.contains("\r\nCache-Control: no-store\r\n"),
            "{source}"
        );
        let probe = get(&server, "/relay.json?x=1");
        assert_eq!(status(&probe), 200, "{probe}");
        assert!(probe.ends_with("{\"relay\": true}\n"), "{probe}");
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
