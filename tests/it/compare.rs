//! `benchgate compare` end to end on real Criterion output: verdicts, exit codes, reports, rounds
//! and bad configuration.

use crate::support::*;

const TREE: &str = "dicethedev__MerkleForge/target/criterion";

#[test]
fn a_thirty_percent_slowdown_exits_1_and_warn_only_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let slower = scaled_copy(TREE, 1.3);
    let base = corpus(TREE);
    let (base, slower) = (base.to_str().unwrap(), slower.path().to_str().unwrap());
    // Two A/B rounds: between one pair of runs, everything moving could be the machine.
    let args = [
        "compare", "--base", base, "--head", slower, "--base", base, "--head", slower, "--format",
        "json",
    ];
    let output = benchgate(dir.path(), &args);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["verdict"], "regressed");
    assert_eq!(summary["counts"]["regressed"], 30);
    let first = &summary["benchmarks"][0];
    assert!((first["ratio"].as_f64().unwrap() - 1.3).abs() < 1e-9);
    assert_eq!(
        first["metric"], "throughput",
        "MerkleForge benchmarks declare Bytes"
    );
    assert_eq!(first["noise_source"], "rounds");

    let mut warn_only = args.to_vec();
    warn_only.push("--warn-only");
    assert_eq!(benchgate(dir.path(), &warn_only).status.code(), Some(0));
}

#[test]
fn a_single_uncalibrated_pair_never_passes() {
    let dir = tempfile::tempdir().unwrap();
    let base = corpus(TREE);
    let output = benchgate(
        dir.path(),
        &[
            "compare",
            "--base",
            base.to_str().unwrap(),
            "--head",
            base.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["verdict"], "inconclusive");
    assert_eq!(summary["benchmarks"][0]["uncalibrated"], true);
}

#[test]
fn identical_trees_pass_and_write_both_reports() {
    let dir = tempfile::tempdir().unwrap();
    let base = corpus(TREE);
    let base = base.to_str().unwrap();
    let output = benchgate(
        dir.path(),
        &[
            "compare",
            "--base",
            base,
            "--head",
            base,
            "--base",
            base,
            "--head",
            base,
            "--out-md",
            "perf-summary.md",
            "--out-json",
            "perf-summary.json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("benchgate pass: no regression in 30 benchmarks"),
        "{}",
        stdout(&output)
    );
    let markdown = std::fs::read_to_string(dir.path().join("perf-summary.md")).unwrap();
    assert!(markdown.starts_with("## ✅ benchgate pass"), "{markdown}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("perf-summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["verdict"], "pass");
    assert_eq!(summary["schema_version"], 1);
}

#[test]
fn rounds_pair_in_order_and_stored_runs_count_as_sides() {
    let dir = tempfile::tempdir().unwrap();
    let base = corpus(TREE);
    let slower = scaled_copy(TREE, 1.25);
    let slower_again = scaled_copy(TREE, 1.26);
    let commits = [
        "1111111111111111111111111111111111111111",
        "2222222222222222222222222222222222222222",
    ];
    for (tree, commit, attempt) in [
        (base.to_str().unwrap(), commits[0], "1"),
        (base.to_str().unwrap(), commits[0], "2"),
        (slower.path().to_str().unwrap(), commits[1], "1"),
        (slower_again.path().to_str().unwrap(), commits[1], "2"),
    ] {
        let output = benchgate(
            dir.path(),
            &[
                "ingest",
                tree,
                "--repo",
                "a/b",
                "--commit",
                commit,
                "--attempt",
                attempt,
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let output = benchgate(
        dir.path(),
        &[
            "compare", "--base", "1", "--head", "3", "--base", "2", "--head", "4", "--format",
            "json",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["mode"], "same-job-ab");
    assert_eq!(summary["rounds"], 2);
    assert_eq!(summary["base_commit"], commits[0]);
    assert_eq!(summary["head_commit"], commits[1]);
    assert_eq!(summary["benchmarks"][0]["noise_source"], "rounds");
    assert_eq!(summary["fingerprint"].as_str().unwrap().len(), 64);
}

#[test]
fn bad_arguments_and_configs_exit_2_naming_the_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let base = corpus(TREE);
    let base = base.to_str().unwrap();
    std::fs::write(
        dir.path().join("benchgate.toml"),
        "[gate]\nlatency_increse = \"20%\"\n",
    )
    .unwrap();
    let output = benchgate(dir.path(), &["compare", "--base", base, "--head", base]);
    assert_refused(
        &output,
        &["benchgate.toml", "gate.latency_increse", "unknown field"],
    );

    std::fs::write(
        dir.path().join("other.toml"),
        "[gate]\nthroughput_drop = \"ten\"\n",
    )
    .unwrap();
    let output = benchgate(
        dir.path(),
        &[
            "compare",
            "--base",
            base,
            "--head",
            base,
            "--config",
            "other.toml",
        ],
    );
    assert_refused(
        &output,
        &["other.toml", "gate.throughput_drop", "percentage"],
    );

    std::fs::remove_file(dir.path().join("benchgate.toml")).unwrap();
    assert_refused(
        &benchgate(
            dir.path(),
            &["compare", "--base", base, "--base", base, "--head", base],
        ),
        &["--base was given 2 times"],
    );
    assert_refused(
        &benchgate(dir.path(), &["compare", "--base", "nope", "--head", base]),
        &["--base nope", "neither"],
    );
    assert_refused(
        &benchgate(dir.path(), &["compare", "--base", "7", "--head", base]),
        &["--base 7", "no store"],
    );
}

#[test]
fn a_config_that_loosens_a_limit_turns_a_failure_into_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let slower = scaled_copy(TREE, 1.3);
    let base = corpus(TREE);
    std::fs::write(
        dir.path().join("benchgate.toml"),
        "[[override]]\nbenchmarks = \"*\"\nthroughput_drop = \"50%\"\n",
    )
    .unwrap();
    let output = benchgate(
        dir.path(),
        &[
            "compare",
            "--base",
            base.to_str().unwrap(),
            "--head",
            slower.path().to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_ne!(summary["verdict"], "regressed");
    assert_eq!(output.status.code(), Some(0));
    assert!((summary["benchmarks"][0]["limit"].as_f64().unwrap() - 2.0).abs() < 1e-12);
}
