#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance, on Node 22 from
# npm) against `tabwire serve --http`, every server scenario (`--suite all`); prints the
# summary and leaves each scenario's checks in target/conformance/results. specs/http.md,
# "Conformance", says which scenarios pass and why the others cannot.
# The suite cannot send headers: scripts/conformance-proxy.mjs adds the bearer token.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/conformance
mkdir -p "$dir"
if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
  npm install --prefix "$dir" --no-audit --no-fund @modelcontextprotocol/conformance@0.1.16 node@22
fi
node22="$dir/node_modules/.bin/node"
cargo build --workspace --bins
scratch=$(mktemp -d /tmp/tw-conformance-XXXXXX)
chmod 700 "$scratch"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$scratch"; }
trap cleanup EXIT
TABWIRE_RUNTIME_DIR="$scratch/run" TABWIRE_STATE_DIR="$scratch/state" \
  TABWIRE_CONFIG_DIR="$scratch/config" TABWIRE_TOOLS=all \
  env -u TABWIRE_SESSION_ID target/debug/tabwire serve --http 127.0.0.1:0 2>"$scratch/serve.err" &
pids+=($!)
for _ in $(seq 100); do grep -q 'Bearer ' "$scratch/serve.err" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$scratch/serve.err")
token=$(grep -o 'Bearer [0-9a-f]*' "$scratch/serve.err" | cut -d' ' -f2)
port=$((20000 + RANDOM % 20000))
"$node22" scripts/conformance-proxy.mjs "$port" "$url" "$token" &
pids+=($!)
sleep 1
rm -rf "$dir/results"
"$node22" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
  --url "http://127.0.0.1:$port/mcp" --suite all -o "$dir/results" >"$dir/suite.log" 2>&1 || true
sed -n '/=== SUMMARY/,$p' "$dir/suite.log"
