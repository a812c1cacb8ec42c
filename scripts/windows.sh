#!/usr/bin/env bash
# The Windows build's tests, run here under Wine: the unit tests of proto, host, install and the
# bridge built for x86_64-pc-windows-gnu, with Wine as the test runner (named pipes, their
# security descriptor and peer checks, job objects, file locks); every other test target built
# for Windows (not run; skipped when a test is named); then the real-browser test
# bridge/tests/install/windows.rs, where Debian's Chromium starts the Windows tabwire-host.exe and the
# Windows `tabwire.exe mcp` drives it, and install / doctor / uninstall meet Wine's registry;
# then the whole browser suite with the Windows programs in place of the Linux ones.
# Installs Wine, the mingw-w64 linker and the rustup target when missing. Arguments go to every
# `cargo test` (e.g. a test name). scripts/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

need_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v wine >/dev/null 2>&1 || ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
  echo "windows: installing wine64 and gcc-mingw-w64-x86-64 (apt-get)…" >&2
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine64 gcc-mingw-w64-x86-64 >/dev/null
fi
target=x86_64-pc-windows-gnu
if ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target"
fi

target_dir=$(cargo metadata --format-version 1 --no-deps | jq -r .target_directory)
out="$target_dir/$target/debug"
mkdir -p "$out/deps"
# Wine 8.0 lacks bcryptprimitives.dll's ProcessPrng, which every Rust program imports on Windows:
# a stand-in beside the test executables (deps/) and the binaries (debug/) lets them load.
dll="$out/bcryptprimitives.dll"
if ! [ -f "$dll" ] || [ scripts/wine/bcryptprimitives.c -nt "$dll" ]; then
  x86_64-w64-mingw32-gcc -shared -O2 -o "$dll" scripts/wine/bcryptprimitives.c \
    -ladvapi32 -Wl,--kill-at
fi
cp "$dll" "$out/deps/"

# A Wine of our own: its registry and files, apart from the user's ~/.wine.
export WINEPREFIX="${WINEPREFIX:-$target_dir/wine-prefix}"
export WINEDEBUG=-all
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
if ! [ -f "$WINEPREFIX/system.reg" ]; then
  echo "windows: preparing the Wine prefix $WINEPREFIX…" >&2
  wineboot -i >/dev/null 2>&1
  # wineboot copies Wine's own DLLs and programs into the prefix (650 MB with Debian's Wine 8):
  # a link to each file it copied unchanged serves Wine as well and takes no room.
  builtins=$(ls -d /usr/lib/*/wine/x86_64-windows /usr/lib/wine/x86_64-windows 2>/dev/null |
    head -n1 || true)
  if [ -n "$builtins" ]; then
    find "$WINEPREFIX/drive_c/windows" -type f -print0 | while IFS= read -r -d '' file; do
      own="$builtins/${file##*/}"
      if [ -f "$own" ] && cmp -s "$file" "$own"; then ln -sf "$own" "$file"; fi
    done
  fi
fi

# Every run, whatever the one before it did; the script fails if any did. No incremental
# build for Windows: its caches would take gigabytes for builds made once. Every cargo call
# here and in scripts/test.sh selects the whole workspace (`--workspace`, narrowed by target
# names): one set of features, so each crate and test program is built once, not once per
# selection of packages.
# The Windows programs and test executables keep neither debug info nor symbols (1.3 GB of them
# become 0.9): a failure under Wine still names its test and the file and line it failed at,
# and the browser suite's test programs, which run on Linux, keep their backtraces. The deps'
# builds are the same either way; only the workspace's crates differ from a plain build.
# Its Linux cargo calls build as scripts/test.sh does (no incremental caches), so that run alone
# they take test.sh's build as it is.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
windows=(env CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=false CARGO_PROFILE_DEV_STRIP=symbols cargo)
failed=0
started=$SECONDS
"${windows[@]}" test --locked --target "$target" --no-fail-fast --workspace --lib \
  --test integration --test fuzz_corpus "$@" || failed=1
echo "windows: unit tests under Wine took $((SECONDS - started)) s" >&2

# The other test targets built for Windows, not run, so that none stops building there (the
# bridge's theme binaries): what cannot run on Windows is cfg(unix) in them, with why
# (specs/install.md, "The tests on Windows").
if [ "$#" -eq 0 ]; then
  started=$SECONDS
  "${windows[@]}" test --locked --target "$target" --no-run --workspace || failed=1
  echo "windows: the other test targets built in $((SECONDS - started)) s" >&2
fi

# The real-browser test: the Windows binaries beside the DLL, driven from a Linux test (which
# installs the Linux Chromium's manifest with the Linux `tabwire`, so that is built too).
started=$SECONDS
# The programs as the test builds make them: `cargo build` would leave out the dev-dependencies'
# features and build them again (a minute each).
"${windows[@]}" test --locked --target "$target" --no-run --workspace --test install ||
  failed=1
cargo test --locked --no-run --workspace --test install || failed=1
TABWIRE_WINDOWS_BINS="$out" cargo test --locked --workspace --no-fail-fast --test install \
  -- windows:: "$@" || failed=1
echo "windows: the real-browser test took $((SECONDS - started)) s" >&2

# The real-browser suite with the Windows programs: the browser tests (Linux programs that
# drive Debian's Chromium over its CDP pipe) with tabwire.exe and tabwire-host.exe under Wine in
# place of the Linux ones (testkit/harness/wine.rs). The tests that cannot run so are skipped by
# name; specs/install.md ("The browser suite under Wine") says why for each.
if [ "$#" -eq 0 ]; then
  started=$SECONDS
  skip=()
  for name in $(sed -n 's/^| `browser` → `\(.*\)` |.*/\1/p' specs/install.md); do
    skip+=(--skip "$name")
  done
  log="$target_dir/windows-browser.log"
  TABWIRE_TEST_WINDOWS_BINS="$out" cargo test --locked --workspace --no-fail-fast --test browser \
    -- "${skip[@]}" 2>&1 | tee "$log" >&2 || failed=1
  linux=$(cargo test --locked --workspace --test browser -- --list 2>/dev/null | grep -c ': test$')
  passed=$(sed -n 's/^test result: .* \([0-9]*\) passed.*/\1/p' "$log" | tail -n1)
  echo "windows: the browser suite under Wine: ${passed:-0} of the $linux tests Linux runs passed" \
    "($((${#skip[@]} / 2)) not run there: specs/install.md) in $((SECONDS - started)) s" >&2
fi

# The same test with the binaries of the Windows npm package (@tabwire/win32-x64): what
# `npx -y tabwire` installs on Windows, packed by scripts/npm-pack.sh from the programs built
# above (`--prebuilt`, as the release workflow packs its builds), unpacked beside the DLL.
if command -v npm >/dev/null 2>&1; then
  packed="$target_dir/npm"
  rm -rf "$packed/prebuilt" && mkdir -p "$packed/prebuilt/win32-x64"
  ln -s "$out/tabwire.exe" "$out/tabwire-host.exe" "$packed/prebuilt/win32-x64/"
  ./scripts/npm-pack.sh --platform win32-x64 --prebuilt "$packed/prebuilt" --out "$packed" >&2 ||
    failed=1
  package=$(ls "$packed"/tabwire-win32-x64-*.tgz 2>/dev/null | head -n1 || true)
fi
if [ -n "${package:-}" ]; then
  unpacked="$target_dir/npm/win32-x64-bin"
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  tar -xzf "$package" -C "$unpacked" --strip-components=2 package/bin
  cp "$dll" "$unpacked/"
  started=$SECONDS
  TABWIRE_WINDOWS_BINS="$unpacked" cargo test --locked --workspace --no-fail-fast --test install \
    -- windows:: "$@" || failed=1
  rm -rf "$unpacked" "$packed/prebuilt"
  echo "windows: the npm package's binaries ($(basename "$package")) took $((SECONDS - started)) s" >&2
else
  echo "windows: no npm on PATH to pack tabwire-win32-x64 with: the npm package's binaries were not run" >&2
fi
exit "$failed"
