//! `benchgate publish` and `--publish`: the sticky PR comment, the `benchgate` check run (or a
//! commit status when the token cannot create checks), the job summary and the step outputs.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use benchgate_collector::{CommitSha, Location, RepositoryName, Store};
use benchgate_gate::github_text::{
    CHECK_NAME, Conclusion, OverrideNote, check_output, comment_body, conclusion,
};
use benchgate_gate::report::{ReadSummary, read_summary, render_markdown_linked};
use serde_json::{Value, json};

use super::comment::{sticky, upsert_comment};
use super::job_files::{write_outputs, write_step_summary};
use super::target::{GitHubArgs, Target, now_rfc3339};
use super::{ApiError, GitHub};

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
/// workflow's token. With `requested_by`, the artifact was made by this repository's workflow at
/// a writer's request (`benchgate request-run`) for the head `--sha`: the writer's access is
/// confirmed again, the artifact must be for that very commit, and the verdict is not labelled
/// unverified.
pub async fn publish_from_artifact(
    dir: &Path,
    repository: Option<&str>,
    args: &GitHubArgs,
    db: &Location,
    warn_only: bool,
    requested_by: Option<&str>,
) -> anyhow::Result<()> {
    let mut args = args.clone();
    let requested = match requested_by {
        Some(login) => {
            let sha = args
                .sha
                .clone()
                .context("--requested-by needs --sha, the head commit the run was requested for")?;
            Some((login, CommitSha::parse(&sha).context("--sha")?))
        }
        None => None,
    };
    // The artifact names the pull request; the workflow_run event's own is empty for forks.
    args.pr = None;
    args.sha = None;
    let target = Target::resolve(&args, repository, None)?;
    let expected = requested.as_ref().map(|(_, sha)| sha.as_str());
    let checked = super::artifact::check(dir, &target, expected).await?;
    if let Some((login, _)) = &requested {
        let github = target.github_client()?;
        if let Err(why) = super::overrides::check_writer(github, login, "a requested run").await {
            anyhow::bail!("--requested-by: {why} Nothing was published.");
        }
    }
    args.pr = Some(checked.pr);
    args.sha = Some(checked.head_sha);
    let provenance = match &requested {
        Some((login, _)) => Provenance::RequestedBy(login),
        None => Provenance::PullRequestWorkflow,
    };
    publish(
        &checked.summary,
        Publication {
            repository,
            args: &args,
            db,
            warn_only,
            started: None,
            provenance,
        },
    )
    .await
}

/// Who computed the verdict being published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance<'a> {
    /// This workflow, with the base repository's code and token.
    ThisWorkflow,
    /// A pull request's own workflow (a fork's artifact): its code could have written any
    /// verdict, so the verdict is labelled unverified and never turns the check green.
    PullRequestWorkflow,
    /// This repository's workflow, benchmarking a head commit a writer (this login) asked for
    /// with `/benchgate run` after reading it, in a job with no secrets.
    RequestedBy(&'a str),
}

/// The note above an unverified verdict.
pub const UNVERIFIED_NOTE: &str = "> ⚠️ **Unverified.** This verdict was computed by the pull request's own workflow, which runs the pull request's code, so it cannot pass the `benchgate` check: at best the check is neutral. A maintainer's `/benchgate override <reason>` passes it after reading the numbers.\n\n";

/// The note above a verdict a writer asked for with `/benchgate run`.
pub fn requested_note(login: &str) -> String {
    format!(
        "> 🚀 **Requested by @{login}** (`/benchgate run`): benchmarked by this repository's workflow, in a job with no secrets and a read-only token, at the head commit @{login} asked for.\n\n"
    )
}

/// The check title of an unverified verdict.
const UNVERIFIED_TITLE: &str = "Unverified (computed by the pull request's workflow): ";

/// Concludes a started check as `failure` with the error: the gate could not decide.
pub async fn fail_check(target: &Target, started: StartedCheck, error: &str) {
    let (Some(github), Some(sha)) = (&target.github, &target.sha) else {
        return;
    };
    let title = benchgate_gate::github_text::cut_chars(
        &format!("benchgate could not decide: {error}"),
        benchgate_gate::github_text::TITLE_LIMIT,
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
                        "description": benchgate_gate::github_text::cut_chars(&title, benchgate_gate::github_text::STATUS_DESCRIPTION_LIMIT),
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

/// `benchgate publish --summary FILE`: everything a pull request shows, from a perf-summary.json
/// computed by `to.provenance`.
pub async fn publish(summary_path: &Path, to: Publication<'_>) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(summary_path)
        .with_context(|| format!("--summary {}: cannot read", summary_path.display()))?;
    let summary = read_summary(summary_path, &text)?;
    publish_decided(&summary, summary_path, to).await
}

/// Where a verdict is published, and on whose word.
#[derive(Clone, Copy)]
pub struct Publication<'a> {
    /// OWNER/NAME, when not from the environment.
    pub repository: Option<&'a str>,
    pub args: &'a GitHubArgs,
    /// The store, for a maintainer's override recorded there.
    pub db: &'a Location,
    pub warn_only: bool,
    /// The check run started when the job began, if one was.
    pub started: Option<StartedCheck>,
    pub provenance: Provenance<'a>,
}

/// Everything a pull request shows, from a decision in memory (also written to
/// `summary_path`, which the step outputs point at).
pub async fn publish_decided(
    summary: &ReadSummary,
    summary_path: &Path,
    to: Publication<'_>,
) -> anyhow::Result<()> {
    let Publication {
        repository,
        args,
        db,
        warn_only,
        started,
        provenance,
    } = to;
    let unverified = provenance == Provenance::PullRequestWorkflow;
    let requested_note = match provenance {
        Provenance::RequestedBy(login) => Some(requested_note(login)),
        _ => None,
    };
    let target = Target::resolve(args, repository, summary.context.head_commit.as_deref())?;
    let author = target.args.comment_author.as_deref();
    // The pull request's comments, read once: for an override GitHub holds, then the upsert.
    let mut comments = match (&target.github, target.pr) {
        (Some(github), Some(pr)) => Some(github.comments(pr).await?),
        _ => None,
    };
    let overriding = match stored_override(&target, db).await? {
        Some(note) => Some(note),
        None => match (&comments, &target.sha) {
            (Some(comments), Some(sha)) => commented_override(comments, author, sha),
            _ => None,
        },
    };
    let mut markdown = render_markdown_linked(
        &summary.decision,
        &summary.context,
        &summary.policy,
        &target.links(),
    );
    if unverified {
        markdown = format!("{UNVERIFIED_NOTE}{markdown}");
    }
    if let Some(note) = &requested_note {
        markdown = format!("{note}{markdown}");
    }
    write_step_summary(&target, &markdown, overriding.as_ref())?;
    write_outputs(&target, summary, summary_path, overriding.is_some())?;

    let github = target.github_client()?;
    if let Some(pr) = target.pr {
        let body = comment_body(&markdown, overriding.as_ref());
        let (id, change) = upsert_comment(github, pr, &body, author, comments.take())
            .await
            .map_err(|e| permission_error(e, "pull-requests: write"))?;
        eprintln!("benchgate: PR #{pr}: comment {id} {}", change.as_str());
    }
    if let Some(sha) = &target.sha {
        let mut conclusion = conclusion(&summary.decision, warn_only, overriding.is_some());
        let mut output = check_output(&summary.decision, &markdown, overriding.as_ref());
        if unverified && overriding.is_none() {
            // A fork's code wrote this verdict: it may hold the check back, never pass it.
            if conclusion == Conclusion::Success {
                conclusion = Conclusion::Neutral;
            }
            output.title = benchgate_gate::github_text::cut_chars(
                &format!("{UNVERIFIED_TITLE}{}", output.title),
                benchgate_gate::github_text::TITLE_LIMIT,
            );
        }
        let where_ = conclude(github, sha, started, conclusion, &output).await?;
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
    output: &benchgate_gate::github_text::CheckOutput,
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
                "description": benchgate_gate::github_text::cut_chars(
                    &output.title,
                    benchgate_gate::github_text::STATUS_DESCRIPTION_LIMIT,
                ),
            });
            github
                .create_status(sha, &status)
                .await
                .map_err(|e| permission_error(e, "checks: write` (or `statuses: write"))?;
            Ok("commit status")
        }
    }
}

/// A stored override for the target's pull request and head commit, if the store has one.
async fn stored_override(target: &Target, db: &Location) -> anyhow::Result<Option<OverrideNote>> {
    let (Some(github), Some(pr), Some(sha)) = (&target.github, target.pr, &target.sha) else {
        return Ok(None);
    };
    if !db.may_exist() {
        return Ok(None);
    }
    let store = Store::connect(db).await?;
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

/// The override GitHub already holds: the override block of benchgate's own sticky comment
/// among `comments`, when it names the head `sha`. A job on a fresh runner (no local store)
/// keeps an override so.
fn commented_override(
    comments: &[super::api::Comment],
    author: Option<&str>,
    sha: &str,
) -> Option<OverrideNote> {
    sticky(comments, author)
        .and_then(|c| c.body.as_deref())
        .and_then(benchgate_gate::github_text::override_in_comment)
        .filter(|(_, prefix, _)| sha.starts_with(prefix.as_str()))
        .map(|(by, _, reason)| OverrideNote {
            by,
            reason,
            head_sha: sha.to_owned(),
        })
}
