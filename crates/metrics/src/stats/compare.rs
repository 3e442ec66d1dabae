//! `compare A B`: McNemar's test on (task, trial)-paired outcomes of two configurations, per
//! stratum and pooled over strata (PolicyGuide Table 12), and percentile-bootstrap intervals for
//! the Pass^k difference B − A resampling tasks.
//!
//! Pairing: a simulation is identified by (domain, agent model, guard, user model, task, trial).
//! Domain is always part of the key: the sides must share a domain, and a domain only one
//! side has is dropped and named. The other fields are kept only when their value sets are
//! equal in A and B, so A = baseline and B = guard pair across guards, A = GPT and B = Sonnet
//! pair across agents, and multi-domain multi-agent inputs pair within each domain and agent.
//! Within one pairing group a side must hold exactly one configuration (one cell hash, or one
//! guard/agent/user for records without one); otherwise the pairing would be arbitrary and is
//! refused. Several records of one simulation on
//! one side: the last scored one counts (as in `report`). A pair with an infrastructure error
//! on either side is dropped and counted (or scored as a failure under
//! `InfraPolicy::AsFailure`).

use crate::error::{MetricsError, Unpaired};
use crate::measure::pass_k::{TaskTally, pass_hat_k};
use crate::stats::bootstrap::{BootstrapOptions, paired_diff_cis};
use crate::stats::mcnemar::{McNemar, mcnemar, pooled};
use crate::summary::outcome::InfraPolicy;
use crate::summary::{SimSummary, summarise};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use tauguard_core::record::SimulationRecord;

/// What strata the per-stratum rows and the pooled test use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strata {
    #[default]
    Domain,
    Agent,
}

/// Options of `compare`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    pub infra: InfraPolicy,
    pub strata: Strata,
    pub bootstrap: BootstrapOptions,
    /// Names of the two sides in output.
    pub label_a: String,
    pub label_b: String,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            infra: InfraPolicy::Exclude,
            strata: Strata::Domain,
            bootstrap: BootstrapOptions::default(),
            label_a: "A".into(),
            label_b: "B".into(),
        }
    }
}

/// McNemar on one stratum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StratumRow {
    pub stratum: String,
    pub n_pairs: u64,
    #[serde(flatten)]
    pub test: McNemar,
}

/// Pass^k of both sides on the paired tasks and the bootstrap interval of B − A.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassKDiff {
    pub k: u32,
    pub a: f64,
    pub b: f64,
    pub diff: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// The result of `compare`; its JSON shape is documented in the crate docs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub label_a: String,
    pub label_b: String,
    /// Identity fields used for pairing besides task and trial.
    pub pair_by: Vec<&'static str>,
    pub n_pairs: u64,
    /// Pooled stratified test (Σb, Σc over strata; equals the unstratified test).
    #[serde(flatten)]
    pub test: McNemar,
    /// Pairs dropped because either side was an infrastructure error.
    pub infra_dropped: u64,
    /// Scored simulations of one side without a partner on the other.
    pub unpaired_a: u64,
    pub unpaired_b: u64,
    /// Domains only one side has (their simulations are among the unpaired).
    pub dropped_domains: Vec<String>,
    pub strata_by: Strata,
    pub strata: Vec<StratumRow>,
    /// Tasks present on both sides (the bootstrap's resampling units).
    pub n_tasks: u64,
    pub pass_k_diff: Vec<PassKDiff>,
    pub bootstrap: BootstrapOptions,
    /// A record of either side had a role played by a `sim` model: the comparison is no
    /// paper result, and its table titles say so (see [`crate::summary::simulated`]).
    pub simulated: bool,
}

/// Identity of a simulation for pairing (fields not used are empty).
type SimId = (String, String, String, String, String, u32);

#[derive(Clone, Copy)]
struct Fields {
    domain: bool,
    agent: bool,
    guard: bool,
    user: bool,
}

fn pair_fields(a: &[SimSummary], b: &[SimSummary]) -> Fields {
    fn same<F: Fn(&SimSummary) -> &str>(a: &[SimSummary], b: &[SimSummary], f: F) -> bool {
        let sa: BTreeSet<&str> = a.iter().map(&f).collect();
        let sb: BTreeSet<&str> = b.iter().map(&f).collect();
        sa == sb
    }
    Fields {
        domain: true,
        agent: same(a, b, |r| &r.cell.agent_model),
        guard: same(a, b, |r| &r.cell.guard),
        user: same(a, b, |r| &r.cell.user_model),
    }
}

fn sim_id(r: &SimSummary, f: Fields) -> SimId {
    let pick = |on: bool, s: &str| if on { s.to_string() } else { String::new() };
    let c = &r.cell;
    (
        pick(f.domain, &c.domain),
        pick(f.agent, &c.agent_model),
        pick(f.guard, &c.guard),
        pick(f.user, &c.user_model),
        r.task_id.to_string(),
        r.trial,
    )
}

/// Refuses a side that holds several configurations within one pairing group.
fn one_configuration_per_group(
    side: &[SimSummary],
    f: Fields,
    label: &str,
) -> Result<(), MetricsError> {
    let mut groups: BTreeMap<(String, String, String, String), BTreeSet<String>> = BTreeMap::new();
    for r in side {
        let id = sim_id(r, f);
        let c = &r.cell;
        let config = if c.cell_hash.is_empty() {
            format!("{} / {} / {}", c.agent_model, c.guard, c.user_model)
        } else {
            format!("{} / {} (cell {})", c.agent_model, c.guard, c.cell_hash)
        };
        groups
            .entry((id.0, id.1, id.2, id.3))
            .or_default()
            .insert(config);
    }
    for ((domain, agent, guard, user), configs) in groups {
        if configs.len() > 1 {
            let group = [domain, agent, guard, user]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" / ");
            return Err(MetricsError::AmbiguousSide {
                side: label.to_string(),
                n: configs.len(),
                group,
                cells: configs.into_iter().collect::<Vec<_>>().join("; "),
            });
        }
    }
    Ok(())
}

/// The last scored record per simulation (or the last record when none is scored).
fn index(records: &[SimSummary], f: Fields) -> BTreeMap<SimId, &SimSummary> {
    let mut out: BTreeMap<SimId, &SimSummary> = BTreeMap::new();
    for r in records {
        let id = sim_id(r, f);
        match out.get(&id) {
            Some(old) if r.is_infra_error() && !old.is_infra_error() => {}
            _ => {
                out.insert(id, r);
            }
        }
    }
    out
}

/// Compares two sets of records (A = reference, B = treatment): summarises them, then
/// [`compare_summaries`].
pub fn compare(
    a: &[SimulationRecord],
    b: &[SimulationRecord],
    options: &CompareOptions,
) -> Result<Comparison, MetricsError> {
    compare_summaries(&summarise(a), &summarise(b), options)
}

/// Compares two sets of simulations (A = reference, B = treatment).
pub fn compare_summaries(
    a: &[SimSummary],
    b: &[SimSummary],
    options: &CompareOptions,
) -> Result<Comparison, MetricsError> {
    let domains = |rs: &[SimSummary]| -> BTreeSet<String> {
        rs.iter().map(|r| r.cell.domain.clone()).collect()
    };
    let (da, db) = (domains(a), domains(b));
    if da.is_disjoint(&db) {
        let list = |d: &BTreeSet<String>| d.iter().cloned().collect::<Vec<_>>().join(", ");
        return Err(MetricsError::DifferentDomains {
            a: options.label_a.clone(),
            b: options.label_b.clone(),
            a_domains: list(&da),
            b_domains: list(&db),
        });
    }
    let dropped_domains: Vec<String> = da.symmetric_difference(&db).cloned().collect();
    let fields = pair_fields(a, b);
    one_configuration_per_group(a, fields, &options.label_a)?;
    one_configuration_per_group(b, fields, &options.label_b)?;
    let ia = index(a, fields);
    let ib = index(b, fields);

    let mut strata: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    let (mut n_pairs, mut infra_dropped) = (0u64, 0u64);
    let (mut unpaired_a, mut unpaired_b) = (0u64, 0u64);
    for (id, ra) in &ia {
        let Some(rb) = ib.get(id) else {
            unpaired_a += u64::from(ra.scored(options.infra).is_some());
            continue;
        };
        let (Some(sa), Some(sb)) = (ra.scored(options.infra), rb.scored(options.infra)) else {
            infra_dropped += 1;
            continue;
        };
        n_pairs += 1;
        let stratum = match options.strata {
            Strata::Domain => ra.cell.domain.clone(),
            Strata::Agent => ra.cell.agent_model.clone(),
        };
        let e = strata.entry(stratum).or_default();
        e.0 += 1;
        e.1 += u64::from(sa && !sb);
        e.2 += u64::from(!sa && sb);
    }
    for (id, rb) in &ib {
        if !ia.contains_key(id) {
            unpaired_b += u64::from(rb.scored(options.infra).is_some());
        }
    }
    if n_pairs == 0 {
        return Err(MetricsError::NoPairs(Unpaired {
            a: options.label_a.clone(),
            b: options.label_b.clone(),
            scored_a: unpaired_a + infra_dropped,
            scored_b: unpaired_b + infra_dropped,
        }));
    }
    let strata: Vec<StratumRow> = strata
        .into_iter()
        .map(|(stratum, (n, b, c))| StratumRow {
            stratum,
            n_pairs: n,
            test: mcnemar(b, c),
        })
        .collect();
    let test = pooled(strata.iter().map(|s| &s.test));

    let (n_tasks, pass_k_diff) = pass_k_diffs(&ia, &ib, options);
    Ok(Comparison {
        label_a: options.label_a.clone(),
        label_b: options.label_b.clone(),
        pair_by: pair_by(fields),
        n_pairs,
        test,
        infra_dropped,
        unpaired_a,
        unpaired_b,
        dropped_domains,
        strata_by: options.strata,
        strata,
        n_tasks,
        pass_k_diff,
        bootstrap: options.bootstrap,
        simulated: a.iter().chain(b).any(|r| r.cell.simulated),
    })
}

/// Pass^k per paired task, from every scored trial of each side: how many tasks are paired,
/// and for each k up to the smallest trial count the difference B − A with its CI.
fn pass_k_diffs(
    ia: &BTreeMap<SimId, &SimSummary>,
    ib: &BTreeMap<SimId, &SimSummary>,
    options: &CompareOptions,
) -> (u64, Vec<PassKDiff>) {
    let mut tasks: BTreeMap<(String, String, String, String, String), [TaskTally; 2]> =
        BTreeMap::new();
    for (side, idx) in [ia, ib].into_iter().enumerate() {
        for (id, r) in idx {
            if let Some(s) = r.scored(options.infra) {
                let key = (
                    id.0.clone(),
                    id.1.clone(),
                    id.2.clone(),
                    id.3.clone(),
                    id.4.clone(),
                );
                let t = &mut tasks.entry(key).or_default()[side];
                t.n += 1;
                t.c += u32::from(s);
            }
        }
    }
    let paired: Vec<[TaskTally; 2]> = tasks
        .into_values()
        .filter(|[x, y]| x.n > 0 && y.n > 0)
        .collect();
    let max_k = paired.iter().map(|[x, y]| x.n.min(y.n)).min().unwrap_or(0);
    let per_k = |side: usize| -> Vec<Vec<f64>> {
        (1..=max_k)
            .map(|k| {
                paired
                    .iter()
                    .map(|t| pass_hat_k(t[side].n, t[side].c, k).unwrap_or(0.0))
                    .collect()
            })
            .collect()
    };
    let (va, vb) = (per_k(0), per_k(1));
    let cis = paired_diff_cis(&va, &vb, &options.bootstrap);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let diffs = cis
        .iter()
        .enumerate()
        .map(|(i, ci)| PassKDiff {
            k: i as u32 + 1,
            a: mean(&va[i]),
            b: mean(&vb[i]),
            diff: ci.diff,
            ci_low: ci.ci_low,
            ci_high: ci.ci_high,
        })
        .collect();
    (paired.len() as u64, diffs)
}

/// The record fields pairs are matched on, by name.
fn pair_by(fields: Fields) -> Vec<&'static str> {
    let mut pair_by = Vec::new();
    for (on, name) in [
        (fields.domain, "domain"),
        (fields.agent, "agent_model"),
        (fields.guard, "guard"),
        (fields.user, "user_model"),
    ] {
        if on {
            pair_by.push(name);
        }
    }
    pair_by
}

impl Comparison {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("comparison serializes to JSON")
    }
}
