#!/usr/bin/env bash
# Offline quickstart: airline base split × 4 trials with the sim models (no key, no network
# once the data is present), then the report. Safe to rerun: it resumes the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TAUGUARD_DATA_DIR:-}" ]; then
  if [ -d data/tau2/airline ]; then
    export TAUGUARD_DATA_DIR=data/tau2
  elif [ -d ../shared/tau2/airline ]; then
    export TAUGUARD_DATA_DIR=../shared/tau2
  else
    scripts/fetch-tau2-data.sh data/tau2
    export TAUGUARD_DATA_DIR=data/tau2
  fi
fi
cargo build --release -p tauguard
# The binary is wherever cargo put it: CARGO_TARGET_DIR (relative to here, as cargo reads
# it) when set, else target/.
bin="${CARGO_TARGET_DIR:-target}/release/tauguard"
out=results/quickstart
"$bin" run configs/quickstart.toml --out "$out" --resume
"$bin" report "$out"
