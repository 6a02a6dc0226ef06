//! `benchgate override`: a maintainer's `/benchgate override <reason>` comment on a pull
//! request turns its `benchgate` check green for the current head commit.

use std::path::Path;
use std::time::SystemTime;

use anyhow::Context as _;
use benchgate_collector::{CommitSha, GateOverride, Location, RepositoryName, Store};
use benchgate_gate::github_text::{
    CHECK_NAME, CHECK_TEXT_LIMIT, CheckOutput, Conclusion, Measure, OverrideNote,
    STATUS_DESCRIPTION_LIMIT, comment_body, comment_with_override, cut_chars, fit, override_title,
    with_override,
};
use serde::Deserialize;
use serde_json::json;

use super::GitHub;
use super::comment::{sticky, upsert_comment};
use super::target::{GitHubArgs, Target, now_rfc3339};

/// The command, as a comment starts with it.
pub const COMMAND: &str = "/benchgate override";
/// The roles that may override.
const ALLOWED_ROLES: [&str; 3] = ["admin", "maintain", "write"];

#[derive(Deserialize)]
struct Event {
    action: String,
    comment: EventComment,
    issue: EventIssue,
    repository: Option<EventRepository>,
}

#[derive(Deserialize)]
struct EventComment {
    id: u64,
    body: Option<String>,
    user: EventUser,
}

#[derive(Deserialize)]
struct EventUser {
    login: String,
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct EventIssue {
    number: u64,
    pull_request: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct EventRepository {
    full_name: String,
}

/// What became of an `issue_comment` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not an override request (edited, not on a pull request, a bot, another text).
    Ignored(&'static str),
    /// Refused, with the reply posted on the pull request.
    Refused(String),
    /// Stored and shown: the check is green for this head commit.
    Overridden {
        /// The head commit.
        head_sha: String,
    },
}

/// The reason after `/benchgate override`, if the comment is one (`Some("")` without a reason).
pub fn parse_command(body: &str) -> Option<&str> {
    let rest = body.trim_start().strip_prefix(COMMAND)?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None; // `/benchgate overrides`
    }
    Some(rest.trim())
}

/// Handles one `issue_comment` event payload.
pub async fn handle(
    event_path: &Path,
    repository: Option<&str>,
    args: &GitHubArgs,
    db: &Location,
) -> anyhow::Result<Outcome> {
    let text = std::fs::read_to_string(event_path)
        .with_context(|| format!("event {}: cannot read", event_path.display()))?;
    let store = Store::connect(db).await?;
    let outcome = handle_event(
        &text,
        &format!("event {}", event_path.display()),
        repository,
        args,
        &store,
    )
    .await;
    store.close().await;
    outcome
}

/// Handles an `issue_comment` payload (`source` names it in errors), recording into `store`.
pub async fn handle_event(
    text: &str,
    source: &str,
    repository: Option<&str>,
    args: &GitHubArgs,
    store: &Store,
) -> anyhow::Result<Outcome> {
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    let event: Event = serde_path_to_error::deserialize(deserializer).map_err(|e| {
        anyhow::anyhow!(
            "{source}: `{}`: {} (expected an issue_comment payload)",
            e.path(),
            e.inner()
        )
    })?;
    if event.action != "created" {
        return Ok(Outcome::Ignored(
            "only new comments count; edits and deletions do not",
        ));
    }
    if event.issue.pull_request.is_none() {
        return Ok(Outcome::Ignored(
            "the comment is on an issue, not a pull request",
        ));
    }
    if event.comment.user.kind.as_deref() == Some("Bot") {
        return Ok(Outcome::Ignored("comments by bots do not count"));
    }
    let Some(reason) = event.comment.body.as_deref().and_then(parse_command) else {
        return Ok(Outcome::Ignored("the comment is not a /benchgate override"));
    };
    let repository = repository
        .map(str::to_owned)
        .or_else(|| event.repository.as_ref().map(|r| r.full_name.clone()));
    let mut args = args.clone();
    args.pr = Some(event.issue.number);
    let target = Target::resolve(&args, repository.as_deref(), None)?;
    let github = target.github_client()?;
    let pr = event.issue.number;
    let who = &event.comment.user.login;
    let refuse = |why: String| async move {
        let reply = format!("@{who} `{COMMAND}` refused: {why}");
        github
            .create_comment(pr, &reply)
            .await
            .context("posting the refusal")?;
        anyhow::Ok(Outcome::Refused(why))
    };
    if reason.is_empty() {
        return refuse(format!(
            "a reason is required, e.g. `{COMMAND} the slowdown buys correctness (#123)`."
        ))
        .await;
    }
    if let Err(why) = check_writer(github, who, "overriding").await {
        return refuse(why).await;
    }
    let head_sha = github.pull_head_sha(pr).await?;
    let note = OverrideNote {
        by: who.clone(),
        reason: reason.to_owned(),
        head_sha: head_sha.clone(),
    };

    store
        .record_override(&GateOverride {
            repository: RepositoryName::parse(github.repository())?,
            pr_number: pr,
            head_sha: CommitSha::parse(&head_sha)?,
            login: who.clone(),
            reason: reason.to_owned(),
            comment_id: event.comment.id,
            created_at: SystemTime::now(),
        })
        .await?;

    reconclude(github, &head_sha, &note).await?;
    // The sticky comment shows the override; without one yet, a comment that says so.
    let comments = github.comments(pr).await?;
    match sticky(&comments, None) {
        Some(comment) => {
            let body = comment_with_override(comment.body.as_deref().unwrap_or(""), &note);
            github.update_comment(comment.id, &body).await?;
        }
        None => {
            upsert_comment(github, pr, &comment_body("", Some(&note)), None, None).await?;
        }
    }
    Ok(Outcome::Overridden { head_sha })
}

/// Whether `who` may write to the repository (admin, maintain or write), for `what` (e.g.
/// "overriding"): `Err` with the reason to reply when not. Fails closed: an error asking GitHub
/// is a refusal.
pub async fn check_writer(github: &GitHub, who: &str, what: &str) -> Result<(), String> {
    match github.permission(who).await {
        Ok((permission, role_name)) => {
            if ALLOWED_ROLES.contains(&role_name.as_str())
                || ALLOWED_ROLES.contains(&permission.as_str())
            {
                Ok(())
            } else {
                let shown = if role_name.is_empty() {
                    permission
                } else {
                    role_name
                };
                Err(format!(
                    "{what} needs write, maintain or admin access to {}; @{who} has `{shown}`.",
                    github.repository()
                ))
            }
        }
        Err(e) => Err(format!("could not confirm @{who}'s access ({e}).")),
    }
}

/// The head commit's `benchgate` check becomes `success`, saying who overrode and why; its
/// summary and table stay. Without check permission, the commit status says it.
async fn reconclude(github: &GitHub, sha: &str, note: &OverrideNote) -> anyhow::Result<()> {
    let title = override_title(note);
    // Without `checks: write` even the lookup is refused: the status stands in. Any other
    // failure is an error, never a reason to create a second check run.
    let previous = match github.find_check_run(sha, CHECK_NAME).await {
        Ok(run) => Some(run),
        Err(e) if e.is_forbidden() => None,
        Err(e) => return Err(e.into()),
    };
    let (summary, text) = previous
        .as_ref()
        .and_then(|run| run.as_ref())
        .and_then(|run| run.output.clone())
        .map(|o| (o.summary.unwrap_or_default(), o.text.unwrap_or_default()))
        .unwrap_or_default();
    let output = override_output(note, &title, &summary, &text);
    let body = json!({
        "name": CHECK_NAME,
        "status": "completed",
        "conclusion": Conclusion::Success.as_str(),
        "completed_at": now_rfc3339(),
        "output": { "title": output.title, "summary": output.summary, "text": output.text },
    });
    let result = match previous {
        None => None,
        Some(Some(run)) => Some(github.update_check_run(run.id, &body).await.map(drop)),
        Some(None) => {
            let mut create = body.clone();
            create["head_sha"] = json!(sha);
            Some(github.create_check_run(&create).await.map(drop))
        }
    };
    match result {
        Some(Ok(())) => Ok(()),
        Some(Err(e)) if !e.is_forbidden() => Err(e.into()),
        _ => {
            let status = json!({
                "state": "success",
                "context": CHECK_NAME,
                "description": cut_chars(&title, STATUS_DESCRIPTION_LIMIT),
            });
            github.create_status(sha, &status).await.map_err(|e| {
                anyhow::anyhow!("{e}; the token needs `checks: write` (or `statuses: write`)")
            })
        }
    }
}

fn override_output(note: &OverrideNote, title: &str, summary: &str, text: &str) -> CheckOutput {
    // The previous summary may already carry an override: keep only what follows it.
    let previous = summary
        .rsplit_once("<!-- /benchgate:override -->\n")
        .map_or(summary, |(_, rest)| rest)
        .trim_start();
    let block = with_override("", Some(note));
    CheckOutput {
        title: title.to_owned(),
        summary: fit(
            &format!("{block}\n{previous}"),
            CHECK_TEXT_LIMIT,
            Measure::Bytes,
        ),
        text: text.to_owned(),
    }
}
