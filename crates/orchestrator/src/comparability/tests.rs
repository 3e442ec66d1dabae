//! The manifest is what the data directory holds, and each item tells upstream's from ours.

use super::*;
use crate::benchmark_texts::TextKind;
use tauguard_core::comparability::UPSTREAM_COMMIT;
use tauguard_env::DataDir;

fn manifest_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/upstream-a2c0247.json")
}

/// Recomputes the manifest from the τ²-bench data directory (every registered domain it holds,
/// every task of its task file) and compares it with the committed one; `TAUGUARD_BLESS=1`
/// writes it instead.
#[test]
fn the_manifest_matches_the_data_directory() {
    let Some(dir) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let data = DataDir::resolve(Some(&dir)).unwrap();
    let texts = BenchmarkTexts::load(&data, &Default::default()).unwrap();
    let mut text_hashes = serde_json::Map::new();
    for t in texts.all() {
        text_hashes.insert(t.kind.key().into(), json!(short_hash(t.text.as_bytes())));
    }
    let mut domains = serde_json::Map::new();
    for d in tauguard_env::registry::DOMAINS {
        if !dir.join(d.name()).is_dir() {
            continue;
        }
        let dd = DomainData::load(&data, d.name()).unwrap();
        let h = hashes_of(&dd, &dd.tasks);
        domains.insert(d.name().into(), serde_json::to_value(h).unwrap());
    }
    let computed = json!({
        "about": "blake3 (16 hex digits) of τ²-bench's benchmark texts and of each domain's \
                  policy, database (upstream's DB hash), tool schemas (OpenAI form, agent then \
                  user) and tasks, at the commit below; computed from the τ²-bench data \
                  directory by comparability::tests::the_manifest_matches_the_data_directory",
        "upstream_commit": UPSTREAM_COMMIT,
        "texts": text_hashes,
        "domains": domains,
    });
    let text = serde_json::to_string_pretty(&computed).unwrap() + "\n";
    if std::env::var_os("TAUGUARD_BLESS").is_some() {
        std::fs::write(manifest_path(), &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(manifest_path()).unwrap();
    assert_eq!(
        committed, text,
        "assets/upstream-a2c0247.json is stale; rerun with TAUGUARD_BLESS=1 against upstream's data"
    );
}

#[test]
fn every_text_of_the_data_directory_is_upstreams_and_an_edit_is_not() {
    let Some(dir) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let data = DataDir::resolve(Some(&dir)).unwrap();
    let texts = BenchmarkTexts::load(&data, &Default::default()).unwrap();
    for kind in TextKind::ALL {
        let t = texts.all().into_iter().find(|t| t.kind == kind).unwrap();
        assert!(text_item(kind.key(), t).holds, "{}", kind.key());
        let mut edited = t.clone();
        edited.text.push(' ');
        let item = text_item(kind.key(), &edited);
        assert!(!item.holds && item.detail.contains("differs"), "{item:?}");
        edited.source = TextSource::Config;
        assert!(text_item(kind.key(), &edited).detail.contains("own text"));
    }
}

#[test]
fn every_registered_domain_in_the_data_directory_is_upstreams() {
    let Some(dir) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let data = DataDir::resolve(Some(&dir)).unwrap();
    for d in tauguard_env::registry::DOMAINS {
        if !dir.join(d.name()).is_dir() {
            continue;
        }
        let dd = DomainData::load(&data, d.name()).unwrap();
        let items = domain_items(&dd, &dd.tasks, None);
        for i in &items {
            // A domain option at tauguard's default holds only where that is upstream's
            // (banking_knowledge runs bm25 offline; upstream's default needs embeddings).
            let holds = match d.options().iter().find(|o| o.name == i.name) {
                Some(o) => o.default == o.upstream_default,
                None => true,
            };
            assert_eq!(i.holds, holds, "{}: {i:?}", d.name());
        }
        let mut changed = dd.tasks[..2].to_vec();
        changed[1].ticket = Some("edited".into());
        let items = domain_items(&dd, &changed, None);
        let tasks = items.iter().find(|i| i.name == "tasks").unwrap();
        assert!(
            !tasks.holds && tasks.detail.contains(&changed[1].id),
            "{tasks:?}"
        );
        let own = domain_items(&dd, &dd.tasks, Some("tasks/x"));
        assert!(own.iter().any(|i| i.name == "tasks" && !i.holds));
    }
}

fn model(provider: &str, model: &str) -> ModelSection {
    serde_json::from_value(json!({"provider": provider, "model": model})).unwrap()
}

#[test]
fn sampling_holds_at_upstreams_defaults_only() {
    let http = model("openai", "gpt-4.1");
    let sim = model("sim", "sim-user");
    assert!(sampling_item(&http, &sim).holds);
    assert_eq!(default_temperature(&http), Some(0.0));
    assert_eq!(default_temperature(&sim), None);
    let mut hot = http.clone();
    hot.temperature = Some(0.7);
    let item = sampling_item(&sim, &hot);
    assert!(
        !item.holds && item.detail.contains("user temperature 0.7"),
        "{item:?}"
    );
    let mut capped = http.clone();
    capped.max_tokens = Some(160);
    assert!(!sampling_item(&capped, &sim).holds);
}

#[test]
fn limits_and_the_stamp_name_what_deviates() {
    let record = TruncatedReplies::Record;
    assert!(limits_item(200, 10, 3, ModelErrors::Infrastructure, record).holds);
    let item = limits_item(30, 10, 3, ModelErrors::Agent, record);
    assert!(item.detail.contains("max_steps 30") && item.detail.contains("model_errors"));
    let retry = limits_item(
        200,
        10,
        3,
        ModelErrors::Infrastructure,
        TruncatedReplies::Retry,
    );
    assert!(!retry.holds && retry.detail.contains("truncated_replies = \"retry\""));
    let stamp = Stamp {
        items: vec![
            item,
            sampling_item(&model("sim", "sim-agent"), &model("sim", "sim-user")),
        ],
    };
    assert!(!stamp.comparable());
    assert!(
        stamp.summary().starts_with("not comparable"),
        "{}",
        stamp.summary()
    );
    let mut cell = CellSpec::new();
    stamp.insert_into(&mut cell);
    assert_eq!(cell[COMPARABLE_KEY], json!(false));
    let read = tauguard_core::comparability::CellStamp::of(&cell).unwrap();
    assert!(!read.comparable);
    assert_eq!(read.items(), "limits");
}
