//! [`RemoteModel`]: a [`ChatModel`] over HTTP, one provider endpoint and one bound model.
//!
//! Builds the provider payload (`openai.rs`, `anthropic.rs`, `gemini.rs`), sends it through the
//! shared endpoint (`http.rs`), decodes the reply, rejects empty replies, and prices the usage.

use crate::config::ProviderKind;
use crate::error::LlmError;
use crate::http::Endpoint;
use crate::model::{BoxFuture, ChatModel, ChatRequest, ChatResponse, Decoded};
use crate::{anthropic, gemini, openai};
use std::sync::Arc;

/// A model reached over HTTP.
#[derive(Debug)]
pub struct RemoteModel {
    endpoint: Arc<Endpoint>,
    model: String,
    id: String,
}

impl RemoteModel {
    pub(crate) fn new(endpoint: Arc<Endpoint>, model: &str) -> RemoteModel {
        RemoteModel {
            id: format!("{}/{}", endpoint.name, model),
            endpoint,
            model: model.to_string(),
        }
    }

    async fn call(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let model = if req.model.is_empty() {
            self.model.as_str()
        } else {
            req.model.as_str()
        };
        let ep = &self.endpoint;
        let (url, body) = match ep.kind {
            ProviderKind::OpenAi => (openai::url(&ep.base_url), openai::build_body(req, model)),
            ProviderKind::Anthropic => (
                anthropic::url(&ep.base_url),
                anthropic::build_body(req, model),
            ),
            ProviderKind::Gemini => (
                gemini::url(&ep.base_url, model),
                gemini::build_body(req, model),
            ),
        };
        let reply = ep.post_json(model, &url, &body).await?;
        let decoded = match ep.kind {
            ProviderKind::OpenAi => openai::decode(&reply.body),
            ProviderKind::Anthropic => anthropic::decode(&reply.body),
            ProviderKind::Gemini => gemini::decode(&reply.body, req.messages.len()),
        }
        .map_err(|e| match e.into_llm(&ep.name, model) {
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
            other => other,
        })?;
        let Decoded {
            content,
            tool_calls,
            usage,
            finish_reason,
            provider_model,
        } = decoded;
        let has_text = content.as_deref().is_some_and(|c| !c.trim().is_empty());
        if !has_text && tool_calls.is_empty() {
            return Err(LlmError::EmptyResponse {
                provider: ep.name.clone(),
                model: model.to_string(),
                finish_reason,
            });
        }
        Ok(ChatResponse {
            content,
            tool_calls,
            usage,
            cost: ep.prices.cost(model, &usage),
            latency: reply.latency,
            cache_hit: false,
            attempts: reply.attempts,
            finish_reason,
            provider_model,
        })
    }
}

impl ChatModel for RemoteModel {
    fn id(&self) -> &str {
        &self.id
    }

    fn cache_scope(&self) -> String {
        format!(
            "{}|{}|{}",
            self.endpoint.kind.as_str(),
            self.endpoint.base_url,
            self.model
        )
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.call(req))
    }
}
