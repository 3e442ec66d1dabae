//! Retries, time-outs and client-side limits (exercised through the OpenAI adapter, which
//! shares `http.rs` with the others).

use crate::common;
use crate::openai::{text_reply, tool_call_reply};
use serde_json::json;
use std::time::{Duration, Instant};
use tauguard_llm::{ErrorClass, LlmError, ProviderConfig, ProviderKind};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use common::GPT as MODEL;

fn ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(tool_call_reply(r#"{"reservation_id": "EHGLP3"}"#))
}

#[tokio::test]
async fn rate_limited_429_waits_for_retry_after_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"error": {"message": "Rate limit reached for gpt-4.1", "type": "requests", "code": "rate_limit_exceeded"}})),
        )
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    common::answer_posts(&server, ok(), Some(1)).await;
    let model = common::gpt(&server);
    let started = Instant::now();
    let resp = common::ask(model.as_ref()).await.expect("reply");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(1), "waited only {waited:?}");
    assert!(waited < Duration::from_secs(3), "waited {waited:?}");
    assert_eq!(resp.attempts, 2);
    assert!(resp.latency >= Duration::from_secs(1));
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(2));
}

#[tokio::test]
async fn retry_after_http_date_is_honoured() {
    // A date 2 s ahead has 1 s resolution: the wait is at least 1 s.
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    let server = common::failing_once(
        ResponseTemplate::new(503).insert_header("retry-after", date.as_str()),
        ok(),
    )
    .await;
    let model = common::gpt(&server);
    let started = Instant::now();
    let resp = common::ask(model.as_ref()).await.expect("reply");
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(resp.attempts, 2);
}

#[tokio::test]
async fn server_error_500_then_success() {
    let server = common::failing_once(
        ResponseTemplate::new(500).set_body_json(json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}})),
        ok(),
    )
    .await;
    let model = common::gpt(&server);
    let resp = common::ask(model.as_ref()).await.expect("reply");
    assert_eq!(resp.attempts, 2);
    assert_eq!(resp.tool_calls[0].name, "get_reservation_details");
}

#[tokio::test]
async fn persistent_429_gives_up_after_max_attempts() {
    let server = MockServer::start().await;
    common::answer_posts(
        &server,
        ResponseTemplate::new(429).insert_header("retry-after-ms", "5"),
        Some(3),
    )
    .await;
    let model = common::gpt(&server);
    let err = common::ask(model.as_ref()).await.expect_err("429");
    assert!(matches!(err, LlmError::RateLimited { .. }), "{err:?}");
    assert!(err.is_transient());
    let text = err.to_string();
    assert!(
        text.contains("429") && text.contains("mock") && text.contains(MODEL),
        "{text}"
    );
}

/// Asks, with two attempts, a server that answers each only after `delay`, its provider
/// further set up by `configure`; returns the error and how long the call took.
async fn late_answers(
    delay: Duration,
    configure: impl FnOnce(&mut ProviderConfig),
) -> (LlmError, Duration) {
    let server = MockServer::start().await;
    common::answer_posts(&server, ok().set_delay(delay), Some(2)).await;
    let mut cfg = common::provider(ProviderKind::OpenAi, &server);
    cfg.retry.max_attempts = 2;
    configure(&mut cfg);
    let factory = common::factory(cfg, None);
    let model = factory.build(&common::spec(MODEL)).expect("model");
    let started = Instant::now();
    let err = common::ask(model.as_ref())
        .await
        .expect_err("no answer in time");
    (err, started.elapsed())
}

#[tokio::test]
async fn timeout_is_transient_and_retried() {
    let (err, took) = late_answers(Duration::from_millis(500), |cfg| cfg.timeout_secs = 0.05).await;
    assert!(matches!(err, LlmError::Timeout { .. }), "{err:?}");
    assert_eq!(err.class(), ErrorClass::Transient);
    assert!(took < Duration::from_millis(450), "{took:?}");
    assert!(err.to_string().contains("timed out"), "{err}");
}

#[tokio::test]
async fn a_stall_before_the_headers_is_a_time_out_long_before_the_time_out() {
    let (err, took) = late_answers(Duration::from_secs(3), |cfg| {
        cfg.timeout_secs = 30.0;
        cfg.stall_secs = 0.1;
    })
    .await;
    let LlmError::Timeout { timeout, .. } = &err else {
        panic!("expected a time-out, got {err:?}");
    };
    assert_eq!(*timeout, Duration::from_millis(100), "the stall limit");
    assert!(err.is_transient());
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[tokio::test]
async fn connection_refused_is_transient() {
    // Bind and drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port");
    let server = MockServer::start().await;
    let mut cfg = common::provider(ProviderKind::OpenAi, &server);
    cfg.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
    cfg.retry.max_attempts = 2;
    let factory = common::factory(cfg, None);
    let model = factory.build(&common::spec(MODEL)).expect("model");
    let err = common::ask(model.as_ref()).await.expect_err("refused");
    assert!(matches!(err, LlmError::Connection { .. }), "{err:?}");
    assert!(err.is_transient());
}

#[tokio::test]
async fn non_json_success_body_is_permanent() {
    let server = MockServer::start().await;
    common::answer_posts(
        &server,
        ResponseTemplate::new(200).set_body_string("<html>gateway</html>"),
        Some(1),
    )
    .await;
    let model = common::gpt(&server);
    let err = common::ask(model.as_ref()).await.expect_err("html");
    assert!(matches!(err, LlmError::InvalidResponse { .. }), "{err:?}");
    assert_eq!(err.class(), ErrorClass::Permanent);
}

#[tokio::test]
async fn concurrency_is_bounded_per_provider() {
    let server = MockServer::start().await;
    common::answer_posts_late(&server, text_reply("ok"), Duration::from_millis(100)).await;
    let mut cfg = common::provider(ProviderKind::OpenAi, &server);
    cfg.max_concurrency = 1;
    let factory = common::factory(cfg, None);
    // Two models of the same provider share one slot.
    let a = factory.build(&common::spec(MODEL)).expect("model");
    let b = factory.build(&common::spec("other-model")).expect("model");
    let started = Instant::now();
    let mut tasks = Vec::new();
    for m in [a.clone(), b, a] {
        tasks.push(tokio::spawn(async move {
            common::ask(m.as_ref()).await.map(|r| r.attempts)
        }));
    }
    for t in tasks {
        assert_eq!(t.await.expect("task").expect("reply"), 1);
    }
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn rate_limit_spaces_requests() {
    let server = common::ok_server(text_reply("ok")).await;
    let mut cfg = common::provider(ProviderKind::OpenAi, &server);
    cfg.requests_per_minute = Some(1200); // one per 50 ms
    let factory = common::factory(cfg, None);
    let model = factory.build(&common::spec(MODEL)).expect("model");
    let started = Instant::now();
    for _ in 0..4 {
        common::ask(model.as_ref()).await.expect("reply");
    }
    assert!(
        started.elapsed() >= Duration::from_millis(140),
        "{:?}",
        started.elapsed()
    );
}
