//! Two groups of `grid::validate`'s checks, each with its key paths: the run's domains and
//! their options (the option axes in `grid_options.rs`), and the guard entries.

use crate::config::RunConfig;
use crate::grid::{GridSection, NameOr, e_key, unique};
use std::collections::HashSet;
use tauguard_guards::GuardName;

/// `run.domain` or `grid.domains` (one of them, known, no repeats) and the options of each;
/// the run's domains.
pub(crate) fn validate_domains(cfg: &RunConfig) -> Result<Vec<&str>, String> {
    let g = &cfg.grid;
    match (cfg.run.domain.is_empty(), g.domains.is_empty()) {
        (true, true) => {
            return Err(
                "at `run.domain`: missing; name one domain there or list several in `grid.domains`"
                    .into(),
            );
        }
        (false, false) => {
            return Err(format!(
                "at `grid.domains`: the grid's domains replace `run.domain` (`{}`); set only one of them",
                cfg.run.domain
            ));
        }
        _ => {}
    }
    unique("grid.domains", g.domains.iter().cloned())?;
    for (i, d) in g.domains.iter().enumerate() {
        if tauguard_env::registry::get(d).is_none() {
            return Err(format!(
                "at `grid.domains[{i}]`: unknown domain `{d}` (known: {})",
                tauguard_env::registry::known_names()
            ));
        }
    }
    let run_domains: Vec<&str> = if g.domains.is_empty() {
        vec![cfg.run.domain.as_str()]
    } else {
        g.domains.iter().map(String::as_str).collect()
    };
    for (d, options) in &cfg.run.domain_options {
        if !run_domains.contains(&d.as_str()) {
            return Err(format!(
                "at `run.domain_options.{d}`: `{d}` is not a domain of the run (domains: {})",
                run_domains.join(", ")
            ));
        }
        let def = tauguard_env::registry::get(d).ok_or_else(|| format!("unknown domain `{d}`"))?;
        tauguard_env::registry::resolve_options(def, options)
            .map_err(|e| format!("at `run.domain_options.{d}`: {e}"))?;
    }
    crate::grid_options::validate(cfg, &run_domains)?;
    Ok(run_domains)
}

/// At least one guard; labels unique; each a known configuration or a valid `external`.
pub(crate) fn validate_guards(g: &GridSection) -> Result<(), String> {
    if g.guards.is_empty() {
        return Err("at `grid.guards`: list at least one configuration (e.g. \"baseline\")".into());
    }
    let mut labels = HashSet::new();
    for (i, e) in g.guards.iter().enumerate() {
        let (label, config) = match e {
            NameOr::Name(n) => (n, n),
            NameOr::Table(t) => (&t.name, &t.guard),
        };
        if !labels.insert(label.clone()) {
            return Err(format!("at `grid.guards[{i}]`: `{label}` is listed twice"));
        }
        if let NameOr::Table(t) = e {
            match (&t.external, t.guard.is_empty()) {
                (Some(x), true) => {
                    x.validate()
                        .map_err(|m| format!("at `grid.guards[{i}].external`: {m}"))?;
                    continue;
                }
                (Some(_), false) => {
                    return Err(format!(
                        "at `grid.guards[{i}]`: set one of `guard` (a built-in configuration) and `external`, not both"
                    ));
                }
                _ => {}
            }
        }
        GuardName::parse(config).map_err(|e| {
            let key = match e_key(&g.guards[i]) {
                Some(k) => format!("grid.guards[{i}].{k}"),
                None => format!("grid.guards[{i}]"),
            };
            format!("at `{key}`: {e}")
        })?;
    }
    Ok(())
}
