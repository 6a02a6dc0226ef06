//! The decision engine: a pure function from base and head measurements (one or more rounds),
//! the baseline's history and the policy to a verdict per benchmark and for the comparison.
//! No I/O, no clock, no randomness: the same inputs always give the same verdict.
//!
//! Per benchmark and round k, the change is `d_k = ln(head / base)` of a statistic of the
//! per-iteration times: the median, or a low quantile (see [`Statistic`]). Its noise comes from between-run variation:
//! - **rounds** (same-job A/B, R ≥ 2): the spread of the `d_k`, moderated across the benchmarks
//!   of the comparison (an empirical-Bayes prior worth between [`crate::noise::MIN_PRIOR_DF`] and
//!   [`crate::noise::MAX_PRIOR_DF`] degrees of freedom, as in
//!   limma's moderated t), because machine-level interference is shared by every benchmark;
//! - **history** (stored baseline, R = 1): the per-run spread of the baseline's benchmark on the
//!   same fingerprint from at least [`MIN_HISTORY`] runs: `1.4826 · MAD(Δ ln x) / √2`, widened
//!   to the largest jump seen when the benchmark is bimodal (see [`crate::stats::tail_aware_sigma`]);
//!   from [`crate::noise::MIN_SHORT_HISTORY`] runs on, pooled with the assumed level as a prior
//!   (see [`crate::noise::short_history_sigma`]);
//! - otherwise the result is **uncalibrated**: it assumes [`UNCALIBRATED_RUN_NOISE`], claims a
//!   regression only against heavy tails ([`UNCALIBRATED_DF`]), and never claims `pass`.
//!
//! Single-round comparisons also take a floor from how far the comparison's other benchmarks
//! moved: interference is sparse or global, and one run a side cannot tell it from code.
//!
//! Exact counts (gungraun's instruction counts) are judged apart, by exact arithmetic and their
//! own limits: see [`crate::counts`].
//!
//! Criterion's within-run interval is always a floor, never the noise itself. Then, with limit
//! `L` (`ln 1.15` latency, `ln(1/0.9)` throughput): `regressed` if `d̂ ≥ L` and the slowdown is
//! significant after Holm's correction over all benchmarks; `pass` if the one-sided upper
//! confidence bound of `d` is below `L`; `inconclusive` otherwise.

use std::collections::HashMap;

use benchgate_core::counts::is_count_unit;
use benchgate_core::{Direction, Estimate, Measurement, Throughput};

use crate::counts::{self, CountInput};

use crate::noise::BaseLevel;
use crate::policy::{Policy, Statistic};
use crate::stats::t_quantile;

pub use crate::noise::{MIN_HISTORY, NoiseSource, UNCALIBRATED_DF, UNCALIBRATED_RUN_NOISE};
pub use crate::sequential::Plan;
mod judge;
mod model;
mod reruns;

pub use reruns::{HeadReruns, Look};

use judge::{Judge, Quantiles, Tests};
use model::Model;

pub use crate::verdict::{
    BenchmarkResult, Decision, DecisionBound, Metric, Mode, Overall, TooNoisy, Verdict, overall,
};

/// A round's statistic of a measurement (ns per iteration), as history must be built with it.
pub fn round_statistic(measurement: &Measurement, statistic: Statistic) -> f64 {
    summarize(measurement, statistic).0
}

/// The statistic and the within-run variance of its logarithm (a floor for the noise).
fn summarize(measurement: &Measurement, statistic: Statistic) -> (f64, f64) {
    // For a custom metric where higher is better, the best sample is the highest: `min`
    // becomes the maximum and pNN p(100−NN), so the statistic keeps its meaning.
    let statistic = match (&measurement.custom, statistic) {
        (Some(c), Statistic::Quantile(q)) if c.direction == Direction::HigherIsBetter => {
            Statistic::Quantile(1.0 - q)
        }
        _ => statistic,
    };
    match statistic {
        Statistic::Median => (measurement.median.point, log_variance(&measurement.median)),
        Statistic::Quantile(q) => {
            let mut values: Vec<f64> = measurement.samples.per_iteration().collect();
            values.sort_by(f64::total_cmp);
            let n = values.len();
            let rank = q * (n - 1) as f64;
            let (below, fraction) = (rank.floor() as usize, rank - rank.floor());
            let value = values[below] + fraction * (values[(below + 1).min(n - 1)] - values[below]);
            // Distribution-free interval of a quantile: ±1.96·√(n q (1−q)) ranks, at least ±1.
            let spread = (1.96 * (n as f64 * q * (1.0 - q)).sqrt()).max(1.0);
            let low = values[(rank - spread).floor().max(0.0) as usize];
            let high = values[((rank + spread).ceil() as usize).min(n - 1)];
            let variance = if low > 0.0 {
                ((high.ln() - low.ln()) / 2.0 / 1.96).powi(2)
            } else {
                0.0
            };
            (value, variance)
        }
    }
}

/// The share of `1 − confidence` that a fixed-rounds A/B comparison's `pass` and `warn` bound
/// spends: a margin for a t bound on a few rounds, only nearly calibrated. Measured in
/// docs/accuracy.md, "A margin for fixed rounds".
pub const FIXED_AB_PASS_SHARE: f64 = 0.8;

/// What to compare.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// How the baseline was obtained.
    pub mode: Mode,
    /// The base side, one entry per round.
    pub base_rounds: &'a [Vec<Measurement>],
    /// The head side, one entry per round, paired with `base_rounds` in order. A stored
    /// baseline's one base run may face several head runs (the head re-run): each benchmark's
    /// head runs are pooled into one round, their median (see [`Input::pooled_head_runs`]).
    pub head_rounds: &'a [Vec<Measurement>],
    /// Per benchmark id: ln(median ns) of the baseline's previous runs on the same fingerprint,
    /// oldest first (stored-baseline mode).
    pub history: &'a HashMap<String, Vec<f64>>,
}

impl Input<'_> {
    /// Whether the head runs are re-runs against one stored base run, pooled rather than
    /// paired.
    pub fn pooled_head_runs(&self) -> bool {
        self.mode == Mode::StoredBaseline
            && self.base_rounds.len() == 1
            && self.head_rounds.len() > 1
    }

    /// How many rounds the comparison has: paired rounds, or a stored baseline's head runs.
    fn rounds(&self) -> usize {
        if self.pooled_head_runs() {
            self.head_rounds.len()
        } else {
            self.base_rounds.len().min(self.head_rounds.len())
        }
    }
}

/// One round's log change and its within-run variance.
struct RoundChange {
    d: f64,
    within_variance: f64,
    /// The base run's part of `within_variance`.
    base_variance: f64,
    ln_base: f64,
    ln_head: f64,
    /// A stored baseline's pooled head runs: the change of the best of them (the smallest
    /// `d`); `d` itself for one run.
    best_d: f64,
}

/// A compared benchmark before the verdict.
struct Candidate<'a> {
    id: &'a str,
    metric: Metric,
    unit: Option<&'a str>,
    /// The work per iteration compared at: the base's where the head's differs.
    throughput: Option<(&'static str, u64)>,
    /// The head's own work per iteration, where it differs from the base's.
    head_work: Option<u64>,
    changes: Vec<RoundChange>,
    /// The look this candidate is at: its rounds, or a stored baseline's head runs pooled
    /// into its one round.
    looks: usize,
    /// A stored baseline's runs its one round's base is the median of (1: the base run).
    base_runs: usize,
    /// How far that level sits above a base run faster than it (0 otherwise): `improved` is
    /// claimed against the base run ([`BaseLevel::above_base`]).
    base_above_run: f64,
}

/// Decides every benchmark and the comparison, with one look at the rounds there are.
pub fn evaluate(input: &Input<'_>, policy: &Policy) -> Decision {
    evaluate_with(input, policy, Plan::Fixed)
}

/// Decides every benchmark and the comparison at one look of `plan`: each benchmark's error
/// rates are the share `plan` spends at its round count (see [`crate::sequential`]).
pub fn evaluate_with(input: &Input<'_>, policy: &Policy, plan: Plan) -> Decision {
    let rounds = input.rounds();
    let Sorted {
        mut results,
        unjudged,
        candidates,
    } = sort_out(input, policy, rounds);
    let model = Model::fit(input, policy, plan, &candidates);
    let tests = Tests::run(&model, &candidates, policy, plan);
    let judge = Judge {
        input,
        policy,
        plan,
        compared: candidates.len().max(1) as f64,
    };
    let mut quantiles = Quantiles::default();
    for (i, candidate) in candidates.iter().enumerate() {
        results.push(judge.benchmark(candidate, &model.of(i), &tests.of(i), &mut quantiles));
    }
    results.sort_by(|a, b| a.id.cmp(&b.id));

    let verdict = overall(&results);
    Decision {
        verdict,
        mode: input.mode,
        rounds,
        benchmarks: results,
        budgets: crate::budget::evaluate(&policy.budgets, input.head_rounds),
        unjudged,
    }
}

/// The benchmarks of a comparison sorted out: those decided without a test (ignored, new,
/// missing, counts), the count events without a limit, and the candidates for the test.
struct Sorted<'a> {
    results: Vec<BenchmarkResult>,
    unjudged: Vec<String>,
    candidates: Vec<Candidate<'a>>,
}

/// Pairs each benchmark's rounds and sorts the benchmarks out (see [`Sorted`]).
fn sort_out<'a>(input: &Input<'a>, policy: &Policy, rounds: usize) -> Sorted<'a> {
    let pooled = input.pooled_head_runs();
    let base = index_rounds(&input.base_rounds[..if pooled { 1 } else { rounds }]);
    let head = index_rounds(&input.head_rounds[..rounds]);

    let mut ids: Vec<&str> = base
        .iter()
        .chain(&head)
        .flat_map(|round| round.keys().copied())
        .collect();
    ids.sort_unstable();
    ids.dedup();

    let mut sorted = Sorted {
        results: Vec::with_capacity(ids.len()),
        unjudged: Vec::new(),
        candidates: Vec::with_capacity(ids.len()),
    };
    for id in ids {
        let pairs: Vec<(&Measurement, &Measurement)> = (0..rounds)
            .filter_map(|k| {
                Some((
                    *base[if pooled { 0 } else { k }].get(id)?,
                    *head[k].get(id)?,
                ))
            })
            .collect();
        let any_base = base.iter().find_map(|r| r.get(id).copied());
        let any_head = head.iter().find_map(|r| r.get(id).copied());
        let custom = any_head.or(any_base).and_then(|m| m.custom.as_ref());
        // A throughput benchmark whose head does another amount of work per iteration than its
        // base (a bigger input, a test file that grew) is compared per unit of that work, at the
        // base's amount: its time per iteration alone would read the bigger input as slower.
        let rescaled = match (any_base, any_head) {
            (Some(b), Some(h)) => work_changed(b, h),
            _ => None,
        };
        let throughput = match rescaled {
            Some((base_work, _)) => Some((base_work.kind(), base_work.amount())),
            None => any_head
                .or(any_base)
                .and_then(|m| m.throughput)
                .map(|t| (t.kind(), t.amount())),
        };
        let metric = match (custom, throughput) {
            (Some(c), _) if c.direction == Direction::HigherIsBetter => Metric::Higher,
            (Some(_), _) => Metric::Lower,
            (None, Some(_)) => Metric::Throughput,
            (None, None) => Metric::Time,
        };
        let unit = custom.map(|c| c.unit.as_str());
        let limit = policy.log_limit(id, metric.higher_is_better()).exp();
        let bare = |verdict: Verdict| BenchmarkResult {
            unit: unit.map(str::to_owned),
            base_ns: any_base.map(|m| m.median.point),
            head_ns: any_head.map(|m| m.median.point),
            throughput_per_iteration: throughput,
            ..BenchmarkResult::uncompared(id, metric, verdict, limit, policy)
        };
        let count_event = custom
            .map(|c| c.unit.as_str())
            .filter(|unit| is_count_unit(unit));
        if policy.is_ignored(id) {
            sorted.results.push(bare(Verdict::Ignored));
        } else if let (Some(event), false) = (count_event, pairs.is_empty()) {
            // A count event without a limit is stored, not judged.
            let Some(limit) = policy.counts.limit(event) else {
                sorted.unjudged.push(id.to_owned());
                continue;
            };
            let value = |m: &Measurement| round_statistic(m, Statistic::Quantile(0.0));
            let base: Vec<f64> = pairs.iter().map(|(b, _)| value(b)).collect();
            let head: Vec<f64> = pairs.iter().map(|(_, h)| value(h)).collect();
            sorted.results.push(counts::judge(
                &CountInput {
                    id,
                    event,
                    base: &base,
                    head: &head,
                    history: input.history.get(id).map(Vec::as_slice),
                },
                limit,
                policy,
            ));
        } else if pairs.is_empty() {
            sorted.results.push(bare(if any_head.is_some() {
                Verdict::New
            } else {
                Verdict::Missing
            }));
        } else {
            let mut changes = pairs
                .iter()
                .filter_map(|(b, h)| round_change(b, h, policy.statistic, metric))
                .collect::<Vec<_>>();
            let looks = changes.len();
            if pooled && looks > 1 {
                changes = vec![pooled_change(&changes)];
            }
            let base = match (input.mode, &mut changes[..], input.history.get(id)) {
                (Mode::StoredBaseline, [change], Some(history)) if input.base_rounds.len() == 1 => {
                    Some(level_base(change, history, metric, limit.ln()))
                }
                _ => None,
            };
            if changes.is_empty() {
                // Zero times cannot be compared on a log scale.
                sorted.results.push(bare(Verdict::Inconclusive));
            } else {
                sorted.candidates.push(Candidate {
                    id,
                    metric,
                    unit,
                    throughput,
                    head_work: rescaled.map(|(_, head_work)| head_work.amount()),
                    changes,
                    looks,
                    base_runs: base.map_or(1, |b| b.runs),
                    base_above_run: base.map_or(0.0, |b| b.above_base),
                });
            }
        }
    }
    sorted
}

impl Candidate<'_> {
    /// The head runs pooled into a stored baseline's one round (1 for a paired round).
    fn head_runs(&self) -> usize {
        if self.changes.len() == 1 {
            self.looks
        } else {
            1
        }
    }
}

fn index_rounds(rounds: &[Vec<Measurement>]) -> Vec<HashMap<&str, &Measurement>> {
    rounds
        .iter()
        .map(|round| round.iter().map(|m| (m.id.as_str(), m)).collect())
        .collect()
}

/// The rounds `kept` keeps (every round for `None`).
fn kept_of_rounds<'a>(
    changes: &'a [RoundChange],
    kept: Option<&'a [bool]>,
) -> impl Iterator<Item = &'a RoundChange> {
    changes
        .iter()
        .enumerate()
        .filter(move |(k, _)| kept.is_none_or(|mask| mask[*k]))
        .map(|(_, r)| r)
}

/// `ln(head/base)` of the round's statistic (`ln(base/head)` where higher is better) and its
/// within-run variance.
fn round_change(
    base: &Measurement,
    head: &Measurement,
    statistic: Statistic,
    metric: Metric,
) -> Option<RoundChange> {
    let (b, base_variance) = summarize(base, statistic);
    let (h, head_variance) = summarize(head, statistic);
    // The head's time at the base's work per iteration, where the two differ.
    let h = match work_changed(base, head) {
        Some((base_work, head_work)) => h * base_work.amount() as f64 / head_work.amount() as f64,
        None => h,
    };
    if !(b > 0.0 && h > 0.0) {
        return None;
    }
    // d > 0 is always worse: slower, or for a higher-is-better metric, lower.
    let d = if metric == Metric::Higher {
        (b / h).ln()
    } else {
        (h / b).ln()
    };
    Some(RoundChange {
        d,
        within_variance: base_variance + head_variance,
        base_variance,
        ln_base: b.ln(),
        ln_head: h.ln(),
        best_d: d,
    })
}

/// The base's and the head's work per iteration, where both declare a throughput of one kind
/// with different, non-zero amounts (a custom metric has none: its values are not times).
fn work_changed(base: &Measurement, head: &Measurement) -> Option<(Throughput, Throughput)> {
    match (base.throughput, head.throughput) {
        (Some(b), Some(h))
            if base.custom.is_none()
                && head.custom.is_none()
                && b.kind() == h.kind()
                && b.amount() != h.amount()
                && b.amount() > 0
                && h.amount() > 0 =>
        {
            Some((b, h))
        }
        _ => None,
    }
}

/// A stored baseline's head runs against its one base run as one round: the median change
/// (of the median head run), the base's within-run variance and the median's share of the
/// head's.
fn pooled_change(changes: &[RoundChange]) -> RoundChange {
    let median = |value: fn(&RoundChange) -> f64| {
        let mut values: Vec<f64> = changes.iter().map(value).collect();
        values.sort_by(f64::total_cmp);
        let n = values.len();
        (values[(n - 1) / 2] + values[n / 2]) / 2.0
    };
    let base_variance = changes[0].base_variance;
    let head_variance = changes
        .iter()
        .map(|r| r.within_variance - r.base_variance)
        .sum::<f64>()
        / changes.len() as f64;
    RoundChange {
        d: median(|r| r.d),
        within_variance: base_variance
            + head_variance * crate::noise::median_variance_share(changes.len()),
        base_variance,
        ln_base: changes[0].ln_base,
        ln_head: median(|r| r.ln_head),
        best_d: changes.iter().map(|r| r.d).fold(f64::INFINITY, f64::min),
    }
}

/// Moves a stored baseline's one round onto the base's level (see
/// [`crate::noise::pooled_base`]).
fn level_base(
    change: &mut RoundChange,
    history: &[f64],
    metric: Metric,
    log_limit: f64,
) -> BaseLevel {
    let times = matches!(metric, Metric::Time | Metric::Throughput);
    let level = crate::noise::pooled_base(history, change.ln_base, log_limit, times);
    // d > 0 is worse: ln(head/base), or ln(base/head) where higher is better.
    let shift = level.ln - change.ln_base;
    let shift = if metric == Metric::Higher {
        shift
    } else {
        -shift
    };
    change.d += shift;
    change.best_d += shift;
    change.ln_base = level.ln;
    level
}

/// The variance of ln(point) implied by a confidence interval.
fn log_variance(estimate: &Estimate) -> f64 {
    let z = if estimate.confidence_level == 0.95 {
        Z_95
    } else {
        t_quantile(0.5 + estimate.confidence_level / 2.0, f64::INFINITY)
    };
    let half_width = if estimate.lower > 0.0 {
        (estimate.upper.ln() - estimate.lower.ln()) / 2.0
    } else {
        (estimate.upper - estimate.lower) / (2.0 * estimate.point)
    };
    if half_width.is_finite() {
        (half_width / z).powi(2)
    } else {
        0.0
    }
}

/// The two-sided 95% normal quantile, Criterion's default interval.
const Z_95: f64 = 1.959_963_984_540_054;

/// Holm's step-down procedure: for each hypothesis rejected at family-wise level `alpha`, the
/// level of the step that rejected it (`alpha / (m - rank)`).
fn holm_levels(p_values: &[f64], alpha: f64) -> Vec<Option<f64>> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut levels = vec![None; m];
    for (rank, &i) in order.iter().enumerate() {
        let level = alpha / (m - rank) as f64;
        if p_values[i] <= level {
            levels[i] = Some(level);
        } else {
            break;
        }
    }
    levels
}

/// Holm's step-down procedure: which hypotheses are rejected at family-wise level `alpha`.
fn holm(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut rejected = vec![false; m];
    for (rank, &i) in order.iter().enumerate() {
        if p_values[i] <= alpha / (m - rank) as f64 {
            rejected[i] = true;
        } else {
            break;
        }
    }
    rejected
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::holm;

    #[test]
    fn holm_steps_down_and_stops_at_the_first_failure() {
        // m = 4, α = 0.05: thresholds 0.0125, 0.0167, 0.025, 0.05.
        assert_eq!(
            holm(&[0.01, 0.04, 0.015, 0.2], 0.05),
            [true, false, true, false]
        );
        assert_eq!(holm(&[0.013, 0.001], 0.05), [true, true]);
        assert_eq!(holm(&[0.03, 0.03], 0.05), [false, false]);
        assert!(holm(&[], 0.05).is_empty());
    }
}
