//! The embeddings client against a loopback server: the body the OpenAI SDK would send (and
//! its SDK type accepts), base64 float32 and plain-float replies, per-text caching (a rerun
//! sends nothing, a new text alone is sent), usage priced as input tokens, and a server
//! error that names provider and model after the retries.

use crate::common::{self, KEY};
use crate::conformance::sdk_check;
use base64::Engine;
use serde_json::{Value, json};
use tauguard_llm::{CacheConfig, CacheMode, ModelPrice, ProviderKind};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const MODEL: &str = "text-embedding-3-large";

fn b64(v: &[f32]) -> String {
    let bytes: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Answers each input text `t` with the base64 vector `[len(t), 0.5]`.
async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/embeddings"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(|req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            ResponseTemplate::new(200).set_body_json(tauguard_testkit::embeddings_reply(
                &body,
                MODEL,
                7,
                |text| json!(b64(&[text.len() as f32, 0.5])),
            ))
        })
        .mount(&server)
        .await;
    server
}

fn factory(server: &MockServer, dir: Option<&std::path::Path>) -> tauguard_llm::ModelFactory {
    let mut cfg = common::provider(ProviderKind::OpenAi, server);
    cfg.retry.max_attempts = 2;
    let mut config = tauguard_llm::LlmConfig {
        cache: dir.map(|d| CacheConfig {
            dir: d.to_path_buf(),
            mode: CacheMode::ReadWrite,
        }),
        ..tauguard_llm::LlmConfig::default()
    };
    config.prices.insert(
        MODEL,
        ModelPrice {
            input_per_mtok: 0.13,
            output_per_mtok: 0.0,
            cached_input_per_mtok: None,
        },
    );
    config.providers.insert("mock".into(), cfg);
    tauguard_llm::ModelFactory::new(config)
        .unwrap()
        .with_env(|var| (var == common::KEY_VAR).then(|| KEY.to_string()))
}

fn texts(ts: &[&str]) -> Vec<String> {
    ts.iter().map(|t| (*t).to_string()).collect()
}

#[tokio::test]
async fn sends_the_sdks_body_decodes_float32_and_prices_input_tokens() {
    let server = server().await;
    let f = factory(&server, None);
    let e = f
        .build_embedder(&tauguard_llm::ModelSpec::new("mock", MODEL))
        .unwrap();
    assert_eq!(e.url(), format!("{}/embeddings", server.uri()));
    let out = e.embed(&texts(&["fees", "card"])).await.unwrap();
    assert_eq!(out.vectors, vec![vec![4.0, 0.5], vec![4.0, 0.5]]);
    assert_eq!((out.usage.prompt_tokens, out.requests), (7, 1));
    assert!((out.cost.unwrap() - 7.0 * 0.13 / 1e6).abs() < 1e-15);
    let sent = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(
        body,
        json!({"input": ["fees", "card"], "model": MODEL, "encoding_format": "base64"})
    );
    sdk_check("openai-embeddings", &body);

    // A float reply (what `encoding_format = "float"` asks for) reads the numbers as sent.
    let floats = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"embedding": [0.1, -0.2], "index": 0}], "usage": {"prompt_tokens": 1}
        })))
        .mount(&floats)
        .await;
    let mut spec = tauguard_llm::ModelSpec::new("mock", "qwen/qwen3-embedding-8b");
    spec.extra.insert("encoding_format".into(), json!("float"));
    let e = factory(&floats, None).build_embedder(&spec).unwrap();
    let out = e.embed(&texts(&["q"])).await.unwrap();
    assert_eq!(out.vectors, vec![vec![0.1, -0.2]]);
    assert_eq!(out.cost, None, "no price for the model");
    let body: Value =
        serde_json::from_slice(&floats.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(body["encoding_format"], json!("float"));
    sdk_check("openai-embeddings", &body);
}

#[tokio::test]
async fn a_second_run_is_served_from_the_cache_and_a_new_text_goes_alone() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = tauguard_llm::ModelSpec::new("mock", MODEL);
    let first = factory(&server, Some(dir.path()))
        .build_embedder(&spec)
        .unwrap()
        .embed(&texts(&["a", "bb", "ccc"]))
        .await
        .unwrap();
    // A new factory, as a new run builds one.
    let f = factory(&server, Some(dir.path()));
    let e = f.build_embedder(&spec).unwrap();
    let again = e.embed(&texts(&["a", "bb", "ccc"])).await.unwrap();
    assert_eq!(again.vectors, first.vectors);
    assert_eq!((again.requests, again.cache_hits), (0, 3));
    assert_eq!(again.cost, Some(0.0));
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    let mixed = e.embed(&texts(&["bb", "dddd"])).await.unwrap();
    assert_eq!(mixed.vectors, vec![vec![2.0, 0.5], vec![4.0, 0.5]]);
    let sent = server.received_requests().await.unwrap();
    assert_eq!(sent.len(), 2);
    let body: Value = serde_json::from_slice(&sent[1].body).unwrap();
    assert_eq!(body["input"], json!(["dddd"]));
    let stats = f.cache_stats().unwrap();
    assert_eq!((stats.hits, stats.misses), (4, 1));
    for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
        for entry in std::fs::read_dir(file.path()).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(!text.contains(KEY), "no key in a cache entry");
        }
    }
}

#[tokio::test]
async fn a_server_error_names_provider_and_model_after_the_retries() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&server)
        .await;
    let e = factory(&server, None)
        .build_embedder(&tauguard_llm::ModelSpec::new("mock", MODEL))
        .unwrap();
    let err = e.embed(&texts(&["x"])).await.unwrap_err().to_string();
    assert!(
        err.contains("mock") && err.contains(MODEL) && err.contains("503"),
        "{err}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    let anthropic = common::factory(common::provider(ProviderKind::Anthropic, &server), None);
    let refused = anthropic
        .build_embedder(&common::spec("m"))
        .err()
        .expect("refused")
        .to_string();
    assert!(refused.contains("OpenAI-compatible"), "{refused}");
}
