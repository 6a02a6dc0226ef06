//! `benchgate ingest`: a Criterion tree (or cargo-criterion messages) and any custom metrics,
//! read and checked whole, then stored as one run.

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context as _, bail};
use benchgate_collector::callgrind::Profile;
use benchgate_collector::{
    BenchmarkId, CommitSha, HardwareProfile, IngestOutcome, Measurement, NewRun, RepositoryName,
    RunMeta, Store, cargo_criterion, criterion, gungraun,
};

use super::{KindArg, StoreArgs};
use crate::bench_command::CargoBench;
use crate::{environment, render, side_build};

/// `benchgate ingest`; also what `upload` reads.
#[derive(clap::Args)]
#[group(id = "ingest_args")]
pub struct Args {
    /// The Criterion output directory [default: the cargo target directory's `criterion/`].
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// The repository, OWNER/NAME [default: $GITHUB_REPOSITORY, else the `origin` remote, else
    /// local/<directory>].
    #[arg(long)]
    repo: Option<String>,
    /// The full 40-hex commit SHA measured [default: `git rev-parse HEAD`].
    #[arg(long)]
    commit: Option<String>,
    /// The branch measured [default: $GITHUB_HEAD_REF, $GITHUB_REF_NAME, else the checked-out
    /// branch].
    #[arg(long)]
    branch: Option<String>,
    /// Why the run was made.
    #[arg(long, value_enum, default_value_t = KindArg::Local)]
    kind: KindArg,
    /// The pull request number, for `--kind pr`.
    #[arg(long)]
    pr: Option<u64>,
    /// The attempt under the same (repository, commit, fingerprint, kind); CI re-runs count up.
    /// `next`: the one after the highest stored, unless one of them already holds these very
    /// results (a nightly run of a commit measured the night before, a re-run workflow; what
    /// the Action passes).
    #[arg(long, default_value = "1", value_parser = parse_attempt, value_name = "N|next")]
    pub attempt: Attempt,
    /// Read this saved baseline (`--save-baseline NAME`) instead of the latest results (`new`).
    #[arg(long, default_value = criterion::DEFAULT_BASELINE)]
    baseline: String,
    /// Read `cargo criterion --message-format=json` output from FILE, or `-` for standard input.
    #[arg(long, value_name = "FILE|-", conflicts_with = "path")]
    cargo_criterion_json: Option<PathBuf>,
    /// The machine's profile from `benchgate fingerprint --format json` [default: this machine].
    #[arg(long, value_name = "FILE")]
    fingerprint: Option<PathBuf>,
    /// Overwrite a stored run with the same key but different results.
    #[arg(long)]
    replace: bool,
    /// Store the results Criterion's tree holds from before this run too. By default a
    /// benchmark whose results were written over an hour before the next newer one's (one the
    /// latest `cargo bench` did not run: renamed, removed or filtered out) is left out, and
    /// named.
    #[arg(long)]
    keep_older: bool,
    /// Custom metrics to store beside Criterion's, from a JSON file in Bencher's metric format
    /// (`{"bench": {"measure": {"value", "lower_value", "upper_value" | "samples", "unit",
    /// "direction"}}}`); repeatable. Without Criterion output, the run holds the metrics alone.
    #[arg(long, value_name = "FILE")]
    metrics: Vec<PathBuf>,
    /// gungraun's output directory, whose `**/summary.json` files (`-- --save-summary=json`)
    /// hold instruction counts to store beside Criterion's times [default: the target
    /// directory's `gungraun/` (or $GUNGRAUN_HOME) when it exists and no PATH is given].
    #[arg(long, value_name = "DIR")]
    gungraun: Option<PathBuf>,
    /// The bench command that wrote the results (e.g. `cargo bench --workspace`). For a
    /// `cargo bench` command, nothing is stored when two of its executables name one benchmark:
    /// Criterion keeps one result per id, so the tree holds only the one that ran last.
    #[arg(last = true, value_name = "BENCH COMMAND")]
    pub command: Vec<String>,
}

/// `--attempt`: a number, or the next free one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// This attempt.
    Number(u32),
    /// The one after the highest stored under the run's key.
    Next,
}

fn parse_attempt(text: &str) -> Result<Attempt, String> {
    match text {
        "next" => Ok(Attempt::Next),
        _ => match text.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(Attempt::Number(n)),
            _ => Err(format!("{text:?}: an attempt is 1 or more, or `next`")),
        },
    }
}

/// The run `ingest` (or `upload`) reads: everything checked, nothing stored yet.
///
/// What comes from outside the tree (the commit, repository and branch from git, the hardware
/// profile from `rustc -vV` and the system) is asked for on its own thread while the tree is
/// read: the child processes take as long as the read itself (docs/speed.md, "Fifth pass").
/// Errors keep their order: the commit's, the repository's, the tree's, then the profile's.
pub fn read_new_run(args: &Args) -> anyhow::Result<NewRun> {
    let commit = args
        .commit
        .as_deref()
        .map(|sha| CommitSha::parse(sha).context("--commit"))
        .transpose()?;
    let repository = args
        .repo
        .as_deref()
        .map(|name| RepositoryName::parse(name).context("--repo"))
        .transpose()?;
    if args.pr == Some(0) {
        bail!("--pr: a pull request number is positive");
    }
    if let Some(bench) = CargoBench::parse(&args.command).context("the bench command after `--`")? {
        let checking = "checking the bench command (Criterion's --list)";
        if let Some(why) = side_build::ids_shared_in_place(&bench, checking) {
            bail!(
                "{checking}: {why}; nothing was stored, as the tree holds only the result of the executable that ran last"
            );
        }
    }
    let (outside, measurements) = std::thread::scope(|scope| {
        let outside = scope.spawn(|| Outside {
            commit: commit.map_or_else(environment::head_commit, Ok),
            repository: repository.map_or_else(environment::repository, Ok),
            branch: args.branch.clone().or_else(environment::branch),
            profile: match &args.fingerprint {
                Some(path) => read_profile_file(path),
                None => environment::detect_profile(),
            },
        });
        let measurements = read_measurements(args);
        // A panic there is a bug: it goes on as one here.
        let outside = outside
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (outside, measurements)
    });
    let commit = outside.commit?;
    let repository = outside.repository?;
    let (measurements, function_costs) = measurements?;
    let profile = outside.profile?;

    Ok(NewRun {
        meta: RunMeta {
            repository,
            commit,
            branch: outside.branch,
            kind: args.kind.into(),
            pr_number: args.pr,
            // `next`'s attempt is the store's to choose.
            attempt: match args.attempt {
                Attempt::Number(n) => n,
                Attempt::Next => 1,
            },
        },
        profile,
        recorded_at: SystemTime::now(),
        measurements,
        function_costs,
    })
}

/// Instruction counts' profiles by function, by the count's id.
type FunctionCosts = BTreeMap<BenchmarkId, Profile>;

/// What a run takes from outside its measurements.
struct Outside {
    commit: anyhow::Result<CommitSha>,
    repository: anyhow::Result<RepositoryName>,
    branch: Option<String>,
    profile: anyhow::Result<HardwareProfile>,
}

/// The run's measurements: Criterion's tree (or cargo-criterion's messages), gungraun's counts
/// and the metrics files, each benchmark once, sorted by id; and the counts' profiles by
/// function from gungraun's Callgrind files.
fn read_measurements(args: &Args) -> anyhow::Result<(Vec<Measurement>, FunctionCosts)> {
    let gungraun = match &args.gungraun {
        Some(dir) => Some(dir.clone()),
        // Beside Criterion's default tree only: a named tree is read alone.
        None if args.path.is_none() && args.cargo_criterion_json.is_none() => {
            Some(environment::gungraun_home()).filter(|dir| dir.is_dir())
        }
        None => None,
    };
    let mut measurements = match &args.cargo_criterion_json {
        Some(source) if source.as_os_str() == "-" => {
            cargo_criterion::read_messages(std::io::stdin().lock(), Path::new("-"))?
        }
        Some(source) => {
            let file = std::fs::File::open(source)
                .with_context(|| format!("{}: cannot open", source.display()))?;
            cargo_criterion::read_messages(BufReader::new(file), source)?
        }
        None => {
            let root = match &args.path {
                Some(path) => path.clone(),
                None => environment::criterion_home()?,
            };
            match criterion::read_tree_dated(&root, &args.baseline) {
                // With custom metrics or counts and no directory named, Criterion output is
                // optional.
                Err(
                    benchgate_collector::Error::MissingDirectory { .. }
                    | benchgate_collector::Error::EmptyTree { .. },
                ) if (!args.metrics.is_empty() || gungraun.is_some()) && args.path.is_none() => {
                    Vec::new()
                }
                Err(
                    e @ (benchgate_collector::Error::MissingDirectory { .. }
                    | benchgate_collector::Error::EmptyTree { .. }),
                ) if !args.command.is_empty() && args.path.is_none() => {
                    // `ab` and `gate` run the command after `--`; `ingest` only names it.
                    return Err(anyhow::Error::new(e).context(format!(
                        "no results of the bench command: `ingest` reads what `{}` wrote and does not run it; run it first, then `benchgate ingest`",
                        args.command.join(" ")
                    )));
                }
                other => this_run(other?, &root, args.keep_older),
            }
        }
    };
    let mut extra: Vec<(PathBuf, Vec<benchgate_collector::Measurement>)> = Vec::new();
    let mut function_costs = BTreeMap::new();
    if let Some(dir) = gungraun {
        let read = gungraun::read_dir_with_costs(&dir)?;
        eprintln!(
            "benchgate: read {} instruction-count measurements from {}, {} with a profile by function",
            read.measurements.len(),
            dir.display(),
            read.costs.len()
        );
        for note in read.notes {
            eprintln!("benchgate: {note}");
        }
        function_costs = read.costs;
        extra.push((dir, read.measurements));
    }
    for file in &args.metrics {
        extra.push((file.clone(), benchgate_collector::metrics::read_file(file)?));
    }
    for (file, read) in extra {
        benchgate_collector::merge_measurements(&mut measurements, read).map_err(|id| {
            anyhow::anyhow!(
                "{}: benchmark {:?} is measured twice (in Criterion's output, gungraun's or a metrics file)",
                file.display(),
                id.as_str()
            )
        })?;
    }
    measurements.sort_by(|a, b| a.id.cmp(&b.id));
    Ok((measurements, function_costs))
}

/// The measurements of `dated` this run wrote: with `keep_older`, all of them; else without
/// those [`criterion::left_behind`] finds, which a line on stderr names.
fn this_run(
    dated: Vec<(Measurement, Option<SystemTime>)>,
    root: &Path,
    keep_older: bool,
) -> Vec<Measurement> {
    let older = criterion::left_behind(&dated, criterion::RUN_GAP);
    if !older.is_empty() && !keep_older {
        let newest_of_run = dated
            .iter()
            .enumerate()
            .filter(|(i, _)| !older.contains(i))
            .filter_map(|(_, (_, when))| *when)
            .min();
        let newest_left = older.last().and_then(|&i| dated[i].1);
        let before = match (newest_of_run, newest_left) {
            (Some(run), Some(left)) => run
                .duration_since(left)
                .map(|d| format!(", the newest of them {} before this run's", age(d)))
                .unwrap_or_default(),
            _ => String::new(),
        };
        let named: Vec<String> = older
            .iter()
            .rev()
            .take(3)
            .map(|&i| format!("`{}`", dated[i].0.id.as_str()))
            .collect();
        eprintln!(
            "benchgate: left out {} of {} results in {} written before this run{before} ({}{}): the bench command did not run them this time (renamed, removed or filtered out?); --keep-older stores them too",
            older.len(),
            dated.len(),
            root.display(),
            named.join(", "),
            if older.len() > named.len() {
                ", …"
            } else {
                ""
            },
        );
        let mut keep = vec![true; dated.len()];
        for &i in &older {
            keep[i] = false;
        }
        return dated
            .into_iter()
            .zip(keep)
            .filter_map(|((m, _), kept)| kept.then_some(m))
            .collect();
    }
    dated.into_iter().map(|(m, _)| m).collect()
}

/// A pause in the largest whole unit it holds: `3 days`, `1 hour`, `40 minutes`.
fn age(pause: std::time::Duration) -> String {
    const HOUR: u64 = 60;
    const DAY: u64 = 24 * HOUR;
    let minutes = (pause.as_secs() + 30) / 60;
    let (n, unit) = match minutes {
        m if m >= 2 * DAY => ((m + DAY / 2) / DAY, "day"),
        m if m >= HOUR => ((m + HOUR / 2) / HOUR, "hour"),
        m => (m, "minute"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// Reads, checks and stores the run; prints its id.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    if args.replace && args.attempt == Attempt::Next {
        bail!("--replace swaps out the run under one key: give it --attempt N, not next");
    }
    // Everything is read and checked before the store is opened: bad input leaves it untouched.
    let run = read_new_run(&args)?;
    let store = Store::connect(&args.store.db).await?;
    let outcome = if args.replace {
        store.replace(&run).await
    } else if args.attempt == Attempt::Next {
        store.ingest_next_attempt(&run).await
    } else {
        store.ingest(&run).await
    };
    // The attempt the run is stored under, where the store chose it.
    let attempt = match (&outcome, args.attempt) {
        (Ok(stored), Attempt::Next) => Some(store.run_summary(stored.run_id()).await),
        _ => None,
    };
    store.close().await;
    let outcome = outcome?;
    let attempt = match attempt.transpose()? {
        Some(summary) => summary.meta.attempt,
        None => run.meta.attempt,
    };
    let what = match outcome {
        IngestOutcome::Created(_) => "stored".to_owned(),
        IngestOutcome::Unchanged(_) => "already stored, unchanged:".to_owned(),
        IngestOutcome::Replaced { previous, .. } => format!("replaced run {previous} with"),
    };
    eprintln!(
        "benchgate: {what} run {} — {} benchmarks of {}@{} ({}{}, fingerprint {}) in {}",
        outcome.run_id(),
        run.measurements.len(),
        run.meta.repository,
        run.meta.commit.short(),
        run.meta.kind,
        if attempt > 1 {
            format!(", attempt {attempt}")
        } else {
            String::new()
        },
        run.profile.fingerprint().short(),
        args.store.db
    );
    println!("{}", outcome.run_id());
    Ok(0)
}

/// Reads a profile written by `benchgate fingerprint --format json`, checking its hash.
pub fn read_profile_file(path: &Path) -> anyhow::Result<HardwareProfile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let file: render::ProfileFile = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a `benchgate fingerprint --format json` file",
            path.display()
        )
    })?;
    let computed = file.profile.fingerprint();
    if computed.as_str() != file.fingerprint {
        bail!(
            "{}: field `fingerprint` is {} but the profile hashes to {computed}; the file was edited or comes from another benchgate version",
            path.display(),
            file.fingerprint
        );
    }
    Ok(file.profile)
}

#[cfg(test)]
mod tests {
    use super::age;
    use std::time::Duration;

    #[test]
    fn a_pause_is_said_in_its_largest_whole_unit_rounded() {
        let minutes = |m: u64| Duration::from_secs(60 * m);
        assert_eq!(age(minutes(1)), "1 minute");
        assert_eq!(age(minutes(59)), "59 minutes");
        assert_eq!(age(minutes(61)), "1 hour");
        assert_eq!(age(minutes(150)), "3 hours");
        assert_eq!(age(minutes(47 * 60)), "47 hours");
        assert_eq!(age(minutes(3 * 24 * 60 - 20)), "3 days");
    }
}
