#!/usr/bin/env bash
# Fetches τ²-bench's data (MIT licence) at a pinned upstream commit into a data directory
# (default data/tau2), which tauguard reads via --data-dir or TAUGUARD_DATA_DIR (data/tau2 is
# also the default). Writes:
#   <domain>/                 airline, retail, telecom: copies of upstream data/tau2/domains/
#   user_simulator/           a copy of upstream data/tau2/user_simulator/ (the user
#                             simulator's guidelines, byte for byte)
#   agent/agent_instruction.md
#                             the agent instruction: upstream keeps it in code, not in its data
#                             directory (`AGENT_INSTRUCTION` in src/tau2/agent/llm_agent.py), so
#                             it is extracted from that file (the string literal, stripped, plus
#                             one final newline); runs fail without it
#   FETCHED.md                where all this came from
# Needs git, python3 and network access to GitHub. TAU2_REPO (a URL, a local path or a
# file:// URL) and TAU2_COMMIT override the upstream repository and the pinned commit.
# Nothing in the destination changes unless every file was found and extracted.
set -euo pipefail
REPO="${TAU2_REPO:-https://github.com/sierra-research/tau2-bench}"
COMMIT="${TAU2_COMMIT:-a2c024725189473d2d7cea3a5cfdbcc67478e41f}"
DEST="${1:-data/tau2}"
AGENT_PY=src/tau2/agent/llm_agent.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A plain local path would make git ignore --filter (with a warning); a file:// URL keeps it.
clone_url="$REPO"
if [[ "$REPO" != *://* && -d "$REPO" ]]; then
  clone_url="file://$(cd "$REPO" && pwd)"
fi
git clone -q --filter=blob:none --no-checkout "$clone_url" "$tmp/repo"
git -C "$tmp/repo" checkout -q "$COMMIT" -- data/tau2/domains data/tau2/user_simulator "$AGENT_PY"

# AGENT_INSTRUCTION = """...""".strip() at module level: the literal is evaluated, never the
# module (which imports upstream's package).
python3 - "$tmp/repo/$AGENT_PY" "$tmp/agent_instruction.md" "$AGENT_PY" <<'PY'
import ast
import sys

src, out, name = sys.argv[1:4]


def fail(why):
    sys.exit(f"fetch-tau2-data: {name}: {why}")


try:
    with open(src, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=name)
except (OSError, SyntaxError, UnicodeDecodeError) as e:
    fail(f"cannot be read as Python: {e}")

found = []
for node in tree.body:
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    else:
        continue
    if any(isinstance(t, ast.Name) and t.id == "AGENT_INSTRUCTION" for t in targets):
        found.append(value)
if not found:
    fail("no module-level assignment `AGENT_INSTRUCTION = ...`")
if len(found) > 1:
    fail("more than one module-level assignment of AGENT_INSTRUCTION")
value = found[0]
if (
    isinstance(value, ast.Call)
    and isinstance(value.func, ast.Attribute)
    and value.func.attr == "strip"
    and not value.args
    and not value.keywords
):
    value = value.func.value
if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
    fail('AGENT_INSTRUCTION is not a string literal (optionally followed by `.strip()`)')
with open(out, "w", encoding="utf-8", newline="") as f:
    f.write(value.value.strip() + "\n")
PY

mkdir -p "$DEST"
for d in airline retail telecom; do
  rm -rf "${DEST:?}/$d"
  cp -r "$tmp/repo/data/tau2/domains/$d" "$DEST/$d"
done
rm -rf "${DEST:?}/user_simulator"
cp -r "$tmp/repo/data/tau2/user_simulator" "$DEST/"
mkdir -p "$DEST/agent"
cp "$tmp/agent_instruction.md" "$DEST/agent/agent_instruction.md"
cat >"$DEST/FETCHED.md" <<EOF
# Where this data directory came from

Written by tauguard's \`scripts/fetch-tau2-data.sh\` from τ²-bench (MIT licence)
at $REPO, commit $COMMIT.

Copied unchanged from upstream's tree:
- \`airline/\`, \`retail/\`, \`telecom/\` from \`data/tau2/domains/\`
- \`user_simulator/\` from \`data/tau2/user_simulator/\`

Extracted from upstream's code (upstream has no data file for it):
- \`agent/agent_instruction.md\`: the string assigned to \`AGENT_INSTRUCTION\` in
  \`$AGENT_PY\`, with surrounding whitespace stripped and one final newline.
EOF
echo "τ²-bench data at $DEST (commit $COMMIT)"
