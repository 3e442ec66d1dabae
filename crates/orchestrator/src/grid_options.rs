//! The domain-option axes of a grid: `[grid.domain_options.<domain>] <option> = [values]`, over
//! any option a domain declares (`tauguard_env::registry::Domain::options`, e.g.
//! banking_knowledge's retrieval variant). Each combination of a domain's values is a domain
//! plan of its own, loaded under those options, so its cells carry the values the way a
//! `[run.domain_options]` run does — through the domain's data (policy, tool schemas) and the
//! comparability stamp's item per option, which are part of the cell hash — and the cell id
//! names each option whose axis holds several values (`|retrieval=grep_only`).
//!
//! A one-value axis is the `[run.domain_options]` shorthand: the same cells with the same ids
//! and hashes. A config without the key keeps its config hash (the key is left out of the
//! serialisation while empty) and its cells.

use crate::config::RunConfig;
use std::collections::BTreeMap;
use tauguard_env::registry::DomainOptions;

/// Domain → option → the values crossed.
pub(crate) type OptionAxes = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// One combination of a domain's option values: one domain plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct OptionPoint {
    /// What the domain is loaded with: `[run.domain_options]`, with the axes' values.
    pub options: DomainOptions,
    /// `(option, value)` of each axis holding several values, in option order: what the cell
    /// ids of the point add after `domain|agent|guard`.
    pub labels: Vec<(String, String)>,
}

impl OptionPoint {
    /// `|option=value` per label (empty without an axis of several values).
    pub(crate) fn id_suffix(&self) -> String {
        self.labels
            .iter()
            .map(|(k, v)| format!("|{k}={v}"))
            .collect()
    }
}

/// The combinations of `domain`'s option axes — options in name order, the first outermost,
/// values in config order; without an axis, the one point of the run's options.
pub(crate) fn points(cfg: &RunConfig, domain: &str) -> Vec<OptionPoint> {
    let base = OptionPoint {
        options: cfg
            .run
            .domain_options
            .get(domain)
            .cloned()
            .unwrap_or_default(),
        labels: Vec::new(),
    };
    let mut points = vec![base];
    let Some(axes) = cfg.grid.domain_options.get(domain) else {
        return points;
    };
    for (key, values) in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.options.insert(key.clone(), v.clone());
                    if values.len() > 1 {
                        q.labels.push((key.clone(), v.clone()));
                    }
                    q
                })
            })
            .collect();
    }
    points
}

/// Checks `[grid.domain_options]` against the run's domains and what each declares; the
/// message starts with the key path.
pub(crate) fn validate(cfg: &RunConfig, run_domains: &[&str]) -> Result<(), String> {
    for (d, axes) in &cfg.grid.domain_options {
        let at = format!("grid.domain_options.{d}");
        if !run_domains.contains(&d.as_str()) {
            return Err(format!(
                "at `{at}`: `{d}` is not a domain of the run (domains: {})",
                run_domains.join(", ")
            ));
        }
        let def = tauguard_env::registry::require(d).map_err(|e| format!("at `{at}`: {e}"))?;
        for (key, values) in axes {
            let at = format!("{at}.{key}");
            let Some(option) = def.options().iter().find(|o| o.name == key.as_str()) else {
                let declared: Vec<&str> = def.options().iter().map(|o| o.name).collect();
                return Err(format!(
                    "at `{at}`: domain `{d}` has no option `{key}` (options: {})",
                    if declared.is_empty() {
                        "none".to_string()
                    } else {
                        declared.join(", ")
                    }
                ));
            };
            if cfg
                .run
                .domain_options
                .get(d)
                .is_some_and(|o| o.contains_key(key))
            {
                return Err(format!(
                    "at `{at}`: `run.domain_options.{d}.{key}` sets it too; the grid's values replace the run's, set only one of them"
                ));
            }
            if values.is_empty() {
                return Err(format!(
                    "at `{at}`: list at least one value (valid: {})",
                    option.values.join(", ")
                ));
            }
            crate::grid::unique(&at, values.iter().cloned())?;
            for (i, v) in values.iter().enumerate() {
                if !option.values.contains(&v.as_str()) {
                    return Err(format!(
                        "at `{at}[{i}]`: `{v}` is not a value of `{key}` tauguard runs (valid: {})",
                        option.values.join(", ")
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(run: &str, grid: &str) -> RunConfig {
        let text = format!(
            "[run]\nname = \"t\"\ndomain = \"banking_knowledge\"\n{run}\n\
             [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n{grid}"
        );
        RunConfig::parse(std::path::Path::new("t.toml"), &text).unwrap()
    }

    #[test]
    fn points_cross_the_axes_and_label_only_axes_of_several_values() {
        let none = cfg("", "");
        assert_eq!(points(&none, "banking_knowledge"), [OptionPoint::default()]);
        // Unset, the key is not serialised: the config hash of a config without it holds.
        assert!(none.identity_json()["grid"].get("domain_options").is_none());
        let two = cfg(
            "",
            "[grid.domain_options.banking_knowledge]\nretrieval = [\"grep_only\", \"bm25\"]\n",
        );
        let got = points(&two, "banking_knowledge");
        let suffixes: Vec<String> = got.iter().map(OptionPoint::id_suffix).collect();
        assert_eq!(suffixes, ["|retrieval=grep_only", "|retrieval=bm25"]);
        assert_eq!(got[1].options["retrieval"], "bm25");
        // One value is the run option: same options, no label.
        let one = cfg(
            "",
            "[grid.domain_options.banking_knowledge]\nretrieval = [\"grep_only\"]\n",
        );
        let run = cfg(
            "[run.domain_options.banking_knowledge]\nretrieval = \"grep_only\"",
            "",
        );
        assert_eq!(
            points(&one, "banking_knowledge"),
            points(&run, "banking_knowledge")
        );
    }
}
