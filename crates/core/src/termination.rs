//! Why a simulation ended, as τ²-bench names it (`TerminationReason` in upstream
//! `src/tau2/data_model/simulation.py`, a2c0247): one enum instead of strings compared in
//! every crate, so a misspelt reason is a compile error and an unknown one in a record or an
//! imported `results.json` is a parse error naming it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a simulation ended. The serialised names are upstream's.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    UserStop,
    AgentStop,
    MaxSteps,
    Timeout,
    TooManyErrors,
    AgentError,
    UserError,
    /// Failed for reasons outside the benchmark (an API outage): never scored.
    InfrastructureError,
    ContextWindowExceeded,
    /// Also the reason of an outcome whose end was never set: no loop path leaves one so.
    #[default]
    UnexpectedError,
}

impl Termination {
    /// Every reason, in upstream's order.
    pub const ALL: [Termination; 10] = [
        Termination::UserStop,
        Termination::AgentStop,
        Termination::MaxSteps,
        Termination::Timeout,
        Termination::TooManyErrors,
        Termination::AgentError,
        Termination::UserError,
        Termination::InfrastructureError,
        Termination::ContextWindowExceeded,
        Termination::UnexpectedError,
    ];

    /// The name records and upstream's results use.
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::UserStop => "user_stop",
            Termination::AgentStop => "agent_stop",
            Termination::MaxSteps => "max_steps",
            Termination::Timeout => "timeout",
            Termination::TooManyErrors => "too_many_errors",
            Termination::AgentError => "agent_error",
            Termination::UserError => "user_error",
            Termination::InfrastructureError => "infrastructure_error",
            Termination::ContextWindowExceeded => "context_window_exceeded",
            Termination::UnexpectedError => "unexpected_error",
        }
    }

    /// Whether upstream's evaluator scores the simulation's checks; any other ending scores
    /// 0 without looking (`evaluate_simulation`, "terminated prematurely").
    pub fn is_evaluated(self) -> bool {
        matches!(self, Termination::UserStop | Termination::AgentStop)
    }

    /// A model's unusable reply ended the simulation, charged to its role.
    pub fn role_error(role: &str) -> Option<Termination> {
        match role {
            "agent" => Some(Termination::AgentError),
            "user" => Some(Termination::UserError),
            _ => None,
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Termination {
    type Err = String;

    fn from_str(s: &str) -> Result<Termination, String> {
        Termination::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Termination::ALL.iter().map(|t| t.as_str()).collect();
                format!(
                    "unknown termination reason `{s}` (known: {})",
                    known.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_str() {
        for t in Termination::ALL {
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.as_str()));
            assert_eq!(serde_json::from_str::<Termination>(&json).unwrap(), t);
            assert_eq!(t.as_str().parse::<Termination>().unwrap(), t);
        }
        assert!(
            "user_stopped"
                .parse::<Termination>()
                .unwrap_err()
                .contains("`user_stopped`")
        );
        assert!(serde_json::from_str::<Termination>("\"nope\"").is_err());
    }

    #[test]
    fn only_a_stop_is_evaluated() {
        let evaluated: Vec<_> = Termination::ALL
            .into_iter()
            .filter(|t| t.is_evaluated())
            .collect();
        assert_eq!(evaluated, [Termination::UserStop, Termination::AgentStop]);
        assert_eq!(
            Termination::role_error("user"),
            Some(Termination::UserError)
        );
        assert_eq!(Termination::role_error("judge"), None);
    }
}
