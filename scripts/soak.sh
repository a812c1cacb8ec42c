#!/usr/bin/env bash
# The soak benchmark (not in CI): 10 bridges, 1,000 page commands in flight, pages pushing
# events, for SECONDS (default 600) through a real headless Chromium, release binaries. Prints
# host and bridge RSS at start and end, and lost and misrouted replies.
#   scripts/soak.sh 120
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --locked --release --workspace --bins
SOAK_SECS=${1:-600} cargo bench --locked -p tabwire --bench soak
