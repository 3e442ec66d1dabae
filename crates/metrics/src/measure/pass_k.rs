//! Pass^k (τ²-bench §8, after Yao et al. 2024, arXiv 2406.12045; PolicyGuard Table 2 and
//! PolicyGuide Tables 1 and 10): per task with n scored trials of which c succeeded,
//! pass^k = C(c, k) / C(n, k); the reported value is the unweighted mean over tasks.
//! Also the P4/P1 consistency ratio and the per-trial Pass^1 mean and standard deviation.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::collections::BTreeMap;

/// Trials and successes of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskTally {
    /// Scored simulations.
    pub n: u32,
    /// Successful simulations.
    pub c: u32,
}

/// C(n, k) exactly when it fits in a u128.
fn binomial(n: u32, k: u32) -> Option<u128> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    let mut acc: u128 = 1;
    for i in 0..k {
        // acc * (n - i) / (i + 1) stays an integer at every step.
        acc = acc.checked_mul(u128::from(n - i))? / u128::from(i + 1);
    }
    Some(acc)
}

/// pass^k of one task: C(c, k) / C(n, k) (τ²-bench `pass_hat_k`); `None` when n < k, where
/// upstream raises. Computed from exact binomials as Python's `math.comb(c, k) /
/// math.comb(n, k)`, falling back to a product of ratios for huge n.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if n < k {
        return None;
    }
    let c = c.min(n);
    match (binomial(c, k), binomial(n, k)) {
        (Some(num), Some(den)) => Some(num as f64 / den as f64),
        _ => Some(
            (0..k)
                .map(|i| f64::from(c.saturating_sub(i)) / f64::from(n - i))
                .product(),
        ),
    }
}

/// Trial counts up to which a task's pass^k is taken from exact binomials (as upstream's
/// `math.comb` division); above, every C(n, k) would cost O(k) and overflow anyway.
const EXACT_MAX_N: u32 = 64;

/// Mean pass^k over tasks for k = 1..=max_k (index 0 holds k = 1); every task must have
/// n ≥ max_k. O(1) per task and k: above [`EXACT_MAX_N`] trials a task's curve is built
/// incrementally, pass^k = pass^(k-1) · (c − k + 1) / (n − k + 1).
pub fn pass_k_curve(tasks: &[TaskTally], max_k: u32) -> Vec<f64> {
    if tasks.is_empty() {
        return Vec::new();
    }
    let mut sums = vec![0.0; max_k as usize];
    for t in tasks {
        let c = t.c.min(t.n);
        if t.n <= EXACT_MAX_N {
            for (i, sum) in sums.iter_mut().enumerate() {
                *sum += pass_hat_k(t.n, c, i as u32 + 1).unwrap_or(0.0);
            }
        } else {
            let mut r = 1.0;
            for (i, sum) in sums.iter_mut().enumerate() {
                let i = i as u32;
                r *= f64::from(c.saturating_sub(i)) / f64::from(t.n - i);
                *sum += r;
            }
        }
    }
    sums.iter().map(|s| s / tasks.len() as f64).collect()
}

/// P4/P1, the consistency ratio of PolicyGuide Table 10: `None` without four trials or when
/// Pass^1 is 0.
pub(crate) fn p4_p1(curve: &[f64]) -> Option<f64> {
    match (curve.first(), curve.get(3)) {
        (Some(&p1), Some(&p4)) if p1 > 0.0 => Some(p4 / p1),
        _ => None,
    }
}

/// Pass^1 of each trial index and their mean and standard deviation (PolicyGuard: "per-trial
/// Pass^1 std").
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct TrialPass1 {
    /// Trial index (0-based, as in records) → mean success over tasks scored on that trial.
    pub values: BTreeMap<u32, f64>,
    pub mean: Option<f64>,
    /// Sample standard deviation (ddof = 1, pandas `Series.std()` convention); `None` with
    /// fewer than two trials.
    pub std: Option<f64>,
}

/// Pass^1 per trial index from (trial, tally of one task on that trial) cells: for trial t,
/// the mean over tasks of that task's success rate on trial t (a task with several scored
/// records on one trial contributes their mean).
pub(crate) fn trial_pass1(cells: impl IntoIterator<Item = (u32, TaskTally)>) -> TrialPass1 {
    let mut sums: BTreeMap<u32, (f64, u32)> = BTreeMap::new();
    for (trial, t) in cells {
        if t.n == 0 {
            continue;
        }
        let e = sums.entry(trial).or_default();
        e.0 += f64::from(t.c) / f64::from(t.n);
        e.1 += 1;
    }
    let values: BTreeMap<u32, f64> = sums
        .into_iter()
        .map(|(trial, (s, n))| (trial, s / f64::from(n)))
        .collect();
    let (mean, std) = mean_std(values.values().copied());
    TrialPass1 { values, mean, std }
}

/// Mean and sample standard deviation (ddof = 1).
pub(crate) fn mean_std(xs: impl Iterator<Item = f64> + Clone) -> (Option<f64>, Option<f64>) {
    let n = xs.clone().count();
    if n == 0 {
        return (None, None);
    }
    let mean = xs.clone().sum::<f64>() / n as f64;
    let std = (n > 1).then(|| {
        let ss: f64 = xs.map(|x| (x - mean) * (x - mean)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    (Some(mean), std)
}

/// Pass^k values keyed by k, serialized as a JSON object `{"1": p1, "2": p2, ...}` in
/// ascending k.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PassK(pub Vec<f64>);

impl PassK {
    /// pass^k for k ≥ 1.
    pub fn get(&self, k: u32) -> Option<f64> {
        (k as usize)
            .checked_sub(1)
            .and_then(|i| self.0.get(i).copied())
    }

    /// Largest k present.
    pub fn max_k(&self) -> u32 {
        self.0.len() as u32
    }
}

impl Serialize for PassK {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (i, v) in self.0.iter().enumerate() {
            m.serialize_entry(&(i + 1).to_string(), v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_trials_use_the_incremental_curve_and_agree_with_the_product() {
        // 20,000 trials per task: every k is O(1); the values equal the product of ratios.
        let tasks = [
            TaskTally {
                n: 20_000,
                c: 19_990,
            },
            TaskTally {
                n: 20_000,
                c: 20_000,
            },
            TaskTally { n: 20_000, c: 3 },
        ];
        let curve = pass_k_curve(&tasks, 20_000);
        assert_eq!(curve.len(), 20_000);
        for k in [1u32, 2, 5, 11, 100] {
            let direct: f64 = tasks
                .iter()
                .map(|t| {
                    (0..k)
                        .map(|i| f64::from(t.c.saturating_sub(i)) / f64::from(t.n - i))
                        .product::<f64>()
                })
                .sum::<f64>()
                / 3.0;
            let got = curve[k as usize - 1];
            assert!((got - direct).abs() < 1e-12, "k={k}: {got} vs {direct}");
        }
        // The all-pass task keeps pass^k = 1 for every k; the others fall to 0.
        assert!((curve[19_999] - 1.0 / 3.0).abs() < 1e-12);
        assert!(curve.windows(2).all(|w| w[1] <= w[0] + 1e-15));
        // Just above the exact range, the incremental curve matches exact binomials.
        let mid = [TaskTally { n: 65, c: 60 }];
        let exact: Vec<f64> = (1..=65).map(|k| pass_hat_k(65, 60, k).unwrap()).collect();
        for (a, b) in pass_k_curve(&mid, 65).iter().zip(&exact) {
            assert!((a - b).abs() < 1e-12 * b.max(1e-300) + 1e-300, "{a} vs {b}");
        }
        // Small n keeps the exact-binomial values upstream computes.
        let small = [TaskTally { n: 4, c: 3 }];
        assert_eq!(pass_k_curve(&small, 4), vec![0.75, 0.5, 0.25, 0.0]);
    }

    #[test]
    fn pass_hat_k_hand_cases() {
        // n = 4: C(3,2)/C(4,2) = 3/6; C(3,3)/C(4,3) = 1/4; C(3,4) = 0.
        assert_eq!(pass_hat_k(4, 3, 1), Some(0.75));
        assert_eq!(pass_hat_k(4, 3, 2), Some(0.5));
        assert_eq!(pass_hat_k(4, 3, 3), Some(0.25));
        assert_eq!(pass_hat_k(4, 3, 4), Some(0.0));
        assert_eq!(pass_hat_k(4, 4, 4), Some(1.0));
        assert_eq!(pass_hat_k(3, 3, 4), None);
        // C(5,3)/C(8,3) = 10/56.
        assert!((pass_hat_k(8, 5, 3).unwrap() - 10.0 / 56.0).abs() < 1e-15);
        // Huge n falls back to the product form.
        let big = pass_hat_k(400, 200, 100).unwrap();
        assert!(big > 0.0 && big < 1e-30);
    }

    #[test]
    fn curve_averages_tasks() {
        let tasks = [TaskTally { n: 4, c: 4 }, TaskTally { n: 4, c: 2 }];
        let curve = pass_k_curve(&tasks, 4);
        // k=1: (1 + .5)/2; k=2: (1 + 1/6)/2; k=3: (1+0)/2; k=4: .5
        let want = [0.75, (1.0 + 1.0 / 6.0) / 2.0, 0.5, 0.5];
        for (g, w) in curve.iter().zip(want) {
            assert!((g - w).abs() < 1e-15, "{g} vs {w}");
        }
        assert_eq!(p4_p1(&curve), Some(0.5 / 0.75));
    }

    #[test]
    fn mean_std_ddof1() {
        let (m, s) = mean_std([0.5, 0.75, 1.0].into_iter());
        assert_eq!(m, Some(0.75));
        assert!((s.unwrap() - 0.25).abs() < 1e-15);
        assert_eq!(mean_std([1.0].into_iter()), (Some(1.0), None));
    }

    #[test]
    fn pass_k_serializes_in_numeric_order() {
        let p = PassK((1..=11).map(f64::from).collect());
        let s = serde_json::to_string(&p).unwrap();
        assert!(s.starts_with(r#"{"1":1.0,"2":2.0"#), "{s}");
        assert!(s.ends_with(r#""10":10.0,"11":11.0}"#), "{s}");
    }
}
