//! `benchgate dashboard`: the trend site written as static files.

use std::path::PathBuf;

use super::StoreArgs;
use super::decide::load_policy;

/// `benchgate dashboard`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: StoreArgs,
    /// The directory to write the site into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The policy whose time budgets on medians are drawn on the charts [default:
    /// benchgate.toml when present].
    #[arg(long)]
    config: Option<PathBuf>,
}

/// Writes the site.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let policy = load_policy(args.config.as_deref())?;
    let pages = crate::dashboard::write(&args.store.db, &args.out, &policy.budgets).await?;
    eprintln!(
        "benchgate: wrote {pages} pages to {}; open {}",
        args.out.display(),
        args.out.join("index.html").display()
    );
    Ok(0)
}
