//! What the deciding commands (`compare`, `gate`, `ab`) share: the report options, the policy
//! file, writing the reports, the exit code, and publishing the verdict with `--publish`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use benchgate_collector::Location;
use benchgate_gate::Policy;
use benchgate_gate::report::{Context, ReadSummary, render_markdown, render_text, summary};

use crate::github::publish;

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
    /// With `--publish`: what [`report`] reported, kept for publishing without reading
    /// `perf-summary.json` back.
    pub decided: Option<std::sync::Mutex<Option<ReadSummary>>>,
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

/// Options shared by the commands that decide.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// The policy file [default: benchgate.toml when present].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// What to print.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Also write perf-summary.md here.
    #[arg(long, value_name = "FILE")]
    pub out_md: Option<PathBuf>,
    /// Also write perf-summary.json here.
    #[arg(long, value_name = "FILE")]
    pub out_json: Option<PathBuf>,
    /// Report regressions but exit 0.
    #[arg(long)]
    pub warn_only: bool,
    /// Also publish to GitHub (as `benchgate publish`): a check run `in_progress` from the
    /// start, then the verdict, the sticky comment, the job summary and the step outputs.
    #[arg(long)]
    pub publish: bool,
    #[command(flatten)]
    pub github: crate::github::GitHubArgs,
}

impl ReportArgs {
    /// Where the reports go.
    pub fn outputs(&self) -> Outputs {
        Outputs {
            format: self.format,
            out_md: self.out_md.clone(),
            out_json: self.out_json.clone().or_else(|| {
                // Publishing reads the summary back, and `report-path` points at it.
                self.publish.then(|| PathBuf::from("perf-summary.json"))
            }),
            warn_only: self.warn_only,
            decided: self.publish.then(Default::default),
        }
    }
}

/// Runs a deciding command; with `--publish`, its check run is `in_progress` while it runs and
/// carries the verdict (or the error: a gate that could not decide never passes silently).
pub async fn decide_and_publish(
    report: &ReportArgs,
    outputs: &Outputs,
    repository: Option<&str>,
    db: &Location,
    head_commit: Option<&str>,
    decide: impl std::future::Future<Output = anyhow::Result<u8>>,
) -> anyhow::Result<u8> {
    if !report.publish {
        return decide.await;
    }
    let target = crate::github::Target::resolve(&report.github, repository, head_commit)?;
    target.github_client()?;
    let started = publish::start_check(&target).await?;
    let code = match decide.await {
        Ok(code) => code,
        Err(error) => {
            publish::fail_check(&target, started, &format!("{error:#}")).await;
            return Err(error);
        }
    };
    let decided = outputs
        .decided
        .as_ref()
        .and_then(|kept| kept.lock().ok()?.take())
        .context("internal: the decision to publish was not kept")?;
    let summary = outputs
        .out_json
        .as_deref()
        .unwrap_or(Path::new("perf-summary.json"));
    publish::publish_decided(
        &decided,
        summary,
        publish::Publication {
            repository,
            args: &report.github,
            db,
            warn_only: report.warn_only,
            started: Some(started),
            provenance: publish::Provenance::ThisWorkflow,
        },
    )
    .await?;
    Ok(code)
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
            render_text(
                decision,
                context,
                policy,
                crate::environment::colour_stdout()
            )
        ),
        ReportFormat::Md => print!("{}", markdown.unwrap_or_default()),
        ReportFormat::Json => print!("{}", json.unwrap_or_default()),
    }
    if let Some(kept) = &outputs.decided
        && let Ok(mut kept) = kept.lock()
    {
        *kept = Some(ReadSummary {
            decision: decision.clone(),
            context: context.clone(),
            policy: policy.clone(),
        });
    }
    Ok(if decision.fails(outputs.warn_only) {
        1
    } else {
        0
    })
}
