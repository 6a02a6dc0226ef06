//! `benchgate dashboard`: the trend site written as static files.

use std::path::PathBuf;

use super::StoreArgs;
use crate::reporting::load_policy;

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
    /// Draw every page again. Without it, the pages of a machine whose data did not change since
    /// the last build into DIR are left as they are (DIR/.benchgate-built.json records what each
    /// machine's pages were built from).
    #[arg(long)]
    full: bool,
}

/// Writes the site.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let policy = load_policy(args.config.as_deref())?;
    let written =
        crate::trends::write(&args.store.db, &args.out, &policy.budgets, args.full).await?;
    eprintln!(
        "benchgate: wrote {} to {} ({} drawn, {} unchanged); open {}",
        plural(written.pages, "page"),
        args.out.display(),
        plural(written.drawn, "machine"),
        written.kept,
        args.out.join("index.html").display()
    );
    Ok(0)
}

/// `1 page`, `2 pages`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
