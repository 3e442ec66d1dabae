//! Checklist artifacts: one YAML file per mutating tool plus `general_rules.yaml`, under
//! `tasks/<domain>/checklist/`. The types here are the schema; loading and validation (with
//! the file and field named on any error) live beside them.
//!
//! - [`load_domain_checklists`] reads a directory and rejects anything that breaks the schema:
//!   unknown keys, wrong types, a checklist for an unknown or non-mutating tool, a file whose
//!   `tool` differs from its name, a `data` requirement that names no tool or a tool that is
//!   not read-only, duplicate or non-snake_case names, a mutating tool without a checklist.
//!   Every error names the file and the field path (`requirements[1].tool`).
//! - [`write_domain_checklists`] writes the same layout back.
//! - [`parse_tool_checklist`] / [`parse_general_rules`] validate one document from text (the
//!   checklist compiler uses them on model replies).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use tauguard_core::ToolKind;
use tauguard_env::ToolDef;

/// File name of the cross-tool rules of a domain.
pub const GENERAL_RULES_FILE: &str = "general_rules.yaml";

/// Requirement kinds of the PolicyGuard checklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RequirementType {
    /// Proven by a specific read-only tool's result (named in `tool`).
    Data,
    /// A dialogue predicate (e.g. the user said "yes" after the last summary).
    Procedural,
}

/// A hard rule on the call itself (e.g. at most 5 passengers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constraint {
    pub name: String,
    /// The rule in words.
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A named prerequisite the verifier judges MET / NOT MET.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: RequirementType,
    /// For `data` requirements: the read-only tool whose result proves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// For `data` requirements: other read-only tools whose result proves it equally well
    /// (e.g. `get_item_details` beside `get_product_details`). Empty for most requirements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternative_tools: Vec<String>,
    /// How to verify it.
    pub hint: String,
}

impl Requirement {
    /// The tools whose result proves a `data` requirement: `tool` then `alternative_tools`.
    pub fn proving_tools(&self) -> impl Iterator<Item = &str> {
        self.tool
            .as_deref()
            .into_iter()
            .chain(self.alternative_tools.iter().map(String::as_str))
    }
}

/// The checklist of one mutating tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolChecklist {
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    #[serde(default)]
    pub requirements: Vec<Requirement>,
}

/// A cross-tool rule (identity once per session, conversation norms, transfer rules).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneralRule {
    pub name: String,
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `general_rules.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneralRules {
    pub rules: Vec<GeneralRule>,
}

/// All checklist artifacts of one domain.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DomainChecklists {
    /// Mutating tool name → its checklist.
    pub tools: std::collections::BTreeMap<String, ToolChecklist>,
    pub general: Vec<GeneralRule>,
}

impl DomainChecklists {
    /// The checklist of `tool`, if it has one.
    pub fn get(&self, tool: &str) -> Option<&ToolChecklist> {
        self.tools.get(tool)
    }

    /// Requirements over all tools.
    pub fn requirement_count(&self) -> usize {
        self.tools.values().map(|c| c.requirements.len()).sum()
    }

    /// Constraints over all tools.
    pub fn constraint_count(&self) -> usize {
        self.tools.values().map(|c| c.constraints.len()).sum()
    }
}

// ---------------------------------------------------------------------------------------------
// Tool classification
// ---------------------------------------------------------------------------------------------

/// How a tool relates to the checklists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolClass {
    /// Changes the environment: has a checklist, intercepted by guards.
    #[serde(alias = "write", alias = "mutate")]
    Mutating,
    /// Looks facts up: may prove a `data` requirement.
    #[serde(alias = "read-only", alias = "readonly", alias = "read")]
    ReadOnly,
    /// Neither (calculators, transfers, think): never proves anything, never has a checklist.
    #[serde(alias = "generic", alias = "neither")]
    Other,
}

impl ToolClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolClass::Mutating => "mutating",
            ToolClass::ReadOnly => "read-only",
            ToolClass::Other => "generic (neither mutating nor read-only)",
        }
    }
}

/// The agent-side tools of a domain, as the loader needs them: which tools may have a
/// checklist (mutating) and which may prove a `data` requirement (read-only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainToolInfo {
    pub domain: String,
    pub mutating: BTreeSet<String>,
    pub read_only: BTreeSet<String>,
    /// Known tools that are neither (e.g. `calculate`, `transfer_to_human_agents`).
    #[serde(default)]
    pub other: BTreeSet<String>,
}

impl DomainToolInfo {
    pub fn new<M, R, O>(domain: impl Into<String>, mutating: M, read_only: R, other: O) -> Self
    where
        M: IntoIterator,
        M::Item: Into<String>,
        R: IntoIterator,
        R::Item: Into<String>,
        O: IntoIterator,
        O::Item: Into<String>,
    {
        DomainToolInfo {
            domain: domain.into(),
            mutating: mutating.into_iter().map(Into::into).collect(),
            read_only: read_only.into_iter().map(Into::into).collect(),
            other: other.into_iter().map(Into::into).collect(),
        }
    }

    /// From τ²-bench tool kinds: `write` → mutating, `read` → read-only, anything else → other.
    pub fn from_kinds<'a>(
        domain: impl Into<String>,
        tools: impl IntoIterator<Item = (&'a str, ToolKind)>,
    ) -> Self {
        let mut info = DomainToolInfo {
            domain: domain.into(),
            ..Default::default()
        };
        for (name, kind) in tools {
            let set = match kind {
                ToolKind::Write => &mut info.mutating,
                ToolKind::Read => &mut info.read_only,
                ToolKind::Think | ToolKind::Generic => &mut info.other,
            };
            set.insert(name.to_string());
        }
        info
    }

    /// From an environment toolkit (e.g. `env.toolkit(Requestor::Assistant)`); helper methods
    /// that are not tools are skipped.
    pub fn from_toolkit(domain: impl Into<String>, toolkit: &[ToolDef]) -> Self {
        Self::from_kinds(
            domain,
            toolkit
                .iter()
                .filter(|t| t.is_tool)
                .map(|t| (t.name, t.kind)),
        )
    }

    /// Class of a known tool; `None` for names the domain does not have.
    pub fn class_of(&self, tool: &str) -> Option<ToolClass> {
        if self.mutating.contains(tool) {
            Some(ToolClass::Mutating)
        } else if self.read_only.contains(tool) {
            Some(ToolClass::ReadOnly)
        } else if self.other.contains(tool) {
            Some(ToolClass::Other)
        } else {
            None
        }
    }

    fn known_list(&self, class: ToolClass) -> String {
        let set = match class {
            ToolClass::Mutating => &self.mutating,
            ToolClass::ReadOnly => &self.read_only,
            ToolClass::Other => &self.other,
        };
        if set.is_empty() {
            "none".to_string()
        } else {
            set.iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// One problem of an artifact file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactIssue {
    /// Field path inside the document (`requirements[1].tool`); `None` for file-level
    /// problems (unreadable file, YAML syntax with no field, missing file).
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ArtifactIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{field}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A rejected artifact: the file, and every problem found in it with its field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactError {
    pub file: PathBuf,
    pub issues: Vec<ArtifactIssue>,
}

impl ArtifactError {
    fn one(file: &Path, field: Option<String>, message: impl Into<String>) -> ArtifactError {
        ArtifactError {
            file: file.to_path_buf(),
            issues: vec![ArtifactIssue {
                field,
                message: message.into(),
            }],
        }
    }

    /// Field paths of the issues (file-level issues excluded).
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.issues.iter().filter_map(|i| i.field.as_deref())
    }

    /// The issues without the file name, one per line: what a repair prompt shows a model.
    pub fn details(&self) -> String {
        self.issues
            .iter()
            .map(|i| format!("- {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        match self.issues.as_slice() {
            [] => write!(f, "{file}: invalid artifact"),
            [one] => write!(f, "{file}: {one}"),
            many => {
                write!(f, "{file}: {} problems", many.len())?;
                for issue in many {
                    write!(f, "; {issue}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ArtifactError {}

// ---------------------------------------------------------------------------------------------
// Parsing and validation
// ---------------------------------------------------------------------------------------------

/// Deserializes `text` as `T`, reporting the field path of the first schema error.
fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str, file: &Path) -> Result<T, ArtifactError> {
    if text.trim().is_empty() {
        return Err(ArtifactError::one(file, None, "the file is empty"));
    }
    let mut path: Option<String> = None;
    let result = serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_path_to_error::deserialize::<_, T>(de).map_err(|e| {
            path = Some(e.path().to_string());
            e.into_inner()
        })
    });
    result.map_err(|e| {
        let message = e.without_snippet().to_string();
        let field = path.map(|p| field_of_error(&p, &message));
        ArtifactError::one(file, field, message)
    })
}

/// The field a deserialization error is about. `serde_path_to_error` points unknown and
/// missing fields at their parent; name the offending key itself.
fn field_of_error(path: &str, message: &str) -> String {
    let parent = if path == "." || path.is_empty() {
        ""
    } else {
        path
    };
    for marker in ["unknown field `", "missing field `"] {
        if let Some(start) = message.find(marker) {
            let rest = &message[start + marker.len()..];
            if let Some(end) = rest.find('`') {
                let key = &rest[..end];
                let last = parent.rsplit('.').next().unwrap_or_default();
                return if parent.is_empty() {
                    key.to_string()
                } else if last == key {
                    parent.to_string()
                } else {
                    format!("{parent}.{key}")
                };
            }
        }
    }
    if parent.is_empty() {
        "(document)".to_string()
    } else {
        parent.to_string()
    }
}

/// `snake_case`: lowercase ASCII letters and digits in `_`-separated words, starting with a
/// letter.
pub fn is_snake_case(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && name.split('_').all(|w| !w.is_empty())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

struct Issues(Vec<ArtifactIssue>);

impl Issues {
    fn push(&mut self, field: String, message: impl Into<String>) {
        self.0.push(ArtifactIssue {
            field: Some(field),
            message: message.into(),
        });
    }

    fn name(&mut self, field: String, name: &str, seen: &mut BTreeMap<String, String>) {
        if name.trim().is_empty() {
            self.push(field, "must not be empty");
        } else if !is_snake_case(name) {
            self.push(
                field,
                format!("`{name}` is not snake_case (e.g. `obtain_user_id`)"),
            );
        } else if let Some(first) = seen.get(name) {
            self.push(
                field,
                format!("duplicate name `{name}` (first used at {first})"),
            );
        } else {
            seen.insert(name.to_string(), field);
        }
    }

    fn text(&mut self, field: String, text: &str) {
        if text.trim().is_empty() {
            self.push(field, "must not be empty");
        }
    }
}

/// Checks a parsed tool checklist against the domain's tools. `expected_tool` is the name the
/// file promises (its stem), when there is one.
pub fn validate_tool_checklist(
    checklist: &ToolChecklist,
    expected_tool: Option<&str>,
    tools: &DomainToolInfo,
) -> Vec<ArtifactIssue> {
    let mut issues = Issues(Vec::new());
    match tools.class_of(&checklist.tool) {
        None => issues.push(
            "tool".into(),
            format!(
                "unknown tool `{}` for domain `{}` (mutating tools: {})",
                checklist.tool,
                tools.domain,
                tools.known_list(ToolClass::Mutating)
            ),
        ),
        Some(ToolClass::Mutating) => {}
        Some(class) => issues.push(
            "tool".into(),
            format!(
                "`{}` is a {} tool; checklists exist only for mutating tools ({})",
                checklist.tool,
                class.as_str(),
                tools.known_list(ToolClass::Mutating)
            ),
        ),
    }
    if let Some(expected) = expected_tool
        && expected != checklist.tool
    {
        issues.push(
            "tool".into(),
            format!(
                "`{}` differs from the file name, which promises `{expected}` (name the file `{}.yaml`)",
                checklist.tool, checklist.tool
            ),
        );
    }
    if let Some(description) = &checklist.description {
        issues.text("description".into(), description);
    }
    if checklist.constraints.is_empty() && checklist.requirements.is_empty() {
        issues.push(
            "requirements".into(),
            "a checklist needs at least one constraint or requirement",
        );
    }
    let mut seen = BTreeMap::new();
    for (i, c) in checklist.constraints.iter().enumerate() {
        issues.name(format!("constraints[{i}].name"), &c.name, &mut seen);
        issues.text(format!("constraints[{i}].rule"), &c.rule);
        if let Some(hint) = &c.hint {
            issues.text(format!("constraints[{i}].hint"), hint);
        }
    }
    for (i, r) in checklist.requirements.iter().enumerate() {
        issues.name(format!("requirements[{i}].name"), &r.name, &mut seen);
        issues.text(format!("requirements[{i}].hint"), &r.hint);
        match r.kind {
            RequirementType::Data => {
                match &r.tool {
                    None => issues.push(
                        format!("requirements[{i}].tool"),
                        format!(
                            "a `data` requirement must name the read-only tool that proves it (one of: {})",
                            tools.known_list(ToolClass::ReadOnly)
                        ),
                    ),
                    Some(tool) => check_proving_tool(&mut issues, format!("requirements[{i}].tool"), tool, tools),
                }
                let mut listed: BTreeSet<&str> = r.tool.iter().map(String::as_str).collect();
                for (j, tool) in r.alternative_tools.iter().enumerate() {
                    let field = format!("requirements[{i}].alternative_tools[{j}]");
                    if !listed.insert(tool) {
                        issues.push(field, format!("`{tool}` is listed twice"));
                    } else {
                        check_proving_tool(&mut issues, field, tool, tools);
                    }
                }
            }
            RequirementType::Procedural => {
                if let Some(tool) = &r.tool {
                    issues.push(
                        format!("requirements[{i}].tool"),
                        format!(
                            "a `procedural` requirement is a dialogue predicate and names no tool (found `{tool}`); use type `data` if `{tool}` proves it"
                        ),
                    );
                }
                if !r.alternative_tools.is_empty() {
                    issues.push(
                        format!("requirements[{i}].alternative_tools"),
                        "only `data` requirements name tools",
                    );
                }
            }
        }
    }
    issues.0
}

fn check_proving_tool(issues: &mut Issues, field: String, tool: &str, tools: &DomainToolInfo) {
    match tools.class_of(tool) {
        Some(ToolClass::ReadOnly) => {}
        None => issues.push(
            field,
            format!(
                "unknown tool `{tool}` for domain `{}` (read-only tools: {})",
                tools.domain,
                tools.known_list(ToolClass::ReadOnly)
            ),
        ),
        Some(class) => issues.push(
            field,
            format!(
                "`{tool}` is a {} tool; a `data` requirement must name a read-only tool (one of: {})",
                class.as_str(),
                tools.known_list(ToolClass::ReadOnly)
            ),
        ),
    }
}

/// Checks parsed general rules.
pub fn validate_general_rules(rules: &GeneralRules) -> Vec<ArtifactIssue> {
    let mut issues = Issues(Vec::new());
    if rules.rules.is_empty() {
        issues.push("rules".into(), "at least one rule is required");
    }
    let mut seen = BTreeMap::new();
    for (i, r) in rules.rules.iter().enumerate() {
        issues.name(format!("rules[{i}].name"), &r.name, &mut seen);
        issues.text(format!("rules[{i}].rule"), &r.rule);
        if let Some(hint) = &r.hint {
            issues.text(format!("rules[{i}].hint"), hint);
        }
    }
    issues.0
}

/// Parses and validates one tool checklist. `file` names the source in errors; its stem (when
/// it ends in `.yaml`) must equal the checklist's `tool`.
pub fn parse_tool_checklist(
    text: &str,
    file: &Path,
    tools: &DomainToolInfo,
) -> Result<ToolChecklist, ArtifactError> {
    let checklist: ToolChecklist = parse_yaml(text, file)?;
    let expected = yaml_stem(file);
    let issues = validate_tool_checklist(&checklist, expected.as_deref(), tools);
    if issues.is_empty() {
        Ok(checklist)
    } else {
        Err(ArtifactError {
            file: file.to_path_buf(),
            issues,
        })
    }
}

/// Parses and validates a `general_rules.yaml` document.
pub fn parse_general_rules(text: &str, file: &Path) -> Result<GeneralRules, ArtifactError> {
    let rules: GeneralRules = parse_yaml(text, file)?;
    let issues = validate_general_rules(&rules);
    if issues.is_empty() {
        Ok(rules)
    } else {
        Err(ArtifactError {
            file: file.to_path_buf(),
            issues,
        })
    }
}

fn yaml_stem(file: &Path) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    name.strip_suffix(".yaml").map(str::to_string)
}

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
    tools: &DomainToolInfo,
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
pub fn tool_checklist_to_yaml(checklist: &ToolChecklist) -> Result<String, String> {
    serde_saphyr::to_string(checklist).map_err(|e| e.to_string())
}

/// Renders general rules as YAML (the file format of `general_rules.yaml`).
pub fn general_rules_to_yaml(rules: &[GeneralRule]) -> Result<String, String> {
    serde_saphyr::to_string(&GeneralRules {
        rules: rules.to_vec(),
    })
    .map_err(|e| e.to_string())
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
        let text =
            tool_checklist_to_yaml(checklist).map_err(|e| ArtifactError::one(&file, None, e))?;
        write(&file, &text)?;
    }
    let file = dir.join(GENERAL_RULES_FILE);
    let text =
        general_rules_to_yaml(&set.general).map_err(|e| ArtifactError::one(&file, None, e))?;
    write(&file, &text)
}

fn write(file: &Path, text: &str) -> Result<(), ArtifactError> {
    std::fs::write(file, text)
        .map_err(|e| ArtifactError::one(file, None, format!("cannot write: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> DomainToolInfo {
        DomainToolInfo::new(
            "airline",
            ["book_reservation", "cancel_reservation"],
            ["get_user_details", "get_reservation_details"],
            ["calculate"],
        )
    }

    #[test]
    fn snake_case() {
        assert!(is_snake_case("obtain_user_id"));
        assert!(is_snake_case("max_5_passengers"));
        assert!(!is_snake_case("ObtainUserId"));
        assert!(!is_snake_case("obtain__id"));
        assert!(!is_snake_case("_x"));
        assert!(!is_snake_case("x_"));
        assert!(!is_snake_case("1x"));
        assert!(!is_snake_case(""));
    }

    #[test]
    fn parses_and_roundtrips() {
        let text = "tool: cancel_reservation\nconstraints:\n  - name: not_flown\n    rule: No segment flown.\nrequirements:\n  - name: reservation_details_retrieved\n    type: data\n    tool: get_reservation_details\n    hint: Look it up.\n  - name: user_confirmation\n    type: procedural\n    hint: The user said yes.\n";
        let c = parse_tool_checklist(text, Path::new("cancel_reservation.yaml"), &info()).unwrap();
        assert_eq!(c.requirements.len(), 2);
        let yaml = tool_checklist_to_yaml(&c).unwrap();
        let back =
            parse_tool_checklist(&yaml, Path::new("cancel_reservation.yaml"), &info()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn unknown_key_names_the_key() {
        let text = "tool: cancel_reservation\nrequirements:\n  - name: a\n    type: procedural\n    hint: h\n    tools: x\n";
        let e =
            parse_tool_checklist(text, Path::new("cancel_reservation.yaml"), &info()).unwrap_err();
        assert_eq!(
            e.fields().collect::<Vec<_>>(),
            ["requirements[0].tools"],
            "{e}"
        );
    }

    #[test]
    fn missing_key_names_the_key() {
        let text = "tool: cancel_reservation\nrequirements:\n  - name: a\n    type: procedural\n";
        let e =
            parse_tool_checklist(text, Path::new("cancel_reservation.yaml"), &info()).unwrap_err();
        assert_eq!(
            e.fields().collect::<Vec<_>>(),
            ["requirements[0].hint"],
            "{e}"
        );
    }

    #[test]
    fn generic_tool_cannot_prove() {
        let text = "tool: cancel_reservation\nrequirements:\n  - name: a\n    type: data\n    tool: calculate\n    hint: h\n";
        let e =
            parse_tool_checklist(text, Path::new("cancel_reservation.yaml"), &info()).unwrap_err();
        assert_eq!(
            e.fields().collect::<Vec<_>>(),
            ["requirements[0].tool"],
            "{e}"
        );
    }

    #[test]
    fn duplicate_names_across_lists() {
        let text = "tool: cancel_reservation\nconstraints:\n  - name: a\n    rule: r\nrequirements:\n  - name: a\n    type: procedural\n    hint: h\n";
        let e =
            parse_tool_checklist(text, Path::new("cancel_reservation.yaml"), &info()).unwrap_err();
        assert_eq!(
            e.fields().collect::<Vec<_>>(),
            ["requirements[0].name"],
            "{e}"
        );
        assert!(e.to_string().contains("constraints[0].name"), "{e}");
    }
}
