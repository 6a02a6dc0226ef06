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
use benchgate_core::{Direction, Estimate, Measurement};

use crate::counts::{self, CountInput};

use crate::noise::{
    Assessed, Floors, OthersSpread, Rounds, assess, fit_prior, history_floor, observed_variance,
    plain_others_spread, robust_spread, shared_spread, undisturbed,
};
use crate::policy::{Policy, Statistic};
use crate::stats::{mean, t_quantile};

pub use crate::noise::{MIN_HISTORY, NoiseSource, UNCALIBRATED_DF, UNCALIBRATED_RUN_NOISE};
pub use crate::sequential::Plan;
use crate::sequential::{self, FUTILITY_POWER, Side};
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

/// The share of `1 − confidence` that the `pass` and `warn` bound of a same-job A/B
/// comparison with a fixed number of rounds spends (96% for the default 95%): a margin for
/// the model. At exactly the limit a calibrated 95% bound lets 5% through by construction, and
/// the t bound on a few rounds is only nearly calibrated (two-level benchmarks, rounds that
/// agree by chance): with all of it spent, 3 fixed rounds let 5.1% and 5.7% of latency
/// slowdowns at the limit through on the second day's recordings (docs/accuracy.md). The other
/// plans hold a margin by construction: adaptive A/B's union bound over looks that overlap
/// (0–4.4% measured), a stored baseline's bound on the base's floor (0–0.5%).
pub const FIXED_AB_PASS_SHARE: f64 = 0.8;

/// What to compare.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// How the baseline was obtained.
    pub mode: Mode,
    /// The base side, one entry per round.
    pub base_rounds: &'a [Vec<Measurement>],
    /// The head side, one entry per round, paired with `base_rounds` in order.
    pub head_rounds: &'a [Vec<Measurement>],
    /// Per benchmark id: ln(median ns) of the baseline's previous runs on the same fingerprint,
    /// oldest first (stored-baseline mode).
    pub history: &'a HashMap<String, Vec<f64>>,
}

/// One round's log change and its within-run variance.
struct RoundChange {
    d: f64,
    within_variance: f64,
    ln_base: f64,
    ln_head: f64,
}

/// A compared benchmark before the verdict.
struct Candidate<'a> {
    id: &'a str,
    metric: Metric,
    unit: Option<&'a str>,
    throughput: Option<(&'static str, u64)>,
    changes: Vec<RoundChange>,
}

/// Decides every benchmark and the comparison, with one look at the rounds there are.
pub fn evaluate(input: &Input<'_>, policy: &Policy) -> Decision {
    evaluate_with(input, policy, Plan::Fixed)
}

/// Decides every benchmark and the comparison at one look of `plan`: each benchmark's error
/// rates are the share `plan` spends at its round count (see [`crate::sequential`]).
pub fn evaluate_with(input: &Input<'_>, policy: &Policy, plan: Plan) -> Decision {
    let rounds = input.base_rounds.len().min(input.head_rounds.len());
    let base = index_rounds(&input.base_rounds[..rounds]);
    let head = index_rounds(&input.head_rounds[..rounds]);

    let mut ids: Vec<&str> = base
        .iter()
        .chain(&head)
        .flat_map(|round| round.keys().copied())
        .collect();
    ids.sort_unstable();
    ids.dedup();

    let mut results = Vec::with_capacity(ids.len());
    let mut unjudged = Vec::new();
    let mut candidates = Vec::with_capacity(ids.len());
    for id in ids {
        let pairs: Vec<(&Measurement, &Measurement)> = (0..rounds)
            .filter_map(|k| Some((*base[k].get(id)?, *head[k].get(id)?)))
            .collect();
        let any_base = base.iter().find_map(|r| r.get(id).copied());
        let any_head = head.iter().find_map(|r| r.get(id).copied());
        let throughput = any_head
            .or(any_base)
            .and_then(|m| m.throughput)
            .map(|t| (t.kind(), t.amount()));
        let custom = any_head.or(any_base).and_then(|m| m.custom.as_ref());
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
            results.push(bare(Verdict::Ignored));
        } else if let (Some(event), false) = (count_event, pairs.is_empty()) {
            // A count event without a limit is stored, not judged.
            let Some(limit) = policy.counts.limit(event) else {
                unjudged.push(id.to_owned());
                continue;
            };
            let value = |m: &Measurement| round_statistic(m, Statistic::Quantile(0.0));
            let base: Vec<f64> = pairs.iter().map(|(b, _)| value(b)).collect();
            let head: Vec<f64> = pairs.iter().map(|(_, h)| value(h)).collect();
            results.push(counts::judge(
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
            results.push(bare(if any_head.is_some() {
                Verdict::New
            } else {
                Verdict::Missing
            }));
        } else {
            let changes = pairs
                .iter()
                .filter_map(|(b, h)| round_change(b, h, policy.statistic, metric))
                .collect::<Vec<_>>();
            if changes.is_empty() {
                // Zero times cannot be compared on a log scale.
                results.push(bare(Verdict::Inconclusive));
            } else {
                candidates.push(Candidate {
                    id,
                    metric,
                    unit,
                    throughput,
                    changes,
                });
            }
        }
    }

    let d_values: Vec<Vec<f64>> = candidates
        .iter()
        .map(|c| c.changes.iter().map(|r| r.d).collect())
        .collect();
    // A low quantile's within-run interval (the gap between the fastest samples) says nothing
    // of how far it moves between runs: one clean sample in twenty keeps the minimum where it
    // was and opens a 14% gap (tests/fixtures/recordings/busy). With rounds, their spread is
    // the noise; the interval stays a floor for the median and for single runs.
    let within_of = |j: usize, kept: Option<&[bool]>| {
        let (sum, count) = kept_of_rounds(&candidates[j].changes, kept)
            .fold((0.0, 0usize), |(sum, count), r| {
                (sum + r.within_variance, count + 1)
            });
        if count < 2 || matches!(policy.statistic, Statistic::Median) {
            sum / count as f64
        } else {
            0.0
        }
    };
    let base_time = |j: usize| {
        let c = &candidates[j];
        (c.changes.len() == 1 && matches!(c.metric, Metric::Time | Metric::Throughput))
            .then(|| c.changes[0].ln_base)
    };
    let rounds_of = |j: usize| Rounds {
        d: &d_values[j],
        within: within_of(j, None),
        base_time: base_time(j),
    };
    // The noise the comparison's benchmarks share, weighted by how alike it is.
    let observed: Vec<(f64, f64)> = (0..candidates.len())
        .filter_map(|j| observed_variance(&rounds_of(j)))
        .collect();
    let prior = fit_prior(&observed);
    // How far the others moved: a floor for single-round comparisons (only those read it).
    let single = |j: usize| d_values[j].len() < 2;
    let any_single = (0..candidates.len()).any(single);
    let signed: Vec<f64> = d_values.iter().map(|d| mean(d)).collect();
    let mut sorted_signed = signed.clone();
    sorted_signed.sort_by(f64::total_cmp);
    let machine = if any_single {
        history_floor(
            &candidates
                .iter()
                .filter_map(|c| input.history.get(c.id).map(Vec::as_slice))
                .collect::<Vec<_>>(),
        )
    } else {
        None
    };
    let others = OthersSpread::new(if any_single { &sorted_signed } else { &[] });
    let moves: Vec<f64> = signed.iter().map(|d| d.abs()).collect();
    let mut sorted_moves = moves.clone();
    sorted_moves.sort_by(f64::total_cmp);
    let floors = |j: usize| {
        if !single(j) {
            return Floors::default();
        }
        Floors {
            robust: others
                .of(signed[j])
                .into_iter()
                .chain(machine)
                .reduce(f64::max),
            plain: plain_others_spread(&sorted_moves, moves[j]),
        }
    };

    let assessed: Vec<Assessed> = (0..candidates.len())
        .map(|j| {
            assess(
                &rounds_of(j),
                prior,
                floors(j),
                input.history.get(candidates[j].id).map(Vec::as_slice),
            )
        })
        .collect();

    // The same with the rounds interference moved set aside: what `pass` rests on. Nothing
    // can be set aside below three rounds (a stored baseline's single run never is).
    let shared = shared_spread(&d_values.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let kept_masks: Vec<Option<Vec<bool>>> = candidates
        .iter()
        .zip(&d_values)
        .map(|(c, d)| {
            let plain_within = || {
                mean(
                    &c.changes
                        .iter()
                        .map(|r| r.within_variance)
                        .collect::<Vec<_>>(),
                )
                .sqrt()
            };
            undisturbed(d, shared.unwrap_or_else(plain_within))
        })
        .collect();
    let kept_d: Vec<Option<Vec<f64>>> = kept_masks
        .iter()
        .zip(&d_values)
        .map(|(mask, d)| {
            mask.as_deref().map(|mask| {
                d.iter()
                    .zip(mask)
                    .filter_map(|(d, keep)| keep.then_some(*d))
                    .collect()
            })
        })
        .collect();
    let kept_of = |j: usize| Rounds {
        d: kept_d[j].as_deref().unwrap_or(&d_values[j]),
        within: within_of(j, kept_masks[j].as_deref()),
        base_time: base_time(j),
    };
    let kept_prior = if kept_masks.iter().all(Option::is_none) {
        prior
    } else {
        fit_prior(
            &(0..candidates.len())
                .filter_map(|j| observed_variance(&kept_of(j)))
                .collect::<Vec<_>>(),
        )
    };
    let kept: Vec<Assessed> = (0..candidates.len())
        .map(|j| {
            if kept_masks[j].is_none() && kept_prior == prior {
                assessed[j]
            } else {
                assess(
                    &kept_of(j),
                    kept_prior,
                    Floors::default(),
                    input.history.get(candidates[j].id).map(Vec::as_slice),
                )
            }
        })
        .collect();

    // Quantiles are bisections; the same few degrees of freedom recur for every benchmark.
    let mut quantiles: HashMap<(u64, u64), f64> = HashMap::new();
    let mut quantile = |p: f64, df: f64| {
        *quantiles
            .entry((p.to_bits(), df.to_bits()))
            .or_insert_with(|| t_quantile(p, df))
    };

    // Each look spends its share of the error rates: a p-value counts as p / share.
    let shares: Vec<f64> = candidates
        .iter()
        .map(|c| plan.share(c.changes.len()))
        .collect();
    let slower_levels = holm_levels(
        &assessed
            .iter()
            .zip(&shares)
            .map(|(a, share)| a.p_slower / share)
            .collect::<Vec<_>>(),
        policy.false_alarm_rate,
    );
    let slower: Vec<bool> = slower_levels.iter().map(Option::is_some).collect();
    let faster = holm(
        &assessed
            .iter()
            .zip(&shares)
            .map(|(a, share)| (1.0 - a.p_slower) / share)
            .collect::<Vec<_>>(),
        policy.false_alarm_rate,
    );
    let compared = candidates.len().max(1) as f64;
    let min_change = policy.min_change.ln_1p();
    for (i, (candidate, a)) in candidates.iter().zip(&assessed).enumerate() {
        let log_limit = policy.log_limit(candidate.id, candidate.metric.higher_is_better());
        let share = shares[i];
        // `a` is every round; `k` the rounds interference left alone. A claim of a change
        // (`regressed`, `improved`) must hold on both: setting rounds aside never makes one.
        // `pass` and `warn` rest on the one-sided upper bound of the rounds kept.
        let k = &kept[i];
        let pass_share = if input.mode == Mode::SameJobAb && plan == Plan::Fixed {
            FIXED_AB_PASS_SHARE
        } else {
            share
        };
        let pass_confidence = 1.0 - (1.0 - policy.confidence) * pass_share;
        let upper = k.d + k.pass_excess + quantile(pass_confidence, k.df) * k.pass_se;
        // `regressed` rests on significance (Holm): its bound is shown at the level of the
        // Holm step that rejected it, so it excludes no change exactly when the test did; a
        // benchmark Holm kept is shown at the first step's level.
        let claim_confidence =
            1.0 - slower_levels[i].unwrap_or(policy.false_alarm_rate / compared) * share;
        let claim = quantile(claim_confidence, a.claim_df);
        let lower = a.d - claim * a.se;
        let first_step_confidence = 1.0 - policy.false_alarm_rate * share / compared;
        let kept_claim = quantile(first_step_confidence, k.claim_df);
        let calibrated = a.source != NoiseSource::Assumed;
        let n = candidate.changes.len();
        let slowed = a.d >= log_limit && k.d >= log_limit && slower[i];
        // A move as large as the limit either way waits for another round (see
        // `MIN_ROUNDS_FOR_LARGE_MOVES`).
        let unconfirmed =
            !plan.may_decide_large_move_at(n) && a.d.abs().max(k.d.abs()) >= log_limit;
        let (verdict, bound) = if slowed && plan.may_fail_at(n) {
            (Verdict::Regressed, (Some(lower), None, claim_confidence))
        } else if slowed {
            // Suspected: confirmed (or not) by the next round.
            (Verdict::Inconclusive, (Some(lower), None, claim_confidence))
        } else if unconfirmed {
            (Verdict::Inconclusive, (None, Some(upper), pass_confidence))
        } else if slower[i] && k.d >= min_change && upper < log_limit && calibrated {
            (
                Verdict::Warn,
                (
                    Some(lower),
                    Some(upper),
                    pass_confidence.min(claim_confidence),
                ),
            )
        } else if faster[i] && a.d <= -min_change && k.d <= -min_change {
            let first_claim = quantile(first_step_confidence, a.claim_df);
            let faster_bound = (a.d + first_claim * a.se).max(k.d + kept_claim * k.se);
            (
                Verdict::Improved,
                (None, Some(faster_bound), first_step_confidence),
            )
        } else if upper < log_limit && calibrated {
            // Without rounds or history, a pass cannot be claimed: on a busy machine one
            // interfered base run hides a real slowdown, and a single pair cannot show it.
            (Verdict::Pass, (None, Some(upper), pass_confidence))
        } else {
            (Verdict::Inconclusive, (None, Some(upper), pass_confidence))
        };
        // The smallest change this look would call `regressed`, and the same at the plan's
        // last look (the per-round noise unchanged, the share of that look): of the rounds the
        // verdict and its band rest on, so a round set aside does not inflate it.
        let mut detectable_at = |rounds: usize| {
            let se = (k.round_variance / rounds as f64).sqrt();
            let confidence = 1.0 - policy.false_alarm_rate * plan.share(rounds) / compared;
            (quantile(confidence, k.claim_df) * se).max(log_limit).exp()
        };
        let detectable = detectable_at(n);
        let last = plan.max_rounds().unwrap_or(n).max(n);
        let detectable_last = detectable_at(last);
        let too_noisy = (detectable_last > log_limit.exp() * (1.0 + 1e-9)).then_some(TooNoisy {
            rounds: last,
            detectable: detectable_last,
        });
        let half_width = quantile(0.5 + policy.confidence / 2.0, k.df) * k.se;
        let kept_mask = kept_masks[i].as_deref();
        let kept_n = kept_of_rounds(&candidate.changes, kept_mask).count();
        // Stopped for futility: more rounds would hardly decide it. A benchmark that moved
        // past its limit is left to be confirmed.
        let futile = match plan {
            Plan::Sequential { max, .. }
                if verdict == Verdict::Inconclusive
                    && plan.may_stop_for_futility_at(n)
                    && n < max
                    && a.d.max(k.d) < log_limit =>
            {
                let more = (max - n) as f64;
                let last_share = plan.share(max);
                // Rounds to come that interference moves are set aside too: their spread is at
                // most the rounds' robust one (which a minority of interfered rounds cannot
                // inflate).
                let pass = Side {
                    estimate: k.d + k.pass_excess,
                    round_sd: (k.pass_se * (kept_n as f64).sqrt()).min(robust_spread(&d_values[i])),
                    quantile: quantile(1.0 - (1.0 - policy.confidence) * last_share, k.df + more),
                    rounds: kept_n as f64,
                };
                let regressed = Side {
                    estimate: a.d,
                    round_sd: a.se * (n as f64).sqrt(),
                    quantile: quantile(
                        1.0 - policy.false_alarm_rate * last_share / compared,
                        a.claim_df + more,
                    ),
                    rounds: n as f64,
                };
                sequential::power(pass, regressed, more, log_limit) < FUTILITY_POWER
            }
            _ => false,
        };
        let geometric =
            |values: &mut dyn Iterator<Item = f64>| (values.sum::<f64>() / kept_n as f64).exp();
        results.push(BenchmarkResult {
            id: candidate.id.to_owned(),
            metric: candidate.metric,
            unit: candidate.unit.map(str::to_owned),
            verdict,
            base_ns: Some(geometric(
                &mut kept_of_rounds(&candidate.changes, kept_mask).map(|r| r.ln_base),
            )),
            head_ns: Some(geometric(
                &mut kept_of_rounds(&candidate.changes, kept_mask).map(|r| r.ln_head),
            )),
            throughput_per_iteration: candidate.throughput,
            ratio: Some(k.d.exp()),
            limit: log_limit.exp(),
            noise: Some(half_width.exp() - 1.0),
            interval: Some(((k.d - half_width).exp(), (k.d + half_width).exp())),
            p_slower: Some(a.p_slower),
            noise_source: Some(a.source),
            uncalibrated: a.source == NoiseSource::Assumed,
            rounds: n,
            set_aside: n - kept_n,
            bound: Some(DecisionBound {
                lower: bound.0.map(f64::exp),
                upper: bound.1.map(f64::exp),
                confidence: bound.2,
            }),
            detectable: Some(detectable),
            too_noisy,
            futile,
            quarantined: policy.quarantine_reason(candidate.id).map(str::to_owned),
        });
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
        ln_base: b.ln(),
        ln_head: h.ln(),
    })
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
