//! The check of one model table of a config (`[models.*]`, `[guard.verifier]`, grid entries,
//! `[models.embeddings]`): split from `config.rs`, which keeps the file under its size limit.

use crate::config::{ModelSection, Role, RunConfig};

impl RunConfig {
    /// Checks one model table at `key` for `role`: the sim family's names, a known provider,
    /// faults and behaviour only where they apply, names only in the grid.
    pub(crate) fn check_model(
        &self,
        key: &str,
        role: Role,
        m: &ModelSection,
    ) -> Result<(), String> {
        let provider = self
            .llm
            .resolve(&m.provider)
            .map_err(|e| format!("at `{key}.provider`: {e}"))?;
        if provider.is_sim() && role == Role::Embeddings {
            return Err(format!(
                "at `{key}.provider`: the sim provider embeds nothing; name an OpenAI-compatible provider"
            ));
        }
        if provider.is_sim() {
            if role == Role::Agent {
                if tauguard_sim::agent::AgentBehaviour::of_model(&m.model).is_none() {
                    let known: Vec<&str> = tauguard_sim::agent::AgentBehaviour::MODELS
                        .iter()
                        .map(|(name, _)| *name)
                        .collect();
                    return Err(format!(
                        "at `{key}.model`: the sim provider offers {} here, not `{}`",
                        known.join(", "),
                        m.model
                    ));
                }
            } else if m.model != role.sim_model() {
                return Err(format!(
                    "at `{key}.model`: the sim provider offers `{}` here, not `{}`",
                    role.sim_model(),
                    m.model
                ));
            }
        }
        if m.name.is_some() && !key.starts_with("grid.") && key != "models.embeddings" {
            return Err(format!(
                "at `{key}.name`: only entries of `grid.agents` and `grid.verifiers` take a name"
            ));
        }
        if let Some(f) = &m.faults {
            if role != Role::Agent || !m.is_sim() || m.model != Role::Agent.sim_model() {
                return Err(format!(
                    "at `{key}.faults`: only the sim agent `sim-agent` takes a fault profile"
                ));
            }
            f.validate()
                .map_err(|e| format!("at `{key}.faults`: {e}"))?;
        }
        if let Some(b) = &m.behaviour {
            if role != Role::User || !m.is_sim() {
                return Err(format!(
                    "at `{key}.behaviour`: only the sim user `sim-user` takes a behaviour"
                ));
            }
            b.validate()
                .map_err(|e| format!("at `{key}.behaviour`: {e}"))?;
        }
        Ok(())
    }
}
