//! `benchgate runs`: the stored runs, one line each.

use super::{Format, StoreArgs};
use crate::render;

/// `benchgate runs`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: StoreArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Lists the stored runs.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let store = args.store.open_existing().await?;
    let runs = store.list_runs().await?;
    store.close().await;
    print!("{}", render::runs(&runs, args.format == Format::Json)?);
    Ok(0)
}
