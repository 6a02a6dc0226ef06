//! `benchgate bisect` end to end: throwaway git repositories of the zoo crate
//! (`tests/fixtures/ab-zoo`) whose history slows `push` with real code changes, bisected with
//! real `cargo bench` builds and runs, with a CPU hog running.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::ab::{edit, shared_target, timing_turn};
use crate::support::fake_github::{FakeGitHub, OWNER, REPO, TOKEN};
use crate::support::*;

/// A repository of the zoo crate: the first commit, then `commits` more, the i-th (from 1)
/// changed by `change(i, repo)` (when it returns false, only the README changes). Returns the
/// repository and every commit, oldest first.
fn history(
    commits: usize,
    change: impl Fn(usize, &Path) -> bool,
) -> (tempfile::TempDir, Vec<String>) {
    let repo = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ab-zoo"),
        repo.path(),
    );
    git(repo.path(), &["init", "-q", "-b", "main"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "the zoo"]);
    let mut shas = vec![git(repo.path(), &["rev-parse", "HEAD"])];
    for i in 1..=commits {
        let subject = if change(i, repo.path()) {
            format!("change {i}: more pushes")
        } else {
            let readme = repo.path().join("README.md");
            let mut text = std::fs::read_to_string(&readme).unwrap();
            text.push_str(&format!("\nNote {i}.\n"));
            std::fs::write(&readme, text).unwrap();
            format!("change {i}: notes")
        };
        git(repo.path(), &["commit", "-q", "-am", &subject]);
        shas.push(git(repo.path(), &["rev-parse", "HEAD"]));
    }
    (repo, shas)
}

/// benchgate in `repo` with `args`, then the zoo's bench command; `github` gives the API and
/// the token (else neither is set).
fn benchgate_on_zoo(repo: &Path, args: &[&str], github: Option<&FakeGitHub>) -> Output {
    let target = shared_target();
    let mut command = Command::new(env!("CARGO_BIN_EXE_benchgate"));
    command
        .args(args)
        .args(["--repo", &format!("{OWNER}/{REPO}")])
        .args(["--target-dir", target.to_str().unwrap()])
        .args([
            "--", "cargo", "bench", "--locked", "--bench", "zoo", "--", "--noplot",
        ])
        .current_dir(repo)
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_API_URL")
        .env_remove("GITHUB_REPOSITORY")
        .env_remove("CRITERION_HOME")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("BENCHGATE_DATABASE_URL")
        .env_remove("BENCHGATE_DASHBOARD_URL");
    if let Some(github) = github {
        command
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_API_URL", &github.api_url);
    }
    command.output().unwrap()
}

/// `benchgate bisect` over the zoo's `push`, in the shared target directory.
fn bisect(repo: &Path, good: &str, bad: &str, github: Option<&FakeGitHub>) -> Output {
    let args = [
        "bisect",
        "--good",
        good,
        "--bad",
        bad,
        "--bench",
        "push",
        "--format",
        "json",
        "--max-rounds",
        "12",
    ];
    benchgate_on_zoo(repo, &args, github)
}

fn report(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

fn ratio_of(cause: &Value) -> f64 {
    let ratios = cause["ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), 1, "{cause:#}");
    assert_eq!(ratios[0]["id"], "push");
    ratios[0]["ratio"].as_f64().unwrap()
}

/// Every probe's rounds were stored: two runs a round, all in the repository's store.
fn assert_every_round_stored(repo: &Path, document: &Value) {
    let runs = benchgate(repo, &["runs", "--format", "json"]);
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(
        runs.as_array().unwrap().len() as u64,
        document["bench_runs"].as_u64().unwrap(),
        "{document:#}"
    );
}

#[test]
fn one_commit_of_sixteen_that_slows_push_is_found_with_a_cpu_hog_running() {
    let _turn = timing_turn();
    // A step large enough to be told apart from the noise of a machine this busy (two busy
    // loops, the hog and the other tests): each probe against the threshold (a quarter of the
    // step in log terms, here 2×) then decides within its rounds.
    let (repo, shas) = history(16, |i, repo| {
        if i == 11 {
            edit(
                repo,
                "src/lib.rs",
                "PUSHES: u64 = 4_000",
                "PUSHES: u64 = 64_000",
            );
        }
        i == 11
    });
    let github = FakeGitHub::start("");
    github
        .data()
        .merged
        .insert(shas[11].clone(), (42, "Push more".to_owned()));
    let _hog = CpuHog::start();
    let document = report(&bisect(repo.path(), &shas[0], &shas[16], Some(&github)));

    assert_eq!(document["outcome"], "culprit", "{document:#}");
    assert_eq!(document["commits"], 16);
    let causes = document["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{document:#}");
    assert_eq!(causes[0]["commit"], shas[11].as_str(), "{document:#}");
    assert_eq!(causes[0]["subject"], "change 11: more pushes");
    assert_eq!(causes[0]["pull_request"]["number"], 42, "{document:#}");
    // Sixteen times the pushes; `push` settles at one of two speeds per process (about 3.7 or
    // 7.5 µs, see ab.rs), so each side may read up to twice slower, and the hog more.
    let ratio = ratio_of(&causes[0]);
    assert!(
        (4.0..64.0).contains(&ratio),
        "sixteen times the pushes: {ratio}"
    );

    // The step first, then a binary search over 16 commits (4 probes), then the culprit
    // against the bad commit (nothing more): about log2(N) + 2 probes.
    let probes = document["probes"].as_array().unwrap();
    assert_eq!(probes[0]["base"], shas[0].as_str());
    assert_eq!(probes[0]["head"], shas[16].as_str());
    assert_eq!(probes[0]["outcome"], "slower");
    assert!(probes.len() <= 7, "{} probes: {document:#}", probes.len());
    let last = probes.last().unwrap();
    assert_eq!(last["base"], shas[11].as_str(), "{document:#}");
    assert_eq!(last["head"], shas[16].as_str());
    assert_eq!(last["outcome"], "not slower");
    // Every probe of a commit before the culprit was not slower, every one from it on was.
    for probe in &probes[1..probes.len() - 1] {
        let index = shas
            .iter()
            .position(|s| probe["head"] == s.as_str())
            .unwrap();
        let expected = if index >= 11 { "slower" } else { "not slower" };
        assert_eq!(probe["outcome"], expected, "{probe:#}");
    }
    assert_every_round_stored(repo.path(), &document);
    assert!(
        github.requests().contains(&(
            "GET".into(),
            format!("/repos/{OWNER}/{REPO}/commits/{}/pulls", shas[11])
        )),
        "{:?}",
        github.requests()
    );
    github.assert_no_violations();
}

#[test]
fn a_step_built_up_by_two_commits_is_reported_as_both() {
    let _turn = timing_turn();
    let (repo, shas) = history(8, |i, repo| match i {
        3 => {
            edit(
                repo,
                "src/lib.rs",
                "PUSHES: u64 = 4_000",
                "PUSHES: u64 = 16_000",
            );
            true
        }
        6 => {
            edit(
                repo,
                "src/lib.rs",
                "PUSHES: u64 = 16_000",
                "PUSHES: u64 = 64_000",
            );
            true
        }
        _ => false,
    });
    let document = report(&bisect(repo.path(), &shas[0], &shas[8], None));
    assert_eq!(document["outcome"], "several", "{document:#}");
    let causes = document["causes"].as_array().unwrap();
    let commits: Vec<&str> = causes
        .iter()
        .map(|c| c["commit"].as_str().unwrap())
        .collect();
    assert_eq!(
        commits,
        [shas[3].as_str(), shas[6].as_str()],
        "{document:#}"
    );
    for cause in causes {
        let ratio = ratio_of(cause);
        assert!(
            (2.5..8.0).contains(&ratio),
            "four times the pushes each: {ratio}"
        );
        assert!(cause.get("pull_request").is_none(), "no token, no look-up");
    }
    assert_every_round_stored(repo.path(), &document);
}

#[test]
fn a_range_with_no_real_change_has_no_culprit() {
    let _turn = timing_turn();
    let (repo, shas) = history(4, |_, _| false);
    let output = bisect(repo.path(), &shas[0], &shas[4], None);
    let document = report(&output);
    assert_eq!(document["outcome"], "no-culprit", "{document:#}");
    // Only the README changed: the same executables, so the probe needs no round.
    assert_eq!(document["probes"][0]["rounds"], 0, "{document:#}");
    assert_eq!(
        document["probes"][0]["outcome"], "not slower",
        "{document:#}"
    );
    assert_eq!(document["causes"], serde_json::json!([]));
    assert_eq!(
        document["probes"].as_array().unwrap().len(),
        1,
        "{document:#}"
    );
    assert_every_round_stored(repo.path(), &document);

    // Good and bad the wrong way round: refused by name before anything is built.
    let output = Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .args([
            "bisect", "--good", &shas[4], "--bad", &shas[0], "--", "cargo", "bench",
        ])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_refused(&output, &["--good", "is not an ancestor of --bad"]);
}

/// A range whose last commit makes the zoo's `other` bench name its benchmark `push` too: the
/// probe's check refuses the command, naming both executables, before any round.
#[test]
fn a_probe_whose_executables_name_one_benchmark_is_refused() {
    let _target = crate::ab::SHARED_TARGET
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (repo, shas) = history(1, |_, repo| {
        crate::ab::other_names_push(repo);
        true
    });
    let target = shared_target();
    let output = Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .args([
            "bisect", "--good", &shas[0], "--bad", &shas[1], "--bench", "push",
        ])
        .args(["--target-dir", target.to_str().unwrap()])
        .args([
            "--", "cargo", "bench", "--locked", "--bench", "zoo", "--bench", "other", "--",
            "--noplot",
        ])
        .current_dir(repo.path())
        .env_remove("CRITERION_HOME")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("BENCHGATE_DATABASE_URL")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "checking the bench command before the first round (Criterion's --list), {}: the bench executables zoo/other and zoo/zoo each name the benchmark `push`",
            &shas[1][..12]
        )),
        "{err}"
    );
    assert!(!err.contains("round 1/"), "no round ran: {err}");
}

/// Stores a nightly run at each of `commits` (in order): the Criterion tree `measured` beside a
/// real suite of 30 more benchmarks (fixtures/corpus, MerkleForge), each top-level benchmark
/// directory scaled by `level(commit, dir)` and wobbling by up to ±1.5%.
fn ingest_nightlies(
    repo: &Path,
    measured: &Path,
    commits: &[&str],
    level: impl Fn(&str, &Path) -> f64,
) {
    for (run, commit) in commits.iter().enumerate() {
        let tree = tempfile::tempdir().unwrap();
        copy_dir(measured, tree.path());
        copy_dir(
            &corpus("dicethedev__MerkleForge/target/criterion"),
            tree.path(),
        );
        let mut entries: Vec<_> = std::fs::read_dir(tree.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        entries.sort();
        for (k, dir) in entries.iter().enumerate() {
            let wobble = 1.0 + 0.015 * (run as f64 * 1.7 + k as f64 * 2.3).sin();
            scale_times(dir, level(commit, dir) * wobble);
        }
        let output = benchgate(
            repo,
            &[
                "ingest",
                tree.path().to_str().unwrap(),
                "--repo",
                &format!("{OWNER}/{REPO}"),
                "--commit",
                commit,
                "--kind",
                "nightly",
            ],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
}

#[test]
fn a_step_whose_commits_are_not_in_the_history_is_named_and_fails_the_night() {
    // Nightly runs of commits this clone does not have (a rewritten history): the step is
    // found, cannot be bisected, and is reported by name; nothing is opened.
    let (repo, _) = history(1, |_, _| false);
    let empty = tempfile::tempdir().unwrap();
    let commits: Vec<String> = (0..13).map(|i| format!("{:040x}", 0xabc0 + i)).collect();
    let listed: Vec<&str> = commits.iter().map(String::as_str).collect();
    ingest_nightlies(repo.path(), empty.path(), &listed, |commit, dir| {
        if dir.ends_with("node_hash") && commit >= listed[10] {
            3.0
        } else {
            1.0
        }
    });
    let github = FakeGitHub::start("");
    let output = nightly(repo.path(), &github);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: bisecting node_hash/")
            && err.contains(&format!(
                "between {} and {}",
                &commits[9][..7],
                &commits[10][..7]
            )),
        "{err}"
    );
    assert!(err.contains("not a commit in this repository"), "{err}");
    assert!(err.contains("steps could not be bisected"), "{err}");
    assert!(github.data().issues.is_empty());
    github.assert_no_violations();
}

/// `benchgate nightly` over the zoo, against the fake GitHub, showing the trend's address.
fn nightly(repo: &Path, github: &FakeGitHub) -> Output {
    let args = [
        "nightly",
        "--budget",
        "20m",
        "--dashboard-url",
        "https://acme.github.io/rocket",
    ];
    benchgate_on_zoo(repo, &args, Some(github))
}

#[test]
fn the_nightly_bisects_a_new_step_opens_one_issue_and_updates_it_on_a_rerun() {
    let _turn = timing_turn();
    // 36 commits after the first; the 29th pushes sixteen times as much.
    let (repo, shas) = history(36, |i, repo| {
        if i == 29 {
            edit(
                repo,
                "src/lib.rs",
                "PUSHES: u64 = 4_000",
                "PUSHES: u64 = 64_000",
            );
        }
        i == 29
    });
    // A real Criterion tree of the zoo (from cargo bench) beside a real suite of 30 more
    // benchmarks (fixtures/corpus, MerkleForge), as one nightly machine's runs.
    let measured = tempfile::tempdir().unwrap();
    let bench = Command::new("cargo")
        .args(["bench", "--locked", "--bench", "zoo", "--", "--noplot"])
        .current_dir(repo.path())
        .env("CARGO_TARGET_DIR", shared_target())
        .env("CRITERION_HOME", measured.path())
        .output()
        .unwrap();
    assert!(bench.status.success(), "{}", stderr(&bench));
    // The nightly ran at every third commit: 0, 3, ..., 36. The head's `push` (64,000 pushes)
    // is a sixteenth as long before commit 29; every benchmark wobbles by up to ±1.5%.
    let nightlies: Vec<&str> = (0..=36).step_by(3).map(|c| shas[c].as_str()).collect();
    ingest_nightlies(repo.path(), measured.path(), &nightlies, |commit, dir| {
        let index = shas.iter().position(|s| s == commit).unwrap();
        if dir.ends_with("push") && index < 29 {
            1.0 / 16.0
        } else {
            1.0
        }
    });
    let github = FakeGitHub::start("");
    github
        .data()
        .merged
        .insert(shas[29].clone(), (42, "Push more".to_owned()));

    let output = nightly(repo.path(), &github);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(
        err.contains("1 recent slowdown(s) beyond the limit"),
        "{err}"
    );
    let issues = github.data().issues.clone();
    assert_eq!(issues.len(), 1, "{issues:?}\n{err}");
    let (number, title, body, labels) = &issues[0];
    assert_eq!(labels, &["benchgate-bisect"]);
    assert!(
        title.starts_with("push ")
            && title.ends_with(&format!(
                "slower between {} and {}",
                &shas[27][..7],
                &shas[30][..7]
            )),
        "{title}"
    );
    assert!(
        body.contains(&format!(
            "**Culprit:** {} change 29: more pushes from #42 (Push more)",
            shas[29]
        )),
        "{body}"
    );
    assert!(
        body.contains("([trend](https://acme.github.io/rocket/acme/rocket/"),
        "{body}"
    );
    assert!(body.contains("<!-- benchgate:bisect "), "{body}");
    let runs = |repo: &Path| {
        let listed = benchgate(repo, &["runs", "--format", "json"]);
        serde_json::from_slice::<Value>(&listed.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    let after_first = runs(repo.path());
    assert!(
        after_first > 13,
        "the probes' rounds are stored: {after_first}"
    );

    // The dashboard marks the change point with its culprit and links the issue, and draws no
    // point for the probes' old commits.
    let site = tempfile::tempdir().unwrap();
    let output = benchgate(
        repo.path(),
        &["dashboard", "--out", site.path().to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let machine = std::fs::read_dir(site.path().join(format!("{OWNER}/{REPO}")))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let page = std::fs::read_dir(machine.join("b"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "html")
                && p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("push-")
        })
        .unwrap();
    let html = std::fs::read_to_string(page).unwrap();
    let changes = html.split("<h2>Change points</h2>").nth(1).unwrap();
    let changes = changes.split("<h2>Runs</h2>").next().unwrap();
    assert!(
        changes.contains(&format!("/commit/{}", shas[29])),
        "{changes}"
    );
    assert!(
        changes.contains(&format!(
            "/{OWNER}/{REPO}/issues/{number}\">issue #{number}</a>"
        )),
        "{changes}"
    );
    let points = html.split("<h2>Runs</h2>").nth(1).unwrap();
    assert_eq!(
        points.matches("<tr><td class=\"num\">").count(),
        13,
        "one per nightly"
    );

    // A rerun finds the step bisected and its issue by the marker: updated, not opened again.
    let output = nightly(repo.path(), &github);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(github.data().issues.len(), 1);
    assert_eq!(runs(repo.path()), after_first, "nothing bisected again");
    assert!(
        github.requests().contains(&(
            "PATCH".into(),
            format!("/repos/{OWNER}/{REPO}/issues/{number}")
        )),
        "{:?}",
        github.requests()
    );
    github.assert_no_violations();
}
