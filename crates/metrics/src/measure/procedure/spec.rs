//! The procedure specification of a domain (`tasks/<domain>/procedure.toml`): the atomic
//! requirements of its policy, each with the passage it cites, its level and the check that
//! decides it from a trajectory. The caller reads the file and hands its text here, so metrics
//! still reads records only; nothing in this module knows a domain.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The schema tag every procedure file carries.
pub(crate) const PROCEDURE_SCHEMA: &str = "tauguard.procedure/1";

/// A requirement's level: what kind of deviation breaking it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// Argument: a call's arguments are wrong.
    A,
    /// Process: a step the policy requires is missing (identity, read, confirmation, denial).
    P,
    /// Workflow: events happen out of the policy's order.
    W,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::A, Level::P, Level::W];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::A => "A",
            Level::P => "P",
            Level::W => "W",
        }
    }
}

/// Where a spec came from. Every spec says it was written by hand, by whom, from which policy
/// files and sections, and when; none claims a compiled origin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Always `hand-written`.
    pub origin: String,
    pub authors: String,
    /// Policy files of the data directory's domain folder the requirements cite.
    pub policy_files: Vec<String>,
    /// The policy sections the requirements were written from (headings, verbatim).
    pub sections: Vec<String>,
    /// `YYYY-MM-DD`.
    pub date: String,
}

/// Which tasks a requirement applies to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AppliesTo {
    #[default]
    AllTasks,
    /// Tasks whose correct behaviour is refusal (the record's slice is PV).
    RefusalTasks,
}

/// A dialogue predicate judged by a reader of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Predicate {
    /// The agent established who the user is.
    IdentityObtained,
    /// The agent conveyed a piece of information (a denial, a fee, a follow-up step).
    InformationConveyed,
    /// The agent obtained the user's reason before acting.
    ReasonObtained,
    /// The agent collected details the action needs from the user.
    InformationObtained,
    /// A condition of the policy on the domain's state held (read from the tool results).
    RuleApplies,
}

/// How a requirement is checked from a trajectory. Tool lists name the domain's tools; `*`
/// alone stands for every guarded tool of the spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// Before each call of `tools`, a successful call of one of the spec's identity tools.
    IdentityBefore { tools: Vec<String> },
    /// Before each call of `tools`, a successful call of one of `reads` whose arguments
    /// named in `link` (call argument → read argument) hold the call's values; with `field`,
    /// that read's result has `field` (dotted path) equal to one of `one_of`.
    ReadBefore {
        tools: Vec<String>,
        reads: Vec<String>,
        #[serde(default)]
        link: BTreeMap<String, String>,
        #[serde(default)]
        field: Option<String>,
        #[serde(default)]
        one_of: Vec<Value>,
    },
    /// Explicit confirmation: since the previous guarded call, the last agent message asking
    /// for confirmation names the values of `arguments` the call has (none listed: no value
    /// required), and the user's next message is an explicit yes (the deterministic matcher).
    ConfirmBefore {
        tools: Vec<String>,
        #[serde(default)]
        arguments: Vec<String>,
    },
    /// The call is the action confirmed: when a confirmation request precedes it (since the
    /// previous guarded call), every value of `arguments` (none listed: all) appears in it.
    ConfirmedArguments {
        tools: Vec<String>,
        #[serde(default)]
        arguments: Vec<String>,
    },
    /// Each value (string or number leaf) of `arguments` (`a` or `a[].b`) of a call of
    /// `tools` appears in an earlier user message or successful tool result: the agent did
    /// not make it up.
    GroundedArguments {
        tools: Vec<String>,
        arguments: Vec<String>,
    },
    /// In a call of `tools`, the list at `path` (`a` or `a[].b`) has at most `max` elements,
    /// counting only string elements starting with `prefix` when given.
    ArgumentLimit {
        tools: Vec<String>,
        path: String,
        #[serde(default)]
        prefix: Option<String>,
        max: usize,
    },
    /// In a call of `tools`, the value at `path` (`a` or `a[].b`) is one of `one_of`.
    ArgumentIn {
        tools: Vec<String>,
        path: String,
        one_of: Vec<Value>,
    },
    /// At most one successful call of `tools` per value of `argument`.
    OncePer {
        tools: Vec<String>,
        argument: String,
    },
    /// No agent message both calls a tool and talks, or calls two tools.
    OneActionPerMessage,
    /// The agent's next message after a call of `tool` contains `text`.
    AfterCallSays { tool: String, text: String },
    /// No guarded call executes (for requirements applying to refusal tasks).
    NoGuardedCall,
    /// Every call of `then` comes after some call of `first`.
    Order {
        first: Vec<String>,
        then: Vec<String>,
    },
    /// Every call of `tools` is followed, later in the trajectory, by a call of `then`.
    FollowedBy {
        tools: Vec<String>,
        then: Vec<String>,
    },
    /// In a call of `tools`, the number at `path` is at most `max`.
    ArgumentMax {
        tools: Vec<String>,
        path: String,
        max: f64,
    },
    /// In a call of `tools`, the string at `path` decodes as a JSON object: arguments a tool
    /// takes as JSON text (banking's `call_discoverable_agent_tool`) are well-formed.
    JsonObject { tools: Vec<String>, path: String },
    /// A dialogue predicate for an NL judge. `before` = it must hold before each call of
    /// those tools (none: anywhere in the conversation); `cues` = lowercase phrases the
    /// offline stand-in looks for in the agent's messages (none: the stand-in cannot judge).
    Dialogue {
        predicate: Predicate,
        question: String,
        #[serde(default)]
        before: Vec<String>,
        #[serde(default)]
        cues: Vec<String>,
    },
}

impl Check {
    /// The kind's name as the file spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::IdentityBefore { .. } => "identity_before",
            Check::ReadBefore { .. } => "read_before",
            Check::ConfirmBefore { .. } => "confirm_before",
            Check::ConfirmedArguments { .. } => "confirmed_arguments",
            Check::GroundedArguments { .. } => "grounded_arguments",
            Check::ArgumentLimit { .. } => "argument_limit",
            Check::ArgumentIn { .. } => "argument_in",
            Check::OncePer { .. } => "once_per",
            Check::OneActionPerMessage => "one_action_per_message",
            Check::AfterCallSays { .. } => "after_call_says",
            Check::NoGuardedCall => "no_guarded_call",
            Check::Order { .. } => "order",
            Check::FollowedBy { .. } => "followed_by",
            Check::ArgumentMax { .. } => "argument_max",
            Check::JsonObject { .. } => "json_object",
            Check::Dialogue { .. } => "dialogue",
        }
    }

    /// Tool names the check names (for validation against the spec's tool lists, and for
    /// which calls a fault validation scores).
    pub fn tools(&self) -> Vec<&str> {
        fn list(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        match self {
            Check::IdentityBefore { tools }
            | Check::ConfirmBefore { tools, .. }
            | Check::ConfirmedArguments { tools, .. }
            | Check::GroundedArguments { tools, .. }
            | Check::ArgumentLimit { tools, .. }
            | Check::ArgumentIn { tools, .. }
            | Check::OncePer { tools, .. }
            | Check::ArgumentMax { tools, .. }
            | Check::JsonObject { tools, .. } => list(tools),
            Check::ReadBefore { tools, reads, .. } => [list(tools), list(reads)].concat(),
            Check::AfterCallSays { tool, .. } => vec![tool.as_str()],
            Check::Order { first, then } => [list(first), list(then)].concat(),
            Check::FollowedBy { tools, then } => [list(tools), list(then)].concat(),
            Check::Dialogue { before, .. } => list(before),
            Check::OneActionPerMessage | Check::NoGuardedCall => Vec::new(),
        }
    }
}

/// One atomic requirement of the policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub id: String,
    pub level: Level,
    /// The policy file and section heading the passage is in.
    pub file: String,
    pub section: String,
    /// A verbatim phrase of the passage (a test finds it in the policy file).
    pub passage: String,
    #[serde(default)]
    pub applies_to: AppliesTo,
    pub check: Check,
}

/// A domain's procedure specification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcedureSpec {
    pub schema: String,
    pub domain: String,
    pub provenance: Provenance,
    /// The tools whose calls change the domain's state: the guarded action class.
    pub guarded: Vec<String>,
    /// Tools whose success establishes the user's identity.
    pub identity_tools: Vec<String>,
    /// Every other agent tool the requirements name.
    #[serde(default)]
    pub reads: Vec<String>,
    #[serde(rename = "requirement")]
    pub requirements: Vec<Requirement>,
}

/// A procedure file that cannot be used, naming the file; its problem names the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}")]
pub struct SpecError {
    pub file: String,
    #[source]
    pub problem: SpecProblem,
}

/// Why a procedure file cannot be used: TOML that does not parse into a spec, or a finding
/// about the spec it holds.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecProblem {
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    #[error("`schema` is `{0}`, expected `{PROCEDURE_SCHEMA}`")]
    Schema(String),
    #[error("`provenance.origin` is `{0}`: procedure specs are hand-written")]
    NotHandWritten(String),
    #[error("requirement[{index}] `{id}`: duplicate id")]
    DuplicateId { index: usize, id: String },
    #[error("requirement `{0}`: empty `passage`")]
    EmptyPassage(String),
    /// A check names a tool the spec does not list.
    #[error(
        "requirement `{id}`: check names tool `{tool}`, which is in none of `guarded`, \
         `identity_tools`, `reads`"
    )]
    UnknownTool { id: String, tool: String },
}

impl ProcedureSpec {
    /// Parses and checks a procedure file's text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<ProcedureSpec, SpecError> {
        let err = |problem: SpecProblem| SpecError {
            file: file.to_string(),
            problem,
        };
        let spec: ProcedureSpec = toml::from_str(text).map_err(|e| err(e.into()))?;
        if spec.schema != PROCEDURE_SCHEMA {
            return Err(err(SpecProblem::Schema(spec.schema.clone())));
        }
        if spec.provenance.origin != "hand-written" {
            return Err(err(SpecProblem::NotHandWritten(
                spec.provenance.origin.clone(),
            )));
        }
        let known = |t: &str| {
            t == "*"
                || spec.guarded.iter().any(|g| g == t)
                || spec.identity_tools.iter().any(|g| g == t)
                || spec.reads.iter().any(|g| g == t)
        };
        let mut seen = std::collections::HashSet::new();
        for (i, r) in spec.requirements.iter().enumerate() {
            if !seen.insert(r.id.as_str()) {
                return Err(err(SpecProblem::DuplicateId {
                    index: i,
                    id: r.id.clone(),
                }));
            }
            if r.passage.trim().is_empty() {
                return Err(err(SpecProblem::EmptyPassage(r.id.clone())));
            }
            if let Some(t) = r.check.tools().into_iter().find(|t| !known(t)) {
                return Err(err(SpecProblem::UnknownTool {
                    id: r.id.clone(),
                    tool: t.to_string(),
                }));
            }
        }
        Ok(spec)
    }

    /// `tools` with `*` expanded to the guarded tools.
    pub(crate) fn expand<'a>(&'a self, tools: &'a [String]) -> Vec<&'a str> {
        let mut out = Vec::new();
        for t in tools {
            if t == "*" {
                out.extend(self.guarded.iter().map(String::as_str));
            } else {
                out.push(t.as_str());
            }
        }
        out
    }

    /// Requirements per level.
    pub fn level_counts(&self) -> BTreeMap<Level, usize> {
        let mut out = BTreeMap::new();
        for r in &self.requirements {
            *out.entry(r.level).or_default() += 1;
        }
        out
    }
}

/// The procedure specs of every domain the caller found, by domain name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcedureBook {
    pub specs: BTreeMap<String, ProcedureSpec>,
}

impl ProcedureBook {
    pub fn get(&self, domain: &str) -> Option<&ProcedureSpec> {
        self.specs.get(domain)
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}

/// A spec's requirement counts per level with their shares, for the table beside the papers'
/// figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelShares {
    pub domain: String,
    pub requirements: usize,
    pub counts: BTreeMap<Level, usize>,
}

impl LevelShares {
    pub fn of(spec: &ProcedureSpec) -> LevelShares {
        LevelShares {
            domain: spec.domain.clone(),
            requirements: spec.requirements.len(),
            counts: spec.level_counts(),
        }
    }

    /// The share of `level` in [0, 1].
    pub fn share(&self, level: Level) -> f64 {
        let n = self.counts.get(&level).copied().unwrap_or(0);
        n as f64 / self.requirements.max(1) as f64
    }
}
