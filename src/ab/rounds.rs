//! The rounds of a same-job A/B comparison: each side's bench command run in counterbalanced
//! order (A B, B A, ...), every run stored, and with adaptive rounds a look after each round
//! from the second that sets the decided benchmarks aside.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, bail};
use benchgate_collector::{
    HardwareProfile, Measurement, NewRun, RepositoryName, RunKind, RunMeta, Store, criterion,
    merge_measurements,
};
use benchgate_gate::Policy;
use benchgate_gate::decision::{
    BenchmarkResult, Decision, Input, Mode, NoiseSource, Plan, Verdict, evaluate_with, overall,
};
use benchgate_gate::report::Incomplete;

use super::plan::TimingPlan;
use super::side::Side;
use crate::bench_command::CargoBench;
use crate::side_build::{self, CommandFailed};

/// How many rounds run.
#[derive(Clone, Copy)]
pub enum Rounds {
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
    pub fn max(self) -> usize {
        match self {
            Rounds::Fixed(n) => n,
            Rounds::Adaptive { max, .. } => max,
        }
    }

    /// `--budget` of adaptive rounds; fixed rounds run all of theirs.
    pub fn budget(self) -> Option<Duration> {
        match self {
            Rounds::Fixed(_) => None,
            Rounds::Adaptive { budget, .. } => budget,
        }
    }

    pub fn plan(self) -> Plan {
        match self {
            Rounds::Fixed(_) => Plan::Fixed,
            Rounds::Adaptive { max, .. } => Plan::adaptive(max),
        }
    }
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

/// Where `side`'s gungraun output goes (`GUNGRAUN_HOME`), kept after the job: its Callgrind
/// files say where a count's instructions went (`benchgate explain`).
pub fn gungraun_home(scratch: &Path, side: &Side) -> std::path::PathBuf {
    scratch.join(format!("gungraun-{}", side.name))
}

/// The words of `--instructions COMMAND`, split as a shell splits them: a quoted filter with a
/// space stays one argument. Nothing in it is expanded or run.
fn instruction_words(command: &str) -> anyhow::Result<Vec<String>> {
    let Some(words) = shlex::split(command) else {
        bail!("--instructions: `{command}` has an unmatched quote or a trailing backslash");
    };
    if words.is_empty() {
        bail!("--instructions: the command is empty");
    }
    Ok(words)
}

/// Runs the gungraun bench `command` once in `side`'s worktree (its own `GUNGRAUN_HOME`, the
/// shared target directory) and reads the counts it saved.
pub fn count_instructions(
    side: &Side,
    command: &str,
    scratch: &Path,
    target_dir: &Path,
) -> anyhow::Result<Vec<Measurement>> {
    let words = instruction_words(command)?;
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let what = format!(
        "counting instructions in {} ({})",
        side.name,
        side.commit.short()
    );
    eprintln!("benchgate: {what}: {command}");
    let home = gungraun_home(scratch, side);
    let _ = std::fs::remove_dir_all(&home);
    // The target directory is shared: cargo would take the other side's newer build of the
    // same crates for fresh, so this side's sources are made newer than it (see side_build).
    side_build::touch_tree(&side.worktree.path, SystemTime::now()).with_context(|| what.clone())?;
    run_in(
        &side.worktree.dir,
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

/// The rounds run, and each benchmark's verdict as of the look that decided it.
pub struct Ran {
    pub base: Vec<Vec<Measurement>>,
    pub head: Vec<Vec<Measurement>>,
    decided: HashMap<String, BenchmarkResult>,
    /// Set when a bench command failed in a round after the first: the rounds before it stand.
    pub incomplete: Option<Incomplete>,
    /// Wall time in the bench command, both sides, every round.
    pub bench_time: Duration,
    /// What the report should say of how the rounds went (a budget that ran out).
    pub notes: Vec<String>,
}

impl Ran {
    /// The decision on every round; a benchmark decided early keeps the verdict of that look.
    pub fn decide(&self, policy: &Policy, plan: Plan) -> Decision {
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

/// What a job runs: how many rounds, the bench command, and the kind and branch its runs are
/// stored under.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    pub rounds: Rounds,
    pub command: &'a [String],
    pub kind: RunKind,
    pub branch: Option<&'a str>,
}

/// What every round of a job shares: where it runs and where its runs are stored.
pub struct RoundsSetting<'a> {
    /// Each side's instruction counts, stored with its first round.
    pub counts: &'a [Vec<Measurement>],
    pub job: Job<'a>,
    pub policy: &'a Policy,
    pub bench: Option<&'a CargoBench>,
    pub store: &'a Store,
    pub sides: [&'a Side; 2],
    pub scratch: &'a Path,
    pub target_dir: &'a Path,
    pub repository: &'a RepositoryName,
    pub profile: &'a HardwareProfile,
    /// Each round's Criterion timing and the budget it was planned to (`ab`); `None` runs the
    /// command at its own settings, to `--budget` if given (a bisection's probes).
    pub plan: Option<&'a TimingPlan>,
}

/// Runs the rounds A B, B A, ... ([`order`]), storing each, of every benchmark or with `only`,
/// of those ids. Adaptive: after every round from the second, the benchmarks decided so far
/// are set aside, and the next round runs only the others. A bench command that fails after the
/// first round ends the job with the rounds complete before it ([`Ran::incomplete`]).
pub async fn run_rounds(
    setting: &RoundsSetting<'_>,
    only: Option<Vec<String>>,
) -> anyhow::Result<Ran> {
    let mut rounds: [Vec<Vec<Measurement>>; 2] = [Vec::new(), Vec::new()];
    let mut decided: HashMap<String, BenchmarkResult> = HashMap::new();
    let mut notes: Vec<String> = Vec::new();
    let mut undecided: Option<Vec<String>> = only.filter(|_| setting.bench.is_some());
    let mut clock = Progress::default();
    let mut incomplete = None;
    let mut plan = setting.plan.cloned();
    clock.budget =
        plan.as_ref()
            .map(|p| p.budget)
            .or(setting.job.rounds.budget().map(|b| b.as_secs_f64()));
    let max = setting.job.rounds.max();
    'rounds: for round in 0..max {
        let mut walls = [Duration::ZERO; 2];
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
            let timing = plan.as_ref().map_or(&[][..], |p| p.args.as_slice());
            let measured = run_side(
                setting,
                (round, index),
                (undecided.as_deref(), timing),
                &what,
            )
            .await;
            walls[index] = started.elapsed();
            clock.benchmarking += walls[index];
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
        if let Some(plan) = plan.as_mut()
            && let Some(line) = plan.observe(
                &[
                    (rounds[0][round].as_slice(), walls[0]),
                    (rounds[1][round].as_slice(), walls[1]),
                ],
                round + 1,
            )
        {
            eprintln!("benchgate: {line}");
        }
        if let Some(plan) = &plan {
            clock.budget = Some(plan.budget);
        }
        let Rounds::Adaptive { stop_futile, .. } = setting.job.rounds else {
            clock.report(round + 1, max, None);
            continue;
        };
        // Nothing is looked at before the second round, but the budget holds from the first: a
        // first round that overran its plan (a suite that sets its own timing in code) ends the
        // job here rather than overrun the budget as far again.
        let open = if round + 1 < 2 {
            clock.report(round + 1, max, None);
            rounds[0][round]
                .iter()
                .chain(&rounds[1][round])
                .map(|m| m.id.as_str())
                .collect::<BTreeSet<&str>>()
                .into_iter()
                .map(str::to_owned)
                .collect()
        } else {
            let open = look(
                &rounds,
                &mut decided,
                setting.policy,
                setting.job.rounds.plan(),
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
            open
        };
        // The next round starts only if it fits: as the rounds so far measured each benchmark
        // with a plan, else at the time a benchmark has taken so far.
        if let Some(budget) = clock.budget {
            let next = match &plan {
                Some(plan) => plan.next_round(&open),
                None => 2.0 * open.len() as f64 * clock.per_benchmark(),
            };
            let spent = clock.benchmarking.as_secs_f64();
            if round + 1 < max && spent + next > budget {
                let mut said = format!(
                    "budget ({}) is {} spent after {}; another round of the {} undecided benchmarks (about {}) would not fit, so they stay undecided",
                    seconds(budget),
                    seconds(spent),
                    rounds_text(round + 1),
                    open.len(),
                    seconds(next)
                );
                if let Some(advice) = plan
                    .as_ref()
                    .and_then(|plan| plan.code_timed_advice(&open, round + 1, spent))
                {
                    said.push_str(": ");
                    said.push_str(&advice);
                }
                eprintln!("benchgate: the {said}");
                notes.push(format!("The {said}."));
                break;
            }
        }
        // A command that is not `cargo bench` cannot be told which benchmarks to run; after the
        // first round nothing is set aside yet, so the second runs as the first did.
        if setting.bench.is_some() && round > 0 {
            undecided = Some(open);
        }
    }
    let [base, head] = rounds;
    Ok(Ran {
        base,
        head,
        decided,
        incomplete,
        bench_time: clock.benchmarking,
        notes,
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
    (round, index): (usize, usize),
    (only, timing): (Option<&[String]>, &[String]),
    what: &str,
) -> anyhow::Result<Vec<Measurement>> {
    let side = setting.sides[index];
    let criterion_home = setting
        .scratch
        .join(format!("criterion-{}-{}", side.name, round + 1));
    let _ = std::fs::remove_dir_all(&criterion_home);
    match setting.bench {
        Some(bench) => side_build::run(
            &side.executables,
            bench,
            (only, timing),
            &criterion_home,
            setting.target_dir,
            what,
        )?,
        // A command that builds as it runs gets a target directory per side, so neither side
        // can run the other's build.
        None => run_in(
            &side.worktree.dir,
            &setting
                .job
                .command
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
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
        merge_measurements(&mut measurements, counted.iter().cloned()).map_err(|id| {
            anyhow::anyhow!(
                "{what}: benchmark {:?} is both a Criterion benchmark and a gungraun count",
                id.as_str()
            )
        })?;
        measurements.sort_by(|a, b| a.id.cmp(&b.id));
    }
    let fingerprint = setting.profile.fingerprint();
    let attempt = setting
        .store
        .last_attempt(
            setting.repository,
            &side.commit,
            &fingerprint,
            setting.job.kind,
        )
        .await?
        + 1;
    let run = NewRun {
        meta: RunMeta {
            repository: setting.repository.clone(),
            commit: side.commit.clone(),
            branch: setting
                .job
                .branch
                .map(str::to_owned)
                .or_else(|| side.branch.clone()),
            kind: setting.job.kind,
            pr_number: None,
            attempt,
        },
        profile: setting.profile.clone(),
        recorded_at: SystemTime::now(),
        measurements,
        function_costs: Default::default(),
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
    /// Seconds the rounds may take, when adaptive rounds have a budget.
    budget: Option<f64>,
}

/// `1 round`, `2 rounds`.
fn rounds_text(rounds: usize) -> String {
    if rounds == 1 {
        "1 round".to_owned()
    } else {
        format!("{rounds} rounds")
    }
}

/// Seconds for people, whole.
fn seconds(seconds: f64) -> String {
    humantime::format_duration(Duration::from_secs(seconds.round() as u64)).to_string()
}

impl Progress {
    /// Seconds a benchmark has taken on one side in one round, on average.
    fn per_benchmark(&self) -> f64 {
        self.benchmarking.as_secs_f64() / self.benchmark_runs.max(1) as f64
    }

    /// One line after each round: the time spent, what is open, and at most how long the
    /// rounds left would take at the time a benchmark has taken so far.
    fn report(&self, done: usize, max: usize, open: Option<usize>) {
        let spent = humantime::format_duration(Duration::from_secs(self.benchmarking.as_secs()));
        let per_benchmark = self.per_benchmark();
        let per_round = self.benchmarking.as_secs_f64() / done.max(1) as f64;
        let rounds_left = max - done;
        let (left, open_text) = match open {
            Some(open) => (
                per_benchmark * (2 * open * rounds_left) as f64,
                format!(", {open} undecided"),
            ),
            None => (per_round * rounds_left as f64, String::new()),
        };
        let left = match self.budget {
            Some(budget) => left.min((budget - self.benchmarking.as_secs_f64()).max(0.0)),
            None => left,
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::instruction_words;

    #[test]
    fn an_instructions_command_keeps_a_quoted_filter_as_one_argument() {
        assert_eq!(
            instruction_words("cargo bench --bench instructions -- 'parse csv/' \"a b\"").unwrap(),
            [
                "cargo",
                "bench",
                "--bench",
                "instructions",
                "--",
                "parse csv/",
                "a b"
            ]
        );
        let unmatched = instruction_words("cargo bench -- 'parse").unwrap_err();
        assert!(
            unmatched.to_string().contains("unmatched quote"),
            "{unmatched}"
        );
        assert!(instruction_words("  ").is_err());
    }
}
