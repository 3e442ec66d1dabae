//! A headless Chromium driven over the DevTools protocol, for the viewer's browser test and
//! benchmark. Chromium comes from the system (`.ci/run` installs Debian's `chromium`); the
//! protocol's WebSocket is spoken here over `std::net` (text frames, client masking, pings),
//! so the test needs neither a browser download nor a Python environment.
//!
//! Missing Chromium is a visible `SKIPPED:` line, and a failure when `.ci/run` has made sure
//! Chromium is there (`TAUGUARD_REQUIRE_CHROMIUM`, set once it is installed).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Chromium executable: `$TAUGUARD_CHROMIUM`, else `chromium`, `chromium-browser` or
/// `google-chrome` on `PATH`.
pub fn chromium_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TAUGUARD_CHROMIUM").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// The Chromium executable, or `None` after a visible skip line; with
/// `TAUGUARD_REQUIRE_CHROMIUM` set (`.ci/run` sets it once Chromium is installed) a missing
/// Chromium fails instead.
pub fn chromium_or_skip() -> Option<PathBuf> {
    let found = chromium_path();
    if found.is_none() {
        assert!(
            std::env::var_os("TAUGUARD_REQUIRE_CHROMIUM").is_none(),
            "TAUGUARD_REQUIRE_CHROMIUM is set but no Chromium was found (set TAUGUARD_CHROMIUM)"
        );
        crate::skip(
            "chromium not available (install Debian's `chromium`, or set TAUGUARD_CHROMIUM)",
        );
    }
    found
}

/// One headless browser with one page, killed on drop.
pub struct Browser {
    child: Child,
    profile: PathBuf,
    ws: WebSocket,
    next_id: u64,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser")
            .field("pid", &self.child.id())
            .finish()
    }
}

impl Browser {
    /// Starts `exe` headless with a fresh profile and a `width`×`height` page.
    pub fn launch(exe: &Path, width: u32, height: u32) -> Result<Browser, String> {
        static LAUNCHES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = LAUNCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let profile =
            std::env::temp_dir().join(format!("tauguard-chromium-{}-{n}", std::process::id()));
        let mut child = Command::new(exe)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let browser_url = rx
            .recv_timeout(Duration::from_secs(60))
            .map_err(|_| format!("{} printed no DevTools URL within 60 s", exe.display()))?;
        let host = browser_url
            .strip_prefix("ws://")
            .and_then(|r| r.split('/').next())
            .ok_or_else(|| format!("unexpected DevTools URL {browser_url}"))?
            .to_string();
        let list = http_get(&host, "/json/list")?;
        let targets: Value = serde_json::from_str(&list)
            .map_err(|e| format!("DevTools /json/list is not JSON ({e}): {list}"))?;
        let page = targets
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page"))
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .ok_or_else(|| format!("no page target in {list}"))?;
        let ws = WebSocket::connect(page)?;
        let mut b = Browser {
            child,
            profile,
            ws,
            next_id: 0,
        };
        b.call("Page.enable", json!({}))?;
        b.call("Runtime.enable", json!({}))?;
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )?;
        Ok(b)
    }

    /// Sends one protocol command and returns its `result` (events in between are dropped).
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"id": id, "method": method, "params": params});
        self.ws.send_text(&msg.to_string())?;
        loop {
            let text = self.ws.recv_text()?;
            let v: Value =
                serde_json::from_str(&text).map_err(|e| format!("DevTools sent non-JSON ({e})"))?;
            if v["id"].as_u64() != Some(id) {
                continue;
            }
            if let Some(err) = v.get("error") {
                return Err(format!("{method}: {err}"));
            }
            return Ok(v["result"].clone());
        }
    }

    /// Evaluates `expr` in the page (promises awaited) and returns its value; a thrown
    /// exception is an error with its text.
    pub fn eval(&mut self, expr: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "awaitPromise": true, "returnByValue": true}),
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(format!("`{expr}` threw: {ex}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Navigates to `url` and waits for the document to load.
    pub fn navigate(&mut self, url: &str) -> Result<(), String> {
        self.call("Page.navigate", json!({"url": url}))?;
        self.wait_for(
            "document.readyState === 'complete'",
            Duration::from_secs(30),
        )
        .map(|_| ())
    }

    /// Polls `expr` until it is truthy; returns its value.
    pub fn wait_for(&mut self, expr: &str, timeout: Duration) -> Result<Value, String> {
        let start = Instant::now();
        loop {
            let v = self.eval(expr)?;
            let truthy =
                !matches!(&v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("");
            if truthy {
                return Ok(v);
            }
            if start.elapsed() > timeout {
                return Err(format!("`{expr}` still falsy after {timeout:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Writes a PNG screenshot of the viewport to `path`.
    pub fn screenshot(&mut self, path: &Path) -> Result<(), String> {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}))?;
        let data = r["data"]
            .as_str()
            .ok_or("captureScreenshot returned no data")?;
        let png = base64_decode(data)?;
        std::fs::write(path, png).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// A file's `file://` URL.
pub fn file_url(path: &Path) -> String {
    let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    format!("file://{}", abs.display())
}

fn http_get(host: &str, path: &str) -> Result<String, String> {
    let mut s = TcpStream::connect(host).map_err(|e| format!("cannot connect to {host}: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("{host}{path}: {e}"))?;
    // DevTools keeps the connection open: read the head, then Content-Length bytes.
    let mut reader = BufReader::new(s);
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .map_err(|e| format!("{host}{path}: {e}"))?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v
                .trim()
                .parse()
                .map_err(|_| format!("{host}{path}: bad {line}"))?;
        }
    }
    let mut body = vec![0u8; len];
    reader
        .read_exact(&mut body)
        .map_err(|e| format!("{host}{path}: {e}"))?;
    String::from_utf8(body).map_err(|e| format!("{host}{path}: {e}"))
}

/// The client side of RFC 6455, as much as DevTools needs.
struct WebSocket {
    stream: TcpStream,
    mask_seed: u32,
}

impl WebSocket {
    fn connect(url: &str) -> Result<WebSocket, String> {
        let rest = url
            .strip_prefix("ws://")
            .ok_or_else(|| format!("not a ws:// URL: {url}"))?;
        let (host, path) = rest
            .split_once('/')
            .ok_or_else(|| format!("no path in {url}"))?;
        let mut stream =
            TcpStream::connect(host).map_err(|e| format!("cannot connect to {host}: {e}"))?;
        stream.set_read_timeout(Some(Duration::from_secs(120))).ok();
        write!(
            stream,
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGF1Z3VhcmQtdmlldy10ZXN0\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .map_err(|e| format!("{url}: {e}"))?;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream
                .read_exact(&mut byte)
                .map_err(|e| format!("{url}: handshake: {e}"))?;
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head);
        if !head.starts_with("HTTP/1.1 101") {
            return Err(format!("{url}: handshake refused: {head}"));
        }
        Ok(WebSocket {
            stream,
            mask_seed: 0x9e37_79b9,
        })
    }

    fn send_frame(&mut self, opcode: u8, payload: &[u8]) -> Result<(), String> {
        let mut frame = vec![0x80 | opcode];
        let n = payload.len();
        if n < 126 {
            frame.push(0x80 | n as u8);
        } else if n < 65536 {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        } else {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
        self.mask_seed = self
            .mask_seed
            .wrapping_mul(1_664_525)
            .wrapping_add(1_013_904_223);
        let mask = self.mask_seed.to_be_bytes();
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream
            .write_all(&frame)
            .map_err(|e| format!("DevTools socket write: {e}"))
    }

    fn send_text(&mut self, text: &str) -> Result<(), String> {
        self.send_frame(0x1, text.as_bytes())
    }

    fn recv_text(&mut self) -> Result<String, String> {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.read(&mut head)?;
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
            let mut len = u64::from(head[1] & 0x7f);
            if len == 126 {
                let mut b = [0u8; 2];
                self.read(&mut b)?;
                len = u64::from(u16::from_be_bytes(b));
            } else if len == 127 {
                let mut b = [0u8; 8];
                self.read(&mut b)?;
                len = u64::from_be_bytes(b);
            }
            let mask = if head[1] & 0x80 != 0 {
                let mut m = [0u8; 4];
                self.read(&mut m)?;
                Some(m)
            } else {
                None
            };
            let mut payload = vec![0u8; len as usize];
            self.read(&mut payload)?;
            if let Some(m) = mask {
                payload
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, b)| *b ^= m[i % 4]);
            }
            match opcode {
                0x0 | 0x1 => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message)
                            .map_err(|e| format!("DevTools sent non-UTF-8 text: {e}"));
                    }
                }
                0x8 => return Err("DevTools closed the socket".into()),
                0x9 => self.send_frame(0xA, &payload)?,
                _ => {}
            }
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<(), String> {
        self.stream
            .read_exact(buf)
            .map_err(|e| format!("DevTools socket read: {e}"))
    }
}

fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let digits: Vec<u32> = chunk
            .iter()
            .take_while(|&&b| b != b'=')
            .map(|&b| val(b).ok_or_else(|| format!("not base64: byte {b}")))
            .collect::<Result<_, _>>()?;
        let mut acc = 0u32;
        for (i, d) in digits.iter().enumerate() {
            acc |= d << (18 - 6 * i);
        }
        let n = digits.len().saturating_sub(1);
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_decodes_padded_and_unpadded_groups() {
        assert_eq!(super::base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(super::base64_decode("aGk=").unwrap(), b"hi");
        assert_eq!(super::base64_decode("YWJj").unwrap(), b"abc");
        assert!(super::base64_decode("a$==").is_err());
    }
}
