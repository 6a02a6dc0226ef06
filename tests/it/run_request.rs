//! A maintainer-triggered run (`/benchgate run` or the run label) end to end, as
//! `.github/workflows/perf-run.yml` runs it, against the fake GitHub: `request-run` checks the
//! writer and pins the head and base; the benchmark job saves the verdict as an artifact with no
//! token; the publish job publishes it as a requested run, which (unlike a fork's own artifact)
//! may pass the check, and only for the very commit that was asked for.

use std::path::Path;

use crate::publish::{HEAD, comments, fake_with_role, pass_summary, step, workspace};
use crate::support::fake_github::{self, FakeGitHub};
use crate::support::*;
use serde_json::Value;

const BASE: &str = "1111111111111111111111111111111111111111";

/// The step outputs `request-run` appended, as a map.
fn outputs(dir: &Path) -> std::collections::BTreeMap<String, String> {
    std::fs::read_to_string(dir.join("github-output"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The `/benchgate run` comment `id` by `login`, on the fake and as the event.
fn run_comment(github: &FakeGitHub, id: u64, login: &str, body: &str) -> Value {
    github
        .data()
        .comments
        .push((id, 7, body.into(), login.into(), "User".into()));
    fake_github::issue_comment_event("created", id, login, "User", body, true)
}

/// The benchmark job: a verdict of identical code, saved as the artifact without a token.
fn bench_job_artifact(dir: &Path) {
    pass_summary(dir);
    let output = benchgate(
        dir,
        &[
            "publish",
            "--summary",
            "pass.json",
            "--to-artifact",
            "artifact",
            "--pr",
            "7",
            "--sha",
            HEAD,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// The publish job of a run `maint` asked for at `sha`.
fn publish_requested(dir: &Path, github: &FakeGitHub, sha: &str) -> std::process::Output {
    let args = [
        "publish",
        "--from-artifact",
        "artifact",
        "--requested-by",
        "maint",
        "--sha",
        sha,
    ];
    step(dir, github, &args)
}

#[test]
fn a_writers_run_comment_pins_the_commits_and_its_verdict_may_pass_the_check() {
    let github = fake_with_role("maint", "write");
    let dir = workspace(&run_comment(&github, 555, "maint", "/benchgate run"));

    // Job 1: the request.
    let output = step(dir.path(), &github, &["request-run"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = outputs(dir.path());
    assert_eq!(out["run"], "true", "{out:?}");
    assert_eq!(out["pr"], "7");
    assert_eq!(out["head-sha"], HEAD);
    assert_eq!(out["base-sha"], BASE);
    assert_eq!(out["base-ref"], "main");
    assert_eq!(out["requested-by"], "maint");
    assert_eq!(
        github.data().reactions,
        vec![(555, "rocket".to_owned())],
        "the comment is acknowledged"
    );
    assert_eq!(comments(&github).len(), 1, "no reply besides the reaction");
    assert!(github.data().check_runs.is_empty());

    // Job 2: the benchmarks, with no token. Job 3: the publish, as the requested run.
    bench_job_artifact(dir.path());
    let output = publish_requested(dir.path(), &github, HEAD);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    github.assert_no_violations();
    let run = github.data().check_runs[0].clone();
    assert_eq!(
        (run["head_sha"].as_str(), run["conclusion"].as_str()),
        (Some(HEAD), Some("success")),
        "a requested run's pass passes: {run:#}"
    );
    let title = run["output"]["title"].as_str().unwrap();
    assert!(!title.starts_with("Unverified"), "{title}");
    assert!(
        run["output"]["summary"]
            .as_str()
            .unwrap()
            .contains("**Requested by @maint**"),
        "{run:#}"
    );
    let sticky = comments(&github)
        .into_iter()
        .find(|(id, _)| *id != 555)
        .unwrap()
        .1;
    assert!(
        sticky.contains("**Requested by @maint** (`/benchgate run`)"),
        "{sticky}"
    );
    assert!(!sticky.contains("Unverified"), "{sticky}");
    assert_eq!(outputs(dir.path())["verdict"], "pass");
}

#[test]
fn a_requested_run_publishes_nothing_for_another_commit_or_a_requester_without_access() {
    let github = fake_with_role("maint", "write");
    let dir = workspace(&run_comment(&github, 555, "maint", "/benchgate run"));
    bench_job_artifact(dir.path());
    let publish = |sha: &str| publish_requested(dir.path(), &github, sha);
    let nothing_posted = |github: &FakeGitHub| {
        let data = github.data();
        assert!(data.check_runs.is_empty() && data.statuses.is_empty());
        assert_eq!(data.comments.len(), 1, "only the request comment");
    };

    // The artifact is for HEAD; the run was asked for another commit.
    let other = "3".repeat(40);
    let output = publish(&other);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(&format!(
            "head_sha {HEAD} is not the commit the run was requested for, {other}"
        )),
        "{}",
        stderr(&output)
    );
    nothing_posted(&github);

    // Pushed since the request: the pull request's head is no longer the commit measured.
    github.data().pulls.insert(7, other.clone());
    let output = publish(HEAD);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(&format!("its head on GitHub is {other} (pushed since)")),
        "{}",
        stderr(&output)
    );
    nothing_posted(&github);

    // The requester's access was taken away before the publish job ran.
    github.data().pulls.insert(7, HEAD.into());
    github.data().permissions.insert("maint".into(), "read");
    let output = publish(HEAD);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--requested-by: a requested run needs write, maintain or admin access to acme/rocket; @maint has `read`."),
        "{}",
        stderr(&output)
    );
    nothing_posted(&github);

    // --requested-by names the commit asked for.
    let output = step(
        dir.path(),
        &github,
        &[
            "publish",
            "--from-artifact",
            "artifact",
            "--requested-by",
            "maint",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--requested-by needs --sha"),
        "{}",
        stderr(&output)
    );
    nothing_posted(&github);
}

#[test]
fn readers_are_refused_with_a_reply_and_other_events_are_ignored() {
    let github = fake_with_role("maint", "write");
    github.data().permissions.insert("reader".into(), "triage");
    let request = |event: &Value| {
        let dir = workspace(event);
        let output = step(dir.path(), &github, &["request-run"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        (outputs(dir.path()), stderr(&output))
    };

    // A reader's comment: a reply saying why, and no run.
    let (out, log) = request(&run_comment(
        &github,
        600,
        "reader",
        "/benchgate run please",
    ));
    assert_eq!(out["run"], "false");
    assert!(!out.contains_key("head-sha"));
    assert!(log.contains("benchgate: refused"), "{log}");
    let reply = comments(&github).last().unwrap().1.clone();
    assert_eq!(
        reply,
        "@reader `/benchgate run` refused: asking for a benchmark run needs write, maintain or admin access to acme/rocket; @reader has `triage`."
    );
    assert!(github.data().reactions.is_empty());

    // Ignored without a word: an edit, another command, a bot, an issue, another label.
    let posts_before = github.requests().len();
    let ignored = [
        fake_github::issue_comment_event("edited", 601, "maint", "User", "/benchgate run", true),
        fake_github::issue_comment_event(
            "created",
            602,
            "maint",
            "User",
            "/benchgate running",
            true,
        ),
        fake_github::issue_comment_event(
            "created",
            603,
            "bench-bot",
            "Bot",
            "/benchgate run",
            true,
        ),
        fake_github::issue_comment_event("created", 604, "maint", "User", "/benchgate run", false),
        fake_github::labeled_event(7, HEAD, "bug", "maint"),
    ];
    for event in &ignored {
        let (out, log) = request(event);
        assert_eq!(out["run"], "false", "{event}");
        assert!(log.contains("benchgate: ignored"), "{log}");
    }
    assert_eq!(
        github.requests().len(),
        posts_before,
        "nothing asked of GitHub"
    );

    // The label, added by a writer: a run (no comment to react to); by a reader: a reply.
    let (out, _) = request(&fake_github::labeled_event(
        7,
        HEAD,
        "benchgate-run",
        "maint",
    ));
    assert_eq!(
        (
            out["run"].as_str(),
            out["head-sha"].as_str(),
            out["requested-by"].as_str()
        ),
        ("true", HEAD, "maint")
    );
    let (out, _) = request(&fake_github::labeled_event(
        7,
        HEAD,
        "benchgate-run",
        "reader",
    ));
    assert_eq!(out["run"], "false");
    assert!(
        comments(&github)
            .last()
            .unwrap()
            .1
            .starts_with("@reader the `benchgate-run` label refused: "),
        "{:?}",
        comments(&github).last()
    );

    // A closed pull request is not benchmarked.
    github.data().closed.push(7);
    let (out, _) = request(&run_comment(&github, 605, "maint", "/benchgate run"));
    assert_eq!(out["run"], "false");
    assert_eq!(
        comments(&github).last().unwrap().1,
        "@maint `/benchgate run` refused: pull request #7 is closed."
    );
    github.assert_no_violations();
}
