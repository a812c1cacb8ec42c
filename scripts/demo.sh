#!/usr/bin/env bash
# Builds tabwire and runs its demo through a real headless Chromium. README command 1.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo build --locked --release --bins
exec target/release/tabwire demo "$@"
