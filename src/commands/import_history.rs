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

/// One run per history entry, oldest first. A commit measured twice gets attempts 1, 2, ...
/// Each value becomes one sample (the history kept no samples); its `range` (`± N` or
/// `[low, high]`), when readable, becomes the interval.
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
    let mut attempts: HashMap<(String, String), u32> = HashMap::new();
    let mut runs = Vec::with_capacity(entries.len());
    for entry in &entries {
        let attempt = attempts
            .entry((entry.commit.clone(), entry.suite.clone()))
            .and_modify(|a| *a += 1)
            .or_insert(1);
        let mut measurements = Vec::with_capacity(entry.benches.len());
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
            let (lower, upper) = bench.interval_ns.unwrap_or((bench.ns, bench.ns));
            let estimate = Estimate {
                point: bench.ns,
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
                custom: None,
                samples: Samples::new(vec![1.0], vec![bench.ns]).map_err(|(field, reason)| {
                    anyhow::anyhow!(
                        "{}: commit {}: {name}: {field} {reason}",
                        path.display(),
                        entry.commit
                    )
                })?,
            });
        }
        measurements.sort_by(|a, b| a.id.cmp(&b.id));
        measurements.dedup_by(|a, b| a.id == b.id);
        runs.push(NewRun {
            meta: RunMeta {
                repository: repository.clone(),
                commit: CommitSha::parse(&entry.commit)?,
                branch: Some(branch.to_owned()),
                kind: RunKind::Push,
                pr_number: None,
                attempt: *attempt,
            },
            profile: profile.clone(),
            recorded_at: UNIX_EPOCH + Duration::from_millis(entry.date_ms),
            measurements,
        });
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
    let store = Store::open(&db).await?;
    let mut created = 0;
    let mut outcome = Ok(());
    for run in &runs {
        match store.ingest(run).await {
            Ok(IngestOutcome::Created(_)) => created += 1,
            Ok(_) => {}
            Err(e) => {
                outcome = Err(anyhow::Error::from(e).context(format!(
                    "{}: the entry of commit {}",
                    path.display(),
                    run.meta.commit
                )));
                break;
            }
        }
    }
    store.close().await;
    outcome?;
    eprintln!(
        "benchgate: imported {} runs of {repository} from {} ({created} new), fingerprint {}",
        runs.len(),
        path.display(),
        profile.fingerprint().short()
    );
    Ok(0)
}
