//! The HTTP transport: the same messages as over stdio, each POSTed to the guard's URL as a
//! JSON body, the guard's next message as the response body. A guard that needs a lookup
//! answers with the `lookup`; tauguard POSTs the `lookup_result` and the response to that is
//! the guard's next message, until it is the reply. Notifications (`start`, `end`,
//! `shutdown`) are POSTed and their response bodies ignored. Concurrency is the server's:
//! requests of different simulations are sent at once.

use super::fault::Fault;
use super::protocol::{self, Hello};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A guard behind a URL.
#[derive(Debug)]
pub struct HttpLink {
    url: String,
    client: reqwest::Client,
    hello: Hello,
    next_id: AtomicU64,
}

/// POSTs `msg` and reads the response body as the guard's next message.
async fn post(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
    msg: &Value,
) -> Result<(Value, String), Fault> {
    let sent = client
        .post(url)
        .timeout(timeout)
        .json(msg)
        .send()
        .await
        .map_err(|e| transport_fault(&e, timeout))?;
    let status = sent.status();
    let body = sent
        .text()
        .await
        .map_err(|e| transport_fault(&e, timeout))?;
    if !status.is_success() {
        return Err(Fault::Http {
            status: status.as_u16(),
            body,
        });
    }
    match serde_json::from_str(&body) {
        Ok(v) => Ok((v, body)),
        Err(_) => Err(Fault::Malformed { raw: body }),
    }
}

fn transport_fault(e: &reqwest::Error, timeout: Duration) -> Fault {
    if e.is_timeout() {
        Fault::Timeout {
            secs: timeout.as_secs_f64(),
            orphans: Vec::new(),
        }
    } else {
        Fault::Crash {
            detail: format!("HTTP exchange with the guard failed: {e}"),
        }
    }
}

impl HttpLink {
    /// Greets the guard at `url`. Runs on a thread of its own with a runtime of its own, so
    /// it works whether or not the caller is inside one (plans are built both ways).
    pub fn connect(url: &str, timeout: Duration) -> Result<HttpLink, String> {
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        let (u, c) = (url.to_string(), client.clone());
        let hello = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start a runtime: {e}"))?;
            rt.block_on(async {
                let id = "hello-1";
                let (v, raw) = post(&c, &u, timeout, &protocol::hello_request(id))
                    .await
                    .map_err(|f| f.describe())?;
                protocol::parse_hello(&v, id).map_err(|e| format!("the `hello` reply: {e}: {raw}"))
            })
        })
        .join()
        .map_err(|_| "the greeting thread panicked".to_string())?
        .map_err(|e| format!("external guard at {url}: {e}"))?;
        Ok(HttpLink {
            url: url.to_string(),
            client,
            hello,
            next_id: AtomicU64::new(1),
        })
    }

    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    pub fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// POSTs one message; the response is the guard's next message.
    pub async fn exchange(&self, msg: &Value, timeout: Duration) -> Result<(Value, String), Fault> {
        post(&self.client, &self.url, timeout, msg).await
    }

    /// POSTs a notification, ignoring the response; failures are the next request's to find.
    pub async fn notify(&self, msg: &Value, timeout: Duration) {
        let _ = post(&self.client, &self.url, timeout, msg).await;
    }
}
