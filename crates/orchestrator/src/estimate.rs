//! `tauguard run --dry-run`: what a built plan will do before anything runs — its cells, its
//! simulations, the model calls per role and a cost range from the price table. Nothing is
//! called and nothing is written; the numbers come from the config and the selected tasks.
//!
//! How calls per simulation are estimated, per task (then averaged over a cell's tasks):
//!
//! - `a` = the task's agent-side gold actions, `m` = those that mutate.
//! - user turns, typical: `2 + m` (the request, one reply with identity or details, one
//!   confirmation per mutation); high: `ceil(max_steps / 2)` (turns alternate).
//! - agent calls, typical: `a + 2 + m` (one completion per tool call and per user turn); high:
//!   `ceil(max_steps / 2)` (every completion adds a message and is answered by one).
//! - verifier calls: PolicyGuard-style guards (`pg-*`, `hybrid`) judge each mutating call:
//!   typical `m`, high = the agent's high (every completion a mutating call). PolicyGuide
//!   (`policyguide`, `policyguide-raw`) runs before each agent reply to a user turn and again
//!   for an intercepted call: typical = user turns, high = user high + agent high. Other
//!   guards call no model.
//! - judge calls: 1 when the task has NL assertions, else 0.
//!
//! Prompt sizes: each model-played role's largest fixed prompt per cell
//! ([`crate::role_prompts`]), in tokens, beside the model's context window where the config
//! or the catalog declares one (`context_tokens`); a prompt that does not fit is a warning
//! naming the cell, the role, the model and both numbers.
//!
//! Tokens, for the cost range: [`CHARS_PER_TOKEN`] characters per token; a call's input is the role's system
//! prompt (the agent's with its tool schemas; the user's per task; a verifier reads the
//! agent's policy prompt) plus [`TOKENS_PER_MESSAGE`] per message so far (two messages per
//! earlier call); a judge reads the whole conversation. Output per call is
//! [`OUTPUT_TOKENS_LOW`] for the low end, [`OUTPUT_TOKENS_HIGH`] (reasoning billed as output)
//! for the high end. Low = typical calls with the system prompt billed at the cached-input
//! price after each role's first call; high = the high call counts with no cache hits. `sim`
//! models cost 0; a model without a price makes the cost unknown and is named.

use crate::config::{ModelSection, Role};
use crate::plan::{Cell, RunPlan};
pub use crate::role_prompts::CHARS_PER_TOKEN;
use crate::role_prompts::{
    PromptRole, cell_prompts, context_tokens, schema_chars, verifier_section,
};
use serde::Serialize;
use std::collections::BTreeSet;
use tauguard_core::{Requestor, Task};
use tauguard_guards::GuardName;
use tauguard_llm::ModelPrice;

/// Assumed tokens of one conversation message.
pub(crate) const TOKENS_PER_MESSAGE: f64 = 120.0;
/// Assumed output tokens of one call, low and high end.
pub(crate) const OUTPUT_TOKENS_LOW: f64 = 150.0;
pub(crate) const OUTPUT_TOKENS_HIGH: f64 = 1500.0;

/// A low–high pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Range {
    pub low: f64,
    pub high: f64,
}

impl Range {
    fn add(&mut self, o: Range) {
        self.low += o.low;
        self.high += o.high;
    }
    fn scale(self, k: f64) -> Range {
        Range {
            low: self.low * k,
            high: self.high * k,
        }
    }
}

/// Model calls per role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RoleCalls {
    pub agent: Range,
    pub user: Range,
    pub verifier: Range,
    pub judge: Range,
}

impl RoleCalls {
    fn add(&mut self, o: &RoleCalls) {
        self.agent.add(o.agent);
        self.user.add(o.user);
        self.verifier.add(o.verifier);
        self.judge.add(o.judge);
    }
    fn scale(&self, k: f64) -> RoleCalls {
        RoleCalls {
            agent: self.agent.scale(k),
            user: self.user.scale(k),
            verifier: self.verifier.scale(k),
            judge: self.judge.scale(k),
        }
    }
}

/// One cell of a dry run.
#[derive(Debug, Clone, Serialize)]
pub struct CellEstimate {
    pub id: String,
    /// The cell hash its records will carry.
    pub hash: String,
    pub domain: String,
    pub agent: String,
    pub guard: String,
    /// `null` for a guard without a verifier.
    pub verifier: Option<String>,
    pub seed: u64,
    pub tasks: usize,
    pub trials: u32,
    pub simulations: usize,
    pub max_steps: u32,
    /// Mean calls per simulation.
    pub calls_per_simulation: RoleCalls,
    /// Dollars for the whole cell; `null` when a model of it has no price.
    pub cost: Option<Range>,
    /// Whether the cell runs τ²-bench's benchmark definition, item by item.
    pub stamp: crate::comparability::Stamp,
    /// The largest fixed prompt of each role a non-`sim` model plays.
    pub prompts: Vec<PromptEstimate>,
}

/// One role's largest prompt in one cell, against its model's context window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptEstimate {
    pub role: PromptRole,
    /// `provider/model`.
    pub model: String,
    /// Estimated tokens of the fixed part (system prompt, fixed request, tool schemas).
    pub tokens: u64,
    /// The model's context window; `null` when nothing declares it.
    pub context_tokens: Option<u32>,
    /// Whether the prompt leaves room in the window; `null` when the window is unknown.
    pub fits: Option<bool>,
}

/// The whole dry run.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    pub run: String,
    pub config_hash: String,
    pub cells: Vec<CellEstimate>,
    pub simulations: usize,
    /// Total calls over every simulation.
    pub calls: RoleCalls,
    /// Dollars for the run; `null` when a model has no price (see `unpriced`).
    pub cost: Option<Range>,
    /// Non-`sim` models without a price (`provider/model`).
    pub unpriced: Vec<String>,
    /// API key variables the run needs that are not set in this environment.
    pub missing_keys: Vec<String>,
    /// Prompts that do not fit their model's context window, one sentence each.
    pub warnings: Vec<String>,
    /// The knowledge bases embedded before the first simulation (domains whose retrieval
    /// embeds); not in `cost`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub embeddings: Vec<crate::embeddings::DocumentsEstimate>,
}

/// Calls and cost of one simulation of one task in one cell.
struct TaskEstimate {
    calls: RoleCalls,
    /// `None` when a model lacks a price.
    cost: Option<Range>,
}

/// The dry-run estimate of a built plan.
pub fn estimate(plan: &RunPlan) -> Estimate {
    let mut unpriced = BTreeSet::new();
    let mut cells = Vec::new();
    let (mut calls, mut cost, mut sims) = (RoleCalls::default(), Some(Range::default()), 0);
    for cell in &plan.cells {
        let e = cell_estimate(plan, cell, &mut unpriced);
        sims += e.simulations;
        calls.add(&e.calls_per_simulation.scale(e.simulations as f64));
        cost = match (cost, e.cost) {
            (Some(mut a), Some(b)) => {
                a.add(b);
                Some(a)
            }
            _ => None,
        };
        cells.push(e);
    }
    let warnings = cells.iter().flat_map(prompt_warnings).collect();
    Estimate {
        run: plan.run_id.clone(),
        config_hash: plan.config_hash.clone(),
        cells,
        simulations: sims,
        calls,
        cost,
        unpriced: unpriced.into_iter().collect(),
        missing_keys: missing_keys(plan),
        warnings,
        embeddings: crate::embeddings::estimate_documents(plan),
    }
}

/// Each role's prompt against its model's window: a prompt as large as the window leaves the
/// model no room to answer, so it does not fit.
fn prompt_estimates(plan: &RunPlan, cell: &Cell) -> Vec<PromptEstimate> {
    cell_prompts(plan, cell)
        .iter()
        .map(|p| {
            let tokens = p.tokens();
            let context = context_tokens(plan, p.model);
            PromptEstimate {
                role: p.role,
                model: format!("{}/{}", p.model.provider, p.model.model),
                tokens,
                context_tokens: context,
                fits: context.map(|c| tokens < u64::from(c)),
            }
        })
        .collect()
}

fn prompt_warnings(cell: &CellEstimate) -> Vec<String> {
    cell.prompts
        .iter()
        .filter(|p| p.fits == Some(false))
        .map(|p| {
            format!(
                "cell `{}`: the {} prompt ≈ {} tokens does not fit the context of `{}` ({} tokens); its calls will be rejected or cut",
                cell.id,
                p.role,
                p.tokens,
                p.model,
                p.context_tokens.unwrap_or_default()
            )
        })
        .collect()
}

fn cell_estimate(plan: &RunPlan, cell: &Cell, unpriced: &mut BTreeSet<String>) -> CellEstimate {
    let domain = &plan.domains[cell.domain];
    let agent = &plan.agents[cell.agent];
    let verifier_model: &ModelSection = verifier_section(plan, cell);
    let sim_judge = ModelSection::sim(Role::Judge);
    let judge = plan.cfg.models.judge.as_ref().unwrap_or(&sim_judge);
    let mut price = |m: &ModelSection| -> Option<Option<ModelPrice>> {
        if m.is_sim() {
            return Some(None);
        }
        match plan.cfg.llm.prices.get(&m.model) {
            Some(p) => Some(Some(*p)),
            None => {
                unpriced.insert(format!("{}/{}", m.provider, m.model));
                None
            }
        }
    };
    let prices = [
        price(&agent.section),
        price(&plan.cfg.models.user),
        price(verifier_model),
        price(judge),
    ];
    let schemas = schema_chars(&domain.data.tool_schemas.assistant);
    let agent_system = (cell.agent_system_prompt.len() + schemas) as f64 / CHARS_PER_TOKEN;
    let tasks = &domain.tasks;
    let mut calls = RoleCalls::default();
    let mut cost = Some(Range::default());
    for (i, task) in tasks.iter().enumerate() {
        let user_system = domain.user_system_prompts[i].len() as f64 / CHARS_PER_TOKEN;
        let t = task_estimate(
            task,
            &domain.mutating,
            cell,
            agent_system,
            user_system,
            &prices,
        );
        calls.add(&t.calls);
        cost = match (cost, t.cost) {
            (Some(mut a), Some(b)) => {
                a.add(b);
                Some(a)
            }
            _ => None,
        };
    }
    let n = tasks.len().max(1) as f64;
    CellEstimate {
        id: cell.id.clone(),
        hash: cell.hash.clone(),
        domain: domain.data.domain.to_string(),
        agent: agent.label.clone(),
        guard: cell.guard_label.clone(),
        verifier: cell.verifier.clone(),
        seed: cell.seed,
        tasks: tasks.len(),
        trials: cell.trials,
        simulations: plan.cell_simulations(cell),
        max_steps: cell.max_steps,
        calls_per_simulation: calls.scale(1.0 / n),
        // Summed over tasks per trial, times the trials.
        cost: cost.map(|c| c.scale(cell.trials as f64)),
        stamp: cell.stamp.clone(),
        prompts: prompt_estimates(plan, cell),
    }
}

/// Which model calls a guard makes per simulation, from the agent's and the user's.
fn verifier_calls(guard: GuardName, mutations: f64, agent: Range, user: Range) -> Range {
    match guard {
        GuardName::PolicyGuard { .. } | GuardName::Hybrid => Range {
            low: mutations,
            high: agent.high,
        },
        GuardName::PolicyGuide { .. } => Range {
            low: user.low,
            high: user.high + agent.high,
        },
        _ => Range::default(),
    }
}

fn task_estimate(
    task: &Task,
    mutating: &std::collections::HashSet<String>,
    cell: &Cell,
    agent_system: f64,
    user_system: f64,
    prices: &[Option<Option<ModelPrice>>; 4],
) -> TaskEstimate {
    let actions: Vec<_> = task
        .gold_actions()
        .iter()
        .filter(|a| a.requestor == Requestor::Assistant)
        .collect();
    let m = actions
        .iter()
        .filter(|a| mutating.contains(&a.name))
        .count() as f64;
    let a = actions.len() as f64;
    let cap = (cell.max_steps as f64 / 2.0).ceil();
    let user = Range {
        low: (2.0 + m).min(cap),
        high: cap,
    };
    let agent = Range {
        low: (a + 2.0 + m).min(cap),
        high: cap,
    };
    let judge = if crate::evaluate::nl_assertions_to_judge(task).is_some() {
        1.0
    } else {
        0.0
    };
    let calls = RoleCalls {
        agent,
        user,
        verifier: verifier_calls(cell.guard_name, m, agent, user),
        judge: Range {
            low: judge,
            high: judge,
        },
    };
    // Tokens of `n` calls over a growing conversation: a system prompt each, plus two
    // messages per earlier call.
    let conversation = |n: f64| TOKENS_PER_MESSAGE * n * (n - 1.0).max(0.0);
    let role_cost = |price: &Option<Option<ModelPrice>>, system: f64, n: Range, grows: bool| {
        let p = match price {
            None => return None,
            Some(None) => return Some(Range::default()),
            Some(Some(p)) => *p,
        };
        let dollars = |input: f64, cached: f64, output: f64, cached_price: f64| {
            (input * p.input_per_mtok + cached * cached_price + output * p.output_per_mtok) / 1e6
        };
        let convo = |n: f64| if grows { conversation(n) } else { 0.0 };
        let cached_price = p.cached_input_per_mtok.unwrap_or(p.input_per_mtok);
        let low_cached = system * (n.low - 1.0).max(0.0);
        let low = dollars(
            system * n.low.min(1.0) + convo(n.low),
            low_cached,
            OUTPUT_TOKENS_LOW * n.low,
            cached_price,
        );
        let high = dollars(
            system * n.high + convo(n.high),
            0.0,
            OUTPUT_TOKENS_HIGH * n.high,
            cached_price,
        );
        Some(Range { low, high })
    };
    // A verifier reads the agent's policy prompt and the conversation up to the call (on
    // average, half the agent's): billed like agent calls without the growth term, plus it.
    let verifier_system = |agent_calls: f64| agent_system + TOKENS_PER_MESSAGE * agent_calls;
    // A judge reads the whole conversation once.
    let judge_input = TOKENS_PER_MESSAGE * 2.0 * agent.high;
    let parts = [
        role_cost(&prices[0], agent_system, agent, true),
        role_cost(&prices[1], user_system, user, true),
        role_cost(
            &prices[2],
            verifier_system(agent.low),
            calls.verifier,
            false,
        )
        .and_then(|lo| {
            role_cost(
                &prices[2],
                verifier_system(agent.high),
                calls.verifier,
                false,
            )
            .map(|hi| Range {
                low: lo.low,
                high: hi.high,
            })
        }),
        role_cost(
            &prices[3],
            TOKENS_PER_MESSAGE * 2.0 * agent.low,
            calls.judge,
            false,
        )
        .and_then(|lo| {
            role_cost(&prices[3], judge_input, calls.judge, false).map(|hi| Range {
                low: lo.low,
                high: hi.high,
            })
        }),
    ];
    let mut cost = Some(Range::default());
    for p in parts {
        cost = match (cost, p) {
            (Some(mut c), Some(p)) => {
                c.add(p);
                Some(c)
            }
            _ => None,
        };
    }
    TaskEstimate { calls, cost }
}

/// The `api_key_env` variables of the plan's HTTP providers that are not set.
fn missing_keys(plan: &RunPlan) -> Vec<String> {
    let mut out = BTreeSet::new();
    for (_, _, m) in plan.cfg.model_sections() {
        if m.is_sim() {
            continue;
        }
        if let Ok(p) = plan.cfg.llm.provider(&m.provider)
            && let Some(var) = p.api_key_env
            && std::env::var(&var).is_err()
        {
            out.insert(var);
        }
    }
    out.into_iter().collect()
}
