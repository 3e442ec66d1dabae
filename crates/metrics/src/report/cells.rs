//! Cells in reports: telling apart groups that share a label, and refusing a run name that
//! holds records of two configurations (see the provenance section of ARCHITECTURE.md).

use crate::report::GroupReport;
use crate::summary::SimSummary;
use serde_json::Value;
use std::collections::HashMap;
use tauguard_core::record::SimulationRecord;

/// Fills each group's distinguishing settings: the keys whose values differ among the groups
/// that share its (domain, agent, guard) label.
pub(crate) fn distinguish(groups: &mut [GroupReport]) {
    let mut by_label: HashMap<(String, String, String), Vec<usize>> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        by_label
            .entry((g.domain.clone(), g.agent_model.clone(), g.guard.clone()))
            .or_default()
            .push(i);
    }
    for members in by_label.values().filter(|m| m.len() > 1) {
        let keys: std::collections::BTreeSet<&String> = members
            .iter()
            .flat_map(|&i| groups[i].full_cell.keys())
            .filter(|k| {
                let first = groups[members[0]].full_cell.get(*k);
                members
                    .iter()
                    .any(|&i| groups[i].full_cell.get(*k) != first)
            })
            .collect();
        // A compiled artifact set's directory tells its cells apart; its origin, full origin
        // and content hash follow from it (the artifacts table shows them).
        let set = keys.iter().any(|k| *k == "artifacts.set");
        let derived = [
            "artifacts.origin",
            "artifacts.compiled",
            "artifacts.set_hash",
        ];
        // A domain option (a retrieval variant) tells its cells apart; the data it chooses
        // and whether the cell is comparable follow from it (the comparability table shows
        // them).
        let option = keys.iter().any(|k| {
            members
                .iter()
                .any(|&i| option_item(k, &groups[i]).is_some())
        });
        let keys: Vec<String> = keys
            .into_iter()
            .filter(|k| !(set && derived.contains(&k.as_str())))
            .filter(|k| !(option && follows_from_options(k)))
            .cloned()
            .collect();
        for &i in members {
            let g = &mut groups[i];
            g.cell = keys
                .iter()
                .map(|k| {
                    let v = g.full_cell.get(k).cloned().unwrap_or(Value::Null);
                    (k.clone(), v)
                })
                .collect();
            if g.cell.is_empty() {
                // Different hashes but no settings recorded (records without a cell map).
                g.cell.insert(
                    "cell_hash".into(),
                    Value::String(g.cell_hash.clone().unwrap_or_default()),
                );
            }
        }
    }
}

/// The option and its value when `key` is a domain option's stamp item in `g`'s settings
/// (`benchmark.retrieval` = `retrieval = grep_only; …` gives `("retrieval", "grep_only")`).
pub(crate) fn option_item<'a>(key: &'a str, g: &'a GroupReport) -> Option<(&'a str, &'a str)> {
    let name = key.strip_prefix(tauguard_core::comparability::CELL_PREFIX)?;
    let detail = g.full_cell.get(key)?.as_str()?;
    Some((
        name,
        tauguard_core::comparability::option_value(name, detail)?,
    ))
}

/// The stamp's data items and its verdict, which a domain option decides.
fn follows_from_options(key: &str) -> bool {
    use tauguard_core::comparability::{CELL_PREFIX, COMPARABLE_KEY, DATA_ITEMS};
    key == COMPARABLE_KEY
        || key
            .strip_prefix(CELL_PREFIX)
            .is_some_and(|item| DATA_ITEMS.contains(&item))
}

/// How a label shows a setting one group records and another does not (its value in the
/// report's JSON `cell` is `null`). The orchestrator leaves some settings out of a cell's
/// identity while they hold upstream's default, so their absence means that default; metrics
/// may not import the orchestrator, so the defaults are repeated here. Any other absent
/// setting was not set for the group (a baseline has no verifier, no fail mode).
pub(crate) fn absent_setting(key: &str) -> &'static str {
    match key {
        "model_errors" => "infrastructure (default)",
        "truncated_replies" => "record (default)",
        "artifacts.set" => "frozen",
        _ => "unset",
    }
}

/// Refuses records of one run name written under different configurations (a run directory
/// appended to by another config): their cells cannot be told apart by the run name alone.
/// `report --pool` skips this check.
pub fn check_single_config(records: &[SimulationRecord]) -> Result<(), crate::MetricsError> {
    check_runs(
        records
            .iter()
            .map(|r| (r.run_id.as_str(), r.config_hash.as_str())),
    )
}

/// [`check_single_config`] on summaries.
pub fn check_single_config_summaries(sims: &[SimSummary]) -> Result<(), crate::MetricsError> {
    check_runs(
        sims.iter()
            .map(|s| (s.cell.run_id.as_str(), s.cell.config_hash.as_str())),
    )
}

fn check_runs<'a>(
    runs: impl Iterator<Item = (&'a str, &'a str)>,
) -> Result<(), crate::MetricsError> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for (run, hash) in runs.filter(|(_, h)| !h.is_empty()) {
        match seen.get(run) {
            None => {
                seen.insert(run, hash);
            }
            Some(h) if *h != hash => {
                return Err(crate::MetricsError::MixedConfigs {
                    run: run.to_string(),
                    a: h.to_string(),
                    b: hash.to_string(),
                });
            }
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tauguard_core::record::Slice;
    use tauguard_testkit::synthetic::record;

    #[test]
    fn a_setting_one_group_lacks_reads_as_its_default_not_null() {
        let mut plain = record("t1", Slice::Pv, 0, 1.0);
        plain.cell_hash = "aaaa".into();
        plain.cell.insert("seed".into(), json!(1));
        let mut set = plain.clone();
        set.cell_id = "cell2".into();
        set.cell_hash = "bbbb".into();
        set.cell.insert("model_errors".into(), json!("fail"));
        set.cell.insert("prompts".into(), json!("abc"));
        let rep = crate::report(&[plain, set], &Default::default());
        let labels: Vec<String> = rep.groups.iter().map(|g| g.label()).collect();
        assert!(
            labels.contains(
                &"airline / agent / baseline [model_errors=infrastructure (default), prompts=unset]"
                    .to_string()
            ),
            "{labels:?}"
        );
        assert!(
            labels.contains(&"airline / agent / baseline [model_errors=fail, prompts=abc]".into()),
            "{labels:?}"
        );
        assert!(labels.iter().all(|l| !l.contains("null")), "{labels:?}");
        assert_eq!(absent_setting("truncated_replies"), "record (default)");
    }
}
