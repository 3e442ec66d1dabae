//! Trial seeds exactly as τ²-bench draws them (§6.7): Python's `random.seed(run_seed)` then
//! `randint(0, 1_000_000)` once per trial. Python's `random` is MT19937 seeded with
//! `init_by_array([seed])`; `randint` uses 20-bit `getrandbits` with rejection.

const N: usize = 624;
const M: usize = 397;

/// MT19937 as CPython uses it.
struct Mt19937 {
    state: [u32; N],
    index: usize,
}

impl Mt19937 {
    fn init_genrand(seed: u32) -> Self {
        let mut state = [0u32; N];
        state[0] = seed;
        for i in 1..N {
            state[i] = 1_812_433_253u32
                .wrapping_mul(state[i - 1] ^ (state[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { state, index: N }
    }

    fn init_by_array(key: &[u32]) -> Self {
        let mut mt = Self::init_genrand(19_650_218);
        let s = &mut mt.state;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            s[i] = (s[i] ^ (s[i - 1] ^ (s[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                s[0] = s[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            s[i] = (s[i] ^ (s[i - 1] ^ (s[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                s[0] = s[N - 1];
                i = 1;
            }
        }
        s[0] = 0x8000_0000;
        mt
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            for k in 0..N {
                let y = (self.state[k] & 0x8000_0000) | (self.state[(k + 1) % N] & 0x7fff_ffff);
                let mut v = self.state[(k + M) % N] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.state[k] = v;
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }
}

/// Splits a non-negative seed into 32-bit words, least significant first, as CPython's
/// `random.seed(int)` does.
fn seed_key(seed: u64) -> Vec<u32> {
    if seed == 0 {
        return vec![0];
    }
    let mut key = vec![seed as u32];
    if seed >> 32 != 0 {
        key.push((seed >> 32) as u32);
    }
    key
}

/// The per-trial seeds τ²-bench derives from a run seed: `seeds[t]` is trial `t`'s seed.
pub(crate) fn trial_seeds(run_seed: u64, trials: usize) -> Vec<u64> {
    let mut mt = Mt19937::init_by_array(&seed_key(run_seed));
    (0..trials)
        .map(|_| {
            loop {
                // randint(0, 1_000_000) → randbelow(1_000_001) → getrandbits(20) with rejection.
                let r = (mt.next_u32() >> 12) as u64;
                if r <= 1_000_000 {
                    break r;
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_300_matches_upstream() {
        assert_eq!(
            trial_seeds(300, 8),
            vec![626729, 373753, 361454, 1567, 514337, 363271, 554706, 863145]
        );
    }

    #[test]
    fn other_seeds_match_cpython() {
        // Values printed by CPython 3.11: random.seed(s); [random.randint(0, 10**6) for _ in range(4)]
        assert_eq!(trial_seeds(0, 4), vec![885440, 403958, 794772, 933488]);
        assert_eq!(trial_seeds(42, 4), vec![670487, 116739, 26225, 777572]);
        assert_eq!(
            trial_seeds((1 << 40) + 5, 4),
            vec![528881, 542031, 281652, 696042]
        );
    }
}
