//! Fail-mode verdicts counted per cell from the records' `verdict_source` / `fail_reason`:
//! each guard event is matched to the call attempt it judged, both Table 7 views count their
//! own calls, infrastructure errors are left out, guide runs are counted for Table 14, and a
//! cell is flagged only above the threshold, with a warning naming it, its share and reasons.

use tauguard_core::record::{FailReason, SimulationRecord, Slice, Verdict, VerdictSource};
use tauguard_metrics::FailModeCounts;
use tauguard_metrics::{Format, ReportOptions, report};
use tauguard_metrics::{guide_usage_table, policyguard_table7};
use tauguard_testkit::synthetic::{attempt, guard_event, guide_event, infra, record, usage};

/// A `pg-raw` simulation with calls `a`, `b`, `c`; the events of `fail` (by call id) came from
/// the fail mode for `reason`. `b` passed and executed, the others were blocked.
fn judged(task: &str, fail: &[&str], reason: FailReason) -> SimulationRecord {
    let mut r = record(task, Slice::Mut, 0, 1.0);
    r.guard = "pg-raw".into();
    for (i, id) in ["a", "b", "c"].into_iter().enumerate() {
        let verdict = if id == "b" {
            Verdict::Pass
        } else {
            Verdict::Block
        };
        let executed = verdict == Verdict::Pass;
        r.call_attempts.push(attempt(id, Some(verdict), executed));
        let mut e = guard_event("pg-raw", id, "book_reservation", verdict, executed);
        e.attempt_idx = i as u32;
        if fail.contains(&id) {
            e.verdict_source = VerdictSource::FailMode;
            e.fail_reason = Some(reason);
        }
        r.guard_events.push(e);
    }
    r
}

fn options(threshold: f64) -> ReportOptions {
    ReportOptions {
        fail_mode_threshold: threshold,
        ..ReportOptions::default()
    }
}

fn row(t: &tauguard_metrics::Table, key: &[&str]) -> Vec<String> {
    t.rows
        .iter()
        .find(|r| key.iter().zip(r.iter()).all(|(k, c)| c.display() == *k))
        .unwrap_or_else(|| panic!("no row {key:?}"))
        .iter()
        .map(|c| c.display())
        .collect()
}

#[test]
fn guard_verdicts_of_the_fail_mode_are_counted_per_view_and_flagged_above_the_threshold() {
    let mut recs = vec![
        judged("t1", &["a", "b"], FailReason::ParseFailure),
        judged("t2", &["c"], FailReason::HttpError),
        judged("t3", &[], FailReason::ParseFailure),
        // Left out, as from Table 7.
        infra(judged("t4", &["a", "b", "c"], FailReason::Timeout)),
    ];
    // An event whose attempt index is stale still finds its attempt by call id.
    recs[2].guard_events[2].attempt_idx = 0;
    recs[2].guard_events[2].verdict_source = VerdictSource::FailMode;
    recs[2].guard_events[2].fail_reason = Some(FailReason::Truncated);
    // 4 of 9 decisions; of the 3 executed calls (every `b`), 1 passed by the fail mode.
    let rep = report(&recs, &options(0.4));
    let f = (rep.groups[0].measures)
        .value::<FailModeCounts>("fail_mode")
        .expect("guard decisions");
    assert_eq!((f.decisions, f.fail_mode), (9, 4));
    assert_eq!((f.executed, f.executed_fail_mode), (3, 1));
    assert_eq!(
        f.reasons_text(),
        "parse_failure 2, truncated 1, http_error 1"
    );
    assert!(f.flagged, "4/9 > 0.4");
    let t = policyguard_table7(&rep);
    assert_eq!(
        row(&t, &["airline", "agent", "pg-raw", "verdict"])[11..],
        ["4", "44.4%"]
    );
    // The runtime view counts every attempt (9): 1 executed call a fail-open verdict let
    // through.
    assert_eq!(
        row(&t, &["airline", "agent", "pg-raw", "runtime"])[11..],
        ["1", "11.1%"]
    );
    let md = rep.render(Format::Md);
    let warning = md
        .lines()
        .find(|l| l.contains("came from the fail mode"))
        .expect("a flagged cell warns above the tables");
    assert!(
        warning
            .starts_with("> warning: airline / agent / pg-raw: 44.4% of guard verdicts (4 of 9)"),
        "{warning}"
    );
    assert!(
        warning.contains("(reasons: parse_failure 2, truncated 1, http_error 1)"),
        "{warning}"
    );
    assert!(
        md.find(warning).unwrap() < md.find("### ").unwrap(),
        "above the tables"
    );
    let json = &rep.to_json()[0]["fail_mode"];
    assert_eq!(json["share"].as_f64().unwrap(), 4.0 / 9.0);
    assert_eq!(json["by_reason"]["parse_failure"], 2);
    assert_eq!(json["flagged"], true);
    let csv = rep.render(Format::Csv);
    let (head, line) = csv.split_once('\n').unwrap();
    let at = head
        .split(',')
        .position(|h| h == "fail_mode_verdicts")
        .unwrap();
    assert_eq!(line.split(',').nth(at), Some("4"));

    // At or under the threshold: counted, not flagged.
    let rep = report(&recs, &options(0.5));
    let f = rep.groups[0].measures.value::<FailModeCounts>("fail_mode");
    assert!(!f.unwrap().flagged);
    assert!(!rep.render(Format::Md).contains("came from the fail mode"));
}

#[test]
fn guide_runs_of_the_fail_mode_are_counted_in_table_14() {
    let mut recs = Vec::new();
    for task in ["t1", "t2"] {
        let mut r = record(task, Slice::Mut, 0, 0.0);
        r.guard = "policyguide".into();
        for i in 0..3 {
            let mut e = guide_event("policyguide", usage(0, 0, 0, 0, None));
            if task == "t1" || i == 0 {
                e.verdict_source = VerdictSource::FailMode;
                e.fail_reason = Some(FailReason::ContextOverflow);
                e.fail_http_status = Some(400);
            }
            r.guide_events.push(e);
        }
        recs.push(r);
    }
    let rep = report(&recs, &ReportOptions::default());
    let g = &rep.groups[0];
    assert!(
        g.measures
            .0
            .iter()
            .any(|(k, v)| *k == "fail_mode" && v.is_null()),
        "no guard decision"
    );
    let f = (g.measures)
        .value::<FailModeCounts>("guide_fail_mode")
        .expect("guide runs");
    assert_eq!((f.decisions, f.fail_mode), (6, 4));
    assert!(f.flagged);
    let t = guide_usage_table(&rep).unwrap();
    assert_eq!(
        row(&t, &["airline", "agent", "policyguide"])[10..],
        ["4", "66.7%"]
    );
    let md = rep.render(Format::Md);
    assert!(
        md.contains("policyguide: 66.7% of guide runs (4 of 6) came from the fail mode, not the model (reasons: context_overflow 4)"),
        "{md}"
    );
}
