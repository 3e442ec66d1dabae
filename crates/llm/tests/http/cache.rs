//! The on-disk response cache in front of a real HTTP model.

use crate::common::{self, KEY};
use crate::openai::tool_call_reply;
use std::path::Path;
use tauguard_llm::{CacheConfig, CacheMode, ModelFactory, ProviderKind, ResponseCache};
use wiremock::{MockServer, ResponseTemplate};

use common::GPT as MODEL;

fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The model's answer takes this long, so a replay's own time is told apart from it.
const ANSWER_DELAY: std::time::Duration = std::time::Duration::from_millis(150);

async fn server_with_reply() -> MockServer {
    let server = MockServer::start().await;
    common::answer_posts(
        &server,
        ResponseTemplate::new(200)
            .set_body_json(tool_call_reply(r#"{"reservation_id": "EHGLP3"}"#))
            .set_delay(ANSWER_DELAY),
        None,
    )
    .await;
    server
}

fn cache_config(dir: &Path, mode: CacheMode) -> Option<CacheConfig> {
    Some(CacheConfig {
        dir: dir.to_path_buf(),
        mode,
    })
}

/// The factory of an OpenAI provider at `server` caching into `dir`, read and written.
fn read_write(server: &MockServer, dir: &Path) -> ModelFactory {
    common::factory(
        common::provider(ProviderKind::OpenAi, server),
        cache_config(dir, CacheMode::ReadWrite),
    )
}

#[tokio::test]
async fn identical_request_hits_and_new_trial_misses() {
    let server = server_with_reply().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let factory = read_write(&server, dir.path());
    let model = factory.build(&common::spec(MODEL)).expect("model");
    let req = common::request(MODEL);

    let first = model.complete(&req).await.expect("first");
    assert!(!first.cache_hit);
    let second = model.complete(&req).await.expect("second");
    assert!(second.cache_hit);
    assert_eq!(second.attempts, 0);
    assert_eq!(second.tool_calls, first.tool_calls);
    assert_eq!(second.usage, first.usage);
    assert_eq!(second.cost, Some(0.0), "a replay spends nothing");
    // The replay's time is its own; the answer's time is kept beside it.
    assert!(first.latency >= ANSWER_DELAY, "{:?}", first.latency);
    assert_eq!(first.original_latency_seconds, None);
    assert_eq!(
        second.original_latency_seconds,
        Some(first.latency.as_secs_f64())
    );
    assert!(second.latency < ANSWER_DELAY, "{:?}", second.latency);
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(1));

    let other_trial = model
        .complete(&req.clone().with_trial(1))
        .await
        .expect("trial 1");
    assert!(!other_trial.cache_hit);
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(2));

    let stats = factory.cache_stats().expect("cache configured");
    assert_eq!(
        (stats.hits, stats.misses, stats.writes, stats.errors),
        (1, 2, 2, 0)
    );
    let first_cost = first.cost.expect("priced");
    assert!((stats.saved_cost - first_cost).abs() < 1e-12, "{stats:?}");
    let line = stats.to_string();
    assert!(line.starts_with("llm cache: 1 hits, 2 misses"), "{line}");

    // A fresh factory over the same directory (a rerun) is served from disk.
    let rerun = read_write(&server, dir.path());
    let model = rerun.build(&common::spec(MODEL)).expect("model");
    assert!(model.complete(&req).await.expect("rerun").cache_hit);
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(2));

    // Entries are sharded, named by their key, and never hold the API key.
    let files = files_under(dir.path());
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).expect("entry");
        assert!(!text.contains(KEY), "key in cache file {f:?}");
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let shard = f
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|s| s.to_str());
        assert_eq!(stem.len(), 64);
        assert_eq!(shard, stem.get(..2));
    }
}

#[tokio::test]
async fn corrupt_entry_is_a_miss_and_gets_rewritten() {
    let server = server_with_reply().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let factory = read_write(&server, dir.path());
    let model = factory.build(&common::spec(MODEL)).expect("model");
    let req = common::request(MODEL);
    let cache = factory.cache().expect("cache");
    let path = cache.entry_path(&ResponseCache::key(&model.cache_scope(), &req));
    std::fs::create_dir_all(path.parent().expect("shard")).expect("mkdir");
    std::fs::write(&path, b"{\"format\": 1, \"key\": trunc").expect("write");

    assert!(!model.complete(&req).await.expect("first").cache_hit);
    assert!(model.complete(&req).await.expect("second").cache_hit);
    let stats = cache.stats();
    assert_eq!(
        (stats.hits, stats.misses, stats.writes, stats.errors),
        (1, 1, 1, 1)
    );
}

#[tokio::test]
async fn no_cache_and_write_only_modes() {
    let server = server_with_reply().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = common::provider(ProviderKind::OpenAi, &server);
    let off = common::factory(cfg.clone(), cache_config(dir.path(), CacheMode::ReadWrite))
        .with_cache_mode(CacheMode::Off);
    assert!(off.cache_stats().is_none());
    let model = off.build(&common::spec(MODEL)).expect("model");
    let req = common::request(MODEL);
    model.complete(&req).await.expect("1");
    model.complete(&req).await.expect("2");
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(2));
    assert!(files_under(dir.path()).is_empty());

    let refresh = common::factory(cfg, cache_config(dir.path(), CacheMode::WriteOnly));
    let model = refresh.build(&common::spec(MODEL)).expect("model");
    assert!(!model.complete(&req).await.expect("3").cache_hit);
    assert!(!model.complete(&req).await.expect("4").cache_hit);
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(4));
    assert_eq!(files_under(dir.path()).len(), 1);
}

#[tokio::test]
async fn failed_calls_are_not_cached() {
    let server = MockServer::start().await;
    common::answer_posts(
        &server,
        ResponseTemplate::new(200).set_body_json(tool_call_reply(r#"{"reservation_id": "#)),
        Some(2),
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let factory = read_write(&server, dir.path());
    let model = factory.build(&common::spec(MODEL)).expect("model");
    let req = common::request(MODEL);
    assert!(model.complete(&req).await.is_err());
    assert!(model.complete(&req).await.is_err());
    assert!(files_under(dir.path()).is_empty());
}

#[tokio::test]
async fn hits_of_an_unpriced_model_save_an_unknown_amount() {
    let server = server_with_reply().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let factory = read_write(&server, dir.path());
    // No price in the table for this model.
    let unpriced = "local-model-without-price";
    let model = factory.build(&common::spec(unpriced)).expect("model");
    let req = common::request(unpriced);
    assert_eq!(model.complete(&req).await.expect("first").cost, None);
    assert!(model.complete(&req).await.expect("second").cache_hit);
    let stats = factory.cache_stats().expect("cache configured");
    assert_eq!((stats.hits, stats.unpriced_hits), (1, 1), "{stats:?}");
    let line = stats.to_string();
    assert!(
        line.ends_with("saved unknown (no price for the hits' model)"),
        "{line}"
    );
    assert!(!line.contains("$0.0000"), "{line}");

    // Priced hits beside unpriced ones: the priced part is named, the total stays unknown.
    let priced = factory.build(&common::spec(MODEL)).expect("model");
    let req = common::request(MODEL);
    priced.complete(&req).await.expect("priced miss");
    priced.complete(&req).await.expect("priced hit");
    let line = factory.cache_stats().expect("cache").to_string();
    assert!(line.contains("saved unknown ($"), "{line}");
    assert!(
        line.ends_with("on priced hits; 1 hits without a price)"),
        "{line}"
    );
}
