//! The HTTP transport: the same messages as over stdio, each POSTed to the guard's URL as a
//! JSON body, the guard's next message as the response body. A guard that needs a lookup
//! answers with the `lookup`; tauguard POSTs the `lookup_result` and the response to that is
//! the guard's next message, until it is the reply. Notifications (`start`, `end`,
//! `shutdown`) are POSTed and their response bodies ignored. Concurrency is the server's:
//! requests of different simulations are sent at once.

use super::fault::Fault;
use super::protocol::{self, Hello};
use super::start_error::{ExternalStartError, GreetingError};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A guard behind a URL.
#[derive(Debug)]
pub(crate) struct HttpLink {
    url: String,
    client: reqwest::Client,
    hello: Hello,
    next_id: AtomicU64,
}

/// Why one POST gave no message: the exchange's fault mid-run, the greeting's error at start.
#[derive(Debug)]
enum PostError {
    Transport(reqwest::Error),
    Status {
        status: u16,
        body: String,
    },
    Malformed {
        body: String,
        cause: serde_json::Error,
    },
}

impl PostError {
    fn fault(self, timeout: Duration) -> Fault {
        match self {
            PostError::Transport(e) if e.is_timeout() => Fault::Timeout {
                secs: timeout.as_secs_f64(),
                orphans: Vec::new(),
            },
            PostError::Transport(e) => Fault::Crash {
                detail: format!("HTTP exchange with the guard failed: {e}"),
            },
            PostError::Status { status, body } => Fault::Http { status, body },
            PostError::Malformed { body, .. } => Fault::Malformed { raw: body },
        }
    }

    fn greeting(self, timeout: Duration) -> GreetingError {
        match self {
            PostError::Transport(e) if e.is_timeout() => GreetingError::Timeout {
                secs: timeout.as_secs_f64(),
            },
            PostError::Transport(e) => GreetingError::Transport(e),
            PostError::Status { status, .. } => GreetingError::Status { status },
            PostError::Malformed { cause, .. } => GreetingError::Malformed(cause),
        }
    }
}

/// POSTs `msg` and reads the response body as the guard's next message.
async fn post(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
    msg: &Value,
) -> Result<(Value, String), PostError> {
    let sent = client
        .post(url)
        .timeout(timeout)
        .json(msg)
        .send()
        .await
        .map_err(PostError::Transport)?;
    let status = sent.status();
    let body = sent.text().await.map_err(PostError::Transport)?;
    if !status.is_success() {
        return Err(PostError::Status {
            status: status.as_u16(),
            body,
        });
    }
    match serde_json::from_str(&body) {
        Ok(v) => Ok((v, body)),
        Err(cause) => Err(PostError::Malformed { body, cause }),
    }
}

impl HttpLink {
    /// Greets the guard at `url`. Runs on a thread of its own with a runtime of its own, so
    /// it works whether or not the caller is inside one (plans are built both ways).
    pub(crate) fn connect(url: &str, timeout: Duration) -> Result<HttpLink, ExternalStartError> {
        let client = reqwest::Client::builder()
            .build()
            .map_err(ExternalStartError::HttpClient)?;
        let (u, c) = (url.to_string(), client.clone());
        let hello = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(GreetingError::Runtime)?;
            rt.block_on(async {
                let id = "hello-1";
                let (v, raw) = post(&c, &u, timeout, &protocol::hello_request(id))
                    .await
                    .map_err(|e| e.greeting(timeout))?;
                protocol::parse_hello(&v, id)
                    .map_err(|problem| GreetingError::Refused { problem, line: raw })
            })
        })
        .join()
        .map_err(|_| ExternalStartError::GreetingPanicked)?
        .map_err(|cause| ExternalStartError::UrlGreeting {
            url: url.to_string(),
            cause,
        })?;
        Ok(HttpLink {
            url: url.to_string(),
            client,
            hello,
            next_id: AtomicU64::new(1),
        })
    }

    pub(crate) fn hello(&self) -> &Hello {
        &self.hello
    }

    pub(crate) fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// POSTs one message; the response is the guard's next message.
    pub(crate) async fn exchange(
        &self,
        msg: &Value,
        timeout: Duration,
    ) -> Result<(Value, String), Fault> {
        post(&self.client, &self.url, timeout, msg)
            .await
            .map_err(|e| e.fault(timeout))
    }

    /// POSTs a notification, ignoring the response; failures are the next request's to find.
    pub(crate) async fn notify(&self, msg: &Value, timeout: Duration) {
        let _ = post(&self.client, &self.url, timeout, msg).await;
    }
}
