//! Every candidate's noise: from its rounds, its history and how far the comparison's other
//! benchmarks moved, on all its rounds and on the rounds interference left alone.

use super::{Candidate, Input, kept_of_rounds};
use crate::noise::{
    Assessed, BestHead, Floors, GUARDED_RUNS, OthersSpread, Rounds, assess, choose_claim,
    fit_prior, history_floor, history_spread_record, move_from_clean_base, observed_variance,
    pair_variance_share, plain_others_spread, shared_spread, undisturbed,
};
use crate::policy::{Policy, Statistic};
use crate::sequential::Plan;
use crate::stats::mean;
use crate::verdict::Metric;

/// A low quantile's within-run interval (the gap between the fastest samples) says nothing of
/// how far it moves between runs: one clean sample in twenty keeps the minimum where it was
/// and opens a 14% gap (tests/fixtures/recordings/busy). With rounds, their spread is the
/// noise; the interval stays a floor for the median and for single runs.
fn within_of(candidate: &Candidate<'_>, kept: Option<&[bool]>, statistic: Statistic) -> f64 {
    let (sum, count) = kept_of_rounds(&candidate.changes, kept)
        .fold((0.0, 0usize), |(sum, count), r| {
            (sum + r.within_variance, count + 1)
        });
    if count < 2 || matches!(statistic, Statistic::Median) {
        sum / count as f64
    } else {
        0.0
    }
}

/// The within-run floor of a stored baseline's `pass` ([`crate::noise::Rounds::pass_within`]):
/// Criterion's interval for the median, none for a low quantile.
fn pass_within_of(candidate: &Candidate<'_>, kept: Option<&[bool]>, statistic: Statistic) -> f64 {
    if matches!(statistic, Statistic::Median) {
        within_of(candidate, kept, statistic)
    } else {
        0.0
    }
}

/// A single round's ln(base) of a time (or throughput): what its one-sided pass reads history
/// against.
fn base_time(candidate: &Candidate<'_>) -> Option<f64> {
    (candidate.changes.len() == 1 && matches!(candidate.metric, Metric::Time | Metric::Throughput))
        .then(|| candidate.changes[0].ln_base)
}

/// A stored baseline's best head run of several, for a benchmark judged on time (interference
/// only adds time): what [`crate::noise::fastest_head_claim`] reads.
fn best_head(candidate: &Candidate<'_>, policy: &Policy) -> Option<BestHead> {
    (base_time(candidate).is_some() && candidate.head_runs() >= GUARDED_RUNS).then(|| BestHead {
        d: candidate.changes[0].best_d,
        log_limit: policy.log_limit(candidate.id, candidate.metric.higher_is_better()),
    })
}

/// Every candidate's noise: assessed on all its rounds, and on the rounds interference left
/// alone.
pub(super) struct Model {
    d_values: Vec<Vec<f64>>,
    /// Every round.
    pub(super) assessed: Vec<Assessed>,
    /// Per candidate, the rounds interference left alone (`None`: all of them).
    kept_masks: Vec<Option<Vec<bool>>>,
    /// The rounds kept.
    kept: Vec<Assessed>,
}

/// One candidate's part of a [`Model`].
pub(super) struct Noise<'m> {
    pub(super) d: &'m [f64],
    pub(super) all: &'m Assessed,
    pub(super) kept: &'m Assessed,
    pub(super) kept_mask: Option<&'m [bool]>,
}

impl Model {
    pub(super) fn fit(
        input: &Input<'_>,
        policy: &Policy,
        plan: Plan,
        candidates: &[Candidate<'_>],
    ) -> Self {
        let d_values: Vec<Vec<f64>> = candidates
            .iter()
            .map(|c| c.changes.iter().map(|r| r.d).collect())
            .collect();
        let history = |j: usize| input.history.get(candidates[j].id).map(Vec::as_slice);
        let rounds_of = |j: usize| Rounds {
            d: &d_values[j],
            within: within_of(&candidates[j], None, policy.statistic),
            pass_within: pass_within_of(&candidates[j], None, policy.statistic),
            base_time: base_time(&candidates[j]),
            head_runs: candidates[j].head_runs(),
            base_runs: candidates[j].base_runs,
            best: best_head(&candidates[j], policy),
        };
        // The noise the comparison's benchmarks share, weighted by how alike it is.
        let observed: Vec<(f64, f64)> = (0..candidates.len())
            .filter_map(|j| observed_variance(&rounds_of(j)))
            .collect();
        let prior = fit_prior(&observed);
        // Holm's first step at each candidate's look: the level a claim is chosen at.
        let level = |j: usize| {
            policy.false_alarm_rate * plan.share(candidates[j].looks)
                / candidates.len().max(1) as f64
        };
        let assessed: Vec<Assessed> = {
            let floors = single_round_floors(input, candidates, &d_values);
            (0..candidates.len())
                .map(|j| {
                    let mut assessed = assess(&rounds_of(j), prior, floors(j), history(j));
                    choose_claim(&mut assessed, level(j));
                    assessed
                })
                .collect()
        };

        // The same with the rounds interference moved set aside: what `pass` rests on.
        // Nothing can be set aside below three rounds (a stored baseline's single run never
        // is).
        let kept_masks = set_aside(candidates, &d_values);
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
            within: within_of(&candidates[j], kept_masks[j].as_deref(), policy.statistic),
            pass_within: pass_within_of(&candidates[j], kept_masks[j].as_deref(), policy.statistic),
            base_time: base_time(&candidates[j]),
            head_runs: candidates[j].head_runs(),
            base_runs: candidates[j].base_runs,
            best: best_head(&candidates[j], policy),
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
                    let mut kept = assess(&kept_of(j), kept_prior, Floors::default(), history(j));
                    choose_claim(&mut kept, level(j));
                    kept
                }
            })
            .collect();
        Self {
            d_values,
            assessed,
            kept_masks,
            kept,
        }
    }

    pub(super) fn of(&self, i: usize) -> Noise<'_> {
        Noise {
            d: &self.d_values[i],
            all: &self.assessed[i],
            kept: &self.kept[i],
            kept_mask: self.kept_masks[i].as_deref(),
        }
    }
}

/// What a single-round comparison's floors are read from: every benchmark's move, and the
/// machine's record.
struct RunMoves {
    signed: Vec<f64>,
    moves: Vec<f64>,
    sorted_moves: Vec<f64>,
    others: OthersSpread,
    /// Each move with its base run's interference taken back out ([`move_from_clean_base`]).
    from_clean_base: Vec<f64>,
    others_from_clean_base: OthersSpread,
    machine: Option<f64>,
    /// How far apart the machine's history shows its benchmarks moving between two runs: the
    /// widest a `pass` floor's spread may read ([`history_spread_record`]).
    spread_record: Option<f64>,
}

impl RunMoves {
    fn new(input: &Input<'_>, candidates: &[Candidate<'_>], d_values: &[Vec<f64>]) -> Self {
        let signed: Vec<f64> = d_values.iter().map(|d| mean(d)).collect();
        let moves: Vec<f64> = signed.iter().map(|d| d.abs()).collect();
        let from_clean_base: Vec<f64> = signed
            .iter()
            .zip(candidates)
            .map(|(d, c)| match (base_time(c), input.history.get(c.id)) {
                (Some(base), Some(history)) => move_from_clean_base(history, base, *d),
                _ => *d,
            })
            .collect();
        let histories: Vec<&[f64]> = candidates
            .iter()
            .filter_map(|c| input.history.get(c.id).map(Vec::as_slice))
            .collect();
        let sorted = |values: &[f64]| {
            let mut sorted = values.to_vec();
            sorted.sort_by(f64::total_cmp);
            sorted
        };
        Self {
            others: OthersSpread::new(&sorted(&signed)),
            others_from_clean_base: OthersSpread::new(&sorted(&from_clean_base)),
            sorted_moves: sorted(&moves),
            machine: history_floor(&histories),
            spread_record: history_spread_record(&histories),
            signed,
            moves,
            from_clean_base,
        }
    }

    fn floors(&self, j: usize, head_runs: usize) -> Floors {
        // The faster reading leaves out what base runs slowed by interference added: they
        // read faster by as much, on a host no faster. Neither spreads wider than the
        // machine's history ever did: past that the others moved by their code.
        let shared_within = |widest: f64| {
            self.others
                .of_within(self.signed[j], widest)
                .zip(
                    self.others_from_clean_base
                        .faster_of_within(self.from_clean_base[j], widest),
                )
                .map(|(both, faster)| both.min(faster))
        };
        let shared = shared_within(self.spread_record.unwrap_or(f64::INFINITY));
        let uncapped = shared_within(f64::INFINITY);
        Floors {
            // The machine's typical move is one run's against one; the median of re-runs
            // moves less.
            robust: self
                .others
                .of(self.signed[j])
                .into_iter()
                .chain(
                    self.machine
                        .map(|m| m * pair_variance_share(1, head_runs).sqrt()),
                )
                .reduce(f64::max),
            // A run slowed in most of its benchmarks centres the others above the clean ones;
            // a pull request that speeds up a third of the suite puts many below zero. Each
            // reading is robust to one of the two, and both bound what a faster host hides.
            shared,
            plain: plain_others_spread(&self.sorted_moves, self.moves[j]),
            shared_at_record: shared < uncapped,
        }
    }
}

/// How far the others moved: a floor for single-round comparisons (only those read it).
fn single_round_floors<'a>(
    input: &Input<'_>,
    candidates: &[Candidate<'_>],
    d_values: &'a [Vec<f64>],
) -> impl Fn(usize) -> Floors + 'a {
    let single = move |j: usize| d_values[j].len() < 2;
    let head_runs: Vec<usize> = candidates.iter().map(Candidate::head_runs).collect();
    // Nothing to compute when every benchmark has rounds (most of an adaptive job's looks).
    let run = (0..d_values.len())
        .any(single)
        .then(|| RunMoves::new(input, candidates, d_values));
    move |j: usize| match &run {
        Some(run) if single(j) => run.floors(j, head_runs[j]),
        _ => Floors::default(),
    }
}

/// Per candidate, the rounds interference left alone (`None`: all of them, or too few rounds
/// to tell).
fn set_aside(candidates: &[Candidate<'_>], d_values: &[Vec<f64>]) -> Vec<Option<Vec<bool>>> {
    let shared = shared_spread(&d_values.iter().map(Vec::as_slice).collect::<Vec<_>>());
    candidates
        .iter()
        .zip(d_values)
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
        .collect()
}
