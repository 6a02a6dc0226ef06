//! `benchgate import-history`: a github-action-benchmark history as stored runs.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::Context as _;
use benchgate_collector::history;
use benchgate_collector::{
    BenchmarkId, CommitSha, Estimate, HardwareProfile, Measurement, NewRun, RepositoryName,
    RunKind, RunMeta, Samples,
};
use benchgate_collector::{IngestOutcome, Store};

/// The profile of imported runs when none is given: its own fingerprint, so imported runs are
/// only ever compared with each other.
pub fn imported_profile() -> HardwareProfile {
    let unknown = || "unknown".to_owned();
    HardwareProfile {
        cpu_arch: unknown(),
        cpu_vendor: unknown(),
        cpu_brand: "imported from github-action-benchmark".to_owned(),
        physical_cores: 0,
        logical_cores: 0,
        memory_gib: 0,
        cpu_features: Vec::new(),
        os_name: unknown(),
        os_major_version: unknown(),
        runner_image: None,
        runner_image_version: None,
        rustc_version: unknown(),
        host_triple: unknown(),
        hostname: None,
        cpu_frequency_mhz: None,
        kernel_version: None,
        os_version: None,
    }
}

/// One run per commit measurement, oldest first. With several suites (several keys under
/// `entries`, one per machine or benchmark job), the suites' entries of the same commit are one
/// run whose benchmarks carry their suite (`suite/name`); a commit measured again within a
/// suite is the next attempt. Each value becomes one sample (the history kept no samples); its
/// `range` (`± N` or `[low, high]`), when readable, becomes the interval.
pub fn runs(
    path: &Path,
    repository: &RepositoryName,
    branch: &str,
    profile: &HardwareProfile,
) -> anyhow::Result<Vec<NewRun>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let entries = history::read(path, &text)?;
    let suites: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e.suite.as_str()).collect();
    // (commit, attempt) → the run's index; attempts count per (commit, suite).
    let mut attempts: HashMap<(&str, &str), u32> = HashMap::new();
    let mut index: HashMap<(&str, u32), usize> = HashMap::new();
    let mut runs: Vec<NewRun> = Vec::new();
    for entry in &entries {
        let attempt = *attempts
            .entry((entry.commit.as_str(), entry.suite.as_str()))
            .and_modify(|a| *a += 1)
            .or_insert(1);
        let run = *index
            .entry((entry.commit.as_str(), attempt))
            .or_insert_with(|| runs.len());
        if run == runs.len() {
            runs.push(NewRun {
                meta: RunMeta {
                    repository: repository.clone(),
                    commit: CommitSha::parse(&entry.commit)?,
                    branch: Some(branch.to_owned()),
                    kind: RunKind::Push,
                    pr_number: None,
                    attempt,
                },
                profile: profile.clone(),
                recorded_at: UNIX_EPOCH + Duration::from_millis(entry.date_ms),
                measurements: Vec::new(),
            });
        }
        let measurements = &mut runs[run].measurements;
        for bench in &entry.benches {
            // With several suites, a benchmark's id carries its suite.
            let name = if suites.len() > 1 {
                format!("{}/{}", entry.suite, bench.name)
            } else {
                bench.name.clone()
            };
            let id = BenchmarkId::parse(&name).with_context(|| {
                format!(
                    "{}: commit {}: benchmark {name:?}",
                    path.display(),
                    entry.commit
                )
            })?;
            let (lower, upper) = bench.interval.unwrap_or((bench.value, bench.value));
            let estimate = Estimate {
                point: bench.value,
                lower,
                upper,
                confidence_level: 0.95,
            };
            measurements.push(Measurement {
                id,
                throughput: None,
                mean: estimate,
                median: estimate,
                sampling_mode: Some("imported".to_owned()),
                custom: bench.metric.clone(),
                samples: Samples::single(bench.value),
            });
        }
    }
    for run in &mut runs {
        run.measurements.sort_by(|a, b| a.id.cmp(&b.id));
        run.measurements.dedup_by(|a, b| a.id == b.id);
    }
    Ok(runs)
}

/// `benchgate import-history`.
#[derive(clap::Args)]
pub struct Args {
    /// The `data.js` (from the `gh-pages` branch, e.g. `dev/bench/data.js`) or `data.json`.
    path: std::path::PathBuf,
    /// The repository, OWNER/NAME.
    #[arg(long)]
    repo: String,
    /// The branch the history was measured on.
    #[arg(long, default_value = "main")]
    branch: String,
    /// The machine's profile from `benchgate fingerprint --format json` [default: an
    /// `imported` profile of its own, so imported runs are never compared with new ones].
    #[arg(long, value_name = "FILE")]
    fingerprint: Option<std::path::PathBuf>,
    #[command(flatten)]
    store: super::StoreArgs,
}

/// Imports every entry as a stored run, all or none.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let Args {
        path,
        repo,
        branch,
        fingerprint,
        store,
    } = args;
    let db = store.db;
    let repository = RepositoryName::parse(&repo).context("--repo")?;
    let profile = match &fingerprint {
        Some(file) => super::ingest::read_profile_file(file)?,
        None => imported_profile(),
    };
    let runs = runs(&path, &repository, &branch, &profile)?;
    let store = Store::connect(&db).await?;
    // One transaction: a run that cannot be stored leaves the store as it was.
    let outcome = store.ingest_all(&runs).await;
    store.close().await;
    let created = outcome
        .with_context(|| format!("{}: nothing was imported", path.display()))?
        .iter()
        .filter(|o| matches!(o, IngestOutcome::Created(_)))
        .count();
    eprintln!(
        "benchgate: imported {} runs of {repository} from {} ({created} new), fingerprint {}",
        runs.len(),
        path.display(),
        profile.fingerprint().short()
    );
    Ok(0)
}
