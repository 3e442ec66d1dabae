//! `tauguard run --dry-run CONFIG`: the whole config and plan validated — data, tasks, guards,
//! prompts, models built but never called — and what the run would do printed: its cells,
//! simulations, model calls per role, a cost range and each role's largest prompt beside its
//! model's context window, with a `warning:` line for a prompt that does not fit (see
//! `tauguard_orchestrator::estimate` for how they are estimated). Nothing is written.

use crate::exit::CliError;
use crate::output::Output;
use tauguard_core::count;
use tauguard_orchestrator::{Estimate, Range, RoleCalls};

/// Prints `e` as text or, with `json`, as one JSON object.
pub(crate) fn print(e: &Estimate, json: bool) -> Result<(), CliError> {
    let mut out = Output::stdout();
    if json {
        out.line(serde_json::to_string_pretty(e).expect("estimates serialise"))?;
        return out.finish();
    }
    out.line(format_args!(
        "dry run of `{}` (config hash {}): {}, {}; nothing was run or written",
        e.run,
        e.config_hash,
        count(e.cells.len(), "cell"),
        count(e.simulations, "simulation")
    ))?;
    let rows: Vec<[String; 9]> = e
        .cells
        .iter()
        .map(|c| {
            [
                c.id.clone(),
                c.domain.clone(),
                c.agent.clone(),
                c.guard.clone(),
                c.verifier.clone().unwrap_or_else(|| "-".into()),
                c.seed.to_string(),
                c.tasks.to_string(),
                c.trials.to_string(),
                c.simulations.to_string(),
            ]
        })
        .collect();
    let head = [
        "cell", "domain", "agent", "guard", "verifier", "seed", "tasks", "trials", "sims",
    ]
    .map(String::from);
    let widths: Vec<usize> = (0..9)
        .map(|i| {
            rows.iter()
                .chain([&head])
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in [&head].into_iter().chain(&rows) {
        let cols: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.line(cols.join("  ").trim_end())?;
    }
    print_stamps(&mut out, e)?;
    out.line("model calls (estimated from the config: typical – upper bound):")?;
    let per_sim = |r: Range| {
        let n = e.simulations.max(1) as f64;
        format!("{:.1} – {:.1} per simulation", r.low / n, r.high / n)
    };
    let RoleCalls {
        agent,
        user,
        verifier,
        judge,
    } = e.calls;
    for (role, r) in [
        ("agent", agent),
        ("user", user),
        ("verifier/guard", verifier),
        ("judge", judge),
    ] {
        out.line(format_args!(
            "  {role:<15} {:.0} – {:.0} ({})",
            r.low,
            r.high,
            per_sim(r)
        ))?;
    }
    match e.cost {
        Some(c) => out.line(format_args!(
            "cost: ${:.2} – ${:.2} (sim models cost 0; prices from the config and the model catalog: check them before spending money)",
            c.low, c.high
        ))?,
        None => out.line(format_args!(
            "cost: unknown: no price for {} (add it under [llm.prices] or to configs/models.toml)",
            e.unpriced.join(", ")
        ))?,
    }
    for d in &e.embeddings {
        out.line(format_args!(
            "embeddings: {} documents of {} with `{}` before the first simulation, ~{} input tokens, {} (a cached rerun sends nothing), then one request per distinct KB_search query",
            d.documents,
            d.domain,
            d.model,
            d.tokens,
            d.cost
                .map_or_else(|| "price unknown".to_string(), |c| format!("≤ ${c:.4}"))
        ))?;
    }
    print_prompts(&mut out, e)?;
    if !e.missing_keys.is_empty() {
        out.line(format_args!(
            "API key variables not set here (needed to run): {}",
            e.missing_keys.join(", ")
        ))?;
    }
    for w in &e.warnings {
        out.line(format_args!("warning: {w}"))?;
    }
    out.finish()
}

/// One line per cell whose roles a model plays: each role's largest prompt and its model's
/// context window.
fn print_prompts(out: &mut Output, e: &Estimate) -> Result<(), CliError> {
    let cells: Vec<_> = e.cells.iter().filter(|c| !c.prompts.is_empty()).collect();
    if cells.is_empty() {
        return Ok(());
    }
    out.line(format_args!(
        "largest prompts (≈ {} characters per token; the conversation comes on top):",
        tauguard_orchestrator::CHARS_PER_TOKEN
    ))?;
    for c in cells {
        let roles: Vec<String> = c
            .prompts
            .iter()
            .map(|p| {
                let context = p
                    .context_tokens
                    .map_or_else(|| "context unknown".to_string(), |n| format!("context {n}"));
                format!("{} prompt ≈ {} tokens ({context})", p.role, p.tokens)
            })
            .collect();
        out.line(format_args!("  {}: {}", c.id, roles.join(", ")))?;
    }
    Ok(())
}

/// The comparability stamp: once when every cell has the same, else per cell.
fn print_stamps(out: &mut Output, e: &Estimate) -> Result<(), CliError> {
    let mut distinct: Vec<(&tauguard_orchestrator::Stamp, Vec<&str>)> = Vec::new();
    for c in &e.cells {
        match distinct.iter_mut().find(|(s, _)| **s == c.stamp) {
            Some((_, ids)) => ids.push(&c.id),
            None => distinct.push((&c.stamp, vec![&c.id])),
        }
    }
    for (stamp, ids) in &distinct {
        let whom = if distinct.len() == 1 {
            "every cell".to_string()
        } else {
            ids.join(", ")
        };
        out.line(format_args!("stamp ({whom}): {}", stamp.summary()))?;
        let width = stamp.items.iter().map(|i| i.name.len()).max().unwrap_or(0);
        for i in &stamp.items {
            let mark = if i.holds { "upstream" } else { "DEVIATES" };
            out.line(format_args!("  {mark}  {:<width$}  {}", i.name, i.detail))?;
        }
    }
    Ok(())
}
