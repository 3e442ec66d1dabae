//! Who a server says it is, for providers with `identify = true`.
//!
//! A remote agent (a server that runs its own loop behind a Chat-Completions endpoint) behaves
//! as its code and weights do, which no config field names. So before a run tauguard asks the
//! server the OpenAI protocol's own question, `GET {base_url}/models`, and keeps the entry of
//! the model the config names. The orchestrator puts it in the cell (`agent.identity`), so it
//! is in every record and in the cell hash: an agent that changed between two runs makes a
//! new cell, and `--resume` onto the changed agent is refused like any other changed input.
//!
//! The entry is kept whole except for `created`, which vLLM and llama.cpp fill with the time
//! of the request, and `object`, which is always `"model"`: what is left (`id`, `owned_by`,
//! `root`, or a `version` field the agent's server adds) names the build. The request is sent
//! on a thread with a runtime of its own, so plans built inside or outside a runtime both
//! work, and with a client of its own, so no pooled connection outlives that runtime.

use crate::error::LlmError;
use crate::http::Endpoint;
use serde_json::{Map, Value};
use std::time::Duration;

/// Fields of a `/models` entry that change from one request to the next.
const VOLATILE: [&str; 2] = ["created", "object"];

/// The identity of `model` as `ep`'s server reports it.
pub(crate) fn identify(ep: &Endpoint, model: &str) -> Result<Value, LlmError> {
    let url = format!("{}/models", ep.base_url);
    let fail = |reason: String| LlmError::Identity {
        provider: ep.name.clone(),
        what: format!("`{model}` at {url}: {reason}"),
    };
    let client = reqwest::Client::builder()
        .default_headers(ep.request_headers())
        .build()
        .map_err(|e| fail(format!("cannot build an HTTP client: {e}")))?;
    let timeout = ep.timeout.min(Duration::from_secs(60));
    let (u, c) = (url.clone(), client);
    let fetched = std::thread::spawn(move || -> Result<(u16, String), String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start a runtime: {e}"))?;
        rt.block_on(async {
            let resp = c
                .get(&u)
                .timeout(timeout)
                .send()
                .await
                .map_err(|e| format!("the request failed: {e}"))?;
            let status = resp.status().as_u16();
            let body = resp
                .text()
                .await
                .map_err(|e| format!("the response could not be read: {e}"))?;
            Ok((status, body))
        })
    })
    .join()
    .map_err(|_| fail("the request thread panicked".into()))?
    .map_err(&fail)?;
    let (status, body) = fetched;
    if !(200..300).contains(&status) {
        return Err(fail(format!(
            "HTTP {status}: {} (a server that does not serve `GET /models` cannot be identified; \
             drop `identify` from the provider)",
            ep.redact(&body)
        )));
    }
    entry_of(&body, model).map_err(fail)
}

/// The entry of `model` in a `/models` list, its volatile fields dropped.
fn entry_of(body: &str, model: &str) -> Result<Value, String> {
    let v: Value =
        serde_json::from_str(body).map_err(|e| format!("the reply is not JSON ({e})"))?;
    let list = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or("the reply has no `data` list")?;
    let found = list
        .iter()
        .find(|e| e.get("id").and_then(Value::as_str) == Some(model));
    let Some(Value::Object(entry)) = found else {
        let served: Vec<&str> = list
            .iter()
            .filter_map(|e| e.get("id").and_then(Value::as_str))
            .collect();
        return Err(format!(
            "the server does not list `{model}` (it lists {served:?})"
        ));
    };
    let kept: Map<String, Value> = entry
        .iter()
        .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Value::Object(kept))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_entry_is_kept_without_its_volatile_fields() {
        let body = json!({"object": "list", "data": [
            {"id": "other", "object": "model", "created": 1},
            {"id": "my-agent", "object": "model", "created": 1733, "owned_by": "lab", "version": "2.1"}
        ]})
        .to_string();
        assert_eq!(
            entry_of(&body, "my-agent").unwrap(),
            json!({"id": "my-agent", "owned_by": "lab", "version": "2.1"})
        );
    }

    #[test]
    fn a_model_the_server_does_not_list_names_what_it_lists() {
        let body = json!({"data": [{"id": "a"}, {"id": "b"}]}).to_string();
        let err = entry_of(&body, "c").unwrap_err();
        assert!(
            err.contains("`c`") && err.contains("[\"a\", \"b\"]"),
            "{err}"
        );
        assert!(entry_of("[]", "c").unwrap_err().contains("`data`"));
        assert!(entry_of("<html>", "c").unwrap_err().contains("not JSON"));
    }
}
