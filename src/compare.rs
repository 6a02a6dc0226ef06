//! `benchgate compare`: load both sides (Criterion directories or stored runs, one per round),
//! decide, write the reports, and map the verdict to an exit code.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use benchgate_collector::{Measurement, RunId, Store, criterion};
use benchgate_gate::Policy;
use benchgate_gate::decision::{Input, Mode, evaluate};
use benchgate_gate::report::{Context, render_markdown, render_text, summary};

/// Where reports go and how the verdict maps to an exit code.
pub struct Outputs {
    /// What to print on stdout.
    pub format: ReportFormat,
    /// Where to write `perf-summary.md`.
    pub out_md: Option<PathBuf>,
    /// Where to write `perf-summary.json`.
    pub out_json: Option<PathBuf>,
    /// Exit 0 even on a regression.
    pub warn_only: bool,
}

/// The report printed on stdout.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Terminal text (colour on a TTY).
    Text,
    /// The PR comment's markdown.
    Md,
    /// perf-summary.json.
    Json,
}

/// The default configuration file, read when present.
const DEFAULT_CONFIG: &str = "benchgate.toml";

/// Reads `--config FILE`, else `benchgate.toml` if present, else the defaults.
pub fn load_policy(config: Option<&Path>) -> anyhow::Result<Policy> {
    let path = match config {
        Some(path) => path.to_owned(),
        None if Path::new(DEFAULT_CONFIG).is_file() => PathBuf::from(DEFAULT_CONFIG),
        None => return Ok(Policy::default()),
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read the configuration", path.display()))?;
    Ok(Policy::from_toml(&text, &path)?)
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
    db: &Path,
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
            if !db.is_file() {
                bail!(
                    "{flag} {value}: looks like a run id, but there is no store at {}; pass --db",
                    db.display()
                );
            }
            store = Some(Store::open(db).await?);
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
    db: &Path,
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
        base: base.join(", "),
        head: head.join(", "),
        base_commit: common(&base_side.commits),
        head_commit: common(&head_side.commits),
        fingerprint: common(&fingerprints),
        builds: Vec::new(),
        source: (base.len() == 1).then(|| "one run a side".to_owned()),
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

/// Writes the requested reports and returns the exit code for the verdict.
pub fn report(
    decision: &benchgate_gate::decision::Decision,
    context: &Context,
    policy: &Policy,
    outputs: &Outputs,
) -> anyhow::Result<u8> {
    // Each rendering only when something asks for it: a report of 10,000 benchmarks is not free.
    let markdown = (outputs.out_md.is_some() || outputs.format == ReportFormat::Md)
        .then(|| render_markdown(decision, context, policy));
    let json = (outputs.out_json.is_some() || outputs.format == ReportFormat::Json)
        .then(|| serde_json::to_string(&summary(decision, context, policy)).map(|j| j + "\n"))
        .transpose()?;
    if let (Some(path), Some(markdown)) = (&outputs.out_md, &markdown) {
        std::fs::write(path, markdown)
            .with_context(|| format!("--out-md {}: cannot write", path.display()))?;
    }
    if let (Some(path), Some(json)) = (&outputs.out_json, &json) {
        std::fs::write(path, json)
            .with_context(|| format!("--out-json {}: cannot write", path.display()))?;
    }
    match outputs.format {
        ReportFormat::Text => print!(
            "{}",
            render_text(decision, context, policy, std::io::stdout().is_terminal())
        ),
        ReportFormat::Md => print!("{}", markdown.unwrap_or_default()),
        ReportFormat::Json => print!("{}", json.unwrap_or_default()),
    }
    Ok(if decision.fails(outputs.warn_only) {
        1
    } else {
        0
    })
}
