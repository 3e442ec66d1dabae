//! Domain registry: maps a domain name to its database loader and policy assembly.

use crate::data::{LoadError, read_text};
use crate::environment::DomainBase;
use std::path::Path;
use std::sync::Arc;

/// Parses the domain database(s) under `dir` into an immutable base snapshot.
pub fn load_base(domain: &str, dir: &Path) -> Result<Arc<dyn DomainBase>, LoadError> {
    match domain {
        "airline" => Ok(Arc::new(crate::airline::AirlineBase::load(dir)?)),
        "retail" => Ok(Arc::new(crate::retail::RetailBase::load(dir)?)),
        "telecom" => Ok(Arc::new(crate::telecom::TelecomBase::load(dir)?)),
        other => Err(LoadError::UnknownDomain(other.to_string())),
    }
}

/// The policy text the agent's system prompt embeds. Telecom joins its main policy and the
/// technical-support manual the way upstream does.
pub fn load_policy(domain: &str, dir: &Path) -> Result<String, LoadError> {
    match domain {
        "telecom" => {
            let main = read_text(&dir.join("main_policy.md"))?;
            let manual = read_text(&dir.join("tech_support_manual.md"))?;
            Ok(format!(
                "<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"
            ))
        }
        _ => read_text(&dir.join("policy.md")),
    }
}
