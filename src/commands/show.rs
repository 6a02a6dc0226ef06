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
}

/// Prints the run.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let store = args.store.open_existing().await?;
    let stored = match args.run.as_str() {
        "latest" => match store.latest_run().await? {
            Some(latest) => store.get_run(latest.id).await,
            None => bail!(
                "{}: no runs stored yet; add one with `benchgate ingest`",
                args.store.db
            ),
        },
        id => store.get_run(RunId::parse(id)?).await,
    };
    store.close().await;
    print!("{}", render::run(&stored?, args.format == Format::Json)?);
    Ok(0)
}
