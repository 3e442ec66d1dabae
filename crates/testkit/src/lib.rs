//! Test support shared by every crate's tests and benches, so each rule lives once: where the
//! workspace and its fixtures are, how the τ²-bench data directory is found (and that a
//! missing one skips visibly, or fails under CI), the run configs tests write, and the
//! loopback OpenAI-compatible provider they point them at, (feature `synthetic`) the
//! synthetic simulation records of the metrics' and viewer's tests and benches, and (feature
//! `scripted-model`) the scripted model of the compile, guards and orchestrator tests.
//!
//! Imports `tauguard-core` only for the synthetic records (which are made of its types) and
//! `tauguard-llm` only for the scripted model (a `ChatModel`), each behind its feature: every
//! crate above core may take it as a dev-dependency without an import running up the layers
//! (only crates above llm turn `scripted-model` on), and metrics' own unit tests can use the
//! records with no dependency cycle.

pub mod chromium;
pub mod loopback;
#[cfg(feature = "scripted-model")]
pub mod scripted;
#[cfg(feature = "synthetic")]
pub mod synthetic;

#[cfg(feature = "mock-server")]
pub use loopback::Loopback;
pub use loopback::{MockProvider, assistant_text, chat_completion, embeddings_reply};

use std::io::Write;
use std::path::{Path, PathBuf};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists")
}

/// `tasks/fixtures`: the project's own small data directory (an airline-shaped domain and the
/// toy domain), always present.
pub fn fixtures_dir() -> PathBuf {
    workspace_root().join("tasks/fixtures")
}

/// Where the τ²-bench data directory should be: `TAUGUARD_DATA_DIR` (a relative path is taken
/// from the workspace root, as `.ci/run` sets it), else `../shared/tau2` beside the workspace.
pub fn tau2_candidate() -> PathBuf {
    match std::env::var_os("TAUGUARD_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                workspace_root().join(p)
            }
        }
        None => workspace_root().join("../shared/tau2"),
    }
}

/// The τ²-bench data directory, when it holds the three domains. Otherwise a test that needs
/// it skips — with a line written past the test harness's output capture, so a wrong path is
/// seen — and under CI (`CI` set) it fails instead.
pub fn tau2_dir() -> Option<PathBuf> {
    let dir = tau2_candidate();
    if ["airline", "retail", "telecom"]
        .iter()
        .all(|d| dir.join(d).is_dir())
    {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must have the τ²-bench data at {} (set TAUGUARD_DATA_DIR)",
        dir.display()
    );
    skip(&format!("τ²-bench data not found at {}", dir.display()));
    None
}

/// Writes `SKIPPED: <why>` to the process's stderr directly: `eprintln!` inside a test is
/// captured and shown only on failure, which would hide the skip.
pub fn skip(why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {why}");
}

/// A run config with the offline `sim` models, as TOML text. Fields left at their defaults
/// are not written, so the config's own defaults apply. A role may be played by another
/// model ([`SimConfig::agent`], [`SimConfig::user`]), served by a [`MockProvider`].
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub name: String,
    pub domain: String,
    pub data_dir: PathBuf,
    pub trials: u32,
    pub seed: Option<u64>,
    /// Lines under `[models.agent.faults]`, e.g. `"skip_confirmation = 0.5"`.
    pub faults: Vec<String>,
    /// Guard configurations of `[grid]`; empty = the config default (baseline).
    pub guards: Vec<String>,
    /// Extra lines under `[run]`, e.g. `"num_tasks = 5"`.
    pub run_extra: Vec<String>,
    /// Extra lines under `[grid]`, e.g. `"domains = [\"airline\", \"retail\"]"`.
    pub grid: Vec<String>,
    /// The lines of `[models.agent]`; the sim agent by default.
    pub agent: String,
    /// The lines of `[models.user]`; the sim user by default.
    pub user: String,
    /// Provider tables written after the models.
    pub providers: Vec<MockProvider>,
    /// Extra sections after the models (e.g. a `[guard]` table).
    pub tail: String,
}

/// The `[models.agent]` lines of the offline agent.
const SIM_AGENT: &str = "provider = \"sim\"\nmodel = \"sim-agent\"";
/// The `[models.user]` lines of the offline user.
const SIM_USER: &str = "provider = \"sim\"\nmodel = \"sim-user\"";

impl SimConfig {
    /// One trial of `domain` from `data_dir`, sim agent without faults, sim user.
    pub fn new(name: &str, domain: &str, data_dir: &Path) -> SimConfig {
        SimConfig {
            name: name.into(),
            domain: domain.into(),
            data_dir: data_dir.to_path_buf(),
            trials: 1,
            seed: None,
            faults: Vec::new(),
            guards: Vec::new(),
            run_extra: Vec::new(),
            grid: Vec::new(),
            agent: SIM_AGENT.into(),
            user: SIM_USER.into(),
            providers: Vec::new(),
            tail: String::new(),
        }
    }

    /// A config whose domains are a grid axis (`[grid] domains`), with no `[run] domain`.
    pub fn grid_of(name: &str, domains: &[&str], data_dir: &Path) -> SimConfig {
        let list: Vec<String> = domains.iter().map(|d| format!("\"{d}\"")).collect();
        SimConfig::new(name, "", data_dir).grid_line(&format!("domains = [{}]", list.join(", ")))
    }

    /// Adds a line under `[grid]`.
    pub fn grid_line(mut self, line: &str) -> Self {
        self.grid.push(line.to_string());
        self
    }

    pub fn trials(mut self, n: u32) -> Self {
        self.trials = n;
        self
    }

    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Adds fault lines (`"comply_forbidden = 1.0"`); several may be given with newlines.
    pub fn faults(mut self, lines: &str) -> Self {
        self.faults.extend(
            lines
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string),
        );
        self
    }

    pub fn guards(mut self, guards: &[&str]) -> Self {
        self.guards = guards.iter().map(|g| g.to_string()).collect();
        self
    }

    pub fn run_line(mut self, line: &str) -> Self {
        self.run_extra.push(line.to_string());
        self
    }

    /// The lines of `[models.agent]` (e.g. `provider = "mock"\nmodel = "m"`), instead of the
    /// sim agent's; fault lines still go under its `faults` table.
    pub fn agent(mut self, lines: &str) -> Self {
        self.agent = lines.trim().to_string();
        self
    }

    /// The lines of `[models.user]`, instead of the sim user's.
    pub fn user(mut self, lines: &str) -> Self {
        self.user = lines.trim().to_string();
        self
    }

    /// Adds a provider table (`[llm.providers.<name>]`) after the models.
    pub fn provider(mut self, provider: MockProvider) -> Self {
        self.providers.push(provider);
        self
    }

    pub fn tail(mut self, text: &str) -> Self {
        self.tail.push_str(text);
        self.tail.push('\n');
        self
    }

    /// The config as TOML.
    pub fn toml(&self) -> String {
        let mut s = format!(
            "[run]\nname = \"{}\"\ntrials = {}\ndata_dir = \"{}\"\n",
            self.name,
            self.trials,
            self.data_dir.display()
        );
        if !self.domain.is_empty() {
            s.push_str(&format!("domain = \"{}\"\n", self.domain));
        }
        if let Some(seed) = self.seed {
            s.push_str(&format!("seed = {seed}\n"));
        }
        for l in &self.run_extra {
            s.push_str(l);
            s.push('\n');
        }
        s.push_str(&format!("\n[models.agent]\n{}\n", self.agent));
        if !self.faults.is_empty() {
            s.push_str("[models.agent.faults]\n");
            for l in &self.faults {
                s.push_str(l);
                s.push('\n');
            }
        }
        s.push_str(&format!("\n[models.user]\n{}\n", self.user));
        for p in &self.providers {
            s.push('\n');
            s.push_str(&p.toml("llm.providers"));
        }
        if !self.guards.is_empty() || !self.grid.is_empty() {
            s.push_str("\n[grid]\n");
        }
        if !self.guards.is_empty() {
            let list: Vec<String> = self.guards.iter().map(|g| format!("\"{g}\"")).collect();
            s.push_str(&format!("guards = [{}]\n", list.join(", ")));
        }
        for l in &self.grid {
            s.push_str(l);
            s.push('\n');
        }
        if !self.tail.is_empty() {
            s.push('\n');
            s.push_str(&self.tail);
        }
        s
    }

    /// Writes the config to `path` and returns the path.
    pub fn write(&self, path: &Path) -> PathBuf {
        std::fs::write(path, self.toml())
            .unwrap_or_else(|e| panic!("cannot write `{}`: {e}", path.display()));
        path.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_text_has_every_part_once() {
        let text = SimConfig::new("t", "airline", Path::new("/d"))
            .trials(3)
            .seed(7)
            .faults("skip_identity = 0.1\ncomply_forbidden = 1.0")
            .guards(&["baseline", "pg-raw"])
            .run_line("num_tasks = 5")
            .tail("[guard]\nstrict = true")
            .toml();
        for part in [
            "trials = 3",
            "seed = 7",
            "data_dir = \"/d\"",
            "num_tasks = 5",
            "[models.agent.faults]\nskip_identity = 0.1\ncomply_forbidden = 1.0\n",
            "guards = [\"baseline\", \"pg-raw\"]",
            "[guard]\nstrict = true",
        ] {
            assert_eq!(text.matches(part).count(), 1, "{part} in\n{text}");
        }
        let served = SimConfig::new("t", "airline", Path::new("/d"))
            .agent("provider = \"mock\"\nmodel = \"m\"")
            .provider(MockProvider::new("mock", "http://x"))
            .toml();
        for part in [
            "[models.agent]\nprovider = \"mock\"\nmodel = \"m\"\n",
            "[models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n",
            "[llm.providers.mock]\nkind = \"openai\"\nbase_url = \"http://x\"\n",
        ] {
            assert_eq!(served.matches(part).count(), 1, "{part} in\n{served}");
        }
        let plain = SimConfig::new("t", "retail", Path::new("/d")).toml();
        assert!(!plain.contains("faults") && !plain.contains("[grid]") && !plain.contains("seed"));
    }

    #[test]
    fn relative_data_dirs_are_taken_from_the_workspace_root() {
        // Only checks the rule, not the environment of the test process.
        let root = workspace_root();
        assert!(root.join("Cargo.toml").is_file());
        assert!(fixtures_dir().join("airline").is_dir());
    }
}
