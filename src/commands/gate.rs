//! `benchgate gate`: judge a stored head run against the stored baseline on the same machine —
//! the base commit's run, else the nearest first-parent ancestor's within [`ANCESTOR_LIMIT`]
//! commits, else `no-baseline` — with the baseline's history as the noise estimate.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use benchgate_collector::callgrind::Profile;
use benchgate_collector::{
    BenchmarkId, CommitSha, Location, Measurement, RepositoryName, RunId, RunKind, RunSummary,
    Store, StoredStatistic,
};
use benchgate_gate::decision::{Input, Mode, evaluate, round_statistic};
use benchgate_gate::policy::Statistic;
use benchgate_gate::report::Context;

use super::StoreArgs;
use crate::environment;
use crate::head_reruns::Reruns;
use crate::reporting::{Outputs, ReportArgs, decide_and_publish, load_policy, report};
use crate::service_client::reads::Collector;

/// How far back the baseline may be: the base commit and this many ancestors.
pub const ANCESTOR_LIMIT: usize = 20;
/// How many runs of the baseline's history estimate its noise.
pub const HISTORY_RUNS: usize = 30;

/// `benchgate gate`.
#[derive(clap::Args)]
pub struct Args {
    /// The head run's id.
    #[arg(long, value_name = "RUN")]
    head: String,
    #[command(flatten)]
    store: StoreArgs,
    /// The pull request's base commit [default: the head commit's ancestors].
    #[arg(long, value_name = "SHA")]
    base_commit: Option<String>,
    /// Take every run (the head, the baseline, its history) from this `benchgate serve`
    /// instead of the local store; --head is then the service's run id.
    #[arg(long, value_name = "URL")]
    collector: Option<String>,
    /// The repository on the collector, OWNER/NAME [default: as for ingest].
    #[arg(long, requires = "collector")]
    repo: Option<String>,
    /// Head runs at most. With the bench command after `--`, the benchmarks a head run leaves
    /// `inconclusive` run again in this checkout (only they), the head's runs are pooled and
    /// the comparison decided again, each look spending its share of the error rates
    /// [default: 3 with a bench command, else 1].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=20))]
    max_runs: Option<u32>,
    /// Benchmarking time the re-runs may take in all (e.g. 10m); once spent, the benchmarks
    /// still undecided stay `inconclusive`.
    #[arg(long, value_parser = humantime::parse_duration, requires = "command")]
    budget: Option<Duration>,
    #[command(flatten)]
    report: ReportArgs,
    /// The head's bench command (e.g. `cargo bench --workspace`), to re-run the undecided
    /// benchmarks: a `cargo bench` command is narrowed to their exact ids; another runs whole.
    #[arg(last = true, value_name = "BENCH COMMAND")]
    command: Vec<String>,
}

/// Decides, reports, and with `--publish` publishes.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let collector = match args.collector {
        Some(url) => {
            let repository = match &args.repo {
                Some(name) => RepositoryName::parse(name).context("--repo")?,
                None => environment::repository()?,
            };
            Some((url, repository))
        }
        None => None,
    };
    let reruns = Reruns::new(args.command, args.max_runs, args.budget)?;
    reruns.check_ids_apart()?;
    let outputs = args.report.outputs();
    decide_and_publish(
        &args.report,
        &outputs,
        None,
        &args.store.db,
        None,
        gate(
            &args.head,
            &args.store.db,
            collector
                .as_ref()
                .map(|(url, repo)| (url.as_str(), repo.clone())),
            args.base_commit.as_deref(),
            args.report.config.as_deref(),
            &reruns,
            &outputs,
        ),
    )
    .await
}

/// Finds the baseline among `candidates` (runs on the head's repository and fingerprint): the
/// newest non-PR run of the first commit in `ancestry` that has one. Pure.
pub fn choose_baseline<'a>(
    candidates: &'a [RunSummary],
    ancestry: &[CommitSha],
    head: RunId,
) -> Option<&'a RunSummary> {
    ancestry.iter().find_map(|commit| {
        candidates
            .iter()
            .filter(|run| {
                run.id != head && &run.meta.commit == commit && run.meta.kind != RunKind::Pr
            })
            .max_by_key(|run| run.id)
    })
}

/// Where the runs come from: the local store, or the collector service.
#[derive(Clone)]
enum Source {
    Local(Store),
    Remote(Collector),
}

impl Source {
    async fn run_summary(&self, id: RunId) -> anyhow::Result<RunSummary> {
        match self {
            Source::Local(store) => Ok(store.run_summary(id).await?),
            Source::Remote(collector) => collector.run_summary(id).await,
        }
    }

    async fn runs_on_fingerprint(&self, run: &RunSummary) -> anyhow::Result<Vec<RunSummary>> {
        match self {
            Source::Local(store) => Ok(store
                .runs_on_fingerprint(&run.meta.repository, &run.fingerprint)
                .await?),
            Source::Remote(collector) => collector.runs_on_fingerprint(&run.fingerprint).await,
        }
    }

    async fn measurements(&self, id: RunId) -> anyhow::Result<Vec<Measurement>> {
        match self {
            Source::Local(store) => Ok(store.get_run(id).await?.measurements),
            Source::Remote(collector) => collector.measurements(id).await,
        }
    }

    /// A run's measurements for a decision: the store's packed view where it tells the same
    /// (`view_suffices`) and the run has one, which reads one row instead of a row per
    /// benchmark; every sample otherwise.
    async fn measurements_to_judge(
        &self,
        id: RunId,
        view: bool,
    ) -> anyhow::Result<Vec<Measurement>> {
        if let (Source::Local(store), true) = (self, view)
            && let Some(measurements) = store.gate_view(id).await?
        {
            return Ok(measurements);
        }
        self.measurements(id).await
    }

    /// A run's profiles by function, by count id.
    async fn function_costs(&self, id: RunId) -> anyhow::Result<BTreeMap<BenchmarkId, Profile>> {
        match self {
            Source::Local(store) => Ok(store.function_costs(id).await?),
            Source::Remote(collector) => collector.function_costs(id).await,
        }
    }

    async fn statistic_series(
        &self,
        runs: &[RunId],
        statistic: StoredStatistic,
    ) -> anyhow::Result<HashMap<String, Vec<f64>>> {
        match self {
            Source::Local(store) => Ok(store.statistic_series(runs, statistic).await?),
            Source::Remote(collector) => collector.statistic_series(runs, statistic).await,
        }
    }
}

/// `benchgate gate`: returns the exit code (0 pass, inconclusive or no baseline; 1 regression).
/// With `collector` (the service's URL and the repository), every run comes from the service.
pub async fn gate(
    head: &str,
    db: &Location,
    collector: Option<(&str, RepositoryName)>,
    base_commit: Option<&str>,
    config: Option<&Path>,
    reruns: &Reruns,
    outputs: &Outputs,
) -> anyhow::Result<u8> {
    let policy = load_policy(config)?;
    let head_id = RunId::parse(head).context("--head")?;
    let judged = Judged {
        head_id,
        base_commit,
        policy: &policy,
        reruns,
    };
    if let Some((url, repository)) = collector {
        let source = Source::Remote(Collector::new(url, repository)?);
        return decide(&source, &judged, outputs).await;
    }
    let store = Store::connect_existing(db).await?;
    let outcome = decide(&Source::Local(store.clone()), &judged, outputs).await;
    store.close().await;
    outcome
}

/// Whether the store's gate view decides as every sample would: it keeps each measurement's
/// two best samples, all that the minimum and its within-run interval read (the median reads
/// Criterion's estimate); other quantiles and budgets need every sample.
fn view_suffices(policy: &benchgate_gate::Policy) -> bool {
    stored_statistic(policy.statistic).is_some() && policy.budgets.is_empty()
}

/// The store's column of `statistic` (the median, the minimum), if it keeps one: what history
/// and the gate view can be read from without the samples.
fn stored_statistic(statistic: Statistic) -> Option<StoredStatistic> {
    match statistic {
        Statistic::Median => Some(StoredStatistic::Median),
        Statistic::Quantile(0.0) => Some(StoredStatistic::Min),
        Statistic::Quantile(_) => None,
    }
}

/// ln(statistic) per benchmark over `runs`, in order: the median and the minimum come straight
/// from the store's columns; other quantiles are computed from each run's samples.
async fn history_of(
    store: &Source,
    runs: &[RunId],
    statistic: Statistic,
) -> anyhow::Result<HashMap<String, Vec<f64>>> {
    let values: HashMap<String, Vec<f64>> = match stored_statistic(statistic) {
        Some(stored) => store.statistic_series(runs, stored).await?,
        None => {
            let mut values: HashMap<String, Vec<f64>> = HashMap::new();
            for run in runs {
                for m in store.measurements(*run).await? {
                    values
                        .entry(m.id.as_str().to_owned())
                        .or_default()
                        .push(round_statistic(&m, statistic));
                }
            }
            values
        }
    };
    Ok(values
        .into_iter()
        .map(|(id, values)| {
            (
                id,
                values
                    .into_iter()
                    .filter(|v| *v > 0.0)
                    .map(f64::ln)
                    .collect(),
            )
        })
        .collect())
}

/// What a gate judges and how: the head run, the base commit asked for, the policy and the
/// re-runs allowed.
struct Judged<'a> {
    head_id: RunId,
    base_commit: Option<&'a str>,
    policy: &'a benchgate_gate::Policy,
    reruns: &'a Reruns,
}

async fn decide(store: &Source, judged: &Judged<'_>, outputs: &Outputs) -> anyhow::Result<u8> {
    let Judged {
        head_id,
        base_commit,
        policy,
        reruns,
    } = *judged;
    let summary = store.run_summary(head_id).await.context("--head")?;
    // The head's measurements load while the baseline is found and loaded: on a 10,000-benchmark
    // run each side is tens of milliseconds of SQLite and decoding, and they share nothing.
    let view = view_suffices(policy);
    let head_measurements = tokio::spawn({
        let store = store.clone();
        async move { store.measurements_to_judge(head_id, view).await }
    });
    let start = match base_commit {
        Some(sha) => CommitSha::parse(sha).context("--base-commit")?,
        None => summary.meta.commit.clone(),
    };
    // With --base-commit the base itself comes first; otherwise the head's own commit is
    // skipped and its ancestors are searched.
    let mut ancestry = environment::first_parent_history(&start, ANCESTOR_LIMIT + 1);
    if ancestry.is_empty() {
        ancestry.push(start.clone());
    }
    if base_commit.is_none() {
        ancestry.retain(|c| c != &summary.meta.commit);
    }
    let candidates = store.runs_on_fingerprint(&summary).await?;
    let baseline = choose_baseline(&candidates, &ancestry, head_id);

    let mut context = Context {
        cost: None,
        profiles: Vec::new(),
        base: start.short().to_owned(),
        head: format!("{} (run {})", summary.meta.commit.short(), head_id),
        base_commit: None,
        head_commit: Some(summary.meta.commit.to_string()),
        fingerprint: Some(summary.fingerprint.to_string()),
        builds: Vec::new(),
        source: None,
        incomplete: None,
        notes: Vec::new(),
    };
    let Some(baseline) = baseline else {
        head_measurements.abort();
        eprintln!(
            "benchgate: no stored run of {} or its {ANCESTOR_LIMIT} nearest ancestors on fingerprint {}: verdict no-baseline",
            start.short(),
            summary.fingerprint.short()
        );
        let empty: Vec<Vec<benchgate_collector::Measurement>> = Vec::new();
        let none = HashMap::new();
        let decision = evaluate(
            &Input {
                mode: Mode::StoredBaseline,
                base_rounds: &empty,
                head_rounds: &empty,
                history: &none,
            },
            policy,
        );
        return report(&decision, &context, policy, outputs);
    };
    context.base = format!("{} (run {})", baseline.meta.commit.short(), baseline.id);
    context.base_commit = Some(baseline.meta.commit.to_string());

    // The baseline's history: the runs of its first-parent ancestors that count (see
    // `commit_history`), oldest first.
    let lineage = environment::first_parent_history(&baseline.meta.commit, HISTORY_RUNS);
    let by_commit = line_runs_by_commit(&candidates, baseline.id, head_id);
    let mut history_runs: Vec<RunId> = lineage
        .iter()
        .filter_map(|commit| by_commit.get(commit))
        .flat_map(|runs| commit_history(runs))
        .take(HISTORY_RUNS)
        .collect();
    history_runs.reverse();
    // Where git cannot walk the line (a shallow clone, no checkout of this repository), the
    // runs stored on this machine up to the baseline are its history, in the order stored.
    let walk_cut_short = || {
        lineage.is_empty() || (lineage.len() < HISTORY_RUNS && environment::is_shallow_repository())
    };
    if history_runs.len() < benchgate_gate::noise::MIN_HISTORY && walk_cut_short() {
        let stored = stored_line(&by_commit);
        if stored.len() > history_runs.len() {
            let note = format!(
                "History: git cannot walk the baseline's first-parent line here (a shallow clone, or not a checkout of this repository), so its history is the {} default-branch run{} stored on this machine up to the baseline, in the order they were stored. Check out with `fetch-depth: 0` to follow git's line.",
                stored.len(),
                if stored.len() == 1 { "" } else { "s" }
            );
            eprintln!("benchgate: {note}");
            context.notes.push(note);
            history_runs = stored;
        }
    }
    if let Some(note) = cold_start_note(history_runs.len()) {
        eprintln!("benchgate: {note}");
        context.notes.push(note);
    }
    let base_measurements = tokio::spawn({
        let store = store.clone();
        let id = baseline.id;
        async move { store.measurements_to_judge(id, view).await }
    });
    let history = history_of(store, &history_runs, policy.statistic).await?;

    let base = base_measurements.await??;
    let head = head_measurements.await??;
    let decision = reruns.decide(
        std::slice::from_ref(&base),
        head,
        &history,
        policy,
        &mut context,
    )?;
    explain_counts(store, &decision, [baseline.id, head_id], &mut context).await?;
    report(&decision, &context, policy, outputs)
}

/// Where each count regression's instructions went, from the profiles stored with the baseline
/// and the head run; a count without one on a side gets a note. Read only when a count regressed.
async fn explain_counts(
    store: &Source,
    decision: &benchgate_gate::decision::Decision,
    [base, head]: [RunId; 2],
    context: &mut Context,
) -> anyhow::Result<()> {
    if super::explain::regressed_counts(decision).is_empty() {
        return Ok(());
    }
    let (base_costs, head_costs) =
        tokio::try_join!(store.function_costs(base), store.function_costs(head))?;
    let (profiles, notes) = super::explain::stored_count_profiles(
        decision,
        [&base_costs, &head_costs],
        [
            &format!("the baseline run {base}"),
            &format!("the head run {head}"),
        ],
    );
    context.profiles = profiles;
    context.notes.extend(notes);
    Ok(())
}

/// How far apart two runs of one commit must have been recorded to be separate jobs (a nightly
/// on a night with no new commit), each a run of history: the rounds of one job (`ab`'s,
/// `bisect`'s probes) lie minutes apart and move together, so they count once.
pub const SEPARATE_JOBS: Duration = Duration::from_secs(3600);

/// The default-branch runs of `candidates` up to `baseline` (it among them), by commit, each
/// commit's newest first.
fn line_runs_by_commit(
    candidates: &[RunSummary],
    baseline: RunId,
    head: RunId,
) -> HashMap<&CommitSha, Vec<&RunSummary>> {
    let mut by_commit: HashMap<&CommitSha, Vec<&RunSummary>> = HashMap::new();
    for run in candidates
        .iter()
        .filter(|run| run.meta.kind != RunKind::Pr && run.id != head && run.id <= baseline)
    {
        by_commit.entry(&run.meta.commit).or_default().push(run);
    }
    for runs in by_commit.values_mut() {
        runs.sort_by_key(|run| std::cmp::Reverse(run.id));
    }
    by_commit
}

/// The runs of one commit (newest first) that count as the baseline's history, newest first:
/// its newest, and each earlier `push` or `nightly` run recorded [`SEPARATE_JOBS`] or more
/// before the one counted after it. The same code measured by separate jobs is the
/// run-to-run noise a history is for; a quiet repository's nightlies calibrate the gate that
/// way.
fn commit_history(runs: &[&RunSummary]) -> Vec<RunId> {
    let Some((newest, earlier)) = runs.split_first() else {
        return Vec::new();
    };
    let mut counted = vec![newest.id];
    let mut after = newest.recorded_at;
    for run in earlier {
        let apart = after
            .duration_since(run.recorded_at)
            .is_ok_and(|gap| gap >= SEPARATE_JOBS);
        if apart && matches!(run.meta.kind, RunKind::Push | RunKind::Nightly) {
            counted.push(run.id);
            after = run.recorded_at;
        }
    }
    counted
}

/// The default-branch runs stored up to the baseline that count as history (see
/// [`commit_history`]), oldest first, at most [`HISTORY_RUNS`]: the baseline's history where
/// git cannot say which commits are its line.
fn stored_line(by_commit: &HashMap<&CommitSha, Vec<&RunSummary>>) -> Vec<RunId> {
    let mut ids: Vec<RunId> = by_commit
        .values()
        .flat_map(|runs| commit_history(runs))
        .collect();
    ids.sort();
    ids.split_off(ids.len().saturating_sub(HISTORY_RUNS))
}

/// What a stored baseline with too short a history says: how many runs this machine has, how
/// many calibration needs, and what decides meanwhile. `None` once it has enough.
fn cold_start_note(runs: usize) -> Option<String> {
    use benchgate_gate::noise::{MIN_HISTORY, MIN_SHORT_HISTORY};
    let more = |needed: usize| {
        let more = needed - runs;
        format!(
            "{more} more default-branch run{} of separate jobs {} stored on it",
            if more == 1 { "" } else { "s" },
            if more == 1 { "is" } else { "are" }
        )
    };
    let had = format!(
        "History: this machine has {runs} run{} of history on the baseline's line (each commit's newest run, and its earlier push or nightly runs an hour or more apart)",
        if runs == 1 { "" } else { "s" }
    );
    if runs < MIN_SHORT_HISTORY {
        Some(format!(
            "{had}, and a band calibrated from history needs {MIN_SHORT_HISTORY}; until {}, the noise is assumed (†) and nothing can pass. `benchgate ab` (the Action's `ab` mode) calibrates from its own rounds meanwhile.",
            more(MIN_SHORT_HISTORY)
        ))
    } else if runs < MIN_HISTORY {
        Some(format!(
            "{had}, fewer than the {MIN_HISTORY} each benchmark's band is read from alone: until {}, the bands are widened toward an assumed {:.0}% per run, so unchanged code can pass but only a large slowdown reads regressed, and only such a regression is run again, to be confirmed. `benchgate ab` (the Action's `ab` mode) decides from its own rounds meanwhile.",
            more(MIN_HISTORY),
            benchgate_gate::noise::UNCALIBRATED_RUN_NOISE * 100.0
        ))
    } else {
        None
    }
}
