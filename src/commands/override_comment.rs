//! `benchgate override`: acts on an `issue_comment` event's `/benchgate override <reason>`.

use super::StoreArgs;
use crate::github::GitHubArgs;
use crate::github::overrides::{self, Outcome};

/// `benchgate override`.
#[derive(clap::Args)]
pub struct Args {
    /// The repository, OWNER/NAME [default: the event's].
    #[arg(long)]
    repo: Option<String>,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    github: GitHubArgs,
}

/// Handles the event named by `--event-path` or `GITHUB_EVENT_PATH`.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let event_path = args.github.event_path_or_env()?;
    let outcome = overrides::handle(
        &event_path,
        args.repo.as_deref(),
        &args.github,
        &args.store.db,
    )
    .await?;
    match outcome {
        Outcome::Ignored(why) => eprintln!("benchgate: ignored: {why}"),
        Outcome::Refused(why) => eprintln!("benchgate: refused: {why}"),
        Outcome::Overridden { head_sha } => {
            eprintln!("benchgate: overridden: the check on {head_sha} is now success")
        }
    }
    Ok(0)
}
