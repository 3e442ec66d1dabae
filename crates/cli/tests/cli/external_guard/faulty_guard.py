"""A deliberately broken external guard for the fault tests and `guard-check`: it greets
properly, then fails each request the way its mode says. Raw protocol, no SDK, so every byte
it sends is the test's choice.

Modes: ok (passes everything, and answers `before_turn` with guidance), bad-guidance (a
`guidance` reply outside the schema), crash (exits on its first request), hang (never answers),
garbage (answers a line that is not JSON), garbage-when-two (holds requests until two are open,
then writes one line that is not JSON and answers neither), wrong-id (answers with another id),
bad-verdict (answers a verdict outside the schema).
"""

import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
held = []


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "id": msg["id"], "protocol": 1, "name": "faulty-" + mode,
              "version": "0.0.1",
              "hooks": ["mutating_call", "before_turn"] if "guidance" in mode or mode == "ok" else ["mutating_call"]})
    elif kind == "mutating_call":
        if mode == "crash":
            sys.stderr.write("faulty guard: crashing on purpose\n")
            sys.stderr.flush()
            sys.exit(3)
        elif mode == "hang":
            continue
        elif mode == "garbage":
            sys.stdout.write("this is not json {\n")
            sys.stdout.flush()
        elif mode == "garbage-when-two":
            held.append(msg["id"])
            if len(held) == 2:
                sys.stdout.write("this is not json {\n")
                sys.stdout.flush()
                held.clear()
        elif mode == "wrong-id":
            send({"type": "decision", "id": "not-" + msg["id"], "verdict": "PASS"})
        elif mode == "bad-verdict":
            send({"type": "decision", "id": msg["id"], "verdict": "MAYBE"})
        else:
            send({"type": "decision", "id": msg["id"], "verdict": "PASS"})
    elif kind == "before_turn":
        if mode == "bad-guidance":
            send({"type": "guidance", "id": msg["id"], "guidance": None, "enabled_tools": "all"})
        else:
            send({"type": "guidance", "id": msg["id"], "guidance": "Check the policy before acting.",
                  "enabled_tools": ["cancel_reservation"]})
    elif kind == "shutdown":
        break
