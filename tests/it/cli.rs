//! The `benchgate` binary end to end: ingest real Criterion output into a fresh SQLite file, list
//! and show it, and refuse bad input with exit code 2, one line naming the culprit, and the
//! store untouched.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::postgres;
use crate::support::*;

fn ingest_merkle(dir: &Path, extra: &[&str]) -> Output {
    ingest_merkle_from(
        dir,
        &corpus("dicethedev__MerkleForge/target/criterion"),
        extra,
    )
}

/// [`ingest_merkle`] of a copy of its tree at `tree`.
fn ingest_merkle_from(dir: &Path, tree: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "ingest",
        tree.to_str().unwrap(),
        "--repo",
        "dicethedev/MerkleForge",
        "--commit",
        SHA,
    ];
    args.extend_from_slice(extra);
    benchgate(dir, &args)
}

#[test]
fn ingest_prints_the_run_id_and_show_prints_every_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let output = ingest_merkle(
        dir.path(),
        &["--kind", "pr", "--pr", "42", "--branch", "feature/x"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "1\n");
    assert!(
        dir.path().join(".benchgate/benchgate.db").is_file(),
        "default store"
    );

    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    let run = &runs[0];
    assert_eq!(run["id"], 1);
    assert_eq!(run["repository"], "dicethedev/MerkleForge");
    assert_eq!(run["commit"], SHA);
    assert_eq!(run["branch"], "feature/x");
    assert_eq!(run["kind"], "pr");
    assert_eq!(run["pr"], 42);
    assert_eq!(run["n_benchmarks"], 30);
    assert_eq!(run["fingerprint"].as_str().unwrap().len(), 64);

    let shown = json(&benchgate(dir.path(), &["show", "1", "--format", "json"]));
    let measurements = shown["measurements"].as_array().unwrap();
    assert_eq!(measurements.len(), 30);
    let flat = measurements
        .iter()
        .find(|m| m["id"] == "hash_throughput/Keccak-256/1048576")
        .unwrap();
    assert_eq!(
        flat["throughput"],
        serde_json::json!({"kind": "Bytes", "amount": 1048576})
    );
    assert_eq!(flat["median"]["point"], 2746399.34375);
    assert_eq!(flat["n_samples"], 100);

    let text = stdout(&benchgate(dir.path(), &["show", "latest"]));
    assert!(
        text.contains("hash_throughput/Keccak-256/1048576") && text.contains("2.746 ms ±"),
        "{text}"
    );
    let listing = stdout(&benchgate(dir.path(), &["runs"]));
    assert!(
        listing.contains("b288db9ef742") && listing.contains("pr #42"),
        "{listing}"
    );
}

/// A tree whose `leaf_hash_BLAKE3` results were written three days before the rest: the latest
/// `cargo bench` did not run it (renamed, removed or filtered out), and its old results are
/// left out of this run, named; `--keep-older` stores them too.
#[test]
fn results_an_earlier_bench_run_left_in_the_tree_are_left_out_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("criterion");
    copy_dir(&corpus("dicethedev__MerkleForge/target/criterion"), &tree);
    let three_days_ago =
        std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 24 * 3600);
    let mut older = 0;
    for entry in walk(&tree.join("leaf_hash_BLAKE3")) {
        if entry.ends_with("new/sample.json") {
            std::fs::File::options()
                .write(true)
                .open(&entry)
                .unwrap()
                .set_modified(three_days_ago)
                .unwrap();
            older += 1;
        }
    }
    assert!(older > 1, "leaf_hash_BLAKE3 holds {older} benchmarks");
    let ingest = |extra: &[&str]| ingest_merkle_from(dir.path(), &tree, extra);
    let output = ingest(&[]);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "benchgate: left out {older} of 30 results in {} written before this run, the newest of them 3 days before this run's (`leaf_hash/BLAKE3/",
            tree.display()
        )) && err.contains("the bench command did not run them this time (renamed, removed or filtered out?); --keep-older stores them too"),
        "{err}"
    );
    let shown = json(&benchgate(dir.path(), &["show", "1", "--format", "json"]));
    let ids: Vec<&str> = shown["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 30 - older, "{ids:?}");
    assert!(
        ids.iter().all(|id| !id.starts_with("leaf_hash/BLAKE3/")),
        "{ids:?}"
    );

    let kept = ingest(&["--keep-older", "--db", "all.db"]);
    assert!(kept.status.success(), "{}", stderr(&kept));
    assert!(!stderr(&kept).contains("left out"), "{}", stderr(&kept));
    let shown = json(&benchgate(
        dir.path(),
        &["show", "1", "--db", "all.db", "--format", "json"],
    ));
    assert_eq!(shown["measurements"].as_array().unwrap().len(), 30);
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_same_run_again_is_idempotent_and_a_different_one_needs_replace() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(stdout(&ingest_merkle(dir.path(), &[])), "1\n");
    let again = ingest_merkle(dir.path(), &[]);
    assert_eq!(stdout(&again), "1\n");
    assert!(stderr(&again).contains("unchanged"), "{}", stderr(&again));

    let other_tree = corpus("Aida118__szse-binary-rs/target/criterion");
    let args = [
        "ingest",
        other_tree.to_str().unwrap(),
        "--repo",
        "dicethedev/MerkleForge",
        "--commit",
        SHA,
    ];
    assert_refused(
        &benchgate(dir.path(), &args),
        &["already stores", "--replace"],
    );
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["n_benchmarks"], 30, "the stored run is untouched");

    let mut replace = args.to_vec();
    replace.push("--replace");
    let replaced = benchgate(dir.path(), &replace);
    assert_eq!(stdout(&replaced), "2\n", "{}", stderr(&replaced));
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["n_benchmarks"], 3);
}

#[test]
fn bad_input_exits_2_naming_the_culprit_and_leaves_the_store_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    assert!(ingest_merkle(dir.path(), &[]).status.success());
    let db = dir.path().join(".benchgate/benchgate.db");
    let snapshot = || stdout(&benchgate(dir.path(), &["show", "1", "--format", "json"]));
    let before = snapshot();

    let broken = tempfile::tempdir().unwrap();
    copy_dir(
        &corpus("Aida118__szse-binary-rs/target/criterion"),
        broken.path(),
    );
    let sample = broken.path().join("TickTrade/parse/new/sample.json");
    let text = std::fs::read_to_string(&sample).unwrap();
    std::fs::write(&sample, &text[..text.len() - 40]).unwrap();
    let broken_path = broken.path().to_str().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let nan = broken_copy(|results| {
        edit_json(&results.join("estimates.json"), |v| {
            v["mean"]["point_estimate"] = serde_json::Value::Null
        })
    });
    let lengths = broken_copy(|results| {
        edit_json(&results.join("sample.json"), |v| {
            v["iters"].as_array_mut().unwrap().push(1.0.into())
        })
    });
    let shape = broken_copy(|results| {
        std::fs::write(results.join("benchmark.json"), "{\"full_id\": 7}").unwrap()
    });
    // Input that used to be stored: a benchmark without estimates.json (it was silently left
    // out), a finite but absurd time, and an unknown sampling mode.
    let no_estimates =
        broken_copy(|results| std::fs::remove_file(results.join("estimates.json")).unwrap());
    let absurd = broken_copy(|results| {
        edit_json(&results.join("estimates.json"), |v| {
            v["median"]["point_estimate"] = 1.7e308.into()
        })
    });
    let absurd_sample = broken_copy(|results| {
        edit_json(&results.join("sample.json"), |v| {
            v["times"][3] = 1.7e308.into()
        })
    });
    let bogus = broken_copy(|results| {
        edit_json(&results.join("sample.json"), |v| {
            v["sampling_mode"] = "Bogus".into()
        })
    });
    let ingest_of = |tree: &tempfile::TempDir| {
        vec![
            "ingest".to_owned(),
            tree.path().to_str().unwrap().to_owned(),
            "--repo".to_owned(),
            "a/b".to_owned(),
            "--commit".to_owned(),
            SHA.to_owned(),
        ]
    };
    for (tree, needles) in [
        (
            &no_estimates,
            vec!["TickTrade/parse/new/estimates.json", "missing file"],
        ),
        (
            &absurd,
            vec![
                "estimates.json",
                "median.point_estimate",
                "more than an hour",
            ],
        ),
        (
            &absurd_sample,
            vec!["sample.json", "times[3]", "more than an hour"],
        ),
        (&bogus, vec!["sample.json", "sampling_mode", "\"Bogus\""]),
    ] {
        let args = ingest_of(tree);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_refused(&benchgate(dir.path(), &args), &needles);
    }

    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["ingest", "/no/such/dir", "--repo", "a/b", "--commit", SHA],
            vec!["/no/such/dir", "no such directory"],
        ),
        // `ab` and `gate` run the command after `--`; `ingest` only names it, and says so
        // where nothing ran it.
        (
            vec![
                "ingest",
                "--repo",
                "a/b",
                "--commit",
                SHA,
                "--",
                "./bench.sh",
                "--quick",
            ],
            vec![
                "no results of the bench command: `ingest` reads what `./bench.sh --quick` wrote and does not run it; run it first",
                "target/criterion: no such directory",
            ],
        ),
        (
            vec![
                "ingest",
                empty.path().to_str().unwrap(),
                "--repo",
                "a/b",
                "--commit",
                SHA,
            ],
            vec!["no Criterion benchmarks"],
        ),
        (
            vec!["ingest", broken_path, "--repo", "a/b", "--commit", SHA],
            vec!["TickTrade/parse/new/sample.json", "truncated"],
        ),
        (
            vec![
                "ingest",
                nan.path().to_str().unwrap(),
                "--repo",
                "a/b",
                "--commit",
                SHA,
            ],
            vec!["estimates.json", "mean.point_estimate"],
        ),
        (
            vec![
                "ingest",
                lengths.path().to_str().unwrap(),
                "--repo",
                "a/b",
                "--commit",
                SHA,
            ],
            vec!["sample.json", "times", "101"],
        ),
        (
            vec![
                "ingest",
                shape.path().to_str().unwrap(),
                "--repo",
                "a/b",
                "--commit",
                SHA,
            ],
            vec!["benchmark.json", "full_id"],
        ),
        (
            vec!["ingest", broken_path, "--repo", "a/b", "--commit", "abc123"],
            vec!["--commit", "\"abc123\"", "40-hex"],
        ),
        (
            vec![
                "ingest",
                broken_path,
                "--repo",
                "not-a-repo",
                "--commit",
                SHA,
            ],
            vec!["--repo", "OWNER/NAME"],
        ),
        (vec!["show", "99"], vec!["run 99 not found"]),
        (vec!["show", "x1"], vec!["invalid run id \"x1\""]),
    ];
    for (args, needles) in cases {
        let output = benchgate(dir.path(), &args);
        assert_refused(&output, &needles);
    }
    // clap's own usage errors also exit 2.
    assert_eq!(
        benchgate(dir.path(), &["ingest", "--kind", "weekly"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(snapshot(), before);
    assert_eq!(
        json(&benchgate(dir.path(), &["runs", "--format", "json"]))
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // A bad tree never creates a store either.
    let fresh = tempfile::tempdir().unwrap();
    assert_refused(
        &benchgate(
            fresh.path(),
            &["ingest", broken_path, "--repo", "a/b", "--commit", SHA],
        ),
        &["sample.json"],
    );
    assert!(!fresh.path().join(".benchgate").exists());
    assert_refused(&benchgate(fresh.path(), &["runs"]), &["no such store"]);
    assert!(db.is_file());
}

#[test]
fn cargo_criterion_json_is_read_from_a_file_and_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("collector/tests/fixtures/cargo-criterion-sample-workloads.jsonl");
    let from_file = benchgate(
        dir.path(),
        &[
            "ingest",
            "--cargo-criterion-json",
            fixture.to_str().unwrap(),
            "--repo",
            "a/b",
            "--commit",
            SHA,
        ],
    );
    assert_eq!(stdout(&from_file), "1\n", "{}", stderr(&from_file));

    let mut child = Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .args([
            "ingest",
            "--cargo-criterion-json",
            "-",
            "--repo",
            "a/b",
            "--commit",
            SHA,
            "--attempt",
            "2",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        &std::fs::read(&fixture).unwrap(),
    )
    .unwrap();
    let from_stdin = child.wait_with_output().unwrap();
    assert_eq!(stdout(&from_stdin), "2\n", "{}", stderr(&from_stdin));

    let first = json(&benchgate(dir.path(), &["show", "1", "--format", "json"]));
    let second = json(&benchgate(dir.path(), &["show", "2", "--format", "json"]));
    assert_eq!(first["measurements"], second["measurements"]);
    let parse = &first["measurements"][1];
    assert_eq!(parse["id"], "parse/csv numbers/16");
    assert_eq!(parse["median"]["point"], 234.02265960904492);
    assert_eq!(parse["throughput"]["kind"], "Bytes");
    assert_eq!(parse["n_samples"], 20);

    let garbled = dir.path().join("garbled.jsonl");
    std::fs::write(
        &garbled,
        "{\"reason\":\"benchmark-complete\",\"id\":\"x\"\n",
    )
    .unwrap();
    assert_refused(
        &benchgate(
            dir.path(),
            &[
                "ingest",
                "--cargo-criterion-json",
                garbled.to_str().unwrap(),
                "--repo",
                "a/b",
                "--commit",
                SHA,
            ],
        ),
        &["garbled.jsonl: line 1"],
    );
}

#[test]
fn commit_repository_and_branch_default_from_git() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "trunk"]);
    git(&["remote", "add", "origin", "git@github.com:acme/rocket.git"]);
    git(&["commit", "-q", "--allow-empty", "-m", "first"]);
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let head = String::from_utf8(head.stdout).unwrap().trim().to_owned();

    let tree = corpus("Aida118__szse-binary-rs/target/criterion");
    let output = benchgate(dir.path(), &["ingest", tree.to_str().unwrap()]);
    assert_eq!(stdout(&output), "1\n", "{}", stderr(&output));
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    assert_eq!(runs[0]["commit"], head.as_str());
    assert_eq!(runs[0]["repository"], "acme/rocket");
    assert_eq!(runs[0]["branch"], "trunk");
    assert_eq!(runs[0]["kind"], "local");

    let not_git = tempfile::tempdir().unwrap();
    assert_refused(
        &benchgate(
            not_git.path(),
            &["ingest", tree.to_str().unwrap(), "--repo", "a/b"],
        ),
        &["--commit"],
    );
}

#[test]
fn the_fingerprint_file_round_trips_and_tampering_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let printed = benchgate(dir.path(), &["fingerprint", "--format", "json"]);
    let profile = json(&printed);
    let hash = profile["fingerprint"].as_str().unwrap().to_owned();
    assert_eq!(hash.len(), 64);
    assert_eq!(
        profile["profile"]["host_triple"],
        "x86_64-unknown-linux-gnu"
    );
    let text = stdout(&benchgate(dir.path(), &["fingerprint"]));
    assert!(
        text.contains(&hash) && text.contains("recorded, not hashed"),
        "{text}"
    );

    let file = dir.path().join("profile.json");
    std::fs::write(&file, &printed.stdout).unwrap();
    assert!(
        ingest_merkle(dir.path(), &["--fingerprint", file.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(
        json(&benchgate(dir.path(), &["runs", "--format", "json"]))[0]["fingerprint"],
        hash.as_str()
    );
    // With the store: how many of its runs were recorded on this machine.
    let db = [".benchgate/benchgate.db"];
    let text = stdout(&benchgate(
        dir.path(),
        &[&["fingerprint", "--db"][..], &db].concat(),
    ));
    assert!(
        text.ends_with("\nstored runs: 1 of 1 on this machine\n"),
        "{text}"
    );
    let with_store = json(&benchgate(
        dir.path(),
        &[&["fingerprint", "--format", "json", "--db"][..], &db].concat(),
    ));
    assert_eq!(
        with_store["stored_runs"],
        serde_json::json!({"this_machine": 1, "all": 1, "by_fingerprint": {hash.as_str(): 1}})
    );
    assert_refused(
        &benchgate(dir.path(), &["fingerprint", "--db", "nowhere.db"]),
        &["nowhere.db"],
    );

    let mut tampered = profile.clone();
    tampered["profile"]["logical_cores"] = 64.into();
    std::fs::write(&file, tampered.to_string()).unwrap();
    assert_refused(
        &ingest_merkle(
            dir.path(),
            &["--fingerprint", file.to_str().unwrap(), "--attempt", "2"],
        ),
        &["profile.json", "fingerprint"],
    );
}

/// The commit, repository and hardware profile are asked for while the tree is read; what is
/// wrong is still reported in the order the inputs are listed, and nothing is stored.
#[test]
fn errors_of_a_run_read_at_once_come_in_a_fixed_order() {
    let dir = tempfile::tempdir().unwrap();
    let broken =
        broken_copy(|new| std::fs::write(new.join("sample.json"), "{\"iters\": [1,").unwrap());
    let missing = dir.path().join("no-profile.json");
    let (broken_tree, missing) = (broken.path().to_str().unwrap(), missing.to_str().unwrap());
    // Outside git, without --commit: the commit first, however bad the tree and the profile.
    assert_refused(
        &benchgate(
            dir.path(),
            &[
                "ingest",
                broken_tree,
                "--repo",
                "a/b",
                "--fingerprint",
                missing,
            ],
        ),
        &["--commit", "git rev-parse HEAD"],
    );
    // Then the tree, before the profile.
    let output = benchgate(
        dir.path(),
        &[
            "ingest",
            broken_tree,
            "--repo",
            "a/b",
            "--commit",
            SHA,
            "--fingerprint",
            missing,
        ],
    );
    assert_refused(&output, &["TickTrade/parse/new/sample.json"]);
    assert!(
        !stderr(&output).contains("no-profile.json"),
        "{}",
        stderr(&output)
    );
    // A good tree: the profile's error.
    assert_refused(
        &ingest_merkle(dir.path(), &["--fingerprint", missing]),
        &["no-profile.json"],
    );
    assert!(
        !dir.path().join(".benchgate").exists(),
        "no store was opened for a run that could not be read"
    );
}

#[test]
fn show_latest_is_the_most_recently_recorded_run_not_the_highest_id() {
    let dir = tempfile::tempdir().unwrap();
    let output = ingest_merkle(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // An older history imported afterwards gets the higher id.
    let history = serde_json::json!({"entries": {"Benchmark": [{
        "commit": {"id": "b".repeat(40)}, "date": 1_600_000_000_000u64, "tool": "cargo",
        "benches": [{"name": "old", "value": 5, "unit": "ns/iter"}]}]}});
    std::fs::write(dir.path().join("data.json"), history.to_string()).unwrap();
    let output = benchgate(
        dir.path(),
        &[
            "import-history",
            "data.json",
            "--repo",
            "dicethedev/MerkleForge",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown = json(&benchgate(
        dir.path(),
        &["show", "latest", "--format", "json"],
    ));
    assert_eq!(shown["run"]["id"], 1, "{shown:#}");
    assert_eq!(shown["run"]["commit"], SHA);
}

#[test]
fn colour_only_on_a_terminal_and_never_under_no_color() {
    // `script` gives the command a terminal (util-linux, on every Debian).
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped colour_only_on_a_terminal: no `script` to make a terminal");
        return;
    }
    let tree = corpus("dicethedev__MerkleForge/target/criterion");
    let compare = format!(
        "{} compare --base {tree} --head {tree}",
        env!("CARGO_BIN_EXE_benchgate"),
        tree = tree.display()
    );
    let run = |no_color: Option<&str>| {
        let mut command = Command::new("script");
        command.args(["-qec", &compare, "/dev/null"]);
        command.env_remove("NO_COLOR");
        if let Some(value) = no_color {
            command.env("NO_COLOR", value);
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert!(run(None).contains("\x1b[33m"), "colour on a terminal");
    assert!(!run(Some("1")).contains('\x1b'), "NO_COLOR=1: none");
    assert!(
        run(Some("")).contains("\x1b[33m"),
        "an empty NO_COLOR does not count"
    );
    // Not a terminal: none.
    let piped = benchgate(
        Path::new("."),
        &[
            "compare",
            "--base",
            tree.to_str().unwrap(),
            "--head",
            tree.to_str().unwrap(),
        ],
    );
    assert!(!stdout(&piped).contains('\x1b'));
}

#[test]
fn runs_filters_by_repository_kind_and_branch_and_keeps_the_newest_n() {
    let dir = tempfile::tempdir().unwrap();
    let tree = corpus("dicethedev__MerkleForge/target/criterion");
    for (commit, kind, branch) in [
        ("a", "push", "main"),
        ("b", "pr", "feature"),
        ("c", "push", "main"),
    ] {
        let sha = commit.repeat(40);
        let output = benchgate(
            dir.path(),
            &[
                "ingest",
                tree.to_str().unwrap(),
                "--repo",
                "acme/rocket",
                "--commit",
                &sha,
                "--kind",
                kind,
                "--branch",
                branch,
            ],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let commits = |extra: &[&str]| -> Vec<String> {
        let args = [&["runs", "--format", "json"][..], extra].concat();
        json(&benchgate(dir.path(), &args))
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["commit"].as_str().unwrap()[..1].to_owned())
            .collect()
    };
    assert_eq!(commits(&[]), ["a", "b", "c"]);
    assert_eq!(commits(&["--limit", "2"]), ["b", "c"]);
    assert_eq!(commits(&["--kind", "push"]), ["a", "c"]);
    assert_eq!(commits(&["--kind", "push", "--limit", "1"]), ["c"]);
    assert_eq!(commits(&["--branch", "feature"]), ["b"]);
    assert!(commits(&["--repo", "acme/other"]).is_empty());
    assert_refused(
        &benchgate(dir.path(), &["runs", "--repo", "nope"]),
        &["--repo"],
    );
}

#[test]
fn a_postgres_store_answers_every_command_exactly_as_a_sqlite_file_does() {
    let _load = loading_the_machine();
    let Some(database) = postgres::FreshDatabase::create("cli_postgres") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("store.db");
    let stores = [file.to_str().unwrap(), database.url.as_str()];
    let trees = [
        (
            "dicethedev/MerkleForge",
            "dicethedev__MerkleForge/target/criterion",
        ),
        ("laysakura/louds-rs", "laysakura__louds-rs/criterion"),
    ];
    for store in stores {
        for (commit, (repo, tree)) in trees.iter().enumerate() {
            let tree = corpus(tree);
            let commit = format!("{:040x}", commit + 1);
            let args = [
                "ingest",
                tree.to_str().unwrap(),
                "--repo",
                repo,
                "--commit",
                &commit,
                "--database-url",
                store,
            ];
            let output = benchgate(dir.path(), &args);
            assert_eq!(
                stdout(&output),
                format!("{}\n", commit.trim_start_matches('0'))
            );
            let again = benchgate(dir.path(), &args);
            assert!(stderr(&again).contains("unchanged"), "{}", stderr(&again));
        }
    }
    // Every reading command prints the same bytes from either engine.
    let read = |args: &[&str]| -> Vec<String> {
        stores
            .iter()
            .map(|store| {
                let mut all = args.to_vec();
                all.extend(["--db", store]);
                let output = benchgate(dir.path(), &all);
                assert_eq!(
                    output.status.code(),
                    Some(0),
                    "{all:?}: {}",
                    stderr(&output)
                );
                without_timestamps(&stdout(&output))
            })
            .collect()
    };
    for args in [
        &["runs", "--format", "json"][..],
        &["show", "1", "--format", "json"],
        &["show", "latest"],
        &["export", "--format", "csv"],
        &[
            "export",
            "--format",
            "jsonl",
            "--repo",
            "laysakura/louds-rs",
        ],
    ] {
        let [sqlite, postgres] = <[String; 2]>::try_from(read(args)).unwrap();
        assert!(sqlite.len() > 200, "{args:?}: {sqlite}");
        assert_eq!(sqlite, postgres, "{args:?}");
    }
    let export = &read(&["export", "--format", "csv"])[1];
    assert_eq!(
        export.lines().count(),
        1 + 30 + 30,
        "a header and 60 measurements"
    );
}

/// `text` with each RFC 3339 time (`2026-11-24T01:11:47Z`, also with fractions or an offset)
/// replaced by `<time>`: two stores ingested a second apart differ in nothing else.
fn without_timestamps(text: &str) -> String {
    let bytes = text.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:dd";
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let matches = bytes.len() - i >= shape.len()
            && shape.iter().zip(&bytes[i..]).all(|(s, b)| match s {
                b'd' => b.is_ascii_digit(),
                _ => s == b,
            });
        if matches {
            let mut end = i + shape.len();
            while end < bytes.len()
                && (bytes[end].is_ascii_digit() || b".:+-Z".contains(&bytes[end]))
            {
                end += 1;
            }
            out.push_str("<time>");
            i = end;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[test]
fn an_unreachable_postgres_store_is_named_without_its_password() {
    let dir = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens there.
    let output = benchgate(
        dir.path(),
        &[
            "runs",
            "--db",
            "postgres://ci:hunter2@127.0.0.1:1/benchgate",
        ],
    );
    assert_refused(&output, &["store postgres://ci:***@127.0.0.1:1/benchgate"]);
    assert!(!stderr(&output).contains("hunter2"), "{}", stderr(&output));
}

#[test]
fn prune_reports_in_a_dry_run_exactly_what_it_then_removes() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        stdout(&ingest_merkle(dir.path(), &["--kind", "push"])),
        "1\n"
    );
    assert_eq!(
        stdout(&ingest_merkle(dir.path(), &["--kind", "pr", "--pr", "9"])),
        "2\n"
    );
    let prune = |extra: &[&str]| {
        let mut args = vec![
            "prune",
            "--older-than",
            "0s",
            "--only",
            "pr-runs,deliveries",
        ];
        args.extend_from_slice(extra);
        benchgate(dir.path(), &args)
    };
    let dry = prune(&["--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    let text = stdout(&dry);
    assert!(
        text.starts_with("would remove, of what was recorded before ")
            && text.contains("- 1 pull-request runs (30 measurements)\n")
            && text.contains("- 0 webhook deliveries\n"),
        "{text}"
    );
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    assert_eq!(
        runs.as_array().unwrap().len(),
        2,
        "a dry run removes nothing"
    );

    let real = json(&prune(&["--format", "json"]));
    assert_eq!(real["dry_run"], false);
    assert_eq!(
        (real["pr_runs"].as_u64(), real["pr_measurements"].as_u64()),
        (Some(1), Some(30))
    );
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(
        runs[0]["kind"], "push",
        "the push run is never a pruned PR run"
    );

    let bad = benchgate(dir.path(), &["prune", "--older-than", "soon"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("invalid value 'soon' for '--older-than <AGE>'"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn every_command_s_help_has_examples_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let top = stdout(&benchgate(dir.path(), &["--help"]));
    assert!(
        top.contains("Exit codes: 0 ok") && top.contains("1 a regression"),
        "{top}"
    );
    let commands: Vec<String> = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect();
    assert_eq!(commands.len(), 20, "{commands:?}");
    for command in &commands {
        let help = stdout(&benchgate(dir.path(), &[command, "--help"]));
        assert!(
            help.contains("\nExamples:\n  ")
                && help.contains(&format!("benchgate {command} "))
                && help.contains("\nExit: 0"),
            "{command} --help: {help}"
        );
    }
    let gate = stdout(&benchgate(dir.path(), &["gate", "--help"]));
    assert!(
        gate.contains("1 a regression or a\nmissed budget"),
        "{gate}"
    );
}
