//! The benchmark's own texts — the agent instruction and the user simulator's guidelines —
//! read at run time from the τ²-bench data directory, exactly as upstream ships them, or from
//! the files a config's `[prompts]` names instead.
//!
//! They are data, not project prose: a paraphrase makes a run incomparable with upstream, so
//! the project never carries its own copy. Where each text came from is kept beside it, so the
//! comparability stamp ([`crate::comparability`]) can say whether the model saw upstream's.

use crate::config::PromptsSection;
use crate::runner::RunError;
use std::path::{Path, PathBuf};
use tauguard_env::DataDir;

/// Where upstream's layout keeps each text, relative to the data directory.
pub(crate) const AGENT_INSTRUCTION: &str = "agent/agent_instruction.md";
pub(crate) const USER_GUIDELINES: &str = "user_simulator/simulation_guidelines.md";
pub(crate) const USER_GUIDELINES_TOOLS: &str = "user_simulator/simulation_guidelines_tools.md";

/// Which text of the benchmark a [`Text`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    AgentInstruction,
    UserGuidelines,
    UserGuidelinesTools,
}

impl TextKind {
    #[cfg(test)]
    pub(crate) const ALL: [TextKind; 3] = [
        TextKind::AgentInstruction,
        TextKind::UserGuidelines,
        TextKind::UserGuidelinesTools,
    ];

    /// The key in `[prompts]` and in the comparability stamp.
    pub(crate) fn key(self) -> &'static str {
        match self {
            TextKind::AgentInstruction => "agent_instruction",
            TextKind::UserGuidelines => "user_guidelines",
            TextKind::UserGuidelinesTools => "user_guidelines_tools",
        }
    }

    fn data_path(self) -> &'static str {
        match self {
            TextKind::AgentInstruction => AGENT_INSTRUCTION,
            TextKind::UserGuidelines => USER_GUIDELINES,
            TextKind::UserGuidelinesTools => USER_GUIDELINES_TOOLS,
        }
    }

    fn configured(self, p: &PromptsSection) -> Option<&PathBuf> {
        match self {
            TextKind::AgentInstruction => p.agent_instruction.as_ref(),
            TextKind::UserGuidelines => p.user_guidelines.as_ref(),
            TextKind::UserGuidelinesTools => p.user_guidelines_tools.as_ref(),
        }
    }
}

/// Where a text was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TextSource {
    /// The data directory, at upstream's place for it.
    DataDir,
    /// A file the config's `[prompts]` names.
    Config,
}

/// One text as read, with its origin.
#[derive(Debug, Clone)]
pub(crate) struct Text {
    pub kind: TextKind,
    pub text: String,
    pub path: PathBuf,
    pub source: TextSource,
}

/// The three texts of a run.
#[derive(Debug, Clone)]
pub(crate) struct BenchmarkTexts {
    pub agent_instruction: Text,
    pub user_guidelines: Text,
    pub user_guidelines_tools: Text,
}

impl BenchmarkTexts {
    /// Reads each text from `[prompts]` when the config names a file for it, else from the
    /// data directory. A missing file is an error naming it and how to get it.
    pub(crate) fn load(
        data: &DataDir,
        prompts: &PromptsSection,
    ) -> Result<BenchmarkTexts, RunError> {
        let read = |kind: TextKind| read_text(data.path(), prompts, kind);
        Ok(BenchmarkTexts {
            agent_instruction: read(TextKind::AgentInstruction)?,
            user_guidelines: read(TextKind::UserGuidelines)?,
            user_guidelines_tools: read(TextKind::UserGuidelinesTools)?,
        })
    }

    #[cfg(test)]
    pub(crate) fn all(&self) -> [&Text; 3] {
        [
            &self.agent_instruction,
            &self.user_guidelines,
            &self.user_guidelines_tools,
        ]
    }

    /// The guidelines a user simulator gets: with or without tools, as upstream picks them.
    pub(crate) fn guidelines(&self, user_has_tools: bool) -> &Text {
        if user_has_tools {
            &self.user_guidelines_tools
        } else {
            &self.user_guidelines
        }
    }
}

fn read_text(data: &Path, prompts: &PromptsSection, kind: TextKind) -> Result<Text, RunError> {
    let (path, source) = match kind.configured(prompts) {
        Some(p) => (p.clone(), TextSource::Config),
        None => (data.join(kind.data_path()), TextSource::DataDir),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let message = match source {
            TextSource::Config => format!("`prompts.{}`: {e}", kind.key()),
            TextSource::DataDir => format!(
                "{e}; the τ²-bench data directory must hold upstream's `{}` \
                 (scripts/fetch-tau2-data.sh writes it), or the config's `[prompts] {}` must \
                 name a file",
                kind.data_path(),
                kind.key()
            ),
        };
        RunError::Input {
            path: path.clone(),
            message,
        }
    })?;
    Ok(Text {
        kind,
        text,
        path,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_text_names_its_place_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::resolve(Some(dir.path())).unwrap();
        let err = BenchmarkTexts::load(&data, &PromptsSection::default()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("agent/agent_instruction.md"), "{msg}");
        assert!(msg.contains("fetch-tau2-data.sh"), "{msg}");
    }

    #[test]
    fn a_configured_text_wins_over_the_data_directory() {
        let dir = tempfile::tempdir().unwrap();
        for p in [AGENT_INSTRUCTION, USER_GUIDELINES, USER_GUIDELINES_TOOLS] {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("data {p}\n")).unwrap();
        }
        let own = dir.path().join("mine.md");
        std::fs::write(&own, "mine\n").unwrap();
        let data = DataDir::resolve(Some(dir.path())).unwrap();
        let prompts = PromptsSection {
            agent_instruction: Some(own.clone()),
            ..Default::default()
        };
        let t = BenchmarkTexts::load(&data, &prompts).unwrap();
        assert_eq!(t.agent_instruction.text, "mine\n");
        assert_eq!(t.agent_instruction.source, TextSource::Config);
        assert_eq!(t.user_guidelines.source, TextSource::DataDir);
        assert_eq!(
            t.guidelines(true).text,
            format!("data {USER_GUIDELINES_TOOLS}\n")
        );
    }
}
