//! Loading and compiling rule files. Every artifact problem is reported at load with the file
//! and the field (`rules[2].check`, `lookups.reservation.tool`, ...): YAML syntax, schema
//! violations (unknown or missing keys, wrong types), a tool that is not a mutating tool of
//! the domain, a lookup tool that is not read-only, CEL that does not parse, and CEL that reads
//! a variable nothing binds.

use super::expr::Expression;
use super::schema::{LookupSpec, OnError, RuleFile};
use crate::catalog::ToolCatalog;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A rule artifact that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("cannot read `{path}`")]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// The file is not YAML at all.
    #[error("`{path}`: `(document)`: YAML does not parse")]
    Yaml {
        path: PathBuf,
        #[source]
        cause: Box<serde_saphyr::Error>,
    },
    /// The YAML does not fit the rule-file schema at `field`.
    #[error("`{path}`: `{field}`")]
    Schema {
        path: PathBuf,
        field: String,
        #[source]
        cause: serde_json::Error,
    },
    #[error("`{path}`: `{field}`: {message}")]
    Invalid {
        path: PathBuf,
        field: String,
        message: String,
    },
}

impl RuleError {
    fn invalid(path: &Path, field: impl Into<String>, message: impl Into<String>) -> RuleError {
        RuleError::Invalid {
            path: path.to_path_buf(),
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn path(&self) -> &Path {
        match self {
            RuleError::Io { path, .. }
            | RuleError::Yaml { path, .. }
            | RuleError::Schema { path, .. }
            | RuleError::Invalid { path, .. } => path,
        }
    }

    /// The offending field (`(document)` for YAML syntax errors), `None` for I/O errors.
    pub fn field(&self) -> Option<&str> {
        match self {
            RuleError::Invalid { field, .. } | RuleError::Schema { field, .. } => Some(field),
            RuleError::Yaml { .. } => Some("(document)"),
            RuleError::Io { .. } => None,
        }
    }
}

/// How one lookup gets its value.
#[derive(Debug)]
pub(crate) enum LookupSource {
    Tool {
        tool: String,
        args: Vec<(String, Expression)>,
    },
    Record {
        collection: String,
        key: Option<Expression>,
    },
}

#[derive(Debug)]
pub(crate) struct Lookup {
    pub name: String,
    pub source: LookupSource,
    pub for_each: Option<Expression>,
    pub when: Option<Expression>,
}

/// One compiled rule.
#[derive(Debug)]
pub struct ArgumentRule {
    pub name: String,
    pub message: String,
    pub on_error: OnError,
    pub policy: Option<String>,
    pub(crate) when: Option<Expression>,
    pub(crate) check: Expression,
}

impl ArgumentRule {
    pub fn check_source(&self) -> &str {
        &self.check.source
    }

    pub fn when_source(&self) -> Option<&str> {
        self.when.as_ref().map(|w| w.source.as_str())
    }
}

/// The compiled rules of one mutating tool.
#[derive(Debug)]
pub struct ToolRules {
    pub tool: String,
    pub path: PathBuf,
    pub description: Option<String>,
    pub(crate) lookups: Vec<Lookup>,
    pub rules: Vec<ArgumentRule>,
}

impl ToolRules {
    /// Lookup names in evaluation order.
    pub fn lookup_names(&self) -> Vec<&str> {
        self.lookups.iter().map(|l| l.name.as_str()).collect()
    }
}

/// Variables bound in every expression.
pub(crate) const BASE_VARIABLES: &[&str] = &["args", "now", "today"];
/// The element variable of a `for_each` lookup.
pub(crate) const ITEM: &str = "item";

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

struct Compiler<'a> {
    path: &'a Path,
}

/// A lookup being compiled: its name and spec, the variables its expressions may name, and the
/// catalogue its tool or collection is checked against.
#[derive(Clone, Copy)]
struct LookupSite<'a> {
    name: &'a str,
    spec: &'a LookupSpec,
    inner: &'a BTreeSet<String>,
    catalog: &'a ToolCatalog,
}

impl LookupSite<'_> {
    /// The field path of one of the lookup's keys, as errors name it.
    fn field(&self, key: &str) -> String {
        format!("lookups.{}.{key}", self.name)
    }
}

impl Compiler<'_> {
    fn expr(
        &self,
        field: &str,
        source: &str,
        known: &BTreeSet<String>,
    ) -> Result<Expression, RuleError> {
        let e = Expression::compile(source).map_err(|m| {
            RuleError::invalid(self.path, field, format!("CEL does not compile: {m}"))
        })?;
        let unknown: Vec<String> = e
            .free_variables()
            .into_iter()
            .filter(|v| !known.contains(v))
            .collect();
        if !unknown.is_empty() {
            return Err(RuleError::invalid(
                self.path,
                field,
                format!(
                    "CEL reads unknown variable(s) {} (bound here: {})",
                    unknown
                        .iter()
                        .map(|u| format!("`{u}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    known.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        Ok(e)
    }

    fn lookup(
        &self,
        name: &str,
        spec: &LookupSpec,
        known: &BTreeSet<String>,
        catalog: &ToolCatalog,
    ) -> Result<Lookup, RuleError> {
        let field = |f: &str| format!("lookups.{name}.{f}");
        let here = format!("lookups.{name}");
        if !is_identifier(name) || CEL_RESERVED.contains(&name) {
            return Err(RuleError::invalid(
                self.path,
                &here,
                "a lookup name must be a CEL identifier",
            ));
        }
        if BASE_VARIABLES.contains(&name) || name == ITEM {
            return Err(RuleError::invalid(
                self.path,
                &here,
                format!("`{name}` is a reserved variable name"),
            ));
        }
        let when = spec
            .when
            .as_deref()
            .map(|w| self.expr(&field("when"), w, known))
            .transpose()?;
        let for_each = spec
            .for_each
            .as_deref()
            .map(|w| self.expr(&field("for_each"), w, known))
            .transpose()?;
        let mut inner = known.clone();
        if for_each.is_some() {
            inner.insert(ITEM.to_string());
        }
        let site = LookupSite {
            name,
            spec,
            inner: &inner,
            catalog,
        };
        let source = match (&spec.tool, &spec.record) {
            (Some(_), Some(_)) => {
                return Err(RuleError::invalid(
                    self.path,
                    &here,
                    "give either `tool` or `record`, not both",
                ));
            }
            (None, None) => {
                return Err(RuleError::invalid(
                    self.path,
                    &here,
                    "missing `tool` or `record`",
                ));
            }
            (Some(tool), None) => self.tool_source(&site, tool)?,
            (None, Some(collection)) => self.record_source(&site, collection)?,
        };
        Ok(Lookup {
            name: name.to_string(),
            source,
            for_each,
            when,
        })
    }

    /// A `tool` lookup: a read-only tool of the domain, with its arguments' expressions
    /// (which may name `item` under `for_each`).
    fn tool_source(&self, site: &LookupSite<'_>, tool: &str) -> Result<LookupSource, RuleError> {
        if site.spec.key.is_some() {
            return Err(RuleError::invalid(
                self.path,
                site.field("key"),
                "`key` belongs to `record` lookups",
            ));
        }
        if !site.catalog.read_only.contains(tool) {
            let why = if site.catalog.mutating.contains(tool) {
                "mutates state; lookups may only call read-only tools".to_string()
            } else {
                format!(
                    "is not a read-only tool of the {} domain",
                    site.catalog.domain
                )
            };
            return Err(RuleError::invalid(
                self.path,
                site.field("tool"),
                format!("`{tool}` {why}"),
            ));
        }
        let args = site
            .spec
            .args
            .iter()
            .map(|(k, src)| {
                Ok((
                    k.clone(),
                    self.expr(&site.field(&format!("args.{k}")), src, site.inner)?,
                ))
            })
            .collect::<Result<Vec<_>, RuleError>>()?;
        Ok(LookupSource::Tool {
            tool: tool.to_string(),
            args,
        })
    }

    /// A `record` lookup: a collection of the domain's database, by an optional key
    /// expression.
    fn record_source(
        &self,
        site: &LookupSite<'_>,
        collection: &str,
    ) -> Result<LookupSource, RuleError> {
        if !site.spec.args.is_empty() {
            return Err(RuleError::invalid(
                self.path,
                site.field("args"),
                "`args` belongs to `tool` lookups",
            ));
        }
        if !site.catalog.collections.contains(collection) {
            return Err(RuleError::invalid(
                self.path,
                site.field("record"),
                format!(
                    "`{collection}` is not a collection of the {} database (known: {})",
                    site.catalog.domain,
                    site.catalog
                        .collections
                        .iter()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let key = site
            .spec
            .key
            .as_deref()
            .map(|k| self.expr(&site.field("key"), k, site.inner))
            .transpose()?;
        Ok(LookupSource::Record {
            collection: collection.to_string(),
            key,
        })
    }
}

/// Parses one rule file's text. `path` is used for messages and to check that the file is
/// named after its tool.
pub fn parse_rule_file(
    path: &Path,
    text: &str,
    catalog: &ToolCatalog,
) -> Result<ToolRules, RuleError> {
    let doc: serde_json::Value = serde_saphyr::from_str(text).map_err(|cause| RuleError::Yaml {
        path: path.to_path_buf(),
        cause: Box::new(cause),
    })?;
    if doc.is_null() {
        return Err(RuleError::invalid(path, "(document)", "empty rule file"));
    }
    let file: RuleFile = serde_path_to_error::deserialize(doc).map_err(|e| {
        let field = e.path().to_string();
        let field = if field == "." {
            "(document)".to_string()
        } else {
            field
        };
        RuleError::Schema {
            path: path.to_path_buf(),
            field,
            cause: e.into_inner(),
        }
    })?;
    let c = Compiler { path };
    if !catalog.mutating.contains(&file.tool) {
        let why = if catalog.read_only.contains(&file.tool) {
            "is read-only; only mutating calls are guarded".to_string()
        } else {
            format!(
                "is not a mutating tool of the {} domain (known: {})",
                catalog.domain,
                catalog
                    .mutating
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(RuleError::invalid(
            path,
            "tool",
            format!("`{}` {why}", file.tool),
        ));
    }
    if let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        && stem != file.tool
    {
        return Err(RuleError::invalid(
            path,
            "tool",
            format!(
                "the file is named `{stem}` but constrains `{}`; name it `{}.yaml`",
                file.tool, file.tool
            ),
        ));
    }
    let mut known: BTreeSet<String> = BASE_VARIABLES.iter().map(|s| s.to_string()).collect();
    let mut lookups = Vec::new();
    for (name, spec) in &file.lookups {
        lookups.push(c.lookup(name, spec, &known, catalog)?);
        known.insert(name.clone());
    }
    if file.rules.is_empty() {
        return Err(RuleError::invalid(
            path,
            "rules",
            "a rule file needs at least one rule",
        ));
    }
    let mut rules = Vec::new();
    let mut names = BTreeSet::new();
    for (i, r) in file.rules.iter().enumerate() {
        let field = |f: &str| format!("rules[{i}].{f}");
        if r.name.trim().is_empty() {
            return Err(RuleError::invalid(path, field("name"), "empty rule name"));
        }
        if !names.insert(r.name.clone()) {
            return Err(RuleError::invalid(
                path,
                field("name"),
                format!("duplicate rule name `{}`", r.name),
            ));
        }
        if r.message.trim().is_empty() {
            return Err(RuleError::invalid(
                path,
                field("message"),
                "empty violation message",
            ));
        }
        let when = r
            .when
            .as_deref()
            .map(|w| c.expr(&field("when"), w, &known))
            .transpose()?;
        let check = c.expr(&field("check"), &r.check, &known)?;
        rules.push(ArgumentRule {
            name: r.name.clone(),
            message: r.message.trim().to_string(),
            on_error: r.on_error,
            policy: r.policy.clone(),
            when,
            check,
        });
    }
    Ok(ToolRules {
        tool: file.tool,
        path: path.to_path_buf(),
        description: file.description,
        lookups,
        rules,
    })
}

/// The compiled rule files of one domain, by tool.
#[derive(Debug)]
pub struct RuleSet {
    domain: String,
    tools: BTreeMap<String, ToolRules>,
}

impl RuleSet {
    /// An empty rule set (every call passes).
    pub fn empty(domain: &str) -> RuleSet {
        RuleSet {
            domain: domain.to_string(),
            tools: BTreeMap::new(),
        }
    }

    /// Loads every `*.yaml` / `*.yml` file of `dir` (one per tool). A missing directory is an
    /// error; an empty one gives an empty rule set.
    pub fn load_dir(dir: &Path, catalog: &ToolCatalog) -> Result<RuleSet, RuleError> {
        let entries = std::fs::read_dir(dir).map_err(|cause| RuleError::Io {
            path: dir.to_path_buf(),
            cause,
        })?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
            })
            .collect();
        paths.sort();
        let mut set = RuleSet::empty(&catalog.domain);
        for path in paths {
            let text = std::fs::read_to_string(&path).map_err(|cause| RuleError::Io {
                path: path.clone(),
                cause,
            })?;
            let rules = parse_rule_file(&path, &text, catalog)?;
            if let Some(first) = set.tools.get(&rules.tool) {
                return Err(RuleError::invalid(
                    &path,
                    "tool",
                    format!(
                        "`{}` already has a rule file: `{}`",
                        rules.tool,
                        first.path.display()
                    ),
                ));
            }
            set.tools.insert(rules.tool.clone(), rules);
        }
        Ok(set)
    }

    /// Loads `<tasks_dir>/<domain>/rules/` with the domain's built-in tool inventory.
    pub fn load_domain(tasks_dir: &Path, domain: &str) -> Result<RuleSet, RuleError> {
        let dir = tasks_dir.join(domain).join("rules");
        let catalog = ToolCatalog::builtin(domain).ok_or_else(|| {
            RuleError::invalid(
                &dir,
                "(domain)",
                format!(
                    "unknown domain `{domain}` (known: {})",
                    tauguard_env::registry::known_names()
                ),
            )
        })?;
        RuleSet::load_dir(&dir, &catalog)
    }

    pub fn domain(&self) -> &str {
        &self.domain
    }

    pub fn get(&self, tool: &str) -> Option<&ToolRules> {
        self.tools.get(tool)
    }

    /// Constrained tools, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolRules> {
        self.tools.values()
    }

    /// Total number of rules across tools.
    pub fn rule_count(&self) -> usize {
        self.tools.values().map(|t| t.rules.len()).sum()
    }
}
