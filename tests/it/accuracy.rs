//! The gate's accuracy, measured. Real A/A recordings from this kind of machine (the same code
//! run after run, idle and under interference: tests/fixtures/recordings/, made with
//! scripts/record-aa.sh) and the corpus's base/new pairs, with a known slowdown injected into
//! one head benchmark at a time (every time and sample scaled by 1 + δ). For each mode, machine
//! state and metric it tallies P(regressed), P(inconclusive) and P(pass) against δ, prints the
//! table per recording (`cargo test --release --test it accuracy -- --nocapture`) and checks
//! the targets per machine state (each state's recordings pooled):
//! - identical code is `regressed` in at most 1% of benchmark comparisons;
//! - a slowdown at or beyond the limit is `pass` or `warn` at most 5% of the time;
//! - adaptive A/B decides at least 95% (idle) and 85% (busy) of identical comparisons, in no
//!   more rounds on average than 3 fixed ones;
//! - a stored baseline with 10+ runs of history on an idle machine decides at least 90% of
//!   identical comparisons (both metrics together), also beside one to three other benchmarks
//!   that really changed in the same run; with the head re-run to 3 head runs, 97% of them,
//!   and 90% of slowdowns of 1.5 times the limit `regressed`, latency and throughput alike;
//! - same-job A/B with 3 rounds on an idle machine: at least 90% of identical-code comparisons
//!   are `pass`, and at least 90% of slowdowns of 1.5 times the limit are `regressed` among
//!   the benchmarks the gate does not report too noisy to gate at 3 rounds.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use benchgate_collector::cargo_criterion::read_messages;
use benchgate_collector::criterion::read_tree;
use benchgate_collector::{Estimate, Measurement, Samples};
use benchgate_gate::Policy;
use benchgate_gate::decision::{
    HeadReruns, Input, Metric, Mode, Plan, Verdict, evaluate, evaluate_with, round_statistic,
};
use benchgate_gate::noise::SAME_LEVEL_SHARE_OF_LIMIT;
use benchgate_gate::policy::Statistic;

const ROUNDS: usize = 3;
/// The most rounds adaptive A/B runs (`benchgate ab`'s default `--max-rounds`).
const MAX_ROUNDS: usize = 8;
const HISTORY: usize = 10;
/// The most runs before the base a stored baseline's history holds in the harness.
const HISTORY_WINDOW: usize = 30;
/// The short histories measured: the fewest runs a stored baseline is calibrated from
/// (`noise::MIN_SHORT_HISTORY`), and one under `noise::MIN_HISTORY`.
const SHORT_HISTORIES: [usize; 2] = [benchgate_gate::noise::MIN_SHORT_HISTORY, 8];
/// What one plain run of a benchmark costs at Criterion's defaults (3 s warm-up, 5 s
/// measurement) in runs of it at the recordings' timing (0.2 s + 0.6 s, the timing `ab`'s plan
/// gives each round with Criterion's defaults), with the analysis and the process a short run
/// also pays (about 0.2 s, seen in `ab`'s rounds): `ab`'s default budget, both sides and every
/// round, is this many runs of each benchmark. The plain run's own analysis, longer at 100
/// samples, is left out: in the plain run's favour.
const PLAIN_RUN_IN_ROUND_RUNS: usize = 8;
/// The most head runs a stored baseline's re-runs take (`benchgate gate`'s default
/// `--max-runs` in the Action's `pr` mode).
const HEAD_RUNS: usize = 3;
const LATENCY_LIMIT: f64 = 0.15;
/// Identical code `regressed`, at most (the target).
const IDENTICAL_REGRESSED_BOUND: f64 = 0.01;
/// A slowdown at or beyond the limit let through (`pass` or `warn`), at most (the target, in
/// every setting). Exactly at the limit a calibrated 95% bound lets 5% through by
/// construction: fixed A/B rounds keep a margin for it (`FIXED_AB_PASS_SHARE`).
const LET_THROUGH_BOUND: f64 = 0.05;
/// Adaptive A/B: identical code decided (not `inconclusive`), at least, idle and busy, in no more
/// rounds on average than `ROUNDS` fixed ones (per recording, the whole suite: a round runs
/// every benchmark still undecided).
const ADAPTIVE_DECIDED_IDLE: f64 = 0.95;
const ADAPTIVE_DECIDED_BUSY: f64 = 0.85;
/// A stored baseline with at least 10 runs of history, idle: identical code decided, at least.
const STORED_DECIDED_IDLE: f64 = 0.90;
/// The same with re-runs of the head, to `HEAD_RUNS` head runs: decided, at least (#46).
const STORED_RERUNS_DECIDED_IDLE: f64 = 0.97;
/// A stored baseline with a short history (`SHORT_HISTORIES`), idle, one head run: identical
/// code decided, at least. Before a short history was read at all, none was (the noise was
/// assumed, and nothing passed); now 76–94% per recording and metric (docs/accuracy.md, "A
/// short history").
const SHORT_HISTORY_DECIDED_IDLE: f64 = 0.70;
/// With re-runs, idle: a slowdown of 1.5 times the limit `regressed`, at least, beside up to
/// three real changes, for latency and throughput benchmarks alike, on each idle recording and
/// on both pooled (#46). The second idle day's latency benchmarks reach 91.1–91.5% with a base
/// run in its faster mode judged at its level (docs/accuracy.md, "A base run in its faster
/// mode"), 88.9–89.3% with it alone; pooled with the first day, 90.3–90.5% with the base's
/// level a median of nine runs ("A base of nine runs"), 88.9–89.3% with five.
const STORED_RERUNS_CAUGHT_IDLE: f64 = 0.90;
const THROUGHPUT_LIMIT: f64 = 1.0 / 0.9 - 1.0;
/// Benchmarks a recorded head really slowed (twice the work), beside the others it changed,
/// on an idle machine: `regressed`, at least (#46 asks 90% at 1.5 times the limit).
const CHANGED_REGRESSED: f64 = 0.90;
/// The real changes made beside the benchmark judged in a stored-baseline comparison: one to
/// three other benchmarks doing this much more work.
const OTHERS_MOVED: [&[f64]; 3] = [&[0.71], &[0.71, 0.3], &[0.71, 0.3, 0.2]];

/// The harness keeps a core busy for minutes: it runs only while no test that measures wall
/// time does (`support::loading_the_machine`), so that what disturbs those is the load the
/// suite runs under, not this.
fn beside_no_timing_test() -> std::sync::RwLockReadGuard<'static, ()> {
    crate::support::loading_the_machine()
}

/// The metric a table's metric name stands for.
fn metric_of(name: &str) -> Metric {
    if name == "latency" {
        Metric::Time
    } else {
        Metric::Throughput
    }
}

/// The failure, if a stored baseline with re-runs on an idle machine (one recording, or a
/// machine state's recordings pooled) took slowdowns of 1.5 times the limit `regressed` less
/// often than `STORED_RERUNS_CAUGHT_IDLE`.
fn reruns_caught_short(setting: &str, metric: &str, delta: i64, tally: &Tally) -> Option<String> {
    (setting.starts_with("stored baseline + history")
        && setting.contains("re-runs")
        && setting_is_idle(setting)
        && delta == key(one_and_a_half_limits(metric_of(metric)))
        && tally.share(tally.regressed) < STORED_RERUNS_CAUGHT_IDLE)
        .then(|| {
            format!(
                "{setting}, {metric}, 1.5 times the limit: regressed only {:.1}%",
                100.0 * tally.share(tally.regressed)
            )
        })
}

/// The slowdowns injected (as time increases), including each metric's limit and 1.5× it.
fn deltas() -> Vec<f64> {
    let mut deltas = vec![
        0.0,
        0.02,
        0.05,
        0.08,
        0.10,
        THROUGHPUT_LIMIT,
        0.12,
        0.15,
        0.20,
        0.30,
    ];
    deltas.push(1.0 / 0.85 - 1.0); // throughput dropping 15% = 1.5 × its limit
    deltas.push(0.225); // latency 1.5 × its limit
    deltas.sort_by(f64::total_cmp);
    deltas
}

fn limit(metric: Metric) -> f64 {
    match metric {
        Metric::Time | Metric::Lower => LATENCY_LIMIT,
        Metric::Throughput | Metric::Higher => THROUGHPUT_LIMIT,
    }
}

fn one_and_a_half_limits(metric: Metric) -> f64 {
    match metric {
        Metric::Time | Metric::Lower => 0.225,
        Metric::Throughput | Metric::Higher => 1.0 / 0.85 - 1.0,
    }
}

/// The recordings measured, each a directory of tests/fixtures/recordings/: `idle` and `busy`
/// (2026-11-22, 24 runs of the 18 benchmarks the sample crate had then), `idle-2026-11-26` and
/// `busy-2026-11-26` (a second day on another VM, 40 runs each of its 25 benchmarks: more
/// independent adaptive windows).
const RECORDINGS: [&str; 4] = ["idle", "busy", "idle-2026-11-26", "busy-2026-11-26"];

/// Whether a recording's machine was idle (its name says so).
fn is_idle(state: &str) -> bool {
    state.starts_with("idle") || state.starts_with("changes-idle")
}

/// A setting ("<mode>, <recording>") with its recording's day left off: "<mode>, idle".
fn machine_state_setting(setting: &str) -> String {
    match setting.rsplit_once(", ") {
        Some((mode, recording)) => {
            let state = if is_idle(recording) { "idle" } else { "busy" };
            format!("{mode}, {state}")
        }
        None => setting.to_owned(),
    }
}

/// Whether a setting ("<mode>, <state>") was measured on an idle machine.
fn setting_is_idle(setting: &str) -> bool {
    setting.rsplit(", ").next().is_some_and(is_idle)
}

fn load_recording(state: &str) -> Vec<Vec<Measurement>> {
    load_runs(state, "")
}

/// The runs of tests/fixtures/recordings/STATE whose file names start with `prefix`, in order.
fn load_runs(state: &str, prefix: &str) -> Vec<Vec<Measurement>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/recordings")
        .join(state);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}; record with scripts/record-aa.sh", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            read_messages(std::io::BufReader::new(std::fs::File::open(f).unwrap()), f).unwrap()
        })
        .collect()
}

/// The measurement with every time multiplied by `1 + delta`.
fn slowed(m: &Measurement, delta: f64) -> Measurement {
    let factor = 1.0 + delta;
    let scale = |e: &Estimate| Estimate {
        point: e.point * factor,
        lower: e.lower * factor,
        upper: e.upper * factor,
        ..*e
    };
    Measurement {
        mean: scale(&m.mean),
        median: scale(&m.median),
        samples: Samples::new(
            m.samples.iters().to_vec(),
            m.samples.times().iter().map(|t| t * factor).collect(),
        )
        .unwrap(),
        ..m.clone()
    }
}

fn slow_one(round: &[Measurement], id: &str, delta: f64) -> Vec<Measurement> {
    round
        .iter()
        .map(|m| {
            if m.id.as_str() == id {
                slowed(m, delta)
            } else {
                m.clone()
            }
        })
        .collect()
}

#[derive(Default, Clone, Copy)]
struct Tally {
    regressed: usize,
    inconclusive: usize,
    pass: usize,
    warn: usize,
    other: usize,
    /// Rounds each verdict took, summed (adaptive A/B).
    rounds: usize,
    /// Comparisons the gate could gate: neither reported "too noisy to gate" at its plan's
    /// last round count (the report's `too_noisy`) nor marked uncalibrated (noise assumed, †),
    /// and how many of those were `regressed`.
    gateable: usize,
    gateable_regressed: usize,
}

/// Whether the report warns that a benchmark's verdict is not one to count on: too noisy to
/// gate, or judged against an assumed noise level (uncalibrated).
fn warned(b: &benchgate_gate::decision::BenchmarkResult) -> bool {
    b.too_noisy.is_some() || b.uncalibrated
}

impl Tally {
    fn add_after(&mut self, verdict: Verdict, rounds: usize, too_noisy: bool) {
        self.rounds += rounds;
        if !too_noisy {
            self.gateable += 1;
            self.gateable_regressed += usize::from(verdict == Verdict::Regressed);
        }
        match verdict {
            Verdict::Regressed => self.regressed += 1,
            Verdict::Inconclusive => self.inconclusive += 1,
            Verdict::Pass => self.pass += 1,
            Verdict::Warn => self.warn += 1,
            _ => self.other += 1,
        }
    }
    fn merge(&mut self, other: &Tally) {
        self.regressed += other.regressed;
        self.inconclusive += other.inconclusive;
        self.pass += other.pass;
        self.warn += other.warn;
        self.other += other.other;
        self.rounds += other.rounds;
        self.gateable += other.gateable;
        self.gateable_regressed += other.gateable_regressed;
    }
    fn n(&self) -> usize {
        self.regressed + self.inconclusive + self.pass + self.warn + self.other
    }
    /// Let through: `pass` or `warn` (a `warn` does not fail the gate).
    fn let_through(&self) -> usize {
        self.pass + self.warn
    }
    fn mean_rounds(&self) -> f64 {
        self.rounds as f64 / self.n().max(1) as f64
    }
    fn share(&self, count: usize) -> f64 {
        count as f64 / self.n().max(1) as f64
    }
    /// `regressed` among the comparisons not reported too noisy to gate.
    fn gateable_caught(&self) -> f64 {
        self.gateable_regressed as f64 / self.gateable.max(1) as f64
    }
}

/// (setting, metric, δ in per-mille) → tally.
type Table = BTreeMap<(String, &'static str, i64), Tally>;

fn metric_name(metric: Metric) -> &'static str {
    match metric {
        Metric::Time | Metric::Lower => "latency",
        Metric::Throughput | Metric::Higher => "throughput",
    }
}

fn key(delta: f64) -> i64 {
    (delta * 1000.0).round() as i64
}

/// One comparison: `base`/`head` rounds; every benchmark judged at δ = 0, then each benchmark
/// slowed alone at every δ > 0. `others` are benchmarks really slowed in every head, left out
/// of the tally.
fn tally_comparison(
    table: &mut Table,
    policy: &Policy,
    setting: &str,
    base: &[Vec<Measurement>],
    head: &[Vec<Measurement>],
    history: &HashMap<String, Vec<f64>>,
    others: &[&str],
) {
    let mode = if base.len() > 1 {
        Mode::SameJobAb
    } else {
        Mode::StoredBaseline
    };
    let decision = evaluate(
        &Input {
            mode,
            base_rounds: base,
            head_rounds: head,
            history,
        },
        policy,
    );
    let tallied = |b: &&benchgate_gate::decision::BenchmarkResult| {
        b.ratio.is_some() && !others.contains(&b.id.as_str())
    };
    for b in decision.benchmarks.iter().filter(tallied) {
        table
            .entry((setting.to_owned(), metric_name(b.metric), 0))
            .or_default()
            .add_after(b.verdict, b.rounds, warned(b));
    }
    let compared: Vec<(String, Metric)> = decision
        .benchmarks
        .iter()
        .filter(tallied)
        .map(|b| (b.id.clone(), b.metric))
        .collect();
    for delta in deltas().into_iter().filter(|d| *d > 0.0) {
        for (id, metric) in &compared {
            let slowed_head: Vec<Vec<Measurement>> = head
                .iter()
                .map(|round| slow_one(round, id, delta))
                .collect();
            let decision = evaluate(
                &Input {
                    mode,
                    base_rounds: base,
                    head_rounds: &slowed_head,
                    history,
                },
                policy,
            );
            let result = decision.benchmarks.iter().find(|b| &b.id == id).unwrap();
            table
                .entry((setting.to_owned(), metric_name(*metric), key(delta)))
                .or_default()
                .add_after(result.verdict, result.rounds, warned(result));
        }
    }
}

/// A stored baseline with head re-runs as `benchgate gate -- <bench command>` runs them
/// ([`HeadReruns`]): a look after the first head run, then after each re-run of only the
/// benchmarks still undecided, to `heads.len()` head runs. Re-run k of a benchmark is always
/// the k-th recorded head run, one not used before. Returns each benchmark's outcome.
fn with_reruns(
    policy: &Policy,
    base: &[Vec<Measurement>],
    heads: &[Vec<Measurement>],
    history: &HashMap<String, Vec<f64>>,
) -> Vec<Outcome> {
    let mut reruns = HeadReruns::new(heads.len());
    let mut runs: Vec<Vec<Measurement>> = vec![heads[0].clone()];
    loop {
        let look = reruns.look(base, &runs, history, policy, |_| true);
        if look.open.is_empty() {
            return look
                .decision
                .benchmarks
                .iter()
                .filter(|b| b.ratio.is_some())
                .map(|b| Outcome {
                    id: b.id.clone(),
                    metric: b.metric,
                    verdict: b.verdict,
                    rounds: b.rounds,
                    too_noisy: warned(b),
                })
                .collect();
        }
        let next = heads[runs.len()]
            .iter()
            .filter(|m| look.open.iter().any(|id| id == m.id.as_str()))
            .cloned()
            .collect();
        runs.push(next);
    }
}

/// Stored-baseline comparisons with head re-runs: every benchmark at δ = 0, then each slowed
/// alone (in every head run) at every δ > 0; `others` really slowed in every head run and left
/// out of the tally.
fn tally_reruns(
    table: &mut Table,
    policy: &Policy,
    setting: &str,
    base: &[Vec<Measurement>],
    heads: &[Vec<Measurement>],
    history: &HashMap<String, Vec<f64>>,
    others: &[&str],
) {
    tally_outcomes(table, setting, heads, others, |heads| {
        with_reruns(policy, base, heads, history)
    });
}

/// Tallies a mode that decides each benchmark at a look of its own: every benchmark at δ = 0,
/// then each slowed alone (in every head round) at every δ > 0; `others` are left out.
fn tally_outcomes(
    table: &mut Table,
    setting: &str,
    head: &[Vec<Measurement>],
    others: &[&str],
    decide: impl Fn(&[Vec<Measurement>]) -> Vec<Outcome>,
) {
    let identical = decide(head);
    let tallied = |o: &&Outcome| !others.contains(&o.id.as_str());
    for o in identical.iter().filter(tallied) {
        table
            .entry((setting.to_owned(), metric_name(o.metric), 0))
            .or_default()
            .add_after(o.verdict, o.rounds, o.too_noisy);
    }
    for delta in deltas().into_iter().filter(|d| *d > 0.0) {
        for Outcome { id, metric, .. } in identical.iter().filter(tallied) {
            let slowed_head: Vec<Vec<Measurement>> = head
                .iter()
                .map(|round| slow_one(round, id, delta))
                .collect();
            let slowed = decide(&slowed_head)
                .into_iter()
                .find(|o| &o.id == id)
                .unwrap();
            table
                .entry((setting.to_owned(), metric_name(*metric), key(delta)))
                .or_default()
                .add_after(slowed.verdict, slowed.rounds, slowed.too_noisy);
        }
    }
}

/// Adaptive A/B as `benchgate ab` runs it: a look after 2 rounds, then after each further
/// round of only the benchmarks still undecided, to `MAX_ROUNDS`. Round k of a benchmark is
/// always the window's k-th recorded pair, so every extra round is one not used before. Each
/// benchmark's verdict is the one at the look that decided it. Returns (id, verdict, rounds).
/// With `budget`, within that many benchmark runs (both sides, every round), as `ab`'s plan
/// spends it: a round starts only if its runs fit what is left, and the benchmarks still open
/// then keep the verdict of the last look.
fn adaptive_within(
    policy: &Policy,
    base: &[Vec<Measurement>],
    head: &[Vec<Measurement>],
    budget: Option<usize>,
) -> Vec<Outcome> {
    let max = base.len().min(head.len());
    let plan = Plan::adaptive(max);
    let none = HashMap::new();
    let mut decided: BTreeMap<String, Outcome> = BTreeMap::new();
    for n in 2..=max {
        // A benchmark decided at an earlier look is not run again.
        let keep = |round: &Vec<Measurement>, k: usize| -> Vec<Measurement> {
            round
                .iter()
                .filter(|m| decided.get(m.id.as_str()).is_none_or(|o| k < o.rounds))
                .cloned()
                .collect()
        };
        let base_rounds: Vec<Vec<Measurement>> = (0..n).map(|k| keep(&base[k], k)).collect();
        let head_rounds: Vec<Vec<Measurement>> = (0..n).map(|k| keep(&head[k], k)).collect();
        let decision = evaluate_with(
            &Input {
                mode: Mode::SameJobAb,
                base_rounds: &base_rounds,
                head_rounds: &head_rounds,
                history: &none,
            },
            policy,
            plan,
        );
        for b in decision.benchmarks.iter().filter(|b| b.ratio.is_some()) {
            if decided.contains_key(&b.id) || b.rounds != n {
                continue;
            }
            if b.verdict != Verdict::Inconclusive || b.futile || n == max {
                decided.insert(b.id.clone(), Outcome::at(b, n));
            }
        }
        let open = base[n - 1]
            .iter()
            .filter(|m| !decided.contains_key(m.id.as_str()))
            .count();
        if open == 0 {
            break;
        }
        let spent: usize = base_rounds.iter().chain(&head_rounds).map(Vec::len).sum();
        if budget.is_some_and(|budget| spent + 2 * open > budget) {
            for b in decision.benchmarks.iter().filter(|b| b.ratio.is_some()) {
                if b.rounds == n && !decided.contains_key(&b.id) {
                    decided.insert(b.id.clone(), Outcome::at(b, n));
                }
            }
            break;
        }
    }
    decided.into_values().collect()
}

/// One benchmark's verdict in an adaptive comparison, and the look that decided it.
struct Outcome {
    id: String,
    metric: Metric,
    verdict: Verdict,
    /// Rounds the verdict took.
    rounds: usize,
    /// Reported too noisy to gate at the plan's last look.
    too_noisy: bool,
}

impl Outcome {
    /// `b`'s verdict at the look after `rounds` rounds.
    fn at(b: &benchgate_gate::decision::BenchmarkResult, rounds: usize) -> Self {
        Self {
            id: b.id.clone(),
            metric: b.metric,
            verdict: b.verdict,
            rounds,
            too_noisy: warned(b),
        }
    }
}

/// Base and head rounds from consecutive recorded runs, in the order `benchgate ab` runs them:
/// round k is runs 2k and 2k + 1, base first in even rounds and head first in odd ones
/// (A B, B A, ...).
fn split_ab(window: &[Vec<Measurement>]) -> (Vec<Vec<Measurement>>, Vec<Vec<Measurement>>) {
    window
        .chunks_exact(2)
        .enumerate()
        .map(|(k, pair)| {
            let (first, second) = (pair[0].clone(), pair[1].clone());
            if k.is_multiple_of(2) {
                (first, second)
            } else {
                (second, first)
            }
        })
        .unzip()
}

/// Adaptive A/B over `window` (A B, B A, …): every benchmark at δ = 0, then each slowed alone.
fn tally_adaptive(
    table: &mut Table,
    policy: &Policy,
    setting: &str,
    window: &[Vec<Measurement>],
    budget: Option<usize>,
) {
    let (base, head) = split_ab(window);
    tally_outcomes(table, setting, &head, &[], |head| {
        adaptive_within(policy, &base, head, budget)
    });
}

/// ln(statistic) of each benchmark over `runs`, oldest first: the history the store would give.
fn ln_history(runs: &[Vec<Measurement>], statistic: Statistic) -> HashMap<String, Vec<f64>> {
    let mut history: HashMap<String, Vec<f64>> = HashMap::new();
    for run in runs {
        for m in run {
            history
                .entry(m.id.as_str().to_owned())
                .or_default()
                .push(round_statistic(m, statistic).ln());
        }
    }
    history
}

fn measure_recording(table: &mut Table, policy: &Policy, runs: &[Vec<Measurement>], state: &str) {
    assert!(
        runs.len() > 2 * ROUNDS,
        "{state}: {} runs recorded",
        runs.len()
    );
    let none = HashMap::new();
    // Same-job A/B: six consecutive runs as A B, B A, A B.
    for start in 0..=runs.len() - 2 * ROUNDS {
        let (base, head) = split_ab(&runs[start..start + 2 * ROUNDS]);
        tally_comparison(
            table,
            policy,
            &format!("A/B {ROUNDS} rounds, {state}"),
            &base,
            &head,
            &none,
            &[],
        );
    }
    // Adaptive A/B: up to MAX_ROUNDS rounds from consecutive runs.
    for start in 0..=runs.len().saturating_sub(2 * MAX_ROUNDS) {
        let window = &runs[start..start + 2 * MAX_ROUNDS];
        tally_adaptive(
            table,
            policy,
            &format!("adaptive A/B (2 to {MAX_ROUNDS} rounds), {state}"),
            window,
            None,
        );
        // As `ab` runs by default: planned to one plain run of the suite.
        tally_adaptive(
            table,
            policy,
            &format!("adaptive A/B within one plain run, {state}"),
            window,
            Some(PLAIN_RUN_IN_ROUND_RUNS * window[0].len()),
        );
    }
    // A machine with a short history (`noise::MIN_SHORT_HISTORY` to `MIN_HISTORY` runs): run i
    // against run i + 1 with only the k runs up to i as history, as the first days of a new
    // runner's store give it; with re-runs, runs i + 2 and i + 3 are the head's next runs.
    for k in SHORT_HISTORIES {
        for i in k - 1..runs.len() - 1 {
            let base = vec![runs[i].clone()];
            let head = vec![runs[i + 1].clone()];
            let history = ln_history(&runs[i + 1 - k..=i], policy.statistic);
            tally_comparison(
                table,
                policy,
                &format!("stored baseline + {k} runs of history, {state}"),
                &base,
                &head,
                &history,
                &[],
            );
            if let Some(heads) = runs.get(i + 1..i + 1 + HEAD_RUNS) {
                tally_reruns(
                    table,
                    policy,
                    &format!(
                        "stored baseline + {k} runs of history, re-runs (to {HEAD_RUNS} head runs), {state}"
                    ),
                    &base,
                    heads,
                    &history,
                    &[],
                );
            }
        }
    }
    // Stored baseline: run i against run i + 1, with and without the runs before i as history;
    // with re-runs, runs i + 2 and i + 3 are the head's second and third runs.
    for i in HISTORY..runs.len() - 1 {
        let base = vec![runs[i].clone()];
        let head = vec![runs[i + 1].clone()];
        let history = ln_history(
            &runs[i.saturating_sub(HISTORY_WINDOW)..=i],
            policy.statistic,
        );
        tally_comparison(
            table,
            policy,
            &format!("stored baseline + history, {state}"),
            &base,
            &head,
            &history,
            &[],
        );
        // Real changes elsewhere in the same run: one to three other benchmarks doing 20–71%
        // more work, as a pull request that touches a shared function moves several at once.
        // The benchmarks beside them must stay decided (on the idle machine, where a stored
        // baseline is meant to decide; busy, where nothing false may come of it).
        for moved in OTHERS_MOVED {
            let n = runs[i + 1].len();
            let others: Vec<&str> = (0..moved.len())
                .map(|k| runs[i + 1][(i + 7 * k) % n].id.as_str())
                .collect();
            let mut moved_head = runs[i + 1].clone();
            for (id, delta) in others.iter().zip(moved.iter()) {
                moved_head = slow_one(&moved_head, id, *delta);
            }
            tally_comparison(
                table,
                policy,
                &format!(
                    "stored baseline + history, {} other{} moved, {state}",
                    moved.len(),
                    if moved.len() == 1 { "" } else { "s" }
                ),
                &base,
                &[moved_head],
                &history,
                &others,
            );
            if let Some(heads) = runs.get(i + 1..i + 1 + HEAD_RUNS) {
                let moved_heads: Vec<Vec<Measurement>> = heads
                    .iter()
                    .map(|run| {
                        others
                            .iter()
                            .zip(moved.iter())
                            .fold(run.clone(), |run, (id, delta)| slow_one(&run, id, *delta))
                    })
                    .collect();
                tally_reruns(
                    table,
                    policy,
                    &format!(
                        "stored baseline + history, {} other{} moved, re-runs (to {HEAD_RUNS} head runs), {state}",
                        moved.len(),
                        if moved.len() == 1 { "" } else { "s" }
                    ),
                    &base,
                    &moved_heads,
                    &history,
                    &others,
                );
            }
        }
        if let Some(heads) = runs.get(i + 1..i + 1 + HEAD_RUNS) {
            tally_reruns(
                table,
                policy,
                &format!("stored baseline + history, re-runs (to {HEAD_RUNS} head runs), {state}"),
                &base,
                heads,
                &history,
                &[],
            );
        }
        // A step the base commit itself made, just under half the benchmark's limit, so that
        // the base run still sits at the level of the runs before it (`pooled_base`): each
        // benchmark in turn slowed from `k` runs before the base on, in the base and every
        // head run. The head's code is the base's: a `regressed` blames the pull request for
        // its base.
        if i + HEAD_RUNS < runs.len() {
            for k in BASE_STEP_RUNS_AGO {
                tally_base_step(
                    table,
                    policy,
                    &format!(
                        "a base commit's own step {k} run{} before the base, stored baseline + re-runs (to {HEAD_RUNS} head runs), {state}",
                        if k == 1 { "" } else { "s" }
                    ),
                    runs,
                    i,
                    k,
                );
            }
        }
        tally_comparison(
            table,
            policy,
            &format!("stored baseline, no history, {state}"),
            &base,
            &head,
            &none,
            &[],
        );
    }
}

/// How many runs before the base (the base run counted as 1) a base commit's own step starts,
/// in [`tally_base_step`].
const BASE_STEP_RUNS_AGO: [usize; 4] = [1, 2, 3, 5];

/// Just under `SAME_LEVEL_SHARE_OF_LIMIT` of the limit (as a log ratio), as a slowdown: about
/// the largest step of its base commit a base run is still pooled with the runs before it
/// across.
fn half_limit_step(m: &Measurement) -> f64 {
    let metric = if m.throughput.is_some() {
        Metric::Throughput
    } else {
        Metric::Time
    };
    0.95 * ((1.0 + limit(metric)).powf(SAME_LEVEL_SHARE_OF_LIMIT) - 1.0)
}

/// Identical code on a base whose own commit `k` runs before it slowed one benchmark by just
/// under half its limit (each benchmark in turn): stored baseline run `i`, history before it,
/// head runs `i + 1 ..= i + HEAD_RUNS` with re-runs. Tallied at δ = 0: a `regressed` is the
/// pull request blamed for its base.
fn tally_base_step(
    table: &mut Table,
    policy: &Policy,
    setting: &str,
    runs: &[Vec<Measurement>],
    i: usize,
    k: usize,
) {
    let start = i.saturating_sub(HISTORY_WINDOW);
    for (id, step) in runs[i]
        .iter()
        .map(|m| (m.id.as_str().to_owned(), half_limit_step(m)))
    {
        let stepped: Vec<Vec<Measurement>> = runs[start..=i + HEAD_RUNS]
            .iter()
            .enumerate()
            .map(|(j, run)| {
                if start + j + k > i {
                    slow_one(run, &id, step)
                } else {
                    run.clone()
                }
            })
            .collect();
        let at = i - start;
        let history = ln_history(&stepped[..=at], policy.statistic);
        let outcome = with_reruns(policy, &stepped[at..=at], &stepped[at + 1..], &history)
            .into_iter()
            .find(|o| o.id == id)
            .unwrap();
        table
            .entry((setting.to_owned(), metric_name(outcome.metric), 0))
            .or_default()
            .add_after(outcome.verdict, outcome.rounds, outcome.too_noisy);
    }
}

/// The corpus's trees that hold both `base` and `new` results: one single-run pair each.
fn measure_corpus_pairs(table: &mut Table, policy: &Policy) {
    let none = HashMap::new();
    for tree in [
        "LYXAL-LAB__lyxal_encoding/target/criterion",
        "dicethedev__MerkleForge/target/criterion",
        "Aida118__szse-binary-rs/target/criterion",
        "Scarjit__cryptoBench/target/criterion",
        "ai-2070__net/target/criterion",
        "fedemagnani__git-bench/target/criterion",
        "laysakura__louds-rs/criterion",
    ] {
        let root = crate::support::corpus(tree);
        let base = read_tree(&root, "base").unwrap();
        let new = read_tree(&root, "new").unwrap();
        tally_comparison(
            table,
            policy,
            "corpus base/new pairs (no history)",
            &[base],
            &[new],
            &none,
            &[],
        );
    }
}

fn render(table: &Table) -> String {
    let mut out = String::new();
    let mut current = (String::new(), "");
    for ((setting, metric, delta), tally) in table {
        if (setting.as_str(), *metric) != (current.0.as_str(), current.1) {
            current = (setting.clone(), metric);
            let _ = writeln!(
                out,
                "\n#### {setting}: {metric} benchmarks (limit {:+.1}% time)\n",
                limit(metric_of(metric)) * 100.0
            );
            let _ = writeln!(
                out,
                "| δ (time) | n | P(regressed) | P(inconclusive) | P(pass) | P(warn) | P(improved) | mean rounds | too noisy | P(regressed), gateable |"
            );
            let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        }
        let _ = writeln!(
            out,
            "| {:.1}% | {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.2} | {:.1}% | {:.1}% |",
            *delta as f64 / 10.0,
            tally.n(),
            100.0 * tally.share(tally.regressed),
            100.0 * tally.share(tally.inconclusive),
            100.0 * tally.share(tally.pass),
            100.0 * tally.share(tally.warn),
            100.0 * tally.share(tally.other),
            tally.mean_rounds(),
            100.0 * tally.share(tally.n() - tally.gateable),
            100.0 * tally.gateable_caught(),
        );
    }
    out
}

/// The measurements behind every table: each state's recording and the corpus pairs.
fn measure(policy: &Policy, recordings: &[(String, Vec<Vec<Measurement>>)]) -> Table {
    let mut table = Table::new();
    for (state, runs) in recordings {
        measure_recording(&mut table, policy, runs, state);
    }
    for state in CHANGES_RECORDINGS {
        if recordings.iter().any(|(s, _)| is_idle(s) == is_idle(state)) {
            measure_real_changes(&mut table, policy, state);
        }
    }
    measure_corpus_pairs(&mut table, policy);
    table
}

/// Recordings with real code changes (scripts/record-changes.sh): a history of the sample
/// workloads, then heads where k = 1, 2, 3 benchmarks do twice the work, each run three times.
/// Kept aside while the re-runs were built, to check them at the end.
const CHANGES_RECORDINGS: [&str; 3] = [
    "changes-idle-2026-11-28",
    "changes-noisy-2026-11-28",
    "changes-busy-2026-11-28",
];

/// Changes recordings whose head runs something outside the recording disturbed throughout
/// (every head run of one head, minutes after a calm history): reported, and their changed
/// benchmarks checked, but not held to the identical-code targets, which assume the head ran
/// on the machine the history did. `changes-idle-2026-11-28`: `text/format!` and
/// `text/str::replace` read 81–131% slower in all three k = 1 runs, unchanged code, and
/// re-measured with the same programs right after they were not (docs/accuracy.md).
const DISTURBED_HEADS: [&str; 1] = ["changes-idle-2026-11-28"];

/// The benchmarks the k-th head of a changes recording slows (the first k of these).
const CHANGED: [&str; 3] = [
    "aead/seal/chacha20-poly1305/16 KiB",
    "framing/encode/256 messages",
    "handshake/x25519 + hkdf + chacha20-poly1305/loopback tcp",
];

/// A stored baseline beside k real changes, recorded: each of the history's runs from
/// `HISTORY` on is a base (its runs before it the history) against the k-th head's runs, one
/// run alone and with re-runs. The changed benchmarks must read `regressed` and are left out
/// of the tally; the others are tallied identical and with each slowdown injected.
fn measure_real_changes(table: &mut Table, policy: &Policy, state: &str) {
    let history = load_runs(state, "history-");
    assert!(
        history.len() > HISTORY,
        "{state}: {} history runs",
        history.len()
    );
    for k in 1..=CHANGED.len() {
        let heads = load_runs(state, &format!("k{k}-"));
        assert_eq!(heads.len(), HEAD_RUNS, "{state}: k = {k}");
        let changed = &CHANGED[..k];
        let plural = if k == 1 { "" } else { "s" };
        for i in HISTORY..history.len() {
            let base = &history[i];
            let runs = ln_history(
                &history[i.saturating_sub(HISTORY_WINDOW)..=i],
                policy.statistic,
            );
            // The changed benchmarks themselves, twice the work (δ = 100%), as each mode
            // judges them.
            let one_run = evaluate(
                &Input {
                    mode: Mode::StoredBaseline,
                    base_rounds: std::slice::from_ref(base),
                    head_rounds: &heads[..1],
                    history: &runs,
                },
                policy,
            );
            let decided = with_reruns(policy, std::slice::from_ref(base), &heads, &runs);
            for id in changed {
                let once = one_run.benchmarks.iter().find(|b| b.id == *id).unwrap();
                let again = decided.iter().find(|o| o.id == *id).unwrap();
                for (setting, verdict, rounds, too_noisy) in [
                    ("one run", once.verdict, once.rounds, warned(once)),
                    ("re-runs", again.verdict, again.rounds, again.too_noisy),
                ] {
                    table
                        .entry((
                            format!("the changed benchmarks, {setting}, {state}"),
                            metric_name(again.metric),
                            key(1.0),
                        ))
                        .or_default()
                        .add_after(verdict, rounds, too_noisy);
                }
            }
            tally_comparison(
                table,
                policy,
                &format!("stored baseline + history, {k} real change{plural} (recorded), {state}"),
                std::slice::from_ref(base),
                &heads[..1],
                &runs,
                changed,
            );
            tally_reruns(
                table,
                policy,
                &format!(
                    "stored baseline + history, {k} real change{plural} (recorded), re-runs (to {HEAD_RUNS} head runs), {state}"
                ),
                std::slice::from_ref(base),
                &heads,
                &runs,
                changed,
            );
        }
    }
}

/// A real crate's pull request that moves half its suite (`scripts/record-crate.sh`):
/// unicode-segmentation 1.12.0's `words` bench, 15 runs of the default branch on an idle
/// machine, then 3 of a head whose word filter counts every alphanumeric character instead of
/// stopping at the first (`src/word.rs`). Four benchmarks do more work by the code; five more
/// read 5–19% faster in the changed executable, their code unchanged (docs/accuracy.md, "Half
/// the suite moved by the change"). Recorded after the `pass` floor's cap was made on live
/// runs of this same case: a check of that case, not a blind one.
const CRATE_RECORDING: &str = "useg-idle-2026-12-04";

/// The benchmarks [`CRATE_RECORDING`]'s head changes by its code.
const CRATE_CHANGED: [&str; 4] = [
    "words/grapheme/arabic",
    "words/grapheme/hindi",
    "words/grapheme/korean",
    "words/grapheme/russian",
];

/// The least share of [`CRATE_RECORDING`]'s unchanged benchmarks a stored baseline decides,
/// from one head run and with re-runs: what the gate reaches today (30 of 60 each), held so
/// that it does not fall back. Before the pass floor's spread was capped by the history's
/// record it was 11.7% and 6.7%; with the cap and before re-runs judged such a `pass` once,
/// 50.0% and 23.3%. #46 asks 90% and 97% beside up to three real changes (docs/accuracy.md,
/// "Half the suite moved by the change").
const CRATE_DECIDED: [f64; 2] = [0.5, 0.5];

/// Tallies of one setting of [`real_crate_case`].
#[derive(Default, Clone, Copy)]
struct CrateTally {
    unchanged: usize,
    unchanged_decided: usize,
    unchanged_regressed: usize,
    changed: usize,
    changed_regressed: usize,
    changed_passed: usize,
}

/// [`CRATE_RECORDING`] as the Action's `pr` mode judges it: each history run from the tenth on
/// as the base (its runs before it the history) against the head's first run alone, and with
/// re-runs. Returns the report's section and the targets missed: no unchanged benchmark
/// `regressed`, no changed one `pass`, and the unchanged decided at least [`CRATE_DECIDED`].
fn real_crate_case(policy: &Policy) -> (String, Vec<String>) {
    let history = load_runs(CRATE_RECORDING, "history-");
    let heads = load_runs(CRATE_RECORDING, "head-");
    assert!(history.len() > HISTORY && heads.len() == HEAD_RUNS);
    let mut tallies = [CrateTally::default(); 2];
    for i in HISTORY..history.len() {
        let base = std::slice::from_ref(&history[i]);
        let runs = ln_history(
            &history[i.saturating_sub(HISTORY_WINDOW)..=i],
            policy.statistic,
        );
        let one_run: Vec<(String, Verdict)> = evaluate(
            &Input {
                mode: Mode::StoredBaseline,
                base_rounds: base,
                head_rounds: &heads[..1],
                history: &runs,
            },
            policy,
        )
        .benchmarks
        .iter()
        .filter(|b| b.ratio.is_some())
        .map(|b| (b.id.clone(), b.verdict))
        .collect();
        let again: Vec<(String, Verdict)> = with_reruns(policy, base, &heads, &runs)
            .into_iter()
            .map(|o| (o.id, o.verdict))
            .collect();
        for (tally, outcomes) in tallies.iter_mut().zip([one_run, again]) {
            for (id, verdict) in outcomes {
                if CRATE_CHANGED.contains(&id.as_str()) {
                    tally.changed += 1;
                    tally.changed_regressed += usize::from(verdict == Verdict::Regressed);
                    tally.changed_passed += usize::from(verdict == Verdict::Pass);
                } else {
                    tally.unchanged += 1;
                    tally.unchanged_decided += usize::from(verdict != Verdict::Inconclusive);
                    tally.unchanged_regressed += usize::from(verdict == Verdict::Regressed);
                }
            }
        }
    }
    let mut out = format!(
        "\n### A real crate's pull request that moves half its suite ({CRATE_RECORDING})\n\n| setting | unchanged decided | unchanged `regressed` | changed `regressed` | changed `pass` |\n|---|---:|---:|---:|---:|\n"
    );
    let mut failures = Vec::new();
    for ((setting, tally), least) in ["one head run", "re-runs (to 3 head runs)"]
        .iter()
        .zip(tallies)
        .zip(CRATE_DECIDED)
    {
        let share = |k: usize, n: usize| k as f64 / n.max(1) as f64;
        let decided = share(tally.unchanged_decided, tally.unchanged);
        let _ = writeln!(
            out,
            "| {setting} | {:.1}% ({} of {}) | {} | {:.1}% ({} of {}) | {} |",
            100.0 * decided,
            tally.unchanged_decided,
            tally.unchanged,
            tally.unchanged_regressed,
            100.0 * share(tally.changed_regressed, tally.changed),
            tally.changed_regressed,
            tally.changed,
            tally.changed_passed,
        );
        if tally.unchanged_regressed > 0 || tally.changed_passed > 0 {
            failures.push(format!(
                "{CRATE_RECORDING}, {setting}: {} unchanged regressed, {} changed passed",
                tally.unchanged_regressed, tally.changed_passed
            ));
        }
        if decided < least {
            failures.push(format!(
                "{CRATE_RECORDING}, {setting}: unchanged decided only {:.1}%",
                100.0 * decided
            ));
        }
    }
    (out, failures)
}

/// One line per statistic and setting: the four numbers the targets are about.
fn statistic_summary(name: &str, table: &Table) -> String {
    let mut out = String::new();
    let settings: Vec<&String> = {
        let mut s: Vec<&String> = table.keys().map(|(setting, _, _)| setting).collect();
        s.dedup();
        s
    };
    for setting in settings {
        for (metric, kind) in [
            ("latency", Metric::Time),
            ("throughput", Metric::Throughput),
        ] {
            let get = |delta: f64| {
                table
                    .get(&(setting.clone(), metric, key(delta)))
                    .copied()
                    .unwrap_or_default()
            };
            let identical = get(0.0);
            let at_limit = get(limit(kind));
            let large = get(one_and_a_half_limits(kind));
            let _ = writeln!(
                out,
                "| {name} | {setting} | {metric} | {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
                100.0 * identical.share(identical.pass),
                100.0 * identical.share(identical.regressed),
                100.0 * at_limit.share(at_limit.let_through()),
                100.0 * large.share(large.regressed),
            );
        }
    }
    out
}

/// Whether a benchmark run shows that interference slowed it, measured (#46 item 1: "each
/// run's own evidence of interference … against what this benchmark's history says is
/// normal"). A run counts as disturbed when its fastest sample sits more than 10% above the
/// benchmark's median fastest over the recording. Each signal is read against the benchmark's
/// own median of it, and scored by the area under its ROC curve: the chance that a disturbed
/// run reads higher than an undisturbed one (0.5: no evidence, 1: a perfect separation). The
/// last column is what the stored baseline's floor reads instead: the median move of the run's
/// other benchmarks.
fn own_evidence_of_interference() -> String {
    type Signal = fn(&[f64]) -> f64;
    let signals: [(&str, Signal); 4] = [
        ("second fastest / fastest", |s| (s[1] / s[0]).ln()),
        ("lower quartile / fastest", |s| (s[s.len() / 4] / s[0]).ln()),
        ("median / fastest", |s| (s[s.len() / 2] / s[0]).ln()),
        ("slowest / fastest", |s| (s[s.len() - 1] / s[0]).ln()),
    ];
    let recordings = RECORDINGS
        .iter()
        .map(|state| (*state, load_recording(state)))
        .chain(
            CHANGES_RECORDINGS
                .iter()
                .map(|state| (*state, load_runs(state, "history-"))),
        );
    let mut out = String::from("| recording | benchmark runs | disturbed |");
    for (name, _) in &signals {
        let _ = write!(out, " {name} |");
    }
    out.push_str(" the others' median move |\n|---|---:|---:|");
    out.push_str(&"---:|".repeat(signals.len() + 1));
    out.push('\n');
    for (state, runs) in recordings {
        // Per benchmark: each run's sorted per-iteration samples.
        let mut by_id: BTreeMap<&str, Vec<(usize, Vec<f64>)>> = BTreeMap::new();
        for (i, run) in runs.iter().enumerate() {
            for m in run {
                let mut samples: Vec<f64> = m.samples.per_iteration().collect();
                samples.sort_by(f64::total_cmp);
                by_id.entry(m.id.as_str()).or_default().push((i, samples));
            }
        }
        let median_of = |mut v: Vec<f64>| benchgate_gate::stats::median(&mut v);
        let typical: BTreeMap<&str, f64> = by_id
            .iter()
            .map(|(id, rs)| (*id, median_of(rs.iter().map(|(_, s)| s[0]).collect())))
            .collect();
        // Each run's move of each benchmark from its typical fastest.
        let mut moves_in: Vec<Vec<(&str, f64)>> = vec![Vec::new(); runs.len()];
        for (id, rs) in &by_id {
            for (i, s) in rs {
                moves_in[*i].push((*id, (s[0] / typical[id]).ln()));
            }
        }
        // Each benchmark run: disturbed, its signals against the benchmark's median, the
        // others' median move.
        let mut scored: Vec<(bool, Vec<f64>)> = Vec::new();
        for (id, rs) in &by_id {
            let medians: Vec<f64> = signals
                .iter()
                .map(|(_, f)| median_of(rs.iter().map(|(_, s)| f(s)).collect()))
                .collect();
            for (i, s) in rs {
                let moves: Vec<f64> = moves_in[*i]
                    .iter()
                    .filter(|(other, _)| other != id)
                    .map(|(_, m)| *m)
                    .collect();
                let mut values: Vec<f64> = signals
                    .iter()
                    .zip(&medians)
                    .map(|((_, f), m)| f(s) - m)
                    .collect();
                values.push(median_of(moves));
                scored.push(((s[0] / typical[id]).ln() > 1.1f64.ln(), values));
            }
        }
        let disturbed = scored.iter().filter(|(d, _)| *d).count();
        let _ = write!(out, "| {state} | {} | {disturbed} |", scored.len());
        for k in 0..=signals.len() {
            let auc = area_under_roc(&scored, k);
            let _ = write!(out, " {auc:.2} |");
        }
        out.push('\n');
    }
    out
}

/// The chance that a disturbed run's `k`th signal reads higher than an undisturbed one's, ties
/// half.
fn area_under_roc(scored: &[(bool, Vec<f64>)], k: usize) -> f64 {
    let (mut wins, mut pairs) = (0.0, 0.0);
    for (_, p) in scored.iter().filter(|(d, _)| *d) {
        for (_, n) in scored.iter().filter(|(d, _)| !*d) {
            pairs += 1.0;
            wins += match p[k].total_cmp(&n[k]) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Less => 0.0,
            };
        }
    }
    wins / pairs
}

#[test]
fn the_gate_meets_its_error_rates_on_real_a_a_data() {
    let _quiet = beside_no_timing_test();
    // BENCHGATE_ACCURACY_STATES narrows the recordings while developing; CI measures both.
    let states =
        std::env::var("BENCHGATE_ACCURACY_STATES").unwrap_or_else(|_| RECORDINGS.join(","));
    let recordings: Vec<(String, Vec<Vec<Measurement>>)> = states
        .split(',')
        .map(|state| (state.trim().to_owned(), load_recording(state.trim())))
        .collect();

    let mut summary = String::from(
        "| statistic | setting | metric | P(pass), identical | P(regressed), identical | P(pass), at the limit | P(regressed), 1.5× limit |\n|---|---|---|---:|---:|---:|---:|\n",
    );
    // The candidates compared (BENCHGATE_ACCURACY_COMPARE=1): the table that chose the default.
    let candidates: &[&str] = if std::env::var_os("BENCHGATE_ACCURACY_COMPARE").is_some() {
        &["median", "p25", "p10", "min"]
    } else {
        &[]
    };
    for candidate in candidates {
        let policy = Policy {
            statistic: Statistic::parse(candidate).unwrap(),
            ..Policy::default()
        };
        summary.push_str(&statistic_summary(
            candidate,
            &measure(&policy, &recordings),
        ));
    }
    let policy = Policy::default();
    let table = measure(&policy, &recordings);
    let (crate_case, crate_failures) = real_crate_case(&policy);
    let report = format!(
        "### Statistics compared\n\n{summary}\n### The default policy ({})\n{}\n### A run's own evidence of interference\n\n{}{crate_case}",
        policy.statistic.name(),
        render(&table),
        own_evidence_of_interference()
    );
    println!("{report}");
    let _ = std::fs::write(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/accuracy.md"),
        &report,
    );

    let mut failures = crate_failures;
    // A stored baseline's identical comparisons decided, over both metrics (the target
    // is per benchmark comparison): setting → (decided, compared).
    let mut stored_decided: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    // Adaptive A/B's benchmarking time on identical code, per recording over both metrics (a
    // round runs the whole suite, and every benchmark's run takes about the same: Criterion's
    // measurement time): setting → (rounds, benchmark comparisons).
    let mut adaptive_rounds: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    // The targets hold per mode, machine state (idle, busy) and metric: each state's recordings
    // (two days each) are pooled, so that one comparison of the hundred a recording has for a
    // metric is not by itself 1% (the report shows each recording's own).
    let mut pooled = Table::new();
    for ((setting, metric, delta), tally) in &table {
        let disturbed = DISTURBED_HEADS
            .iter()
            .any(|state| setting.ends_with(&format!(", {state}")));
        if disturbed && !setting.starts_with("the changed benchmarks") {
            continue;
        }
        // Slowdowns of 1.5 times the limit with re-runs hold on each idle A/A recording alone
        // too (#46 asks it of every recording). The recorded real changes' comparisons share
        // five bases and one head job a setting: too few independent ones to hold alone.
        let recording = setting.rsplit(", ").next().unwrap_or_default();
        if RECORDINGS.contains(&recording) {
            failures.extend(reruns_caught_short(setting, metric, *delta, tally));
        }
        pooled
            .entry((machine_state_setting(setting), *metric, *delta))
            .or_default()
            .merge(tally);
    }
    for ((setting, metric, delta), tally) in &pooled {
        failures.extend(reruns_caught_short(setting, metric, *delta, tally));
        let metric_kind = metric_of(metric);
        let delta = *delta as f64 / 1000.0;
        if delta == 0.0 && tally.share(tally.regressed) > IDENTICAL_REGRESSED_BOUND {
            failures.push(format!(
                "{setting}, {metric}: identical code regressed {:.1}%",
                100.0 * tally.share(tally.regressed)
            ));
        }
        if delta >= limit(metric_kind) - 1e-9
            && tally.share(tally.let_through()) > LET_THROUGH_BOUND
        {
            failures.push(format!(
                "{setting}, {metric}, δ {:.1}%: let through (pass or warn) {:.1}%",
                delta * 100.0,
                100.0 * tally.share(tally.let_through())
            ));
        }
        if setting.starts_with("adaptive") && delta == 0.0 {
            let target = if setting_is_idle(setting) {
                ADAPTIVE_DECIDED_IDLE
            } else {
                ADAPTIVE_DECIDED_BUSY
            };
            let decided = 1.0 - tally.share(tally.inconclusive);
            if decided < target {
                failures.push(format!(
                    "{setting}, {metric}: identical code decided only {:.1}%",
                    100.0 * decided
                ));
            }
            let suite = adaptive_rounds.entry(setting.as_str()).or_insert((0, 0));
            suite.0 += tally.rounds;
            suite.1 += tally.n();
        }
        let short_history = setting.contains("runs of history") && !setting.contains("re-runs");
        if (setting.starts_with("stored baseline + history") || short_history)
            && setting_is_idle(setting)
            && delta == 0.0
        {
            let decided = stored_decided.entry(setting.as_str()).or_insert((0, 0));
            decided.0 += tally.n() - tally.inconclusive;
            decided.1 += tally.n();
        }
        if setting.starts_with("the changed benchmarks")
            && setting_is_idle(setting)
            && tally.share(tally.regressed) < CHANGED_REGRESSED
        {
            failures.push(format!(
                "{setting}, {metric}: twice the work regressed only {:.1}%",
                100.0 * tally.share(tally.regressed)
            ));
        }
        if setting.starts_with("A/B") && setting_is_idle(setting) {
            if delta == 0.0 && tally.share(tally.pass) < 0.90 {
                failures.push(format!(
                    "{setting}, {metric}: identical code passed only {:.1}%",
                    100.0 * tally.share(tally.pass)
                ));
            }
            // Of the benchmarks the gate does not report too noisy to gate at 3 rounds (a
            // benchmark whose rounds swing by ±10% cannot show a 22.5% slowdown in three).
            let caught = tally.gateable_caught();
            if (delta - one_and_a_half_limits(metric_kind)).abs() < 1e-3 && caught < 0.90 {
                failures.push(format!(
                    "{setting}, {metric}, δ {:.1}%: regressed only {:.1}% of {} gateable",
                    delta * 100.0,
                    100.0 * caught,
                    tally.gateable
                ));
            }
        }
    }
    for (setting, (rounds, compared)) in adaptive_rounds {
        let mean = rounds as f64 / compared.max(1) as f64;
        if mean > ROUNDS as f64 {
            failures.push(format!(
                "{setting}: identical code took {mean:.2} rounds, more than {ROUNDS} fixed"
            ));
        }
    }
    for (setting, (decided, compared)) in stored_decided {
        let share = decided as f64 / compared.max(1) as f64;
        let target = if setting.contains("runs of history") {
            SHORT_HISTORY_DECIDED_IDLE
        } else if setting.contains("re-runs") {
            STORED_RERUNS_DECIDED_IDLE
        } else {
            STORED_DECIDED_IDLE
        };
        if share < target {
            failures.push(format!(
                "{setting}: identical code decided only {:.1}% ({decided} of {compared})",
                100.0 * share
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "targets missed:\n{}",
        failures.join("\n")
    );
}

/// What the report says of each benchmark holds for its verdict, on real recordings: a
/// `regressed` row's bound excludes no change, a `pass` row's bound excludes its limit, the
/// detectable change is at least the limit, and the comment lists every benchmark in exactly one
/// section, with the section counts adding up.
#[test]
fn every_reports_bounds_and_sections_agree_with_its_verdicts() {
    let _quiet = beside_no_timing_test();
    let policy = Policy::default();
    let mut checked = [0usize; 2];
    for state in RECORDINGS {
        let runs = load_recording(state);
        for window in runs.chunks_exact(8).take(4) {
            let (base, head) = split_ab(window);
            let ids: Vec<String> = head[0].iter().map(|m| m.id.as_str().to_owned()).collect();
            for (i, id) in ids.iter().enumerate().step_by(3) {
                // Every third benchmark twice the limit slower, in head rounds of its own.
                let slowed_head: Vec<Vec<Measurement>> = head
                    .iter()
                    .map(|round| slow_one(round, id, if i % 2 == 0 { 0.3 } else { 0.0 }))
                    .collect();
                for (n, plan) in [(3, Plan::Fixed), (4, Plan::adaptive(MAX_ROUNDS))] {
                    let decision = evaluate_with(
                        &Input {
                            mode: Mode::SameJobAb,
                            base_rounds: &base[..n],
                            head_rounds: &slowed_head[..n],
                            history: &HashMap::new(),
                        },
                        &policy,
                        plan,
                    );
                    checked[0] += check_report_agrees(&decision, &policy, state);
                    checked[1] += 1;
                }
            }
        }
    }
    assert!(checked[0] > 1000, "{checked:?} benchmark rows checked");
}

/// Checks one decision's report; returns how many benchmark rows it checked.
fn check_report_agrees(
    decision: &benchgate_gate::decision::Decision,
    policy: &Policy,
    state: &str,
) -> usize {
    for b in &decision.benchmarks {
        let bound = b
            .bound
            .unwrap_or_else(|| panic!("{state}: no bound: {b:?}"));
        match b.verdict {
            Verdict::Regressed => {
                let lower = bound.lower.unwrap();
                assert!(lower > 1.0, "{state}: regressed on {lower}: {b:?}");
            }
            Verdict::Pass => {
                let upper = bound.upper.unwrap();
                assert!(upper < b.limit, "{state}: pass on {upper}: {b:?}");
            }
            _ => {}
        }
        assert!(b.detectable.unwrap() >= b.limit * (1.0 - 1e-9), "{b:?}");
    }
    let markdown = benchgate_gate::report::render_markdown(
        decision,
        &benchgate_gate::report::Context::default(),
        policy,
    );
    let mut listed = 0;
    for b in &decision.benchmarks {
        let row = format!("| `{}` |", b.id);
        let rows = markdown.matches(&row).count();
        assert_eq!(
            rows, 1,
            "{state}: {} listed {rows} times:\n{markdown}",
            b.id
        );
        listed += 1;
    }
    let counted: usize = markdown
        .lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix("### ")
                .or_else(|| line.strip_prefix("<details><summary>"))?;
            let open = rest.rfind('(').map(|i| &rest[i + 1..]);
            match open {
                Some(count) if line.starts_with("### ") => {
                    count.strip_suffix(')')?.parse::<usize>().ok()
                }
                _ => rest.split(' ').next()?.parse::<usize>().ok(),
            }
        })
        .sum();
    assert_eq!(counted, listed, "{state}: section counts:\n{markdown}");
    listed
}
