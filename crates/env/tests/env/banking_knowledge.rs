//! banking_knowledge against upstream's recorded behaviour: BM25 and grep rankings of the
//! 77 queries of `reference/banking_knowledge_retrieval.json` (ids, `f"{score:.4f}"`, the
//! sha256 of each tool output minus upstream's timing suffix, the full outputs given), the
//! retrieval variants' policies and schemas against `variants.json`, the discoverable tool
//! declarations against `discoverable_tools.json`, and the read log's allow-list.

use crate::common::{self, args};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tauguard_core::Requestor::{Assistant, User};
use tauguard_env::banking_knowledge::{BankEnv, defs, read_log_allowlist};
use tauguard_env::{DomainData, Environment};

fn load(variant: &str) -> Option<DomainData> {
    let dir = common::data_dir()?;
    let options = [("retrieval".to_string(), variant.to_string())].into();
    Some(
        DomainData::load_with(&dir, "banking_knowledge", &options)
            .unwrap_or_else(|e| panic!("banking_knowledge/{variant}: {e}")),
    )
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn reference(name: &str) -> Option<Value> {
    let dir = common::data_dir()?;
    let path = dir.path().join("reference").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(serde_json::from_str(&text).unwrap())
}

#[test]
fn bm25_and_grep_rank_the_77_queries_as_recorded() {
    let (Some(data), Some(fixture)) = (
        load("bm25_grep"),
        reference("banking_knowledge_retrieval.json"),
    ) else {
        return;
    };
    let mut env = data.fresh_env();
    let probe = data.fresh_env();
    let kb = probe
        .as_any()
        .downcast_ref::<BankEnv>()
        .unwrap()
        .knowledge()
        .expect("bm25_grep indexes the knowledge base");
    assert_eq!(kb.documents().len(), 698);
    let rows = fixture["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 77);
    let mut failures = Vec::new();
    for row in rows {
        let (tool, query) = (
            row["tool"].as_str().unwrap(),
            row["query"].as_str().unwrap(),
        );
        let mut hits = match tool {
            "grep" => kb.grep_hits(query),
            _ => kb.bm25(query),
        };
        if let Some(k) = row["k"].as_u64() {
            hits.truncate(k as usize);
        }
        let got: Vec<(String, f64)> = hits
            .iter()
            .map(|(i, s)| (kb.documents()[*i].id.clone(), *s))
            .collect();
        let want: Vec<(String, f64)> = row["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_f64().unwrap()))
            .collect();
        if got != want {
            failures.push(format!(
                "{tool} {query:?}:\n  got  {got:?}\n  want {want:?}"
            ));
        }
        let got_4dp: Vec<String> = got.iter().map(|(_, s)| format!("{s:.4}")).collect();
        if !row["scores_4dp"].is_null() && row["scores_4dp"] != json!(got_4dp) {
            failures.push(format!(
                "{tool} {query:?}: scores {got_4dp:?} vs {}",
                row["scores_4dp"]
            ));
        }
        // The tool itself, through the environment (KB_search_bm25 is an alltools tool).
        if tool != "KB_search_bm25" {
            let arg = if tool == "grep" { "pattern" } else { "query" };
            let (out, error) = env.execute(Assistant, tool, &args(json!({ arg: query })));
            assert!(!error, "{tool} {query:?}: {out}");
            if let Some(want) = row["output_sans_timing_sha256"]
                .as_str()
                .or(row["output_sha256"].as_str())
                && sha256(&out) != want
            {
                failures.push(format!("{tool} {query:?}: output sha256 differs:\n{out}"));
            }
        }
    }
    for full in fixture["full_outputs"].as_array().unwrap() {
        let (tool, query) = (
            full["tool"].as_str().unwrap(),
            full["query"].as_str().unwrap(),
        );
        let arg = if tool == "grep" { "pattern" } else { "query" };
        let want = full["output_sans_timing"]
            .as_str()
            .or(full["output"].as_str())
            .unwrap();
        let (out, _) = env.execute(Assistant, tool, &args(json!({ arg: query })));
        if out != want {
            failures.push(format!(
                "{tool} {query:?} full output:\n  got  {out:?}\n  want {want:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} retrieval mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A variant's tools file is one of its schemas (the embeddings variants name none of their
/// own), and it embeds with upstream's model exactly when `variants.json` says it embeds.
fn check_schemas_file_and_embedder(variants: &Value, name: &str, data: &DomainData) {
    let entry = &variants["variants"][name];
    // The embeddings variants name no tools file: theirs is the one of the same schemas.
    let file = data.schemas_path.file_name().unwrap().to_str().unwrap();
    let same = variants["variants"]
        .as_object()
        .unwrap()
        .values()
        .find(|v| v["tools_file"].as_str() == Some(file))
        .unwrap();
    assert_eq!(
        same["tools_sha256"], entry["tools_sha256"],
        "{name}: {file}"
    );
    let embedder = &entry["kb_search"]["embedder_type"];
    match data.base.dense() {
        Some(dense) => {
            let up = dense.upstream();
            assert_eq!(json!(up.embedder_type), *embedder, "{name}");
            assert!(
                up.model
                    .ends_with(entry["kb_search"]["embedder_model"].as_str().unwrap())
            );
            assert_eq!(dense.documents().len(), 698);
            assert!(!dense.installed());
        }
        None => assert!(embedder.is_null(), "{name} embeds"),
    }
}

#[test]
fn each_runnable_variant_has_upstreams_policy_and_schemas() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let variants_path = dir.path().join("banking_knowledge/variants.json");
    let variants: Value =
        serde_json::from_str(&std::fs::read_to_string(&variants_path).unwrap()).unwrap();
    // Every value the domain declares for `retrieval` (what a config is checked against).
    let declared = tauguard_env::registry::require("banking_knowledge")
        .unwrap()
        .options()
        .iter()
        .find(|o| o.name == "retrieval")
        .unwrap()
        .values;
    assert_eq!(declared.len(), 10, "{declared:?}");
    for &name in declared {
        let data = load(name).unwrap();
        let entry = &variants["variants"][name];
        check_schemas_file_and_embedder(&variants, name, &data);
        if name != "golden_retrieval" {
            assert_eq!(
                sha256(&data.policy),
                entry["policy_sha256"].as_str().unwrap(),
                "{name} policy"
            );
        }
        let names = common::assistant_schema_names(&data);
        assert_eq!(
            json!(names),
            entry["assistant_tool_names"],
            "{name} schemas"
        );
        let env = data.fresh_env();
        let tools: Vec<&str> = env.toolkit(Assistant).iter().map(|t| t.name).collect();
        assert_eq!(tools, names, "{name}: implemented tools = offered tools");
        assert_eq!(data.options["retrieval"], name);
    }
    // golden_retrieval: every task's policy inlines its required documents.
    let golden = load("golden_retrieval").unwrap();
    let per_task: Value = serde_json::from_str(
        &std::fs::read_to_string(
            dir.path()
                .join("banking_knowledge/policy.golden_retrieval.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let rows = per_task.as_array().unwrap();
    assert_eq!(rows.len(), golden.tasks.len());
    for row in rows {
        let task = golden
            .tasks
            .iter()
            .find(|t| t.id == row["task_id"])
            .unwrap();
        let policy = golden
            .base
            .task_policy(task)
            .expect("golden_retrieval renders per task");
        assert_eq!(
            sha256(&policy),
            row["policy_sha256"].as_str().unwrap(),
            "{} golden policy",
            task.id
        );
    }
    let first = golden.tasks.iter().find(|t| t.id == "task_001").unwrap();
    let want = std::fs::read_to_string(
        dir.path()
            .join("banking_knowledge/policy.golden_retrieval.task_001.md"),
    )
    .unwrap();
    assert_eq!(golden.base.task_policy(first).unwrap(), want);
    assert!(load("bm25").unwrap().base.task_policy(first).is_none());
    assert_eq!(
        DomainData::load(&dir, "banking_knowledge").unwrap().options["retrieval"],
        "bm25",
        "the offline default"
    );
    for (name, needs) in [
        ("alltools", "OPENAI_API_KEY"),
        ("terminal_use", "sandbox"),
        ("qwen_embeddings_reranker", "reranker"),
    ] {
        let options = [("retrieval".to_string(), name.to_string())].into();
        let err = DomainData::load_with(&dir, "banking_knowledge", &options)
            .unwrap_err()
            .to_string();
        assert!(err.contains(name) && err.contains(needs), "{name}: {err}");
    }
    let options = [("retrival".to_string(), "bm25".to_string())].into();
    let err = DomainData::load_with(&dir, "banking_knowledge", &options)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`retrival`") && err.contains("retrieval"),
        "{err}"
    );
}

#[test]
fn discoverable_declarations_match_upstreams_list() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let path = dir.path().join("banking_knowledge/discoverable_tools.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for (side, declared) in [
        ("agent_discoverable_tools", defs::AGENT_DISCOVERABLE),
        ("user_discoverable_tools", defs::USER_DISCOVERABLE),
    ] {
        let upstream = file[side].as_array().unwrap();
        assert_eq!(upstream.len(), declared.len(), "{side}");
        for (u, d) in upstream.iter().zip(declared) {
            assert_eq!(u["name"], d.name);
            assert_eq!(u["mutates_state"], d.kind.mutates_state(), "{}", d.name);
            assert_eq!(u["tool_type"], d.kind.as_str(), "{}", d.name);
            let params: Vec<(String, bool)> = u["python_params"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p["name"].as_str().unwrap().to_string(),
                        p["required"].as_bool().unwrap(),
                    )
                })
                .collect();
            let ours: Vec<(String, bool)> = d
                .params
                .iter()
                .map(|p| (p.name.to_string(), p.required))
                .collect();
            assert_eq!(ours, params, "{}", d.name);
        }
    }
    assert_eq!(defs::AGENT_DISCOVERABLE.len(), 44);
}

#[test]
fn read_calls_are_logged_only_when_the_gold_actions_make_them() {
    let Some(data) = load("bm25") else { return };
    let task = data.tasks.iter().find(|t| t.id == "task_026").unwrap();
    let allow = read_log_allowlist(task);
    assert_eq!(
        allow.into_iter().collect::<Vec<_>>(),
        ["update_transaction_rewards_3847"]
    );
    let read = "get_debit_cards_by_account_id_7823";
    let call = |env: &mut Box<dyn Environment>, name: &str, a: Value| {
        env.execute(Assistant, name, &args(a))
    };
    for (mut env, logged) in [
        (data.fresh_env(), false),
        (data.task_env(&with_gold_read(task, read)), true),
    ] {
        let fresh = env.snapshot();
        let (out, _) = call(
            &mut env,
            "call_discoverable_agent_tool",
            json!({"agent_tool_name": read, "arguments": "{\"account_id\": \"x\"}"}),
        );
        assert!(out.contains("has not been unlocked"), "{out}");
        call(
            &mut env,
            "unlock_discoverable_agent_tool",
            json!({"agent_tool_name": read}),
        );
        // A TypeError (a missing argument) is answered and never logged.
        let (out, error) = call(
            &mut env,
            "call_discoverable_agent_tool",
            json!({"agent_tool_name": read, "arguments": "{}"}),
        );
        assert_eq!(
            (out.as_str(), error),
            (
                "Error: Invalid arguments: KnowledgeTools.get_debit_cards_by_account_id_7823() missing 1 required positional argument: 'account_id'",
                false
            )
        );
        assert!(env.same_state(fresh.as_ref()));
        // A tool's own "Error: ..." answer is a successful call: logged when allowed.
        let (out, _) = call(
            &mut env,
            "call_discoverable_agent_tool",
            json!({"agent_tool_name": read, "arguments": "{\"account_id\": \"nope\"}"}),
        );
        assert_eq!(out, "Error: Account 'nope' not found.");
        let changed: Vec<String> = env
            .changes_since(fresh.as_ref())
            .agent
            .keys()
            .cloned()
            .collect();
        assert_eq!(!changed.is_empty(), logged, "{changed:?}");
    }
    // A user tool before the agent gave it, and a malformed arguments string.
    let mut env = data.fresh_env();
    let (out, _) = env.execute(User, "call_discoverable_user_tool", &args(json!({"discoverable_tool_name": "get_card_last_4_digits", "arguments": "{\"credit_card_account_id\": \"cc\"}"})));
    assert!(
        out.starts_with("Error: Tool 'get_card_last_4_digits' has not been given to you"),
        "{out}"
    );
    let (out, _) = env.execute(
        Assistant,
        "give_discoverable_user_tool",
        &args(json!({"discoverable_tool_name": "get_card_last_4_digits", "arguments": "{'a': 1}"})),
    );
    assert_eq!(
        out,
        "Error: Invalid JSON in arguments: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    );
    let (out, _) = env.execute(
        Assistant,
        "get_user_information_by_id",
        &args(json!({"user_id": "a\"b"})),
    );
    assert_eq!(
        out,
        "Error: Invalid JSON: Expecting ',' delimiter: line 1 column 16 (char 15)"
    );
}

/// `task` with one more gold action calling the read tool `name`.
fn with_gold_read(task: &tauguard_core::Task, name: &str) -> tauguard_core::Task {
    let mut t = task.clone();
    let criteria = t.evaluation_criteria.as_mut().unwrap();
    let mut actions = criteria.actions.clone().unwrap_or_default();
    let mut extra = actions[0].clone();
    extra.name = "call_discoverable_agent_tool".into();
    extra.arguments = args(json!({"agent_tool_name": name, "arguments": "{}"}));
    actions.push(extra);
    criteria.actions = Some(actions);
    t
}
