//! `benchgate request-run`: acts on a `/benchgate run` comment or a run label, for a
//! maintainer-triggered benchmark of a pull request.

use crate::github::GitHubArgs;
use crate::github::run_request::{self, DEFAULT_LABEL, Outcome};

/// `benchgate request-run`.
#[derive(clap::Args)]
pub struct Args {
    /// The repository, OWNER/NAME [default: the event's].
    #[arg(long)]
    repo: Option<String>,
    /// The label that asks for a run when added to a pull request (a `pull_request_target`
    /// `labeled` event).
    #[arg(long, default_value = DEFAULT_LABEL)]
    label: String,
    #[command(flatten)]
    github: GitHubArgs,
}

/// Handles the event named by `--event-path` or `GITHUB_EVENT_PATH`; exit 0 whatever became of
/// it (the `run` output says), 2 on an error.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let event_path = args.github.event_path_or_env()?;
    let outcome =
        run_request::handle(&event_path, args.repo.as_deref(), &args.github, &args.label).await?;
    run_request::write_outputs(&outcome, args.github.output.as_deref())?;
    match &outcome {
        Outcome::Ignored(why) => eprintln!("benchgate: ignored: {why}"),
        Outcome::Refused(why) => eprintln!("benchgate: refused: {why}"),
        Outcome::Accepted(a) => eprintln!(
            "benchgate: run requested by @{} for pull request #{} at {} (base {} on {})",
            a.requested_by, a.pr, a.head_sha, a.base_sha, a.base_ref
        ),
    }
    Ok(0)
}
