//! `benchgate runs`: the stored runs, one line each, optionally filtered and limited.

use benchgate_collector::{RepositoryName, RunKind};

use super::{Format, KindArg, StoreArgs};
use crate::render;

/// `benchgate runs`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: StoreArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Only the runs of this repository, OWNER/NAME.
    #[arg(long)]
    repo: Option<String>,
    /// Only the runs of this kind.
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// Only the runs of this branch.
    #[arg(long)]
    branch: Option<String>,
    /// Only the newest N runs (after the filters), still listed oldest first.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
}

/// Lists the stored runs.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let repository = args
        .repo
        .as_deref()
        .map(RepositoryName::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--repo: {e}"))?;
    let kind = args.kind.map(RunKind::from);
    let store = args.store.open_existing().await?;
    let runs = store.list_runs().await;
    store.close().await;
    let mut runs: Vec<_> = runs?
        .into_iter()
        .filter(|r| {
            repository
                .as_ref()
                .is_none_or(|repo| &r.meta.repository == repo)
        })
        .filter(|r| kind.is_none_or(|k| r.meta.kind == k))
        .filter(|r| {
            args.branch
                .as_deref()
                .is_none_or(|b| r.meta.branch.as_deref() == Some(b))
        })
        .collect();
    if let Some(limit) = args.limit {
        runs.sort_by_key(|r| (r.recorded_at, r.id.get()));
        runs.drain(..runs.len().saturating_sub(limit));
    }
    print!("{}", render::runs(&runs, args.format == Format::Json)?);
    Ok(0)
}
