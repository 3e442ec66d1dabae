//! [`RemoteModel`]: a [`ChatModel`] over HTTP, one provider endpoint and one bound model.
//!
//! Holds what its spec says about every request (sampling defaults, `extra`, time-out) and the
//! model's resolved [`Capabilities`]; applies them to each request (a request's own setting
//! wins, a parameter the capabilities rule out is dropped), builds the provider payload
//! (`openai.rs`, `anthropic.rs`, `gemini.rs`), sends it through the shared endpoint
//! (`http.rs`), decodes the reply, rejects empty replies, and prices the usage, the usage of
//! failed attempts included. A reply that cannot be used is reported to the caller's
//! [`crate::tally`] as a failed exchange of its kind.

use crate::capabilities::Capabilities;
use crate::config::{ModelSpec, ProviderKind};
use crate::error::{LlmError, Spend};
use crate::http::Endpoint;
use crate::model::{
    BoxFuture, ChatModel, ChatRequest, ChatResponse, Decoded, Prepared, deep_merge,
};
use crate::{anthropic, gemini, openai, tally};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use tauguard_core::message::Usage;
use tauguard_core::pyjson;

/// The spec's settings every request of the model gets unless it sets its own.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RequestDefaults {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_tokens: Option<u32>,
    pub extra: Map<String, Value>,
}

impl RequestDefaults {
    pub(crate) fn of(spec: &ModelSpec) -> RequestDefaults {
        RequestDefaults {
            temperature: spec.temperature,
            top_p: spec.top_p,
            max_tokens: spec.max_tokens,
            extra: spec.extra.clone(),
        }
    }
}

/// A model reached over HTTP.
#[derive(Debug)]
pub struct RemoteModel {
    endpoint: Arc<Endpoint>,
    model: String,
    id: String,
    defaults: RequestDefaults,
    caps: Capabilities,
    timeout: Duration,
}

impl RemoteModel {
    pub(crate) fn new(
        endpoint: Arc<Endpoint>,
        model: &str,
        defaults: RequestDefaults,
        caps: Capabilities,
        timeout: Option<Duration>,
    ) -> RemoteModel {
        RemoteModel {
            id: format!("{}/{}", endpoint.name, model),
            timeout: timeout.unwrap_or(endpoint.timeout),
            endpoint,
            model: model.to_string(),
            defaults,
            caps,
        }
    }

    /// The resolved capabilities of the bound model.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// The per-attempt time-out of this model.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The request as the wire formats see it: defaults filled in, `extra` merged.
    fn prepare<'r>(&'r self, req: &'r ChatRequest, model: &'r str) -> Prepared<'r> {
        let d = &self.defaults;
        let mut extra = d.extra.clone();
        deep_merge(&mut extra, &req.extra);
        Prepared {
            model,
            messages: &req.messages,
            tools: &req.tools,
            temperature: req.temperature.or(d.temperature),
            top_p: req.top_p.or(d.top_p),
            max_tokens: req.max_tokens.or(d.max_tokens),
            seed: req.seed,
            json_mode: req.json_mode,
            extra,
            caps: self.caps,
            empty_tool_call_content: self.endpoint.empty_tool_call_content,
        }
    }

    async fn call(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let model = self.resolved_model(req);
        let ep = &self.endpoint;
        let prepared = self.prepare(req, model);
        let (url, body) = match ep.kind {
            ProviderKind::OpenAi => (openai::url(&ep.base_url), openai::build_body(&prepared)),
            ProviderKind::Anthropic => (
                anthropic::url(&ep.base_url),
                anthropic::build_body(&prepared),
            ),
            ProviderKind::Gemini => (
                gemini::url(&ep.base_url, model),
                gemini::build_body(&prepared),
            ),
        };
        let reply = ep.post_json(model, &url, &body, self.timeout).await?;
        let salt = req.messages.len();
        let (usage, cost) = (reply.usage, reply.cost);
        let decoded = match ep.kind {
            ProviderKind::OpenAi => openai::decode(&reply.body, salt),
            ProviderKind::Anthropic => anthropic::decode(&reply.body),
            ProviderKind::Gemini => gemini::decode(&reply.body, salt),
        }
        .map_err(|e| {
            let err = match e.into_llm(&ep.name, model, usage, cost) {
                // Quoted payload text may echo anything the server saw: redact it.
                LlmError::InvalidResponse {
                    provider,
                    model,
                    reason,
                } => LlmError::InvalidResponse {
                    provider,
                    model,
                    reason: ep.redact(&reason),
                },
                LlmError::MalformedToolArguments(mut m) => {
                    m.finish_reason = raw_finish_reason(ep.kind, &reply.body);
                    LlmError::MalformedToolArguments(m)
                }
                other => other,
            };
            tally::exchange_failed(err.kind_name());
            // A model-output error carries its own spend (`LlmError::spent`).
            match err.spent() {
                Some(_) => tally::call_failed(&Usage::default(), None),
                None => tally::call_failed(&usage, cost),
            }
            err
        })?;
        let Decoded {
            content,
            tool_calls,
            finish_reason,
            provider_model,
        } = decoded;
        let has_text = content.as_deref().is_some_and(|c| !c.trim().is_empty());
        if !has_text && tool_calls.is_empty() {
            tally::exchange_failed("empty_response");
            tally::call_failed(&Usage::default(), None);
            return Err(LlmError::EmptyResponse {
                provider: ep.name.clone(),
                model: model.to_string(),
                finish_reason,
                spent: Box::new(Spend { usage, cost }),
            });
        }
        Ok(ChatResponse {
            content,
            tool_calls,
            usage,
            cost,
            latency: reply.latency,
            original_latency_seconds: None,
            cache_hit: false,
            attempts: reply.attempts,
            finish_reason,
            provider_model,
        })
    }
}

/// The stop reason of a reply whose decoding failed, read straight from the payload.
fn raw_finish_reason(kind: ProviderKind, body: &Value) -> Option<String> {
    let pointer = match kind {
        ProviderKind::OpenAi => "/choices/0/finish_reason",
        ProviderKind::Anthropic => "/stop_reason",
        ProviderKind::Gemini => "/candidates/0/finishReason",
    };
    body.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

impl ChatModel for RemoteModel {
    fn id(&self) -> &str {
        &self.id
    }

    /// Protocol, base URL, bound model, and everything else besides the request that shapes
    /// the body: the spec's defaults and `extra`, the capabilities, the provider's
    /// null-content option and a digest of its extra headers (never their values, never the
    /// key).
    fn cache_scope(&self) -> String {
        let d = &self.defaults;
        let shape = json!({
            "temperature": d.temperature,
            "top_p": d.top_p,
            "max_tokens": d.max_tokens,
            "extra": d.extra,
            "caps": serde_json::to_value(self.caps).unwrap_or(Value::Null),
            "empty_tool_call_content": self.endpoint.empty_tool_call_content,
            "headers": self.endpoint.headers_digest,
        });
        format!(
            "{}|{}|{}|{}",
            self.endpoint.kind.as_str(),
            self.endpoint.base_url,
            self.model,
            pyjson::dumps_sorted(&shape)
        )
    }

    fn resolved_model<'a>(&'a self, req: &'a ChatRequest) -> &'a str {
        if req.model.is_empty() {
            &self.model
        } else {
            &req.model
        }
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.call(req))
    }
}
