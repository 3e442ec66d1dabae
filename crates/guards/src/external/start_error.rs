//! Why an external guard could not be started or greeted. Planning a run stops on it (no cell
//! can use the guard), so each cause is kept as its type and the binary prints the chain
//! (`what failed: why`); a restart that fails the same way writes the same chain into the
//! fault of the request that needed it.

/// Starting (or joining) an external guard failed.
#[derive(Debug, thiserror::Error)]
pub enum ExternalStartError {
    /// The `external` table is wrong; the message names the key.
    #[error("{0}")]
    Spec(String),
    #[error("the external guard's `command` is empty")]
    EmptyCommand,
    #[error("cannot start `{command}`")]
    Spawn {
        command: String,
        #[source]
        cause: std::io::Error,
    },
    #[error("cannot build an HTTP client")]
    HttpClient(#[source] reqwest::Error),
    #[error("the greeting thread panicked")]
    GreetingPanicked,
    /// The process started but did not greet as the protocol asks.
    #[error("external guard `{command}`")]
    ProcessGreeting {
        command: String,
        #[source]
        cause: GreetingError,
    },
    /// The URL did not greet as the protocol asks.
    #[error("external guard at {url}")]
    UrlGreeting {
        url: String,
        #[source]
        cause: GreetingError,
    },
}

/// The `hello` exchange failed: what the guard did (or did not do) instead of greeting.
#[derive(Debug, thiserror::Error)]
pub enum GreetingError {
    #[error("writing `hello` failed")]
    Write(#[source] std::io::Error),
    #[error("no `hello` reply within {secs:.1} s; stderr: {stderr}")]
    Silent { secs: f64, stderr: String },
    #[error("the process closed its output before answering `hello`; stderr: {stderr}")]
    Closed { stderr: String },
    #[error("the `hello` reply is not JSON: {line}")]
    NotJson {
        line: String,
        #[source]
        cause: serde_json::Error,
    },
    /// A JSON reply the protocol refuses (the problem names the field).
    #[error("the `hello` reply: {problem}: {line}")]
    Refused { problem: String, line: String },
    #[error("cannot start a runtime")]
    Runtime(#[source] std::io::Error),
    #[error("no reply within {secs:.1} s")]
    Timeout { secs: f64 },
    #[error("HTTP exchange with the guard failed")]
    Transport(#[source] reqwest::Error),
    #[error("the guard answered HTTP {status}")]
    Status { status: u16 },
    #[error("the reply is not JSON")]
    Malformed(#[source] serde_json::Error),
}
