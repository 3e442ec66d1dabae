//! Which results come from the offline `sim` models, and the label they carry.
//!
//! The `sim` agent, user, judge and verifier are scripted stand-ins (crates/sim): numbers
//! made with any of them exercise the harness and are no measurement of an LLM agent, so
//! every table title, plot title, CSV and JSON group made from such records says so. A
//! record is simulated when its cell settings name the `sim` provider for any role
//! (`agent.provider`, `user.provider`, `judge.provider`, `verifier.provider`), or — for
//! records without cell settings — when its agent or user model is a `sim` model
//! (`sim-agent`, `sim-user`). A group, and a report, is simulated when any of its records is.

/// What a simulated result is called wherever it is shown.
pub const SIMULATED_LABEL: &str = "simulated models — not a paper result";

/// The provider name of the offline models.
const SIM_PROVIDER: &str = "sim";

/// The roles a model plays, as cell-setting prefixes.
const ROLES: [&str; 4] = ["agent", "user", "judge", "verifier"];

/// The offline models' names, for records without cell settings.
const SIM_MODELS: [&str; 2] = ["sim-agent", "sim-user"];

/// Whether any role was played by a `sim` model, from a record's cell settings and agent and
/// user models.
pub(crate) fn simulated(
    cell: &std::collections::BTreeMap<String, serde_json::Value>,
    agent_model: &str,
    user_model: &str,
) -> bool {
    ROLES.iter().any(|role| {
        cell.get(&format!("{role}.provider"))
            .and_then(|v| v.as_str())
            == Some(SIM_PROVIDER)
    }) || SIM_MODELS.contains(&agent_model)
        || SIM_MODELS.contains(&user_model)
}

/// `title`, labelled when `simulated`.
pub(crate) fn titled(title: &str, simulated: bool) -> String {
    if simulated {
        format!("{title} ({SIMULATED_LABEL})")
    } else {
        title.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tauguard_core::record::SimulationRecord;
    use tauguard_core::record::Slice;
    use tauguard_testkit::synthetic::record;

    /// Whether any role of `rec` was played by a `sim` model.
    fn is_simulated(rec: &SimulationRecord) -> bool {
        simulated(&rec.cell, &rec.agent_model, &rec.user_model)
    }

    #[test]
    fn any_sim_role_makes_a_record_simulated() {
        let mut r = record("t", Slice::Pv, 0, 1.0);
        (r.agent_model, r.user_model) = ("gpt-5.4".into(), "gpt-4.1".into());
        assert!(!is_simulated(&r));
        r.cell.insert("agent.provider".into(), json!("openai"));
        r.cell.insert("verifier.provider".into(), json!("openai"));
        assert!(!is_simulated(&r));
        for role in ROLES {
            let mut s = r.clone();
            s.cell.insert(format!("{role}.provider"), json!("sim"));
            assert!(is_simulated(&s), "{role}");
        }
        let mut s = r.clone();
        s.user_model = "sim-user".into();
        assert!(is_simulated(&s));
        assert_eq!(titled("T", false), "T");
        assert_eq!(titled("T", true), format!("T ({SIMULATED_LABEL})"));
    }
}
