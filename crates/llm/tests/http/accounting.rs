//! Retries, time-outs and accounting through the production path (see `conformance.rs` for
//! the request bodies): per-model time-outs, `x-should-retry`, invalid requests not retried,
//! authentication errors fatal, the usage of discarded attempts, cache hits priced and counted
//! as saved, and what enters the cache scope.

use crate::common::{self, GPT, KEY, ok_server};
use crate::openai::{text_reply, tool_call_reply};
use serde_json::json;
use std::time::{Duration, Instant};
use tauguard_llm::{
    CacheConfig, CacheMode, ErrorClass, LlmError, ModelPrice, ModelSpec, PriceTable,
    ProviderConfig, ProviderKind,
};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn model_timeout_overrides_the_provider_default() {
    assert_eq!(
        ProviderConfig::builtin(ProviderKind::OpenAi).timeout_secs,
        600.0
    );
    let server = MockServer::start().await;
    common::answer_posts_late(&server, text_reply("late"), Duration::from_millis(400)).await;
    let mut cfg = common::provider(ProviderKind::OpenAi, &server);
    cfg.retry.max_attempts = 1;
    let factory = common::factory(cfg, None);
    let mut spec = common::spec(GPT);
    spec.timeout_secs = Some(0.05);
    let started = Instant::now();
    let err = factory
        .build(&spec)
        .expect("model")
        .complete(&common::request(""))
        .await
        .expect_err("times out");
    assert!(matches!(err, LlmError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_millis(350));
    // The provider's 2 s applies to a spec without its own.
    let slow = factory
        .build(&common::spec(GPT))
        .expect("model")
        .complete(&common::request(""))
        .await
        .expect("within the provider time-out");
    assert_eq!(slow.content.as_deref(), Some("late"));
}

#[tokio::test]
async fn x_should_retry_overrides_the_status() {
    let server = MockServer::start().await;
    common::answer_first(
        &server,
        ResponseTemplate::new(503)
            .insert_header("x-should-retry", "false")
            .set_body_json(json!({"error": {"message": "overloaded", "type": "server_error"}})),
    )
    .await;
    common::answer_first(
        &server,
        ResponseTemplate::new(400)
            .insert_header("x-should-retry", "true")
            .set_body_json(json!({"error": {"message": "try again", "type": "conflict"}})),
    )
    .await;
    common::answer_posts(
        &server,
        ResponseTemplate::new(200).set_body_json(text_reply("ok")),
        None,
    )
    .await;
    let model = common::gpt(&server);
    let err = common::ask(model.as_ref()).await.expect_err("not retried");
    assert_eq!(err.class(), ErrorClass::Permanent, "{err}");
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(1));
    let resp = common::ask(model.as_ref())
        .await
        .expect("400 retried on the server's word");
    assert_eq!(resp.attempts, 2);
}

#[tokio::test]
async fn invalid_requests_are_not_retried_and_auth_errors_are_fatal() {
    let cases = [
        (
            400,
            json!({"error": {"message": "Unsupported parameter: 'max_tokens'", "type": "invalid_request_error"}}),
            ErrorClass::Permanent,
        ),
        (
            422,
            json!({"detail": [{"msg": "field required"}]}),
            ErrorClass::Permanent,
        ),
        (
            500,
            json!({"error": {"message": "Invalid request: 'content' must be a string", "type": "invalid_request_error"}}),
            ErrorClass::Permanent,
        ),
        (
            500,
            json!({"error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}}),
            ErrorClass::Permanent,
        ),
        (
            401,
            json!({"error": {"message": "bad key"}}),
            ErrorClass::Fatal,
        ),
        (
            403,
            json!({"error": {"message": "no access to model"}}),
            ErrorClass::Fatal,
        ),
        (
            404,
            json!({"error": {"message": "model not found"}}),
            ErrorClass::Fatal,
        ),
    ];
    for (status, body, class) in cases {
        let server = MockServer::start().await;
        common::answer_posts(
            &server,
            ResponseTemplate::new(status).set_body_json(body.clone()),
            None,
        )
        .await;
        let err = common::ask(common::gpt(&server).as_ref())
            .await
            .expect_err("rejected");
        assert_eq!(err.class(), class, "HTTP {status}: {err}");
        assert_eq!(
            server.received_requests().await.map(|r| r.len()),
            Some(1),
            "HTTP {status} {body} was retried"
        );
    }
}

#[tokio::test]
async fn usage_of_discarded_attempts_is_counted() {
    // An OpenAI-compatible gateway that failed after generating, and says what it billed.
    let server = common::failing_once(
        ResponseTemplate::new(502).set_body_json(json!({
            "error": {"message": "upstream connection reset", "type": "server_error"},
            "usage": {"prompt_tokens": 1000, "completion_tokens": 300, "total_tokens": 1300}
        })),
        ResponseTemplate::new(200)
            .set_body_json(tool_call_reply(r#"{"reservation_id": "EHGLP3"}"#)),
    )
    .await;
    let resp = common::ask(common::gpt(&server).as_ref())
        .await
        .expect("second attempt succeeds");
    assert_eq!(resp.attempts, 2);
    assert_eq!(resp.usage.prompt_tokens, 3000);
    assert_eq!(resp.usage.completion_tokens, 320);
    assert_eq!(resp.usage.cached_prompt_tokens, 1024);
    let expected = (1976.0 * 2.0 + 1024.0 * 0.5 + 320.0 * 8.0) / 1e6;
    assert!((resp.cost.expect("priced") - expected).abs() < 1e-12);

    // A billed but unusable reply carries its spend in the error.
    let server = ok_server(json!({
        "choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 500, "completion_tokens": 4000}
    }))
    .await;
    let err = common::ask(common::gpt(&server).as_ref())
        .await
        .expect_err("empty");
    let spent = err.spent().expect("spend carried");
    assert_eq!(spent.usage.completion_tokens, 4000);
    assert!((spent.cost.expect("priced") - (500.0 * 2.0 + 4000.0 * 8.0) / 1e6).abs() < 1e-12);
}

#[tokio::test]
async fn cache_hits_are_repriced_by_the_bound_model_and_count_as_saved() {
    let server = ok_server(tool_call_reply(r#"{"reservation_id": "EHGLP3"}"#)).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = Some(CacheConfig {
        dir: dir.path().to_path_buf(),
        mode: CacheMode::ReadWrite,
    });
    let spec = common::spec(GPT);
    let first = common::factory(
        common::provider(ProviderKind::OpenAi, &server),
        cache.clone(),
    )
    .build(&spec)
    .expect("model")
    .complete(&common::request(""))
    .await
    .expect("miss");
    assert!(!first.cache_hit);

    // A rerun after a price change: the hit is priced at today's price for the bound model.
    let mut prices = PriceTable::default();
    prices.insert(
        GPT,
        ModelPrice {
            input_per_mtok: 10.0,
            output_per_mtok: 40.0,
            cached_input_per_mtok: None,
        },
    );
    let rerun = common::factory_with(common::provider(ProviderKind::OpenAi, &server), |c| {
        c.prices = prices;
        c.cache = cache;
    });
    let hit = rerun
        .build(&spec)
        .expect("model")
        .complete(&common::request(""))
        .await
        .expect("hit");
    assert!(hit.cache_hit);
    assert_eq!(hit.cost, Some(0.0), "a replay is not spending");
    let saved = rerun.cache_stats().expect("cache").saved_cost;
    let expected = (2000.0 * 10.0 + 20.0 * 40.0) / 1e6;
    assert!(
        (saved - expected).abs() < 1e-12,
        "saved {saved}, expected {expected}"
    );
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(1));
}

#[tokio::test]
async fn extra_headers_and_spec_defaults_are_in_the_cache_scope_but_values_are_not() {
    let server = MockServer::start().await;
    let build = |headers: &[(&str, &str)], temperature: Option<f64>| {
        let mut cfg = common::provider(ProviderKind::OpenAi, &server);
        for (k, v) in headers {
            cfg.headers.insert((*k).into(), (*v).into());
        }
        let mut spec = ModelSpec::new("mock", GPT);
        spec.temperature = temperature;
        common::factory(cfg, None)
            .build(&spec)
            .expect("model")
            .cache_scope()
    };
    let plain = build(&[], Some(0.0));
    let beta = build(&[("OpenAI-Beta", "assistants=v2-secret-value")], Some(0.0));
    let warmer = build(&[], Some(0.7));
    assert_ne!(plain, beta);
    assert_ne!(plain, warmer);
    assert!(
        !beta.contains("secret-value") && !beta.contains(KEY),
        "{beta}"
    );
}

/// The production path reports into the caller's tally: requests sent, failed exchanges by
/// cause, calls that gave up and what they were billed for.
#[tokio::test]
async fn calls_report_requests_failures_and_discarded_spend_to_the_tally() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).set_body_string("slow down"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_json(json!({
            "error": {"message": "overloaded"},
            "usage": {"prompt_tokens": 30, "completion_tokens": 0, "total_tokens": 30}
        })))
        .up_to_n_times(2)
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(text_reply("fine")))
        .with_priority(3)
        .mount(&server)
        .await;
    let model = common::gpt(&server);
    let req = common::request(GPT);
    let tally = tauguard_llm::CallTally::new(None);
    // 429, then 503 twice: three failed attempts, the call gives up.
    let err = tally.scope(model.complete(&req)).await.unwrap_err();
    assert_eq!(err.status(), Some(503));
    // Then a clean call.
    tally.scope(model.complete(&req)).await.unwrap();
    // A call outside the scope is not counted.
    model.complete(&req).await.unwrap();
    let stats = tally.stats();
    assert_eq!(stats.requests, 4);
    assert_eq!(stats.failures.get("rate_limited"), Some(&1));
    assert_eq!(stats.failures.get("server_error"), Some(&2));
    assert_eq!(stats.failed_calls, 1);
    assert_eq!(stats.failed_usage.prompt_tokens, 60);
    assert!(stats.failed_cost.is_some_and(|c| c > 0.0), "{stats:?}");
}
