//! The timing plan of an A/B job: each round's Criterion settings, chosen before the first
//! round so that all rounds together fit a budget, and re-read after every round from what
//! Criterion really did.
//!
//! The noise a same-job A/B fights is mostly between processes and moments (layout, frequency,
//! neighbours), not within one long measurement, so many short interleaved rounds buy more than
//! a few long ones. The budget is `--budget`, else the time one plain run of the selected suite
//! takes at the user's settings: the command line's, else the bench's own configured defaults
//! (Criterion prints them in `--help`, in whole seconds), else Criterion's (3 s warm-up, 5 s
//! measurement, 100 samples). Adaptive rounds plan their first look (two rounds of every
//! benchmark, both sides) at [`FIRST_LOOK_SHARE`] of it; the rest goes to the rounds of the
//! benchmarks still undecided, and a round that would not fit is not started. Fixed rounds
//! share the whole budget.
//!
//! Bench code can fix its own timing (a group's `measurement_time`, or settings applied after
//! `configure_from_args`), which wins over the command line, and a slow benchmark takes longer
//! than its measurement time to take its samples: after every round the plan reads how long
//! each benchmark's samples took and what the round cost, and predicts the next round from that.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use benchgate_collector::Measurement;

use super::rounds::Rounds;
use super::side::Side;
use crate::bench_command::CargoBench;
use crate::side_build;

/// Criterion's own defaults, 0.3 to 0.8.
pub const CRITERION: Defaults = Defaults {
    warm_up: 3.0,
    measurement: 5.0,
    sample_size: 100,
};
/// The share of the budget adaptive rounds plan their first look at.
const FIRST_LOOK_SHARE: f64 = 0.4;
/// The samples a planned round takes when the user sets none: the count the accuracy
/// harness's recordings were taken with (docs/accuracy.md).
const PLANNED_SAMPLES: u64 = 20;
/// Bootstrap resamples a planned round's analysis takes (Criterion's default is 100,000):
/// the gate reads the samples, not Criterion's intervals, except under the `median` statistic,
/// whose within-run floor 1,000 resamples still estimate; at 100,000 the analysis took a
/// quarter of a short round (0.2 of 0.9 s a benchmark, Criterion 0.4, measured here).
const PLANNED_RESAMPLES: u64 = 1_000;
const MIN_WARM_UP: f64 = 0.05;
const MIN_MEASUREMENT: f64 = 0.1;
/// The least a default budget gives a benchmark: `FLOOR_RUNS` runs of `FLOOR_RUN` seconds (the
/// timing the accuracy harness's recordings were taken with), or of a plain run where that is
/// shorter: what one plain run at Criterion's defaults buys. A bench whose own settings are
/// short may so spend more than one plain run of itself, never more than a suite at
/// Criterion's defaults: rounds shorter than that are not what the harness measured.
const FLOOR_RUNS: f64 = 10.0;
const FLOOR_RUN: f64 = 0.8;

/// A benchmark whose samples took this many times the planned measurement time or more took
/// its timing from its code, or has iterations too slow for the plan.
const OVERRAN: f64 = 1.5;

/// A bench executable's settings per benchmark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Defaults {
    pub warm_up: f64,
    pub measurement: f64,
    pub sample_size: u64,
}

impl Defaults {
    /// The defaults Criterion's `--help` prints (the bench's own configuration where its code
    /// sets one before reading the command line); `None` for a harness that is not Criterion.
    /// Times print in whole seconds: `[default: 0]` is read as half a second.
    pub fn from_help(text: &str) -> Option<Self> {
        let seconds = |option: &str, fallback: f64| {
            help_default(text, option).map_or(fallback, |v| if v > 0.0 { v } else { 0.5 })
        };
        help_default(text, "measurement-time")?;
        Some(Self {
            warm_up: seconds("warm-up-time", CRITERION.warm_up),
            measurement: seconds("measurement-time", CRITERION.measurement),
            sample_size: help_default(text, "sample-size")
                .filter(|n| *n >= 10.0)
                .map_or(CRITERION.sample_size, |n| n as u64),
        })
    }
}

/// The `[default: N]` Criterion's help gives `--option`, on its line or the lines under it.
fn help_default(text: &str, option: &str) -> Option<f64> {
    let flag = format!("--{option}");
    let start = text.match_indices(&flag).map(|(i, _)| i).find(|&i| {
        !text[i + flag.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '-')
    })?;
    let mut entry = String::new();
    for (n, line) in text[start..].lines().enumerate() {
        if n > 0 && line.trim_start().starts_with('-') {
            break;
        }
        entry.push_str(line);
    }
    let value = entry.split("[default: ").nth(1)?.split(']').next()?;
    value.trim().parse().ok()
}

/// The plan of a job's rounds.
#[derive(Debug, Clone)]
pub struct TimingPlan {
    /// The options every round gives the Criterion executables (after the user's).
    pub args: Vec<String>,
    /// Seconds all rounds may take, both sides.
    pub budget: f64,
    /// Where the budget came from, in words.
    budget_from: String,
    /// `--budget`: kept as given; else re-estimated after the first round.
    budget_given: bool,
    /// The benchmarks the plan times.
    benchmarks: usize,
    /// Seconds of warm-up and measurement per benchmark a planned round gives (Criterion's
    /// settings), and its samples.
    round: Defaults,
    /// The same at the user's settings: what one plain run gives each benchmark.
    plain: Defaults,
    /// What the plan leaves as the user set it, in words.
    kept: Vec<String>,
    /// The command's timing options the plan's take the place of, in words.
    replaced: Vec<String>,
    /// Executables the plan leaves alone (not Criterion, or refusing the options), in words.
    untimed: Vec<String>,
    /// What the plan assumed, in words.
    notes: Vec<String>,
    /// Seconds one run of a benchmark took on one side, as the latest round measured it.
    cost: HashMap<String, f64>,
    /// Per benchmark, its runs whose samples took far longer than planned though Criterion
    /// could have fit the plan's samples into it, and all its runs: a benchmark whose code
    /// sets its timing does that in most of its runs; a neighbour, now and then.
    code_timed: HashMap<String, (usize, usize)>,
    /// Rounds keep the bench's own warm-up and measurement time: its Criterion (0.3) takes
    /// whole seconds only, and a second of each is longer than a plain run gives a benchmark.
    own_timing: bool,
    /// Rounds in the first look.
    first_look: usize,
    max_rounds: usize,
}

/// What a plan is made from.
pub struct Setting<'a> {
    pub bench: &'a CargoBench,
    /// The benchmarks the command selects.
    pub benchmarks: usize,
    /// The bench's own defaults (its `--help`), `None` when no executable is Criterion.
    pub defaults: Option<Defaults>,
    pub rounds: Rounds,
    pub budget: Option<Duration>,
}

impl TimingPlan {
    pub fn new(setting: &Setting<'_>) -> Self {
        let bench = setting.bench;
        let own = setting.defaults.unwrap_or(CRITERION);
        let user_seconds = |option: &str| {
            bench
                .option_value(option)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| *v > 0.0)
        };
        let user_warm_up = user_seconds("warm-up-time");
        let user_measurement = user_seconds("measurement-time");
        let user_samples = bench
            .option_value("sample-size")
            .and_then(|v| v.parse::<u64>().ok());
        let plain = Defaults {
            warm_up: user_warm_up.unwrap_or(own.warm_up),
            measurement: user_measurement.unwrap_or(own.measurement),
            sample_size: user_samples.unwrap_or(own.sample_size),
        };
        let n = setting.benchmarks.max(1);
        let plain_seconds = plain.warm_up + plain.measurement;
        let floor = floor_per_benchmark(plain_seconds);
        let (budget, budget_from) = match setting.budget {
            Some(budget) => (budget.as_secs_f64(), "--budget".to_owned()),
            None => {
                let settings = match (user_warm_up.or(user_measurement), setting.defaults) {
                    (Some(_), _) => "the command's settings",
                    (None, Some(d)) if d != CRITERION => "the bench's own settings",
                    _ => "Criterion's defaults",
                };
                let from = if floor > plain_seconds {
                    format!(
                        "the least a benchmark gets, {FLOOR_RUNS} runs of {}; one plain run of the suite at {settings} would take {}",
                        seconds_text_unit(FLOOR_RUN.min(plain_seconds)),
                        duration_text(n as f64 * plain_seconds)
                    )
                } else {
                    format!("one plain run of the suite at {settings}")
                };
                (n as f64 * plain_seconds.max(floor), from)
            }
        };
        let (first_look, share) = match setting.rounds {
            Rounds::Fixed(r) => (r, 1.0),
            Rounds::Adaptive { max, .. } => (max.min(2), FIRST_LOOK_SHARE),
        };
        // Seconds per benchmark and side in a round, never more than a plain run gives it.
        let per_run = (share * budget / (2 * first_look.max(1) * n) as f64).min(plain_seconds);
        let mut kept = Vec::new();
        let mut replaced = Vec::new();
        // The command's own timing sets what a plain run costs, not a round: kept, every round
        // would cost a plain run per side and the default budget would buy two rounds (on
        // unicode-segmentation at 0.5 s + 1.5 s, four benchmarks 40-67% slower stayed
        // unconfirmed).
        let warm_up = (per_run / 4.0).max(MIN_WARM_UP);
        let measurement = (per_run * 3.0 / 4.0).max(MIN_MEASUREMENT);
        let quick = bench.has_option("quick");
        let sample_size = match user_samples {
            Some(s) => s,
            None if quick => plain.sample_size,
            None => PLANNED_SAMPLES.min(plain.sample_size),
        };
        let mut args = Vec::new();
        let shorter = per_run < plain_seconds;
        if setting.defaults.is_some() {
            for (option, user, value) in [
                ("warm-up-time", user_warm_up, warm_up),
                ("measurement-time", user_measurement, measurement),
            ] {
                if let Some(v) = user {
                    let given = format!("--{option} {}", seconds_text(v));
                    if shorter { &mut replaced } else { &mut kept }.push(given);
                }
                if shorter {
                    args.extend([format!("--{option}"), seconds_text(value)]);
                }
            }
            match user_samples {
                Some(s) => kept.push(format!("--sample-size {s}")),
                None if quick => kept.push("--quick".to_owned()),
                None if shorter && sample_size < plain.sample_size => {
                    args.extend(["--sample-size".to_owned(), sample_size.to_string()]);
                }
                None => {}
            }
            if shorter && !bench.has_option("nresamples") {
                args.extend(["--nresamples".to_owned(), PLANNED_RESAMPLES.to_string()]);
            }
            if !bench.has_option("noplot") {
                args.push("--noplot".to_owned());
            }
        }
        let round = if shorter {
            Defaults {
                warm_up,
                measurement,
                sample_size,
            }
        } else {
            plain
        };
        Self {
            args,
            budget,
            budget_from,
            budget_given: setting.budget.is_some(),
            benchmarks: setting.benchmarks,
            round,
            plain,
            kept,
            replaced,
            untimed: Vec::new(),
            notes: Vec::new(),
            cost: HashMap::new(),
            code_timed: HashMap::new(),
            own_timing: false,
            first_look,
            max_rounds: setting.rounds.max(),
        }
    }

    /// The plan with whole seconds, for a Criterion (0.3) that refuses fractions.
    fn whole_seconds(&self) -> Vec<String> {
        let mut args = self.args.clone();
        for pair in 0..args.len().saturating_sub(1) {
            if matches!(args[pair].as_str(), "--warm-up-time" | "--measurement-time")
                && let Ok(value) = args[pair + 1].parse::<f64>()
            {
                args[pair + 1] = (value.ceil().max(1.0) as u64).to_string();
            }
        }
        args
    }

    /// Takes the plan in whole seconds, for executables that refuse fractions (Criterion 0.3).
    /// Where a second of warm-up and one of measurement would give a benchmark more than a
    /// plain run does (a bench whose own timing is under a second, as httparse's 0.1 s), the
    /// rounds keep the bench's own timing instead: rounded up, every round would cost twice a
    /// plain run or more, and the budget would end before the four rounds a regression needs.
    fn adopt_whole_seconds(&mut self) {
        let whole = self.whole_seconds();
        let value = |option: &str| {
            whole
                .iter()
                .position(|a| a == option)
                .and_then(|i| whole.get(i + 1))
                .and_then(|v| v.parse::<f64>().ok())
        };
        let warm_up = value("--warm-up-time").unwrap_or(self.round.warm_up);
        let measurement = value("--measurement-time").unwrap_or(self.round.measurement);
        if warm_up + measurement > self.plain.warm_up + self.plain.measurement {
            let mut args = Vec::new();
            let mut rest = self.args.iter();
            while let Some(arg) = rest.next() {
                if matches!(arg.as_str(), "--warm-up-time" | "--measurement-time") {
                    rest.next();
                } else {
                    args.push(arg.clone());
                }
            }
            self.args = args;
            self.round.warm_up = self.plain.warm_up;
            self.round.measurement = self.plain.measurement;
            self.own_timing = true;
            self.kept.append(&mut self.replaced);
        } else {
            self.args = whole;
            self.round.warm_up = warm_up;
            self.round.measurement = measurement;
        }
    }

    /// The plan in words, printed before the first round and kept in the report's notes.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "plan: {} benchmarks, up to {} rounds within {} of benchmarking ({}",
            self.benchmarks,
            self.max_rounds,
            duration_text(self.budget),
            self.budget_from
        );
        if !self.budget_given {
            let _ = write!(
                out,
                ": {} warm-up, {} measurement, {} samples a benchmark",
                seconds_text_unit(self.plain.warm_up),
                seconds_text_unit(self.plain.measurement),
                self.plain.sample_size
            );
        }
        out.push_str("); ");
        if self.args.is_empty() && self.kept.is_empty() {
            out.push_str("each round at the bench's own settings");
        } else {
            if self.own_timing {
                let _ = write!(
                    out,
                    "each round gives a benchmark the bench's own warm-up and measurement time (its Criterion takes whole seconds, and a second of each is more than a plain run gives it), {} samples",
                    self.round.sample_size
                );
            } else {
                let _ = write!(
                    out,
                    "each round gives a benchmark {} warm-up, {} measurement, {} samples",
                    seconds_text_unit(self.round.warm_up),
                    seconds_text_unit(self.round.measurement),
                    self.round.sample_size
                );
            }
            if self.args.iter().any(|a| a == "--nresamples") {
                let _ = write!(out, ", {PLANNED_RESAMPLES} bootstrap resamples");
            }
            if self.args.iter().any(|a| a == "--noplot") {
                out.push_str(", no plots");
            }
            if !self.replaced.is_empty() {
                let _ = write!(
                    out,
                    " (in place of the command's {}: rounds shorter than a plain run buy more of them)",
                    self.replaced.join(", ")
                );
            }
            if !self.kept.is_empty() {
                let _ = write!(out, " (kept from the command: {})", self.kept.join(", "));
            }
        }
        let first = 2.0
            * self.first_look as f64
            * self.benchmarks as f64
            * (self.round.warm_up + self.round.measurement);
        let _ = write!(
            out,
            "; the first {} about {}",
            if self.first_look == 1 {
                "round".to_owned()
            } else {
                format!("{} rounds", self.first_look)
            },
            duration_text(first)
        );
        for note in self.notes.iter().chain(&self.untimed) {
            let _ = write!(out, "; {note}");
        }
        out
    }

    /// Reads a round: each side's measurements and the wall time its run took. Returns a
    /// line to print when the round took longer than planned.
    pub fn observe(
        &mut self,
        sides: &[(&[Measurement], Duration)],
        round: usize,
    ) -> Option<String> {
        let mut costs: HashMap<&str, Vec<f64>> = HashMap::new();
        // What one plain run of each benchmark takes: the user's settings, or as long as its
        // samples took where its code sets its own, and the analysis a round showed.
        let mut plain: HashMap<&str, f64> = HashMap::new();
        let mut overran = 0;
        let mut measured = 0;
        for (measurements, wall) in sides {
            let timed: Vec<(&str, f64, f64)> = measurements
                .iter()
                .filter(|m| m.custom.is_none())
                .map(|m| {
                    let sampled = m.samples.times().iter().sum::<f64>() / 1e9;
                    (m.id.as_str(), sampled, least_sampling(m))
                })
                .collect();
            if timed.is_empty() {
                continue;
            }
            let busy: f64 = timed.iter().map(|(_, s, _)| self.round.warm_up + s).sum();
            let overhead = (wall.as_secs_f64() - busy).max(0.0) / timed.len() as f64;
            for (id, sampled, least) in timed {
                measured += 1;
                let cost = self.round.warm_up + sampled + overhead;
                let slow = sampled >= OVERRAN * self.round.measurement;
                if slow {
                    overran += 1;
                }
                costs.entry(id).or_default().push(cost);
                // Timing set in code holds for a plain run as well: it costs what the round did
                // (its warm-up too, in the overhead, when the code sets that; crates that set
                // one set both, as base64's benches do). Iterations too slow for the plan take
                // longer still at the plain run's samples.
                let by_code = slow && least < self.round.measurement;
                let runs = self.code_timed.entry(id.to_owned()).or_default();
                runs.0 += usize::from(by_code);
                runs.1 += 1;
                let own = if by_code {
                    cost
                } else {
                    let plain_run = self.plain.warm_up + self.plain.measurement.max(sampled);
                    plain_run.max(floor_per_benchmark(plain_run)) + overhead
                };
                let entry = plain.entry(id).or_insert(own);
                *entry = entry.max(own);
            }
        }
        for (id, side_costs) in costs {
            let mean = side_costs.iter().sum::<f64>() / side_costs.len() as f64;
            self.cost.insert(id.to_owned(), mean);
        }
        let mut said = Vec::new();
        if round == 1 && !self.budget_given && !plain.is_empty() {
            let estimate: f64 = plain.values().sum();
            if (estimate - self.budget).abs() >= 1.0 {
                said.push(format!(
                    "one plain run of the suite re-estimated from round 1 (its analysis, and the timing its code sets): the budget is {}",
                    duration_text(estimate)
                ));
            }
            self.budget = estimate;
        }
        if overran > 0 {
            let all: f64 = 2.0 * self.cost.values().sum::<f64>();
            said.insert(0, format!(
                "in round {round}, {overran} of {measured} benchmark runs took {OVERRAN} times the planned measurement or longer (timing fixed in their code, or iterations too slow for {} samples): a round of every benchmark now takes about {}",
                self.round.sample_size,
                duration_text(all)
            ));
        }
        (!said.is_empty()).then(|| format!("plan: {}", said.join("; ")))
    }

    /// When benchmarks among `open` set their timing in code, which the command line cannot
    /// shorten: how many, and the budget that gives every one of `open` the rounds a
    /// regression needs, from `rounds` done and `spent` seconds; `None` otherwise.
    pub fn code_timed_advice(&self, open: &[String], rounds: usize, spent: f64) -> Option<String> {
        let timed = open
            .iter()
            .filter(|id| {
                self.code_timed
                    .get(*id)
                    .is_some_and(|(overran, runs)| 2 * overran > *runs)
            })
            .count();
        if timed == 0 {
            return None;
        }
        let needed = benchgate_gate::sequential::MIN_ROUNDS_TO_FAIL
            .saturating_sub(rounds)
            .max(1);
        let budget = spent + needed as f64 * self.next_round(open);
        let minutes = (budget / 60.0).ceil().max(1.0);
        Some(format!(
            "{timed} of them set their own timing in code, which the command line cannot shorten, so a round costs about as much as a plain run of them on each side, and a regression is confirmed only after {} rounds: `--budget {minutes}m` (the Action's `budget` input) gives them those rounds, or shorter timing in their code does",
            benchgate_gate::sequential::MIN_ROUNDS_TO_FAIL
        ))
    }

    /// Seconds the next round of `open` takes, both sides, as the rounds so far measured them.
    pub fn next_round(&self, open: &[String]) -> f64 {
        let known: Vec<f64> = self.cost.values().copied().collect();
        let typical = if known.is_empty() {
            self.round.warm_up + self.round.measurement
        } else {
            known.iter().sum::<f64>() / known.len() as f64
        };
        2.0 * open
            .iter()
            .map(|id| self.cost.get(id).copied().unwrap_or(typical))
            .sum::<f64>()
    }
}

/// Makes the plan for `sides` and marks the executables that take its options: Criterion
/// harnesses (their `--help`) that accept them (a `--list` with them, in fractions of a
/// second or else whole seconds). Prints it.
pub fn make(
    sides: &mut [Side],
    setting: &Setting<'_>,
    scratch: &Path,
    target_dir: &Path,
) -> TimingPlan {
    let home = scratch.join("criterion-plan");
    let mut defaults = None;
    let mut not_criterion = Vec::new();
    let mut helpless = Vec::new();
    let mut criterion_flags: Vec<Vec<bool>> = Vec::new();
    for side in sides.iter() {
        let mut flags = Vec::new();
        for exe in &side.executables {
            let help = side_build::help_text(exe, &home, target_dir);
            let criterion = match help.as_deref().and_then(Defaults::from_help) {
                Some(own) => {
                    // The head's settings are the ones a plain run of the change would use.
                    defaults = Some(own);
                    true
                }
                None => {
                    let helpless_criterion =
                        help.is_none() && side_build::lists_as_criterion(exe, &home, target_dir);
                    let list = if helpless_criterion {
                        &mut helpless
                    } else {
                        &mut not_criterion
                    };
                    if !list.contains(&exe.target) {
                        list.push(exe.target.clone());
                    }
                    helpless_criterion
                }
            };
            flags.push(criterion);
        }
        criterion_flags.push(flags);
    }
    if defaults.is_none() && !helpless.is_empty() {
        // No executable says what a plain run gives a benchmark: Criterion's defaults, which a
        // bench's code shortens less often than it lengthens them (read again after each
        // round from what the samples took).
        defaults = Some(CRITERION);
    }
    let mut plan = TimingPlan::new(&Setting {
        defaults,
        ..*setting
    });
    if !helpless.is_empty() {
        plan.notes.push(format!(
            "{} {} `--help` (Criterion 0.5 without clap's help), so a plain run is taken to be at Criterion's defaults",
            helpless.join(", "),
            if helpless.len() == 1 { "refuses" } else { "refuse" }
        ));
    }
    let whole = plan.whole_seconds();
    let mut refused = Vec::new();
    let mut used_whole = false;
    for (side, flags) in sides.iter_mut().zip(&criterion_flags) {
        for (exe, criterion) in side.executables.iter_mut().zip(flags) {
            if !criterion || plan.args.is_empty() {
                continue;
            }
            if side_build::accepts(exe, setting.bench, &plan.args, &home, target_dir) {
                exe.timed = true;
            } else if side_build::accepts(exe, setting.bench, &whole, &home, target_dir) {
                exe.timed = true;
                used_whole = true;
            } else if !refused.contains(&exe.target) {
                refused.push(exe.target.clone());
            }
        }
    }
    if used_whole {
        // One plan for every executable: a round's settings are the same on both sides.
        plan.adopt_whole_seconds();
    }
    if !not_criterion.is_empty() {
        plan.untimed.push(format!(
            "left alone, not Criterion: {}",
            not_criterion.join(", ")
        ));
    }
    if !refused.is_empty() {
        plan.untimed.push(format!(
            "left alone, refusing Criterion's timing options: {}",
            refused.join(", ")
        ));
    }
    eprintln!("benchgate: {}", plan.describe());
    plan
}

/// The least seconds a default budget gives a benchmark whose plain run takes `plain_seconds`.
/// The least time Criterion could have taken `m`'s samples in: each iteration as fast as its
/// mean, and sample i of n doing i iterations (its linear mode's fewest). Far below the time the
/// samples took, the count of iterations was chosen to fill a longer measurement time.
fn least_sampling(m: &Measurement) -> f64 {
    let iterations: f64 = m.samples.iters().iter().sum();
    let seconds: f64 = m.samples.times().iter().sum::<f64>() / 1e9;
    let n = m.samples.iters().len() as f64;
    if iterations > 0.0 {
        seconds / iterations * n * (n + 1.0) / 2.0
    } else {
        seconds
    }
}

fn floor_per_benchmark(plain_seconds: f64) -> f64 {
    FLOOR_RUNS * FLOOR_RUN.min(plain_seconds)
}

/// Seconds as Criterion's options take them: at most three decimals, no trailing zeros.
fn seconds_text(seconds: f64) -> String {
    let text = format!("{seconds:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn seconds_text_unit(seconds: f64) -> String {
    format!("{} s", seconds_text(seconds))
}

/// A duration for people: seconds below two minutes, else minutes.
fn duration_text(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{:.1} min", seconds / 60.0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn bench(words: &[&str]) -> CargoBench {
        let command: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        CargoBench::parse(&command).unwrap().unwrap()
    }

    fn adaptive() -> Rounds {
        Rounds::Adaptive {
            max: 8,
            budget: None,
            stop_futile: true,
        }
    }

    /// The plan of adaptive rounds for `benchmarks` at Criterion's defaults, with no budget.
    fn at_criterions_defaults(benchmarks: usize) -> TimingPlan {
        TimingPlan::new(&Setting {
            bench: &bench(&["cargo", "bench"]),
            benchmarks,
            defaults: Some(CRITERION),
            rounds: adaptive(),
            budget: None,
        })
    }

    #[test]
    fn criterions_defaults_plan_ten_short_runs_a_benchmark_within_one_plain_run() {
        let plan = at_criterions_defaults(6);
        assert_eq!(plan.budget, 48.0);
        assert_eq!(
            plan.args,
            [
                "--warm-up-time",
                "0.2",
                "--measurement-time",
                "0.6",
                "--sample-size",
                "20",
                "--nresamples",
                "1000",
                "--noplot"
            ]
        );
        let text = plan.describe();
        assert!(
            text.contains("up to 8 rounds within 48 s of benchmarking (one plain run of the suite at Criterion's defaults: 3 s warm-up, 5 s measurement, 100 samples a benchmark)"),
            "{text}"
        );
        assert!(text.contains("the first 2 rounds about 19 s"), "{text}");
    }

    #[test]
    fn the_commands_own_timing_sets_the_budget_and_shorter_rounds_take_its_place() {
        // unicode-segmentation's command: 16 benchmarks at 0.5 s + 1.5 s. Kept in every round,
        // a round cost a plain run per side and the default budget bought 2 rounds.
        let command = [
            "cargo",
            "bench",
            "--",
            "--warm-up-time",
            "0.5",
            "--measurement-time",
            "1.5",
            "--sample-size",
            "30",
        ];
        let plan = TimingPlan::new(&Setting {
            bench: &bench(&command),
            benchmarks: 16,
            defaults: Some(CRITERION),
            rounds: adaptive(),
            budget: None,
        });
        // The floor, 10 runs of 0.8 s a benchmark, is more than a plain run's 2 s: 128 s, of
        // which the first look takes 40% over 2 rounds, both sides: 0.8 s a run.
        assert_eq!(plan.budget, 128.0);
        assert_eq!(
            plan.args,
            [
                "--warm-up-time",
                "0.2",
                "--measurement-time",
                "0.6",
                "--nresamples",
                "1000",
                "--noplot"
            ]
        );
        let text = plan.describe();
        assert!(
            text.contains("each round gives a benchmark 0.2 s warm-up, 0.6 s measurement, 30 samples, 1000 bootstrap resamples, no plots (in place of the command's --warm-up-time 0.5, --measurement-time 1.5: rounds shorter than a plain run buy more of them) (kept from the command: --sample-size 30)"),
            "{text}"
        );
        assert!(
            text.contains("one plain run of the suite at the command's settings would take 32 s"),
            "{text}"
        );
        // What the executables get: the plan's timing, not the command's as well (clap
        // refuses an option given twice).
        let args = bench(&command).executable_args_with(None, &plan.args);
        assert_eq!(
            args.iter().filter(|a| *a == "--measurement-time").count(),
            1,
            "{args:?}"
        );
        assert!(args.windows(2).any(|w| w == ["--measurement-time", "0.6"]));
        // A budget that gives every round a plain run keeps the command's timing.
        let ample = TimingPlan::new(&Setting {
            bench: &bench(&command),
            benchmarks: 16,
            defaults: Some(CRITERION),
            rounds: adaptive(),
            budget: Some(Duration::from_secs(3600)),
        });
        assert_eq!(ample.args, ["--noplot"]);
        assert!(
            ample.describe().contains(
                "(kept from the command: --warm-up-time 0.5, --measurement-time 1.5, --sample-size 30)"
            ),
            "{}",
            ample.describe()
        );
    }

    #[test]
    fn a_budget_shares_out_among_fixed_rounds_in_place_of_the_commands_timing() {
        let plan = TimingPlan::new(&Setting {
            bench: &bench(&[
                "cargo",
                "bench",
                "--",
                "--measurement-time",
                "2",
                "--noplot",
            ]),
            benchmarks: 4,
            defaults: Some(CRITERION),
            rounds: Rounds::Fixed(3),
            budget: Some(Duration::from_secs(60)),
        });
        // 60 s over 3 rounds × 2 sides × 4 benchmarks: 2.5 s a run, shorter than a plain run's
        // 3 s + 2 s, a quarter of it warming up.
        assert_eq!(
            plan.args,
            [
                "--warm-up-time",
                "0.625",
                "--measurement-time",
                "1.875",
                "--sample-size",
                "20",
                "--nresamples",
                "1000"
            ]
        );
        assert!(
            plan.describe()
                .contains("(in place of the command's --measurement-time 2: "),
            "{}",
            plan.describe()
        );
        // A budget beyond the user's settings changes nothing but the plots.
        let ample = TimingPlan::new(&Setting {
            bench: &bench(&["cargo", "bench"]),
            benchmarks: 2,
            defaults: Some(CRITERION),
            rounds: Rounds::Fixed(2),
            budget: Some(Duration::from_secs(3600)),
        });
        assert_eq!(ample.args, ["--noplot"]);
        assert!(
            ample
                .describe()
                .contains("3 s warm-up, 5 s measurement, 100 samples")
        );
    }

    #[test]
    fn the_benchs_own_defaults_come_from_its_help_and_quick_keeps_the_sample_size() {
        // Criterion 0.8's help, for a group configured with 0.2 s / 0.6 s / 20 samples.
        let help = "Options:\n      --sample-size <sample-size>\n          Changes the default size of the sample for this run. [default: 20]\n      --warm-up-time <warm-up-time>\n          Changes the default warm up time for this run. [default: 0]\n      --measurement-time <measurement-time>\n          Changes the default measurement time for this run. [default: 0]\n      --nresamples <nresamples>\n          Changes the default number of resamples for this run. [default: 100000]\n";
        let own = Defaults::from_help(help).unwrap();
        assert_eq!(
            own,
            Defaults {
                warm_up: 0.5,
                measurement: 0.5,
                sample_size: 20
            }
        );
        // Criterion 0.4's, one line an option.
        let old = "    -b, --baseline <baseline>    Compare to a named baseline.\n        --measurement-time <measurement-time>    Changes the default measurement time for this run. [default: 5]\n        --sample-size <sample-size>    Changes the default size of the sample for this run. [default: 100]\n        --warm-up-time <warm-up-time>    Changes the default warm up time for this run. [default: 3]\n";
        assert_eq!(Defaults::from_help(old), Some(CRITERION));
        assert_eq!(
            Defaults::from_help("Usage: bench [OPTIONS]\n  --bench\n  --list\n"),
            None
        );
        let quick = TimingPlan::new(&Setting {
            bench: &bench(&["cargo", "bench", "--", "--quick"]),
            benchmarks: 3,
            defaults: Some(own),
            rounds: adaptive(),
            budget: None,
        });
        // A plain run of these three takes about 3 s: less than the least a benchmark gets.
        assert_eq!(quick.budget, 24.0);
        let text = quick.describe();
        assert!(
            text.contains("within 24 s of benchmarking (the least a benchmark gets, 10 runs of 0.8 s; one plain run of the suite at the bench's own settings would take 3 s: 0.5 s warm-up, 0.5 s measurement, 20 samples a benchmark)"),
            "{text}"
        );
        assert_eq!(
            quick.args,
            [
                "--warm-up-time",
                "0.2",
                "--measurement-time",
                "0.6",
                "--nresamples",
                "1000",
                "--noplot"
            ]
        );
        assert!(text.contains("(kept from the command: --quick)"), "{text}");
    }

    /// A measurement whose samples took `sampled_seconds` in all, in `samples` samples of 1,
    /// 2, 3, ... times `iterations` iterations.
    fn measured(id: &str, sampled_seconds: f64, samples: usize, iterations: f64) -> Measurement {
        let estimate = benchgate_collector::Estimate {
            point: 1.0,
            lower: 1.0,
            upper: 1.0,
            confidence_level: 0.95,
        };
        let iters: Vec<f64> = (1..=samples).map(|i| i as f64 * iterations).collect();
        let all: f64 = iters.iter().sum();
        let times = iters
            .iter()
            .map(|i| sampled_seconds * 1e9 * i / all)
            .collect();
        Measurement {
            id: benchgate_collector::BenchmarkId::parse(id).unwrap(),
            throughput: None,
            mean: estimate,
            median: estimate,
            sampling_mode: None,
            samples: benchgate_collector::Samples::new(iters, times).unwrap(),
            custom: None,
        }
    }

    #[test]
    fn a_round_re_plans_from_what_criterion_really_did() {
        let mut plan = at_criterions_defaults(3);
        assert_eq!(plan.budget, 24.0);
        // `quick` kept the plan; `fixed` sets 10 s in its code (20 samples of fast
        // iterations); `slow` has iterations of 5 s, two samples of one. Each side's run took
        // 1.8 s beyond the samples and the warm-ups (0.6 s of analysis a benchmark).
        let side = [
            measured("quick", 0.6, 20, 1_000.0),
            measured("fixed", 10.0, 20, 1_000.0),
            measured("slow", 10.0, 2, 1.0),
        ];
        let wall = Duration::from_secs_f64(0.2 + 0.6 + 0.2 + 10.0 + 0.2 + 10.0 + 1.8);
        let line = plan.observe(&[(&side, wall), (&side, wall)], 1).unwrap();
        assert!(
            line.contains("in round 1, 4 of 6 benchmark runs took 1.5 times"),
            "{line}"
        );
        // A plain run: 3 s + 5 s + 0.6 s for `quick`; for `fixed` what the round took, its
        // code's timing holding there too (0.2 s + 10 s + 0.6 s); 3 s + 10 s + 0.6 s for
        // `slow`, whose samples a plain run's warm-up does not shorten.
        assert!((plan.budget - 33.0).abs() < 1e-9, "{}", plan.budget);
        assert!(line.contains("the budget is 33 s"), "{line}");
        let next = plan.next_round(&["fixed".to_owned()]);
        assert!((next - 2.0 * (0.2 + 10.0 + 0.6)).abs() < 1e-9, "{next}");
        // Only a benchmark timed by its code brings the advice, with the budget of four rounds
        // after the two done: two more rounds of both (43.2 s each) beyond the 50 s spent.
        assert_eq!(plan.code_timed_advice(&["slow".to_owned()], 2, 50.0), None);
        let advice = plan
            .code_timed_advice(&["fixed".to_owned(), "slow".to_owned()], 2, 50.0)
            .unwrap();
        assert!(
            advice.starts_with("1 of them set their own timing in code")
                && advice.contains("`--budget 3m`"),
            "{advice}"
        );
    }

    /// One run that took far longer than planned, beside three that did not, was a neighbour,
    /// not timing set in code: rand's `shuffle` bench sets none, and one overrun among 34
    /// benchmarks once brought the advice that 2 of them set their timing in code.
    #[test]
    fn only_a_benchmark_that_overruns_in_most_of_its_runs_is_timed_by_its_code() {
        let mut plan = at_criterions_defaults(2);
        let steady = [
            measured("fixed", 10.0, 20, 1_000.0),
            measured("bumped", 0.6, 20, 1_000.0),
        ];
        let disturbed = [
            measured("fixed", 10.0, 20, 1_000.0),
            measured("bumped", 2.0, 20, 1_000.0),
        ];
        let wall = Duration::from_secs_f64(0.2 + 10.0 + 0.2 + 2.0 + 1.2);
        plan.observe(&[(&steady, wall), (&disturbed, wall)], 1);
        plan.observe(&[(&steady, wall), (&steady, wall)], 2);
        let open = ["fixed".to_owned(), "bumped".to_owned()];
        let advice = plan.code_timed_advice(&open, 2, 50.0).unwrap();
        assert!(
            advice.starts_with("1 of them set their own timing in code"),
            "{advice}"
        );
        assert_eq!(plan.code_timed_advice(&open[1..], 2, 50.0), None);
    }

    /// httparse 1.10.1 as published: Criterion 0.3, whose options take whole seconds, and a
    /// bench that sets 0.1 s of warm-up and measurement and 200 samples (its help prints
    /// `[default: 0]`).
    #[test]
    fn whole_seconds_longer_than_a_plain_run_leave_the_benchs_own_timing() {
        let own = Defaults {
            warm_up: 0.5,
            measurement: 0.5,
            sample_size: 200,
        };
        let mut plan = TimingPlan::new(&Setting {
            bench: &bench(&["cargo", "bench", "--bench", "parse", "--", "method/"]),
            benchmarks: 11,
            defaults: Some(own),
            rounds: adaptive(),
            budget: None,
        });
        assert_eq!(plan.budget, 88.0);
        plan.adopt_whole_seconds();
        // A second of each would be 2 s a run where a plain run gives a benchmark 1 s.
        assert_eq!(
            plan.args,
            ["--sample-size", "20", "--nresamples", "1000", "--noplot"]
        );
        let text = plan.describe();
        assert!(
            text.contains("each round gives a benchmark the bench's own warm-up and measurement time (its Criterion takes whole seconds, and a second of each is more than a plain run gives it), 20 samples, 1000 bootstrap resamples, no plots"),
            "{text}"
        );
        // At Criterion's defaults a second of each is still far shorter than a plain run.
        let mut plan = at_criterions_defaults(6);
        plan.adopt_whole_seconds();
        assert_eq!(
            plan.args[..4],
            ["--warm-up-time", "1", "--measurement-time", "1"]
        );
        assert_eq!((plan.round.warm_up, plan.round.measurement), (1.0, 1.0));
        assert!(!plan.own_timing);
    }

    #[test]
    fn whole_seconds_round_up() {
        let plan = at_criterions_defaults(6);
        assert_eq!(
            plan.whole_seconds(),
            [
                "--warm-up-time",
                "1",
                "--measurement-time",
                "1",
                "--sample-size",
                "20",
                "--nresamples",
                "1000",
                "--noplot"
            ]
        );
    }
}
