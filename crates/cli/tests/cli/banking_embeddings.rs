//! banking_knowledge's embeddings retrieval through the binary, against a loopback server
//! that is both the agent (a scripted model that searches once, then answers in words) and
//! the embeddings endpoint (deterministic vectors computed from each text). The run embeds
//! the 698 documents in one request and the query before the call; the tool output equals
//! what upstream's cosine pipeline computes for those vectors; the record says the variant,
//! counts the query's embeddings usage and stamps the model as upstream's; a second run is
//! served from the cache. A missing model, a missing key and a failing endpoint stop the run
//! before anything is written, naming the key, the variable or the endpoint.

use crate::support::{assert_contains_all, s, tauguard_in_env};
use base64::Engine;
use serde_json::{Value, json};
use tauguard_testkit::{Loopback, MockProvider, SimConfig, embeddings_reply};
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

const QUERY: &str = "credit card annual fee";
const KEY_VAR: &str = "TAUGUARD_TEST_AGENT_KEY";
const EMBED_KEY_VAR: &str = "TAUGUARD_TEST_EMBEDDINGS_KEY";

/// The vector the server gives a text: small counts, so ties and zero norms are rare but
/// possible, as float32.
fn vector(text: &str) -> Vec<f32> {
    let count = |c: char| text.matches(c).count();
    vec![
        (text.len() % 13) as f32 + 1.0,
        (count('e') % 7) as f32,
        (count('s') % 5) as f32 + 1.0,
        (count('\n') % 3) as f32,
    ]
}

struct Embeddings;

impl Respond for Embeddings {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let float = body["encoding_format"] == "float";
        let reply = embeddings_reply(&body, "text-embedding-3-large", 5, |text| {
            let v = vector(text);
            if float {
                json!(v)
            } else {
                let bytes: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
                json!(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
        });
        ResponseTemplate::new(200).set_body_json(reply)
    }
}

/// Searches the knowledge base on its first turn, answers in words after that.
struct Agent;

impl Respond for Agent {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let called = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["tool_calls"].is_array());
        let message = if called {
            json!({"role": "assistant", "content": "Thank you, that is all I can say."})
        } else {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                "type": "function", "function": {"name": "KB_search",
                    "arguments": json!({"query": QUERY}).to_string()}}]})
        };
        ResponseTemplate::new(200).set_body_json(tauguard_testkit::chat_completion(
            "scripted",
            "stop",
            message,
            (10, 2),
        ))
    }
}

/// The loopback server: embeddings answered with `embeddings_status` (200: the vectors),
/// chat completions by the scripted agent.
fn server(embeddings_status: u16) -> Loopback {
    let server = Loopback::mount(
        Mock::given(method("POST"))
            .and(path("/embeddings"))
            .respond_with(move |req: &Request| {
                if embeddings_status == 200 {
                    Embeddings.respond(req)
                } else {
                    ResponseTemplate::new(embeddings_status).set_body_string("unavailable")
                }
            }),
    );
    server.add(
        Mock::given(method("POST"))
            .and(path("/chat/completions"))
            .respond_with(Agent),
    );
    server
}

fn config(dir: &std::path::Path, uri: &str, embeddings: &str) -> std::path::PathBuf {
    config_of(dir, uri, "openai_embeddings", embeddings)
}

/// [`config`] with another of the domain's `retrieval` variants.
fn config_of(
    dir: &std::path::Path,
    uri: &str,
    retrieval: &str,
    embeddings: &str,
) -> std::path::PathBuf {
    let keyed = |name: &str, key: &str| {
        MockProvider::new(name, uri)
            .lines(&format!("api_key_env = \"{key}\""))
            .retry("max_attempts = 1")
    };
    SimConfig::new(
        "bke",
        "banking_knowledge",
        &tauguard_testkit::tau2_candidate(),
    )
    .run_line("num_tasks = 1\nmax_steps = 6\nmax_retries = 0")
    .run_line(&format!(
        "[run.domain_options.banking_knowledge]\nretrieval = \"{retrieval}\""
    ))
    .agent("provider = \"mock\"\nmodel = \"scripted\"")
    .provider(keyed("mock", KEY_VAR).lines("timeout_secs = 10"))
    .provider(keyed("embed", EMBED_KEY_VAR))
    .tail(embeddings)
    .tail(&format!(
        "[llm.cache]\ndir = \"{}\"",
        dir.join("cache").display()
    ))
    .write(&dir.join("bke.toml"))
}

const EMBEDDINGS: &str =
    "[models.embeddings]\nprovider = \"embed\"\nmodel = \"text-embedding-3-large\"";

/// What upstream's pipeline prints for the query: the documents in sorted-id order, scored by
/// `CosineRetriever._cosine_similarity_single`, ranked by `np.argsort(scores)[::-1][:10]`
/// (stable, so among equal scores the later document first), formatted by
/// `_format_kb_search_result` without its timing suffix.
fn upstream_output(data: &std::path::Path) -> String {
    let mut docs: Vec<Value> = std::fs::read_dir(data.join("banking_knowledge/documents"))
        .unwrap()
        .flatten()
        .map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap())
        .collect();
    docs.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    let normalised = |v: Vec<f32>| {
        let v: Vec<f64> = v.into_iter().map(f64::from).collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let n = if n == 0.0 { 1.0 } else { n };
        v.into_iter().map(|x| x / n).collect::<Vec<f64>>()
    };
    let q = normalised(vector(QUERY));
    let scores: Vec<f64> = docs
        .iter()
        .map(|d| {
            let d = normalised(vector(d["content"].as_str().unwrap()));
            d.iter().zip(&q).map(|(a, b)| a * b).sum()
        })
        .collect();
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by(|a, b| scores[*a].partial_cmp(&scores[*b]).unwrap().then(a.cmp(b)));
    order.reverse();
    order
        .iter()
        .take(10)
        .enumerate()
        .map(|(rank, i)| {
            let d = &docs[*i];
            format!(
                "{}. {}\n   ID: {}\n   Score: {:.4}\n   Content: {}\n",
                rank + 1,
                d["title"].as_str().unwrap(),
                d["id"].as_str().unwrap(),
                scores[*i],
                d["content"].as_str().unwrap()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn run(cfg: &std::path::Path, out: &std::path::Path, key: bool) -> (i32, String, String) {
    let args = ["run", s(cfg), "--out", s(out)];
    let env: &[(&str, &str)] = if key {
        &[(KEY_VAR, "sk-agent"), (EMBED_KEY_VAR, "sk-embed")]
    } else {
        &[(KEY_VAR, "sk-agent")]
    };
    tauguard_in_env(&args, env)
}

fn tool_outputs(out: &std::path::Path) -> (Value, Vec<String>) {
    let text = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    let record: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let outputs = record["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    (record, outputs)
}

#[test]
fn an_embeddings_run_ranks_as_upstream_records_its_usage_and_reruns_from_the_cache() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let server = server(200);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &server.uri(), EMBEDDINGS);
    let out = tmp.path().join("run");
    let (code, stdout, err) = run(&cfg, &out, true);
    assert_eq!(code, 0, "{stdout}\n{err}");
    assert!(
        stdout.contains("knowledge base embedded before the run"),
        "{stdout}"
    );
    let (record, outputs) = tool_outputs(&out);
    assert_eq!(
        outputs,
        [upstream_output(&data)],
        "KB_search as upstream ranks"
    );
    assert_eq!(record["cell"]["benchmark.embeddings"], "upstream");
    assert!(
        record["cell"]["benchmark.retrieval"]
            .as_str()
            .unwrap()
            .contains("openai_embeddings"),
        "{}",
        record["cell"]
    );
    let usage = &record["usage"]["embeddings"];
    assert_eq!(
        (
            usage["calls"].as_u64(),
            usage["usage"]["prompt_tokens"].as_u64()
        ),
        (Some(1), Some(5)),
        "{usage}"
    );
    let requests = server.received();
    let inputs: Vec<usize> = requests
        .iter()
        .filter(|r| r.url.path() == "/embeddings")
        .map(|r| {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            assert_eq!(
                body["encoding_format"], "base64",
                "the OpenAI SDK's default"
            );
            body["input"].as_array().unwrap().len()
        })
        .collect();
    assert_eq!(
        inputs,
        [698, 1],
        "the documents in one request, then the query"
    );

    let again = tmp.path().join("again");
    let (code, _, err) = run(&cfg, &again, true);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tool_outputs(&again).1, outputs);
    let embedded_again = server
        .received()
        .iter()
        .filter(|r| r.url.path() == "/embeddings")
        .count();
    assert_eq!(embedded_again, 2, "the second run embeds nothing");
}

#[test]
fn a_missing_model_key_or_endpoint_stops_the_run_before_anything_is_written() {
    if tauguard_testkit::tau2_dir().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ok = server(200);
    let cases = [
        (
            "",
            true,
            vec![
                "models.embeddings",
                "text-embedding-3-large",
                "OPENAI_API_KEY",
            ],
        ),
        (EMBEDDINGS, false, vec![EMBED_KEY_VAR, "embeddings"]),
    ];
    for (i, (embeddings, key, needles)) in cases.into_iter().enumerate() {
        let dir = tmp.path().join(format!("case{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = config(&dir, &ok.uri(), embeddings);
        let out = dir.join("out");
        let (code, _, err) = run(&cfg, &out, key);
        assert_eq!(
            code,
            2,
            "case {i}: {err}\n{}",
            std::fs::read_to_string(&cfg).unwrap()
        );
        for n in needles {
            assert!(err.contains(n), "case {i}: {n} in {err}");
        }
        assert!(!out.join("records.jsonl").exists());
    }
    let failing = server(503);
    let cfg = config(tmp.path(), &failing.uri(), EMBEDDINGS);
    let out = tmp.path().join("failing");
    let (code, _, err) = run(&cfg, &out, true);
    assert_ne!(code, 0);
    assert_contains_all(&err, &[&format!("{}/embeddings", failing.uri()), "503"]);
    assert!(!out.join("records.jsonl").exists());
}

/// `--dry-run` knows the embedding (model, documents, tokens) and stamps it, with the model
/// named by its catalog alias (Qwen through the built-in `openrouter` provider, unpriced);
/// another model deviates; `--check` embeds one text on the loopback server.
#[test]
fn dry_run_and_check_know_the_embeddings_model() {
    if tauguard_testkit::tau2_dir().is_none() {
        return;
    }
    let server = server(200);
    let tmp = tempfile::tempdir().unwrap();
    let qwen = config_of(
        tmp.path(),
        &server.uri(),
        "qwen_embeddings_grep",
        "[models]\nembeddings = \"qwen3-embedding-8b\"",
    );
    let (code, stdout, err) = tauguard_in_env(&["run", "--dry-run", s(&qwen)], &[]);
    assert_eq!(code, 0, "{err}");
    assert_contains_all(
        &stdout,
        &[
            "embeddings: 698 documents of banking_knowledge with `openrouter/qwen/qwen3-embedding-8b`",
            "price unknown",
        ],
    );
    let stamp = |out: &str| {
        out.lines()
            .find(|l| l.split_whitespace().nth(1) == Some("embeddings"))
            .unwrap_or_else(|| panic!("no embeddings stamp line in {out}"))
            .to_string()
    };
    assert!(
        stamp(&stdout).trim_start().starts_with("upstream"),
        "{stdout}"
    );

    let small = config(
        tmp.path(),
        &server.uri(),
        "[models.embeddings]\nprovider = \"embed\"\nmodel = \"text-embedding-3-small\"",
    );
    let (code, stdout, err) = tauguard_in_env(&["run", "--dry-run", s(&small)], &[]);
    assert_eq!(code, 0, "{err}");
    let line = stamp(&stdout);
    assert_contains_all(&line, &["DEVIATES", "text-embedding-3-small"]);

    let cfg = config(tmp.path(), &server.uri(), EMBEDDINGS);
    let (code, stdout, err) = tauguard_in_env(
        &["run", "--check", s(&cfg)],
        &[(KEY_VAR, "sk-agent"), (EMBED_KEY_VAR, "sk-embed")],
    );
    assert_eq!(code, 0, "{stdout}\n{err}");
    assert_contains_all(
        &stdout,
        &[
            "models.embeddings `embed/text-embedding-3-large`",
            "embeds (4 dimensions)",
        ],
    );
}

/// The Qwen variant as upstream's `OpenRouterEmbedder` sends it: float encoding, documents
/// as they are, the query behind Qwen's instruction prefix.
#[test]
fn the_qwen_variant_sends_floats_and_prefixes_only_the_query() {
    if tauguard_testkit::tau2_dir().is_none() {
        return;
    }
    let server = server(200);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config_of(
        tmp.path(),
        &server.uri(),
        "qwen_embeddings",
        "[models.embeddings]\nprovider = \"embed\"\nmodel = \"qwen/qwen3-embedding-8b\"\n\
         extra = { encoding_format = \"float\" }",
    );
    let out = tmp.path().join("run");
    let (code, _, err) = run(&cfg, &out, true);
    assert_eq!(code, 0, "{err}");
    let (record, outputs) = tool_outputs(&out);
    assert_eq!(record["cell"]["benchmark.embeddings"], "upstream");
    assert_eq!(outputs.len(), 1);
    assert!(outputs[0].starts_with("1. "), "{}", outputs[0]);
    let bodies: Vec<Value> = server
        .received()
        .iter()
        .filter(|r| r.url.path() == "/embeddings")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies
            .iter()
            .all(|b| b["encoding_format"] == "float" && b["model"] == "qwen/qwen3-embedding-8b")
    );
    let docs = bodies[0]["input"].as_array().unwrap();
    assert!(
        docs.iter()
            .all(|d| !d.as_str().unwrap().starts_with("Instruct:"))
    );
    assert_eq!(
        bodies[1]["input"],
        json!([format!(
            "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:{QUERY}"
        )])
    );
}
