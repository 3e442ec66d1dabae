//! McNemar's test on paired binary outcomes (PolicyGuard "McNemar significance"; PolicyGuide
//! Table 12, pooled stratified McNemar).
//!
//! With pairs (A outcome, B outcome), b = #(A pass, B fail) and c = #(A fail, B pass) are the
//! discordant counts; under H0 b ~ Binomial(b + c, 1/2). Conventions (checked against SciPy /
//! statsmodels in the tests):
//! - `exact_p`: two-sided exact binomial p = min(1, 2 · P(X ≤ min(b, c))), as
//!   `statsmodels.stats.contingency_tables.mcnemar(table, exact=True)`.
//! - `mid_p`: two-sided mid-p = 2 · P(X ≤ min(b, c)) − P(X = min(b, c)) (Fagerland, Lydersen
//!   and Laake 2013), capped at 1.
//! - `chi2`: (|b − c| − 1)² / (b + c) with continuity correction, not clamped at |b − c| < 1,
//!   and `chi2_p` its upper tail under χ²(1), as `mcnemar(table, exact=False,
//!   correction=True)`. When b + c = 0 statsmodels returns NaN; here chi2 = 0 and chi2_p = 1.
//!
//! The pooled stratified test sums discordant counts over strata (Σb, Σc) and applies the same
//! test to the sums.

use serde::Serialize;
use statrs::distribution::{Binomial, ChiSquared, ContinuousCDF, Discrete, DiscreteCDF};

/// McNemar statistics for discordant counts b and c.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct McNemar {
    pub b: u64,
    pub c: u64,
    pub exact_p: f64,
    pub mid_p: f64,
    pub chi2: f64,
    pub chi2_p: f64,
}

/// McNemar's test from the discordant counts.
pub fn mcnemar(b: u64, c: u64) -> McNemar {
    let n = b + c;
    let m = b.min(c);
    let (exact_p, mid_p) = if n == 0 {
        (1.0, 1.0)
    } else {
        let dist = Binomial::new(0.5, n).expect("p = 0.5 is a valid probability");
        let cdf = dist.cdf(m);
        let pmf = dist.pmf(m);
        ((2.0 * cdf).min(1.0), (2.0 * cdf - pmf).min(1.0))
    };
    let (chi2, chi2_p) = if n == 0 {
        (0.0, 1.0)
    } else {
        let d = b.abs_diff(c) as f64 - 1.0;
        let stat = d * d / n as f64;
        let chi = ChiSquared::new(1.0).expect("one degree of freedom is valid");
        (stat, chi.sf(stat))
    };
    McNemar {
        b,
        c,
        exact_p,
        mid_p,
        chi2,
        chi2_p,
    }
}

/// The pooled stratified test: McNemar on the discordant counts summed over strata.
pub(crate) fn pooled<'a>(strata: impl IntoIterator<Item = &'a McNemar>) -> McNemar {
    let (b, c) = strata
        .into_iter()
        .fold((0, 0), |(b, c), s| (b + s.b, c + s.c));
    mcnemar(b, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from SciPy 1.17 / statsmodels 0.15:
    /// `m = mcnemar([[0, b], [c, 0]], exact=True)`, mid-p as
    /// `2*binom.cdf(min(b,c), b+c, .5) - binom.pmf(min(b,c), b+c, .5)`,
    /// `mcnemar(..., exact=False, correction=True)` for chi2 and its p.
    const CASES: &[(u64, u64, f64, f64, f64, f64)] = &[
        // b, c, exact_p, mid_p, chi2, chi2_p
        (
            3,
            11,
            0.057373046875,
            0.035156249999999965,
            3.5,
            0.0613688291394023,
        ),
        (
            12,
            2,
            0.012939453125,
            0.007385253906249991,
            5.785714285714286,
            0.016156931261181322,
        ),
        (5, 5, 1.0, 1.0, 0.1, 0.7518296340458492),
        (0, 1, 1.0, 0.4999999999999999, 0.0, 1.0),
        (
            0,
            7,
            0.015625,
            0.007812500000000052,
            5.142857142857143,
            0.02334220201289086,
        ),
        (
            40,
            75,
            0.001412957498607674,
            0.0010650742732639248,
            10.052173913043479,
            0.001521682700191285,
        ),
        (
            2,
            60,
            8.474124180146703e-16,
            4.373671563806514e-16,
            52.403225806451616,
            4.5198090819801607e-13,
        ),
        (
            15,
            20,
            0.4995598332025112,
            0.4050322461407633,
            0.45714285714285713,
            0.49896229860376107,
        ),
        (
            300,
            240,
            0.011050481081929898,
            0.009827007761139428,
            6.446296296296296,
            0.01111838850785766,
        ),
    ];

    #[test]
    fn agrees_with_scipy_statsmodels() {
        for &(b, c, exact, mid, chi2, chi2_p) in CASES {
            let m = mcnemar(b, c);
            // Absolute and relative agreement to 1e-9.
            let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().min(1.0);
            assert!(
                close(m.exact_p, exact),
                "exact {b},{c}: {} vs {exact}",
                m.exact_p
            );
            assert!(close(m.mid_p, mid), "mid {b},{c}: {} vs {mid}", m.mid_p);
            assert!(close(m.chi2, chi2), "chi2 {b},{c}: {} vs {chi2}", m.chi2);
            assert!(
                close(m.chi2_p, chi2_p),
                "chi2_p {b},{c}: {} vs {chi2_p}",
                m.chi2_p
            );
        }
    }

    #[test]
    fn no_discordant_pairs() {
        let m = mcnemar(0, 0);
        assert_eq!((m.exact_p, m.mid_p, m.chi2, m.chi2_p), (1.0, 1.0, 0.0, 1.0));
    }

    #[test]
    fn pooled_sums_strata() {
        let strata = [mcnemar(3, 11), mcnemar(12, 2), mcnemar(0, 7)];
        let p = pooled(&strata);
        assert_eq!((p.b, p.c), (15, 20));
        assert_eq!(p, mcnemar(15, 20));
    }
}
