//! Property tests: Pass^k is non-increasing in k; McNemar is symmetric under swapping A and B
//! (b and c swap, every p-value and χ² stay); p-values are probabilities; slices partition tasks.

use proptest::prelude::*;
use tauguard_core::record::{SimulationRecord, Slice};
use tauguard_metrics::{CompareOptions, ReportOptions, compare, mcnemar, report};
use tauguard_metrics::{TaskTally, pass_hat_k, pass_k_curve};
use tauguard_testkit::synthetic::record;

fn tallies() -> impl Strategy<Value = Vec<TaskTally>> {
    prop::collection::vec(
        (1u32..12)
            .prop_flat_map(|n| (Just(n), 0..=n))
            .prop_map(|(n, c)| TaskTally { n, c }),
        1..40,
    )
}

/// outcomes[task][trial] with a slice per task.
fn outcome_grid() -> impl Strategy<Value = Vec<(bool, Vec<bool>)>> {
    (1usize..6).prop_flat_map(|trials| {
        prop::collection::vec(
            (any::<bool>(), prop::collection::vec(any::<bool>(), trials)),
            1..25,
        )
    })
}

fn records(grid: &[(bool, Vec<bool>)], guard: &str) -> Vec<SimulationRecord> {
    let mut out = Vec::new();
    for (t, (pv, trials)) in grid.iter().enumerate() {
        for (i, &ok) in trials.iter().enumerate() {
            let slice = if *pv { Slice::Pv } else { Slice::Mut };
            let mut r = record(&t.to_string(), slice, i as u32, if ok { 1.0 } else { 0.0 });
            r.guard = guard.into();
            out.push(r);
        }
    }
    out
}

proptest! {
    #[test]
    fn pass_hat_k_is_non_increasing_in_k(n in 1u32..40, c_frac in 0.0f64..=1.0) {
        let c = (f64::from(n) * c_frac).round() as u32;
        let mut prev = 1.0;
        for k in 1..=n {
            let p = pass_hat_k(n, c, k).unwrap();
            prop_assert!((0.0..=1.0).contains(&p));
            prop_assert!(p <= prev + 1e-15, "k={} p={} prev={}", k, p, prev);
            prev = p;
        }
    }

    #[test]
    fn pass_k_curve_is_non_increasing(tasks in tallies()) {
        let max_k = tasks.iter().map(|t| t.n).min().unwrap();
        let curve = pass_k_curve(&tasks, max_k);
        prop_assert_eq!(curve.len(), max_k as usize);
        for w in curve.windows(2) {
            prop_assert!(w[1] <= w[0] + 1e-15, "{:?}", curve);
        }
        // Pass^1 is the mean per-task success rate.
        let p1: f64 = tasks.iter().map(|t| f64::from(t.c) / f64::from(t.n)).sum::<f64>()
            / tasks.len() as f64;
        prop_assert!((curve[0] - p1).abs() < 1e-12);
    }

    #[test]
    fn mcnemar_is_symmetric(b in 0u64..400, c in 0u64..400) {
        let x = mcnemar(b, c);
        let y = mcnemar(c, b);
        prop_assert_eq!((x.b, x.c), (y.c, y.b));
        prop_assert_eq!(x.exact_p, y.exact_p);
        prop_assert_eq!(x.mid_p, y.mid_p);
        prop_assert_eq!(x.chi2, y.chi2);
        prop_assert_eq!(x.chi2_p, y.chi2_p);
        for p in [x.exact_p, x.mid_p, x.chi2_p] {
            prop_assert!((0.0..=1.0).contains(&p), "{:?}", x);
        }
        prop_assert!(x.mid_p <= x.exact_p + 1e-15);
    }

    #[test]
    fn compare_is_symmetric_under_swapping_sides(ga in outcome_grid(), seed in any::<u64>()) {
        // B: the same grid with outcomes flipped pseudo-randomly.
        let mut s = seed;
        let gb: Vec<(bool, Vec<bool>)> = ga
            .iter()
            .map(|(pv, trials)| {
                (*pv, trials.iter().map(|&o| {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    if s >> 62 == 0 { !o } else { o }
                }).collect())
            })
            .collect();
        let (a, b) = (records(&ga, "baseline"), records(&gb, "guard"));
        let opts = CompareOptions {
            bootstrap: tauguard_metrics::BootstrapOptions { resamples: 200, ..Default::default() },
            ..CompareOptions::default()
        };
        let ab = compare(&a, &b, &opts).unwrap();
        let ba = compare(&b, &a, &opts).unwrap();
        prop_assert_eq!(ab.n_pairs, ba.n_pairs);
        prop_assert_eq!((ab.test.b, ab.test.c), (ba.test.c, ba.test.b));
        prop_assert_eq!(ab.test.exact_p, ba.test.exact_p);
        prop_assert_eq!(ab.test.mid_p, ba.test.mid_p);
        prop_assert_eq!(ab.test.chi2, ba.test.chi2);
        prop_assert_eq!(ab.test.chi2_p, ba.test.chi2_p);
        for (x, y) in ab.pass_k_diff.iter().zip(&ba.pass_k_diff) {
            prop_assert!((x.diff + y.diff).abs() < 1e-12);
        }
    }

    #[test]
    fn report_slices_partition_tasks_and_pass_k_is_monotone(grid in outcome_grid()) {
        let recs = records(&grid, "baseline");
        let rep = report(&recs, &ReportOptions::default());
        let g = &rep.groups[0];
        prop_assert_eq!(g.pv.n_tasks + g.mut_.n_tasks, g.overall.n_tasks);
        prop_assert_eq!(g.pv.n_simulations + g.mut_.n_simulations, g.overall.n_simulations);
        for s in [&g.overall, &g.pv, &g.mut_] {
            for w in s.pass_k.0.windows(2) {
                prop_assert!(w[1] <= w[0] + 1e-15);
            }
        }
        // Pass^1 averages per-task success rates.
        let p1: f64 = grid.iter()
            .map(|(_, t)| t.iter().filter(|&&o| o).count() as f64 / t.len() as f64)
            .sum::<f64>() / grid.len() as f64;
        prop_assert!((g.overall.pass_k.0[0] - p1).abs() < 1e-12);
    }
}
