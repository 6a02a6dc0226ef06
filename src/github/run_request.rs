//! `benchgate request-run`: a maintainer asks for a trusted benchmark run of a pull request,
//! with a `/benchgate run` comment or by adding a label. The request is permission-checked like
//! the override (write, maintain or admin; fail closed, with a reply), and an accepted one
//! names the exact commits to benchmark, as step outputs for the workflow's next jobs: one that
//! benchmarks the head with no secrets and a read-only token, and one that publishes.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;
use serde_json::Value;

use super::overrides::check_writer;
use super::target::{GitHubArgs, Target, env};

/// The command, as a comment starts with it.
pub const COMMAND: &str = "/benchgate run";
/// The label that asks for a run when added to a pull request, unless `--label` names another.
pub const DEFAULT_LABEL: &str = "benchgate-run";

/// An accepted request: what to benchmark, and who vouched for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The pull request.
    pub pr: u64,
    /// Its head commit when the request was checked: the commit benchmarked and gated.
    pub head_sha: String,
    /// Its base branch's commit then: the A/B's base.
    pub base_sha: String,
    /// The base branch.
    pub base_ref: String,
    /// The writer who asked.
    pub requested_by: String,
}

/// What became of the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not a run request (another comment or label, an edit, a bot, not a pull request).
    Ignored(&'static str),
    /// Refused, with the reply posted on the pull request.
    Refused(String),
    /// Accepted: benchmark `head_sha`.
    Accepted(Accepted),
}

#[derive(Deserialize)]
struct User {
    login: String,
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct CommentEvent {
    action: String,
    comment: Comment,
    issue: Issue,
}

#[derive(Deserialize)]
struct Comment {
    id: u64,
    body: Option<String>,
    user: User,
}

#[derive(Deserialize)]
struct Issue {
    number: u64,
    pull_request: Option<Value>,
}

#[derive(Deserialize)]
struct LabelEvent {
    action: String,
    label: Option<Label>,
    pull_request: PullRequest,
    sender: User,
}

#[derive(Deserialize)]
struct Label {
    name: String,
}

#[derive(Deserialize)]
struct PullRequest {
    number: u64,
}

/// Whether a comment asks for a run: `/benchgate run`, alone or followed by whitespace.
pub fn is_command(body: &str) -> bool {
    body.trim_start()
        .strip_prefix(COMMAND)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

/// Who asked, on which pull request, and the comment to react to (none for a label).
struct Request {
    pr: u64,
    who: String,
    comment_id: Option<u64>,
}

/// Handles the event at `event_path`: an `issue_comment`, or a `pull_request_target` (or
/// `pull_request`) `labeled` event for `label`.
pub async fn handle(
    event_path: &Path,
    repository: Option<&str>,
    args: &GitHubArgs,
    label: &str,
) -> anyhow::Result<Outcome> {
    let source = format!("event {}", event_path.display());
    let text =
        std::fs::read_to_string(event_path).with_context(|| format!("{source}: cannot read"))?;
    let value: Value =
        serde_json::from_str(&text).with_context(|| format!("{source}: not JSON"))?;
    let parsed = if value.get("comment").is_some() {
        parse_comment(&text, &source)?
    } else if value.get("pull_request").is_some() {
        parse_label(&text, &source, label)?
    } else {
        anyhow::bail!(
            "{source}: neither an issue_comment nor a pull_request event (no `comment`, no `pull_request`)"
        );
    };
    let request = match parsed {
        Ok(request) => request,
        Err(why) => return Ok(Outcome::Ignored(why)),
    };
    let repository = repository
        .map(str::to_owned)
        .or_else(|| value["repository"]["full_name"].as_str().map(str::to_owned));
    let mut args = args.clone();
    args.pr = Some(request.pr);
    let target = Target::resolve(&args, repository.as_deref(), None)?;
    let github = target.github_client()?;
    let Request {
        pr,
        who,
        comment_id,
    } = request;
    let how = match comment_id {
        Some(_) => format!("`{COMMAND}`"),
        None => format!("the `{label}` label"),
    };
    let (who, how) = (who.as_str(), how.as_str());
    let refuse = |why: String| async move {
        github
            .create_comment(pr, &format!("@{who} {how} refused: {why}"))
            .await
            .context("posting the refusal")?;
        anyhow::Ok(Outcome::Refused(why))
    };
    if let Err(why) = check_writer(github, who, "asking for a benchmark run").await {
        return refuse(why).await;
    }
    let pull = github
        .pull(pr)
        .await
        .with_context(|| format!("pull request #{pr}"))?;
    if pull.state != "open" {
        return refuse(format!("pull request #{pr} is {}.", pull.state)).await;
    }
    if let Some(id) = comment_id {
        // An acknowledgement only: the run goes ahead without it.
        if let Err(e) = github.create_reaction(id, "rocket").await {
            eprintln!("benchgate: could not react to comment {id}: {e}");
        }
    }
    Ok(Outcome::Accepted(Accepted {
        pr,
        head_sha: pull.head_sha,
        base_sha: pull.base_sha,
        base_ref: pull.base_ref,
        requested_by: who.to_owned(),
    }))
}

fn parse_comment(text: &str, source: &str) -> anyhow::Result<Result<Request, &'static str>> {
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    let event: CommentEvent = serde_path_to_error::deserialize(deserializer).map_err(|e| {
        anyhow::anyhow!(
            "{source}: `{}`: {} (expected an issue_comment payload)",
            e.path(),
            e.inner()
        )
    })?;
    Ok(if event.action != "created" {
        Err("only new comments count; edits and deletions do not")
    } else if event.issue.pull_request.is_none() {
        Err("the comment is on an issue, not a pull request")
    } else if event.comment.user.kind.as_deref() == Some("Bot") {
        Err("comments by bots do not count")
    } else if !event.comment.body.as_deref().is_some_and(is_command) {
        Err("the comment is not a /benchgate run")
    } else {
        Ok(Request {
            pr: event.issue.number,
            who: event.comment.user.login,
            comment_id: Some(event.comment.id),
        })
    })
}

fn parse_label(
    text: &str,
    source: &str,
    label: &str,
) -> anyhow::Result<Result<Request, &'static str>> {
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    let event: LabelEvent = serde_path_to_error::deserialize(deserializer).map_err(|e| {
        anyhow::anyhow!(
            "{source}: `{}`: {} (expected a pull_request_target payload)",
            e.path(),
            e.inner()
        )
    })?;
    Ok(if event.action != "labeled" {
        Err("only adding the label asks for a run")
    } else if event.label.as_ref().is_none_or(|l| l.name != label) {
        Err("another label was added")
    } else if event.sender.kind.as_deref() == Some("Bot") {
        Err("labels added by bots do not count")
    } else {
        Ok(Request {
            pr: event.pull_request.number,
            who: event.sender.login,
            comment_id: None,
        })
    })
}

/// Writes the step outputs: `run` (`true` or `false`), and for an accepted request `pr`,
/// `head-sha`, `base-sha`, `base-ref` and `requested-by`.
pub fn write_outputs(outcome: &Outcome, output: Option<&Path>) -> anyhow::Result<()> {
    let Some(path) = output
        .map(Path::to_owned)
        .or_else(|| env("GITHUB_OUTPUT").map(PathBuf::from))
    else {
        return Ok(());
    };
    let lines = match outcome {
        Outcome::Accepted(a) => format!(
            "run=true\npr={}\nhead-sha={}\nbase-sha={}\nbase-ref={}\nrequested-by={}\n",
            a.pr, a.head_sha, a.base_sha, a.base_ref, a.requested_by
        ),
        Outcome::Ignored(_) | Outcome::Refused(_) => "run=false\n".to_owned(),
    };
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(lines.as_bytes()))
        .with_context(|| format!("step outputs {}", path.display()))
}
