//! `benchgate ab`: same-job A/B on this machine. Checks out base and head in git worktrees,
//! builds both, runs the bench command in counterbalanced rounds (A B, B A, A B, B A ...; never
//! A A B B) with a fresh Criterion output directory per run, stores every round, and decides
//! with the rounds as the unit of replication.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use benchgate_collector::{Location, RepositoryName, RunKind, Store};
use benchgate_gate::report::{Context, Cost};

use super::{JobArgs, KindArg};
use crate::ab::plan;
use crate::ab::rounds::{
    Job, Rounds, RoundsSetting, count_instructions, gungraun_home, run_rounds,
};
use crate::ab::side::{Side, Worktree, build_side};
use crate::ab::{resolve, scratch_dir, shared_target_dir};
use crate::bench_command::CargoBench;
use crate::environment;
use crate::reporting::{Outputs, ReportArgs, decide_and_publish, load_policy, report};

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
    /// Stop adding rounds once benchmarking has taken this long (e.g. `10m`); the benchmarks
    /// still undecided then read `inconclusive`.
    #[arg(long, value_parser = humantime::parse_duration)]
    budget: Option<Duration>,
    /// The kind the rounds are stored as.
    #[arg(long, value_enum, default_value_t = KindArg::Local)]
    kind: KindArg,
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
    #[command(flatten)]
    job: JobArgs,
    /// The bench command, run in each checkout, e.g. `cargo bench`.
    #[arg(last = true, required = true, value_name = "BENCH COMMAND")]
    command: Vec<String>,
}

/// Builds, runs the rounds, decides, reports, and with `--publish` publishes.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let options = Options {
        target_dir: args.job.target_dir.as_deref(),
        allow_identical_builds: args.allow_identical_builds,
        measure_identical: args.measure_identical,
        base_ref: &args.base_ref,
        head_ref: &args.head_ref,
        rounds: match args.rounds {
            Some(rounds) => Rounds::Fixed(rounds as usize),
            None => Rounds::Adaptive {
                max: args.job.max_rounds as usize,
                budget: args.budget,
                stop_futile: true,
            },
        },
        command: &args.command,
        instructions: args.instructions.as_deref(),
        db: &args.job.store.db,
        kind: args.kind.into(),
        branch: None,
        repo: args.job.repo.as_deref(),
        config: args.report.config.as_deref(),
    };
    let outputs = args.report.outputs();
    decide_and_publish(
        &args.report,
        &outputs,
        args.job.repo.as_deref(),
        &args.job.store.db,
        None,
        ab(&options, &outputs),
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
    let building = Instant::now();
    let Prepared {
        notes,
        not_measured,
        unmeasured,
        measured,
        benchmarks,
    } = prepare(args, &mut sides, bench.as_ref(), &scratch, &target_dir)
        .inspect_err(|e| print_uncommitted_hint(e, &[&scratch, &target_dir]))?;
    let build_seconds = building.elapsed().as_secs_f64();

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
        cost: Some(Cost {
            bench_seconds: 0.0,
            build_seconds,
        }),
        profiles: Vec::new(),
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

    let counting = Instant::now();
    let mut counts = Vec::new();
    if let Some(command) = args.instructions {
        for side in &sides {
            counts.push(count_instructions(side, command, &scratch, &target_dir)?);
        }
    }
    let counting_time = counting.elapsed();

    let plan = match &bench {
        Some(bench) => {
            let plan = plan::make(
                &mut sides,
                &plan::Setting {
                    bench,
                    benchmarks,
                    defaults: None,
                    rounds: args.rounds,
                    budget: args.rounds.budget(),
                },
                &scratch,
                &target_dir,
            );
            context.notes.push(format!("The {}.", plan.describe()));
            Some(plan)
        }
        _ => {
            eprintln!(
                "benchgate: plan: the bench command is not `cargo bench`: each round runs it at its own settings{}",
                args.rounds
                    .budget()
                    .map(|b| format!(", within --budget {}", humantime::format_duration(b)))
                    .unwrap_or_default()
            );
            None
        }
    };
    let store = Store::connect(args.db).await?;
    let setting = RoundsSetting {
        counts: &counts,
        job: Job {
            rounds: args.rounds,
            command: args.command,
            kind: args.kind,
            branch: args.branch,
        },
        policy: &policy,
        bench: bench.as_ref(),
        store: &store,
        sides: [&sides[0], &sides[1]],
        scratch: &scratch,
        target_dir: &target_dir,
        repository: &repository,
        profile: &profile,
        plan: plan.as_ref(),
    };
    let result = run_rounds(&setting, measured).await;
    store.close().await;
    let ran = result.inspect_err(|e| print_uncommitted_hint(e, &[&scratch, &target_dir]))?;
    let mut decision = ran.decide(&policy, args.rounds.plan());
    crate::ab::pass_unmeasured(&mut decision, &unmeasured, &policy);
    context.incomplete = ran.incomplete.clone();
    context.notes.extend(ran.notes.iter().cloned());
    context.cost = Some(Cost {
        bench_seconds: (ran.bench_time + counting_time).as_secs_f64(),
        build_seconds,
    });
    if args.instructions.is_some() {
        let homes = [&sides[0], &sides[1]].map(|side| gungraun_home(&scratch, side));
        let (profiles, notes) = super::explain::count_profiles(&decision, [&homes[0], &homes[1]]);
        context.profiles = profiles;
        context.notes.extend(notes);
    }
    drop(sides);
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

/// Before the error a side's bench command ended `ab` with: the files its checkout lacks
/// (`ours`: the directories `ab` made, left out).
fn print_uncommitted_hint(error: &anyhow::Error, ours: &[&Path]) {
    if let Some(hint) = crate::ab::side::uncommitted_hint(error, ours) {
        eprintln!("benchgate: {hint}");
    }
}

/// What preparing the sides found: notes for the report, and with nothing to measure (the
/// same executables, nothing else changed), the benchmarks that pass unmeasured.
struct Prepared {
    notes: Vec<String>,
    not_measured: Option<Vec<String>>,
    /// With some executables the same on both sides (and nothing else changed), their
    /// benchmarks: the rounds leave them out, and they pass unmeasured.
    unmeasured: Vec<String>,
    /// Then the rest, which the rounds run (`None`: every benchmark the command selects).
    measured: Option<Vec<String>>,
    /// How many benchmarks the rounds measure (0 when the command is not `cargo bench`).
    benchmarks: usize,
}

/// Aligns both sides' dependency versions, builds each side's bench executables (one target
/// directory, so the dependencies are built once; each side's crates from its own sources,
/// its executables kept aside: see side_build), checks the bench command against them and
/// compares the builds.
fn prepare(
    args: &Options<'_>,
    sides: &mut [Side],
    bench: Option<&CargoBench>,
    scratch: &Path,
    target_dir: &Path,
) -> anyhow::Result<Prepared> {
    let mut notes = Vec::new();
    if let Some(lockfile) = crate::ab::lockfile::align(sides, bench)? {
        eprintln!("benchgate: {lockfile}");
        notes.push(lockfile);
    }
    let mut not_measured = None;
    let mut unmeasured = Vec::new();
    let mut measured = None;
    let mut benchmarks = 0;
    if let Some(bench) = bench {
        for dropped in &bench.dropped {
            eprintln!(
                "benchgate: leaving out `{dropped}`: every round writes a fresh Criterion directory, with no saved baseline in it"
            );
        }
        for side in sides.iter_mut() {
            let bin = scratch.join("bin").join(&side.name);
            for line in build_side(side, bench, target_dir, &bin)? {
                // Each side builds the same targets but for a change to Cargo.toml: one note.
                let note = format!("{}{}", line[..1].to_uppercase(), &line[1..]);
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
        let pair = [&sides[0], &sides[1]];
        let listed = crate::ab::check_bench_command(pair, bench, scratch, target_dir)?;
        benchmarks = listed.union().len();
        if let Some(note) = crate::ab::renamed_note(&listed) {
            eprintln!("benchgate: {note}");
            notes.push(note);
        }
        let builds = crate::ab::identical::compare(pair, &listed, args.allow_identical_builds)?;
        if let Some(note) = builds.note() {
            eprintln!("benchgate: {note}");
            notes.push(note);
        }
        // The instruction bench is another executable, not compared here: a change to it alone
        // leaves these the same, so its counts are taken and the rounds run.
        if builds.skips_rounds() && !args.measure_identical && args.instructions.is_none() {
            not_measured = Some(listed.union());
        } else if !args.measure_identical && !builds.unmeasured().is_empty() {
            unmeasured = builds.unmeasured().to_vec();
            let mut ids = listed.union();
            ids.retain(|id| !unmeasured.contains(id));
            benchmarks = ids.len();
            measured = Some(ids);
        } else if !listed.renamed_shown().is_empty() {
            // The user's filter would run them again under new names every round.
            measured = Some(listed.union());
        }
    }
    Ok(Prepared {
        notes,
        not_measured,
        unmeasured,
        measured,
        benchmarks,
    })
}
