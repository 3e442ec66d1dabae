//! `tauguard view --serve`: the site on loopback, for browsers or setups where `file://` pages
//! are unwelcome. A minimal blocking HTTP/1.1 file server over `std::net` (GET and HEAD, one
//! request per connection, one thread per connection): no dependency for a job this small,
//! and nothing outside the site directory is ever served.

use crate::error::ViewError;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

/// A bound listener serving one site directory.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    root: PathBuf,
}

impl Server {
    /// Binds 127.0.0.1:`port` (0 = any free port).
    pub fn bind(root: &Path, port: u16) -> Result<Server, ViewError> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .map_err(|cause| ViewError::Listen { port, cause })?;
        Ok(Server {
            listener,
            root: root.to_path_buf(),
        })
    }

    /// The port actually bound.
    pub fn port(&self) -> u16 {
        self.listener.local_addr().map(|a| a.port()).unwrap_or(0)
    }
}

/// Serves until the process ends; a failed connection never stops the server.
pub fn serve_forever(server: Server) -> ! {
    loop {
        let Ok((stream, _)) = server.listener.accept() else {
            continue;
        };
        let root = server.root.clone();
        std::thread::spawn(move || {
            let _ = handle(stream, &root);
        });
    }
}

fn handle(stream: TcpStream, root: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Drain the headers (bounded), then answer.
    let mut header = String::new();
    for _ in 0..100 {
        header.clear();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut out = stream;
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut out,
            "405 Method Not Allowed",
            "text/plain",
            b"GET or HEAD only\n",
            true,
        );
    }
    let Some(path) = resolve(root, target) else {
        return respond(
            &mut out,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            method == "GET",
        );
    };
    match std::fs::read(&path) {
        Ok(body) => respond(
            &mut out,
            "200 OK",
            content_type(&path),
            &body,
            method == "GET",
        ),
        Err(_) => respond(
            &mut out,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            method == "GET",
        ),
    }
}

/// The file under `root` a request target names: query and fragment dropped, `%XX` decoded,
/// `/` = `index.html`; `None` for anything that could leave `root` (`..`, `.`, backslashes,
/// NUL, empty segments) or is not a file.
pub(crate) fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    let path = path.strip_prefix('/')?;
    let decoded = percent_decode(path)?;
    let mut out = root.to_path_buf();
    if decoded.is_empty() {
        out.push("index.html");
    } else {
        for seg in decoded.split('/') {
            if seg.is_empty() || seg == "." || seg == ".." || seg.contains(['\\', '\0']) {
                return None;
            }
            out.push(seg);
        }
    }
    out.is_file().then_some(out)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn respond(
    out: &mut TcpStream,
    status: &str,
    ctype: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n\r\n",
        body.len()
    );
    out.write_all(head.as_bytes())?;
    if with_body {
        out.write_all(body)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_inside_the_root_resolve() {
        let dir = std::env::temp_dir().join(format!("tg-view-serve-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::write(dir.join("index.html"), "x").unwrap();
        std::fs::write(dir.join("data/a b.js"), "x").unwrap();
        assert_eq!(resolve(&dir, "/"), Some(dir.join("index.html")));
        assert_eq!(
            resolve(&dir, "/index.html?x=1#y"),
            Some(dir.join("index.html"))
        );
        assert_eq!(
            resolve(&dir, "/data/a%20b.js"),
            Some(dir.join("data/a b.js"))
        );
        for bad in [
            "/../etc/passwd",
            "/data/../index.html",
            "/%2e%2e/x",
            "/data//a",
            "/data",
            "x",
            "/%zz",
            "/data\\a",
        ] {
            assert_eq!(resolve(&dir, bad), None, "{bad}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
