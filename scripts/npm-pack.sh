#!/usr/bin/env bash
# Packs the npm packages the way esbuild and biome ship native programs: `tabwire` (npm/tabwire:
# a small Node launcher whose optionalDependencies name one package per system) and
# `@tabwire/<os>-<cpu>` (that system's prebuilt tabwire and tabwire-host, which carry the
# extension), so that npm installs the right program and downloads nothing else.
#
#   scripts/npm-pack.sh [--out DIR] [--platform P]... [--prebuilt DIR]
#
# Without --prebuilt it builds (cargo, release) what this machine can link: linux-x64, and
# win32-x64 through mingw-w64 when that target builds (skipped with a message when it does not,
# unless asked for with --platform). With --prebuilt DIR it packs DIR/<platform>/tabwire[.exe]
# and tabwire-host[.exe] built elsewhere (the release workflow's builds), with no cargo.
# Writes DIR/*.tgz (default target/npm): tabwire-VERSION.tgz, tabwire-<platform>-VERSION.tgz.
set -euo pipefail
cd "$(dirname "$0")/.."

# platform  rust target (built here)  os  cpu
PLATFORMS="linux-x64 x86_64-unknown-linux-gnu linux x64
linux-arm64 aarch64-unknown-linux-gnu linux arm64
darwin-arm64 aarch64-apple-darwin darwin arm64
darwin-x64 x86_64-apple-darwin darwin x64
win32-x64 x86_64-pc-windows-gnu win32 x64"

out=target/npm prebuilt="" wanted=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --platform) wanted+=("$2"); shift 2 ;;
    --prebuilt) prebuilt=$2; shift 2 ;;
    *) echo "npm-pack: unknown argument $1 (see the top of $0)" >&2; exit 2 ;;
  esac
done
for p in ${wanted[@]+"${wanted[@]}"}; do
  grep -q "^$p " <<<"$PLATFORMS" || {
    echo "npm-pack: no platform $p; these exist: $(cut -d' ' -f1 <<<"$PLATFORMS" | xargs)" >&2
    exit 2
  }
done
command -v npm >/dev/null || { echo "npm-pack: npm is missing (apt-get install nodejs npm)" >&2; exit 1; }

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
[ -n "$version" ] || { echo "npm-pack: no version in Cargo.toml's [workspace.package]" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage="$out/stage"
rm -rf "$stage" "$out"/*.tgz
mkdir -p "$stage"

# The programs of one platform, in $stage/<platform>/bin; fails with why when they cannot be had.
programs() {
  local platform=$1 target=$2 exe=""
  [ "$platform" = win32-x64 ] && exe=.exe
  local bin="$stage/$platform/bin" from
  mkdir -p "$bin"
  if [ -n "$prebuilt" ]; then
    from="$prebuilt/$platform"
  else
    case "$platform" in
      linux-x64 | win32-x64) ;;
      *) echo "npm-pack: $platform is built by the release workflow, not here: pass its programs with --prebuilt DIR" >&2; return 1 ;;
    esac
    local args=(build --release --locked --bin tabwire --bin tabwire-host)
    [ "$platform" = linux-x64 ] || args+=(--target "$target")
    echo "npm-pack: cargo ${args[*]}" >&2
    cargo "${args[@]}" >&2 || return 1
    local dir
    dir=$(cargo metadata --format-version 1 --no-deps | node -pe 'JSON.parse(require("fs").readFileSync(0)).target_directory')
    from="$dir/release"
    [ "$platform" = linux-x64 ] || from="$dir/$target/release"
  fi
  for name in tabwire tabwire-host; do
    [ -f "$from/$name$exe" ] || { echo "npm-pack: $from/$name$exe is missing" >&2; return 1; }
    cp "$from/$name$exe" "$bin/" || return 1
    chmod 755 "$bin/$name$exe"
  done
}

# package.json and README of @tabwire/<platform>.
describe() {
  local platform=$1 os=$2 cpu=$3
  PLATFORM=$platform OS=$os CPU=$cpu VERSION=$version node -e '
    const e = process.env;
    const pkg = {
      name: `@tabwire/${e.PLATFORM}`,
      version: e.VERSION,
      description: `The tabwire program for ${e.OS} ${e.CPU}: the "tabwire" package runs it.`,
      license: "MIT OR Apache-2.0",
      repository: { type: "git", url: "git+https://github.com/tabwire/tabwire.git" },
      os: [e.OS],
      cpu: [e.CPU],
      files: ["bin"],
      preferUnplugged: true,
    };
    require("fs").writeFileSync(process.argv[1], JSON.stringify(pkg, null, 2) + "\n");
  ' "$stage/$platform/package.json"
  printf '# @tabwire/%s\n\nThe prebuilt `tabwire` and `tabwire-host` for %s %s. Install the `tabwire` package, which\nruns them: `npx -y tabwire install`.\n' \
    "$platform" "$os" "$cpu" >"$stage/$platform/README.md"
}

# Which platforms: those named, else every one --prebuilt holds, else what this machine links.
selected=$(while read -r platform rest; do
  if [ ${#wanted[@]} -gt 0 ]; then
    printf '%s\n' "${wanted[@]}" | grep -qx "$platform" || continue
  elif [ -n "$prebuilt" ]; then
    [ -d "$prebuilt/$platform" ] || continue
  else
    case "$platform" in linux-x64 | win32-x64) ;; *) continue ;; esac
  fi
  echo "$platform $rest"
done <<<"$PLATFORMS")

packed=()
while read -r platform target os cpu; do
  [ -n "$platform" ] || continue
  if ! programs "$platform" "$target"; then
    # Asked for by name, from prebuilt programs, or this machine's own: missing is an error.
    if [ ${#wanted[@]} -gt 0 ] || [ -n "$prebuilt" ] || [ "$platform" = linux-x64 ]; then
      echo "npm-pack: cannot pack @tabwire/$platform (above: why)" >&2
      exit 1
    fi
    echo "npm-pack: SKIPPED @tabwire/$platform: its programs did not build here (above: why)" >&2
    rm -rf "${stage:?}/$platform"
    continue
  fi
  describe "$platform" "$os" "$cpu"
  (cd "$stage/$platform" && npm pack --silent --pack-destination "$out" >/dev/null)
  packed+=("@tabwire/$platform")
done <<<"$selected"

# The launcher package, its version and its platform packages' versions set to this one.
cp -r npm/tabwire "$stage/tabwire"
VERSION=$version node -e '
  const fs = require("fs"), file = process.argv[1];
  const pkg = JSON.parse(fs.readFileSync(file));
  pkg.version = process.env.VERSION;
  for (const name of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[name] = process.env.VERSION;
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$stage/tabwire/package.json"
(cd "$stage/tabwire" && npm pack --silent --pack-destination "$out" >/dev/null)

# The tarballs are what is kept: the staged copies of the programs would double their size.
rm -rf "$stage"
echo "npm-pack: packed tabwire ${packed[*]} $version into $out:" >&2
ls -l "$out"/*.tgz >&2
