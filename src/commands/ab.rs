//! `benchgate ab`: same-job A/B on this machine. Checks out base and head in git worktrees,
//! builds both, runs the bench command in counterbalanced rounds (A B, B A, A B, B A ...; never
//! A A B B) with a fresh Criterion output directory per run, stores every round, and decides
//! with the rounds as the unit of replication.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, bail};
use benchgate_collector::{
    CommitSha, HardwareProfile, Location, Measurement, NewRun, RepositoryName, RunKind, RunMeta,
    Store, criterion,
};
use benchgate_gate::Policy;
use benchgate_gate::decision::{
    BenchmarkResult, Decision, Input, Mode, NoiseSource, Plan, Verdict, evaluate_with, overall,
};
use benchgate_gate::report::{Context, SideBuild};

use super::decide::{Outputs, ReportArgs, decide_and_publish, load_policy, report};
use super::{KindArg, StoreArgs};
use crate::environment;
use crate::side_build::{self, CargoBench, KeptExecutable};

/// `benchgate ab`.
#[derive(clap::Args)]
pub struct Args {
    /// The base ref (branch, tag or SHA).
    #[arg(long, value_name = "REF")]
    base_ref: String,
    /// The head ref.
    #[arg(long, value_name = "REF")]
    head_ref: String,
    /// Exactly this many rounds, each running base and head once, in turn first (A B, B A, ...)
    /// [default: adaptive, from 2 rounds to --max-rounds, re-running only the benchmarks still
    /// undecided].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: Option<u32>,
    /// The most rounds adaptive A/B runs.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(2..=100))]
    max_rounds: u32,
    /// Stop adding rounds once benchmarking has taken this long (e.g. `10m`); the benchmarks
    /// still undecided then read `inconclusive`.
    #[arg(long, value_parser = humantime::parse_duration)]
    budget: Option<Duration>,
    #[command(flatten)]
    store: StoreArgs,
    /// The kind the rounds are stored as.
    #[arg(long, value_enum, default_value_t = KindArg::Local)]
    kind: KindArg,
    /// The repository, OWNER/NAME [default: as for ingest].
    #[arg(long)]
    repo: Option<String>,
    /// The cargo target directory both sides of a `cargo bench` build into (dependencies
    /// built once; each side's own crates always compiled afresh). One `ab` at a time per
    /// directory [default: benchgate-ab/target beside the Criterion output].
    #[arg(long, value_name = "DIR")]
    target_dir: Option<PathBuf>,
    /// Go on when base and head build byte-identical executables although their code
    /// differs (a change that compiles to the same machine code).
    #[arg(long)]
    allow_identical_builds: bool,
    /// Also count instructions: run this gungraun bench command once in each checkout before the
    /// rounds (e.g. `cargo bench -p mycrate --bench instructions`; Valgrind and gungraun-runner
    /// must be installed), and store its counts with the first round. Counts are exact, so one
    /// run a side decides them.
    #[arg(long, value_name = "COMMAND")]
    instructions: Option<String>,
    #[command(flatten)]
    report: ReportArgs,
    /// The bench command, run in each checkout, e.g. `cargo bench`.
    #[arg(last = true, required = true, value_name = "BENCH COMMAND")]
    command: Vec<String>,
}

/// Builds, runs the rounds, decides, reports, and with `--publish` publishes.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let options = Options {
        target_dir: args.target_dir.as_deref(),
        allow_identical_builds: args.allow_identical_builds,
        base_ref: &args.base_ref,
        head_ref: &args.head_ref,
        rounds: match args.rounds {
            Some(rounds) => Rounds::Fixed(rounds as usize),
            None => Rounds::Adaptive {
                max: args.max_rounds as usize,
                budget: args.budget,
                stop_futile: true,
            },
        },
        command: &args.command,
        instructions: args.instructions.as_deref(),
        db: &args.store.db,
        kind: args.kind.into(),
        branch: None,
        repo: args.repo.as_deref(),
        config: args.report.config.as_deref(),
    };
    decide_and_publish(
        &args.report,
        args.repo.as_deref(),
        &args.store.db,
        None,
        ab(&options, &args.report.outputs()),
    )
    .await
}

/// What `ab` (and `bisect`, for each of its probes) needs to know.
pub(super) struct Options<'a> {
    /// The base ref (branch, tag or SHA).
    pub base_ref: &'a str,
    /// The head ref.
    pub head_ref: &'a str,
    /// Rounds: each runs base once and head once.
    pub rounds: Rounds,
    /// The bench command, run in each worktree.
    pub command: &'a [String],
    /// The gungraun bench command (whitespace-separated), run once in each worktree.
    pub instructions: Option<&'a str>,
    /// The store every round is ingested into.
    pub db: &'a Location,
    /// The kind the rounds are stored as.
    pub kind: RunKind,
    /// The branch the rounds are stored under (`bisect`'s probes: `benchgate/bisect`, which no trend shows).
    pub branch: Option<&'a str>,
    /// The repository, when not inferred.
    pub repo: Option<&'a str>,
    /// The policy file.
    pub config: Option<&'a Path>,
    /// The shared cargo target directory, when not the default.
    pub target_dir: Option<&'a Path>,
    /// Compare even when the builds are identical and the code is not.
    pub allow_identical_builds: bool,
}

/// How many rounds run.
#[derive(Clone, Copy)]
pub(super) enum Rounds {
    /// Exactly this many.
    Fixed(usize),
    /// From 2 to `max`, each round after the second running only the undecided benchmarks,
    /// until none is left, `max` is reached, or benchmarking has taken `budget`. With
    /// `stop_futile`, a benchmark more rounds would hardly decide is stopped too (`ab`, where
    /// an undecided benchmark only costs CI time); a bisection's probe runs on to `max`, as an
    /// inconclusive probe leaves the whole search unresolved.
    Adaptive {
        max: usize,
        budget: Option<Duration>,
        stop_futile: bool,
    },
}

impl Rounds {
    pub(super) fn max(self) -> usize {
        match self {
            Rounds::Fixed(n) => n,
            Rounds::Adaptive { max, .. } => max,
        }
    }

    pub(super) fn plan(self) -> Plan {
        match self {
            Rounds::Fixed(_) => Plan::Fixed,
            Rounds::Adaptive { max, .. } => Plan::adaptive(max),
        }
    }
}

/// A detached worktree, removed again when dropped.
pub(super) struct Worktree {
    pub(super) path: PathBuf,
}

impl Worktree {
    pub(super) fn add(path: PathBuf, commit: &CommitSha) -> anyhow::Result<Self> {
        if path.exists() {
            let _ = git(&["worktree", "remove", "--force", &path.to_string_lossy()]);
            let _ = std::fs::remove_dir_all(&path);
        }
        git(&[
            "worktree",
            "add",
            "--detach",
            "--force",
            &path.to_string_lossy(),
            commit.as_str(),
        ])
        .with_context(|| {
            format!(
                "cannot check out {} in a worktree at {}",
                commit.short(),
                path.display()
            )
        })?;
        Ok(Self { path })
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = git(&[
            "worktree",
            "remove",
            "--force",
            &self.path.to_string_lossy(),
        ]);
    }
}

pub(super) fn git(args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("git")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("cannot run git")?;
    if !output.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

pub(super) fn resolve(flag: &str, reference: &str) -> anyhow::Result<CommitSha> {
    let sha = git(&["rev-parse", "--verify", &format!("{reference}^{{commit}}")])
        .with_context(|| format!("{flag} {reference}: not a commit in this repository"))?;
    Ok(CommitSha::parse(&sha)?)
}

/// Runs a command in a worktree with `env` set (where its output goes, which target directory it
/// builds in); its output goes to standard error.
fn run_in(
    worktree: &Path,
    command: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
    what: &str,
) -> anyhow::Result<()> {
    let (program, args) = command.split_first().context("the command is empty")?;
    let status = Command::new(program)
        .args(args)
        .current_dir(worktree)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .with_context(|| format!("{what}: cannot run `{}`", command.join(" ")))?;
    if !status.success() {
        bail!("{what}: `{}` failed with {status}", command.join(" "));
    }
    Ok(())
}

/// Runs the gungraun bench `command` once in `side`'s worktree (its own `GUNGRAUN_HOME`, the
/// shared target directory) and reads the counts it saved.
fn count_instructions(
    side: &Side,
    command: &str,
    scratch: &Path,
    target_dir: &Path,
) -> anyhow::Result<Vec<Measurement>> {
    let words: Vec<&str> = command.split_whitespace().collect();
    if words.is_empty() {
        bail!("--instructions: the command is empty");
    }
    let what = format!(
        "counting instructions in {} ({})",
        side.name,
        side.commit.short()
    );
    eprintln!("benchgate: {what}: {command}");
    let home = scratch.join(format!("gungraun-{}", side.name));
    let _ = std::fs::remove_dir_all(&home);
    // The target directory is shared: cargo would take the other side's newer build of the
    // same crates for fresh, so this side's sources are made newer than it (see side_build).
    side_build::touch_tree(&side.worktree.path, SystemTime::now()).with_context(|| what.clone())?;
    run_in(
        &side.worktree.path,
        &words,
        &[
            ("GUNGRAUN_HOME", home.as_os_str()),
            ("GUNGRAUN_SAVE_SUMMARY", "json".as_ref()),
            ("CARGO_TARGET_DIR", target_dir.as_os_str()),
        ],
        &what,
    )
    .context("are Valgrind and a gungraun-runner of the crate's gungraun version installed?")?;
    benchgate_collector::gungraun::read_dir(&home).with_context(|| what.clone())
}

/// One side of the comparison: its commit, worktree, and (for `cargo bench`) the executables
/// built from its sources.
pub(super) struct Side {
    pub(super) name: String,
    pub(super) commit: CommitSha,
    pub(super) worktree: Worktree,
    pub(super) executables: Vec<KeptExecutable>,
}

impl Side {
    fn record(&self) -> SideBuild {
        SideBuild {
            side: self.name.clone(),
            commit: self.commit.to_string(),
            executables: self
                .executables
                .iter()
                .map(KeptExecutable::record)
                .collect(),
        }
    }
}

/// The Rust files under the built crates whose code (not comments or layout) differs between
/// the two commits.
fn code_changes(
    base: &CommitSha,
    head: &CommitSha,
    package_dirs: &[PathBuf],
) -> anyhow::Result<Vec<String>> {
    let mut args = vec![
        "diff".to_owned(),
        "--name-only".to_owned(),
        "--no-renames".to_owned(),
        base.to_string(),
        head.to_string(),
        "--".to_owned(),
    ];
    args.extend(package_dirs.iter().map(|dir| {
        let dir = dir.to_string_lossy();
        if dir.is_empty() {
            ".".to_owned()
        } else {
            dir.into_owned()
        }
    }));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let changed = git(&args)?;
    let mut differ = Vec::new();
    for path in changed.lines().filter(|p| p.ends_with(".rs")) {
        let version = |commit: &CommitSha| {
            git(&["show", &format!("{}:{path}", commit.as_str())]).unwrap_or_default()
        };
        if side_build::code_only(&version(base)) != side_build::code_only(&version(head)) {
            differ.push(path.to_owned());
        }
    }
    Ok(differ)
}

/// `benchgate ab`: returns the exit code (0 pass, inconclusive or no baseline; 1 regression).
async fn ab(args: &Options<'_>, outputs: &Outputs) -> anyhow::Result<u8> {
    if args.rounds.max() == 0 {
        bail!("--rounds: at least 1 (3 or more recommended on shared machines)");
    }
    if args.command.is_empty() {
        bail!("no bench command: give it after --, e.g. `benchgate ab ... -- cargo bench`");
    }
    let policy = load_policy(args.config)?;
    let base_commit = resolve("--base-ref", args.base_ref)?;
    let head_commit = resolve("--head-ref", args.head_ref)?;
    let repository = match args.repo {
        Some(name) => RepositoryName::parse(name).context("--repo")?,
        None => environment::repository()?,
    };
    let profile = environment::detect_profile()?;
    let scratch = scratch_dir("benchgate-ab")?;
    let target_dir = shared_target_dir(args.target_dir, &scratch)?;
    let mut sides = Vec::new();
    for (name, commit) in [("base", base_commit), ("head", head_commit)] {
        sides.push(Side {
            worktree: Worktree::add(scratch.join(name), &commit)?,
            name: name.to_owned(),
            commit,
            executables: Vec::new(),
        });
    }

    let bench = CargoBench::parse(args.command);
    if let Some(bench) = &bench {
        // One target directory, so the dependencies are built once; each side's crates are
        // compiled from its own sources and its executables kept aside (see side_build).
        let mut package_dirs = Vec::new();
        for side in &mut sides {
            let bin = scratch.join("bin").join(&side.name);
            for dir in build_side(side, bench, &target_dir, &bin)? {
                if !package_dirs.contains(&dir) {
                    package_dirs.push(dir);
                }
            }
        }
        if !args.allow_identical_builds {
            refuse_identical_builds(&sides, &package_dirs)?;
        }
    }

    let mut counts = Vec::new();
    if let Some(command) = args.instructions {
        for side in &sides {
            counts.push(count_instructions(side, command, &scratch, &target_dir)?);
        }
    }

    let store = Store::connect(args.db).await?;
    let result = run_rounds(
        &counts,
        args,
        &policy,
        bench.as_ref(),
        &store,
        [&sides[0], &sides[1]],
        None,
        &scratch,
        &target_dir,
        &repository,
        &profile,
    )
    .await;
    store.close().await;
    let ran = result?;

    let [base, head] = [&sides[0], &sides[1]];
    let context = Context {
        base: format!("{} ({})", args.base_ref, base.commit.short()),
        head: format!("{} ({})", args.head_ref, head.commit.short()),
        base_commit: Some(base.commit.to_string()),
        head_commit: Some(head.commit.to_string()),
        fingerprint: Some(profile.fingerprint().to_string()),
        source: None,
        builds: if bench.is_some() {
            vec![base.record(), head.record()]
        } else {
            Vec::new()
        },
    };
    let decision = ran.decide(&policy, args.rounds.plan());
    drop(sides);
    report(&decision, &context, &policy, outputs)
}

/// The scratch directory beside Criterion's output (`target/NAME`), absolute: the bench command
/// runs inside the worktrees.
pub(super) fn scratch_dir(name: &str) -> anyhow::Result<PathBuf> {
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    let scratch = environment::criterion_home()?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| top.join("target"))
        .join(name);
    std::path::absolute(&scratch).context("cannot resolve the scratch directory")
}

/// The cargo target directory every side builds into: `--target-dir`, else `scratch/target`.
pub(super) fn shared_target_dir(option: Option<&Path>, scratch: &Path) -> anyhow::Result<PathBuf> {
    match option {
        Some(dir) => std::path::absolute(dir).context("--target-dir: cannot resolve it"),
        None => Ok(scratch.join("target")),
    }
}

/// Builds `side`'s bench executables in its worktree and keeps them in `bin`; returns the
/// directories of the packages built.
pub(super) fn build_side(
    side: &mut Side,
    bench: &CargoBench,
    target_dir: &Path,
    bin: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    eprintln!(
        "benchgate: building {} ({})",
        side.name,
        side.commit.short()
    );
    let built = side_build::build(
        &side.worktree.path,
        bench,
        target_dir,
        bin,
        &format!("building {}", side.name),
    )?;
    for executable in &built.executables {
        eprintln!(
            "benchgate: {} {} sha256 {}",
            side.name,
            executable.target,
            &executable.sha256[..16]
        );
    }
    side.executables = built.executables;
    Ok(built.package_dirs)
}

/// Refuses to compare two builds whose executables are byte for byte the same although the
/// code of the crates they were built from differs: one side did not get its own build.
fn refuse_identical_builds(sides: &[Side], package_dirs: &[PathBuf]) -> anyhow::Result<()> {
    let [base, head] = sides else {
        return Ok(());
    };
    fn hashes(side: &Side) -> Vec<&str> {
        let mut hashes: Vec<&str> = side.executables.iter().map(|e| e.sha256.as_str()).collect();
        hashes.sort_unstable();
        hashes
    }
    if base.commit == head.commit || hashes(base) != hashes(head) {
        return Ok(());
    }
    let changed = code_changes(&base.commit, &head.commit, package_dirs)?;
    if changed.is_empty() {
        eprintln!(
            "benchgate: base and head built identical executables; their benchmarked crates differ in comments or layout only"
        );
        return Ok(());
    }
    bail!(
        "base ({}) and head ({}) built byte-identical bench executables, but the code of the benchmarked crates differs ({}): one side did not get its own build, so the comparison would measure the same binary twice; refusing to go on (pass --allow-identical-builds if the change really compiles to the same code)",
        base.commit.short(),
        head.commit.short(),
        changed.join(", ")
    )
}

/// The rounds run, and each benchmark's verdict as of the look that decided it.
pub(super) struct Ran {
    pub(super) base: Vec<Vec<Measurement>>,
    pub(super) head: Vec<Vec<Measurement>>,
    decided: HashMap<String, BenchmarkResult>,
}

impl Ran {
    /// The decision on every round; a benchmark decided early keeps the verdict of that look.
    pub(super) fn decide(&self, policy: &Policy, plan: Plan) -> Decision {
        decide(&self.base, &self.head, &self.decided, policy, plan)
    }
}

/// One look at `base` and `head`, with the benchmarks in `decided` kept as they were decided.
fn decide(
    base: &[Vec<Measurement>],
    head: &[Vec<Measurement>],
    decided: &HashMap<String, BenchmarkResult>,
    policy: &Policy,
    plan: Plan,
) -> Decision {
    let history = HashMap::new();
    let mut decision = evaluate_with(
        &Input {
            mode: Mode::SameJobAb,
            base_rounds: base,
            head_rounds: head,
            history: &history,
        },
        policy,
        plan,
    );
    for b in &mut decision.benchmarks {
        if let Some(frozen) = decided.get(&b.id) {
            *b = frozen.clone();
        }
    }
    decision.verdict = overall(&decision.benchmarks);
    decision
}

/// A Criterion filter matching exactly these benchmark ids.
fn filter_for(ids: &[&str]) -> String {
    let escaped: Vec<String> = ids
        .iter()
        .map(|id| {
            id.chars()
                .flat_map(|c| {
                    let special = "\\.+*?()|[]{}^$#&-~".contains(c);
                    special
                        .then_some('\\')
                        .into_iter()
                        .chain(std::iter::once(c))
                })
                .collect()
        })
        .collect();
    format!("^(?:{})$", escaped.join("|"))
}

/// Which side runs first in `round` (from 0): base in even rounds, head in odd ones (A B, B A,
/// A B, ...). A machine that drifts during the job (a neighbour settling in, caches or clocks
/// warming) slows whichever side runs second a little in every round; with a fixed order that
/// offset reads as a change the rounds agree on, so their spread cannot show it (on three of
/// the four A/A recordings of docs/accuracy.md, adaptive A/B let 6.7–7.1% of latency slowdowns
/// exactly at the limit through with A B A B, 3.6–4.2% with the order turned). Counterbalanced,
/// a steady drift cancels over each two rounds and the rest shows as spread, which the bands
/// account for.
fn order(round: usize) -> [usize; 2] {
    if round.is_multiple_of(2) {
        [0, 1]
    } else {
        [1, 0]
    }
}

/// Runs the rounds A B, B A, ... ([`order`]), storing each, of every benchmark or with `only`,
/// of those ids.
/// Adaptive: after every round from the second, the benchmarks decided so far are set aside,
/// and the next round runs only the others.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_rounds(
    counts: &[Vec<Measurement>],
    args: &Options<'_>,
    policy: &Policy,
    bench: Option<&CargoBench>,
    store: &Store,
    sides: [&Side; 2],
    only: Option<Vec<String>>,
    scratch: &Path,
    target_dir: &Path,
    repository: &RepositoryName,
    profile: &HardwareProfile,
) -> anyhow::Result<Ran> {
    let fingerprint = profile.fingerprint();
    let mut rounds: [Vec<Vec<Measurement>>; 2] = [Vec::new(), Vec::new()];
    let mut decided: HashMap<String, BenchmarkResult> = HashMap::new();
    let mut undecided: Option<Vec<String>> = only.filter(|_| bench.is_some());
    let mut benchmarking = Duration::ZERO;
    let max = args.rounds.max();
    for round in 0..max {
        let filter = undecided
            .as_ref()
            .map(|ids| filter_for(&ids.iter().map(String::as_str).collect::<Vec<_>>()));
        for index in order(round) {
            let side = sides[index];
            let what = format!(
                "round {}/{}{}: {} ({})",
                round + 1,
                max,
                match &undecided {
                    Some(ids) => format!(", {} undecided", ids.len()),
                    None => String::new(),
                },
                side.name,
                side.commit.short()
            );
            eprintln!("benchgate: {what}");
            let criterion_home = scratch.join(format!("criterion-{}-{}", side.name, round + 1));
            let _ = std::fs::remove_dir_all(&criterion_home);
            let started = Instant::now();
            match bench {
                Some(bench) => side_build::run(
                    &side.executables,
                    bench,
                    filter.as_deref(),
                    &criterion_home,
                    target_dir,
                    &what,
                )?,
                // A command that builds as it runs gets a target directory per side, so
                // neither side can run the other's build.
                None => run_in(
                    &side.worktree.path,
                    &args.command.iter().map(String::as_str).collect::<Vec<_>>(),
                    &[
                        ("CRITERION_HOME", criterion_home.as_os_str()),
                        (
                            "CARGO_TARGET_DIR",
                            scratch.join(format!("target-{}", side.name)).as_os_str(),
                        ),
                    ],
                    &what,
                )?,
            }
            benchmarking += started.elapsed();
            let mut measurements =
                criterion::read_tree(&criterion_home, criterion::DEFAULT_BASELINE)
                    .with_context(|| what.clone())?;
            // The side's instruction counts go with its first round: exact, they need no more.
            if round == 0
                && let Some(counted) = counts.get(index)
            {
                for count in counted {
                    if measurements.iter().any(|m| m.id == count.id) {
                        bail!(
                            "{what}: benchmark {:?} is both a Criterion benchmark and a gungraun count",
                            count.id.as_str()
                        );
                    }
                }
                measurements.extend(counted.iter().cloned());
                measurements.sort_by(|a, b| a.id.cmp(&b.id));
            }
            let attempt = store
                .last_attempt(repository, &side.commit, &fingerprint, args.kind)
                .await?
                + 1;
            let run = NewRun {
                meta: RunMeta {
                    repository: repository.clone(),
                    commit: side.commit.clone(),
                    branch: args.branch.map(str::to_owned),
                    kind: args.kind,
                    pr_number: None,
                    attempt,
                },
                profile: profile.clone(),
                recorded_at: SystemTime::now(),
                measurements,
            };
            store
                .ingest(&run)
                .await
                .with_context(|| format!("{what}: storing the run"))?;
            rounds[index].push(run.measurements);
        }
        let Rounds::Adaptive {
            budget,
            stop_futile,
            ..
        } = args.rounds
        else {
            continue;
        };
        if round + 1 < 2 {
            continue;
        }
        let so_far = decide(
            &rounds[0],
            &rounds[1],
            &HashMap::new(),
            policy,
            args.rounds.plan(),
        );
        let mut stopped = Vec::new();
        for b in &so_far.benchmarks {
            if b.ratio.is_some()
                && b.rounds == round + 1
                && (b.verdict != Verdict::Inconclusive || (b.futile && stop_futile))
                && !decided.contains_key(&b.id)
            {
                if b.futile {
                    stopped.push(b.id.as_str());
                }
                decided.insert(b.id.clone(), b.clone());
            }
        }
        if !stopped.is_empty() {
            eprintln!(
                "benchgate: stopped after {} rounds, more unlikely to decide them: {}",
                round + 1,
                stopped.join(", ")
            );
        }
        // Counts were decided by their one run; only wall time takes more rounds.
        let open: Vec<String> = so_far
            .benchmarks
            .iter()
            .filter(|b| b.noise_source != Some(NoiseSource::Exact))
            .filter(|b| b.ratio.is_some() && !decided.contains_key(&b.id))
            .map(|b| b.id.clone())
            .collect();
        if open.is_empty() {
            eprintln!(
                "benchgate: every benchmark decided after {} rounds",
                round + 1
            );
            break;
        }
        if let Some(budget) = budget.filter(|b| benchmarking >= *b) {
            eprintln!(
                "benchgate: the benchmarking budget ({}) is spent after {} rounds; {} benchmarks stay undecided",
                humantime::format_duration(budget),
                round + 1,
                open.len()
            );
            break;
        }
        // A command that is not `cargo bench` cannot be told which benchmarks to run.
        if bench.is_some() {
            undecided = Some(open);
        }
    }
    let [base, head] = rounds;
    Ok(Ran {
        base,
        head,
        decided,
    })
}
