#!/usr/bin/env bash
# The soak benchmark (not in CI; its short guard is in CI: bridge/tests/attacks/abuse.rs): 10 sessions,
# each on a tab of its own and one the user shares, 1,000 page commands in flight, pages pushing
# events, for SECONDS (default 600) alone and as long again beside a session refused on every
# call, through a real headless Chromium, release binaries. Prints each period's served rate,
# the extension's CPU per reply, the worker's heap, host and bridge RSS; lost, misrouted and
# timed-out replies (docs/performance.md, "Soak"). SOAK_PERIOD=S sets the period (default 30);
# SOAK_PROFILE=DIR writes the worker's CPU profiles there.
#   scripts/soak.sh 120
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --locked --release --workspace --bins
SOAK_SECS=${1:-600} cargo bench --locked -p tabwire --bench soak
