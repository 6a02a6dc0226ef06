//! Publishing to GitHub end to end: the real binary and the real octocrab client against a
//! local fake of GitHub's REST API (tests/it/support/fake_github.rs) that checks every request as
//! GitHub documents it. Comments, check runs, the status fallback, rate limits, retries, the
//! GitHub Enterprise base path, the job summary and outputs, and the maintainer override.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

use crate::support::fake_github::{self, FakeGitHub, Fault};
use crate::support::*;
use serde_json::Value;

pub(crate) const TREE: &str = "dicethedev__MerkleForge/target/criterion";
pub(crate) const HEAD: &str = "2222222222222222222222222222222222222222";

/// Runs benchgate as a workflow step would: the Actions variables point at the fake.
pub(crate) fn step(dir: &Path, github: &FakeGitHub, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchgate"))
        .args(args)
        .current_dir(dir)
        .env("GITHUB_TOKEN", fake_github::TOKEN)
        .env("GITHUB_API_URL", &github.api_url)
        .env("GITHUB_REPOSITORY", "acme/rocket")
        .env("GITHUB_EVENT_PATH", dir.join("event.json"))
        .env("GITHUB_STEP_SUMMARY", dir.join("step-summary.md"))
        .env("GITHUB_OUTPUT", dir.join("github-output"))
        .env("GITHUB_SHA", "9".repeat(40)) // the merge commit: never the check's commit
        .env_remove("CRITERION_HOME")
        .output()
        .unwrap()
}

pub(crate) fn workspace(event: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("event.json"), event.to_string()).unwrap();
    dir
}

/// A perf-summary.json of a 30% slowdown of every MerkleForge benchmark (two A/B rounds).
fn regressed_summary(dir: &Path) -> String {
    let slower = scaled_copy(TREE, 1.3);
    let base = corpus(TREE);
    let (base, slower) = (base.to_str().unwrap(), slower.path().to_str().unwrap());
    let output = benchgate(
        dir,
        &[
            "compare",
            "--base",
            base,
            "--head",
            slower,
            "--base",
            base,
            "--head",
            slower,
            "--out-json",
            "regressed.json",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    "regressed.json".into()
}

/// `pass.json` in `dir`: a perf-summary.json of identical code (two A/B rounds), `pass`.
pub(crate) fn pass_summary(dir: &Path) {
    let base = corpus(TREE);
    let base = base.to_str().unwrap();
    let side = ["--base", base, "--head", base];
    let args = [&["compare"][..], &side, &side, &["--out-json", "pass.json"]].concat();
    let output = benchgate(dir, &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let pass: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("pass.json")).unwrap()).unwrap();
    assert_eq!(pass["verdict"], "pass");
}

pub(crate) fn comments(github: &FakeGitHub) -> Vec<(u64, String)> {
    github
        .data()
        .comments
        .iter()
        .map(|c| (c.0, c.2.clone()))
        .collect()
}

#[test]
fn compare_publish_marks_the_check_in_progress_then_fails_it_and_comments_once() {
    let github = FakeGitHub::start("");
    let dir = workspace(&fake_github::pull_request_event(7, HEAD));
    let slower = scaled_copy(TREE, 1.3);
    let base = corpus(TREE);
    let (base, slower) = (base.to_str().unwrap(), slower.path().to_str().unwrap());
    let args = [
        "compare",
        "--base",
        base,
        "--head",
        slower,
        "--base",
        base,
        "--head",
        slower,
        "--publish",
    ];
    let output = step(dir.path(), &github, &args);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    github.assert_no_violations();

    let requests = github.requests();
    let run_id = github.data().check_runs[0]["id"].as_u64().unwrap();
    assert_eq!(
        requests,
        [
            ("POST", "/repos/acme/rocket/check-runs".to_owned()),
            ("GET", "/repos/acme/rocket/issues/7/comments".to_owned()),
            ("POST", "/repos/acme/rocket/issues/7/comments".to_owned()),
            ("PATCH", format!("/repos/acme/rocket/check-runs/{run_id}")),
        ]
        .map(|(m, p)| (m.to_owned(), p))
    );
    let data = github.data();
    // The sticky comment is looked for page by page at GitHub's largest page size.
    assert_eq!(data.seen[1].query, "per_page=100&page=1");
    // Created in_progress on the PR head (not GITHUB_SHA, the merge commit).
    let created = &data.seen[0].body;
    assert_eq!(created["status"], "in_progress");
    assert_eq!(created["head_sha"], HEAD);
    assert_eq!(created["name"], "benchgate");
    let completed = &data.seen[3].body;
    assert_eq!(completed["conclusion"], "failure");
    assert_eq!(
        completed["output"]["title"],
        "Regressed: 30 of 30 benchmarks slower than their limit; worst: node_hash/SHA-256 23.1% slower"
    );
    assert!(
        completed["output"]["text"]
            .as_str()
            .unwrap()
            .contains("| `node_hash/SHA-256` |")
    );
    let run = &data.check_runs[0];
    assert_eq!(
        (run["status"].as_str(), run["conclusion"].as_str()),
        (Some("completed"), Some("failure"))
    );
    let body = data.seen[2].body["body"].as_str().unwrap();
    assert!(
        body.starts_with("<!-- benchgate:sticky-comment -->\n## ❌ benchgate regressed: 30 of 30"),
        "{body}"
    );
    assert_eq!(data.comments.len(), 1);
    let comment_id = data.comments[0].0;
    drop(data);
    assert!(
        stderr(&output).contains(&format!("PR #7: comment {comment_id} created")),
        "{}",
        stderr(&output)
    );

    let summary = std::fs::read_to_string(dir.path().join("step-summary.md")).unwrap();
    assert!(
        summary.starts_with("## ❌ benchgate regressed: 30 of 30"),
        "{summary}"
    );
    let outputs = std::fs::read_to_string(dir.path().join("github-output")).unwrap();
    let report = dir.path().join("perf-summary.json");
    assert_eq!(
        outputs,
        format!(
            "verdict=regressed\nregressions=30\nimprovements=0\nreport-path={}\n",
            report.display()
        )
    );
    assert!(report.is_file());

    // The next push passes: the same comment is updated in place, no second one.
    let same = ["compare", "--base", base, "--head", base];
    let same = [&same[..], &same[1..], &["--publish"]].concat();
    let output = step(dir.path(), &github, &same);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    github.assert_no_violations();
    let all = comments(&github);
    assert_eq!(all.len(), 1);
    assert!(
        all[0]
            .1
            .contains("## ✅ benchgate pass: no regression in 30 benchmarks"),
        "{}",
        all[0].1
    );
    let patched = github
        .requests()
        .iter()
        .filter(|(m, p)| {
            m == "PATCH" && p == &format!("/repos/acme/rocket/issues/comments/{}", all[0].0)
        })
        .count();
    assert_eq!(patched, 1);
    assert!(
        stderr(&output).contains(&format!("PR #7: comment {comment_id} updated")),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        github.data().check_runs.last().unwrap()["conclusion"],
        "success"
    );
}

#[test]
fn a_lost_response_to_the_comment_post_does_not_duplicate_it() {
    let (github, dir, summary) = regressed_pr();
    github.fail_once(comment_post_fault(502, vec![], true));
    let output = step(dir.path(), &github, &["publish", "--summary", &summary]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    github.assert_no_violations();
    assert_eq!(comments(&github).len(), 1, "{:?}", github.requests());
    let posts = github
        .requests()
        .iter()
        .filter(|(m, p)| m == "POST" && p.ends_with("/issues/7/comments"))
        .count();
    assert_eq!(posts, 1, "the comment was found, not posted again");
    assert!(stderr(&output).contains(" created"), "{}", stderr(&output));
}

#[test]
fn a_429_with_retry_after_is_waited_out_and_retried_once() {
    let (github, dir, summary) = regressed_pr();
    github.fail_once(comment_post_fault(
        429,
        vec![("retry-after", "1".into())],
        false,
    ));
    let started = Instant::now();
    let output = step(dir.path(), &github, &["publish", "--summary", &summary]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(started.elapsed().as_secs_f64() >= 1.0);
    assert!(
        stderr(&output).contains("rate limit"),
        "{}",
        stderr(&output)
    );
    let posts = github
        .requests()
        .iter()
        .filter(|(m, p)| m == "POST" && p.ends_with("/issues/7/comments"))
        .count();
    assert_eq!(posts, 2);
    assert_eq!(comments(&github).len(), 1);
    github.assert_no_violations();
}

#[test]
fn without_check_permission_a_commit_status_stands_in() {
    let github = FakeGitHub::start("");
    github.data().permissions.insert("__checks".into(), "none");
    let dir = workspace(&fake_github::pull_request_event(7, HEAD));
    let summary = regressed_summary(dir.path());
    let output = step(dir.path(), &github, &["publish", "--summary", &summary]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    github.assert_no_violations();
    let data = github.data();
    assert!(data.check_runs.is_empty());
    assert_eq!(data.statuses.len(), 1);
    let (sha, status) = &data.statuses[0];
    assert_eq!(sha, HEAD);
    assert_eq!(status["state"], "failure");
    assert_eq!(status["context"], "benchgate");
    let description = status["description"].as_str().unwrap();
    assert_eq!(
        description,
        "Regressed: 30 of 30 benchmarks slower than their limit; worst: node_hash/SHA-256 23.1% slower"
    );
}

#[test]
fn a_missing_comment_permission_fails_naming_it() {
    let (github, dir, summary) = regressed_pr();
    github.fail_once(comment_post_fault(403, vec![], false));
    let output = step(dir.path(), &github, &["publish", "--summary", &summary]);
    assert_refused(
        &output,
        &[
            "POST /repos/acme/rocket/issues/7/comments",
            "HTTP 403",
            "`pull-requests: write`",
        ],
    );
}

#[test]
fn github_enterprise_keeps_its_api_path() {
    let github = FakeGitHub::start("/api/v3");
    assert!(github.api_url.ends_with("/api/v3"));
    let dir = workspace(&fake_github::pull_request_event(7, HEAD));
    let summary = regressed_summary(dir.path());
    let output = step(dir.path(), &github, &["publish", "--summary", &summary]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    github.assert_no_violations();
    assert!(
        github
            .requests()
            .iter()
            .all(|(_, p)| p.starts_with("/api/v3/repos/acme/rocket/"))
    );
    assert_eq!(comments(&github).len(), 1);
    assert_eq!(github.data().check_runs.len(), 1);
}

#[test]
fn a_comment_over_githubs_limit_is_cut_at_a_row() {
    let (github, dir, summary) = regressed_pr();
    // 3,000 benchmarks named with `µ` (two bytes): far over 65,536 characters of markdown,
    // and more bytes than characters, as GitHub's check-run limit counts them.
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(&summary)).unwrap()).unwrap();
    let template = value["benchmarks"][0].clone();
    let benchmarks = value["benchmarks"].as_array_mut().unwrap();
    for i in 0..3000 {
        let mut b = template.clone();
        b["id"] = format!("generated/µbenchmark_{i:05}").into();
        benchmarks.push(b);
    }
    std::fs::write(dir.path().join("big.json"), value.to_string()).unwrap();
    let output = step(dir.path(), &github, &["publish", "--summary", "big.json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    github.assert_no_violations();
    let body = &comments(&github)[0].1;
    assert!(body.len() <= 65_536);
    assert!(
        body.contains("more rows left out: GitHub shows at most 65536 bytes"),
        "{}",
        &body[body.len() - 300..]
    );
    let run = github.data().check_runs[0].clone();
    // The fake refuses a text over 65,535 bytes as GitHub does; this one was created.
    assert!(run["output"]["text"].as_str().unwrap().len() <= 65_535);
    // The job summary has room for more (1 MiB).
    let summary = std::fs::read_to_string(dir.path().join("step-summary.md")).unwrap();
    assert!(summary.len() > body.len());
}

#[test]
fn a_bad_summary_is_refused_before_anything_is_sent() {
    let github = FakeGitHub::start("");
    let dir = workspace(&fake_github::pull_request_event(7, HEAD));
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"schema_version": 1, "verdict": "great"}"#,
    )
    .unwrap();
    let output = step(dir.path(), &github, &["publish", "--summary", "bad.json"]);
    assert_refused(
        &output,
        &["bad.json", "`verdict`", "unknown variant `great`"],
    );
    assert!(github.requests().is_empty());
}

/// A fake GitHub, a workspace with a pull_request event for PR 7 at HEAD, and a regressed
/// perf-summary.json in it.
fn regressed_pr() -> (FakeGitHub, tempfile::TempDir, String) {
    let github = FakeGitHub::start("");
    let dir = workspace(&fake_github::pull_request_event(7, HEAD));
    let summary = regressed_summary(dir.path());
    (github, dir, summary)
}

/// A fault on the next POST of PR 7's comments.
fn comment_post_fault(
    status: u16,
    headers: Vec<(&'static str, String)>,
    after_effect: bool,
) -> Fault {
    Fault {
        method: "POST",
        path_ends_with: "/issues/7/comments".into(),
        status,
        headers,
        after_effect,
    }
}

/// A fake where `login` has `role` and PR 7's head is HEAD.
pub(crate) fn fake_with_role(login: &str, role: &'static str) -> FakeGitHub {
    let github = FakeGitHub::start("");
    github.data().permissions.insert(login.into(), role);
    github.data().pulls.insert(7, HEAD.into());
    github
}

/// Publishes a regression on PR 7 at HEAD, then sends `comment` as an issue_comment event.
fn override_flow(github: &FakeGitHub, event: Value) -> (tempfile::TempDir, Output) {
    let dir = workspace(&fake_github::pull_request_event(7, HEAD));
    let summary = regressed_summary(dir.path());
    let output = step(dir.path(), github, &["publish", "--summary", &summary]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::fs::write(dir.path().join("event.json"), event.to_string()).unwrap();
    let output = step(dir.path(), github, &["override"]);
    (dir, output)
}

#[test]
fn a_writer_overrides_the_check_for_this_head_only() {
    let github = fake_with_role("maint", "write");
    let event = fake_github::issue_comment_event(
        "created",
        555,
        "maint",
        "User",
        "/benchgate override the new parser trades speed for correctness",
        true,
    );
    let (dir, output) = override_flow(&github, event);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("overridden"),
        "{}",
        stderr(&output)
    );
    github.assert_no_violations();
    let run = github.data().check_runs[0].clone();
    assert_eq!(run["conclusion"], "success");
    assert_eq!(
        run["output"]["title"],
        "Overridden by @maint: the new parser trades speed for correctness"
    );
    assert!(
        run["output"]["summary"]
            .as_str()
            .unwrap()
            .contains("benchgate regressed: 30 of 30")
    );
    let all = comments(&github);
    assert_eq!(all.len(), 1);
    assert!(all[0].1.contains("> **Overridden** by @maint for head `222222222222`: the new parser trades speed for correctness"));
    assert!(
        all[0].1.contains("## ❌ benchgate regressed"),
        "the report stays"
    );

    // Publishing again at the same head keeps the override; a new push is gated afresh.
    let summary = "regressed.json";
    let output = step(
        dir.path(),
        &github,
        &["publish", "--summary", summary, "--sha", HEAD, "--pr", "7"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(github.data().check_runs[0]["conclusion"], "success");
    let outputs = std::fs::read_to_string(dir.path().join("github-output")).unwrap();
    assert!(
        outputs.ends_with(&format!(
            "verdict=overridden\nregressions=30\nimprovements=0\nreport-path={}\n",
            dir.path().join(summary).display()
        )),
        "{outputs}"
    );
    // A fresh runner (no local store) at the same head: the override block of the comment
    // GitHub holds keeps the check green.
    let fresh = workspace(&fake_github::pull_request_event(7, HEAD));
    std::fs::copy(dir.path().join(summary), fresh.path().join(summary)).unwrap();
    assert!(!fresh.path().join(".benchgate").exists());
    let output = step(fresh.path(), &github, &["publish", "--summary", summary]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = github.data().check_runs[0].clone();
    assert_eq!(run["conclusion"], "success", "{run:#}");
    assert_eq!(
        run["output"]["title"],
        "Overridden by @maint: the new parser trades speed for correctness"
    );
    assert!(
        comments(&github)[0]
            .1
            .contains("> **Overridden** by @maint")
    );
    let pushed = "3".repeat(40);
    let output = step(
        dir.path(),
        &github,
        &[
            "publish",
            "--summary",
            summary,
            "--sha",
            &pushed,
            "--pr",
            "7",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let data = github.data();
    let new_run = data
        .check_runs
        .iter()
        .find(|r| r["head_sha"] == pushed.as_str())
        .unwrap();
    assert_eq!(new_run["conclusion"], "failure");
    assert!(
        !data.comments[0].2.contains("Overridden"),
        "the new head's comment has no override"
    );
}

#[test]
fn a_reader_is_refused_with_a_reply() {
    let github = fake_with_role("visitor", "read");
    let event = fake_github::issue_comment_event(
        "created",
        556,
        "visitor",
        "User",
        "/benchgate override trust me",
        true,
    );
    let (_dir, output) = override_flow(&github, event);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    github.assert_no_violations();
    assert_eq!(github.data().check_runs[0]["conclusion"], "failure");
    let all = comments(&github);
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[1].1,
        "@visitor `/benchgate override` refused: overriding needs write, maintain or admin access to acme/rocket; @visitor has `read`."
    );
}

#[test]
fn edits_bots_other_comments_and_missing_reasons_do_not_override() {
    let github = fake_with_role("maint", "admin");
    let cases = [
        fake_github::issue_comment_event(
            "edited",
            560,
            "maint",
            "User",
            "/benchgate override edited in",
            true,
        ),
        fake_github::issue_comment_event(
            "created",
            561,
            "dependabot[bot]",
            "Bot",
            "/benchgate override bump",
            true,
        ),
        fake_github::issue_comment_event(
            "created",
            562,
            "maint",
            "User",
            "/benchgate override on an issue",
            false,
        ),
        fake_github::issue_comment_event("created", 563, "maint", "User", "looks good to me", true),
    ];
    let (dir, _) = override_flow(&github, cases[0].clone());
    let before = github.requests().len();
    for event in &cases {
        std::fs::write(dir.path().join("event.json"), event.to_string()).unwrap();
        let output = step(dir.path(), &github, &["override"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(stderr(&output).contains("ignored"), "{}", stderr(&output));
    }
    assert_eq!(
        github.requests().len(),
        before,
        "ignored events send nothing"
    );
    assert_eq!(github.data().check_runs[0]["conclusion"], "failure");

    let no_reason = fake_github::issue_comment_event(
        "created",
        564,
        "maint",
        "User",
        "/benchgate override   ",
        true,
    );
    std::fs::write(dir.path().join("event.json"), no_reason.to_string()).unwrap();
    let output = step(dir.path(), &github, &["override"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let all = comments(&github);
    assert!(
        all.last()
            .unwrap()
            .1
            .starts_with("@maint `/benchgate override` refused: a reason is required")
    );
    assert_eq!(github.data().check_runs[0]["conclusion"], "failure");
    github.assert_no_violations();
}

fn workflow_run_event(head_sha: &str) -> Value {
    serde_json::json!({
        "action": "completed",
        "workflow_run": {"id": 99, "name": "perf", "head_sha": head_sha, "event": "pull_request", "pull_requests": []},
        "repository": {"full_name": "acme/rocket"}
    })
}

/// Step 2 of the fork flow, in the base repository's workflow_run workflow: the artifact in
/// `dir` is published, and GitHub saw nothing amiss.
fn publish_fork_artifact(github: &FakeGitHub, dir: &Path) {
    std::fs::write(dir.join("event.json"), workflow_run_event(HEAD).to_string()).unwrap();
    let output = step(dir, github, &["publish", "--from-artifact", "artifact"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    github.assert_no_violations();
}

/// Step 1 of the fork flow, in the fork's unprivileged pull_request workflow: the artifact is
/// written and nothing is sent. PR 7's head on the fake is HEAD.
fn fork_artifact() -> (FakeGitHub, tempfile::TempDir) {
    let (github, dir, summary) = regressed_pr();
    github.data().pulls.insert(7, HEAD.into());
    let args = [
        "publish",
        "--summary",
        &summary,
        "--to-artifact",
        "artifact",
    ];
    let output = step(dir.path(), &github, &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    (github, dir)
}

#[test]
fn a_fork_artifact_is_checked_against_github_then_published() {
    let (github, dir) = fork_artifact();
    assert!(github.requests().is_empty());
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("artifact/benchgate-artifact.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        meta,
        serde_json::json!({"schema_version": 1, "pr": 7, "head_sha": HEAD})
    );

    // Step 2, in the base repository's workflow_run workflow.
    publish_fork_artifact(&github, dir.path());
    assert_eq!(
        github.requests()[0],
        ("GET".to_owned(), "/repos/acme/rocket/pulls/7".to_owned())
    );
    assert_eq!(comments(&github).len(), 1);
    assert!(
        comments(&github)[0].1.contains("**Unverified.**"),
        "{}",
        comments(&github)[0].1
    );
    let run = github.data().check_runs[0].clone();
    assert_eq!(
        (run["head_sha"].as_str(), run["conclusion"].as_str()),
        (Some(HEAD), Some("failure"))
    );
    assert!(
        run["output"]["title"]
            .as_str()
            .unwrap()
            .starts_with("Unverified (computed by the pull request's workflow): "),
        "{run:#}"
    );
}

#[test]
fn a_passing_verdict_from_a_fork_is_neutral_never_success() {
    let github = FakeGitHub::start("");
    github.data().pulls.insert(7, HEAD.into());
    let dir = workspace(&fake_github::pull_request_event(7, HEAD));
    pass_summary(dir.path());
    let args = [
        "publish",
        "--summary",
        "pass.json",
        "--to-artifact",
        "artifact",
    ];
    assert_eq!(step(dir.path(), &github, &args).status.code(), Some(0));
    publish_fork_artifact(&github, dir.path());
    let run = github.data().check_runs[0].clone();
    assert_eq!(run["conclusion"], "neutral", "{run:#}");
}

#[test]
fn an_artifact_with_anything_but_its_two_plain_files_or_from_a_push_publishes_nothing() {
    let (github, dir) = fork_artifact();
    let artifact = dir.path().join("artifact");
    let publish = |event: Value| {
        std::fs::write(dir.path().join("event.json"), event.to_string()).unwrap();
        step(
            dir.path(),
            &github,
            &["publish", "--from-artifact", "artifact"],
        )
    };
    // A workflow run of a push: not a pull request's artifact.
    let mut push = workflow_run_event(HEAD);
    push["workflow_run"]["event"] = "push".into();
    assert_refused(&publish(push), &["triggered by `push`, not `pull_request`"]);
    // Extra entries: a link to /etc/passwd, a FIFO, a subdirectory.
    std::os::unix::fs::symlink("/etc/passwd", artifact.join("passwd")).unwrap();
    assert_refused(
        &publish(workflow_run_event(HEAD)),
        &["artifact/passwd", "not a file of benchgate's artifact"],
    );
    std::fs::remove_file(artifact.join("passwd")).unwrap();
    let fifo = artifact.join("pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    assert_refused(&publish(workflow_run_event(HEAD)), &["artifact/pipe"]);
    std::fs::remove_file(&fifo).unwrap();
    std::fs::create_dir(artifact.join("more")).unwrap();
    assert_refused(&publish(workflow_run_event(HEAD)), &["artifact/more"]);
    std::fs::remove_dir(artifact.join("more")).unwrap();
    // The artifact folder itself a link.
    std::fs::rename(&artifact, dir.path().join("real")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("real"), &artifact).unwrap();
    assert_refused(
        &publish(workflow_run_event(HEAD)),
        &["artifact: not a directory"],
    );
    let sent: Vec<_> = github
        .requests()
        .into_iter()
        .filter(|(m, _)| m != "GET")
        .collect();
    assert!(sent.is_empty(), "{sent:?}");
}

#[test]
fn a_tampered_or_oversized_artifact_publishes_nothing() {
    let (github, dir) = fork_artifact();
    let meta = dir.path().join("artifact/benchgate-artifact.json");
    let forged = "4".repeat(40);
    let refuse = |event: Value, needles: &[&str]| {
        std::fs::write(dir.path().join("event.json"), event.to_string()).unwrap();
        let output = step(
            dir.path(),
            &github,
            &["publish", "--from-artifact", "artifact"],
        );
        assert_refused(&output, needles);
    };

    // Another PR's head: the event agrees with the artifact, GitHub does not.
    std::fs::write(
        &meta,
        format!(r#"{{"schema_version": 1, "pr": 7, "head_sha": "{forged}"}}"#),
    )
    .unwrap();
    refuse(
        workflow_run_event(&forged),
        &[
            "claims pull request #7 at 4444",
            &format!("its head on GitHub is {HEAD}"),
            "nothing was published",
        ],
    );
    // The workflow run's own head disagrees.
    refuse(
        workflow_run_event(HEAD),
        &["is not the workflow run's head commit"],
    );
    // Fields that are not ours.
    std::fs::write(
        &meta,
        format!(r#"{{"schema_version": 1, "pr": 7, "head_sha": "{HEAD}", "token": "x"}}"#),
    )
    .unwrap();
    refuse(
        workflow_run_event(HEAD),
        &["benchgate-artifact.json", "unknown field `token`"],
    );
    std::fs::write(
        &meta,
        format!(r#"{{"schema_version": 1, "pr": 7, "head_sha": "{HEAD}"}}"#),
    )
    .unwrap();
    // An oversized summary, and a summary that is a link.
    let summary_file = dir.path().join("artifact/perf-summary.json");
    std::fs::write(&summary_file, vec![b' '; 16 * 1024 * 1024 + 1]).unwrap();
    refuse(
        workflow_run_event(HEAD),
        &[
            "perf-summary.json",
            "16777217 bytes, over the 16777216-byte cap",
        ],
    );
    std::fs::remove_file(&summary_file).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", &summary_file).unwrap();
    refuse(
        workflow_run_event(HEAD),
        &["perf-summary.json", "not a plain file"],
    );

    let sent: Vec<_> = github
        .requests()
        .into_iter()
        .filter(|(m, _)| m != "GET")
        .collect();
    assert!(sent.is_empty(), "{sent:?}");
    assert!(comments(&github).is_empty());
}
