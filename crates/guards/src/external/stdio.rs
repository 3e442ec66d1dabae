//! The subprocess transport: one guard process, JSON lines over its stdin and stdout, many
//! simulations' requests in flight at once and told apart by id.
//!
//! A reader thread routes each line to the request it answers (a reply by its `id`, a
//! `lookup` by its `request`). A line no open request claims is, when one request is open,
//! that request's (it fails on it: a guard answering with the wrong id is named, not timed
//! out); when several are open it cannot be told whose it is, so every open request fails on
//! it at once and the process is restarted, since the stream it came from cannot be trusted
//! any more. A late answer to a request that already ended (timed out) is kept as an orphan
//! and shown in the fault of the next request that fails. When the process dies every open request fails at once with
//! its exit status and the tail of its stderr, and the next request starts a new process,
//! up to `max_restarts` times a run; past that every request fails at once, saying so.
//! Threads rather than async I/O: the process is started while a run is planned, before any
//! runtime exists, and its lines are few.

use super::fault::Fault;
use super::protocol::{self, Hello};
use super::start_error::{ExternalStartError, GreetingError};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::Duration;
use tokio::sync::mpsc;

/// What the reader hands an open request.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A JSON message routed to it, with the line as received.
    Message(Value, String),
    /// A line that is not JSON, routed to it as the only open request.
    Malformed(String),
    /// A line no open request claims, sent to every one of the `usize` open requests.
    Unclaimed(String, usize),
    /// The process ended: its status and stderr tail.
    Closed(String),
}

/// The most orphan lines kept (the oldest are dropped).
const ORPHANS_KEPT: usize = 16;
/// The most stderr bytes kept.
const STDERR_KEPT: usize = 4096;

#[derive(Debug, Default)]
struct Routes {
    pending: HashMap<String, mpsc::UnboundedSender<Incoming>>,
    /// Ids of requests that ended: a line carrying one is a late answer, not a fault.
    ended: HashSet<String>,
    orphans: Vec<String>,
    /// Set when the process has ended: why.
    closed: Option<String>,
}

/// One running process.
#[derive(Debug)]
struct Live {
    child: Child,
    stdin: ChildStdin,
    routes: Arc<Mutex<Routes>>,
    generation: u64,
}

#[derive(Debug)]
struct State {
    live: Option<Live>,
    generation: u64,
    restarts: u32,
    /// Why the last process ended, or why starting one failed.
    last_failure: Option<String>,
}

/// A guard process and what is needed to restart it.
#[derive(Debug)]
pub(crate) struct StdioProcess {
    command: Vec<String>,
    max_restarts: u32,
    timeout: Duration,
    hello: Hello,
    state: Mutex<State>,
    next_id: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A request registered with the process: its channel and what to write to.
#[derive(Debug)]
pub(crate) struct Open {
    pub rx: mpsc::UnboundedReceiver<Incoming>,
    id: String,
    routes: Arc<Mutex<Routes>>,
}

impl Open {
    /// Orphan lines seen so far (for a fault's record).
    pub(crate) fn orphans(&self) -> Vec<String> {
        lock(&self.routes).orphans.clone()
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut r = lock(&self.routes);
        r.pending.remove(&self.id);
        r.ended.insert(std::mem::take(&mut self.id));
    }
}

/// Keeps the tail of the process's stderr; the receiver hears when stderr has closed.
fn read_stderr(
    mut err: impl Read + Send + 'static,
) -> (Arc<Mutex<String>>, std_mpsc::Receiver<()>) {
    let tail = Arc::new(Mutex::new(String::new()));
    let t = tail.clone();
    let (done, closed) = std_mpsc::channel();
    std::thread::spawn(move || {
        let _done = done;
        let mut buf = [0u8; 1024];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut s = lock(&t);
            s.push_str(&String::from_utf8_lossy(&buf[..n]));
            if s.len() > STDERR_KEPT {
                let cut = s.len() - STDERR_KEPT;
                let cut = (cut..s.len()).find(|i| s.is_char_boundary(*i)).unwrap_or(0);
                s.drain(..cut);
            }
        }
    });
    (tail, closed)
}

/// Where a line goes: a reply by its `id`, a lookup by its `request`.
fn route_key(v: &Value) -> Option<&str> {
    let key = if v.get("type").and_then(Value::as_str) == Some("lookup") {
        "request"
    } else {
        "id"
    };
    v.get(key).and_then(Value::as_str)
}

fn reader(
    out: impl Read + Send + 'static,
    routes: Arc<Mutex<Routes>>,
    hello: std_mpsc::Sender<String>,
    (stderr, stderr_closed): (Arc<Mutex<String>>, std_mpsc::Receiver<()>),
    pid: u32,
) {
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        let mut hello = Some(hello);
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if let Some(h) = hello.take() {
                let _ = h.send(line);
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let mut r = lock(&routes);
            let parsed: Option<Value> = serde_json::from_str(&line).ok();
            let key = parsed.as_ref().and_then(route_key).map(str::to_string);
            let target = key
                .clone()
                .filter(|k| r.pending.contains_key(k))
                // A line no id claims goes to the only open request, which then fails on it.
                .or_else(|| (r.pending.len() == 1).then(|| r.pending.keys().next().cloned())?);
            let late = key.is_some_and(|k| r.ended.contains(&k));
            match (target, parsed) {
                (Some(t), Some(v)) => {
                    let _ = r.pending[&t].send(Incoming::Message(v, line));
                }
                (Some(t), None) => {
                    let _ = r.pending[&t].send(Incoming::Malformed(line));
                }
                (None, _) if r.pending.len() > 1 && !late => {
                    let open = r.pending.len();
                    for (_, tx) in r.pending.drain() {
                        let _ = tx.send(Incoming::Unclaimed(line.clone(), open));
                    }
                    r.closed = Some(format!(
                        "it wrote a line no open request claims while {open} were open: {line}"
                    ));
                }
                (None, _) => {
                    if r.orphans.len() == ORPHANS_KEPT {
                        r.orphans.remove(0);
                    }
                    r.orphans.push(line);
                }
            }
        }
        // stdout closed: the process is gone (or closed it, which is as good as gone).
        // Its last words on stderr explain the end: wait (briefly) until they are read.
        let _ = stderr_closed.recv_timeout(Duration::from_secs(1));
        let why = format!(
            "the guard process (pid {pid}) closed its output; stderr: {}",
            lock(&stderr).trim()
        );
        let mut r = lock(&routes);
        for (_, tx) in r.pending.drain() {
            let _ = tx.send(Incoming::Closed(why.clone()));
        }
        r.closed = Some(why);
    });
}

impl StdioProcess {
    /// Starts the process and greets it; an error says why it could not start or greet.
    pub(crate) fn start(
        command: Vec<String>,
        timeout: Duration,
        max_restarts: u32,
    ) -> Result<StdioProcess, ExternalStartError> {
        let (live, hello) = spawn(&command, timeout, 1)?;
        Ok(StdioProcess {
            command,
            max_restarts,
            timeout,
            hello,
            state: Mutex::new(State {
                live: Some(live),
                generation: 1,
                restarts: 0,
                last_failure: None,
            }),
            next_id: AtomicU64::new(1),
        })
    }

    pub(crate) fn hello(&self) -> &Hello {
        &self.hello
    }

    /// A request id unique within this process's run.
    pub(crate) fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Restarts so far.
    pub(crate) fn restarts(&self) -> u32 {
        lock(&self.state).restarts
    }

    /// Registers request `id` with a live process (restarting a dead one within the cap) and
    /// writes the lines `first` gives for that process's generation, then `msg`; the caller
    /// then reads `rx`.
    pub(crate) fn open(
        &self,
        id: &str,
        first: impl FnOnce(u64) -> Vec<Value>,
        msg: &Value,
    ) -> Result<Open, Fault> {
        let mut s = lock(&self.state);
        let dead = s
            .live
            .as_ref()
            .is_none_or(|l| lock(&l.routes).closed.is_some());
        if dead {
            if let Some(l) = s.live.take() {
                s.last_failure = lock(&l.routes).closed.clone();
                reap(l);
            }
            if s.restarts >= self.max_restarts {
                return Err(Fault::RestartLimit {
                    restarts: s.restarts,
                    last: s.last_failure.clone().unwrap_or_default(),
                });
            }
            s.restarts += 1;
            s.generation += 1;
            eprintln!(
                "warning: external guard `{}` ended ({}); restart {} of at most {}",
                self.command.join(" "),
                s.last_failure.as_deref().unwrap_or("no reason"),
                s.restarts,
                self.max_restarts
            );
            match spawn(&self.command, self.timeout, s.generation) {
                Ok((live, _)) => s.live = Some(live),
                Err(e) => {
                    let detail = tauguard_core::chain_text(&e);
                    s.last_failure = Some(detail.clone());
                    return Err(Fault::Crash { detail });
                }
            }
        }
        let live = s.live.as_mut().expect("a live process");
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&live.routes).pending.insert(id.to_string(), tx);
        let open = Open {
            rx,
            id: id.to_string(),
            routes: live.routes.clone(),
        };
        for m in first(live.generation).iter().chain([msg]) {
            write_line(&mut live.stdin, m).map_err(|e| Fault::Crash {
                detail: format!("writing to the guard process failed: {e}"),
            })?;
        }
        Ok(open)
    }

    /// Writes one line to the live process, if any; a notification's failure is not waited on.
    pub(crate) fn send(&self, msg: &Value) -> Result<(), String> {
        let mut s = lock(&self.state);
        match s.live.as_mut() {
            Some(l) => write_line(&mut l.stdin, msg).map_err(|e| e.to_string()),
            None => Err("no guard process is running".into()),
        }
    }
}

fn write_line(w: &mut ChildStdin, msg: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_string(msg).expect("messages serialise");
    line.push('\n');
    w.write_all(line.as_bytes())?;
    w.flush()
}

fn spawn(
    command: &[String],
    timeout: Duration,
    generation: u64,
) -> Result<(Live, Hello), ExternalStartError> {
    let (program, args) = command
        .split_first()
        .ok_or(ExternalStartError::EmptyCommand)?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|cause| ExternalStartError::Spawn {
            command: command.join(" "),
            cause,
        })?;
    let (stderr, stderr_closed) = read_stderr(child.stderr.take().expect("piped"));
    let routes = Arc::new(Mutex::new(Routes::default()));
    let (htx, hrx) = std_mpsc::channel();
    reader(
        child.stdout.take().expect("piped"),
        routes.clone(),
        htx,
        (stderr.clone(), stderr_closed),
        child.id(),
    );
    let mut stdin = child.stdin.take().expect("piped");
    let id = format!("hello-{generation}");
    let greeted = write_line(&mut stdin, &protocol::hello_request(&id))
        .map_err(GreetingError::Write)
        .and_then(|()| {
            hrx.recv_timeout(timeout).map_err(|e| {
                // Its last words, once it has said them.
                std::thread::sleep(Duration::from_millis(50));
                let stderr = lock(&stderr).trim().to_string();
                match e {
                    std_mpsc::RecvTimeoutError::Timeout => GreetingError::Silent {
                        secs: timeout.as_secs_f64(),
                        stderr,
                    },
                    std_mpsc::RecvTimeoutError::Disconnected => GreetingError::Closed { stderr },
                }
            })
        })
        .and_then(|line| {
            let v: Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(cause) => return Err(GreetingError::NotJson { line, cause }),
            };
            protocol::parse_hello(&v, &id)
                .map_err(|problem| GreetingError::Refused { problem, line })
        });
    let live = Live {
        child,
        stdin,
        routes,
        generation,
    };
    match greeted {
        Ok(hello) => Ok((live, hello)),
        Err(cause) => {
            reap(live);
            Err(ExternalStartError::ProcessGreeting {
                command: command.join(" "),
                cause,
            })
        }
    }
}

/// Ends a process: `shutdown`, stdin closed, a moment to exit, then a kill.
fn reap(live: Live) {
    let Live {
        mut child,
        mut stdin,
        ..
    } = live;
    let _ = write_line(&mut stdin, &serde_json::json!({"type": "shutdown"}));
    drop(stdin);
    for _ in 0..40 {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for StdioProcess {
    fn drop(&mut self) {
        if let Some(l) = lock(&self.state).live.take() {
            reap(l);
        }
    }
}
