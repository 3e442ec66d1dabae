//! Parsing and validation of checklist artifacts: every problem is reported with the file and
//! the field path (`requirements[1].tool`), so an author or a repair prompt can act on it.

use super::{GeneralRules, RequirementType, StatedRule, ToolChecklist};
use crate::catalog::{ToolCatalog, ToolClass};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

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
    pub(super) fn one(
        file: &Path,
        field: Option<String>,
        message: impl Into<String>,
    ) -> ArtifactError {
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
pub(crate) fn is_snake_case(name: &str) -> bool {
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

    /// A list of stated rules (a checklist's constraints, the general rules) under `list`:
    /// names snake_case and unique among `seen`, rule and hint texts not empty.
    fn stated_rules(
        &mut self,
        list: &str,
        rules: &[StatedRule],
        seen: &mut BTreeMap<String, String>,
    ) {
        for (i, r) in rules.iter().enumerate() {
            self.name(format!("{list}[{i}].name"), &r.name, seen);
            self.text(format!("{list}[{i}].rule"), &r.rule);
            if let Some(hint) = &r.hint {
                self.text(format!("{list}[{i}].hint"), hint);
            }
        }
    }
}

/// Checks a parsed tool checklist against the domain's tools. `expected_tool` is the name the
/// file promises (its stem), when there is one.
pub(crate) fn validate_tool_checklist(
    checklist: &ToolChecklist,
    expected_tool: Option<&str>,
    tools: &ToolCatalog,
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
    issues.stated_rules("constraints", &checklist.constraints, &mut seen);
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

fn check_proving_tool(issues: &mut Issues, field: String, tool: &str, tools: &ToolCatalog) {
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
pub(crate) fn validate_general_rules(rules: &GeneralRules) -> Vec<ArtifactIssue> {
    let mut issues = Issues(Vec::new());
    if rules.rules.is_empty() {
        issues.push("rules".into(), "at least one rule is required");
    }
    let mut seen = BTreeMap::new();
    issues.stated_rules("rules", &rules.rules, &mut seen);
    issues.0
}

/// Parses and validates one tool checklist. `file` names the source in errors; its stem (when
/// it ends in `.yaml`) must equal the checklist's `tool`.
pub fn parse_tool_checklist(
    text: &str,
    file: &Path,
    tools: &ToolCatalog,
) -> Result<ToolChecklist, ArtifactError> {
    let checklist: ToolChecklist = parse_yaml(text, file)?;
    let expected = yaml_stem(file);
    let issues = validate_tool_checklist(&checklist, expected.as_deref(), tools);
    accepted(checklist, file, issues)
}

/// A parsed artifact if validation found nothing, else every issue against its file.
fn accepted<T>(artifact: T, file: &Path, issues: Vec<ArtifactIssue>) -> Result<T, ArtifactError> {
    if issues.is_empty() {
        Ok(artifact)
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
    accepted(rules, file, issues)
}

fn yaml_stem(file: &Path) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    name.strip_suffix(".yaml").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policyguard::checklist::tool_checklist_to_yaml;

    fn info() -> ToolCatalog {
        ToolCatalog::new(
            "airline",
            ["book_reservation", "cancel_reservation"],
            ["get_user_details", "get_reservation_details"],
            ["calculate"],
        )
    }

    /// The checklist `text` is refused, on `field` alone.
    fn rejected_at(text: &str, field: &str) -> ArtifactError {
        let e =
            parse_tool_checklist(text, Path::new("cancel_reservation.yaml"), &info()).unwrap_err();
        assert_eq!(e.fields().collect::<Vec<_>>(), [field], "{e}");
        e
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

    /// An unknown key, a missing key, and a generic tool named as proof: each error names the
    /// key at fault.
    #[test]
    fn a_rejected_key_is_named() {
        let cases = [
            (
                "tool: cancel_reservation\nrequirements:\n  - name: a\n    type: procedural\n    hint: h\n    tools: x\n",
                "requirements[0].tools",
            ),
            (
                "tool: cancel_reservation\nrequirements:\n  - name: a\n    type: procedural\n",
                "requirements[0].hint",
            ),
            (
                "tool: cancel_reservation\nrequirements:\n  - name: a\n    type: data\n    tool: calculate\n    hint: h\n",
                "requirements[0].tool",
            ),
        ];
        for (text, field) in cases {
            rejected_at(text, field);
        }
    }

    #[test]
    fn duplicate_names_across_lists() {
        let text = "tool: cancel_reservation\nconstraints:\n  - name: a\n    rule: r\nrequirements:\n  - name: a\n    type: procedural\n    hint: h\n";
        let e = rejected_at(text, "requirements[0].name");
        assert!(e.to_string().contains("constraints[0].name"), "{e}");
    }
}
