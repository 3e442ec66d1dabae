//! Percentile bootstrap confidence intervals for Pass^k differences between two configurations,
//! resampling tasks with replacement (tasks are the unit of Pass^k, τ²-bench §8).
//!
//! Each replicate draws n task indices uniformly with replacement from a seeded SplitMix64
//! stream and computes mean(pass^k of B) − mean(pass^k of A) over the drawn tasks. The interval
//! is the (α/2, 1 − α/2) percentiles of the replicates, interpolated as NumPy's default
//! `numpy.percentile(..., method="linear")` (Hyndman–Fan type 7), which is also what
//! `scipy.stats.bootstrap(..., method="percentile")` reports up to its interpolation choice.

use serde::Serialize;
use tauguard_core::SplitMix64;

/// Percentile `q` in [0, 100] of sorted data, linear interpolation between closest ranks
/// (NumPy `method="linear"`).
pub(crate) fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q / 100.0 * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Bootstrap settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootstrapOptions {
    /// Replicates (default 10,000).
    pub resamples: usize,
    pub seed: u64,
    /// Confidence level (default 0.95).
    pub level: f64,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        BootstrapOptions {
            resamples: 10_000,
            seed: 0x7461_7567, // "taug" in ASCII; below 2^53, so exact in any JSON reader
            level: 0.95,
        }
    }
}

/// A difference of means with its percentile interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct DiffCi {
    /// mean(B) − mean(A) on the original tasks.
    pub diff: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Percentile-bootstrap intervals for several paired per-task statistics at once (one entry of
/// `a` and `b` per statistic, e.g. one per k; each inner slice has one value per task, in the
/// same task order). All statistics share the same resampled task indices.
pub(crate) fn paired_diff_cis(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    opts: &BootstrapOptions,
) -> Vec<DiffCi> {
    let n = a.first().map_or(0, Vec::len);
    if n == 0 || a.len() != b.len() {
        return Vec::new();
    }
    let diffs: Vec<Vec<f64>> = a
        .iter()
        .zip(b)
        .map(|(xa, xb)| xa.iter().zip(xb).map(|(x, y)| y - x).collect())
        .collect();
    let mut reps: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.resamples); diffs.len()];
    let mut rng = SplitMix64::new(opts.seed);
    let mut idx = vec![0usize; n];
    for _ in 0..opts.resamples {
        for i in idx.iter_mut() {
            *i = rng.below(n);
        }
        for (d, r) in diffs.iter().zip(reps.iter_mut()) {
            let s: f64 = idx.iter().map(|&i| d[i]).sum();
            r.push(s / n as f64);
        }
    }
    let alpha = (1.0 - opts.level) / 2.0 * 100.0;
    diffs
        .iter()
        .zip(reps)
        .map(|(d, mut r)| {
            r.sort_unstable_by(f64::total_cmp);
            DiffCi {
                diff: d.iter().sum::<f64>() / n as f64,
                ci_low: percentile(&r, alpha).unwrap_or(f64::NAN),
                ci_high: percentile(&r, 100.0 - alpha).unwrap_or(f64::NAN),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_matches_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4], [0, 2.5, 50, 97.5, 100])
        //   = [1.0, 1.075, 2.5, 3.925, 4.0]
        let xs = [1.0, 2.0, 3.0, 4.0];
        let want = [
            (0.0, 1.0),
            (2.5, 1.075),
            (50.0, 2.5),
            (97.5, 3.925),
            (100.0, 4.0),
        ];
        for (q, w) in want {
            assert!((percentile(&xs, q).unwrap() - w).abs() < 1e-12, "q={q}");
        }
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn constant_difference_has_a_degenerate_interval() {
        let a = vec![vec![0.0, 0.5, 1.0, 0.25]];
        let b = vec![vec![0.25, 0.75, 1.25, 0.5]];
        let ci = paired_diff_cis(&a, &b, &BootstrapOptions::default());
        assert_eq!(ci.len(), 1);
        assert!((ci[0].diff - 0.25).abs() < 1e-15);
        assert!((ci[0].ci_low - 0.25).abs() < 1e-12 && (ci[0].ci_high - 0.25).abs() < 1e-12);
    }

    #[test]
    fn seeded_and_reproducible() {
        let a = vec![(0..50).map(|i| f64::from(i % 2)).collect::<Vec<_>>()];
        let b = vec![
            (0..50)
                .map(|i| f64::from(u8::from(i % 3 != 0)))
                .collect::<Vec<_>>(),
        ];
        let opts = BootstrapOptions {
            resamples: 2000,
            ..BootstrapOptions::default()
        };
        let x = paired_diff_cis(&a, &b, &opts);
        let y = paired_diff_cis(&a, &b, &opts);
        assert_eq!(x, y);
        assert!(x[0].ci_low < x[0].diff && x[0].diff < x[0].ci_high);
    }
}
