#!/usr/bin/env bash
# What `benchgate ab` spends with the user's plain bench command, against one plain run of the
# same command timed in the same sitting (issue #48, docs/speed.md "The A/B gate's cost").
#
# The sample workloads as a crate that configures nothing (Criterion's defaults: 3 s warm-up,
# 5 s measurement, 100 samples), in a git repository with three commits: `base`, `same` (a
# comment added) and `slower` (the `hash` benchmarks hash 18% more bytes an iteration: a 15%
# throughput drop, 1.5 times the 10% limit). The bench command is the plain
# `cargo bench --bench sample_workloads -- 'hash|sort|bits'` (5 benchmarks).
#
# Usage: scripts/ab-cost.sh [idle|busy]...   (default: idle busy)
#   busy: scripts/interference.sh runs beside it (one core spinning, memory streaming on and off).
# Prints one row per case; writes target/ab-cost/results.md and each job's JSON and log there.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
states=("$@")
[ ${#states[@]} -gt 0 ] || states=(idle busy)
work=$root/target/ab-cost
rm -rf "$work/repo" "$work/criterion"
mkdir -p "$work"
cargo build --locked --quiet
bin=$root/target/debug/benchgate

repo=$work/repo
mkdir -p "$repo"
cp -r benches/sample-workloads/src benches/sample-workloads/benches "$repo/"
sed 's/^\[lints\]$/[workspace]/; /^workspace = true$/d' benches/sample-workloads/Cargo.toml > "$repo/Cargo.toml"
cp Cargo.lock "$repo/"
printf '/target/\n' > "$repo/.gitignore"
bench_file=$repo/benches/sample_workloads.rs
grep -q '    config = quick();' "$bench_file" || { echo "$bench_file: no 'config = quick();' to replace" >&2; exit 2; }
sed -i 's/    config = quick();/    config = Criterion::default();/' "$bench_file"
git_() { git -C "$repo" -c user.name=cost -c user.email=cost@example.com "$@"; }
git_ init -q -b base
git_ add .
git_ commit -q -m base
git_ checkout -q -b same base
printf '\n// A comment: the same program.\n' >> "$repo/src/lib.rs"
git_ commit -q -am same
git_ checkout -q -b slower base
old='b.iter(|| fnv1a(black_box(\&data)))'
grep -qF 'b.iter(|| fnv1a(black_box(&data)))' "$bench_file" || { echo "$bench_file: hash loop not found" >&2; exit 2; }
sed -i "s/$old/b.iter(|| fnv1a(black_box(\&data)) ^ fnv1a(black_box(\&data[..data.len() * 18 \/ 100])))/" "$bench_file"
git_ commit -q -am slower
git_ checkout -q base

command=(cargo bench --bench sample_workloads -- 'hash|sort|bits')
target=$work/target
# Built once before anything is timed.
(cd "$repo" && CARGO_TARGET_DIR=$target cargo bench --bench sample_workloads --no-run --quiet 2>/dev/null)

pids=()
# shellcheck source=scripts/interference.sh
source scripts/interference.sh
stop_interference() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; pids=(); }
trap stop_interference EXIT

results=$work/results.md
{
    echo "| machine | head | plain run (s) | ab bench (s) | ratio | rounds | regressed | pass | inconclusive |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
} > "$results"
for state in "${states[@]}"; do
    [ "$state" = busy ] && start_interference
    started=$(date +%s.%N)
    (cd "$repo" && CARGO_TARGET_DIR=$target CRITERION_HOME=$work/criterion "${command[@]}" > "$work/$state-plain.log" 2>&1)
    plain=$(echo "$(date +%s.%N) - $started" | bc)
    for head in same slower; do
        rm -f "$work/$state-$head.db"
        # Identical code builds the same executables: measured anyway, to see what it costs.
        (cd "$repo" && "$bin" ab --measure-identical --base-ref base --head-ref "$head" --repo acme/samples \
            --format json --target-dir "$target" --db "$work/$state-$head.db" \
            -- "${command[@]}" > "$work/$state-$head.json" 2> "$work/$state-$head.log") || true
        python3 - "$work/$state-$head.json" "$state" "$head" "$plain" >> "$results" <<'EOF'
import json, sys
path, state, head, plain = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
summary = json.load(open(path))
count = lambda v: sum(1 for b in summary["benchmarks"] if b["verdict"] == v)
bench = summary["bench_seconds"]
print(f"| {state} | {head} | {plain:.1f} | {bench:.1f} | {bench / plain:.2f} | {summary['rounds']} | "
      f"{count('regressed')} | {count('pass')} | {count('inconclusive')} |")
EOF
        tail -1 "$results"
    done
    stop_interference
done
cat "$results"
