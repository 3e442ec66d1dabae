#!/usr/bin/env bash
# Fetches τ²-bench's data (MIT licence) into data/tau2/<domain>/ at a pinned upstream commit.
# Needs network access to GitHub; tauguard reads the result via --data-dir or TAUGUARD_DATA_DIR
# (data/tau2 is also the default).
set -euo pipefail
COMMIT=a2c024725189473d2d7cea3a5cfdbcc67478e41f
DEST="${1:-data/tau2}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone --filter=blob:none --no-checkout https://github.com/sierra-research/tau2-bench "$tmp/repo"
git -C "$tmp/repo" checkout -q "$COMMIT" -- data/tau2/domains data/tau2/user_simulator
mkdir -p "$DEST"
for d in airline retail telecom; do
  rm -rf "${DEST:?}/$d"
  cp -r "$tmp/repo/data/tau2/domains/$d" "$DEST/$d"
done
cp -r "$tmp/repo/data/tau2/user_simulator" "$DEST/"
echo "τ²-bench data at $DEST (commit $COMMIT)"
