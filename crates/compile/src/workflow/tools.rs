//! Stage 1: the domain's agent tool specs as the prompts show them, and the mutating tools.
//! Only agent-side tools are offered (a domain's user-device tools are the user's, and no
//! guide authorizes them). The model's classification is cross-checked against the
//! environment's catalogue with the checklist compiler's own parser and comparison, and the
//! environment's catalogue, when known, is what every later check uses.

use serde::Serialize;
use tauguard_core::ToolSpec;
use tauguard_guards::ToolCatalog;

/// A tool as the templates see it.
#[derive(Debug, Clone, Serialize)]
pub(super) struct ToolView {
    pub name: String,
    pub description: String,
    /// The JSON schema of the arguments, compact.
    pub parameters: String,
    /// `mutating`, `read_only` or `other` under the catalogue in use; empty in stage 1.
    pub class: String,
}

impl ToolView {
    pub(super) fn of(spec: &ToolSpec, catalog: Option<&ToolCatalog>) -> ToolView {
        let class = catalog
            .and_then(|c| c.class_of(&spec.name))
            .map(|c| match c {
                tauguard_guards::ToolClass::Mutating => "mutating",
                tauguard_guards::ToolClass::ReadOnly => "read_only",
                tauguard_guards::ToolClass::Other => "other",
            })
            .unwrap_or_default();
        ToolView {
            name: spec.name.clone(),
            description: crate::classify::one_line_description(spec),
            parameters: spec.parameters.to_string(),
            class: class.to_string(),
        }
    }
}

/// The catalogue later stages check against, and its name for the report: the
/// environment's when known (a guide runs against the environment), else the classification.
pub(super) fn effective_catalog(
    classification: &ToolCatalog,
    known: Option<&ToolCatalog>,
) -> (ToolCatalog, &'static str) {
    match known {
        Some(k) => (k.clone(), "environment"),
        None => (classification.clone(), "classification"),
    }
}
