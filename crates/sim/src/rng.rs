//! A tiny deterministic generator (SplitMix64) keyed by (task, trial, seed): sim decisions must
//! be reproducible across machines and releases, so no external RNG whose stream may change.
//! The stream is core's `SplitMix64`; only the keying and the draws built on it are the sim's.

use tauguard_core::SplitMix64;

/// SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct SimRng(SplitMix64);

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
        SimRng(SplitMix64::new(h))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Uniform index below `n` (n > 0), by remainder: the draw every recorded sim stream
    /// used, so not core's multiply-shift `SplitMix64::below`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A probability outside [0, 1] in a sim model's table (its fault profile or its user
/// behaviour), naming the table's kind and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind} probability `{name}` = {} is outside [0, 1]", shown(.value))]
pub struct ProbabilityError {
    pub kind: &'static str,
    pub name: String,
    /// The value; `None` for NaN or an infinity, which the serialised form cannot tell apart.
    pub value: Option<f64>,
}

fn shown(value: &Option<f64>) -> String {
    value.map_or_else(|| "a non-finite number".to_string(), |v| v.to_string())
}

/// Checks every field of `table`, a `kind` table of probabilities, is within [0, 1]; the
/// first one outside, in the table's field order, is the error. The fields are read from the
/// table's serialised form, so a field added to the table is checked without being listed.
pub fn check_probabilities(
    kind: &'static str,
    table: &impl serde::Serialize,
) -> Result<(), ProbabilityError> {
    let fields = match serde_json::to_value(table) {
        Ok(serde_json::Value::Object(fields)) => fields,
        _ => return Ok(()),
    };
    // JSON has no NaN or infinity: serde_json writes both as null, which is outside [0, 1].
    let bad = fields
        .into_iter()
        .map(|(name, v)| (name, v.as_f64()))
        .find(|(_, p)| !p.is_some_and(|p| (0.0..=1.0).contains(&p)));
    match bad {
        Some((name, value)) => Err(ProbabilityError { kind, name, value }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_three(label: &str, trial: u32, seed: u64) -> Vec<u64> {
        let mut r = SimRng::keyed(label, trial, seed);
        (0..3).map(|_| r.next_u64()).collect()
    }

    #[test]
    fn deterministic_and_keyed() {
        let a = first_three("t1", 0, 300);
        assert_eq!(a, first_three("t1", 0, 300));
        assert_ne!(a, first_three("t1", 1, 300));
        let mut r = SimRng::keyed("x", 0, 0);
        let hits = (0..10_000).filter(|_| r.chance(0.3)).count();
        assert!((2_700..3_300).contains(&hits), "{hits}");
    }

    /// The stream is SplitMix64 seeded with the FNV-1a key: these are the values (computed
    /// apart, from the published algorithms) that recorded sim decisions were drawn from.
    #[test]
    fn the_keyed_stream_is_unchanged() {
        assert_eq!(
            first_three("t1", 0, 300),
            [6826628523306836370, 422185691646362679, 1921806191472217902]
        );
    }

    #[test]
    fn the_first_probability_outside_the_unit_interval_is_named() {
        #[derive(serde::Serialize)]
        struct T {
            a: f64,
            b: f64,
            c: f64,
        }
        let t = |a, b, c| check_probabilities("t", &T { a, b, c });
        assert_eq!(t(0.0, 1.0, 0.5), Ok(()));
        let e = t(0.5, 1.5, -1.0).unwrap_err();
        assert_eq!(e.to_string(), "t probability `b` = 1.5 is outside [0, 1]");
        for bad in [f64::NAN, f64::INFINITY] {
            let e = t(0.5, bad, 0.0).unwrap_err();
            assert_eq!(e.value, None);
            assert_eq!(
                e.to_string(),
                "t probability `b` = a non-finite number is outside [0, 1]"
            );
        }
    }
}
