#!/usr/bin/env bash
# Records A/A runs of the sample workloads (the same code, run after run) for the accuracy
# harness: tests/fixtures/recordings/STATE/run-NN.jsonl.
#
# Usage: scripts/record-aa.sh idle|busy RUNS [FIRST]
#   idle: nothing else should run on the machine.
#   busy: the script starts its own interference: one core spinning, and a memory-streaming
#         process that switches on and off at random, as neighbours on a shared runner do.
# RECORDING=NAME writes tests/fixtures/recordings/NAME instead of .../STATE (a new day's
# recording beside the others).
set -euo pipefail
cd "$(dirname "$0")/.."
state=${1:?usage: record-aa.sh idle|busy RUNS}
runs=${2:?usage: record-aa.sh idle|busy RUNS [FIRST]}
first=${3:-1}
out=tests/fixtures/recordings/${RECORDING:-$state}
mkdir -p "$out"
# Build once, then run the executable itself: a rebuild in the middle would disturb the runs.
exe=$(cargo bench -p benchgate-sample-workloads --no-run 2>&1 | sed -n 's/.*Executable.*(\(.*\)).*/\1/p' | tail -1)
[ -x "$exe" ] || { echo "cannot find the sample_workloads bench executable" >&2; exit 2; }

pids=()
# shellcheck source=scripts/interference.sh
source scripts/interference.sh
if [ "$state" = busy ]; then
    start_interference
fi
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT

for i in $(seq -f %02g "$first" "$runs"); do
    name="aa-$state-$i"
    "$exe" --bench --noplot --save-baseline "$name" > /dev/null 2>&1
    python3 scripts/criterion-to-jsonl.py target/criterion "$name" > "$out/run-$i.jsonl"
    echo "recorded $out/run-$i.jsonl ($(wc -l < "$out/run-$i.jsonl") benchmarks)"
done
