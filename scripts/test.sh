#!/usr/bin/env bash
# Every test: unit, cross-process and real-Chromium. README command 2; CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# Tests drive the real binaries, so build all of them first.
cargo build --locked --workspace --bins
cargo test --locked --workspace --no-fail-fast "$@"
