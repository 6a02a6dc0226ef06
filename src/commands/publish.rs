//! `benchgate publish`: a perf-summary.json shown on GitHub, directly or through a fork's
//! artifact.

use std::path::PathBuf;

use anyhow::bail;

use super::StoreArgs;
use crate::github::{GitHubArgs, artifact, publish};

/// `benchgate publish`.
#[derive(clap::Args)]
pub struct Args {
    /// The perf-summary.json to publish.
    #[arg(long, value_name = "FILE", required_unless_present = "from_artifact")]
    summary: Option<PathBuf>,
    /// Fork pull requests, step 1 (no token needed): save the summary and the event's pull
    /// request into DIR, to upload as an artifact, instead of publishing.
    #[arg(
        long,
        value_name = "DIR",
        requires = "summary",
        conflicts_with = "from_artifact"
    )]
    to_artifact: Option<PathBuf>,
    /// Fork pull requests, step 2 (in a `workflow_run` workflow): check the downloaded
    /// artifact in DIR against GitHub, then publish it with this workflow's token.
    #[arg(long, value_name = "DIR", conflicts_with = "summary")]
    from_artifact: Option<PathBuf>,
    /// With --from-artifact, in a maintainer-triggered run (`benchgate request-run`): the
    /// writer who asked for it. Their access is confirmed again and the artifact must be for
    /// --sha, the head commit they asked for; the verdict is then not labelled unverified.
    #[arg(long, value_name = "LOGIN", requires = "from_artifact")]
    requested_by: Option<String>,
    /// The repository, OWNER/NAME [env GITHUB_REPOSITORY].
    #[arg(long)]
    repo: Option<String>,
    #[command(flatten)]
    store: StoreArgs,
    /// A regression concludes the check `neutral` instead of `failure`.
    #[arg(long)]
    warn_only: bool,
    #[command(flatten)]
    github: GitHubArgs,
}

/// Publishes, or writes the artifact.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let Args {
        summary,
        to_artifact,
        from_artifact,
        requested_by,
        repo,
        store,
        warn_only,
        github,
    } = args;
    match (summary, to_artifact, from_artifact) {
        (Some(summary), Some(dir), _) => artifact::write(&summary, &dir, &github)?,
        (_, _, Some(dir)) => {
            publish::publish_from_artifact(
                &dir,
                repo.as_deref(),
                &github,
                &store.db,
                warn_only,
                requested_by.as_deref(),
            )
            .await?
        }
        (Some(summary), None, None) => {
            publish::publish(
                &summary,
                publish::Publication {
                    repository: repo.as_deref(),
                    args: &github,
                    db: &store.db,
                    warn_only,
                    started: None,
                    provenance: publish::Provenance::ThisWorkflow,
                },
            )
            .await?
        }
        (None, _, None) => bail!("pass --summary FILE or --from-artifact DIR"),
    }
    Ok(0)
}
