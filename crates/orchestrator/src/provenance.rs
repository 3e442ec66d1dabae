//! What produced a record, completely enough that two different configurations can never be
//! pooled by accident.
//!
//! A cell is identified by every setting that can change its results: domain, the agent,
//! user and judge models with their sampling settings, the guard with its options, the
//! verifier (model and whether it is paired with the agent), the fault profile, the prompts
//! and guard artifacts (by content hash), the seed and the loop limits. Records carry these as
//! a flat `key → value` map ([`CellSpec`]) and its hash; `report` groups by the hash and shows
//! the keys that differ between groups.

use crate::config::{ModelErrors, ModelSection, Role, TruncatedReplies};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use tauguard_guards::{GuardName, GuardOptions};

/// A cell's identity as flat dotted keys (`agent.model`, `guard.strict`, …).
pub(crate) type CellSpec = BTreeMap<String, Value>;

/// Flattens `value` under `prefix` into dotted keys; nulls are left out so that adding an
/// optional setting does not change the identity of configs that leave it unset.
pub(crate) fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Null => {}
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        Value::Object(_) => {}
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// Keys whose values differ between two flattened documents, sorted.
pub(crate) fn differing_keys(
    a: &BTreeMap<String, Value>,
    b: &BTreeMap<String, Value>,
) -> Vec<String> {
    let mut keys: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

fn model(prefix: &str, m: &ModelSection, out: &mut CellSpec) {
    flatten(
        prefix,
        &serde_json::to_value(m).expect("model sections serialise"),
        out,
    );
}

/// blake3 over the contents of every file under `dir` (sorted by relative path), or `None`
/// when the directory does not exist.
pub(crate) fn tree_hash(dir: &Path) -> std::io::Result<Option<String>> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut hasher = blake3::Hasher::new();
    for f in files {
        let rel = f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .to_string_lossy()
            .into_owned();
        hasher.update(rel.as_bytes());
        hasher.update(&[0]);
        hasher.update(&std::fs::read(&f)?);
        hasher.update(&[0]);
    }
    Ok(Some(hasher.finalize().to_hex()[..16].to_string()))
}

/// Content hashes of the inputs read from the project: prompts and the domain's artifacts.
#[derive(Debug, Clone, Default)]
pub(crate) struct InputHashes {
    pub prompts: Option<String>,
    pub artifacts: Option<String>,
    /// Where the domain's guard artifacts came from (`tasks/<domain>/provenance.toml`,
    /// summarised: `checklists=hand-written,…`), with a compiled set's kinds replaced.
    pub origin: Option<String>,
    /// A compiled artifact set's directory as the config names it (`None` = frozen).
    pub set: Option<String>,
    /// Content hash of the set's `DIR/<domain>/`.
    pub set_hash: Option<String>,
    /// The set's full origin, per kind: compiler, model, date, compile report.
    pub compiled: Option<String>,
}

/// Everything a cell is made of, beside the inputs read from the project.
#[derive(Debug, Clone)]
pub(crate) struct CellSettings<'a> {
    pub domain: &'a str,
    pub agent: &'a ModelSection,
    pub user: &'a ModelSection,
    /// `None` = the sim judge.
    pub judge: Option<&'a ModelSection>,
    pub guard: GuardName,
    /// The guard entry's name; recorded only when it differs from the configuration's.
    pub guard_label: &'a str,
    pub options: GuardOptions,
    /// `None` = paired with the agent.
    pub verifier: Option<&'a ModelSection>,
    pub seed: u64,
    pub max_steps: u32,
    pub max_errors: u32,
    pub model_errors: ModelErrors,
    pub truncated_replies: TruncatedReplies,
}

/// The identity of one cell: flat keys, written so that a config of one value per axis keeps
/// the keys (and so the hash) it always had.
pub(crate) fn cell_spec(c: &CellSettings, inputs: &InputHashes) -> CellSpec {
    let mut out = CellSpec::new();
    out.insert("domain".into(), json!(c.domain));
    model("agent", c.agent, &mut out);
    model("user", c.user, &mut out);
    match c.judge {
        Some(j) => model("judge", j, &mut out),
        None => {
            out.insert("judge.provider".into(), json!(tauguard_llm::SIM_PROVIDER));
            out.insert("judge.model".into(), json!(Role::Judge.sim_model()));
        }
    }
    out.insert("guard".into(), json!(c.guard.as_str()));
    if c.guard_label != c.guard.as_str() {
        out.insert("guard.name".into(), json!(c.guard_label));
    }
    if c.guard != GuardName::Baseline {
        out.insert("guard.strict".into(), json!(c.options.strict));
        out.insert(
            "guard.fail_mode".into(),
            json!(c.options.fail_mode.as_str()),
        );
    }
    if c.guard.uses_verifier() {
        match c.verifier {
            Some(v) => {
                out.insert("verifier.mode".into(), json!("explicit"));
                model("verifier", v, &mut out);
            }
            None => {
                out.insert("verifier.mode".into(), json!("paired"));
                model("verifier", c.agent, &mut out);
                // The sim agent's fault profile and the agent's grid label are not part of
                // the verifier.
                out.retain(|k, _| !k.starts_with("verifier.faults") && k != "verifier.name");
            }
        }
        // The token limit the verifier's (or guide's) requests are sent with, which is never
        // the agent's even when the model is; a sim verifier sends no request.
        out.remove("verifier.max_tokens");
        if !c.verifier.unwrap_or(c.agent).is_sim() {
            let limit = match c.guard {
                GuardName::PolicyGuide { .. } => c.options.guide_token_limit(),
                _ => c.options.verifier_token_limit(),
            };
            out.insert("verifier.max_tokens".into(), json!(limit));
        }
    }
    out.insert("seed".into(), json!(c.seed));
    out.insert("max_steps".into(), json!(c.max_steps));
    out.insert("max_errors".into(), json!(c.max_errors));
    // Only when not upstream's: cells of configs without the key keep their hash.
    if c.model_errors != ModelErrors::Infrastructure {
        out.insert("model_errors".into(), json!(c.model_errors));
    }
    if c.truncated_replies != TruncatedReplies::Record {
        out.insert("truncated_replies".into(), json!(c.truncated_replies));
    }
    if let Some(h) = &inputs.prompts {
        out.insert("prompts".into(), json!(h));
    }
    if let Some(h) = &inputs.artifacts {
        out.insert("artifacts".into(), json!(h));
    }
    if let Some(o) = &inputs.origin {
        out.insert("artifacts.origin".into(), json!(o));
    }
    // Only for a compiled set: cells on the frozen set keep their hash.
    for (key, v) in [
        ("artifacts.set", &inputs.set),
        ("artifacts.set_hash", &inputs.set_hash),
        ("artifacts.compiled", &inputs.compiled),
    ] {
        if let Some(v) = v {
            out.insert(key.into(), json!(v));
        }
    }
    out
}

/// blake3 of a cell spec's canonical JSON (keys sorted), 16 hex digits.
pub(crate) fn cell_hash(spec: &CellSpec) -> String {
    let map: Map<String, Value> = spec.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let text = Value::Object(map).to_string();
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_skips_nulls_and_empty_maps() {
        let mut out = BTreeMap::new();
        flatten(
            "m",
            &json!({"a": 1, "b": null, "c": {"d": "x", "e": {}}, "f": [1]}),
            &mut out,
        );
        assert_eq!(
            out,
            BTreeMap::from([
                ("m.a".to_string(), json!(1)),
                ("m.c.d".to_string(), json!("x")),
                ("m.f".to_string(), json!([1])),
            ])
        );
        let other = BTreeMap::from([("m.a".to_string(), json!(2)), ("m.z".to_string(), json!(0))]);
        assert_eq!(differing_keys(&out, &other), ["m.a", "m.c.d", "m.f", "m.z"]);
    }
}
