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
# session/fuzz. The corpora live in <crate>/fuzz/corpus/<target>; `cargo test` replays them on
# stable (proto/tests/fuzz_corpus.rs, session/tests/fuzz_corpus.rs). A crash leaves its input in
# <crate>/fuzz/artifacts/<target>/ and stops the script.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10000000}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1

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
    mkdir -p "fuzz/corpus/$target"
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
    echo "corpus: $(ls "fuzz/corpus/$target" | wc -l) files"
  )
done
