#!/usr/bin/env bash
# Offline quickstart: airline base split × 4 trials with the sim models (no key, no network
# once the data is present), then the report. Safe to rerun: it resumes the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
# One data-directory discovery for every command: tauguard reads --data-dir, then
# TAUGUARD_DATA_DIR, then data/tau2. Without the first two, the quickstart makes data/tau2
# exist — a link to a τ²-bench data directory beside the checkout (../shared/tau2), else a
# fresh fetch — so every later `tauguard` command run from here finds the same data.
if [ -z "${TAUGUARD_DATA_DIR:-}" ] && [ ! -e data/tau2 ]; then
  mkdir -p data
  if [ -d ../shared/tau2/airline ]; then
    ln -s "$(cd ../shared/tau2 && pwd)" data/tau2
    echo "data/tau2 -> $(readlink data/tau2)"
  else
    scripts/fetch-tau2-data.sh data/tau2
  fi
fi
cargo build --release -p tauguard
# The binary is wherever cargo put it: CARGO_TARGET_DIR (relative to here, as cargo reads
# it) when set, else target/.
bin="${CARGO_TARGET_DIR:-target}/release/tauguard"
out=results/quickstart
"$bin" run configs/quickstart.toml --out "$out" --resume
"$bin" report "$out"
