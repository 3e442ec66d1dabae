//! A real-model config turned into its offline twin: every model role swapped for the `sim`
//! family (the fault-injecting `sim-agent` with a given profile, `sim-user`, `sim-judge`,
//! `sim-verifier`) and nothing else changed — domain, split, task set, trials, guards and guard
//! options stay — so `tauguard reproduce --offline` exercises an experiment's exact grid
//! without a key or the network, and without anyone editing its files.

use crate::config::{ModelSection, Role, RunConfig};
pub use tauguard_sim::faults::FaultProfile;

impl RunConfig {
    /// The offline twin of this config: `sim` models in every role, the agent with `faults`,
    /// and the run seed replaced by `seed` when given (offline, every agent is the same `sim`
    /// agent: distinct seeds keep configs that differ only in their agent from being copies).
    pub fn offline(&self, faults: FaultProfile, seed: Option<u64>) -> RunConfig {
        let mut cfg = self.clone();
        let mut agent = ModelSection::sim(Role::Agent);
        agent.faults = Some(faults);
        // Offline every agent of a grid is the same sim agent: one agent, one verifier.
        cfg.grid.agents.clear();
        cfg.models.agent = Some(agent);
        cfg.models.user = ModelSection::sim(Role::User);
        cfg.models.judge = Some(ModelSection::sim(Role::Judge));
        if cfg.guard.verifier.is_some() || !cfg.grid.verifiers.is_empty() {
            cfg.grid.verifiers.clear();
            cfg.guard.verifier = Some(ModelSection::sim(Role::Verifier));
        }
        if let Some(seed) = seed {
            cfg.run.seed = seed;
        }
        cfg.llm = Default::default();
        cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_role_becomes_a_sim_model_and_the_grid_stays() {
        let text = r#"
[run]
name = "r"
domain = "airline"
split = "test"
trials = 4
seed = 300

[models.agent]
provider = "openai"
model = "gpt-5.4"

[models.user]
provider = "openai"
model = "gpt-4.1-2025-04-14"
temperature = 0.0

[grid]
guards = ["baseline", "pg-checklist"]

[guard.verifier]
provider = "openai"
model = "gpt-5.4-mini"
"#;
        let cfg = RunConfig::parse(Path::new("r.toml"), text).unwrap();
        assert!(cfg.uses_network());
        let faults = FaultProfile {
            skip_confirmation: 0.2,
            ..Default::default()
        };
        let off = cfg.offline(faults, Some(301));
        assert!(!off.uses_network());
        let agent = off.models.agent.as_ref().unwrap();
        assert_eq!(agent.model, "sim-agent");
        assert_eq!(agent.faults, Some(faults));
        assert_eq!(off.models.user.model, "sim-user");
        assert_eq!(off.guard.verifier.as_ref().unwrap().model, "sim-verifier");
        assert_eq!((off.run.seed, off.run.split.as_str()), (301, "test"));
        assert_eq!(off.grid, cfg.grid);
        // The twin is itself a valid config.
        let again = toml::to_string(&off).unwrap();
        RunConfig::parse(Path::new("off.toml"), &again).unwrap();
        assert_eq!(cfg.offline(FaultProfile::default(), None).run.seed, 300);
    }
}
