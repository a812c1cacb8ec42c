#!/usr/bin/env bash
# Refreshes extension/vendor/axe.min.js (and its licence) from axe-core on npm: the engine of the
# audit_accessibility tool (extension/worker/dom/audit.js), which the worker injects into a page
# only for that call. No bundler: the package's own minified file is copied as it is, and the
# version is written beside it. Usage: scripts/vendor-axe.sh [version] (default: the latest).
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-latest}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "axe-core@$version" >/dev/null && tar xzf axe-core-*.tgz)
mkdir -p extension/vendor
cp "$work/package/axe.min.js" extension/vendor/axe.min.js
cp "$work/package/LICENSE" extension/vendor/axe-core.LICENSE
node -e 'const p=require(process.argv[1]); console.log(`axe-core ${p.version} (${p.license}), from npm: scripts/vendor-axe.sh`)' "$work/package/package.json" > extension/vendor/axe-core.VERSION
cat extension/vendor/axe-core.VERSION
