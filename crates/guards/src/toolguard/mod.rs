//! ToolGuard: an argument-level guard with no dialogue.
//!
//! Each mutating tool may have a rule file `tasks/<domain>/rules/<tool>.yaml` (schema in
//! [`schema`]): named read-only lookups (read tools called with CEL argument expressions, or
//! agent-database records) and rules, each a CEL `check` over the call's arguments, the
//! lookups and the domain clock, with an optional `when` guard and a violation message. The
//! guard never reads the conversation: whatever the policy conditions on the dialogue (the
//! cancellation reason, the user's confirmation, whether the user asked for compensation) is
//! invisible to it and approximated from records, which is where its over- and under-blocking
//! comes from (see the comments in the airline rule files).
//!
//! Decision on a pending call:
//! * no rule file for the tool → PASS with no requirements;
//! * lookups run in file order on a copy of the current state ([`GuardContext::lookup`]); a
//!   failed lookup binds `null` and is reported in `Decision.info.lookups`;
//! * every rule whose `when` holds is evaluated; each gives one [`RequirementResult`];
//! * any rule NOT MET → BLOCK, remediation = the first (up to three) violation messages.
//!
//! **Evaluation errors** (a null access after a failed lookup, a missing key, a type error)
//! follow the rule's `on_error`: `block` (the default, *fail-closed*: the rule is NOT MET, its
//! reason names the error) or `pass` (*fail-open*: MET, reason names the error). Fail-closed
//! is the default because a guard that cannot establish a precondition of a state change
//! should not let it through; the common cause in practice is a lookup on an id that does not
//! exist, where the tool itself would fail anyway. Every error is listed in
//! `Decision.info.errors` with the policy applied.
//!
//! Clocks (`now`, `today`): airline `2024-05-15T15:00:00`, telecom `2025-02-25T12:08:00`;
//! retail states no time, so `now` and `today` are `null` there.

mod expr;
pub(crate) mod load;
pub(crate) mod schema;

pub(crate) use load::{ArgumentRule, RuleError, RuleSet};
pub(crate) use schema::OnError;

use crate::seam::{Decision, Guard, GuardContext, Ruling};
use cel::{Context, Value};
use expr::{new_scope, to_cel, to_json};
use load::{ITEM, Lookup, LookupSource};
use serde_json::{Map, Value as Json, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tauguard_core::ToolCall;
use tauguard_core::record::RequirementResult;
use tauguard_env::Environment;

/// The fixed "now" of a domain's policy, as an ISO date-time (from the domain registry).
pub(crate) fn domain_clock(domain: &str) -> Option<&'static str> {
    tauguard_env::registry::get(domain).and_then(|d| d.clock())
}

/// A rule file's path as records show it: from `tasks/` on, so records do not depend on where
/// the project sits on a machine (shards from several machines compare equal).
fn project_relative(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.iter().rposition(|p| p == "tasks") {
        Some(i) => parts[i..].join("/"),
        None => path.display().to_string(),
    }
}

/// The argument-level guard.
pub struct ToolGuard {
    rules: RuleSet,
    now: Option<String>,
    records: Mutex<Option<RecordCache>>,
}

impl std::fmt::Debug for ToolGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolGuard")
            .field("domain", &self.rules.domain())
            .field(
                "tools",
                &self
                    .rules
                    .tools()
                    .map(|t| t.tool.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("rules", &self.rules.rule_count())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

/// `record` lookups read the agent database. Dumping a whole database per decision is slow
/// (airline: ~7 MB), so the guard keeps one reference snapshot and its dump, and overlays the
/// records that differ in the live state ([`Environment::changes_since`] compares shared
/// records by pointer, so this is cheap). The reference is rebuilt when the domain changes or
/// the overlay grows large. A cache, not per-simulation state: results never depend on it.
struct RecordCache {
    reference: Box<dyn Environment>,
    dump: Arc<Json>,
}

/// Records changed since the reference snapshot, over its dump.
struct RecordView {
    dump: Arc<Json>,
    changes: Map<String, Json>,
}

/// Overlay size beyond which the reference snapshot is rebuilt.
const MAX_OVERLAY: usize = 256;

impl RecordView {
    fn collection(&self, name: &str) -> Result<Json, String> {
        let base = self
            .dump
            .get(name)
            .ok_or_else(|| format!("the database has no `{name}`"))?;
        if let Some(list) = self.changes.get(&format!("{name}/")) {
            return Ok(list.clone());
        }
        let prefix = format!("{name}/");
        let mut out = base.clone();
        if let Json::Object(o) = &mut out {
            for (k, v) in &self.changes {
                if let Some(key) = k.strip_prefix(&prefix) {
                    if v.is_null() {
                        o.shift_remove(key);
                    } else {
                        o.insert(key.to_string(), v.clone());
                    }
                }
            }
        }
        Ok(out)
    }

    fn record(&self, name: &str, key: &Value) -> Result<Json, String> {
        let base = self
            .dump
            .get(name)
            .ok_or_else(|| format!("the database has no `{name}`"))?;
        let missing = || {
            format!(
                "no `{name}` record with key {}",
                to_json(key).unwrap_or(Json::Null)
            )
        };
        match key {
            Value::String(s) => {
                if let Some(v) = self.changes.get(&format!("{name}/{s}")) {
                    return if v.is_null() {
                        Err(missing())
                    } else {
                        Ok(v.clone())
                    };
                }
                base.get(s.as_str())
                    .filter(|_| base.is_object())
                    .cloned()
                    .ok_or_else(missing)
            }
            Value::Int(i) => {
                let list = self.changes.get(&format!("{name}/")).unwrap_or(base);
                usize::try_from(*i)
                    .ok()
                    .and_then(|i| list.as_array()?.get(i))
                    .cloned()
                    .ok_or_else(missing)
            }
            _ => Err(missing()),
        }
    }
}

/// How one rule came out.
enum Outcome {
    Skipped,
    Met,
    Violated,
    Error(String),
}

impl ToolGuard {
    /// A guard over `rules`, with the clock of the rule set's domain.
    pub fn new(rules: RuleSet) -> ToolGuard {
        let now = domain_clock(rules.domain()).map(str::to_string);
        ToolGuard {
            rules,
            now,
            records: Mutex::new(None),
        }
    }

    /// Loads `<tasks_dir>/<domain>/rules/`.
    pub fn load(tasks_dir: &Path, domain: &str) -> Result<ToolGuard, RuleError> {
        Ok(ToolGuard::new(RuleSet::load_domain(tasks_dir, domain)?))
    }

    /// Overrides the clock (ISO date-time, or `None` for no clock).
    pub fn with_clock(mut self, now: Option<&str>) -> ToolGuard {
        self.now = now.map(str::to_string);
        self
    }

    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    fn record_view(&self, env: &dyn Environment) -> RecordView {
        let mut cache = self.records.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = cache
            .as_ref()
            .filter(|c| c.reference.domain() == env.domain())
        {
            let changes = env.changes_since(c.reference.as_ref()).agent;
            if changes.len() <= MAX_OVERLAY {
                return RecordView {
                    dump: Arc::clone(&c.dump),
                    changes,
                };
            }
        }
        let reference = env.snapshot();
        let dump = Arc::new(reference.agent_db());
        *cache = Some(RecordCache {
            reference,
            dump: Arc::clone(&dump),
        });
        RecordView {
            dump,
            changes: Map::new(),
        }
    }

    /// The decision on one pending call (synchronous; no model is involved).
    pub fn evaluate(&self, ctx: &GuardContext<'_>, call: &ToolCall) -> Decision {
        let Some(tool) = self.rules.get(&call.name) else {
            let mut d = Decision::pass(Vec::new());
            d.info = Some(json!({"guard": "toolguard", "tool": call.name, "rule_file": null}));
            return d;
        };
        let mut scope = new_scope();
        scope.add_variable_from_value("args", to_cel(&Json::Object(call.arguments.clone())));
        let now = self.now.as_deref();
        scope.add_variable_from_value("now", now.map_or(Value::Null, Value::from));
        scope.add_variable_from_value(
            "today",
            now.map_or(Value::Null, |n| Value::from(&n[..n.len().min(10)])),
        );

        let mut fetcher = Fetcher {
            guard: self,
            ctx,
            records: None,
        };
        let mut lookup_info = Map::new();
        let mut lookup_failures: Vec<String> = Vec::new();
        for lk in &tool.lookups {
            let (value, errors, skipped) = fetcher.run(lk, &scope);
            let mut entry = Map::new();
            entry.insert("ok".into(), json!(errors.is_empty()));
            if skipped {
                entry.insert("skipped".into(), json!(true));
            }
            if !errors.is_empty() {
                lookup_failures.push(format!("lookup `{}` failed ({})", lk.name, errors[0]));
                entry.insert("errors".into(), json!(errors));
            }
            lookup_info.insert(lk.name.clone(), Json::Object(entry));
            scope.add_variable_from_value(lk.name.clone(), to_cel(&value));
        }

        let mut requirements = Vec::new();
        let mut skipped = Vec::new();
        let mut violated = Vec::new();
        let mut errors = Vec::new();
        let mut messages: Vec<String> = Vec::new();
        let mut unverified: Vec<(String, String)> = Vec::new();
        for rule in &tool.rules {
            match evaluate_rule(rule, &scope) {
                Outcome::Skipped => skipped.push(rule.name.clone()),
                Outcome::Met => requirements.push(RequirementResult {
                    name: rule.name.clone(),
                    met: true,
                    reason: format!("holds: {}", rule.check_source()),
                }),
                Outcome::Violated => {
                    violated.push(rule.name.clone());
                    messages.push(sentence(&rule.message));
                    requirements.push(RequirementResult {
                        name: rule.name.clone(),
                        met: false,
                        reason: rule.message.clone(),
                    });
                }
                Outcome::Error(e) => {
                    errors.push(
                        json!({"rule": rule.name, "error": e, "on_error": rule.on_error.as_str()}),
                    );
                    let closed = rule.on_error == OnError::Block;
                    let policy = if closed { "fail-closed" } else { "fail-open" };
                    requirements.push(RequirementResult {
                        name: rule.name.clone(),
                        met: !closed,
                        reason: format!("could not be evaluated ({policy}): {e}"),
                    });
                    if closed {
                        violated.push(rule.name.clone());
                        unverified.push((rule.name.clone(), e));
                    }
                }
            }
        }
        if !unverified.is_empty() {
            let names = unverified
                .iter()
                .map(|(n, _)| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let why = match lookup_failures.first() {
                Some(f) => f.clone(),
                None => unverified[0].1.clone(),
            };
            messages.push(sentence(&format!("Could not verify {names}: {why}")));
        }
        let info = json!({
            "guard": "toolguard",
            "tool": tool.tool,
            "rule_file": project_relative(&tool.path),
            "rules_evaluated": requirements.len(),
            "skipped": skipped,
            "violated": violated,
            "lookups": lookup_info,
            "errors": errors,
        });
        let mut decision = if violated.is_empty() {
            Decision::pass(requirements)
        } else {
            let remediation = messages
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
            Decision::block(requirements, remediation)
        };
        decision.info = Some(info);
        decision
    }
}

/// Ends `s` with a full stop unless it already ends a sentence.
fn sentence(s: &str) -> String {
    let s = s.trim();
    if s.ends_with(['.', '!', '?']) {
        s.to_string()
    } else {
        format!("{s}.")
    }
}

fn evaluate_rule(rule: &ArgumentRule, scope: &Context<'_, '_>) -> Outcome {
    if let Some(when) = &rule.when {
        match when.eval_bool(scope) {
            Ok(false) => return Outcome::Skipped,
            Ok(true) => {}
            Err(e) => return Outcome::Error(format!("in `when`: {e}")),
        }
    }
    match rule.check.eval_bool(scope) {
        Ok(true) => Outcome::Met,
        Ok(false) => Outcome::Violated,
        Err(e) => Outcome::Error(e),
    }
}

/// What a call's lookups read from: the guard's record cache, the hook's context, and the
/// record view built on the first record lookup and shared by the rest of the call's lookups.
struct Fetcher<'g, 'c> {
    guard: &'g ToolGuard,
    ctx: &'g GuardContext<'c>,
    records: Option<RecordView>,
}

impl Fetcher<'_, '_> {
    /// Runs one lookup: (bound value, errors, skipped by `when`).
    fn run(&mut self, lk: &Lookup, scope: &Context<'_, '_>) -> (Json, Vec<String>, bool) {
        if let Some(when) = &lk.when {
            match when.eval_bool(scope) {
                Ok(true) => {}
                Ok(false) => return (Json::Null, Vec::new(), true),
                Err(e) => return (Json::Null, vec![format!("in `when`: {e}")], false),
            }
        }
        let Some(for_each) = &lk.for_each else {
            return match self.fetch(&lk.source, scope) {
                Ok(v) => (v, Vec::new(), false),
                Err(e) => (Json::Null, vec![e], false),
            };
        };
        let items = match for_each.eval(scope) {
            Ok(Value::List(items)) => items,
            Ok(other) => {
                return (
                    Json::Null,
                    vec![format!("`for_each` gave a {}, not a list", other.type_of())],
                    false,
                );
            }
            Err(e) => return (Json::Null, vec![format!("in `for_each`: {e}")], false),
        };
        let mut out = Vec::with_capacity(items.len());
        let mut errors = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let mut inner = scope.new_inner_scope();
            inner.add_variable_from_value(ITEM, item.clone());
            match self.fetch(&lk.source, &inner) {
                Ok(v) => out.push(v),
                Err(e) => {
                    errors.push(format!("item {i}: {e}"));
                    out.push(Json::Null);
                }
            }
        }
        (Json::Array(out), errors, false)
    }

    fn fetch(&mut self, source: &LookupSource, scope: &Context<'_, '_>) -> Result<Json, String> {
        match source {
            LookupSource::Tool { tool, args } => {
                let mut call_args = Map::new();
                for (name, e) in args {
                    let v = e
                        .eval(scope)
                        .map_err(|m| format!("argument `{name}`: {m}"))?;
                    call_args.insert(
                        name.clone(),
                        to_json(&v).map_err(|m| format!("argument `{name}`: {m}"))?,
                    );
                }
                self.ctx
                    .lookup(tool, &call_args)
                    .map_err(|e| format!("{tool}: {}", e.content()))
            }
            LookupSource::Record { collection, key } => {
                let (guard, env) = (self.guard, self.ctx.env);
                let view = self.records.get_or_insert_with(|| guard.record_view(env));
                match key {
                    None => view.collection(collection),
                    Some(key) => {
                        let k = key.eval(scope).map_err(|m| format!("`key`: {m}"))?;
                        view.record(collection, &k)
                    }
                }
            }
        }
    }
}

impl Guard for ToolGuard {
    fn name(&self) -> &str {
        "toolguard"
    }

    fn on_mutating_call<'a>(&'a self, ctx: &'a GuardContext<'a>, call: &'a ToolCall) -> Ruling<'a> {
        self.evaluate(ctx, call).into_ruling()
    }
}

#[cfg(test)]
mod tests {
    use super::project_relative;
    use std::path::Path;

    #[test]
    fn rule_files_are_named_from_tasks_on() {
        assert_eq!(
            project_relative(Path::new(
                "/work/x/tasks/airline/rules/cancel_reservation.yaml"
            )),
            "tasks/airline/rules/cancel_reservation.yaml"
        );
        assert_eq!(
            project_relative(Path::new("./tasks/retail/rules/a.yaml")),
            "tasks/retail/rules/a.yaml"
        );
        assert_eq!(project_relative(Path::new("rules/a.yaml")), "rules/a.yaml");
    }
}
