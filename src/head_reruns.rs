//! `gate`'s re-runs of the head: the benchmarks one head run leaves `inconclusive` against a
//! stored baseline run again in this checkout (a `cargo bench` command narrowed to their exact
//! ids, like `ab`'s later rounds), the head's runs are pooled and the comparison is decided
//! again ([`HeadReruns`]: each look spends its share of the error rates, a benchmark keeps
//! the verdict of the look that decided it).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use benchgate_collector::{Measurement, criterion};
use benchgate_gate::Policy;
use benchgate_gate::decision::{BenchmarkResult, Decision, HeadReruns, Look, Metric, Verdict};
use benchgate_gate::report::Context;

use crate::bench_command::CargoBench;
use crate::side_build::{self, CommandFailed, run_teeing_stderr};

/// Head runs at most when a bench command is given and `--max-runs` is not.
pub const DEFAULT_MAX_RUNS: usize = 3;

/// The re-runs a gate may make.
pub struct Reruns {
    command: Vec<String>,
    bench: Option<CargoBench>,
    max: usize,
    budget: Option<Duration>,
}

impl Reruns {
    /// From `gate`'s flags: `command` after `--` (empty: no re-runs), `--max-runs`, `--budget`.
    pub fn new(
        command: Vec<String>,
        max_runs: Option<u32>,
        budget: Option<Duration>,
    ) -> anyhow::Result<Self> {
        let max = match (max_runs, command.is_empty()) {
            (Some(n), true) if n > 1 => bail!(
                "--max-runs {n}: re-running the head needs its bench command after `--` (e.g. `-- cargo bench`)"
            ),
            (Some(n), _) => n as usize,
            (None, true) => 1,
            (None, false) => DEFAULT_MAX_RUNS,
        };
        let bench = CargoBench::parse(&command).context("the bench command after `--`")?;
        Ok(Self {
            command,
            bench,
            max,
            budget,
        })
    }

    /// Checks, for a `cargo bench` command, that no two of its bench executables name one
    /// benchmark: Criterion keeps one result per id, so the head run just stored holds only
    /// the executable that ran last, and a change to the other's would pass unseen (plain
    /// `cargo bench --workspace` over crates that each bench a `parse`, say). Builds with
    /// `--no-run` (the bench command just built it) and lists each executable's ids.
    pub fn check_ids_apart(&self) -> anyhow::Result<()> {
        let Some(bench) = &self.bench else {
            return Ok(());
        };
        let checking = "checking the bench command (Criterion's --list)";
        match side_build::ids_shared_in_place(bench, checking) {
            Some(why) => bail!(
                "{checking}: {why}; the gate cannot judge a benchmark whose stored result may be another's"
            ),
            None => Ok(()),
        }
    }

    /// Decides the base run (`base`, its one round) against the head's first run and, while
    /// benchmarks stay `inconclusive` and the runs and budget allow, against its re-runs. A re-run that fails ends the
    /// re-runs: the verdicts so far stand and the report says why.
    pub fn decide(
        &self,
        base: &[Vec<Measurement>],
        head: Vec<Measurement>,
        history: &HashMap<String, Vec<f64>>,
        policy: &Policy,
        context: &mut Context,
    ) -> anyhow::Result<Decision> {
        let mut looks = HeadReruns::new(self.max);
        let mut heads = vec![head];
        let mut spent = Duration::ZERO;
        loop {
            let look = looks.look(base, &heads, history, policy, rerunnable);
            if look.open.is_empty() {
                return Ok(look.decision);
            }
            let run = heads.len() + 1;
            let open = Open::of(&look);
            if let Some(budget) = self.budget.filter(|b| spent >= *b) {
                let note = format!(
                    "The re-run budget ({}) was spent after {} head runs; {}.",
                    humantime::format_duration(budget),
                    run - 1,
                    open.left()
                );
                eprintln!("benchgate: {note}");
                context.notes.push(note);
                return Ok(look.decision);
            }
            eprintln!(
                "benchgate: head run {run}/{}: {}, running {} again",
                self.max,
                open.described(),
                if self.bench.is_some() {
                    "them"
                } else {
                    "the whole bench command"
                }
            );
            let started = Instant::now();
            let measured = self.rerun(&look.open, run);
            spent += started.elapsed();
            match measured {
                Ok(measured) => heads.push(measured),
                Err(error) => {
                    let note = format!(
                        "Head run {run} failed ({error:#}); the verdicts are those of the first {} head run{}.",
                        run - 1,
                        if run == 2 { "" } else { "s" }
                    );
                    eprintln!("benchgate: {note}");
                    context.notes.push(note);
                    return Ok(look.decision);
                }
            }
        }
    }

    /// Runs the bench command again for `open` with Criterion's output in a directory of its
    /// own, and reads back those benchmarks: once per part of their exact-id filter
    /// ([`crate::bench_command::exact_filters`]) when they are thousands.
    fn rerun(&self, open: &[String], run: usize) -> anyhow::Result<Vec<Measurement>> {
        let home = scratch_home(run)?;
        let commands: Vec<Vec<String>> = match &self.bench {
            Some(bench) => bench
                .executable_args_each(Some(open), &[])
                .into_iter()
                .map(|args| {
                    let mut command = bench.build.clone();
                    command.push("--".to_owned());
                    // Cargo gives every bench executable `--bench` itself.
                    command.extend(args.into_iter().skip(1));
                    command
                })
                .collect(),
            None => vec![self.command.clone()],
        };
        for command in &commands {
            let (program, args) = command
                .split_first()
                .context("the bench command is empty")?;
            let (status, stderr_tail) = run_teeing_stderr(
                Command::new(program)
                    .args(args)
                    .env("CRITERION_HOME", &home),
            )
            .with_context(|| format!("cannot run `{}`", command.join(" ")))?;
            if !status.success() {
                return Err(CommandFailed {
                    what: format!("head run {run}"),
                    command: command.join(" "),
                    status,
                    stderr_tail,
                }
                .into());
            }
        }
        let wanted: std::collections::HashSet<&str> = open.iter().map(String::as_str).collect();
        let measured: Vec<Measurement> = criterion::read_tree(&home, criterion::DEFAULT_BASELINE)
            .with_context(|| format!("head run {run}: {}", home.display()))?
            .into_iter()
            .filter(|m| wanted.contains(m.id.as_str()))
            .collect();
        let _ = std::fs::remove_dir_all(&home);
        if measured.is_empty() {
            bail!(
                "`{}` measured none of the {} undecided benchmarks in {} (does it honour CRITERION_HOME?)",
                commands.first().map(|c| c.join(" ")).unwrap_or_default(),
                open.len(),
                home.display()
            );
        }
        Ok(measured)
    }
}

/// The benchmarks a look leaves to run again: undecided, and regressions to confirm.
struct Open {
    undecided: usize,
    to_confirm: usize,
}

impl Open {
    fn of(look: &Look) -> Self {
        let to_confirm = look
            .decision
            .benchmarks
            .iter()
            .filter(|b| b.verdict == Verdict::Regressed && look.open.contains(&b.id))
            .count();
        Self {
            undecided: look.open.len() - to_confirm,
            to_confirm,
        }
    }

    /// "2 benchmarks undecided and 1 regression to confirm".
    fn described(&self) -> String {
        self.parts("undecided", "to confirm")
    }

    /// What stopping here leaves: "1 benchmark stays undecided and 1 regression unconfirmed".
    fn left(&self) -> String {
        let stays = if self.undecided == 1 { "stays" } else { "stay" };
        self.parts(&format!("{stays} undecided"), "stands unconfirmed")
    }

    fn parts(&self, undecided: &str, to_confirm: &str) -> String {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut parts = Vec::new();
        if self.undecided > 0 {
            parts.push(format!(
                "{} benchmark{} {undecided}",
                self.undecided,
                plural(self.undecided)
            ));
        }
        if self.to_confirm > 0 {
            parts.push(format!(
                "{} regression{} {to_confirm}",
                self.to_confirm,
                plural(self.to_confirm)
            ));
        }
        parts.join(" and ")
    }
}

/// Whether the bench command measures `b` again: wall time, not a custom metric's file.
fn rerunnable(b: &BenchmarkResult) -> bool {
    matches!(b.metric, Metric::Time | Metric::Throughput)
}

/// A fresh directory for one re-run's Criterion output, so that only what it measured is read.
fn scratch_home(run: usize) -> anyhow::Result<PathBuf> {
    let home =
        std::env::temp_dir().join(format!("benchgate-head-run-{}-{run}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).with_context(|| format!("cannot create {}", home.display()))?;
    std::path::absolute(&home).context("cannot resolve the re-run's output directory")
}
