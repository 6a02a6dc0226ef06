//! `benchgate gate` end to end: the baseline comes from the store (the base commit's run on the
//! same fingerprint, else the nearest first-parent ancestor's), its history calibrates the noise,
//! and without either the verdict is no-baseline.

use std::path::Path;

use crate::support::*;
use benchgate_gate::noise::POOLED_BASE_RUNS;

const TREE: &str = "dicethedev__MerkleForge/target/criterion";
/// One benchmark of TREE (Bytes throughput), slowed alone in the tests below: its directory
/// and its identity (Criterion sanitised `/` in the group name to `_` on disk).
const ONE_DIR: &str = "leaf_hash_BLAKE3/128";
const ONE: &str = "leaf_hash/BLAKE3/128";

fn benchmark<'a>(summary: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    summary["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == id)
        .unwrap()
}

/// A git repository with `n` empty commits on `main`; returns their SHAs, oldest first.
fn repository(dir: &Path, n: usize) -> Vec<String> {
    let git = |args: &[&str]| crate::support::git(dir, args);
    git(&["init", "-q", "-b", "main"]);
    (0..n)
        .map(|i| {
            git(&[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("commit {i}"),
            ]);
            git(&["rev-parse", "HEAD"])
        })
        .collect()
}

fn ingest(dir: &Path, tree: &Path, commit: &str, kind: &str) -> String {
    let output = benchgate(
        dir,
        &[
            "ingest",
            tree.to_str().unwrap(),
            "--repo",
            "acme/rocket",
            "--commit",
            commit,
            "--kind",
            kind,
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output).trim().to_owned()
}

/// Whether one of the report's notes says every one of `parts`.
fn has_note(summary: &serde_json::Value, parts: &[&str]) -> bool {
    summary["notes"].as_array().is_some_and(|notes| {
        notes
            .iter()
            .filter_map(serde_json::Value::as_str)
            .any(|n| parts.iter().all(|p| n.contains(p)))
    })
}

fn gate_json(dir: &Path, args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let mut all = vec!["gate", "--format", "json"];
    all.extend_from_slice(args);
    let output = benchgate(dir, &all);
    assert!(output.status.code() != Some(2), "{}", stderr(&output));
    (
        output.status.code(),
        serde_json::from_slice(&output.stdout).unwrap(),
    )
}

#[test]
fn the_base_commits_run_is_the_baseline_and_a_slowdown_fails() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 3);
    ingest(dir.path(), &corpus(TREE), &commits[1], "push");
    // Uncalibrated (one stored run, no history), a regression must be large to be claimed.
    let slower = copy_with_one_slower(TREE, ONE_DIR, 1.6);
    let head = ingest(dir.path(), slower.path(), &commits[2], "pr");

    let (code, summary) = gate_json(dir.path(), &["--head", &head, "--base-commit", &commits[1]]);
    assert_eq!(code, Some(1));
    assert_eq!(summary["verdict"], "regressed");
    assert_eq!(summary["mode"], "stored-baseline");
    assert_eq!(summary["base_commit"], commits[1].as_str());
    assert_eq!(summary["head_commit"], commits[2].as_str());
    assert_eq!(summary["counts"]["regressed"], 1);
    assert_eq!(benchmark(&summary, ONE)["verdict"], "regressed");
    assert_eq!(
        benchmark(&summary, ONE)["uncalibrated"],
        true,
        "one stored run is no history"
    );
    // The report says how far from calibrated this machine is, and what to do meanwhile.
    assert!(
        has_note(
            &summary,
            &[
                "this machine has 1 run of history on the baseline's line (each commit's newest run, and its earlier push or nightly runs an hour or more apart)",
                "needs 5; until 4 more default-branch runs of separate jobs are stored",
                "`benchgate ab`",
            ]
        ),
        "{:?}",
        summary["notes"]
    );
}

#[test]
fn without_a_run_of_the_base_commit_the_nearest_ancestor_serves() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 5);
    ingest(dir.path(), &corpus(TREE), &commits[1], "push");
    let head = ingest(dir.path(), &corpus(TREE), &commits[4], "pr");
    // Neither commits[3] nor commits[2] has a run; commits[1] does.
    let (code, summary) = gate_json(dir.path(), &["--head", &head, "--base-commit", &commits[3]]);
    assert_eq!(code, Some(0));
    assert_eq!(
        summary["verdict"], "inconclusive",
        "one stored run without history never passes"
    );
    assert_eq!(summary["base_commit"], commits[1].as_str());
    // Without --base-commit the head's own ancestors are searched.
    let (_, summary) = gate_json(dir.path(), &["--head", &head]);
    assert_eq!(summary["base_commit"], commits[1].as_str());
}

#[test]
fn nothing_comparable_is_no_baseline_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 2);
    let head = ingest(dir.path(), &corpus(TREE), &commits[1], "pr");
    let (code, summary) = gate_json(dir.path(), &["--head", &head]);
    assert_eq!(code, Some(0));
    assert_eq!(summary["verdict"], "no-baseline");
}

/// Twelve default-branch runs with ±1% wobble on `commits[..12]`, then a pull request's run on
/// `commits[13]` with `ONE` 12% slower; returns the head run's id.
fn twelve_runs_and_a_slower_head(dir: &Path, commits: &[String]) -> String {
    let wobble = [
        1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.992, 1.003, 0.998, 1.007, 1.0,
    ];
    let trees: Vec<_> = wobble.iter().map(|w| scaled_copy(TREE, *w)).collect();
    for (tree, commit) in trees.iter().zip(&commits[..12]) {
        ingest(dir, tree.path(), commit, "push");
    }
    let slower = copy_with_one_slower(TREE, ONE_DIR, 1.12);
    ingest(dir, slower.path(), &commits[13], "pr")
}

#[test]
fn six_runs_of_history_let_unchanged_code_pass_and_say_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 8);
    for (w, commit) in [1.0, 1.01, 0.99, 1.005, 0.995, 1.0]
        .iter()
        .zip(&commits[..6])
    {
        ingest(dir.path(), scaled_copy(TREE, *w).path(), commit, "push");
    }
    // ONE 12% slower: over its 11.1% limit, but no claim on six runs.
    let slower = copy_with_one_slower(TREE, ONE_DIR, 1.12);
    let head = ingest(dir.path(), slower.path(), &commits[7], "pr");
    let (code, summary) = gate_json(dir.path(), &["--head", &head, "--base-commit", &commits[5]]);
    let one = benchmark(&summary, ONE);
    assert_eq!(one["noise_source"], "history", "{one:#}");
    assert_eq!(one["uncalibrated"], false);
    assert_eq!(one["verdict"], "inconclusive", "{one:#}");
    assert_eq!(
        summary["counts"]["pass"], 29,
        "the unchanged benchmarks pass on six runs: {summary:#}"
    );
    assert_eq!(code, Some(0));
    assert!(
        has_note(
            &summary,
            &[
                "this machine has 6 runs of history on the baseline's line (each commit's newest run, and its earlier push or nightly runs an hour or more apart), fewer than the 10",
                "until 4 more default-branch runs of separate jobs are stored on it",
                "assumed 5% per run",
            ]
        ),
        "{:?}",
        summary["notes"]
    );
}

#[test]
fn where_git_cannot_walk_the_line_the_history_is_the_runs_stored() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 14);
    let head = twelve_runs_and_a_slower_head(dir.path(), &commits);
    // A clone of depth 3, as a CI checkout makes: it has the base commit (commits[11]) but
    // none of the line before it; and a directory that is no checkout at all.
    let elsewhere = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    git(
        elsewhere.path(),
        &["clone", "-q", "--depth", "3", "-b", "main", &url, "shallow"],
    );
    std::fs::create_dir(elsewhere.path().join("plain")).unwrap();
    for place in ["shallow", "plain"] {
        let at = elsewhere.path().join(place);
        std::fs::create_dir(at.join(".benchgate")).unwrap();
        std::fs::copy(
            dir.path().join(".benchgate/benchgate.db"),
            at.join(".benchgate/benchgate.db"),
        )
        .unwrap();
        let (code, summary) = gate_json(&at, &["--head", &head, "--base-commit", &commits[11]]);
        let one = benchmark(&summary, ONE);
        assert_eq!(one["noise_source"], "history", "{place}: {one:#}");
        assert_eq!(one["base_runs"], POOLED_BASE_RUNS, "{place}: {one:#}");
        assert_eq!(one["verdict"], "regressed", "{place}");
        assert_eq!(summary["counts"]["pass"], 29, "{place}");
        assert_eq!(code, Some(1), "{place}");
        assert!(
            has_note(
                &summary,
                &[
                    "its history is the 12 default-branch runs stored on this machine up to the baseline, in the order they were stored"
                ]
            ),
            "{place}: {:?}",
            summary["notes"]
        );
        assert!(
            !has_note(&summary, &["History: this machine has"]),
            "{place}: no cold-start note with 12 runs: {:?}",
            summary["notes"]
        );
    }
    // Where git walks the line, it decides, and nothing is said.
    let (_, summary) = gate_json(
        dir.path(),
        &["--head", &head, "--base-commit", &commits[11]],
    );
    assert!(!has_note(&summary, &["git cannot walk"]), "{summary:#}");
}

/// A quiet repository: twelve nightly runs of one commit (no new commit for twelve nights, each
/// stored as its next attempt, as the Action stores them). Recorded a day apart, they are twelve
/// separate jobs and calibrate the gate like twelve commits' runs; recorded minutes apart (one
/// job's rounds) they count once, and the gate says it is not calibrated.
#[test]
fn nightly_runs_of_one_commit_a_day_apart_are_history_and_one_jobs_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 2);
    let wobble = [
        1.0, 1.01, 0.99, 1.005, 0.995, 1.002, 1.008, 0.992, 1.003, 0.998, 1.007, 1.001,
    ];
    for w in wobble {
        let tree = scaled_copy(TREE, w);
        let output = benchgate(
            dir.path(),
            &[
                "ingest",
                tree.path().to_str().unwrap(),
                "--repo",
                "acme/rocket",
                "--commit",
                &commits[0],
                "--kind",
                "nightly",
                "--attempt",
                "next",
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let runs: serde_json::Value = serde_json::from_str(&stdout(&benchgate(
        dir.path(),
        &["runs", "--format", "json"],
    )))
    .unwrap();
    let attempts: Vec<u64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, (1..=12).collect::<Vec<_>>());
    let slower = copy_with_one_slower(TREE, ONE_DIR, 1.12);
    let head = ingest(dir.path(), slower.path(), &commits[1], "pr");
    let db = dir.path().join(".benchgate/benchgate.db");
    let day_ms = 86_400_000;
    sql(
        &db,
        &format!(
            "UPDATE runs SET recorded_at_ms = 1700000000000 + id * {day_ms} WHERE kind = 'nightly'"
        ),
    );
    let (code, summary) = gate_json(dir.path(), &["--head", &head]);
    assert_eq!(summary["base_commit"], commits[0].as_str());
    let one = benchmark(&summary, ONE);
    assert_eq!(one["uncalibrated"], false, "{one:#}");
    assert_eq!(one["base_runs"], POOLED_BASE_RUNS, "{one:#}");
    assert_eq!(one["verdict"], "regressed", "{one:#}");
    assert_eq!(summary["counts"]["pass"], 29, "{summary:#}");
    assert_eq!(code, Some(1));
    assert!(
        !has_note(&summary, &["History: this machine has"]),
        "twelve nights are enough history: {:?}",
        summary["notes"]
    );

    // The same runs a minute apart: one job's, so one run of history.
    sql(
        &db,
        "UPDATE runs SET recorded_at_ms = 1700000000000 + id * 60000 WHERE kind = 'nightly'",
    );
    let (code, summary) = gate_json(dir.path(), &["--head", &head]);
    let one = benchmark(&summary, ONE);
    assert_eq!(one["uncalibrated"], true, "{one:#}");
    assert_eq!(one["verdict"], "inconclusive", "{one:#}");
    assert_eq!(summary["counts"]["pass"], 0, "{summary:#}");
    assert_eq!(code, Some(0));
    assert!(
        has_note(
            &summary,
            &["this machine has 1 run of history on the baseline's line"]
        ),
        "{:?}",
        summary["notes"]
    );
}

#[test]
fn history_on_the_fingerprint_calibrates_the_noise() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 14);
    let head = twelve_runs_and_a_slower_head(dir.path(), &commits);
    let (code, summary) = gate_json(
        dir.path(),
        &["--head", &head, "--base-commit", &commits[11]],
    );
    let one = benchmark(&summary, ONE);
    assert!(
        summary["notes"].as_array().is_none_or(|notes| !notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("History:"))),
        "enough history: no cold-start note: {summary:#}"
    );
    assert_eq!(one["noise_source"], "history");
    assert_eq!(one["uncalibrated"], false);
    // The base run (wobble 1.0) sits at the level of the eight runs before it (1.005, 0.995,
    // 1.0, 1.01, 0.992, 1.003, 0.998, 1.007: median 1.0015), so its base is the median of nine
    // stored runs.
    assert_eq!(one["base_runs"], POOLED_BASE_RUNS, "{one:#}");
    // 12% slower exceeds a throughput benchmark's 11.1% limit, far outside a ±1% history.
    assert_eq!(one["verdict"], "regressed");
    assert_eq!(summary["counts"]["regressed"], 1);
    assert_eq!(
        summary["counts"]["pass"], 29,
        "the calibrated, unchanged benchmarks pass"
    );
    assert_eq!(code, Some(1));
    // The report says so, in the rounds cell and the method paragraph.
    let md = dir.path().join("perf-summary.md");
    gate_json(
        dir.path(),
        &[
            "--head",
            &head,
            "--base-commit",
            &commits[11],
            "--out-md",
            md.to_str().unwrap(),
        ],
    );
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.contains(&format!("base: median of {POOLED_BASE_RUNS} runs")),
        "{md}"
    );
    assert!(
        md.contains("is the median of the base run and the base commit's newest runs before it"),
        "{md}"
    );
    // The runs' packed gate view (one row a run) decides exactly as their measurements: with
    // the views gone, as for runs stored before them, the report is the same to the byte. A
    // policy on another quantile reads every sample, view or not (from the view's two best
    // samples its p25 would differ).
    let args = [
        "--head",
        head.as_str(),
        "--base-commit",
        commits[11].as_str(),
    ];
    std::fs::write(dir.path().join("p25.toml"), "[gate]\nstatistic = \"p25\"\n").unwrap();
    let p25_args = [&args[..], &["--config", "p25.toml"]].concat();
    let (with_views, p25_with_views) = (
        gate_output(dir.path(), &args),
        gate_output(dir.path(), &p25_args),
    );
    sql(
        &dir.path().join(".benchgate/benchgate.db"),
        "UPDATE runs SET gate_view = NULL",
    );
    let (without, p25_without) = (
        gate_output(dir.path(), &args),
        gate_output(dir.path(), &p25_args),
    );
    assert_eq!(
        String::from_utf8_lossy(&with_views),
        String::from_utf8_lossy(&without)
    );
    assert_eq!(
        String::from_utf8_lossy(&p25_with_views),
        String::from_utf8_lossy(&p25_without)
    );
    assert_ne!(p25_without, without, "the p25 policy judged something else");
    // A base run 8% off the runs before it (far beyond 2.5 standard deviations of a ±1%
    // history, and beyond half the 11.1% limit) is compared alone: the pull request is not
    // blamed for what its base commit did.
    let moved = scaled_copy(TREE, 1.08);
    ingest(dir.path(), moved.path(), &commits[12], "push");
    let (_, alone) = gate_json(
        dir.path(),
        &["--head", &head, "--base-commit", &commits[12]],
    );
    assert_eq!(alone["base_commit"], commits[12].as_str(), "{alone:#}");
    let one_alone = benchmark(&alone, ONE);
    assert!(one_alone["base_runs"].is_null(), "{one_alone:#}");
}

/// `benchgate gate --format json` with `args`: its stdout.
fn gate_output(dir: &Path, args: &[&str]) -> Vec<u8> {
    let mut all = vec!["gate", "--format", "json"];
    all.extend_from_slice(args);
    let output = benchgate(dir, &all);
    assert!(output.status.code() != Some(2), "{}", stderr(&output));
    output.stdout
}

/// Runs `statement` on the SQLite store at `db`.
pub(crate) fn sql(db: &Path, statement: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut connection = <sqlx::SqliteConnection as sqlx::Connection>::connect(&format!(
            "sqlite://{}",
            db.display()
        ))
        .await
        .unwrap();
        sqlx::query(sqlx::AssertSqlSafe(statement.to_owned()))
            .execute(&mut connection)
            .await
            .unwrap();
    });
}

#[test]
fn a_bad_head_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 1);
    ingest(dir.path(), &corpus(TREE), &commits[0], "push");
    assert_refused(
        &benchgate(dir.path(), &["gate", "--head", "99"]),
        &["--head", "run 99 not found"],
    );
    assert_refused(
        &benchgate(dir.path(), &["gate", "--head", "1", "--base-commit", "xyz"]),
        &["--base-commit", "\"xyz\""],
    );
}

#[test]
fn with_a_collector_the_runs_come_from_the_service_and_decide_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let commits = repository(dir.path(), 14);
    let wobble = [
        1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.992, 1.003, 0.998, 1.007, 1.0,
    ];
    let trees: Vec<_> = wobble.iter().map(|w| scaled_copy(TREE, *w)).collect();
    let slower = copy_with_one_slower(TREE, ONE_DIR, 1.12);
    let service_db = dir.path().join("service.db");
    let output = benchgate(
        dir.path(),
        &[
            "token",
            "create",
            "--repo",
            "acme/rocket",
            "--db",
            service_db.to_str().unwrap(),
        ],
    );
    let token = stdout(&output).trim().to_owned();
    let server = crate::support::server::Server::start(&service_db, &[], None);
    let collector = format!("http://{}", server.address);
    // Every run is stored locally and uploaded, in the same order: the ids agree.
    let mut runs: Vec<(&Path, &String, &str)> = trees
        .iter()
        .zip(&commits[..12])
        .map(|(tree, commit)| (tree.path(), commit, "push"))
        .collect();
    runs.push((slower.path(), &commits[13], "pr"));
    let mut head = String::new();
    for (tree, commit, kind) in runs {
        head = ingest(dir.path(), tree, commit, kind);
        let output = benchgate(
            dir.path(),
            &[
                "upload",
                &head,
                "--collector",
                &collector,
                "--token",
                &token,
            ],
        );
        assert_eq!(stdout(&output).trim(), head, "{}", stderr(&output));
    }
    let args = [
        "--head",
        head.as_str(),
        "--base-commit",
        commits[11].as_str(),
    ];
    let (local_code, local) = gate_json(dir.path(), &args);
    // Without the local store at all.
    std::fs::remove_dir_all(dir.path().join(".benchgate")).unwrap();
    let remote_args = [
        &args[..],
        &["--collector", &collector, "--repo", "acme/rocket"],
    ]
    .concat();
    let (code, remote) = gate_json(dir.path(), &remote_args);
    assert_eq!(benchmark(&remote, ONE)["noise_source"], "history");
    assert_eq!(benchmark(&remote, ONE)["verdict"], "regressed");
    assert_eq!((code, &remote), (local_code, &local));
}

/// `cargo bench` of the zoo crate in `repo` (the ab tests' shared target directory), its
/// Criterion output in `home`.
fn zoo_bench(repo: &Path, home: &Path) {
    let target = crate::ab::shared_target();
    let output = std::process::Command::new("cargo")
        .args(["bench", "--locked", "--target-dir"])
        .arg(&target)
        .args(["--bench", "zoo", "--", "--noplot"])
        .current_dir(repo)
        .env("CRITERION_HOME", home)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

/// The Action's `pr` mode on a workspace whose two bench executables each name `push`: the tree
/// holds one `push`, whichever ran last, so a change to the other's would pass unseen.
/// `ingest` and `gate`, given the bench command, list each executable's benchmarks and refuse,
/// naming both; `ingest` stores nothing.
#[test]
fn ingest_and_gate_refuse_a_bench_command_whose_executables_name_one_benchmark() {
    // `ab` builds into the shared target directory: one at a time (not timed, so not alone).
    let _target = crate::ab::SHARED_TARGET
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (repo, _, head) = crate::ab::other_also_names_push();
    let dir = repo.path();
    let target = crate::ab::shared_target();
    let command = [
        "cargo",
        "bench",
        "--locked",
        "--target-dir",
        target.to_str().unwrap(),
        "--bench",
        "zoo",
        "--bench",
        "other",
        "--",
        "--noplot",
    ];
    let home = tempfile::tempdir().unwrap();
    let bench = std::process::Command::new(command[0])
        .args(&command[1..])
        .current_dir(dir)
        .env("CRITERION_HOME", home.path())
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert!(bench.status.success(), "{}", stderr(&bench));
    // Criterion ran `push` twice and kept the last.
    let ran = String::from_utf8_lossy(&bench.stdout);
    assert_eq!(
        ran.matches("\npush ").count() + usize::from(ran.starts_with("push ")),
        2,
        "{ran}"
    );
    // Exit 2, nothing on standard output, and an error naming both executables and the id.
    let refused = |args: &[&str], consequence: &str| {
        let output = benchgate(dir, &[args, &command[..]].concat());
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert!(
            err.contains("benchgate: error: checking the bench command (Criterion's --list): the bench executables zoo/other and zoo/zoo each name the benchmark `push`; Criterion keeps one result per id")
                && err.contains(consequence),
            "{err}"
        );
        assert!(output.stdout.is_empty(), "{}", stdout(&output));
    };
    // The Action hands `ingest` the command: nothing is stored, and it says why.
    let tree = home.path().to_str().unwrap();
    refused(
        &[
            "ingest",
            tree,
            "--repo",
            "acme/rocket",
            "--commit",
            &head,
            "--kind",
            "pr",
            "--",
        ],
        "nothing was stored, as the tree holds only the result of the executable that ran last",
    );
    assert!(
        !dir.join(".benchgate/benchgate.db").exists(),
        "the store was not even opened"
    );
    // Without the command `ingest` cannot tell, and the gate, given it, refuses to judge.
    let head_run = ingest(dir, home.path(), &head, "pr");
    refused(
        &["gate", "--head", &head_run, "--format", "json", "--"],
        "the gate cannot judge a benchmark whose stored result may be another's",
    );
}

/// The Action's `pr` mode on a real crate: a stored history on `main`, a pull request whose
/// head does ten times the work in `push`, and `gate -- <bench command>`. `push` is claimed
/// `regressed` by the first head run and confirmed by two more; `mix`, whose history on `main`
/// swung by 40% from commit to commit (its work changed), is left undecided, so the gate runs
/// it again on the head too (only those two, twice) and pools the runs.
#[test]
fn undecided_benchmarks_run_again_on_the_head_and_a_real_slowdown_fails() {
    let _turn = crate::ab::timing_turn();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ab-zoo"),
        dir,
    );
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "zoo"]);
    let home = tempfile::tempdir().unwrap();
    // Eleven pushes to main, `mix` doing 40% more work at every other one.
    for i in 0..11 {
        if i > 0 {
            let (from, to) = if i % 2 == 1 {
                ("mix(black_box(20_000))", "mix(black_box(28_000))")
            } else {
                ("mix(black_box(28_000))", "mix(black_box(20_000))")
            };
            crate::ab::edit(dir, "benches/zoo.rs", from, to);
            git(dir, &["commit", "-q", "-am", &format!("main {i}")]);
        }
        let _ = std::fs::remove_dir_all(home.path());
        zoo_bench(dir, home.path());
        ingest(dir, home.path(), &git(dir, &["rev-parse", "HEAD"]), "push");
    }
    let base = git(dir, &["rev-parse", "HEAD"]);
    crate::ab::edit(
        dir,
        "src/lib.rs",
        "PUSHES: u64 = 4_000",
        "PUSHES: u64 = 40_000",
    );
    git(dir, &["commit", "-q", "-am", "ten times the pushes"]);
    let _ = std::fs::remove_dir_all(home.path());
    zoo_bench(dir, home.path());
    let head_run = ingest(dir, home.path(), &git(dir, &["rev-parse", "HEAD"]), "pr");

    let target = crate::ab::shared_target();
    let output = benchgate(
        dir,
        &[
            "gate",
            "--head",
            &head_run,
            "--base-commit",
            &base,
            "--format",
            "json",
            "--out-md",
            "perf-summary.md",
            "--",
            "cargo",
            "bench",
            "--locked",
            "--target-dir",
            target.to_str().unwrap(),
            "--bench",
            "zoo",
            "--",
            "--noplot",
        ],
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["verdict"], "regressed", "{summary:#}");
    assert_eq!(summary["rounds"], 3, "{summary:#}");
    let push = benchmark(&summary, "push");
    assert_eq!(push["verdict"], "regressed", "{push:#}");
    assert_eq!(push["rounds"], 3, "confirmed by two re-runs: {push:#}");
    // Its base is the level of the base commit's newest stored runs when the base run sat at
    // their level, which real runs on a shared machine need not do (CI once measured it
    // apart): `history_on_the_fingerprint_calibrates_the_noise` pins both cases on set values.
    // Here the summary and the report must agree on which it was.
    let pooled = push["base_runs"] == POOLED_BASE_RUNS;
    assert!(pooled || push["base_runs"].is_null(), "{push:#}");
    assert_eq!(push["noise_source"], "history", "{push:#}");
    let mix = benchmark(&summary, "mix");
    assert_eq!(mix["verdict"], "inconclusive", "{mix:#}");
    assert_eq!(mix["rounds"], 3, "{mix:#}");
    assert_eq!(mix["noise_source"], "history", "{mix:#}");
    // The re-runs ran `mix` and `push` alone: Criterion printed each twice, the others never.
    for run in ["2/3", "3/3"] {
        assert!(
            err.contains(&format!(
                "head run {run}: 1 benchmark undecided and 1 regression to confirm, running them again"
            )),
            "{err}"
        );
    }
    let results = |id: &str| {
        err.lines()
            .filter(|l| l.starts_with(id) && l.contains("time:"))
            .count()
    };
    assert_eq!((results("mix"), results("push")), (2, 2), "{err}");
    // The report says how the head runs were used.
    let md = std::fs::read_to_string(dir.join("perf-summary.md")).unwrap();
    assert!(
        md.contains("stored baseline, the head run up to 3 times"),
        "{md}"
    );
    assert!(md.contains("**rounds** is how many head runs"), "{md}");
    // `push`'s own row says so; the sentence that explains it is there when any benchmark's
    // base was pooled (`mix`'s can be too, whatever `push`'s was).
    let push_row = md
        .lines()
        .find(|l| l.starts_with("| `push` |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert_eq!(
        push_row.contains(&format!("base: median of {POOLED_BASE_RUNS} runs")),
        pooled,
        "{md}"
    );
    let any_pooled = summary["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| !b["base_runs"].is_null());
    assert_eq!(
        md.contains("is the median of the base run and the base commit's newest runs before it"),
        any_pooled,
        "{md}"
    );
    // Without the bench command, or with --max-runs 1, nothing runs again.
    let (code, once) = gate_json(
        dir,
        &[
            "--head",
            &head_run,
            "--base-commit",
            &base,
            "--max-runs",
            "1",
        ],
    );
    assert_eq!(code, Some(1));
    assert_eq!(benchmark(&once, "mix")["rounds"], 1, "{once:#}");
    let refused = benchgate(dir, &["gate", "--head", &head_run, "--max-runs", "2"]);
    assert_refused(&refused, &["--max-runs 2", "bench command after `--`"]);
}
