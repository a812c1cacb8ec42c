#!/usr/bin/env bash
# Every test: unit, cross-process and real-Chromium. README command 2; CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# No incremental caches: a run of every test builds each crate about once, and the caches
# doubled target/'s size (25 of 55 GB here), which a CI machine's disk may not have.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
cargo test --locked --workspace --no-fail-fast "$@"
# The extension's pure logic (extension/lib/), in Node, without a browser.
node --test extension/lib/*.test.js
# The same state, event, session and operation flows with every client a session of
# `tabwire serve --http` (rmcp's streamable-HTTP client) instead of a `tabwire mcp` child.
# `--workspace` as above: the same features, so the same test programs, not a second build.
if [ "$#" -eq 0 ]; then
    TABWIRE_TEST_MCP=http cargo test --locked --workspace --no-fail-fast \
        --test browser --test clients -- state:: events:: sessions:: operations::
fi
# The Windows build under Wine (its unit tests and the real-browser test; every other test target
# built), and what this machine can check of macOS and of CI (scripts/cross.sh).
if [ "$#" -eq 0 ]; then
    ./scripts/windows.sh
    if [ -x scripts/cross.sh ]; then
        ./scripts/cross.sh
    fi
fi
