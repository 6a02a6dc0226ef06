//! The tests over a comparison's candidates and each candidate's verdict, with the bound it
//! rests on.

use std::collections::HashMap;

use super::model::{Model, Noise};
use super::{
    Candidate, FIXED_AB_PASS_SHARE, Input, RoundChange, holm, holm_levels, kept_of_rounds,
};
use crate::noise::{Assessed, NoiseSource, history_variance, pair_variance_share, robust_spread};
use crate::policy::Policy;
use crate::sequential::{self, FUTILITY_POWER, Plan, Side};
use crate::stats::{t_cdf, t_quantile};
use crate::verdict::{BenchmarkResult, DecisionBound, Mode, TooNoisy, Verdict};

/// The comparison's tests over every candidate: each look spends its share of the error
/// rates (a p-value counts as p / share), and Holm's procedure holds them over the benchmarks.
pub(super) struct Tests {
    shares: Vec<f64>,
    /// Per candidate, the level of the Holm step that found it slower, if one did.
    slower_levels: Vec<Option<f64>>,
    faster: Vec<bool>,
}

/// One candidate's part of [`Tests`].
pub(super) struct Tested {
    share: f64,
    slower_level: Option<f64>,
    faster: bool,
}

impl Tests {
    pub(super) fn run(
        model: &Model,
        candidates: &[Candidate<'_>],
        policy: &Policy,
        plan: Plan,
    ) -> Self {
        let shares: Vec<f64> = candidates.iter().map(|c| plan.share(c.looks)).collect();
        let scaled = |p: &dyn Fn(&Assessed) -> f64| {
            model
                .assessed
                .iter()
                .zip(&shares)
                .map(|(a, share)| p(a) / share)
                .collect::<Vec<_>>()
        };
        let slower_levels = holm_levels(&scaled(&|a| a.p_slower), policy.false_alarm_rate);
        // Faster than the base run itself, where the level sits above it (0 elsewhere: then
        // this is 1 − `p_slower`).
        let p_faster: Vec<f64> = model
            .assessed
            .iter()
            .zip(candidates)
            .zip(&shares)
            .map(|((a, c), share)| t_cdf((a.d + c.base_above_run) / a.se, a.claim_df) / share)
            .collect();
        let faster = holm(&p_faster, policy.false_alarm_rate);
        Self {
            shares,
            slower_levels,
            faster,
        }
    }

    pub(super) fn of(&self, i: usize) -> Tested {
        Tested {
            share: self.shares[i],
            slower_level: self.slower_levels[i],
            faster: self.faster[i],
        }
    }
}

/// Quantiles are bisections; the same few degrees of freedom recur for every benchmark.
#[derive(Default)]
pub(super) struct Quantiles(HashMap<(u64, u64), f64>);

impl Quantiles {
    fn t(&mut self, p: f64, df: f64) -> f64 {
        *self
            .0
            .entry((p.to_bits(), df.to_bits()))
            .or_insert_with(|| t_quantile(p, df))
    }
}

/// What every benchmark of one look is judged with.
pub(super) struct Judge<'i, 'a> {
    pub(super) input: &'i Input<'a>,
    pub(super) policy: &'i Policy,
    pub(super) plan: Plan,
    /// How many benchmarks were compared (Holm's first step divides by it).
    pub(super) compared: f64,
}

/// A verdict with the bound it rests on: (lower, upper, confidence), in logs.
type Bound = (Option<f64>, Option<f64>, f64);

impl Judge<'_, '_> {
    /// One candidate's result.
    pub(super) fn benchmark(
        &self,
        candidate: &Candidate<'_>,
        noise: &Noise<'_>,
        tested: &Tested,
        quantiles: &mut Quantiles,
    ) -> BenchmarkResult {
        let policy = self.policy;
        let log_limit = policy.log_limit(candidate.id, candidate.metric.higher_is_better());
        let (a, k) = (noise.all, noise.kept);
        let (verdict, bound) = self.verdict(candidate, noise, tested, log_limit, quantiles);
        // The smallest change this look would call `regressed`, and the same at the plan's
        // last look (the per-round noise unchanged, the share of that look): of the rounds the
        // verdict and its band rest on, so a round set aside does not inflate it.
        let n = candidate.changes.len();
        let looks = candidate.looks;
        // More rounds divide the per-round variance; more head runs of a stored baseline
        // shrink only the head's part of it, and from three a side, its history's band no
        // longer covers one run's jump (`history_variance`).
        let pooled = self.input.mode == Mode::StoredBaseline && n == 1;
        let history = self
            .input
            .history
            .get(candidate.id)
            .filter(|_| k.source == NoiseSource::History);
        let base = candidate.base_runs;
        // The level of Holm's first step at a look of `rounds`.
        let level_at =
            |rounds: usize| policy.false_alarm_rate * self.plan.share(rounds) / self.compared;
        let mut detectable_at = |rounds: usize| {
            let variance = if pooled {
                let at = |runs: usize| {
                    history
                        .and_then(|h| history_variance(h, base, runs))
                        .unwrap_or_else(|| pair_variance_share(base, runs))
                };
                k.round_variance * at(rounds) / at(looks)
            } else {
                k.round_variance / rounds as f64
            };
            let se = variance.sqrt();
            (quantiles.t(1.0 - level_at(rounds), k.claim_df) * se)
                .max(log_limit)
                .exp()
        };
        // Where `regressed` rests on the best head run's claim (chosen by
        // `noise::choose_claim`, which drops it otherwise), the smallest change it would call
        // so is that claim's. It exists only at this look's head runs, so later looks keep the
        // median's.
        let mut detectable_of = |rounds: usize| match a.fastest {
            Some(fastest) if pooled && rounds == looks => {
                fastest.needs_at(level_at(rounds)).max(log_limit).exp()
            }
            _ => detectable_at(rounds),
        };
        let detectable = detectable_of(looks);
        let last = self.plan.max_rounds().unwrap_or(looks).max(looks);
        let detectable_last = detectable_of(last);
        // "Too noisy" is a claim about the noise, so it needs the noise measured: with an
        // assumed level (one A/B round, a stored baseline without history) it would tell the
        // user to quarantine benchmarks nothing has measured. Those are marked uncalibrated.
        let measured = a.source != NoiseSource::Assumed;
        let too_noisy =
            (measured && detectable_last > log_limit.exp() * (1.0 + 1e-9)).then_some(TooNoisy {
                rounds: last,
                detectable: detectable_last,
            });
        let half_width = quantiles.t(0.5 + policy.confidence / 2.0, k.df) * k.se;
        let kept_n = kept_of_rounds(&candidate.changes, noise.kept_mask).count();
        let futile =
            verdict == Verdict::Inconclusive && self.futile(noise, n, kept_n, log_limit, quantiles);
        let geometric = |ln: fn(&RoundChange) -> f64| {
            (kept_of_rounds(&candidate.changes, noise.kept_mask)
                .map(ln)
                .sum::<f64>()
                / kept_n as f64)
                .exp()
        };
        BenchmarkResult {
            id: candidate.id.to_owned(),
            metric: candidate.metric,
            unit: candidate.unit.map(str::to_owned),
            verdict,
            base_ns: Some(geometric(|r| r.ln_base)),
            head_ns: Some(geometric(|r| r.ln_head)),
            throughput_per_iteration: candidate.throughput,
            head_work: candidate.head_work,
            ratio: Some(k.d.exp()),
            limit: log_limit.exp(),
            noise: Some(half_width.exp() - 1.0),
            interval: Some(((k.d - half_width).exp(), (k.d + half_width).exp())),
            p_slower: Some(a.p_slower),
            noise_source: Some(a.source),
            uncalibrated: a.source == NoiseSource::Assumed,
            rounds: looks,
            set_aside: n - kept_n,
            base_runs: candidate.base_runs,
            bound: Some(DecisionBound {
                lower: bound.0.map(f64::exp),
                upper: bound.1.map(f64::exp),
                confidence: bound.2,
            }),
            detectable: Some(detectable),
            too_noisy,
            futile,
            quarantined: policy.quarantine_reason(candidate.id).map(str::to_owned),
            pass_on_floor: k.pass_on_floor,
        }
    }

    /// The verdict and the bound it rests on. `a` is every round; `k` the rounds interference
    /// left alone. A claim of a change (`regressed`, `improved`) must hold on both: setting
    /// rounds aside never makes one. `pass` and `warn` rest on the one-sided upper bound of the
    /// rounds kept.
    fn verdict(
        &self,
        candidate: &Candidate<'_>,
        noise: &Noise<'_>,
        tested: &Tested,
        log_limit: f64,
        quantiles: &mut Quantiles,
    ) -> (Verdict, Bound) {
        let (policy, plan) = (self.policy, self.plan);
        let (a, k) = (noise.all, noise.kept);
        let pass_share = if self.input.mode == Mode::SameJobAb && plan == Plan::Fixed {
            FIXED_AB_PASS_SHARE
        } else {
            tested.share
        };
        let pass_confidence = 1.0 - (1.0 - policy.confidence) * pass_share;
        let upper = k.d + k.pass_excess + quantiles.t(pass_confidence, k.df) * k.pass_se;
        // `regressed` rests on significance (Holm): its bound is shown at the level of the
        // Holm step that rejected it, so it excludes no change exactly when the test did; a
        // benchmark Holm kept is shown at the first step's level.
        let claim_confidence = 1.0
            - tested
                .slower_level
                .unwrap_or(policy.false_alarm_rate / self.compared)
                * tested.share;
        let lower = match a.fastest {
            None => a.d - quantiles.t(claim_confidence, a.claim_df) * a.se,
            // The best head run's claim (chosen by `noise::choose_claim`): its p-value carries
            // the chance that every head run was slowed, so its bound spends that much less.
            Some(fastest) => fastest.d - fastest.margin_at(1.0 - claim_confidence),
        };
        let first_step_confidence = 1.0 - policy.false_alarm_rate * tested.share / self.compared;
        let calibrated = a.source != NoiseSource::Assumed;
        let n = candidate.changes.len();
        let slower = tested.slower_level.is_some();
        let min_change = policy.min_change.ln_1p();
        // An improvement is claimed against the base run where its level sits above it.
        let above_run = candidate.base_above_run;
        let slowed = a.d >= log_limit && k.d >= log_limit && slower;
        // A move as large as the limit either way waits for another round (see
        // `MIN_ROUNDS_FOR_LARGE_MOVES`).
        let unconfirmed =
            !plan.may_decide_large_move_at(n) && a.d.abs().max(k.d.abs()) >= log_limit;
        if slowed && plan.may_fail_at(n) {
            (Verdict::Regressed, (Some(lower), None, claim_confidence))
        } else if slowed {
            // Suspected: confirmed (or not) by the next round.
            (Verdict::Inconclusive, (Some(lower), None, claim_confidence))
        } else if unconfirmed {
            (Verdict::Inconclusive, (None, Some(upper), pass_confidence))
        } else if slower && k.d >= min_change && upper < log_limit && calibrated {
            let confidence = pass_confidence.min(claim_confidence);
            (Verdict::Warn, (Some(lower), Some(upper), confidence))
        } else if tested.faster && a.d + above_run <= -min_change && k.d + above_run <= -min_change
        {
            let first_claim = quantiles.t(first_step_confidence, a.claim_df);
            let kept_claim = quantiles.t(first_step_confidence, k.claim_df);
            let faster_bound = (a.d + first_claim * a.se).max(k.d + kept_claim * k.se) + above_run;
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
        }
    }

    /// Whether an inconclusive benchmark stopped for futility: more rounds would hardly decide
    /// it. A benchmark that moved past its limit is left to be confirmed.
    fn futile(
        &self,
        noise: &Noise<'_>,
        n: usize,
        kept_n: usize,
        log_limit: f64,
        quantiles: &mut Quantiles,
    ) -> bool {
        let (a, k) = (noise.all, noise.kept);
        let Plan::Sequential { max, .. } = self.plan else {
            return false;
        };
        if !(self.plan.may_stop_for_futility_at(n) && n < max && a.d.max(k.d) < log_limit) {
            return false;
        }
        let policy = self.policy;
        let more = (max - n) as f64;
        let last_share = self.plan.share(max);
        // Rounds to come that interference moves are set aside too: their spread is at most
        // the rounds' robust one (which a minority of interfered rounds cannot inflate).
        let pass = Side {
            estimate: k.d + k.pass_excess,
            round_sd: (k.pass_se * (kept_n as f64).sqrt()).min(robust_spread(noise.d)),
            quantile: quantiles.t(1.0 - (1.0 - policy.confidence) * last_share, k.df + more),
            rounds: kept_n as f64,
        };
        let regressed = Side {
            estimate: a.d,
            round_sd: a.se * (n as f64).sqrt(),
            quantile: quantiles.t(
                1.0 - policy.false_alarm_rate * last_share / self.compared,
                a.claim_df + more,
            ),
            rounds: n as f64,
        };
        sequential::power(pass, regressed, more, log_limit) < FUTILITY_POWER
    }
}
