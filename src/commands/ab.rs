//! `benchgate ab`: same-job A/B on this machine. Checks out base and head in git worktrees,
//! builds both, runs the bench command in counterbalanced rounds (A B, B A, A B, B A ...; never
//! A A B B) with a fresh Criterion output directory per run, stores every round, and decides
//! with the rounds as the unit of replication.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
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
use benchgate_gate::report::{Context, Incomplete};

use super::decide::{Outputs, ReportArgs, decide_and_publish, load_policy, report};
use super::{KindArg, StoreArgs};
use crate::ab::side::{Side, Worktree, git};
use crate::bench_command::CargoBench;
use crate::environment;
use crate::side_build::{self, CommandFailed};

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
    /// Measure even when base and head build the same executables and nothing else the
    /// benchmarks could read changed (by default every benchmark then passes, not measured).
    #[arg(long)]
    measure_identical: bool,
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
        measure_identical: args.measure_identical,
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
    /// Measure even when the builds are identical and nothing else changed.
    pub measure_identical: bool,
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
    let (status, stderr_tail) = side_build::run_teeing_stderr(
        Command::new(program)
            .args(args)
            .current_dir(worktree)
            .envs(env.iter().copied()),
    )
    .with_context(|| format!("{what}: cannot run `{}`", command.join(" ")))?;
    if !status.success() {
        return Err(CommandFailed {
            what: what.to_owned(),
            command: command.join(" "),
            status,
            stderr_tail,
        }
        .into());
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

/// `benchgate ab`: returns the exit code (0 pass, inconclusive or no baseline; 1 regression;
/// 2 a job that stopped early, after its report).
async fn ab(args: &Options<'_>, outputs: &Outputs) -> anyhow::Result<u8> {
    if args.rounds.max() == 0 {
        bail!("--rounds: at least 1 (3 or more recommended on shared machines)");
    }
    if args.command.is_empty() {
        bail!("no bench command: give it after --, e.g. `benchgate ab ... -- cargo bench`");
    }
    let bench = CargoBench::parse(args.command).context("the bench command")?;
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
    for (name, commit, reference) in [
        ("base", base_commit, args.base_ref),
        ("head", head_commit, args.head_ref),
    ] {
        sides.push(Side {
            worktree: Worktree::add(scratch.join(name), &commit)?,
            name: name.to_owned(),
            commit,
            executables: Vec::new(),
            sources: Default::default(),
            branch: crate::ab::branch_of(reference),
        });
    }
    let mut notes = Vec::new();
    if let Some(lockfile) = crate::ab::lockfile::align(&sides, bench.as_ref())? {
        eprintln!("benchgate: {lockfile}");
        notes.push(lockfile);
    }

    let mut not_measured = None;
    if let Some(bench) = &bench {
        for dropped in &bench.dropped {
            eprintln!(
                "benchgate: leaving out `{dropped}`: every round writes a fresh Criterion directory, with no saved baseline in it"
            );
        }
        // One target directory, so the dependencies are built once; each side's crates are
        // compiled from its own sources and its executables kept aside (see side_build).
        for side in &mut sides {
            let bin = scratch.join("bin").join(&side.name);
            build_side(side, bench, &target_dir, &bin)?;
        }
        let pair = [&sides[0], &sides[1]];
        let listed = crate::ab::check_bench_command(pair, bench, &scratch, &target_dir)?;
        let builds = crate::ab::identical::compare(pair, &listed, args.allow_identical_builds)?;
        if let Some(note) = builds.note() {
            eprintln!("benchgate: {note}");
            notes.push(note);
        }
        // The instruction bench is another executable, not compared here: a change to it alone
        // leaves these the same, so its counts are taken and the rounds run.
        if builds.skips_rounds() && !args.measure_identical && args.instructions.is_none() {
            not_measured = Some(listed.union());
        }
    }

    let [base, head] = [&sides[0], &sides[1]];
    let mut context = Context {
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
        incomplete: None,
        notes,
    };
    if let Some(ids) = not_measured {
        eprintln!(
            "benchgate: no rounds: every benchmark passes, not measured (--measure-identical measures anyway)"
        );
        context.source = Some("not measured: base and head built the same executables".into());
        let decision = crate::ab::not_measured_decision(&ids, &policy);
        drop(sides);
        return report(&decision, &context, &policy, outputs);
    }

    let mut counts = Vec::new();
    if let Some(command) = args.instructions {
        for side in &sides {
            counts.push(count_instructions(side, command, &scratch, &target_dir)?);
        }
    }

    let store = Store::connect(args.db).await?;
    let setting = RoundsSetting {
        counts: &counts,
        args,
        policy: &policy,
        bench: bench.as_ref(),
        store: &store,
        sides: [&sides[0], &sides[1]],
        scratch: &scratch,
        target_dir: &target_dir,
        repository: &repository,
        profile: &profile,
    };
    let result = run_rounds(&setting, None).await;
    store.close().await;
    let ran = result?;
    let decision = ran.decide(&policy, args.rounds.plan());
    drop(sides);
    context.incomplete = ran.incomplete.clone();
    let code = report(&decision, &context, &policy, outputs)?;
    if let Some(incomplete) = &ran.incomplete {
        eprintln!(
            "benchgate: error: round {} failed on the {} side ({}); the report above rests on the {} rounds before it",
            incomplete.round,
            incomplete.side,
            incomplete.failure,
            incomplete.round - 1
        );
        return Ok(2);
    }
    Ok(code)
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

/// Builds `side`'s bench executables in its worktree and keeps them in `bin`, with the worktree
/// files they were compiled from.
pub(super) fn build_side(
    side: &mut Side,
    bench: &CargoBench,
    target_dir: &Path,
    bin: &Path,
) -> anyhow::Result<()> {
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
    side.sources = built.sources;
    Ok(())
}

/// The rounds run, and each benchmark's verdict as of the look that decided it.
pub(super) struct Ran {
    pub(super) base: Vec<Vec<Measurement>>,
    pub(super) head: Vec<Vec<Measurement>>,
    decided: HashMap<String, BenchmarkResult>,
    /// Set when a bench command failed in a round after the first: the rounds before it stand.
    pub(super) incomplete: Option<Incomplete>,
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

/// What every round of a job shares: where it runs and where its runs are stored.
pub(super) struct RoundsSetting<'a> {
    /// Each side's instruction counts, stored with its first round.
    pub(super) counts: &'a [Vec<Measurement>],
    pub(super) args: &'a Options<'a>,
    pub(super) policy: &'a Policy,
    pub(super) bench: Option<&'a CargoBench>,
    pub(super) store: &'a Store,
    pub(super) sides: [&'a Side; 2],
    pub(super) scratch: &'a Path,
    pub(super) target_dir: &'a Path,
    pub(super) repository: &'a RepositoryName,
    pub(super) profile: &'a HardwareProfile,
}

/// Runs the rounds A B, B A, ... ([`order`]), storing each, of every benchmark or with `only`,
/// of those ids. Adaptive: after every round from the second, the benchmarks decided so far
/// are set aside, and the next round runs only the others. A bench command that fails after the
/// first round ends the job with the rounds complete before it ([`Ran::incomplete`]).
pub(super) async fn run_rounds(
    setting: &RoundsSetting<'_>,
    only: Option<Vec<String>>,
) -> anyhow::Result<Ran> {
    let args = setting.args;
    let mut rounds: [Vec<Vec<Measurement>>; 2] = [Vec::new(), Vec::new()];
    let mut decided: HashMap<String, BenchmarkResult> = HashMap::new();
    let mut undecided: Option<Vec<String>> = only.filter(|_| setting.bench.is_some());
    let mut clock = Progress::default();
    let mut incomplete = None;
    let max = args.rounds.max();
    'rounds: for round in 0..max {
        for index in order(round) {
            let side = setting.sides[index];
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
            let started = Instant::now();
            let measured = run_side(setting, round, index, undecided.as_deref(), &what).await;
            clock.benchmarking += started.elapsed();
            match measured {
                Ok(measurements) => {
                    clock.benchmark_runs += measurements.len();
                    rounds[index].push(measurements);
                }
                Err(error) if round > 0 => {
                    let failed = error.downcast::<CommandFailed>()?;
                    incomplete = Some(incomplete_round(&failed, round, &side.name));
                    // Only complete rounds count: the other side's run of this one is dropped.
                    for side_rounds in &mut rounds {
                        side_rounds.truncate(round);
                    }
                    break 'rounds;
                }
                Err(error) => return Err(error),
            }
        }
        let Rounds::Adaptive {
            budget,
            stop_futile,
            ..
        } = args.rounds
        else {
            clock.report(round + 1, max, None);
            continue;
        };
        if round + 1 < 2 {
            clock.report(round + 1, max, None);
            continue;
        }
        let open = look(
            &rounds,
            &mut decided,
            setting.policy,
            args.rounds.plan(),
            round + 1,
            stop_futile,
        );
        clock.report(round + 1, max, Some(open.len()));
        if open.is_empty() {
            eprintln!(
                "benchgate: every benchmark decided after {} rounds",
                round + 1
            );
            break;
        }
        if let Some(budget) = budget.filter(|b| clock.benchmarking >= *b) {
            eprintln!(
                "benchgate: the benchmarking budget ({}) is spent after {} rounds; {} benchmarks stay undecided",
                humantime::format_duration(budget),
                round + 1,
                open.len()
            );
            break;
        }
        // A command that is not `cargo bench` cannot be told which benchmarks to run.
        if setting.bench.is_some() {
            undecided = Some(open);
        }
    }
    let [base, head] = rounds;
    Ok(Ran {
        base,
        head,
        decided,
        incomplete,
    })
}

/// The report's account of a round whose bench command failed.
fn incomplete_round(failed: &CommandFailed, round: usize, side: &str) -> Incomplete {
    Incomplete {
        round: round + 1,
        side: side.to_owned(),
        failure: format!("`{}` failed with {}", failed.command, failed.status),
        stderr_tail: failed
            .stderr_tail
            .iter()
            .map(|line| plain_text(line))
            .collect(),
    }
}

/// A line of a command's output without ANSI escapes or other control characters.
fn plain_text(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-byte
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
        } else if c == '\t' {
            out.push(' ');
        } else if !c.is_control() {
            out.push(c);
        }
    }
    out.chars().take(1000).collect()
}

/// Runs one side's bench command for `round` (of the `only` benchmarks, when narrowed), reads
/// what Criterion wrote, and stores it as a run.
async fn run_side(
    setting: &RoundsSetting<'_>,
    round: usize,
    index: usize,
    only: Option<&[String]>,
    what: &str,
) -> anyhow::Result<Vec<Measurement>> {
    let args = setting.args;
    let side = setting.sides[index];
    let criterion_home = setting
        .scratch
        .join(format!("criterion-{}-{}", side.name, round + 1));
    let _ = std::fs::remove_dir_all(&criterion_home);
    match setting.bench {
        Some(bench) => side_build::run(
            &side.executables,
            bench,
            only,
            &criterion_home,
            setting.target_dir,
            what,
        )?,
        // A command that builds as it runs gets a target directory per side, so neither side
        // can run the other's build.
        None => run_in(
            &side.worktree.path,
            &args.command.iter().map(String::as_str).collect::<Vec<_>>(),
            &[
                ("CRITERION_HOME", criterion_home.as_os_str()),
                (
                    "CARGO_TARGET_DIR",
                    setting
                        .scratch
                        .join(format!("target-{}", side.name))
                        .as_os_str(),
                ),
            ],
            what,
        )?,
    }
    let mut measurements = criterion::read_tree(&criterion_home, criterion::DEFAULT_BASELINE)
        .with_context(|| what.to_owned())?;
    // The side's instruction counts go with its first round: exact, they need no more.
    if round == 0
        && let Some(counted) = setting.counts.get(index)
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
    let fingerprint = setting.profile.fingerprint();
    let attempt = setting
        .store
        .last_attempt(setting.repository, &side.commit, &fingerprint, args.kind)
        .await?
        + 1;
    let run = NewRun {
        meta: RunMeta {
            repository: setting.repository.clone(),
            commit: side.commit.clone(),
            branch: args
                .branch
                .map(str::to_owned)
                .or_else(|| side.branch.clone()),
            kind: args.kind,
            pr_number: None,
            attempt,
        },
        profile: setting.profile.clone(),
        recorded_at: SystemTime::now(),
        measurements,
    };
    setting
        .store
        .ingest(&run)
        .await
        .with_context(|| format!("{what}: storing the run"))?;
    Ok(run.measurements)
}

/// An adaptive look after `rounds_run` rounds: the benchmarks it decides (or, with
/// `stop_futile`, that more rounds would hardly decide) join `decided`; returns those still open.
fn look(
    rounds: &[Vec<Vec<Measurement>>; 2],
    decided: &mut HashMap<String, BenchmarkResult>,
    policy: &Policy,
    plan: Plan,
    rounds_run: usize,
    stop_futile: bool,
) -> Vec<String> {
    let so_far = decide(&rounds[0], &rounds[1], &HashMap::new(), policy, plan);
    let mut stopped = Vec::new();
    for b in &so_far.benchmarks {
        if b.ratio.is_some()
            && b.rounds == rounds_run
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
            "benchgate: stopped after {rounds_run} rounds, more unlikely to decide them: {}",
            stopped.join(", ")
        );
    }
    // Counts were decided by their one run; only wall time takes more rounds.
    so_far
        .benchmarks
        .iter()
        .filter(|b| b.noise_source != Some(NoiseSource::Exact))
        .filter(|b| b.ratio.is_some() && !decided.contains_key(&b.id))
        .map(|b| b.id.clone())
        .collect()
}

/// The time a job has spent benchmarking, for its progress lines.
#[derive(Default)]
struct Progress {
    /// Wall time in the bench command, both sides, every round.
    benchmarking: Duration,
    /// Benchmarks measured, summed over sides and rounds.
    benchmark_runs: usize,
}

impl Progress {
    /// One line after each round: the time spent, what is open, and at most how long the
    /// rounds left would take at the time a benchmark has taken so far.
    fn report(&self, done: usize, max: usize, open: Option<usize>) {
        let spent = humantime::format_duration(Duration::from_secs(self.benchmarking.as_secs()));
        let per_benchmark = self.benchmarking.as_secs_f64() / self.benchmark_runs.max(1) as f64;
        let per_round = self.benchmarking.as_secs_f64() / done.max(1) as f64;
        let rounds_left = max - done;
        let (left, open_text) = match open {
            Some(open) => (
                per_benchmark * (2 * open * rounds_left) as f64,
                format!(", {open} undecided"),
            ),
            None => (per_round * rounds_left as f64, String::new()),
        };
        let estimate = if rounds_left == 0 || open == Some(0) {
            String::new()
        } else {
            format!(
                "; at most about {} left",
                humantime::format_duration(Duration::from_secs(left.ceil() as u64))
            )
        };
        eprintln!(
            "benchgate: round {done}/{max} done: {spent} benchmarking so far{open_text}{estimate}"
        );
    }
}
