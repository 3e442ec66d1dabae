//! SplitMix64 (Steele, Lea and Flood 2014), the seeded stream metrics' bootstrap resamples with,
//! the synthetic test populations are drawn from and the offline `sim` models decide by (keyed
//! in `tauguard-sim`'s `SimRng`): small, fast and the same on every platform, so a seed names
//! one stream for good. It lives here, below all three, so the test data (in
//! `tauguard-testkit`) draws from the stream the metrics use without importing metrics.

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform index in 0..n (multiply-shift; bias < n / 2^64).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_stream() {
        // Reference: SplitMix64 with seed 1234567 (Vigna's splitmix64.c).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert!((0..1000).all(|_| r.below(7) < 7));
    }
}
