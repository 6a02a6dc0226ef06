//! `benchgate compare`: load both sides (Criterion directories or stored runs, one per round),
//! decide, write the reports, and map the verdict to an exit code.

use std::path::Path;

use anyhow::{Context as _, bail};
use benchgate_collector::{Location, Measurement, RunId, Store, criterion};
use benchgate_gate::decision::{Input, Mode, evaluate};
use benchgate_gate::report::Context;

use super::StoreArgs;
use crate::reporting::{Outputs, ReportArgs, decide_and_publish, load_policy, report};

/// `benchgate compare`.
#[derive(clap::Args)]
pub struct Args {
    /// The base side (repeat for rounds).
    #[arg(long = "base", required = true, value_name = "DIR|RUN")]
    base: Vec<String>,
    /// The head side (repeat for rounds, paired with --base in order).
    #[arg(long = "head", required = true, value_name = "DIR|RUN")]
    head: Vec<String>,
    #[command(flatten)]
    store: StoreArgs,
    /// Results directory read inside each Criterion benchmark.
    #[arg(long, default_value = criterion::DEFAULT_BASELINE)]
    baseline: String,
    #[command(flatten)]
    report: ReportArgs,
}

/// Decides, reports, and with `--publish` publishes.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let outputs = args.report.outputs();
    decide_and_publish(
        &args.report,
        &outputs,
        None,
        &args.store.db,
        None,
        compare(
            &args.base,
            &args.head,
            &args.store.db,
            &args.baseline,
            args.report.config.as_deref(),
            &outputs,
        ),
    )
    .await
}

/// One side of a comparison, loaded.
struct Side {
    rounds: Vec<Vec<Measurement>>,
    commits: Vec<String>,
    fingerprints: Vec<String>,
}

/// Loads each `--base`/`--head` value: a Criterion directory, else a stored run id.
async fn load_side(
    flag: &str,
    values: &[String],
    db: &Location,
    baseline: &str,
) -> anyhow::Result<Side> {
    let mut side = Side {
        rounds: Vec::new(),
        commits: Vec::new(),
        fingerprints: Vec::new(),
    };
    let mut store: Option<Store> = None;
    for value in values {
        let path = Path::new(value);
        if path.is_dir() {
            side.rounds.push(
                criterion::read_tree(path, baseline).with_context(|| format!("{flag} {value}"))?,
            );
            continue;
        }
        let Ok(id) = RunId::parse(value) else {
            bail!("{flag} {value}: neither a Criterion output directory nor a stored run id");
        };
        if store.is_none() {
            if !db.may_exist() {
                bail!(
                    "{flag} {value}: looks like a run id, but there is no store at {db}; pass --db"
                );
            }
            store = Some(Store::connect(db).await?);
        }
        if let Some(store) = &store {
            let run = store
                .get_run(id)
                .await
                .with_context(|| format!("{flag} {value}"))?;
            side.commits.push(run.summary.meta.commit.to_string());
            side.fingerprints.push(run.summary.fingerprint.to_string());
            side.rounds.push(run.measurements);
        }
    }
    if let Some(store) = store {
        store.close().await;
    }
    Ok(side)
}

fn common(values: &[String]) -> Option<String> {
    let first = values.first()?;
    values.iter().all(|v| v == first).then(|| first.clone())
}

/// `benchgate compare`: returns the process exit code (0 pass, 1 regression).
pub async fn compare(
    base: &[String],
    head: &[String],
    db: &Location,
    baseline: &str,
    config: Option<&Path>,
    outputs: &Outputs,
) -> anyhow::Result<u8> {
    if base.len() != head.len() {
        bail!(
            "--base was given {} times and --head {} times; rounds are paired in order, so give each side once per round",
            base.len(),
            head.len()
        );
    }
    let policy = load_policy(config)?;
    let base_side = load_side("--base", base, db, baseline).await?;
    let head_side = load_side("--head", head, db, baseline).await?;
    let fingerprints: Vec<String> = base_side
        .fingerprints
        .iter()
        .chain(&head_side.fingerprints)
        .cloned()
        .collect();
    if !fingerprints.is_empty() && common(&fingerprints).is_none() {
        eprintln!(
            "benchgate: warning: the runs compared come from different machines (fingerprints differ); hardware differences will read as code changes"
        );
    }
    let context = Context {
        cost: None,
        profiles: Vec::new(),
        base: base.join(", "),
        head: head.join(", "),
        base_commit: common(&base_side.commits),
        head_commit: common(&head_side.commits),
        fingerprint: common(&fingerprints),
        builds: Vec::new(),
        source: (base.len() == 1).then(|| "one run a side".to_owned()),
        incomplete: None,
        notes: Vec::new(),
    };
    let mode = if base.len() > 1 {
        Mode::SameJobAb
    } else {
        Mode::StoredBaseline
    };
    let history = Default::default();
    let decision = evaluate(
        &Input {
            mode,
            base_rounds: &base_side.rounds,
            head_rounds: &head_side.rounds,
            history: &history,
        },
        &policy,
    );
    report(&decision, &context, &policy, outputs)
}
