//! `benchgate ab` end to end in a scratch git repository: base and head check out in worktrees,
//! the bench command runs A B A B A B, every round is stored, and the rounds decide. The bench
//! command is a shell script that writes a real Criterion tree (the base commit's copies it
//! as recorded, the head commit's 30% slower), so no compiler runs in the test.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

const TREE: &str = "dicethedev__MerkleForge/target/criterion";

fn bench_script(side: &str, tree: &Path) -> String {
    format!(
        "#!/bin/sh\nset -e\necho {side} >> \"$AB_LOG\"\nmkdir -p \"$CRITERION_HOME\"\ncp -r '{}/.' \"$CRITERION_HOME/\"\n",
        tree.display()
    )
}

#[test]
fn rounds_alternate_are_stored_and_a_slower_head_fails() {
    let repo = tempfile::tempdir().unwrap();
    let slower = scaled_copy(TREE, 1.3);
    git(repo.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(
        repo.path().join("bench.sh"),
        bench_script("base", &corpus(TREE)),
    )
    .unwrap();
    git(repo.path(), &["add", "bench.sh"]);
    git(repo.path(), &["commit", "-q", "-m", "base"]);
    let base = git(repo.path(), &["rev-parse", "HEAD"]);
    std::fs::write(
        repo.path().join("bench.sh"),
        bench_script("head", slower.path()),
    )
    .unwrap();
    git(repo.path(), &["commit", "-q", "-am", "head"]);
    let head = git(repo.path(), &["rev-parse", "HEAD"]);

    let log = repo.path().join("ab.log");
    let output = Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .args([
            "ab",
            "--base-ref",
            "main~1",
            "--head-ref",
            "main",
            "--rounds",
            "3",
            "--repo",
            "acme/rocket",
            "--format",
            "json",
        ])
        .args(["--", "sh", "bench.sh"])
        .current_dir(repo.path())
        .env("AB_LOG", &log)
        .env_remove("CRITERION_HOME")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["verdict"], "regressed");
    assert_eq!(summary["mode"], "same-job-ab");
    assert_eq!(summary["rounds"], 3);
    assert_eq!(summary["base_commit"], base.as_str());
    assert_eq!(summary["head_commit"], head.as_str());
    assert_eq!(summary["benchmarks"][0]["noise_source"], "rounds");

    let order = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        order.lines().collect::<Vec<_>>(),
        ["base", "head", "base", "head", "base", "head"]
    );

    let runs = benchgate(repo.path(), &["runs", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 6, "every round is stored");
    assert_eq!(
        runs.iter().filter(|r| r["commit"] == base.as_str()).count(),
        3
    );
    assert_eq!(
        runs.iter().map(|r| r["attempt"].as_u64().unwrap()).max(),
        Some(3)
    );

    let worktrees = git(repo.path(), &["worktree", "list"]);
    assert_eq!(
        worktrees.lines().count(),
        1,
        "worktrees are removed: {worktrees}"
    );
}

#[test]
fn a_failing_bench_command_and_a_bad_ref_are_errors() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "main"]);
    git(
        repo.path(),
        &["commit", "-q", "--allow-empty", "-m", "only"],
    );
    let output = benchgate(
        repo.path(),
        &[
            "ab",
            "--base-ref",
            "nope",
            "--head-ref",
            "main",
            "--repo",
            "a/b",
            "--",
            "true",
        ],
    );
    assert_refused(&output, &["--base-ref nope", "not a commit"]);
    let output = benchgate(
        repo.path(),
        &[
            "ab",
            "--base-ref",
            "main",
            "--head-ref",
            "main",
            "--repo",
            "a/b",
            "--",
            "false",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    // Progress lines come first; the error is the one last line.
    let err = stderr(&output);
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with("benchgate: error: round 1/3: base") && last.contains("`false` failed"),
        "{err}"
    );
    assert_eq!(
        git(repo.path(), &["worktree", "list"]).lines().count(),
        1,
        "worktrees are removed after a failure"
    );
}
