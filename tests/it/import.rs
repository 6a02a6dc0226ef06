//! `benchgate import-history` on real histories: github-action-benchmark's `data.js` (rune's)
//! and git-bench's `data.json` (RFC 3339 dates, Criterion's `[low, high]` intervals).

use crate::support::*;
use serde_json::Value;

const DATA: &str = "rune-rs__rune/dev/bench/data.js";

#[test]
fn a_github_action_benchmark_history_becomes_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = corpus(DATA);
    let args = [
        "import-history",
        data.to_str().unwrap(),
        "--repo",
        "rune-rs/rune",
    ];
    let output = benchgate(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("imported 411 runs of rune-rs/rune"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("(411 new)"));
    // Again: nothing new.
    assert!(stderr(&benchgate(dir.path(), &args)).contains("(0 new)"));

    let runs: Value =
        serde_json::from_slice(&benchgate(dir.path(), &["runs", "--format", "json"]).stdout)
            .unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 411);
    // The one commit measured twice is stored as attempts 1 and 2.
    let twice: Vec<&Value> = runs
        .iter()
        .filter(|r| r["commit"] == "4fc03953d5891b7df03ccfcd96c592224e662592")
        .collect();
    assert_eq!(
        twice
            .iter()
            .map(|r| r["attempt"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![1, 2]
    );
    let last = runs.last().unwrap();
    assert_eq!(last["commit"], "54fe7cb8eaa3603932a09f678af9d07f39a8d796");
    assert_eq!(last["recorded_at"], "2026-07-30T02:16:16Z");
    assert_eq!(last["branch"], "main");
    let shown: Value = serde_json::from_slice(
        &benchgate(dir.path(), &["show", "latest", "--format", "json"]).stdout,
    )
    .unwrap();
    let measurements = shown["measurements"].as_array().unwrap();
    assert_eq!(measurements.len(), 15);
    let rhai = measurements
        .iter()
        .find(|m| m["id"] == "primes/rhai")
        .unwrap();
    assert_eq!(rhai["median"]["point"], 12310175.0);
    assert_eq!(rhai["median"]["lower"], 12310175.0 - 123815.0);
    assert_eq!(rhai["median"]["upper"], 12310175.0 + 123815.0);
}

#[test]
fn a_git_bench_history_keeps_its_dates_and_criterion_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let data = corpus("fedemagnani__git-bench/dev/bench/data.json");
    let args = [
        "import-history",
        data.to_str().unwrap(),
        "--repo",
        "fedemagnani/git-bench",
    ];
    let output = benchgate(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("(18 new)"), "{}", stderr(&output));
    let runs: Value =
        serde_json::from_slice(&benchgate(dir.path(), &["runs", "--format", "json"]).stdout)
            .unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 18);
    // "date": "2025-12-25T01:04:38.601003Z" and "2026-01-05T20:09:20.552557155Z".
    assert_eq!(runs[0]["recorded_at"], "2025-12-25T01:04:38Z");
    assert_eq!(runs[17]["recorded_at"], "2026-01-05T20:09:20Z");
    assert_eq!(
        runs[17]["commit"],
        "052b3a6f414b08cf18e7978e4acbeaf1a1d79194"
    );
    let shown: Value = serde_json::from_slice(
        &benchgate(dir.path(), &["show", "latest", "--format", "json"]).stdout,
    )
    .unwrap();
    let product = shown["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "arithmetic::product_10")
        .unwrap();
    // "value": 4.6662, "unit": "ns", "range": "[4.6594 ns, 4.6759 ns]".
    assert_eq!(product["median"]["point"], 4.6662);
    assert_eq!(product["median"]["lower"], 4.6594);
    assert_eq!(product["median"]["upper"], 4.6759);
}

#[test]
fn a_bad_history_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("data.json");
    let entry = |unit: &str| {
        format!(
            r#"{{"entries": {{"Benchmark": [{{"commit": {{"id": "{}"}}, "date": 1, "benches": [{{"name": "a", "value": 3, "unit": "{unit}"}}]}}]}}}}"#,
            "a".repeat(40)
        )
    };
    std::fs::write(&bad, entry("ops/sec")).unwrap();
    let args = ["import-history", "data.json", "--repo", "acme/rocket"];
    assert_refused(
        &benchgate(dir.path(), &args),
        &[
            "data.json",
            "`entries.Benchmark[0].benches[0].unit`",
            "\"ops/sec\" is not a time unit",
        ],
    );
    assert!(!dir.path().join(".benchgate").exists(), "nothing stored");
    let dated = entry("ms").replace(r#""date": 1"#, r#""date": "yesterday""#);
    std::fs::write(&bad, dated).unwrap();
    assert_refused(
        &benchgate(dir.path(), &args),
        &[
            "data.json",
            "`entries.Benchmark[0].date`",
            "\"yesterday\" is neither milliseconds since the epoch nor an RFC 3339 time",
        ],
    );
    assert!(!dir.path().join(".benchgate").exists(), "nothing stored");
    let absurd = entry("s").replace(r#""value": 3"#, r#""value": 1e300"#);
    std::fs::write(&bad, absurd).unwrap();
    assert_refused(
        &benchgate(dir.path(), &args),
        &[
            "`entries.Benchmark[0].benches[0].value`",
            "more than an hour per iteration",
        ],
    );
    assert!(!dir.path().join(".benchgate").exists(), "nothing stored");
    std::fs::write(&bad, entry("ms")).unwrap();
    let output = benchgate(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown: Value = serde_json::from_slice(
        &benchgate(dir.path(), &["show", "latest", "--format", "json"]).stdout,
    )
    .unwrap();
    assert_eq!(
        shown["measurements"][0]["median"]["point"], 3e6,
        "ms are read as ns"
    );
}
