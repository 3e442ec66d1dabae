//! What both compilers start from, so their entry points and callers name it once.

use std::path::Path;
use tauguard_core::ToolSpec;
use tauguard_llm::ChatModel;

/// A compile's inputs: the model that writes the artifacts, the domain, the policy text the
/// agent sees, the domain's agent-side tools, and the directory of prompt templates (normally
/// `configs/prompts`; each compiler reads its own `compile/` folder under it).
#[derive(Clone, Copy)]
pub struct CompileInput<'a> {
    pub model: &'a dyn ChatModel,
    pub domain: &'a str,
    pub policy: &'a str,
    pub tools: &'a [ToolSpec],
    pub prompts_dir: &'a Path,
}

impl std::fmt::Debug for CompileInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileInput")
            .field("model", &self.model.id())
            .field("domain", &self.domain)
            .field("tools", &self.tools.len())
            .field("prompts_dir", &self.prompts_dir)
            .finish_non_exhaustive()
    }
}
