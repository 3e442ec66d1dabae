"""Write a tauguard runtime guard in Python.

tauguard starts the guard program once per run and speaks the external guard protocol
(version 1, ``docs/guard-protocol.md`` and ``schemas/guard-protocol/v1.json`` in the tauguard
repository) over its stdin and stdout, one JSON object a line. This package is that protocol
behind a few decorators::

    from tauguard_guard import Guard, Decision

    guard = Guard("my-guard", "0.1.0")

    @guard.on_mutating_call
    def check(call, session):
        if call.name == "cancel_reservation":
            r = session.lookup("get_reservation_details", {"reservation_id": call.arguments["reservation_id"]})
            ...
        return Decision.allow()

    if __name__ == "__main__":
        guard.run()

Requests of several simulations arrive interleaved; each is handled on a worker thread, so a
handler may block (on a lookup, on a model call) without holding the others up. Standard
library only: nothing is fetched at run time.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, TextIO

PROTOCOL = "tauguard-guard"
PROTOCOL_VERSION = 1

__all__ = [
    "Guard",
    "Decision",
    "Requirement",
    "Guidance",
    "Usage",
    "Tool",
    "Session",
    "MutatingCall",
    "Turn",
    "SessionEnd",
    "LookupError",
]


class LookupError(Exception):  # noqa: A001 - the protocol's name for it
    """A lookup tauguard refused or whose tool failed (the message is the tool's error)."""


@dataclass
class Usage:
    """The guard's own model usage for one reply; tauguard records it like a verifier's."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Optional[float] = None
    latency_seconds: Optional[float] = None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
        if self.cost is not None:
            out["cost"] = self.cost
        if self.latency_seconds is not None:
            out["latency_seconds"] = self.latency_seconds
        return out


@dataclass
class Requirement:
    """One requirement checked on a call: met or not, and why."""

    name: str
    met: bool
    reason: str = ""


@dataclass
class Decision:
    """The answer to a pending mutating call."""

    verdict: str
    remediation: Optional[str] = None
    requirements: List[Requirement] = field(default_factory=list)
    usage: Optional[Usage] = None
    info: Optional[Dict[str, Any]] = None

    @staticmethod
    def allow(requirements: Optional[List[Requirement]] = None, **kw: Any) -> "Decision":
        return Decision("PASS", None, list(requirements or []), **kw)

    @staticmethod
    def block(remediation: str, requirements: Optional[List[Requirement]] = None, **kw: Any) -> "Decision":
        return Decision("BLOCK", remediation, list(requirements or []), **kw)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "verdict": self.verdict,
            "remediation": self.remediation,
            "requirements": [r.__dict__ for r in self.requirements],
        }
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        if self.info is not None:
            out["info"] = self.info
        return out


@dataclass
class Guidance:
    """What the agent reads before it answers a user turn, and the tools the guard enables."""

    guidance: Optional[str] = None
    enabled_tools: List[str] = field(default_factory=list)
    usage: Optional[Usage] = None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"guidance": self.guidance, "enabled_tools": list(self.enabled_tools)}
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        return out


@dataclass
class Tool:
    """An agent tool of the domain: `kind` is `mutating`, `read_only` or `other`."""

    name: str
    kind: str
    description: str = ""
    parameters: Dict[str, Any] = field(default_factory=dict)


@dataclass
class MutatingCall:
    """A pending call that changes state, with the conversation the agent has seen."""

    id: str
    name: str
    arguments: Dict[str, Any]
    history: List[Dict[str, Any]]


@dataclass
class Turn:
    """The agent is about to answer a user turn."""

    history: List[Dict[str, Any]]


@dataclass
class SessionEnd:
    termination_reason: str
    error: Optional[str] = None


class Session:
    """One simulation, as its `start` message described it; `data` is the guard's own."""

    def __init__(self, guard: "Guard", msg: Dict[str, Any]):
        self._guard = guard
        self.id: str = msg["session"]
        self.domain: str = msg["domain"]
        self.policy: str = msg["policy"]
        self.tools: List[Tool] = [Tool(**t) for t in msg.get("tools", [])]
        self.task_id: str = msg["task_id"]
        self.trial: int = msg["trial"]
        self.seed: int = msg["seed"]
        self.data: Dict[str, Any] = {}
        self._request: Optional[str] = None

    def tool(self, name: str) -> Optional[Tool]:
        return next((t for t in self.tools if t.name == name), None)

    def lookup(self, tool: str, arguments: Dict[str, Any]) -> Any:
        """Runs a read-only tool on a copy of the simulation's state and returns its result.

        Only valid while a request of this session is being handled."""
        request = getattr(self._guard._local, "request", None)
        if request is None:
            raise RuntimeError("lookup() is only possible while a request is being handled")
        return self._guard._lookup(request, tool, arguments)


Handler = Callable[..., Any]


class Guard:
    """A guard: its name, its version string, and its hooks."""

    def __init__(self, name: str, version: str, workers: int = 16):
        self.name = name
        self.version = version
        self.workers = workers
        self._on_call: Optional[Handler] = None
        self._before_turn: Optional[Handler] = None
        self._on_start: Optional[Handler] = None
        self._on_end: Optional[Handler] = None
        self._sessions: Dict[str, Session] = {}
        self._write_lock = threading.Lock()
        self._lookups: Dict[str, Future] = {}
        self._lookup_lock = threading.Lock()
        self._next_lookup = 0
        self._local = threading.local()
        self._out: TextIO = sys.stdout
        # Over HTTP: each open request's outgoing messages (lookups, then the reply).
        self._outboxes: Optional[Dict[str, "queue.Queue[Dict[str, Any]]"]] = None

    # --- decorators -------------------------------------------------------------------

    def on_mutating_call(self, fn: Handler) -> Handler:
        """`fn(call: MutatingCall, session: Session) -> Decision`."""
        self._on_call = fn
        return fn

    def before_turn(self, fn: Handler) -> Handler:
        """`fn(turn: Turn, session: Session) -> Guidance | None`."""
        self._before_turn = fn
        return fn

    def on_start(self, fn: Handler) -> Handler:
        """`fn(session: Session) -> None`, when a simulation starts."""
        self._on_start = fn
        return fn

    def on_end(self, fn: Handler) -> Handler:
        """`fn(session: Session, end: SessionEnd) -> None`, when it ends."""
        self._on_end = fn
        return fn

    # --- the protocol -----------------------------------------------------------------

    def _send(self, msg: Dict[str, Any]) -> None:
        if self._outboxes is not None:
            key = msg["request"] if msg.get("type") == "lookup" else msg["id"]
            self._outboxes[key].put(msg)
            return
        line = json.dumps(msg, separators=(",", ":"))
        with self._write_lock:
            self._out.write(line + "\n")
            self._out.flush()

    def _lookup(self, request: str, tool: str, arguments: Dict[str, Any]) -> Any:
        with self._lookup_lock:
            self._next_lookup += 1
            lid = f"L{self._next_lookup}"
            fut: Future = Future()
            self._lookups[lid] = fut
        self._send({"type": "lookup", "id": lid, "request": request, "tool": tool, "arguments": arguments})
        reply = fut.result()
        if not reply.get("ok"):
            raise LookupError(reply.get("error", "lookup failed"))
        return reply.get("result")

    def _handle(self, msg: Dict[str, Any]) -> None:
        rid = msg["id"]
        self._local.request = rid
        try:
            session = self._sessions[msg["session"]]
            history = msg.get("history", [])
            if msg["type"] == "mutating_call":
                c = msg["call"]
                call = MutatingCall(c["id"], c["name"], c.get("arguments") or {}, history)
                decision = self._on_call(call, session) if self._on_call else Decision.allow()
                self._send({"type": "decision", "id": rid, **decision.to_json()})
            else:
                g = self._before_turn(Turn(history), session) if self._before_turn else None
                self._send({"type": "guidance", "id": rid, **(g or Guidance()).to_json()})
        except Exception as e:  # a handler's failure is the guard's answer, not a crash
            traceback.print_exc(file=sys.stderr)
            self._send({"type": "error", "id": rid, "message": f"{type(e).__name__}: {e}"})
        finally:
            self._local.request = None

    def hooks(self) -> List[str]:
        hooks = ["mutating_call"]
        if self._before_turn is not None:
            hooks.append("before_turn")
        return hooks

    def _hello(self, msg: Dict[str, Any]) -> Dict[str, Any]:
        return {"type": "hello", "id": msg["id"], "protocol": PROTOCOL_VERSION,
                "name": self.name, "version": self.version, "hooks": self.hooks()}

    def _notify(self, msg: Dict[str, Any]) -> None:
        """`start` and `end`: no reply."""
        kind = msg.get("type")
        if kind == "start":
            s = Session(self, msg)
            self._sessions[s.id] = s
            if self._on_start:
                self._on_start(s)
        elif kind == "end":
            s = self._sessions.pop(msg.get("session"), None)
            if s is not None and self._on_end:
                self._on_end(s, SessionEnd(msg.get("termination_reason", ""), msg.get("error")))

    def serve_http(self, host: str = "127.0.0.1", port: int = 0, ready: Optional[Callable[[int], None]] = None) -> None:
        """Serves tauguard over HTTP: every message is a POST, the response the guard's next
        message (a lookup, then, once its result is POSTed, the reply). `ready` is called with
        the bound port (port 0 picks a free one); by default it is printed on stdout."""
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        guard = self
        self._outboxes = {}
        lookup_owner: Dict[str, str] = {}
        pool = ThreadPoolExecutor(max_workers=self.workers)

        def next_of(rid: str) -> Dict[str, Any]:
            msg = guard._outboxes[rid].get()
            if msg.get("type") == "lookup":
                lookup_owner[msg["id"]] = rid
            else:
                guard._outboxes.pop(rid, None)
            return msg

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                msg = json.loads(body)
                kind = msg.get("type")
                out: Optional[Dict[str, Any]] = None
                if kind == "hello":
                    out = guard._hello(msg)
                elif kind in ("start", "end"):
                    guard._notify(msg)
                elif kind in ("mutating_call", "before_turn"):
                    guard._outboxes[msg["id"]] = queue.Queue()
                    pool.submit(guard._handle, msg)
                    out = next_of(msg["id"])
                elif kind == "lookup_result":
                    with guard._lookup_lock:
                        fut = guard._lookups.pop(msg.get("id"), None)
                    rid = lookup_owner.pop(msg.get("id"), None)
                    if fut is not None and rid is not None:
                        fut.set_result(msg)
                        out = next_of(rid)
                data = json.dumps(out if out is not None else {}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            # The default backlog (5) drops connections when tauguard sends more requests at
            # once, and each dropped one waits a second for its retry.
            request_queue_size = 256
            daemon_threads = True

        server = Server((host, port), Handler)
        bound = server.server_address[1]
        if ready is not None:
            ready(bound)
        else:
            print(f"listening on http://{host}:{bound}", flush=True)
        try:
            server.serve_forever()
        finally:
            pool.shutdown(wait=False)

    def main(self, argv: Optional[List[str]] = None) -> None:
        """`--http HOST:PORT` serves over HTTP; otherwise over stdio."""
        args = list(sys.argv[1:] if argv is None else argv)
        if "--http" in args:
            host, _, port = args[args.index("--http") + 1].rpartition(":")
            self.serve_http(host or "127.0.0.1", int(port))
        else:
            self.run()

    def run(self, stdin: Optional[TextIO] = None, stdout: Optional[TextIO] = None) -> None:
        """Serves tauguard on stdin/stdout until it shuts the guard down."""
        inp = stdin or sys.stdin
        if stdout is not None:
            self._out = stdout
        pool = ThreadPoolExecutor(max_workers=self.workers)
        for line in inp:
            if not line.strip():
                continue
            msg = json.loads(line)
            kind = msg.get("type")
            if kind == "hello":
                self._send(self._hello(msg))
            elif kind in ("start", "end"):
                self._notify(msg)
            elif kind in ("mutating_call", "before_turn"):
                pool.submit(self._handle, msg)
            elif kind == "lookup_result":
                with self._lookup_lock:
                    fut = self._lookups.pop(msg.get("id"), None)
                if fut is not None:
                    fut.set_result(msg)
            elif kind == "shutdown":
                break
        pool.shutdown(wait=True)
