//! `benchgate show`: every measurement of one stored run.

use anyhow::bail;
use benchgate_collector::RunId;

use super::{Format, StoreArgs};
use crate::render;

/// `benchgate show`.
#[derive(clap::Args)]
pub struct Args {
    /// The run id, as printed by `ingest` or listed by `runs`, or `latest` (the most recently
    /// recorded).
    run: String,
    #[command(flatten)]
    store: StoreArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// With `latest`: the most recently recorded run of this repository, OWNER/NAME.
    #[arg(long)]
    repo: Option<String>,
}

/// Prints the run.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let repository = super::repo_filter(args.repo.as_deref())?;
    if repository.is_some() && args.run != "latest" {
        bail!(
            "--repo picks among runs for `latest`; run {} is one run already",
            args.run
        );
    }
    let store = args.store.open_existing().await?;
    let stored = match args.run.as_str() {
        "latest" => {
            let latest = match &repository {
                None => store.latest_run().await?,
                Some(repository) => store
                    .list_runs()
                    .await?
                    .into_iter()
                    .filter(|r| &r.meta.repository == repository)
                    .max_by_key(|r| (r.recorded_at, r.id.get())),
            };
            match (latest, &repository) {
                (Some(latest), _) => store.get_run(latest.id).await,
                (None, None) => bail!(
                    "{}: no runs stored yet; add one with `benchgate ingest`",
                    args.store.db
                ),
                (None, Some(repository)) => bail!(
                    "{}: no runs of {repository} stored (`benchgate runs` lists the stored runs)",
                    args.store.db
                ),
            }
        }
        id => store.get_run(RunId::parse(id)?).await,
    };
    store.close().await;
    print!("{}", render::run(&stored?, args.format == Format::Json)?);
    Ok(0)
}
