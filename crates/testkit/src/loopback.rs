//! The loopback OpenAI-compatible provider tests run models against: its provider table as a
//! config writes it, the chat-completion body a mock server answers with, and (feature
//! `mock-server`) the server itself on a runtime of its own, so the TOML keys, the reply's
//! shape and the server's set-up are spelled once.

use serde_json::{Value, json};

/// An `openai`-kind provider table for a loopback server, as TOML text: the name, the base
/// URL and what the test adds (`timeout_secs = 5`, `api_key_env = "KEY"`), and its `retry`
/// table when given.
#[derive(Debug, Clone)]
pub struct MockProvider {
    pub name: String,
    pub base_url: String,
    /// Lines under the provider's table after `kind` and `base_url`.
    pub lines: Vec<String>,
    /// Lines under its `.retry` table; empty = no retry table.
    pub retry: Vec<String>,
}

impl MockProvider {
    /// The provider `name` at `base_url`.
    pub fn new(name: &str, base_url: &str) -> MockProvider {
        MockProvider {
            name: name.into(),
            base_url: base_url.into(),
            lines: Vec::new(),
            retry: Vec::new(),
        }
    }

    /// Adds lines (several may be given with newlines) under the provider's table.
    pub fn lines(mut self, lines: &str) -> Self {
        self.lines.extend(split(lines));
        self
    }

    /// Adds lines under the provider's `retry` table.
    pub fn retry(mut self, lines: &str) -> Self {
        self.retry.extend(split(lines));
        self
    }

    /// The tables under `prefix`: `llm.providers` in a run config, `providers` in an
    /// `--llm-config` file.
    pub fn toml(&self, prefix: &str) -> String {
        let mut s = format!(
            "[{prefix}.{}]\nkind = \"openai\"\nbase_url = \"{}\"\n",
            self.name, self.base_url
        );
        for l in &self.lines {
            s.push_str(l);
            s.push('\n');
        }
        if !self.retry.is_empty() {
            s.push_str(&format!("[{prefix}.{}.retry]\n", self.name));
            for l in &self.retry {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }
}

fn split(lines: &str) -> impl Iterator<Item = String> + '_ {
    lines
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
}

/// An OpenAI chat-completion body: one choice with `message` and `finish_reason`, from
/// `model`, with `(prompt, completion)` tokens of usage.
pub fn chat_completion(
    model: &str,
    finish_reason: &str,
    message: Value,
    usage: (u64, u64),
) -> Value {
    let (prompt, completion) = usage;
    json!({
        "id": "r", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion}
    })
}

/// An OpenAI embeddings body answering `request` (the body the client sent): one embedding per
/// text of its `input`, in order, as `embed` writes it, from `model`, with `prompt_tokens` of
/// usage.
pub fn embeddings_reply(
    request: &Value,
    model: &str,
    prompt_tokens: u64,
    embed: impl Fn(&str) -> Value,
) -> Value {
    let data: Vec<Value> = request["input"]
        .as_array()
        .expect("an embeddings request has a list of texts")
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let text = t.as_str().expect("each input is a text");
            json!({"object": "embedding", "index": i, "embedding": embed(text)})
        })
        .collect();
    json!({
        "object": "list", "data": data, "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}
    })
}

/// An assistant message with text `content`, as [`chat_completion`] takes it.
pub fn assistant_text(content: &str) -> Value {
    json!({"role": "assistant", "content": content})
}

/// A loopback mock server on a runtime of its own, apart from the one a test runs on (a
/// binary's run, or the test's own); dropping it stops the server.
#[cfg(feature = "mock-server")]
#[derive(Debug)]
pub struct Loopback {
    pub server: wiremock::MockServer,
    pub rt: tokio::runtime::Runtime,
}

#[cfg(feature = "mock-server")]
impl Loopback {
    /// A server answering every POST with `answer`.
    pub fn serve(answer: impl wiremock::Respond + 'static) -> Loopback {
        use wiremock::matchers::method;
        Loopback::mount(wiremock::Mock::given(method("POST")).respond_with(answer))
    }

    /// A server with `mock` mounted (for a test that matches more than the method).
    pub fn mount(mock: wiremock::Mock) -> Loopback {
        let server = Loopback::start();
        server.add(mock);
        server
    }

    /// A server answering nothing yet (every request gets 404 until a mock is added).
    pub fn start() -> Loopback {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let server = rt.block_on(wiremock::MockServer::start());
        Loopback { server, rt }
    }

    /// Forgets every mock and every request received.
    pub fn reset(&self) {
        self.rt.block_on(self.server.reset());
    }

    /// Mounts `mock` beside what the server already answers with.
    pub fn add(&self, mock: wiremock::Mock) {
        self.rt.block_on(mock.mount(&self.server));
    }

    pub fn uri(&self) -> String {
        self.server.uri()
    }

    /// The requests the server has received so far.
    pub fn received(&self) -> Vec<wiremock::Request> {
        self.rt
            .block_on(self.server.received_requests())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_table_has_its_lines_and_retry_table() {
        let text = MockProvider::new("mock", "http://x")
            .lines("timeout_secs = 5\napi_key_env = \"K\"")
            .retry("max_attempts = 1")
            .toml("llm.providers");
        assert_eq!(
            text,
            "[llm.providers.mock]\nkind = \"openai\"\nbase_url = \"http://x\"\ntimeout_secs = 5\n\
             api_key_env = \"K\"\n[llm.providers.mock.retry]\nmax_attempts = 1\n"
        );
        let bare = MockProvider::new("local", "http://y").toml("providers");
        assert!(!bare.contains("retry") && bare.starts_with("[providers.local]\n"));
    }

    #[test]
    fn an_embeddings_reply_has_one_vector_per_input_in_order() {
        let request = json!({"input": ["ab", "c"], "model": "e"});
        let v = embeddings_reply(&request, "e", 3, |t| json!([t.len()]));
        assert_eq!(
            v["data"][0],
            json!({"object": "embedding", "index": 0, "embedding": [2]})
        );
        assert_eq!(v["data"][1]["embedding"], json!([1]));
        assert_eq!(v["usage"], json!({"prompt_tokens": 3, "total_tokens": 3}));
    }

    #[test]
    fn a_completion_totals_its_usage() {
        let v = chat_completion("m", "stop", assistant_text("OK"), (9, 1));
        assert_eq!(v["usage"]["total_tokens"], 10);
        assert_eq!(v["choices"][0]["message"]["content"], "OK");
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
    }
}
