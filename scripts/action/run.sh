#!/usr/bin/env bash
# The action's main step: run the mode asked for. Inputs arrive as environment variables only
# (never `${{ }}` inside a script). benchgate writes the step outputs and the job summary.
set -euo pipefail

mode="${INPUT_MODE:-ab}"
config_args=()
if [ -n "${INPUT_CONFIG:-}" ] && [ -f "$INPUT_CONFIG" ]; then
    config_args=(--config "$INPUT_CONFIG")
fi
warn_args=()
if [ "${INPUT_WARN_ONLY:-false}" = true ]; then
    warn_args=(--warn-only)
fi
collector_args=()
if [ -n "${INPUT_COLLECTOR_URL:-}" ]; then
    collector_args=(--collector "$INPUT_COLLECTOR_URL")
    export BENCHGATE_TOKEN="${INPUT_COLLECTOR_TOKEN:-}"
fi
# The comment links trends on the dashboard: the one named, else the collector's live one.
dashboard_url="${INPUT_DASHBOARD_URL:-${INPUT_COLLECTOR_URL:-}}"
if [ -n "$dashboard_url" ]; then
    export BENCHGATE_DASHBOARD_URL="$dashboard_url"
fi
# A command input as the words of one command, quoted the way a shell quotes them ('…', "…",
# \), so that a filter with a space or a regex in quotes reaches Criterion as one argument. It is
# not run through a shell: xargs splits it (nothing in it is expanded or executed), and `&&`,
# `|` or `;` would reach cargo as arguments, so they are refused here. Sets `words`.
command_words() {
    local input=$1 line=$2 parsed word
    parsed="$(mktemp)"
    if ! printf '%s\n' "$line" | xargs -r printf '%s\0' > "$parsed" 2> "$parsed.err"; then
        echo "::error title=benchgate::$input: $(sed 's/;.*//' "$parsed.err" | head -1) in: $line"
        rm -f "$parsed" "$parsed.err"
        exit 2
    fi
    words=()
    while IFS= read -r -d '' word; do words+=("$word"); done < "$parsed"
    rm -f "$parsed" "$parsed.err"
    if [ ${#words[@]} -eq 0 ]; then
        echo "::error title=benchgate::$input is empty"
        exit 2
    fi
    for word in "${words[@]}"; do
        case "$word" in
            '&&' | '||' | ';' | '|' | '&' | '>' | '>>' | '<')
                echo "::error title=benchgate::$input is one command and its arguments, not a shell line: \`$word\` would be passed to ${words[0]} as an argument. Set working-directory to run it in a subdirectory, or put the steps in a script and name the script."
                exit 2
                ;;
        esac
    done
}
command_words bench-command "${INPUT_BENCH_COMMAND:-cargo bench --workspace}"
bench_command=("${words[@]}")
# Custom metrics the bench command writes (Bencher's JSON), stored beside Criterion's results.
metrics_args=()
if [ -n "${INPUT_METRICS:-}" ]; then
    read -r -a metrics_files <<< "$INPUT_METRICS"
    for file in "${metrics_files[@]}"; do metrics_args+=(--metrics "$file"); done
fi
instructions_args=()
count_instructions() { :; }
if [ "${INPUT_INSTRUCTIONS:-false}" = true ]; then
    instructions_command="${INPUT_INSTRUCTIONS_COMMAND:-cargo bench --bench instructions}"
    instructions_args=(--instructions "$instructions_command")
    # Stored runs: gungraun writes its summaries under the target directory, where
    # `benchgate ingest` finds them beside Criterion's output.
    command_words instructions-command "$instructions_command"
    instructions_words=("${words[@]}")
    count_instructions() {
        GUNGRAUN_SAVE_SUMMARY=json "${instructions_words[@]}"
    }
fi

# Without a token (a requested run's benchmark job, which has none), the reports are written
# and nothing is published: a later job publishes them.
publish_args=(--publish)
if [ -z "${GITHUB_TOKEN:-}" ]; then
    publish_args=()
fi

head_sha() {
    # The pull request's head, not GITHUB_SHA (the merge commit).
    sed -n 's/.*"head": *{[^}]*"sha": *"\([0-9a-f]\{40\}\)".*/\1/p' "$GITHUB_EVENT_PATH" | head -1
}

# Modes pr and push: benchmark, store the run (ingest ARGS), upload it to the collector if one
# is set, and gate it against its stored baseline, re-running the head's undecided benchmarks
# up to max-runs head runs (within budget).
bench_store_and_gate() {
    "${bench_command[@]}"
    count_instructions
    local run
    # `--attempt next`: a re-run workflow, or a push of a commit already measured, is another
    # attempt under the same key, not a conflict.
    run="$(benchgate ingest "$@" --attempt next "${metrics_args[@]}" -- "${bench_command[@]}")"
    if [ ${#collector_args[@]} -gt 0 ]; then
        run="$(benchgate upload "$run" --attempt next "${collector_args[@]}")"
    fi
    # An empty max-runs leaves gate's own default (DEFAULT_MAX_RUNS in src/head_reruns.rs).
    local reruns_args=()
    if [ -n "${INPUT_MAX_RUNS:-}" ]; then reruns_args+=(--max-runs "$INPUT_MAX_RUNS"); fi
    if [ -n "${INPUT_BUDGET:-}" ]; then reruns_args+=(--budget "$INPUT_BUDGET"); fi
    benchgate gate --head "$run" "${collector_args[@]}" "${config_args[@]}" "${warn_args[@]}" \
        "${publish_args[@]}" "${reruns_args[@]}" --out-json perf-summary.json \
        --out-md perf-summary.md -- "${bench_command[@]}"
}

case "$mode" in
    ab)
        base_ref="${GITHUB_BASE_REF:+origin/$GITHUB_BASE_REF}"
        base_ref="${INPUT_BASE:-${base_ref:-HEAD~1}}"
        git fetch --no-tags --depth=50 origin "${INPUT_BASE:-${GITHUB_BASE_REF:-}}" 2>/dev/null || true
        rounds_args=(--max-rounds "${INPUT_MAX_ROUNDS:-8}")
        if [ -n "${INPUT_ROUNDS:-}" ]; then rounds_args=(--rounds "$INPUT_ROUNDS"); fi
        if [ -n "${INPUT_BUDGET:-}" ]; then rounds_args+=(--budget "$INPUT_BUDGET"); fi
        benchgate ab --base-ref "$base_ref" --head-ref HEAD "${rounds_args[@]}" \
            --kind pr "${instructions_args[@]}" "${config_args[@]}" "${warn_args[@]}" "${publish_args[@]}" \
            --out-json perf-summary.json --out-md perf-summary.md -- "${bench_command[@]}"
        ;;
    pr)
        sha="$(head_sha)"
        bench_store_and_gate --kind pr --commit "${sha:-$(git rev-parse HEAD)}"
        ;;
    push)
        # A push to a branch (main, as a rule): store the run and gate it against the newest
        # stored run of its nearest first-parent ancestor on this machine, the previous commit's
        # when it ran. The check goes on the pushed commit; there is no pull request to comment.
        if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
            git fetch --no-tags --deepen=50 origin 2>/dev/null || true
        fi
        bench_store_and_gate --kind push
        ;;
    nightly)
        "${bench_command[@]}"
        count_instructions
        # A night with no new commit measures the same commit again: the next attempt.
        run="$(benchgate ingest --kind nightly --attempt next "${metrics_args[@]}" -- "${bench_command[@]}")"
        if [ ${#collector_args[@]} -gt 0 ]; then
            benchgate upload "$run" --attempt next "${collector_args[@]}"
        fi
        if [ "${INPUT_BISECT:-false}" = true ]; then
            # Before the site is built, so each bisected change point shows its culprit.
            benchgate nightly --budget "${INPUT_BISECT_BUDGET:-30m}" "${config_args[@]}" \
                -- "${bench_command[@]}"
        fi
        benchgate dashboard --out "${RUNNER_TEMP:-/tmp}/benchgate-site" "${config_args[@]}"
        echo "site=${RUNNER_TEMP:-/tmp}/benchgate-site" >> "$GITHUB_OUTPUT"
        ;;
    override)
        benchgate override
        ;;
    request)
        benchgate request-run --label "${INPUT_RUN_LABEL:-benchgate-run}"
        ;;
    publish)
        requested_args=()
        if [ -n "${INPUT_REQUESTED_BY:-}" ]; then
            requested_args=(--requested-by "$INPUT_REQUESTED_BY" --sha "${INPUT_HEAD_SHA:-}")
        fi
        benchgate publish --from-artifact "${BENCHGATE_ARTIFACT_DIR:-benchgate-artifact}" \
            "${requested_args[@]}" "${warn_args[@]}"
        ;;
    *)
        echo "::error title=benchgate::unknown mode '$mode' (pr, ab, push, nightly, override, request, publish)"
        exit 2
        ;;
esac
