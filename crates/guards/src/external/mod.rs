//! Guards written outside tauguard, in any language, reached over the external guard protocol
//! (`docs/guard-protocol.md`). An [`ExternalGuard`] implements the same [`Guard`] seam as every
//! built-in guard, so its records have the same shape; what differs is only where the
//! decision is made, and the cell's provenance says so: the command, the protocol version and
//! the version string the guard reports in its `hello`.
//!
//! Every fault of the exchange (timeout, crash, a reply that is not JSON, out of schema or for
//! another id) becomes the configured fail mode's decision with a typed cause and the raw
//! reply in the event ([`fault`]); no fault ends a simulation, so none loses a record.

pub mod conformance;
pub(crate) mod fault;
pub(crate) mod http;
pub(crate) mod protocol;
mod start_error;
pub(crate) mod stdio;

use crate::catalog::{ToolCatalog, ToolClass};
use crate::policyguard::FailMode;
use crate::seam::SessionEnd;
use crate::{Advice, Decision, Guard, GuardContext, GuardState, Guidance, Ruling};
use fault::Fault;
use http::HttpLink;
use protocol::Hello;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
pub use start_error::{ExternalStartError, GreetingError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use stdio::{Incoming, StdioProcess};
use tauguard_core::ToolCall;
use tauguard_core::record::{FailCause, GuideEvent, GuideTrigger};
use tauguard_env::DomainData;

/// The configuration name records carry for every external guard (the entry's own name is
/// `guard.name` of the cell, as for any named entry).
pub(crate) const EXTERNAL: &str = "external";

/// Default seconds a guard has to answer one request.
pub(crate) const DEFAULT_TIMEOUT_SECS: f64 = 30.0;
/// Default restarts of a crashed guard process in one run.
pub(crate) const DEFAULT_MAX_RESTARTS: u32 = 3;

/// What the agent reads when a call is blocked because the guard gave no usable answer.
pub(crate) const FAIL_CLOSED_MESSAGE: &str = "The policy guard could not reach a verdict on this call, so it was not executed. \
Please re-check the policy requirements for this action and try again.";

/// `external = { ... }` of a `[[grid.guards]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSpec {
    /// The program and its arguments, started once per run (JSON lines over stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// An HTTP endpoint speaking the same messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Seconds one request may take; default [`DEFAULT_TIMEOUT_SECS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<f64>,
    /// Restarts of a crashed process per run; default [`DEFAULT_MAX_RESTARTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_restarts: Option<u32>,
}

impl ExternalSpec {
    /// Checks the table; the message names the key under `external`.
    pub fn validate(&self) -> Result<(), String> {
        let transport: Result<(), String> = match (&self.command, &self.url) {
            (Some(c), None) if c.is_empty() || c[0].is_empty() => {
                Err("`command`: name the program to start, e.g. [\"python3\", \"guard.py\"]".into())
            }
            (Some(_), None) => Ok(()),
            (None, Some(u)) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                Err(format!("`url`: `{u}` is not an http:// or https:// URL"))
            }
            (None, Some(_)) => Ok(()),
            (Some(_), Some(_)) => Err("set one of `command` and `url`, not both".into()),
            (None, None) => Err("set `command` (the guard program to start)".into()),
        };
        transport?;
        match self.timeout_secs {
            Some(t) if !(t.is_finite() && t > 0.0) => Err(format!(
                "`timeout_secs`: must be a positive number of seconds, got {t}"
            )),
            _ => Ok(()),
        }
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }
}

/// How a guard is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum ExternalSource {
    Command(Vec<String>),
    Url(String),
}

/// Where an external guard's decisions come from, as records and the cell hash name it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalProvenance {
    pub source: ExternalSource,
    /// The guard's own name and version, from its `hello`.
    pub name: String,
    pub version: String,
    pub timeout_secs: f64,
}

impl ExternalProvenance {
    /// The command as one string, or the URL (what `info.external.source` shows).
    pub fn source(&self) -> String {
        match &self.source {
            ExternalSource::Command(c) => c.join(" "),
            ExternalSource::Url(u) => u.clone(),
        }
    }

    /// The cell settings of the guard: flat keys under `guard.external`.
    pub fn cell_settings(&self) -> Vec<(String, Value)> {
        let source = match &self.source {
            ExternalSource::Command(c) => ("guard.external.command".to_string(), json!(c)),
            ExternalSource::Url(u) => ("guard.external.url".to_string(), json!(u)),
        };
        vec![
            source,
            (
                "guard.external.protocol".into(),
                json!(protocol::PROTOCOL_VERSION),
            ),
            ("guard.external.reported_name".into(), json!(self.name)),
            ("guard.external.version".into(), json!(self.version)),
            (
                "guard.external.timeout_secs".into(),
                json!(self.timeout_secs),
            ),
        ]
    }
}

/// Processes shared by every cell of a run naming the same command: one process per run.
fn processes() -> &'static Mutex<HashMap<String, Weak<StdioProcess>>> {
    static P: OnceLock<Mutex<HashMap<String, Weak<StdioProcess>>>> = OnceLock::new();
    P.get_or_init(Default::default)
}

/// The running process of `spec`, started when no cell holds one yet.
fn process_of(
    spec: &ExternalSpec,
    command: &[String],
) -> Result<Arc<StdioProcess>, ExternalStartError> {
    let key = serde_json::to_string(spec).expect("specs serialise");
    let mut map = processes().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = map.get(&key).and_then(Weak::upgrade) {
        return Ok(p);
    }
    let p = Arc::new(StdioProcess::start(
        command.to_vec(),
        spec.timeout(),
        spec.max_restarts.unwrap_or(DEFAULT_MAX_RESTARTS),
    )?);
    map.retain(|_, w| w.strong_count() > 0);
    map.insert(key, Arc::downgrade(&p));
    Ok(p)
}

/// How requests reach the guard.
#[derive(Debug)]
enum Link {
    Stdio(Arc<StdioProcess>),
    Http(Arc<HttpLink>),
}

impl Link {
    fn hello(&self) -> &Hello {
        match self {
            Link::Stdio(p) => p.hello(),
            Link::Http(h) => h.hello(),
        }
    }

    fn next_id(&self, prefix: &str) -> String {
        match self {
            Link::Stdio(p) => p.next_id(prefix),
            Link::Http(h) => h.next_id(prefix),
        }
    }

    fn restarts(&self) -> u32 {
        match self {
            Link::Stdio(p) => p.restarts(),
            Link::Http(_) => 0,
        }
    }
}

/// A guard behind the external guard protocol.
#[derive(Debug)]
pub struct ExternalGuard {
    link: Link,
    provenance: ExternalProvenance,
    fail_mode: FailMode,
    /// The domain's agent tools with their class and schema, sent at every session start.
    tools: Value,
    timeout: Duration,
}

/// The guard's state for one simulation: its session id, and the process generation that
/// was told of it (a restarted process is told again).
#[derive(Default)]
struct Session {
    id: Option<String>,
    generation: u64,
}

impl ExternalGuard {
    /// Starts (or joins) the guard's process and greets it.
    pub fn build(
        spec: &ExternalSpec,
        fail_mode: FailMode,
        data: &DomainData,
    ) -> Result<ExternalGuard, ExternalStartError> {
        spec.validate().map_err(ExternalStartError::Spec)?;
        let (link, source) = match (&spec.command, &spec.url) {
            (Some(command), _) => (
                Link::Stdio(process_of(spec, command)?),
                ExternalSource::Command(command.clone()),
            ),
            (None, Some(url)) => (
                Link::Http(Arc::new(HttpLink::connect(url, spec.timeout())?)),
                ExternalSource::Url(url.clone()),
            ),
            (None, None) => unreachable!("validated"),
        };
        let hello = link.hello().clone();
        let catalog = ToolCatalog::of(data.def);
        let tools: Vec<Value> = data
            .tool_schemas
            .assistant
            .iter()
            .map(|t| {
                let class = catalog.class_of(&t.name).map_or("other", ToolClass::key);
                json!({"name": t.name, "kind": class, "description": t.description,
                    "parameters": t.parameters})
            })
            .collect();
        Ok(ExternalGuard {
            link,
            provenance: ExternalProvenance {
                source,
                name: hello.name,
                version: hello.version,
                timeout_secs: spec.timeout().as_secs_f64(),
            },
            fail_mode,
            tools: Value::Array(tools),
            timeout: spec.timeout(),
        })
    }

    pub fn provenance(&self) -> &ExternalProvenance {
        &self.provenance
    }

    /// The session start message for `ctx`'s simulation.
    fn start_message(&self, ctx: &GuardContext<'_>, session: &str) -> Value {
        json!({"type": "start", "session": session, "domain": ctx.domain, "policy": ctx.policy,
            "tools": self.tools, "task_id": ctx.task_id, "trial": ctx.trial, "seed": ctx.seed})
    }

    /// Sends request `kind` with `body` for `ctx`'s session (starting it first where the
    /// process has not heard of it), serves the guard's lookups, and returns the reply and
    /// how many lookups it made.
    async fn exchange(
        &self,
        ctx: &GuardContext<'_>,
        kind: &str,
        mut body: Map<String, Value>,
    ) -> Result<(Value, u32), Fault> {
        let id = self.link.next_id("r");
        let session = ctx
            .state
            .with(|s: &mut Session| s.id.get_or_insert_with(|| self.link.next_id("s")).clone());
        body.insert("type".into(), json!(kind));
        body.insert("id".into(), json!(id));
        body.insert("session".into(), json!(session));
        body.insert(
            "history".into(),
            serde_json::to_value(ctx.history).expect("messages serialise"),
        );
        let msg = Value::Object(body);
        match &self.link {
            Link::Stdio(p) => self.over_stdio(p, ctx, &id, &session, &msg).await,
            Link::Http(h) => self.over_http(h, ctx, &id, &session, &msg).await,
        }
    }

    async fn over_http(
        &self,
        link: &HttpLink,
        ctx: &GuardContext<'_>,
        id: &str,
        session: &str,
        msg: &Value,
    ) -> Result<(Value, u32), Fault> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        let left = || deadline.saturating_duration_since(tokio::time::Instant::now());
        let told = ctx
            .state
            .with(|s: &mut Session| std::mem::replace(&mut s.generation, 1) == 1);
        if !told
            && let Err(f) = link
                .exchange(&self.start_message(ctx, session), left())
                .await
        {
            ctx.state.with(|s: &mut Session| s.generation = 0);
            return Err(f);
        }
        let (mut v, mut raw) = link.exchange(msg, left()).await?;
        let mut lookups = 0;
        loop {
            match step(ctx, v, raw, id, &mut lookups)? {
                Step::Reply(v) => return Ok((v, lookups)),
                Step::Answer(answer) => (v, raw) = link.exchange(&answer, left()).await?,
            }
        }
    }

    async fn over_stdio(
        &self,
        process: &StdioProcess,
        ctx: &GuardContext<'_>,
        id: &str,
        session: &str,
        msg: &Value,
    ) -> Result<(Value, u32), Fault> {
        let first = |generation: u64| {
            let told = ctx.state.with(|s: &mut Session| {
                std::mem::replace(&mut s.generation, generation) == generation
            });
            if told {
                Vec::new()
            } else {
                vec![self.start_message(ctx, session)]
            }
        };
        let mut open = process.open(id, first, msg)?;
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut lookups = 0;
        loop {
            let incoming = match tokio::time::timeout_at(deadline, open.rx.recv()).await {
                Err(_) => {
                    return Err(Fault::Timeout {
                        secs: self.timeout.as_secs_f64(),
                        orphans: open.orphans(),
                    });
                }
                Ok(None) => {
                    return Err(Fault::Crash {
                        detail: "the guard process went away".into(),
                    });
                }
                Ok(Some(i)) => i,
            };
            match incoming {
                Incoming::Closed(detail) => return Err(Fault::Crash { detail }),
                Incoming::Malformed(raw) => return Err(Fault::Malformed { raw }),
                Incoming::Unclaimed(raw, open) => return Err(Fault::Unclaimed { raw, open }),
                Incoming::Message(v, raw) => match step(ctx, v, raw, id, &mut lookups)? {
                    Step::Reply(v) => return Ok((v, lookups)),
                    Step::Answer(answer) => process
                        .send(&answer)
                        .map_err(|detail| Fault::Crash { detail })?,
                },
            }
        }
    }

    fn fail_decision(&self, fault: &Fault) -> Decision {
        let mut d = match self.fail_mode {
            FailMode::Open => Decision::pass(Vec::new()),
            FailMode::Closed => Decision::block(Vec::new(), FAIL_CLOSED_MESSAGE),
        };
        d.fail = Some(fault.cause());
        d.info = Some(fault.info(&self.provenance));
        d
    }

    /// `info` of a judged event: where it came from and what the guard added.
    fn judged_info(&self, lookups: u32, restarts: u32, extra: Option<Value>) -> Value {
        let mut e = json!({"source": self.provenance.source(), "version": self.provenance.version,
            "lookups": lookups});
        if restarts > 0 {
            e["restarts"] = json!(restarts);
        }
        if let Some(x) = extra {
            e["guard_info"] = x;
        }
        json!({ "external": e })
    }
}

/// What a message from the guard is to the open request.
enum Step {
    /// Its reply (id checked).
    Reply(Value),
    /// The answer to a lookup it asked for, to send back.
    Answer(Value),
}

/// Reads message `v` (as received, `raw`) for the open request `id`: a lookup for it is run on
/// `ctx`'s state and counted; anything else is the reply.
fn step(
    ctx: &GuardContext<'_>,
    v: Value,
    raw: String,
    id: &str,
    lookups: &mut u32,
) -> Result<Step, Fault> {
    let is_lookup = v.get("type").and_then(Value::as_str) == Some("lookup")
        && v.get("request").and_then(Value::as_str) == Some(id);
    if !is_lookup {
        return check_id(v, raw, id).map(Step::Reply);
    }
    *lookups += 1;
    let ask = protocol::parse_lookup(&v).map_err(|problem| Fault::OutOfSchema { raw, problem })?;
    let result = ctx
        .lookup(&ask.tool, &ask.arguments)
        .map_err(|e| e.to_string());
    Ok(Step::Answer(protocol::lookup_result(&ask.id, result)))
}

/// The reply `v` if it carries the open request's `id`.
fn check_id(v: Value, raw: String, id: &str) -> Result<Value, Fault> {
    if v.get("id").and_then(Value::as_str) == Some(id) {
        return Ok(v);
    }
    let problem = format!(
        "the reply's `id` is {}, but the open request is \"{id}\"",
        v.get("id").unwrap_or(&Value::Null)
    );
    Err(Fault::WrongId { raw, problem })
}

/// A checked reply, or the fault of the reply that failed the check.
fn checked<T>(
    reply: Result<(Value, u32), Fault>,
    parse: impl FnOnce(&Value) -> Result<T, String>,
) -> Result<(T, u32), Fault> {
    let (v, lookups) = reply?;
    parse(&v)
        .map(|t| (t, lookups))
        .map_err(|problem| Fault::OutOfSchema {
            raw: v.to_string(),
            problem,
        })
}

impl Guard for ExternalGuard {
    fn name(&self) -> &str {
        EXTERNAL
    }

    fn on_mutating_call<'a>(&'a self, ctx: &'a GuardContext<'a>, call: &'a ToolCall) -> Ruling<'a> {
        Box::pin(async move {
            let mut body = Map::new();
            body.insert(
                "call".into(),
                json!({"id": call.id, "name": call.name, "arguments": call.arguments}),
            );
            let reply = self.exchange(ctx, protocol::HOOK_MUTATING_CALL, body).await;
            let id_of = |v: &Value| v["id"].as_str().unwrap_or_default().to_string();
            Ok(
                match checked(reply, |v| protocol::parse_decision(v, &id_of(v))) {
                    Ok((r, lookups)) => Decision {
                        verdict: r.verdict,
                        requirements: r.requirements,
                        remediation: r.remediation,
                        usage: r.usage,
                        info: Some(self.judged_info(lookups, self.link.restarts(), r.info)),
                        guide: None,
                        fail: None,
                    },
                    Err(fault) => self.fail_decision(&fault),
                },
            )
        })
    }

    fn before_agent_turn<'a>(&'a self, ctx: &'a GuardContext<'a>) -> Advice<'a> {
        Box::pin(async move {
            if !self.link.hello().has(protocol::HOOK_BEFORE_TURN) {
                return Ok(None);
            }
            let reply = self
                .exchange(ctx, protocol::HOOK_BEFORE_TURN, Map::new())
                .await;
            let id_of = |v: &Value| v["id"].as_str().unwrap_or_default().to_string();
            let mut event = GuideEvent {
                guard: EXTERNAL.into(),
                trigger: GuideTrigger::UserTurn,
                at_message: ctx.at_message,
                requests: Vec::new(),
                enabled_tools: Vec::new(),
                guidance: None,
                rejected: Vec::new(),
                usage: Default::default(),
                verdict_source: Default::default(),
                fail_reason: None,
                fail_http_status: None,
                info: None,
            };
            match checked(reply, |v| protocol::parse_guidance(v, &id_of(v))) {
                Ok((r, lookups)) => {
                    event.guidance = r.guidance;
                    event.enabled_tools = r.enabled_tools;
                    event.usage = r.usage;
                    event.info = Some(self.judged_info(lookups, self.link.restarts(), None));
                }
                Err(fault) => {
                    (
                        event.verdict_source,
                        event.fail_reason,
                        event.fail_http_status,
                    ) = FailCause::event_fields(Some(fault.cause()));
                    event.info = Some(fault.info(&self.provenance));
                }
            }
            Ok(Some(Guidance { event }))
        })
    }

    fn end_session(&self, state: &GuardState, end: &SessionEnd<'_>) {
        let session = state.with(|s: &mut Session| s.id.clone());
        let Some(session) = session else { return };
        let msg = json!({"type": "end", "session": session,
            "termination_reason": end.termination_reason, "error": end.error});
        // A notification: a guard that is gone cannot be told, and nothing waits on it.
        match &self.link {
            Link::Stdio(p) => {
                let _ = p.send(&msg);
            }
            Link::Http(h) => {
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    let (h, timeout) = (h.clone(), self.timeout);
                    rt.spawn(async move { h.notify(&msg, timeout).await });
                }
            }
        }
    }
}
