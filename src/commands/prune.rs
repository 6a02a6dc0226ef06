//! `benchgate prune`: retention for a long-lived store. Pull-request runs past a cutoff,
//! measurements of benchmarks a repository no longer runs, and finished webhook deliveries;
//! `--dry-run` does the same work in a transaction it rolls back, so it reports exactly what a
//! real run removes. The baseline and history of every run since the cutoff stay whole.

use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use benchgate_collector::{PrunePlan, PruneReport};
use clap::ValueEnum;
use serde_json::json;

use super::gate::HISTORY_RUNS;
use super::{Format, StoreArgs};

/// What `prune` may remove.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum What {
    /// Pull-request runs recorded before the cutoff.
    PrRuns,
    /// Measurements before the cutoff of benchmarks no run since the cutoff measured.
    GoneBenchmarks,
    /// Webhook deliveries worked on and received before the cutoff.
    Deliveries,
}

/// `benchgate prune`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: StoreArgs,
    /// Remove only what was recorded longer ago than this (`90d`, `12weeks`, `1y`).
    #[arg(long, value_name = "AGE", value_parser = humantime::parse_duration)]
    older_than: Duration,
    /// What to remove (comma-separated); all three unless given.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [What::PrRuns, What::GoneBenchmarks, What::Deliveries])]
    only: Vec<What>,
    /// Report what would be removed, and remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Prunes the store; exit code 0.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let cutoff = SystemTime::now()
        .checked_sub(args.older_than)
        .with_context(|| format!("--older-than {:?}: before the epoch", args.older_than))?;
    let plan = PrunePlan {
        cutoff,
        pr_runs: args.only.contains(&What::PrRuns),
        gone_benchmarks: args.only.contains(&What::GoneBenchmarks),
        deliveries: args.only.contains(&What::Deliveries),
        keep_history: HISTORY_RUNS + 1,
        dry_run: args.dry_run,
    };
    let store = args.store.open_existing().await?;
    let report = store.prune(&plan).await;
    store.close().await;
    let report = report?;
    let cutoff = humantime::format_rfc3339_seconds(cutoff).to_string();
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "dry_run": args.dry_run,
                "cutoff": cutoff,
                "pr_runs": report.pr_runs,
                "pr_measurements": report.pr_measurements,
                "gone_benchmarks": report.gone_benchmarks,
                "gone_measurements": report.gone_measurements,
                "emptied_runs": report.emptied_runs,
                "deliveries": report.deliveries,
            }))?
        ),
        Format::Text => print!("{}", text(&report, &cutoff, args.dry_run)),
    }
    Ok(0)
}

fn text(report: &PruneReport, cutoff: &str, dry_run: bool) -> String {
    let verb = if dry_run { "would remove" } else { "removed" };
    let mut out = format!(
        "{verb}, of what was recorded before {cutoff}:\n\
         - {} pull-request runs ({} measurements)\n\
         - {} measurements of {} benchmarks no longer measured ({} runs left empty and removed)\n\
         - {} webhook deliveries\n",
        report.pr_runs,
        report.pr_measurements,
        report.gone_measurements,
        report.gone_benchmarks.len(),
        report.emptied_runs,
        report.deliveries,
    );
    for name in &report.gone_benchmarks {
        out.push_str(&format!("  gone: {name}\n"));
    }
    out
}
