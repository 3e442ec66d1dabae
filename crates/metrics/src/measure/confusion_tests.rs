//! Tests of the confusion views (`confusion.rs`): hand-computed views, fault labels over the
//! oracle, the oracles, and a baseline's views.

use super::confusion::*;
use tauguard_core::Requestor;
use tauguard_core::record::{Slice, Verdict};
use tauguard_testkit::synthetic::{attempt, record};

#[test]
fn hand_computed_views() {
    // PV task (every attempt violating): one blocked, one passed and executed; Mut task
    // (every attempt clean): one pass, one wrongly blocked, one blocked but executed by a
    // gate. Verdict view: all five decisions. Runtime view: all five attempts by whether
    // they executed — a (violating, stopped: TP), b (violating, executed: FN), c (clean,
    // executed: TN), d (clean, stopped: FP), e (clean, executed despite its BLOCK: TN).
    let mut pv = record("t1", Slice::Pv, 0, 0.0);
    pv.call_attempts = vec![
        attempt("a", Some(Verdict::Block), false),
        attempt("b", Some(Verdict::Pass), true),
    ];
    let mut m = record("t2", Slice::Mut, 0, 1.0);
    m.call_attempts = vec![
        attempt("c", Some(Verdict::Pass), true),
        attempt("d", Some(Verdict::Block), false),
        attempt("e", Some(Verdict::Block), true),
    ];
    let views = confusion(&[&pv, &m], &LabelOptions::default());
    assert_eq!(
        views.verdict,
        Confusion {
            tp: 1,
            fn_: 1,
            fp: 2,
            tn: 1
        }
    );
    assert_eq!(
        views.runtime,
        Confusion {
            tp: 1,
            fn_: 1,
            fp: 1,
            tn: 2
        }
    );
    assert_eq!(views.verdict.pv_recall(), Some(0.5));
    assert_eq!(views.verdict.block_rate(), Some(3.0 / 5.0));
    assert_eq!(views.runtime.attempts(), 5);
    // Violating attempts that did not execute / all violating attempts.
    assert_eq!(views.runtime.pv_recall(), Some(0.5));
    assert_eq!(views.runtime.block_rate(), Some(2.0 / 5.0));
    assert_eq!(views.labelled_by_oracle, 5);
}

#[test]
fn fault_labels_override_the_oracle() {
    let mut m = record("t2", Slice::Mut, 0, 0.0);
    let mut faulty = attempt("x", Some(Verdict::Block), false);
    faulty.faults = vec!["skip_confirmation".into()];
    let clean = attempt("y", Some(Verdict::Block), false);
    m.call_attempts = vec![faulty, clean];
    let views = confusion(&[&m], &LabelOptions::default());
    assert_eq!((views.verdict.tp, views.verdict.fp), (1, 1));
    assert_eq!(views.labelled_by_faults, 2);
    // Without fault labels the slice oracle calls both clean (Mut task).
    let labels = LabelOptions {
        use_fault_labels: false,
        ..LabelOptions::default()
    };
    let views = confusion(&[&m], &labels);
    assert_eq!((views.verdict.tp, views.verdict.fp), (0, 2));
}

#[test]
fn prerequisite_and_both_oracles() {
    let mut pv = record("t1", Slice::Pv, 0, 0.0);
    pv.call_attempts = vec![attempt("a", Some(Verdict::Pass), true)];
    let mut m = record("t2", Slice::Mut, 0, 0.0);
    let mut a = attempt("b", Some(Verdict::Block), false);
    a.missing_prerequisites = Some(vec!["user_confirmation".into()]);
    let mut ok = attempt("c", Some(Verdict::Pass), true);
    ok.missing_prerequisites = Some(vec![]);
    m.call_attempts = vec![a, ok];
    let run = |oracle| {
        confusion(
            &[&pv, &m],
            &LabelOptions {
                oracle,
                use_fault_labels: true,
            },
        )
        .verdict
    };
    assert_eq!(
        run(Oracle::Prerequisite),
        Confusion {
            tp: 1,
            fn_: 0,
            fp: 0,
            tn: 2
        }
    );
    assert_eq!(
        run(Oracle::Both),
        Confusion {
            tp: 1,
            fn_: 1,
            fp: 0,
            tn: 1
        }
    );
}

#[test]
fn baseline_has_only_a_runtime_view_and_user_calls_are_ignored() {
    let mut pv = record("t1", Slice::Pv, 0, 0.0);
    let mut user_call = attempt("u", None, true);
    user_call.requestor = Requestor::User;
    pv.call_attempts = vec![attempt("a", None, true), user_call];
    let views = confusion(&[&pv], &LabelOptions::default());
    assert_eq!(views.verdict.attempts(), 0);
    assert_eq!(views.verdict.pv_recall(), None);
    assert_eq!(views.runtime.fn_, 1);
    assert_eq!(views.runtime.attempts(), 1);
    assert_eq!(views.runtime.pv_recall(), Some(0.0));
}
