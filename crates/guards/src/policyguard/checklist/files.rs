//! Reading and writing a domain's artifact directory (`tasks/<domain>/checklist/`).

use super::validate::{parse_general_rules, parse_tool_checklist};
use super::{
    ArtifactError, DomainChecklists, GENERAL_RULES_FILE, GeneralRule, GeneralRules, ToolChecklist,
};
use crate::catalog::ToolCatalog;
use std::path::Path;

fn read(file: &Path) -> Result<String, ArtifactError> {
    std::fs::read_to_string(file)
        .map_err(|e| ArtifactError::one(file, None, format!("cannot read: {e}")))
}

/// Loads and validates every artifact of `dir`: `<tool>.yaml` per mutating tool and
/// `general_rules.yaml`. Other files (`compile_report.json`, `README.md`, ...) are ignored;
/// a `.yml` file is rejected so that it cannot be silently skipped. Every mutating tool of
/// `tools` must have a checklist. Files are read in name order; the first bad file is
/// reported with all of its problems.
pub fn load_domain_checklists(
    dir: &Path,
    tools: &ToolCatalog,
) -> Result<DomainChecklists, ArtifactError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        ArtifactError::one(
            dir,
            None,
            format!("cannot read the checklist directory: {e}"),
        )
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| {
            ArtifactError::one(
                dir,
                None,
                format!("cannot read the checklist directory: {e}"),
            )
        })?;
        let path = entry.path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();

    let mut out = DomainChecklists::default();
    let mut general = None;
    for file in &files {
        let Some(name) = file.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.ends_with(".yml") {
            return Err(ArtifactError::one(
                file,
                None,
                "checklist artifacts use the `.yaml` extension; rename the file".to_string(),
            ));
        }
        if !name.ends_with(".yaml") {
            continue;
        }
        let text = read(file)?;
        if name == GENERAL_RULES_FILE {
            general = Some(parse_general_rules(&text, file)?.rules);
        } else {
            let checklist = parse_tool_checklist(&text, file, tools)?;
            out.tools.insert(checklist.tool.clone(), checklist);
        }
    }
    out.general = general.ok_or_else(|| {
        ArtifactError::one(
            &dir.join(GENERAL_RULES_FILE),
            None,
            "missing: every domain needs its general rules",
        )
    })?;
    if let Some(missing) = tools.mutating.iter().find(|t| !out.tools.contains_key(*t)) {
        return Err(ArtifactError::one(
            &dir.join(format!("{missing}.yaml")),
            None,
            format!(
                "missing: `{missing}` is a mutating tool of `{}` and needs a checklist",
                tools.domain
            ),
        ));
    }
    Ok(out)
}

/// Renders one tool checklist as YAML (the file format of `<tool>.yaml`).
pub fn tool_checklist_to_yaml(
    checklist: &ToolChecklist,
) -> Result<String, serde_saphyr::SerializeError> {
    serde_saphyr::to_string(checklist)
}

/// Renders general rules as YAML (the file format of `general_rules.yaml`).
pub fn general_rules_to_yaml(
    rules: &[GeneralRule],
) -> Result<String, serde_saphyr::SerializeError> {
    serde_saphyr::to_string(&GeneralRules {
        rules: rules.to_vec(),
    })
}

/// Writes `set` into `dir` (created if needed) in the layout [`load_domain_checklists`]
/// reads: `<tool>.yaml` per checklist plus `general_rules.yaml`. Existing files of the same
/// names are replaced; other files are left alone.
pub fn write_domain_checklists(dir: &Path, set: &DomainChecklists) -> Result<(), ArtifactError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| ArtifactError::one(dir, None, format!("cannot create: {e}")))?;
    for (name, checklist) in &set.tools {
        let file = dir.join(format!("{name}.yaml"));
        if name != &checklist.tool {
            return Err(ArtifactError::one(
                &file,
                Some("tool".into()),
                format!(
                    "the set files this checklist under `{name}` but its tool is `{}`",
                    checklist.tool
                ),
            ));
        }
        let text = tool_checklist_to_yaml(checklist)
            .map_err(|e| ArtifactError::one(&file, None, e.to_string()))?;
        write(&file, &text)?;
    }
    let file = dir.join(GENERAL_RULES_FILE);
    let text = general_rules_to_yaml(&set.general)
        .map_err(|e| ArtifactError::one(&file, None, e.to_string()))?;
    write(&file, &text)
}

fn write(file: &Path, text: &str) -> Result<(), ArtifactError> {
    std::fs::write(file, text)
        .map_err(|e| ArtifactError::one(file, None, format!("cannot write: {e}")))
}
