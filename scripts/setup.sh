#!/usr/bin/env bash
# Installs what tabwire's demo and tests need on a fresh Debian machine, and nothing else:
# Debian's Chromium, curl and jq (apt-get; scripts/wait-for-state.sh uses the last two), faketime
# (libfaketime: bridge/tests/attacks/abuse_operations.rs sets the bridge's wall clock with it), pdftotext
# (poppler-utils: bridge/tests/browser/webdev_network.rs reads a printed PDF with it), Xvfb (xvfb: a display
# for the headed Chromium of bridge/benches/browser/sessions.rs), Python's venv module
# (python3-venv: testkit/harness/pypi.rs makes a venv of Python chat frameworks from PyPI for
# bridge/tests/apps/chat_frameworks.rs) and a Rust toolchain (rustup) when they are missing.
set -euo pipefail

need_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! [ -x /usr/bin/chromium ]; then
  echo "setup: installing Debian's chromium package (apt-get)…" >&2
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if ! command -v curl >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
  echo "setup: installing curl and jq (apt-get)…" >&2
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl jq >/dev/null
fi

if ! command -v faketime >/dev/null 2>&1; then
  echo "setup: installing faketime (apt-get)…" >&2
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null
fi

if ! command -v Xvfb >/dev/null 2>&1; then
  echo "setup: installing xvfb (apt-get)…" >&2
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xvfb >/dev/null
fi

if ! command -v pdftotext >/dev/null 2>&1; then
  echo "setup: installing poppler-utils (apt-get)…" >&2
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null
fi

if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  echo "setup: installing python3-venv (apt-get)…" >&2
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: installing Rust with rustup…" >&2
    need_root apt-get install -y -qq curl build-essential >/dev/null
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi
