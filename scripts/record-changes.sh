#!/usr/bin/env bash
# Records a stored-baseline case with real code changes for the accuracy harness: a history of
# the sample workloads as they are (the default branch, run after run), then heads where k = 1,
# 2 and 3 benchmarks really do twice the work (`SLOWED` edited and the bench rebuilt, as a pull
# request changes code), each head run several times (the gate's re-runs).
# Output: tests/fixtures/recordings/STATE/{history,k1,k2,k3}-NN.jsonl.
#
# Usage: scripts/record-changes.sh idle|busy STATE-DIR HISTORY HEAD-RUNS
#   idle: nothing else should run on the machine.
#   busy: the script starts scripts/interference.sh (one core spinning, a
#         memory-streaming process switching on and off at random).
set -euo pipefail
cd "$(dirname "$0")/.."
load=${1:?usage: record-changes.sh idle|busy STATE-DIR HISTORY HEAD-RUNS}
state=${2:?usage: record-changes.sh idle|busy STATE-DIR HISTORY HEAD-RUNS}
history=${3:?usage: record-changes.sh idle|busy STATE-DIR HISTORY HEAD-RUNS}
head_runs=${4:?usage: record-changes.sh idle|busy STATE-DIR HISTORY HEAD-RUNS}
out=tests/fixtures/recordings/$state
lib=benches/sample-workloads/src/lib.rs
scratch=target/record-changes
mkdir -p "$out" "$scratch"

# The benchmarks each head slows, by a change of code: k = 1, 2, 3.
changes=(
    '("aead/seal/chacha20-poly1305", 2)'
    '("aead/seal/chacha20-poly1305", 2), ("framing/encode", 2)'
    '("aead/seal/chacha20-poly1305", 2), ("framing/encode", 2), ("handshake/x25519", 2)'
)

# Build every program first: a build in the middle would disturb the runs.
build() {
    cargo bench -p benchgate-sample-workloads --bench sample_workloads --no-run 2>&1 |
        sed -n 's/.*Executable.*(\(.*\)).*/\1/p' | tail -1
}
cp "$lib" "$scratch/lib.rs.orig"
trap 'cp "$scratch/lib.rs.orig" "$lib"' EXIT
grep -q '^pub const SLOWED: &\[(&str, usize)\] = &\[\];' "$lib" ||
    { echo "$lib: SLOWED is not the empty list this script edits" >&2; exit 2; }
exe=$(build)
cp "$exe" "$scratch/base"
for k in 1 2 3; do
    sed -i "s|^pub const SLOWED: &\[(&str, usize)\] = &\[.*\];|pub const SLOWED: \&[(\&str, usize)] = \&[${changes[$((k - 1))]}];|" "$lib"
    exe=$(build)
    cmp -s "$exe" "$scratch/base" && { echo "k = $k built the base's program" >&2; exit 2; }
    cp "$exe" "$scratch/k$k"
    cp "$scratch/lib.rs.orig" "$lib"
done

pids=()
# shellcheck source=scripts/interference.sh
source scripts/interference.sh
if [ "$load" = busy ]; then
    start_interference
fi
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; cp "$scratch/lib.rs.orig" "$lib"' EXIT

record() { # program name
    CRITERION_HOME="$scratch/criterion" "$scratch/$1" --bench --noplot --save-baseline "$2" \
        > /dev/null 2>&1
    python3 scripts/criterion-to-jsonl.py "$scratch/criterion" "$2" > "$out/$2.jsonl"
    echo "recorded $out/$2.jsonl ($(wc -l < "$out/$2.jsonl") benchmarks)"
}
for i in $(seq -f %02g 1 "$history"); do record base "history-$i"; done
for k in 1 2 3; do
    for i in $(seq -f %02g 1 "$head_runs"); do
        record "k$k" "k$k-$i"
    done
done
