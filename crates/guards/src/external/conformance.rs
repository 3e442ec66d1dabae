//! The conformance suite of the external guard protocol (`tauguard guard-check`): drives a
//! guard program (or a guard served at a URL) through every part of the protocol on synthetic sessions, no data directory
//! and no model needed, and says of each check whether it held and, when not, which message
//! broke it. It talks to the process directly rather than through [`super::stdio`], because a
//! check must see exactly what the guard wrote, where the transport forgives and fails over.

use super::protocol::{self, HOOK_BEFORE_TURN};
use crate::catalog::{ToolCatalog, ToolClass};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// The domain whose tool catalogue the synthetic sessions carry.
pub const CHECK_DOMAIN: &str = "airline";
/// Sessions (and calls in flight at once) of the concurrency check.
pub const CONCURRENT: usize = 8;

/// What one check found.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Pass(String),
    Skipped(String),
    /// What went wrong, and the line that broke it when there is one.
    Fail {
        problem: String,
        offending: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub name: &'static str,
    pub outcome: Outcome,
}

impl Check {
    pub fn passed(&self) -> bool {
        !matches!(self.outcome, Outcome::Fail { .. })
    }
}

fn fail(problem: impl Into<String>, offending: Option<String>) -> Outcome {
    Outcome::Fail {
        problem: problem.into(),
        offending,
    }
}

/// What to check: a program to start, or a guard already served over HTTP.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Command(Vec<String>),
    Url(String),
}

/// What the guard said: a line (a response body over HTTP), or why an exchange failed.
enum Line {
    Text(String),
    Failed(String),
}

/// How messages reach the guard.
enum Wire {
    Stdio {
        child: Child,
        stdin: Option<ChildStdin>,
    },
    /// Each message POSTed on a task of its own, so requests are in flight at once; a
    /// response body (but a notification's) is the guard's next message.
    Http {
        rt: tokio::runtime::Runtime,
        client: reqwest::Client,
        url: String,
        tx: Sender<Line>,
    },
}

struct Driver {
    wire: Wire,
    lines: Receiver<Line>,
    timeout: Duration,
    /// Lines that were not JSON, and what the lookups did wrong.
    garbage: Vec<String>,
    lookup_faults: Vec<(String, String)>,
    lookups: usize,
    slowest: Duration,
    next: u64,
}

type Reply = Result<(Value, String), Outcome>;

impl Driver {
    fn write(&mut self, msg: &Value) -> Result<(), Outcome> {
        let line = format!("{msg}\n");
        let stdin = match &mut self.wire {
            Wire::Stdio { stdin, .. } => stdin,
            Wire::Http {
                rt,
                client,
                url,
                tx,
            } => {
                let notification =
                    matches!(msg["type"].as_str(), Some("start" | "end" | "shutdown"));
                let (client, url, tx, msg) = (client.clone(), url.clone(), tx.clone(), msg.clone());
                // A notification is sent before anything after it (a session starts before its
                // first request, as tauguard does); a request is in flight on its own task.
                let exchange = async move {
                    let sent = client.post(&url).json(&msg).send().await;
                    let line = match sent {
                        Err(e) => Line::Failed(format!("the HTTP exchange failed: {e}")),
                        Ok(r) if !r.status().is_success() => {
                            let status = r.status();
                            Line::Failed(format!(
                                "HTTP {status}: {}",
                                r.text().await.unwrap_or_default()
                            ))
                        }
                        Ok(r) => match r.text().await {
                            Ok(body) => Line::Text(body),
                            Err(e) => Line::Failed(format!("reading the response failed: {e}")),
                        },
                    };
                    if !notification || matches!(line, Line::Failed(_)) {
                        let _ = tx.send(line);
                    }
                };
                if notification {
                    rt.block_on(exchange);
                } else {
                    rt.spawn(exchange);
                }
                return Ok(());
            }
        };
        let w = stdin.as_mut().ok_or_else(|| fail("stdin closed", None))?;
        w.write_all(line.as_bytes())
            .and_then(|()| w.flush())
            .map_err(|e| {
                fail(
                    format!("writing to the guard failed: {e}"),
                    Some(msg.to_string()),
                )
            })
    }

    fn id(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// The next message that is not a lookup (lookups are answered on the way).
    fn reply(&mut self, open: &[String], started: Instant) -> Reply {
        loop {
            let left = self.timeout.saturating_sub(started.elapsed());
            let line = match self.lines.recv_timeout(left) {
                Ok(Line::Text(l)) => l,
                Ok(Line::Failed(why)) => return Err(fail(why, None)),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(fail(
                        format!(
                            "no reply within {:.1} s (open: {})",
                            self.timeout.as_secs_f64(),
                            open.join(", ")
                        ),
                        None,
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(fail("the guard closed its output (exited?)", None));
                }
            };
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                self.garbage.push(line.clone());
                return Err(fail("a line that is not JSON", Some(line)));
            };
            if v["type"] == "lookup" {
                self.lookups += 1;
                let problem = match protocol::parse_lookup(&v) {
                    Err(e) => Some(e),
                    Ok(ask) => {
                        let request = v["request"].as_str().unwrap_or_default();
                        let read_only = ToolCatalog::builtin(CHECK_DOMAIN)
                            .and_then(|c| c.class_of(&ask.tool))
                            == Some(ToolClass::ReadOnly);
                        if !open.iter().any(|o| o == request) {
                            Some(format!("`request` is \"{request}\", not an open request"))
                        } else if !read_only {
                            Some(format!(
                                "`{}` is not a read-only tool of the session",
                                ask.tool
                            ))
                        } else {
                            let r = protocol::lookup_result(
                                &ask.id,
                                Err("guard-check runs no environment".into()),
                            );
                            self.write(&r)?;
                            None
                        }
                    }
                };
                if let Some(p) = problem {
                    self.lookup_faults.push((p, line));
                    if let Some(id) = v["id"].as_str() {
                        self.write(&protocol::lookup_result(id, Err("refused".into())))?;
                    }
                }
                continue;
            }
            self.slowest = self.slowest.max(started.elapsed());
            return Ok((v, line));
        }
    }

    fn start(&mut self, session: &str, tools: &Value) -> Result<(), Outcome> {
        self.write(
            &json!({"type": "start", "session": session, "domain": CHECK_DOMAIN,
            "policy": "guard-check: a synthetic session; this is not a domain policy.",
            "tools": tools, "task_id": "guard-check", "trial": 0, "seed": 0}),
        )
    }

    fn call(&mut self, id: &str, session: &str) -> Value {
        json!({"type": "mutating_call", "id": id, "session": session,
            "call": {"id": format!("call-{id}"), "name": "cancel_reservation",
                "arguments": {"reservation_id": "GC0001"}},
            "history": [{"role": "user", "content": "Please cancel reservation GC0001."},
                {"role": "assistant", "tool_calls": [{"id": format!("call-{id}"),
                    "name": "cancel_reservation", "arguments": {"reservation_id": "GC0001"}}]}]})
    }

    /// One decision request on `session`, checked.
    fn decide(&mut self, id: &str, session: &str) -> Result<(), Outcome> {
        let msg = self.call(id, session);
        self.write(&msg)?;
        let (v, line) = self.reply(&[id.to_string()], Instant::now())?;
        protocol::parse_decision(&v, id)
            .map(|_| ())
            .map_err(|e| fail(e, Some(line)))
    }
}

fn tools() -> Value {
    let catalog = ToolCatalog::builtin(CHECK_DOMAIN).expect("a registered domain");
    let mut out = Vec::new();
    for (set, kind) in [
        (&catalog.mutating, "mutating"),
        (&catalog.read_only, "read_only"),
        (&catalog.other, "other"),
    ] {
        out.extend(
            set.iter()
                .map(|t| json!({"name": t, "kind": kind, "parameters": {"type": "object"}})),
        );
    }
    Value::Array(out)
}

fn record(out: &mut Vec<Check>, name: &'static str, r: Result<String, Outcome>) {
    out.push(Check {
        name,
        outcome: r.map_or_else(|o| o, Outcome::Pass),
    });
}

/// Runs every check on `target`; each request must be answered within `timeout`.
pub fn check(target: &Target, timeout: Duration) -> Vec<Check> {
    let mut out = Vec::new();
    let (tx, lines) = channel();
    let wire = match target {
        Target::Command(command) => match spawn(command, tx, &mut out) {
            Some(w) => w,
            None => return out,
        },
        Target::Url(url) => {
            let built = tokio::runtime::Runtime::new()
                .map_err(|e| e.to_string())
                .and_then(|rt| {
                    let client = reqwest::Client::builder()
                        .timeout(timeout)
                        .build()
                        .map_err(|e| e.to_string())?;
                    Ok((rt, client))
                });
            match built {
                Ok((rt, client)) => Wire::Http {
                    rt,
                    client,
                    url: url.clone(),
                    tx,
                },
                Err(e) => {
                    record(&mut out, "start", Err(fail(e, None)));
                    return out;
                }
            }
        }
    };
    run_checks(
        Driver {
            wire,
            lines,
            timeout,
            garbage: Vec::new(),
            lookup_faults: Vec::new(),
            lookups: 0,
            slowest: Duration::ZERO,
            next: 0,
        },
        out,
    )
}

/// Starts `command` with its stdout lines sent to `tx`; `None` (with the failed check
/// recorded) when it cannot start.
fn spawn(command: &[String], tx: Sender<Line>, out: &mut Vec<Check>) -> Option<Wire> {
    let Some((program, args)) = command.split_first() else {
        record(out, "start", Err(fail("no command given", None)));
        return None;
    };
    let spawned = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            record(
                out,
                "start",
                Err(fail(
                    format!("cannot start `{}`: {e}", command.join(" ")),
                    None,
                )),
            );
            return None;
        }
    };
    let stdout = child.stdout.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !line.trim().is_empty() && tx.send(Line::Text(line)).is_err() {
                break;
            }
        }
    });
    // Drained so a chatty guard never blocks on a full pipe.
    let mut stderr = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
    });
    Some(Wire::Stdio {
        stdin: child.stdin.take(),
        child,
    })
}

fn run_checks(mut d: Driver, mut out: Vec<Check>) -> Vec<Check> {
    let timeout = d.timeout;
    // start: the greeting.
    let hello = (|| {
        d.write(&protocol::hello_request("hello-1"))?;
        let (v, line) = d.reply(&[], Instant::now())?;
        protocol::parse_hello(&v, "hello-1").map_err(|e| fail(e, Some(line)))
    })();
    let hello = match hello {
        Ok(h) => {
            record(
                &mut out,
                "start",
                Ok(format!(
                    "{} {} (hooks: {})",
                    h.name,
                    h.version,
                    h.hooks.join(", ")
                )),
            );
            h
        }
        Err(o) => {
            record(&mut out, "start", Err(o));
            if let Wire::Stdio { child, .. } = &mut d.wire {
                let _ = child.kill();
            }
            return out;
        }
    };
    let tools = tools();
    // mutating_call: one decision.
    let r = d
        .start("gc-s1", &tools)
        .and_then(|()| d.decide("gc-r1", "gc-s1"));
    record(
        &mut out,
        "mutating_call",
        r.map(|()| "a schema-valid decision".into()),
    );
    // ids: an id with characters a guard might mangle is echoed byte for byte.
    let r = d.decide("gc/ünï code-42", "gc-s1");
    record(
        &mut out,
        "ids",
        r.map(|()| "an unusual id echoed exactly".into()),
    );
    record(&mut out, "concurrency", check_concurrency(&mut d, &tools));
    let r = check_before_turn(&mut d, &hello);
    let skipped = !hello.has(HOOK_BEFORE_TURN);
    record(&mut out, "before_turn", r);
    if skipped
        && let Some(last) = out.last_mut()
        && let Outcome::Pass(why) = &last.outcome
    {
        last.outcome = Outcome::Skipped(why.clone());
    }
    record(&mut out, "end", check_end(&mut d, &tools));
    record(&mut out, "lookups", check_lookups(&d));
    record(&mut out, "schema", check_schema(&d));
    let r = check_timeouts(&out, &d, timeout);
    record(&mut out, "timeouts", r);
    match check_shutdown(&mut d) {
        Some(r) => record(&mut out, "shutdown", r),
        None => out.push(Check {
            name: "shutdown",
            outcome: Outcome::Skipped("a guard served over HTTP is not stopped by tauguard".into()),
        }),
    }
    out
}

/// concurrency: several sessions' calls in flight at once, answered once each.
fn check_concurrency(d: &mut Driver, tools: &Value) -> Result<String, Outcome> {
    let ids: Vec<String> = (0..CONCURRENT).map(|_| d.id("gc-c")).collect();
    for (i, id) in ids.iter().enumerate() {
        let session = format!("gc-cs{i}");
        d.start(&session, tools)?;
        let msg = d.call(id, &session);
        d.write(&msg)?;
    }
    let started = Instant::now();
    let mut open = ids.clone();
    while !open.is_empty() {
        let (v, line) = d.reply(&open, started)?;
        let id = v["id"].as_str().unwrap_or_default().to_string();
        let Some(at) = open.iter().position(|o| *o == id) else {
            return Err(fail(
                format!("a reply for `{id}`, which is not an open request"),
                Some(line),
            ));
        };
        protocol::parse_decision(&v, &id).map_err(|e| fail(e, Some(line)))?;
        open.remove(at);
    }
    Ok(format!("{CONCURRENT} calls in flight, each answered once"))
}

/// before_turn: the second hook, where the guard implements it.
fn check_before_turn(d: &mut Driver, hello: &protocol::Hello) -> Result<String, Outcome> {
    if hello.has(HOOK_BEFORE_TURN) {
        (|| {
            d.write(
                &json!({"type": "before_turn", "id": "gc-t1", "session": "gc-s1",
                "history": [{"role": "user", "content": "Hello."}]}),
            )?;
            let (v, line) = d.reply(&["gc-t1".into()], Instant::now())?;
            protocol::parse_guidance(&v, "gc-t1")
                .map(|_| "a schema-valid guidance".into())
                .map_err(|e| fail(e, Some(line)))
        })()
    } else {
        Ok("not listed in `hooks`: never sent".into())
    }
}

/// end: the guard keeps serving after sessions end.
fn check_end(d: &mut Driver, tools: &Value) -> Result<String, Outcome> {
    for s in
        std::iter::once("gc-s1".to_string()).chain((0..CONCURRENT).map(|i| format!("gc-cs{i}")))
    {
        d.write(
            &json!({"type": "end", "session": s, "termination_reason": "user_stop", "error": null}),
        )?;
    }
    d.start("gc-s2", tools)?;
    d.decide("gc-r2", "gc-s2")?;
    Ok("still answers after `end`".into())
}

/// lookups: every lookup asked named an open request and a read-only tool.
fn check_lookups(d: &Driver) -> Result<String, Outcome> {
    match d.lookup_faults.first() {
        Some((p, line)) => Err(fail(p.clone(), Some(line.clone()))),
        None if d.lookups == 0 => Ok("none asked".into()),
        None => Ok(format!(
            "{} well-formed lookups, each answered with an error the guard survived",
            d.lookups
        )),
    }
}

/// schema: nothing on stdout but protocol messages.
fn check_schema(d: &Driver) -> Result<String, Outcome> {
    match d.garbage.first() {
        Some(line) => Err(fail(
            "the guard wrote a line that is not JSON",
            Some(line.clone()),
        )),
        None => Ok("every line JSON".into()),
    }
}

/// timeouts: every answered request within the limit.
fn check_timeouts(out: &[Check], d: &Driver, timeout: Duration) -> Result<String, Outcome> {
    if out.iter().any(|c| matches!(&c.outcome, Outcome::Fail { problem, .. } if problem.starts_with("no reply within"))) {
        Err(fail(format!("a request was not answered within {:.1} s", timeout.as_secs_f64()), None))
    } else {
        Ok(format!("slowest reply {:.0} ms", d.slowest.as_secs_f64() * 1000.0))
    }
}

/// shutdown: `shutdown` and stdin closed, the guard exits by itself, status 0; `None` for a
/// guard served over HTTP.
fn check_shutdown(d: &mut Driver) -> Option<Result<String, Outcome>> {
    let Wire::Stdio { child, stdin } = &mut d.wire else {
        return None;
    };
    let line = format!("{}\n", json!({"type": "shutdown"}));
    let _ = stdin
        .as_mut()
        .map(|w| w.write_all(line.as_bytes()).and_then(|()| w.flush()));
    *stdin = None;
    let deadline = Instant::now() + Duration::from_secs(2);
    let r = loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => break Ok("exited 0".into()),
            Ok(Some(s)) => break Err(fail(format!("exited with {s}"), None)),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(fail("still running 2 s after `shutdown`; killed", None));
            }
        }
    };
    Some(r)
}
