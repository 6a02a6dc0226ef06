#!/usr/bin/env bash
# Records a stored-baseline case from a real crate's git history for the accuracy harness: one
# Criterion bench target built at a base commit and at a head commit that really changes code,
# then the base's program run HISTORY times (the default branch's runs), then the head's
# HEAD-RUNS times (the gate's re-runs).
# Output: tests/fixtures/recordings/STATE/{history,head}-NN.jsonl.
#
# Usage: scripts/record-crate.sh CRATE-DIR BASE-REF HEAD-REF BENCH STATE HISTORY HEAD-RUNS [CRITERION OPTIONS...]
#   e.g. scripts/record-crate.sh /tmp/useg main pr words useg-idle-2026-12-04 15 3 \
#            --warm-up-time 0.5 --measurement-time 1.5
# Nothing else should run on the machine. CRATE-DIR's checkout is left at HEAD-REF.
set -euo pipefail
usage="usage: record-crate.sh CRATE-DIR BASE-REF HEAD-REF BENCH STATE HISTORY HEAD-RUNS [OPTIONS...]"
crate=${1:?$usage}
base_ref=${2:?$usage}
head_ref=${3:?$usage}
bench=${4:?$usage}
state=${5:?$usage}
history=${6:?$usage}
head_runs=${7:?$usage}
shift 7
options=("$@")
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/tests/fixtures/recordings/$state"
scratch="$root/target/record-crate"
mkdir -p "$out" "$scratch"

# Build both programs first: a build in the middle would disturb the runs.
build() { # ref name
    git -C "$crate" checkout -q "$1"
    exe=$(cd "$crate" && cargo bench --bench "$bench" --no-run 2>&1 |
        sed -n 's/.*Executable.*(\(.*\)).*/\1/p' | tail -1)
    cp "$crate/$exe" "$scratch/$2"
}
build "$base_ref" base
build "$head_ref" head
cmp -s "$scratch/base" "$scratch/head" && { echo "$head_ref built the base's program" >&2; exit 2; }

record() { # program name
    # From the crate's directory: benches read their inputs relative to it.
    (cd "$crate" && CRITERION_HOME="$scratch/criterion" "$scratch/$1" --bench --noplot \
        --save-baseline "$2" "${options[@]}" > /dev/null 2>&1)
    python3 "$root/scripts/criterion-to-jsonl.py" "$scratch/criterion" "$2" > "$out/$2.jsonl"
    echo "recorded $out/$2.jsonl ($(wc -l < "$out/$2.jsonl") benchmarks)"
}
for i in $(seq -f %02g 1 "$history"); do record base "history-$i"; done
for i in $(seq -f %02g 1 "$head_runs"); do record head "head-$i"; done
