#!/usr/bin/env bash
# Every benchmark, in release, printing numbers (none of them is a pass/fail test).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --locked --release --workspace --bins
cargo bench --locked -p tabwire --bench host_relay
cargo bench --locked -p tabwire --bench browser
