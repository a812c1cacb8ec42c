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

# What is missing, installed with one `apt-get update` and one `apt-get install`.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v faketime >/dev/null 2>&1 || missing+=(faketime)
command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]} (apt-get)…" >&2
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
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
