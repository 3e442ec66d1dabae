//! A tiny deterministic generator (SplitMix64) keyed by (task, trial, seed): sim decisions must
//! be reproducible across machines and releases, so no external RNG whose stream may change.

/// SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct SimRng(u64);

impl SimRng {
    /// Keyed by a label (task id, role) and numbers (trial, seed) via FNV-1a.
    pub fn keyed(label: &str, trial: u32, seed: u64) -> SimRng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in label
            .bytes()
            .chain(trial.to_le_bytes())
            .chain(seed.to_le_bytes())
        {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        SimRng(h)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Uniform index below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_keyed() {
        let a: Vec<u64> = (0..3)
            .map({
                let mut r = SimRng::keyed("t1", 0, 300);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..3)
            .map({
                let mut r = SimRng::keyed("t1", 0, 300);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..3)
            .map({
                let mut r = SimRng::keyed("t1", 1, 300);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut r = SimRng::keyed("x", 0, 0);
        let hits = (0..10_000).filter(|_| r.chance(0.3)).count();
        assert!((2_700..3_300).contains(&hits), "{hits}");
    }
}
