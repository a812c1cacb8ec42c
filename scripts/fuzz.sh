#!/usr/bin/env bash
# Fuzz tabwire's parsers, one target at a time, on the stable toolchain (RUSTC_BOOTSTRAP lets it
# take cargo-fuzz's flags), then shrink each corpus so it can be committed.
#
#   scripts/fuzz.sh                 every target, 10 million runs each
#   RUNS=100000 scripts/fuzz.sh     shorter
#   scripts/fuzz.sh wait chunks     only these targets
#
# Targets: the frame decoder (decode), the wire parser (parse), chunk reassembly (chunks) in
# proto/fuzz; the session socket's requests (session) and the /wait request policy (wait) in
# session/fuzz. Each corpus is committed as one file, <crate>/fuzz/corpus/<target>.pack (each input
# as a 4-byte little-endian length, then its bytes); this script unpacks it into
# <crate>/fuzz/corpus/<target>/ for the fuzzer, and packs what is left after minimizing. `cargo
# test` replays the packs on stable (proto/tests/fuzz_corpus.rs, session/tests/fuzz_corpus.rs;
# the format is proto/fuzz/src/replay.rs's). A crash leaves its input in
# <crate>/fuzz/artifacts/<target>/ and stops the script.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10000000}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1

# pack DIR FILE / unpack FILE DIR: a corpus folder to its committed file and back; inputs in
# byte order, named in the folder by their SHA-1 as libFuzzer names them.
pack() {
  python3 - "$1" "$2" <<'PY'
import os, struct, sys
folder, out = sys.argv[1:3]
inputs = sorted({open(os.path.join(folder, f), 'rb').read() for f in os.listdir(folder)})
with open(out, 'wb') as o:
    for data in inputs:
        o.write(struct.pack('<I', len(data)) + data)
print(f'corpus: {len(inputs)} inputs in {out}')
PY
}
unpack() {
  python3 - "$1" "$2" <<'PY'
import hashlib, os, struct, sys
pack, folder = sys.argv[1:3]
os.makedirs(folder, exist_ok=True)
data, at = open(pack, 'rb').read() if os.path.exists(pack) else b'', 0
while at < len(data):
    (n,) = struct.unpack_from('<I', data, at)
    item = data[at + 4:at + 4 + n]
    at += 4 + n
    open(os.path.join(folder, hashlib.sha1(item).hexdigest()), 'wb').write(item)
PY
}

all="proto:chunks proto:parse session:wait session:session proto:decode"
for spec in $all; do
  crate=${spec%%:*} target=${spec#*:}
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$target"; then continue; fi
  # The session's targets are safe Rust over serde and hyper types: no sanitizer, which builds
  # its many dependencies in a quarter of the time and runs several times faster.
  sanitizer=()
  [ "$crate" = session ] && sanitizer=(--sanitizer none)
  echo "== $target ($crate/fuzz): $runs runs"
  (
    cd "$crate"
    rm -rf "fuzz/corpus/$target"
    unpack "fuzz/corpus/$target.pack" "fuzz/corpus/$target"
    log="fuzz/$target.log"
    status=0
    nice -n 19 cargo fuzz run "${sanitizer[@]}" "$target" -- \
      -runs="$runs" -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 >"$log" 2>&1 ||
      status=$?
    grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec)' "$log" || true
    if [ -n "$(ls -A "fuzz/artifacts/$target" 2>/dev/null)" ]; then
      echo "$target found a crash: $crate/fuzz/artifacts/$target/ (log: $crate/$log)"; exit 1
    fi
    [ "$status" = 0 ] || { tail -30 "$log"; exit "$status"; }
    nice -n 19 cargo fuzz cmin "${sanitizer[@]}" "$target" 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new' || true
    pack "fuzz/corpus/$target" "fuzz/corpus/$target.pack"
  )
done
