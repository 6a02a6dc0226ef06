//! `benchgate publish` and `--publish`: the sticky PR comment, the `benchgate` check run (or a
//! commit status when the token cannot create checks), the job summary and the step outputs.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, bail};
use benchgate_collector::{CommitSha, RepositoryName, Store};
use benchgate_gate::decision::Verdict;
use benchgate_gate::publish::{
    CHECK_NAME, COMMENT_MARKER, Conclusion, Measure, OverrideNote, STEP_SUMMARY_LIMIT,
    check_output, comment_body, conclusion, fit, status_description, with_override,
};
use benchgate_gate::report::{ReadSummary, read_summary, render_markdown};
use serde_json::{Value, json};

use crate::github::{ApiError, GitHub};

/// Where and how to reach GitHub; each flag overrides the Actions variable named beside it.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct GitHubArgs {
    /// The API URL [env GITHUB_API_URL, else https://api.github.com]; GitHub Enterprise's
    /// carries a path, e.g. https://ghe.example.com/api/v3.
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// The token [env GITHUB_TOKEN]. Prefer the variable: a flag shows in process lists.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// The event payload [env GITHUB_EVENT_PATH]: the pull request and its head commit.
    #[arg(long, value_name = "FILE")]
    pub event_path: Option<PathBuf>,
    /// The pull request [default: from the event].
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// The commit the check is on [default: the event's pull-request head, else the summary's
    /// head commit, else GITHUB_SHA].
    #[arg(long, value_name = "SHA")]
    pub sha: Option<String>,
    /// The job summary file [env GITHUB_STEP_SUMMARY].
    #[arg(long, value_name = "FILE")]
    pub step_summary: Option<PathBuf>,
    /// The step outputs file [env GITHUB_OUTPUT].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The login whose comment is the sticky one [default: any bot's comment with the marker].
    #[arg(long, value_name = "LOGIN")]
    pub comment_author: Option<String>,
    /// The longest wait, in seconds, for GitHub's rate limits before giving up.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub max_wait: u64,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Where the verdict goes: the client, the pull request and the commit.
pub struct Target {
    github: Option<GitHub>,
    pr: Option<u64>,
    sha: Option<String>,
    args: GitHubArgs,
    workflow_run_head_sha: Option<String>,
}

impl Target {
    /// Resolves flags, then the Actions environment. `repository` is the `--repo` flag if the
    /// command has one; `head_commit` the summary's, when known.
    pub fn resolve(
        args: &GitHubArgs,
        repository: Option<&str>,
        head_commit: Option<&str>,
    ) -> anyhow::Result<Self> {
        let event_path = args
            .event_path
            .clone()
            .or_else(|| env("GITHUB_EVENT_PATH").map(PathBuf::from));
        let event = match &event_path {
            Some(path) => read_json(path)?,
            None => Value::Null,
        };
        let pr = args
            .pr
            .or_else(|| event["pull_request"]["number"].as_u64())
            .or_else(|| {
                // issue_comment on a pull request
                event["issue"]["pull_request"]
                    .is_object()
                    .then(|| event["issue"]["number"].as_u64())
                    .flatten()
            });
        let sha = args
            .sha
            .clone()
            .or_else(|| {
                event["pull_request"]["head"]["sha"]
                    .as_str()
                    .map(str::to_owned)
            })
            .or_else(|| head_commit.map(str::to_owned))
            .or_else(|| env("GITHUB_SHA"));
        if let Some(sha) = &sha {
            CommitSha::parse(sha).context("--sha")?;
        }
        let repository = repository
            .map(str::to_owned)
            .or_else(|| event["repository"]["full_name"].as_str().map(str::to_owned))
            .or_else(|| env("GITHUB_REPOSITORY"));
        let token = args.token.clone().or_else(|| env("GITHUB_TOKEN"));
        let github = match (token, repository) {
            (Some(token), Some(repository)) => {
                RepositoryName::parse(&repository).context("--repo")?;
                let api_url = args
                    .api_url
                    .clone()
                    .or_else(|| env("GITHUB_API_URL"))
                    .unwrap_or_else(|| "https://api.github.com".to_owned());
                Some(GitHub::new(
                    &api_url,
                    &token,
                    &repository,
                    Duration::from_secs(args.max_wait),
                )?)
            }
            (None, _) => None,
            (Some(_), None) => {
                bail!(
                    "no repository to publish to: pass --repo OWNER/NAME or set GITHUB_REPOSITORY"
                )
            }
        };
        Ok(Self {
            github,
            pr,
            sha,
            args: args.clone(),
            workflow_run_head_sha: event["workflow_run"]["head_sha"]
                .as_str()
                .map(str::to_owned),
        })
    }

    /// The pull request.
    pub fn pr(&self) -> Option<u64> {
        self.pr
    }

    /// The commit the check goes on.
    pub fn sha(&self) -> Option<&str> {
        self.sha.as_deref()
    }

    /// In a `workflow_run` workflow, the head commit of the run that made the artifact.
    pub fn workflow_run_head_sha(&self) -> Option<&str> {
        self.workflow_run_head_sha.as_deref()
    }

    /// The client, or an error saying how to give one.
    pub fn github_client(&self) -> anyhow::Result<&GitHub> {
        self.github.as_ref().context(
            "no GitHub token: set GITHUB_TOKEN (in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`) or pass --token",
        )
    }
}

/// A check run created when the gate starts, to be completed with the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartedCheck {
    /// The check run's id.
    CheckRun(u64),
    /// The token cannot create check runs; a pending commit status stands in.
    Status,
    /// Nothing to mark (no token or no commit).
    Nothing,
}

/// Marks the gate as running: a `benchgate` check run `in_progress` on the head commit (or a
/// pending commit status if the token cannot create check runs).
pub async fn start_check(target: &Target) -> anyhow::Result<StartedCheck> {
    let (Some(github), Some(sha)) = (&target.github, &target.sha) else {
        return Ok(StartedCheck::Nothing);
    };
    let body = json!({
        "name": CHECK_NAME,
        "head_sha": sha,
        "status": "in_progress",
        "started_at": now_rfc3339(),
        "output": {
            "title": "Measuring",
            "summary": "benchgate is running the benchmarks and will report here.",
        },
    });
    match create_check_run_once(github, sha, &body).await {
        Ok(id) => Ok(StartedCheck::CheckRun(id)),
        Err(e) if e.is_forbidden() => {
            github
                .create_status(
                    sha,
                    &json!({"state": "pending", "context": CHECK_NAME, "description": "Measuring"}),
                )
                .await
                .map_err(|e| permission_error(e, "statuses: write` (or `checks: write"))?;
            Ok(StartedCheck::Status)
        }
        Err(e) => Err(e.into()),
    }
}

/// `benchgate publish --from-artifact DIR`: a fork's verdict, checked, published with this
/// workflow's token.
pub async fn publish_from_artifact(
    dir: &Path,
    repository: Option<&str>,
    args: &GitHubArgs,
    db: &Path,
    warn_only: bool,
) -> anyhow::Result<()> {
    let mut args = args.clone();
    // The artifact names the pull request; the workflow_run event's own is empty for forks.
    args.pr = None;
    args.sha = None;
    let target = Target::resolve(&args, repository, None)?;
    let checked = crate::artifact::check(dir, &target).await?;
    args.pr = Some(checked.pr);
    args.sha = Some(checked.head_sha);
    publish(&checked.summary, repository, &args, db, warn_only, None).await
}

/// Concludes a started check as `failure` with the error: the gate could not decide.
pub async fn fail_check(target: &Target, started: StartedCheck, error: &str) {
    let (Some(github), Some(sha)) = (&target.github, &target.sha) else {
        return;
    };
    let title = benchgate_gate::publish::cut_chars(
        &format!("benchgate could not decide: {error}"),
        benchgate_gate::publish::TITLE_LIMIT,
    );
    let result = match started {
        StartedCheck::CheckRun(id) => github
            .update_check_run(
                id,
                &json!({
                    "status": "completed",
                    "conclusion": "failure",
                    "completed_at": now_rfc3339(),
                    "output": { "title": title, "summary": format!("```\n{error}\n```") },
                }),
            )
            .await
            .map(drop),
        StartedCheck::Status => {
            github
                .create_status(
                    sha,
                    &json!({
                        "state": "error",
                        "context": CHECK_NAME,
                        "description": benchgate_gate::publish::cut_chars(&title, benchgate_gate::publish::STATUS_DESCRIPTION_LIMIT),
                    }),
                )
                .await
        }
        StartedCheck::Nothing => Ok(()),
    };
    if let Err(e) = result {
        eprintln!("benchgate: could not mark the check as failed: {e}");
    }
}

/// Creates a check run; if the request's fate is unknown (a server error or a lost response),
/// looks for the run on the commit before trying again, so there is never a second one.
async fn create_check_run_once(github: &GitHub, sha: &str, body: &Value) -> Result<u64, ApiError> {
    let mut attempt = 0;
    loop {
        match github.create_check_run(body).await {
            Ok(run) => return Ok(run.id),
            Err(e) if e.is_transient() && attempt < 2 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
                if let Some(run) = github.find_check_run(sha, CHECK_NAME).await? {
                    return Ok(run.id);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

fn permission_error(error: ApiError, permission: &str) -> anyhow::Error {
    if error.is_forbidden() {
        anyhow::anyhow!(
            "{error}; the token lacks a permission: grant the workflow job `{permission}` (`permissions:` in the workflow)"
        )
    } else {
        error.into()
    }
}

/// `benchgate publish --summary FILE`: everything a pull request shows, from a perf-summary.json.
pub async fn publish(
    summary_path: &Path,
    repository: Option<&str>,
    args: &GitHubArgs,
    db: &Path,
    warn_only: bool,
    started: Option<StartedCheck>,
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(summary_path)
        .with_context(|| format!("--summary {}: cannot read", summary_path.display()))?;
    let summary = read_summary(summary_path, &text)?;
    let target = Target::resolve(args, repository, summary.context.head_commit.as_deref())?;
    let overriding = stored_override(&target, db).await?;
    let markdown = render_markdown(&summary.decision, &summary.context, &summary.policy);
    write_step_summary(&target, &markdown, overriding.as_ref())?;
    write_outputs(&target, &summary, summary_path, overriding.is_some())?;

    let github = target.github_client()?;
    if let Some(pr) = target.pr {
        let body = comment_body(&markdown, overriding.as_ref());
        let id = upsert_comment(github, pr, &body, target.args.comment_author.as_deref())
            .await
            .map_err(|e| permission_error(e, "pull-requests: write"))?;
        eprintln!("benchgate: PR #{pr}: comment {id} is up to date");
    }
    if let Some(sha) = &target.sha {
        let conclusion = conclusion(&summary.decision, warn_only, overriding.is_some());
        let output = check_output(&summary.decision, &markdown, overriding.as_ref());
        let where_ = conclude(
            github,
            sha,
            started,
            conclusion,
            &output,
            &summary,
            overriding.as_ref(),
        )
        .await?;
        eprintln!(
            "benchgate: {sha}: {where_} `{CHECK_NAME}` is {}",
            conclusion.as_str()
        );
    }
    Ok(())
}

/// Completes the check run (or, without check permission, sets the commit status).
async fn conclude(
    github: &GitHub,
    sha: &str,
    started: Option<StartedCheck>,
    conclusion: Conclusion,
    output: &benchgate_gate::publish::CheckOutput,
    summary: &ReadSummary,
    overriding: Option<&OverrideNote>,
) -> anyhow::Result<&'static str> {
    let body = json!({
        "name": CHECK_NAME,
        "status": "completed",
        "conclusion": conclusion.as_str(),
        "completed_at": now_rfc3339(),
        "output": { "title": output.title, "summary": output.summary, "text": output.text },
    });
    let existing = match started {
        Some(StartedCheck::CheckRun(id)) => Some(id),
        Some(StartedCheck::Status) => None,
        Some(StartedCheck::Nothing) | None => match github.find_check_run(sha, CHECK_NAME).await {
            Ok(run) => run.map(|run| run.id),
            Err(e) if e.is_forbidden() => None,
            Err(e) => return Err(e.into()),
        },
    };
    let result = match (started, existing) {
        (Some(StartedCheck::Status), _) => Err(None),
        (_, Some(id)) => github
            .update_check_run(id, &body)
            .await
            .map(drop)
            .map_err(Some),
        (_, None) => {
            let mut create = body.clone();
            create["head_sha"] = json!(sha);
            create_check_run_once(github, sha, &create)
                .await
                .map(drop)
                .map_err(Some)
        }
    };
    match result {
        Ok(()) => Ok("check run"),
        Err(Some(e)) if !e.is_forbidden() => Err(e.into()),
        Err(_) => {
            // No `checks: write` (a PAT, or a restricted token): a commit status instead.
            let status = json!({
                "state": conclusion.status_state(),
                "context": CHECK_NAME,
                "description": status_description(&summary.decision, overriding),
            });
            github
                .create_status(sha, &status)
                .await
                .map_err(|e| permission_error(e, "checks: write` (or `statuses: write"))?;
            Ok("commit status")
        }
    }
}

/// Updates benchgate's comment on `pr` (found by its hidden marker and its author), or creates
/// it if there is none. A create whose response was lost is looked for before it is repeated.
pub async fn upsert_comment(
    github: &GitHub,
    pr: u64,
    body: &str,
    author: Option<&str>,
) -> Result<u64, ApiError> {
    let mut attempt = 0;
    loop {
        let comments = github.comments(pr).await?;
        let ours = comments.iter().find(|c| {
            c.body
                .as_deref()
                .is_some_and(|b| b.starts_with(COMMENT_MARKER))
                && match author {
                    Some(login) => c.user.login == login,
                    None => c.user.kind.as_deref() == Some("Bot"),
                }
        });
        if let Some(comment) = ours {
            if comment.body.as_deref() != Some(body) {
                github.update_comment(comment.id, body).await?;
            }
            return Ok(comment.id);
        }
        match github.create_comment(pr, body).await {
            Ok(comment) => return Ok(comment.id),
            Err(e) if e.is_transient() && attempt < 2 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// A stored override for the target's pull request and head commit, if the store has one.
async fn stored_override(target: &Target, db: &Path) -> anyhow::Result<Option<OverrideNote>> {
    let (Some(github), Some(pr), Some(sha)) = (&target.github, target.pr, &target.sha) else {
        return Ok(None);
    };
    if !db.is_file() {
        return Ok(None);
    }
    let store = Store::open(db).await?;
    let found = store
        .override_for(
            &RepositoryName::parse(github.repository())?,
            pr,
            &CommitSha::parse(sha)?,
        )
        .await;
    store.close().await;
    Ok(found?.map(|o| OverrideNote {
        by: o.login,
        reason: o.reason,
        head_sha: o.head_sha.to_string(),
    }))
}

fn write_step_summary(
    target: &Target,
    markdown: &str,
    overriding: Option<&OverrideNote>,
) -> anyhow::Result<()> {
    let Some(path) = target
        .args
        .step_summary
        .clone()
        .or_else(|| env("GITHUB_STEP_SUMMARY").map(PathBuf::from))
    else {
        return Ok(());
    };
    let text = fit(
        &with_override(markdown, overriding),
        STEP_SUMMARY_LIMIT,
        Measure::Bytes,
    );
    append(&path, &text).with_context(|| format!("job summary {}", path.display()))
}

fn write_outputs(
    target: &Target,
    summary: &ReadSummary,
    summary_path: &Path,
    overridden: bool,
) -> anyhow::Result<()> {
    let Some(path) = target
        .args
        .output
        .clone()
        .or_else(|| env("GITHUB_OUTPUT").map(PathBuf::from))
    else {
        return Ok(());
    };
    let count = |verdict: Verdict| {
        summary
            .decision
            .benchmarks
            .iter()
            .filter(|b| b.verdict == verdict)
            .count()
    };
    let report_path = std::path::absolute(summary_path).unwrap_or_else(|_| summary_path.to_owned());
    let verdict = if overridden {
        "overridden"
    } else {
        summary.decision.verdict.as_str()
    };
    let lines = format!(
        "verdict={verdict}\nregressions={}\nimprovements={}\nreport-path={}\n",
        count(Verdict::Regressed),
        count(Verdict::Improved),
        report_path.display()
    );
    append(&path, &lines).with_context(|| format!("step outputs {}", path.display()))
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        file.write_all(b"\n")?;
    }
    Ok(())
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("event {}: cannot read", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("event {}: not JSON", path.display()))
}

/// Now, as GitHub's timestamps are written.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}
