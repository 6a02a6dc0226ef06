//! `benchgate runs`: the stored runs, one line each, optionally filtered and limited.

use benchgate_collector::RunKind;

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
    /// Only the newest N runs (after the filters), still listed oldest first [default: 20 in
    /// the text listing; every run as JSON].
    #[arg(long, value_name = "N", conflicts_with = "all")]
    limit: Option<usize>,
    /// Every run, in the text listing too.
    #[arg(long)]
    all: bool,
}

/// The runs the text listing shows when neither `--limit` nor `--all` says otherwise.
pub const DEFAULT_LISTED: usize = 20;

/// Lists the stored runs.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let repository = super::repo_filter(args.repo.as_deref())?;
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
    let as_json = args.format == Format::Json;
    let limit = match (args.limit, args.all, as_json) {
        (Some(limit), _, _) => Some(limit),
        (None, false, false) => Some(DEFAULT_LISTED),
        (None, _, _) => None,
    };
    let matched = runs.len();
    if let Some(limit) = limit {
        runs.sort_by_key(|r| (r.recorded_at, r.id.get()));
        runs.drain(..runs.len().saturating_sub(limit));
    }
    print!("{}", render::runs(&runs, as_json)?);
    if !as_json && runs.len() < matched {
        eprintln!(
            "benchgate: the newest {} of {matched} runs; --all lists every one, --limit N the newest N",
            runs.len()
        );
    }
    Ok(0)
}
