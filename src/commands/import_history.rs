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

/// The profile of an imported suite's runs: the suite is the machine (a matrix entry's OS,
/// runner or GPU), its fingerprint from the repository and the suite's name.
pub fn imported_suite_profile(repository: &RepositoryName, suite: &str) -> HardwareProfile {
    HardwareProfile {
        cpu_brand: format!("imported suite {suite}"),
        runner_image: Some(format!("github-action-benchmark history of {repository}")),
        ..imported_profile()
    }
}

/// What a history's suites (the keys under `entries`) are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Suites {
    /// Read from the history: machines where two suites measure a benchmark of one name (a
    /// matrix: the same benchmarks on each OS, runner or toolchain), prefixes where the suites
    /// measure different benchmarks at the same commits (one job's bench targets, each stored
    /// as a suite: tokio's `sync_mpsc`, `rt_multi_threaded`, …), machines again where they
    /// measured different commits
    Auto,
    /// Each suite is a machine of its own (a matrix's OS, runner or toolchain): its own
    /// profile, index and history.
    Machines,
    /// The suites ran on one machine: one run per commit, each benchmark's id prefixed with its
    /// suite (`suite/name`).
    Prefix,
}

/// How many of all the commits every suite must have measured for suites of different
/// benchmarks to read as one job's bench targets: 4 in 5 (hyper's two suites share 439 of 440
/// commits, tokio's four 409 of 412).
const SHARED_COMMITS: f64 = 0.8;

/// What [`Suites::Auto`] reads `entries`' suites as (any other mode is kept): see there.
pub fn read_suites(entries: &[history::Entry], mode: Suites) -> Suites {
    if mode != Suites::Auto {
        return mode;
    }
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut commits: HashMap<&str, std::collections::HashSet<&str>> = HashMap::new();
    for entry in entries {
        commits
            .entry(entry.suite.as_str())
            .or_default()
            .insert(entry.commit.as_str());
        for bench in &entry.benches {
            let suite = *names
                .entry(bench.name.as_str())
                .or_insert(entry.suite.as_str());
            if suite != entry.suite {
                return Suites::Machines;
            }
        }
    }
    if commits.len() < 2 {
        return Suites::Machines;
    }
    let all: std::collections::HashSet<&str> = commits.values().flatten().copied().collect();
    let every = all
        .iter()
        .filter(|c| commits.values().all(|measured| measured.contains(*c)))
        .count();
    if every as f64 >= SHARED_COMMITS * all.len() as f64 {
        Suites::Prefix
    } else {
        Suites::Machines
    }
}

/// One run per commit measurement, oldest first; what the suites were read as ([`Suites::Auto`]
/// resolved, see [`read_suites`]) and how many there were. With [`Suites::Machines`] each suite (each
/// key under `entries`) is its own machine ([`imported_suite_profile`]), whether it shares its
/// file with other suites or has a file of its own (a project that keeps its latency, its
/// throughput and its memory in three histories); `profile` (`--fingerprint`) names the one
/// machine of a history of one suite. With [`Suites::Prefix`] the suites' entries of the same
/// commit are one run on `profile` (else the `imported` one) whose benchmarks carry their
/// suite (`suite/name`). A commit measured again within a suite is the next attempt.
/// Each value becomes one sample (the history kept no samples); its `range` (`± N` or
/// `[low, high]`), when readable, becomes the interval.
pub fn runs(
    path: &Path,
    repository: &RepositoryName,
    branch: &str,
    profile: Option<&HardwareProfile>,
    mode: Suites,
) -> anyhow::Result<(Vec<NewRun>, Suites, usize)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let entries = history::read(path, &text)?;
    let mode = read_suites(&entries, mode);
    let suites: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e.suite.as_str()).collect();
    let machines = mode == Suites::Machines && (suites.len() > 1 || profile.is_none());
    let prefixed = suites.len() > 1 && mode == Suites::Prefix;
    let profile = profile.cloned().unwrap_or_else(imported_profile);
    // (machine, commit, attempt) → the run's index; attempts count per (commit, suite).
    let mut attempts: HashMap<(&str, &str), u32> = HashMap::new();
    let mut index: HashMap<(&str, &str, u32), usize> = HashMap::new();
    let mut runs: Vec<NewRun> = Vec::new();
    for entry in &entries {
        let attempt = *attempts
            .entry((entry.commit.as_str(), entry.suite.as_str()))
            .and_modify(|a| *a += 1)
            .or_insert(1);
        let machine = if machines { entry.suite.as_str() } else { "" };
        let run = *index
            .entry((machine, entry.commit.as_str(), attempt))
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
                profile: if machines {
                    imported_suite_profile(repository, &entry.suite)
                } else {
                    profile.clone()
                },
                recorded_at: UNIX_EPOCH + Duration::from_millis(entry.date_ms),
                measurements: Vec::new(),
                function_costs: Default::default(),
            });
        }
        let measurements = &mut runs[run].measurements;
        for bench in &entry.benches {
            // With several suites on one machine, a benchmark's id carries its suite.
            let name = if prefixed {
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
    Ok((runs, mode, suites.len()))
}

/// A history of one suite that an earlier benchgate stored on the one `imported` profile of
/// every single-suite history (before each suite was a machine of its own) stays there: `runs`
/// moves onto it when the store holds runs of `repository` there that share a benchmark with
/// them, so importing the history again adds to it rather than start a second machine.
/// Whether it did.
async fn keep_where_imported_before(
    store: &Store,
    repository: &RepositoryName,
    runs: &mut [NewRun],
) -> anyhow::Result<bool> {
    let profiles: std::collections::BTreeSet<_> =
        runs.iter().map(|r| r.profile.fingerprint()).collect();
    if profiles.len() != 1 {
        return Ok(false);
    }
    let earlier = imported_profile();
    let Some(last) = store
        .runs_on_fingerprint(repository, &earlier.fingerprint())
        .await?
        .pop()
    else {
        return Ok(false);
    };
    let stored = store.get_run(last.id).await?;
    let ids: std::collections::HashSet<&BenchmarkId> =
        stored.measurements.iter().map(|m| &m.id).collect();
    let shared = runs
        .iter()
        .flat_map(|r| &r.measurements)
        .any(|m| ids.contains(&m.id));
    if shared {
        for run in runs.iter_mut() {
            run.profile = earlier.clone();
        }
    }
    Ok(shared)
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
    /// The machine's profile from `benchgate fingerprint --format json`, for a history of one
    /// suite [default: each suite its own imported machine, "imported suite NAME", so imported
    /// runs are never compared with new ones].
    #[arg(long, value_name = "FILE")]
    fingerprint: Option<std::path::PathBuf>,
    /// What a history's several suites are: each its own machine, or prefixes of benchmark
    /// ids on one machine; `auto` reads which from the history.
    #[arg(long, value_enum, default_value = "auto")]
    suites: Suites,
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
        suites,
        store,
    } = args;
    let db = store.db;
    let repository = RepositoryName::parse(&repo).context("--repo")?;
    let profile = match &fingerprint {
        Some(file) => Some(super::ingest::read_profile_file(file)?),
        None => None,
    };
    let (mut runs, read_as, suite_count) =
        runs(&path, &repository, &branch, profile.as_ref(), suites)?;
    let prefixed_note = if read_as == Suites::Prefix && suites == Suites::Auto {
        format!(
            "; its {suite_count} suites measure different benchmarks at the same commits, as one job's bench targets do, so they are one machine and each id starts with its suite (--suites machines for a machine each)"
        )
    } else {
        String::new()
    };
    let mut machines: Vec<(String, String)> = runs
        .iter()
        .map(|r| {
            (
                r.profile.fingerprint().short().to_owned(),
                r.profile.cpu_brand.clone(),
            )
        })
        .collect();
    machines.sort();
    machines.dedup();
    if fingerprint.is_some() && machines.len() > 1 {
        anyhow::bail!(
            "{}: {} suites, each imported as a machine of its own, but --fingerprint names one machine; pass --suites prefix to store them all on it",
            path.display(),
            machines.len()
        );
    }
    let store = Store::connect(&db).await?;
    let kept = match profile {
        Some(_) => Ok(false),
        None => keep_where_imported_before(&store, &repository, &mut runs).await,
    };
    let kept = match kept {
        Ok(kept) => kept,
        Err(error) => {
            store.close().await;
            return Err(error);
        }
    };
    if kept {
        let earlier = imported_profile();
        machines = vec![(earlier.fingerprint().short().to_owned(), earlier.cpu_brand)];
    }
    // One transaction: a run that cannot be stored leaves the store as it was.
    let outcome = store.ingest_all(&runs).await;
    store.close().await;
    let created = outcome
        .with_context(|| format!("{}: nothing was imported", path.display()))?
        .iter()
        .filter(|o| matches!(o, IngestOutcome::Created(_)))
        .count();
    match machines.as_slice() {
        [(fingerprint, brand)] => eprintln!(
            "benchgate: imported {} runs of {repository} from {} ({created} new), fingerprint {fingerprint} ({brand}{}){prefixed_note}",
            runs.len(),
            path.display(),
            if kept {
                ", where an earlier import stored this history"
            } else {
                ""
            }
        ),
        _ => {
            eprintln!(
                "benchgate: imported {} runs of {repository} from {} ({created} new), one machine per suite (--suites prefix for one machine):",
                runs.len(),
                path.display(),
            );
            for (fingerprint, brand) in &machines {
                eprintln!("  {fingerprint}  {brand}");
            }
        }
    }
    Ok(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn entries(relative: &str) -> Vec<history::Entry> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/corpus")
            .join(relative);
        let text = std::fs::read_to_string(&path).unwrap();
        history::read(&path, &text).unwrap()
    }

    #[test]
    fn suites_of_different_benchmarks_at_the_same_commits_are_one_jobs_bench_targets() {
        // hyper: `end_to_end` (14 benchmarks) and `pipeline` (1), the same 12 commits.
        let hyper = entries("hyperium__hyper/dev/bench/data.js");
        assert_eq!(read_suites(&hyper, Suites::Auto), Suites::Prefix);
        // Asked for, either reading stands.
        assert_eq!(read_suites(&hyper, Suites::Machines), Suites::Machines);
        assert_eq!(read_suites(&hyper, Suites::Prefix), Suites::Prefix);

        // mountpoint-s3's throughput (MiB/s) and peak memory (MiB) suites, as one file would
        // hold them: both measure `seq_read_skip_17m`, so they are not one machine's targets.
        let mut mountpoint = entries("awslabs__mountpoint-s3/dev/bench/data.js");
        mountpoint.extend(entries(
            "awslabs__mountpoint-s3/dev/bench/peak_mem_usage/data.js",
        ));
        assert_eq!(read_suites(&mountpoint, Suites::Auto), Suites::Machines);

        // hyper's suites again, had each measured other commits (`pipeline` the older six,
        // `end_to_end` the newer six): not one job's.
        let mut seen = std::collections::HashSet::new();
        let commits: Vec<&str> = hyper
            .iter()
            .map(|e| e.commit.as_str())
            .filter(|c| seen.insert(*c))
            .collect();
        assert_eq!(commits.len(), 12);
        let (older, _) = commits.split_at(commits.len() / 2);
        let apart: Vec<history::Entry> = hyper
            .iter()
            .filter(|e| (e.suite == "pipeline") == older.contains(&e.commit.as_str()))
            .cloned()
            .collect();
        assert!(apart.iter().any(|e| e.suite == "pipeline"));
        assert!(apart.iter().any(|e| e.suite == "end_to_end"));
        assert_eq!(read_suites(&apart, Suites::Auto), Suites::Machines);

        // One suite is a machine of its own, as before.
        let safetensors = entries("huggingface__safetensors/dev/bench/data.js");
        assert_eq!(read_suites(&safetensors, Suites::Auto), Suites::Machines);
    }
}
