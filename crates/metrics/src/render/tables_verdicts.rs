//! PolicyGuard Table 7 (per-call verdict confusion on mutating calls, verdict and runtime
//! views) with the fail-mode verdicts among each view's calls. A Block% made of fail-mode verdicts measures the fail mode, not the
//! verifier, so the count and share sit in the same row (see `fail_mode.rs` for what is
//! counted, and for the fail-mode columns of the flat CSV; the rest of the tables are in
//! `tables.rs`).

use crate::measure::fail_mode::FailMode;
use crate::render::table::{Cell, Table};
use crate::render::tables::{headers, key_cells};
use crate::report::Report;

/// PolicyGuard Table 7.
pub fn policyguard_table7(r: &Report) -> Table {
    let mut t = Table::new("policyguard_table7", "", &[]);
    t.title = "PolicyGuard Table 7: per-call verdict confusion on mutating calls".into();
    t.headers = headers(&[
        "View",
        "Attempts",
        "TP",
        "FN",
        "FP",
        "TN",
        "PV rec",
        "Block%",
        "Fail-mode",
        "Fail-mode%",
    ]);
    for g in &r.groups {
        let counts = g.measures.get::<FailMode>().flatten();
        let f = counts.as_ref();
        for (view, c, fail, share) in [
            (
                "verdict",
                &g.confusion.verdict,
                f.map(|f| f.fail_mode),
                f.and_then(|f| f.share()),
            ),
            (
                "runtime",
                &g.confusion.runtime,
                f.map(|f| f.executed_fail_mode),
                f.and_then(|f| {
                    crate::measure::confusion::ratio(
                        f.executed_fail_mode,
                        g.confusion.runtime.attempts(),
                    )
                }),
            ),
        ] {
            let mut row = key_cells(g);
            row.extend([
                Cell::Text(view.into()),
                Cell::Int(c.attempts()),
                Cell::Int(c.tp),
                Cell::Int(c.fn_),
                Cell::Int(c.fp),
                Cell::Int(c.tn),
                Cell::opt_pct(c.pv_recall()),
                Cell::opt_pct(c.block_rate()),
                Cell::Int(fail.unwrap_or(0)),
                Cell::opt_pct(share),
            ]);
            t.rows.push(row);
        }
    }
    t.notes.push(format!(
        "Positive = policy-violating (injected-fault labels when present, else the `{}` oracle); \
         PV rec = TP/(TP+FN); Block% = blocked/attempts. Verdict view: every guard decision; \
         runtime view: every attempt by what executed (a block there = a call that did not \
         execute, so PV rec = violating attempts stopped / violating attempts). \
         Fail-mode = verdicts the guard's fail mode gave because the model gave none (an \
         unparseable or cut reply, an HTTP error, a time-out, a context overflow; on the \
         runtime row, calls a fail-open verdict let through); Fail-mode% = fail-mode / the \
         view's attempts (— without guard decisions).",
        serde_json::to_value(r.options.labels.oracle)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    ));
    t
}
