//! Each benchmark's noise: how far its change could be from the truth. From its own rounds,
//! moderated by what the comparison's other benchmarks show (an empirical-Bayes prior whose
//! weight is estimated from how alike their noise is, limma's `fitFDist`); else from the
//! baseline's stored history; else an assumed level. One run a side also takes a floor from
//! how far the other benchmarks moved, robustly: a minority of real changes cannot raise it.

use crate::stats::{
    clean_runs_sigma, digamma, f_upper_tail, inverse_trigamma, mean, median, second_fastest,
    successive_difference_sigma, t_cdf, tail_aware_sigma, trigamma, variance,
};

/// Benchmarks needed in a comparison before their shared noise level is used as a prior.
pub const MIN_BENCHMARKS_TO_POOL: usize = 5;
/// Runs of history a stored baseline's noise is read from alone; fewer (down to
/// [`MIN_SHORT_HISTORY`]) are read with the assumed noise as a prior.
pub const MIN_HISTORY: usize = 10;
/// The fewest runs of history a stored-baseline comparison is calibrated from at all: below
/// them the noise is assumed and nothing passes.
pub const MIN_SHORT_HISTORY: usize = 5;
/// The weight of [`UNCALIBRATED_RUN_NOISE`], in runs, beside a short history's own per-run
/// variance (a scaled inverse-χ² prior, as [`fit_prior`]'s): a handful of runs rarely shows a
/// benchmark's rare jumps, so they widen its band toward the assumed level until the history
/// is [`MIN_HISTORY`] runs long. Three decided 76–94% of identical comparisons on the idle
/// recordings from one head run, five 64–94%, with the same error rates (docs/accuracy.md,
/// "A short history").
pub const SHORT_HISTORY_PRIOR_RUNS: f64 = 3.0;

/// Whether a history of `runs` runs is short: calibrated, but with the assumed level as a
/// prior ([`MIN_SHORT_HISTORY`] to [`MIN_HISTORY`] runs).
pub fn is_short_history(runs: usize) -> bool {
    (MIN_SHORT_HISTORY..MIN_HISTORY).contains(&runs)
}

/// A short history's per-run standard deviation: `sigma` (from `runs` runs) pooled with the
/// assumed level, weighted by their degrees of freedom; `sigma` itself from [`MIN_HISTORY`]
/// runs on.
pub fn short_history_sigma(sigma: f64, runs: usize) -> f64 {
    if runs >= MIN_HISTORY {
        return sigma;
    }
    let own = runs.saturating_sub(1) as f64;
    ((SHORT_HISTORY_PRIOR_RUNS * UNCALIBRATED_RUN_NOISE * UNCALIBRATED_RUN_NOISE
        + own * sigma * sigma)
        / (SHORT_HISTORY_PRIOR_RUNS + own))
        .sqrt()
}

/// The degrees of freedom of a history's noise: its runs' successive differences, and for a
/// short history the prior's weight beside them.
pub fn history_df(runs: usize) -> f64 {
    let own = runs.saturating_sub(1) as f64;
    if runs >= MIN_HISTORY {
        own
    } else {
        own + SHORT_HISTORY_PRIOR_RUNS
    }
}
/// Degrees of freedom of the Student-t against which an uncalibrated `regressed` is claimed:
/// tails as heavy as those recorded under interference (tests/fixtures/recordings/busy, where
/// single-run A/A differences reach 57% at the 99th percentile).
pub const UNCALIBRATED_DF: f64 = 4.0;
/// Per-run noise (relative) assumed when nothing better is known: the 90th percentile of the
/// per-run spread across the benchmarks recorded in tests/fixtures/recordings/idle (4.4%),
/// rounded up. GitHub-hosted runners average 2.66% (CodSpeed, 2025), but a gate must survive the
/// noisy tenth, not the average.
pub const UNCALIBRATED_RUN_NOISE: f64 = 0.05;
/// The most weight the prior gets, in degrees of freedom, when every benchmark's noise looks
/// alike (the estimate is then unbounded).
pub const MAX_PRIOR_DF: f64 = 60.0;

/// Where a benchmark's noise estimate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseSource {
    /// The spread across same-job rounds.
    Rounds,
    /// The baseline's history on this fingerprint.
    History,
    /// Neither: an assumed per-run noise (uncalibrated).
    Assumed,
    /// Exact counts: no noise but what the rounds and history showed them move (see
    /// `counts.rs`).
    Exact,
    /// None: base and head built byte-identical executables and nothing else they could read
    /// changed, so the benchmark was not measured (its change is exactly none).
    SameExecutables,
}

/// The noise the comparison's benchmarks share: a scaled inverse-χ² prior on each benchmark's
/// per-round variance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    /// The typical per-round variance of `d`.
    pub variance: f64,
    /// Its weight in degrees of freedom: large when the benchmarks' variances agree, small
    /// when they differ (a quiet benchmark then keeps its own evidence).
    pub df: f64,
}

/// The least weight the prior gets: with two rounds a benchmark's own variance has one degree
/// of freedom, and alone it would make every band useless.
pub const MIN_PRIOR_DF: f64 = 2.0;

/// Fits the prior to `(variance, degrees of freedom)` per benchmark (Smyth 2004, as limma's
/// `fitFDist` without covariates): the log variances' mean and spread beyond what sampling
/// explains. `None` for fewer than [`MIN_BENCHMARKS_TO_POOL`].
pub fn fit_prior(observed: &[(f64, f64)]) -> Option<Prior> {
    let usable: Vec<(f64, f64)> = observed
        .iter()
        .copied()
        .filter(|(s2, df)| *s2 > 0.0 && s2.is_finite() && *df > 0.0)
        .collect();
    if usable.len() < MIN_BENCHMARKS_TO_POOL {
        return None;
    }
    let e: Vec<f64> = usable
        .iter()
        .map(|(s2, df)| s2.ln() - digamma(df / 2.0) + (df / 2.0).ln())
        .collect();
    let e_mean = mean(&e);
    let excess = variance(&e)
        - mean(
            &usable
                .iter()
                .map(|(_, df)| trigamma(df / 2.0))
                .collect::<Vec<_>>(),
        );
    let df = if excess > 0.0 {
        (2.0 * inverse_trigamma(excess)).clamp(MIN_PRIOR_DF, MAX_PRIOR_DF)
    } else {
        MAX_PRIOR_DF
    };
    Some(Prior {
        variance: (e_mean + digamma(df / 2.0) - (df / 2.0).ln()).exp(),
        df,
    })
}

/// How unlikely a benchmark's own round variance must be under the shared prior (an F test)
/// before it is judged on its own variance alone.
pub const OWN_NOISE_LEVEL: f64 = 0.01;

/// A benchmark's change, its standard error and degrees of freedom.
#[derive(Debug, Clone, Copy)]
pub struct Assessed {
    /// The mean change over the rounds, `d̂`.
    pub d: f64,
    /// Its standard error.
    pub se: f64,
    /// The degrees of freedom of `se`.
    pub df: f64,
    /// Degrees of freedom a `regressed` is claimed against (heavier tails when uncalibrated).
    pub claim_df: f64,
    /// One-sided p-value of "slower".
    pub p_slower: f64,
    /// Where the noise came from.
    pub source: NoiseSource,
    /// The per-round variance of `d` behind `se` (`se² · rounds`).
    pub round_variance: f64,
    /// The standard error `pass` and `warn` rest on: `se`, except for a stored baseline with
    /// history, where the base's interference is bounded apart (see [`RECENT_FLOOR_RUNS`]).
    pub pass_se: f64,
    /// Added to the upper bound `pass` and `warn` rest on: how far the base run sits above its
    /// recent floor (0 unless `pass_se` is the history's robust spread).
    pub pass_excess: f64,
    /// A stored baseline's `pass` rests on the others' floor, at least the clean noise of one
    /// head run, where the others moved further apart than the machine ever moved them (by
    /// their code): more head runs in the same job cannot narrow it.
    pub pass_on_floor: bool,
    /// A stored baseline's claim from its best head run ([`fastest_head_claim`]), where it
    /// has one; once [`choose_claim`] has chosen it, `p_slower` is its p-value.
    pub fastest: Option<FastestHead>,
}

/// A stored baseline's best head run of several, as [`fastest_head_claim`] reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BestHead {
    /// The change of the best head run against the base's level.
    pub d: f64,
    /// The benchmark's limit, as a log ratio.
    pub log_limit: f64,
}

/// A `regressed` claimed from a stored baseline's best head run ([`fastest_head_claim`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FastestHead {
    /// The best head run's change.
    pub d: f64,
    /// Its standard error, from the history's clean runs.
    pub se: f64,
    /// The degrees of freedom of `se`.
    pub df: f64,
    /// The chance that every head run was slowed by interference: added to the p-value.
    pub all_slowed: f64,
    /// One-sided p-value of "slower".
    pub p_slower: f64,
}

impl FastestHead {
    /// How far below `d` its one-sided bound at `level` sits: the chance that every head run
    /// was slowed is spent first, so the bound spends only the rest. Infinite when that chance
    /// alone is the level or more (no claim at `level` can rest on the best run).
    pub fn margin_at(&self, level: f64) -> f64 {
        if level > self.all_slowed {
            crate::stats::t_quantile(1.0 - (level - self.all_slowed), self.df) * self.se
        } else {
            f64::INFINITY
        }
    }

    /// The smallest change (a log ratio) this claim calls `regressed` at `level`: its margin,
    /// plus the gap by which the best of the head runs reads below their median when nothing
    /// interfered ([`BEST_OF_THREE_GAP`]).
    pub fn needs_at(&self, level: f64) -> f64 {
        self.margin_at(level) + BEST_OF_THREE_GAP * self.se
    }
}

/// The expected gap between the median and the fastest of three clean head runs, in clean
/// standard deviations (the median of three normals against their smallest, 0.846σ): what the
/// best head run's change reads lower by when nothing interfered.
pub const BEST_OF_THREE_GAP: f64 = 0.846;

/// Which of a stored baseline's two claims of `regressed` a benchmark rests on, chosen from
/// its history and the others' moves alone, never from its own head runs, so that each is
/// tested at the full level: the one with the smaller change it would need at `level` (the
/// best head run's raised by [`BEST_OF_THREE_GAP`], which it reads lower by). On a quiet
/// history that is the median's, whose band is the tail-aware spread; where the history shows
/// a neighbour's jumps, the best head run's. `assessed.fastest` is kept, and `p_slower` set to
/// its p-value, where it is chosen; dropped otherwise.
pub fn choose_claim(assessed: &mut Assessed, level: f64) {
    let Some(fastest) = assessed.fastest else {
        return;
    };
    let median_needs = crate::stats::t_quantile(1.0 - level, assessed.claim_df) * assessed.se;
    let best_needs = fastest.needs_at(level);
    if best_needs < median_needs {
        assessed.p_slower = fastest.p_slower;
    } else {
        assessed.fastest = None;
    }
}

/// How far above the history's second fastest run, as a share of the limit, a run counts as
/// one interference slowed enough to matter to [`fastest_head_claim`].
pub const SLOWED_SHARE_OF_LIMIT: f64 = 0.5;

/// A `regressed` from a stored baseline's best head run of at least [`GUARDED_RUNS`].
///
/// `d_best = Δ + (ε_head − ε_base) + (J_head − J_base)` for the head run with the smallest
/// change. Interference only adds time, so the base's `J` only lowers it, and the head's is 0
/// unless every head run was slowed. With one clean head run, the best is no slower than it, so
/// `d_best − Δ` is at most one clean run's noise against the base's level: the history's clean
/// spread ([`clean_sigma`]), for one run plus the level's median. The chance that every head
/// run was slowed is bounded by the history's own record: the share of its runs that sat at
/// least [`SLOWED_SHARE_OF_LIMIT`] of the limit above its second fastest (with one run of each
/// kind added, so that a clean history of ten still counts one in twelve), to the power of the
/// head runs, taken as independent. It is added to the p-value. On a busy machine a neighbour
/// slows a few benchmarks of each run by 30–100%, and the median of three head runs is
/// outvoted by two slowed ones; the history's tails, which the median's claim rests on, then
/// leave it unable to claim even a slowdown of 1.5 times the limit (docs/accuracy.md, "The best
/// of the head runs"). `None` for a short history or one without a clean spread.
pub fn fastest_head_claim(
    history: &[f64],
    best: BestHead,
    base_runs: usize,
    head_runs: usize,
    within: f64,
) -> Option<FastestHead> {
    if history.len() < MIN_HISTORY || head_runs < GUARDED_RUNS {
        return None;
    }
    let sigma = clean_sigma(history);
    if !sigma.is_finite() {
        return None;
    }
    let floor = second_fastest(history);
    let slowed = history
        .iter()
        .filter(|&&v| v - floor >= SLOWED_SHARE_OF_LIMIT * best.log_limit)
        .count();
    let share = (slowed as f64 + 1.0) / (history.len() as f64 + 2.0);
    let all_slowed = share.powi(i32::try_from(head_runs).unwrap_or(i32::MAX));
    let se = (sigma * sigma * (median_variance_share(base_runs) + 1.0))
        .max(within)
        .sqrt()
        .max(1e-12);
    let df = history_df(history.len());
    Some(FastestHead {
        d: best.d,
        se,
        df,
        all_slowed,
        p_slower: (1.0 - t_cdf(best.d / se, df) + all_slowed).min(1.0),
    })
}

/// Runs of the baseline's history (its newest, and the base run itself) whose fastest is the
/// base's floor: interference only adds time, so a base run at its floor hid nothing, and one
/// above it hid at most the difference. Few enough that a code change older than them does
/// not count; enough that all of them interfered is rare (busy recording: about 1 run in 5 of
/// a benchmark jumps, all five about 1 in 3,000).
pub const RECENT_FLOOR_RUNS: usize = 5;

/// One benchmark's rounds: its changes and their within-run variances.
pub struct Rounds<'a> {
    /// `d_k` per round.
    pub d: &'a [f64],
    /// The mean within-run variance of `d_k` (Criterion's intervals): a floor, never the noise.
    pub within: f64,
    /// The floor a stored baseline's one-sided `pass` takes from within the runs: `within` for
    /// the median; none for a low quantile. A low quantile's interval is the gap between the
    /// fastest samples, which interference opens (one clean sample of twenty keeps the minimum;
    /// 5–18% as a standard deviation on the first busy recording) while it can only slow the run: the
    /// head's slowing only raises `d`, the base's is bounded apart ([`one_sided_pass`]), and the
    /// history's spread is the quantile's own movement from run to run.
    pub pass_within: f64,
    /// `ln` of the base run's time, for one round of a benchmark judged on time (interference
    /// only adds time); `None` otherwise.
    pub base_time: Option<f64>,
    /// A stored baseline's head runs pooled into the one round (their median): 1 without
    /// re-runs.
    pub head_runs: usize,
    /// A stored baseline's runs its level is the median of (see [`pooled_base`]): 1 for the
    /// base run alone.
    pub base_runs: usize,
    /// A stored baseline's best head run of [`GUARDED_RUNS`] or more, for a benchmark judged on
    /// time ([`fastest_head_claim`]).
    pub best: Option<BestHead>,
}

/// The variance of the median of `runs` independent normal runs, as a share of one run's:
/// exact for up to five (1, 1/2, 0.4487, 0.3573, 0.2868), π/2n beyond.
pub fn median_variance_share(runs: usize) -> f64 {
    match runs {
        0 | 1 => 1.0,
        2 => 0.5,
        3 => 0.448_7,
        4 => 0.357_3,
        5 => 0.286_8,
        n => std::f64::consts::PI / (2.0 * n as f64),
    }
}

/// The median of `base_runs` base runs against the median of `head_runs` head runs, as a
/// share of the variance of one run against one (`2σ²`): a re-run shrinks the head's part, the
/// base's newest runs at its level (see [`pooled_base`]) the base's.
pub fn pair_variance_share(base_runs: usize, head_runs: usize) -> f64 {
    (median_variance_share(base_runs) + median_variance_share(head_runs)) / 2.0
}

/// The most runs a stored baseline's level is the median of: the base run and its newest
/// runs before it. Nine, not five: the median of nine carries 0.175 of one run's variance
/// against five's 0.287, which took latency slowdowns of 1.5 times the limit `regressed` with
/// re-runs on the idle recordings from 88.9–89.3% to 90.3–90.5%, with no identical
/// comparison more `regressed` and a base commit's own step of just under half the limit
/// blamed on the pull request no more often (docs/accuracy.md, "A base of nine runs").
pub const POOLED_BASE_RUNS: usize = 9;

/// How far, in standard deviations of their difference, the base run may sit from the median
/// of the runs before it and still be taken for the same level.
pub const SAME_LEVEL_CUT: f64 = 2.5;

/// The most the base run may sit from the median of the runs before it, as a share of the
/// benchmark's limit, however noisy its history: a step the base commit made that goes
/// unseen shifts the level by less than half the limit, so an unchanged head still needs its
/// own noise to add the other half, significantly, before it reads `regressed`. A quarter
/// cost a fifth of the re-runs' gain on noisy benchmarks (docs/accuracy.md).
pub const SAME_LEVEL_SHARE_OF_LIMIT: f64 = 0.5;

/// Runs a side needs before its median is guarded against one run's jump: with three, one
/// jumped run is outvoted, so jumps take two of them (docs/algorithms.md).
pub const GUARDED_RUNS: usize = 3;

/// The per-round variance of `d` for a stored baseline with history: the median of
/// `base_runs` base runs (see [`pooled_base`]) against the median of `head_runs` head runs, from
/// the history's per-run spread. `None` below [`MIN_SHORT_HISTORY`] runs; below [`MIN_HISTORY`]
/// the spread is the tail-aware one, pooled with the assumed level ([`short_history_sigma`]).
///
/// - Both sides medians of at least [`GUARDED_RUNS`]: one run's jump (a neighbour, a hash seed,
///   a whole run disturbed) moves neither, so the noise is the history's robust spread, each
///   side's share that of its median.
/// - Else the tail-aware spread ([`tail_aware_sigma`]), whose band covers the largest jump the
///   history shows, and the base counts as one run whatever it is the median of: one head run
///   can jump as far as the history did, and a median base does not make that less likely
///   (measured: a base of five runs with its own share took identical code `regressed` on the
///   first idle day from 1.0% to 2.1%, docs/accuracy.md).
pub fn history_variance(history: &[f64], base_runs: usize, head_runs: usize) -> Option<f64> {
    if history.len() < MIN_SHORT_HISTORY {
        return None;
    }
    let (sigma, base_runs) = if is_short_history(history.len()) {
        (
            short_history_sigma(tail_aware_sigma(history), history.len()),
            1,
        )
    } else if base_runs >= GUARDED_RUNS && head_runs >= GUARDED_RUNS {
        (successive_difference_sigma(history), base_runs)
    } else {
        (tail_aware_sigma(history), 1)
    };
    sigma
        .is_finite()
        .then(|| 2.0 * sigma * sigma * pair_variance_share(base_runs, head_runs))
}

/// A stored baseline's level (see [`pooled_base`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseLevel {
    /// `ln` of the level.
    pub ln: f64,
    /// The runs it is the median of: 1 for the base run alone.
    pub runs: usize,
    /// How far the level sits above a base run that sat faster than its newest runs, beyond
    /// the same-level cut (0 otherwise): an improvement is claimed against the base run.
    pub above_base: f64,
}

/// A stored baseline's level: the median of the base run and its newest runs before it
/// (up to [`POOLED_BASE_RUNS`] in all), when the base run sits at their level, or, for times
/// (`times`: interference only adds to them), in a faster mode they have shown; else the base
/// run alone. `history` ends at the base run (`ln_base`); one that does not, or is shorter than
/// [`MIN_HISTORY`], leaves the base alone. `log_limit` is the benchmark's limit as a log ratio.
///
/// One base run carries as much noise as one head run, and re-running the head cannot touch
/// it. The base commit's newest runs before it measured code that, as long as the base run
/// sits at their level, performs as the base does: their median is the base's level with a
/// fraction of one run's noise (the field's usual baseline: Bencher and Conbench judge a head
/// against the distribution of the branch's recent runs). A base commit that itself moved its
/// benchmark slower (a step between the runs before it and the base run, more than
/// [`SAME_LEVEL_CUT`] standard deviations or [`SAME_LEVEL_SHARE_OF_LIMIT`] of the limit) is
/// judged on its own run, so that a pull request is never blamed for its base.
///
/// A time whose base run sits faster than its level, at a level one of the runs before it
/// reached (within one standard deviation), keeps the level: the run is the benchmark's own
/// faster mode (`naïve λ lookup` on the second idle day moves between two levels 12% apart),
/// and a `regressed` judged against the level, the slower of the two, can only understate the
/// head's change. `pass` still reads the base run: its excess over its recent floor
/// ([`one_sided_pass`]) counts from the level down to the fastest of the base run and its
/// newest runs; `improved` is claimed against the base run (`above_base`). A faster level none
/// of them reached is the base commit's own improvement, and its run is judged alone. Alone,
/// such base runs took latency slowdowns of 1.5 times the limit `regressed` with re-runs on
/// the second idle day in 88.9–89.3% of comparisons; at the level, 91.1–91.5%
/// (docs/accuracy.md, "A base run in its faster mode").
pub fn pooled_base(history: &[f64], ln_base: f64, log_limit: f64, times: bool) -> BaseLevel {
    let alone = BaseLevel {
        ln: ln_base,
        runs: 1,
        above_base: 0.0,
    };
    let Some(&last) = history.last() else {
        return alone;
    };
    if history.len() < MIN_HISTORY || (last - ln_base).abs() > 1e-9 {
        return alone;
    }
    let sigma = successive_difference_sigma(history);
    let window = &history[history.len() - POOLED_BASE_RUNS.min(history.len())..];
    let before = &window[..window.len() - 1];
    if !sigma.is_finite() || before.is_empty() {
        return alone;
    }
    let cut = (SAME_LEVEL_CUT * sigma * (1.0 + median_variance_share(before.len())).sqrt())
        .min(SAME_LEVEL_SHARE_OF_LIMIT * log_limit);
    let from_level = ln_base - median(&mut before.to_vec());
    let faster = from_level < -cut;
    // A faster level one of the runs before it reached (within one standard deviation) is
    // the benchmark's own faster mode; a level none reached is the base commit's step.
    let seen = || before.iter().any(|&v| v - ln_base <= sigma);
    if from_level > cut || (faster && !(times && seen())) {
        return alone;
    }
    let ln = median(&mut window.to_vec());
    BaseLevel {
        ln,
        runs: window.len(),
        above_base: if faster { ln - ln_base } else { 0.0 },
    }
}

/// Each benchmark's per-round variance of `d` and its degrees of freedom, for [`fit_prior`].
pub fn observed_variance(rounds: &Rounds<'_>) -> Option<(f64, f64)> {
    (rounds.d.len() >= 2).then(|| {
        (
            variance(rounds.d).max(rounds.within),
            (rounds.d.len() - 1) as f64,
        )
    })
}

/// The floor for a single-round comparison with calibrated history, from how the
/// comparison's other benchmarks moved: the state of the machine, not of the change under
/// review. The others' signed moves (`d`, leaving out the benchmark itself) give a common shift
/// (their median: a whole run slowed) and a spread (`1.4826 · MAD`: how far benchmarks moved
/// apart); the floor is their root sum of squares. Both have a breakdown point of one half, so
/// a pull request that really moves a third of the suite leaves the floor where the machine put
/// it, and the benchmarks beside the change are judged on their own history. The 90th
/// percentile of the others' |d|, used before, made the second real change the floor for every
/// other benchmark (docs/accuracy.md, "Real changes beside"). A neighbour that slows one
/// benchmark alone is the history's to bound (its tail-aware spread). `None` below
/// [`MIN_BENCHMARKS_TO_POOL`] others.
pub fn others_spread(sorted_signed: &[f64], own: f64) -> Option<f64> {
    OthersSpread::new(sorted_signed).of(own)
}

/// [`others_spread`] for every benchmark of one comparison at once. Leaving one move out puts
/// the others' median at one of at most three places (a half-rank below or above the whole
/// set's, or between), so the deviations about each are sorted once and each benchmark's own
/// is left out of them by bisection: O(n log n) for a comparison of n benchmarks, not O(n²).
#[derive(Debug, Clone)]
pub struct OthersSpread {
    sorted: Vec<f64>,
    /// Each place the others' median takes.
    places: Vec<Place>,
}

/// One place the others' median takes, with what each reading of the spread needs there.
#[derive(Debug, Clone)]
struct Place {
    centre: f64,
    /// Every move's |deviation| from the centre, sorted.
    deviations: Vec<f64>,
    /// How far each move under the centre clipped at 0 sits under it, sorted.
    under: Vec<f64>,
}

impl Place {
    /// The place `centre` among the moves `sorted_signed` (ascending).
    fn at(sorted_signed: &[f64], centre: f64) -> Self {
        let mut deviations: Vec<f64> = sorted_signed.iter().map(|d| (d - centre).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        // `sorted_signed` is ascending, so the gaps under the centre (at most 0) come out
        // descending.
        let level = centre.min(0.0);
        let mut under: Vec<f64> = sorted_signed
            .iter()
            .take_while(|d| **d < level)
            .map(|d| level - d)
            .collect();
        under.reverse();
        Place {
            centre,
            deviations,
            under,
        }
    }
}

impl OthersSpread {
    /// The spreads of the comparison whose signed moves, sorted, are `sorted_signed`.
    pub fn new(sorted_signed: &[f64]) -> Self {
        let mut places: Vec<Place> = Vec::new();
        if sorted_signed.len() > MIN_BENCHMARKS_TO_POOL {
            for &own in sorted_signed {
                let centre = leave_one_out_quantile(sorted_signed, own, 0.5);
                if places
                    .iter()
                    .any(|p| p.centre.to_bits() == centre.to_bits())
                {
                    continue;
                }
                places.push(Place::at(sorted_signed, centre));
            }
        }
        Self {
            sorted: sorted_signed.to_vec(),
            places,
        }
    }

    /// The place the others' median takes with `own` left out, and that median.
    fn place_of(&self, own: f64) -> Option<(&Place, f64)> {
        if self.sorted.len() <= MIN_BENCHMARKS_TO_POOL {
            return None;
        }
        let centre = leave_one_out_quantile(&self.sorted, own, 0.5);
        let place = self
            .places
            .iter()
            .find(|p| p.centre.to_bits() == centre.to_bits())?;
        Some((place, centre))
    }

    /// How much faster than its code this run could make the benchmark that moved by `own`
    /// read, by the others' moves alone: their median where it is negative (a faster host, or
    /// a base run slowed as a whole), and `1.4826 ·` the median gap of the others that sit
    /// below it, or below 0 when the median is above (a host faster for some benchmarks than
    /// for others; on clean noise about 0, the others' standard deviation). Moves above that
    /// level are left out: interference only adds time, and a head that reads slower cannot
    /// pass on it, so a busy run's slowed benchmarks say nothing against a `pass`
    /// (docs/accuracy.md, "The others' slower moves are no floor for a pass"). Its breakdown
    /// point is a quarter of the others reading faster, where [`Self::of`]'s is a half. `None`
    /// below [`MIN_BENCHMARKS_TO_POOL`] others.
    pub fn faster_of(&self, own: f64) -> Option<f64> {
        self.faster_of_within(own, f64::INFINITY)
    }

    /// [`Self::faster_of`] with its spread (the gap under the level, not the level itself) no
    /// wider than `widest`.
    pub fn faster_of_within(&self, own: f64, widest: f64) -> Option<f64> {
        let (Place { under, .. }, centre) = self.place_of(own)?;
        let level = centre.min(0.0);
        let gap = match (own < level, under.len()) {
            (true, 0 | 1) | (false, 0) => 0.0,
            (true, _) => leave_one_out_quantile(under, level - own, 0.5),
            (false, _) => quantile_of_sorted(under, 0.5),
        };
        Some(level.hypot((1.4826 * gap).min(widest)))
    }

    /// [`others_spread`] of the benchmark that moved by `own` (one of the moves).
    pub fn of(&self, own: f64) -> Option<f64> {
        self.of_within(own, f64::INFINITY)
    }

    /// [`Self::of`] with its spread about the others' median (not the median itself) no wider
    /// than `widest`.
    pub fn of_within(&self, own: f64, widest: f64) -> Option<f64> {
        let (Place { deviations, .. }, centre) = self.place_of(own)?;
        let spread = 1.4826 * leave_one_out_quantile(deviations, (own - centre).abs(), 0.5);
        Some(centre.hypot(spread.min(widest)))
    }
}

/// The widest this machine's stored history shows its benchmarks moving apart between two
/// successive runs: for each pair of runs, both spreads a stored baseline's `pass` floor reads
/// from the others' moves (`1.4826 ·` their median deviation about their median, as
/// [`OthersSpread::of`], and the median gap of those under it or under 0, as
/// [`OthersSpread::faster_of`]), the largest over every pair. A run's others can move further
/// apart than that only by something this machine never did to a whole run, and a pull request
/// that really changes half the suite does exactly that: on unicode-segmentation, four
/// benchmarks 38–68% slower by the code and five 5–19% faster in the changed executable put
/// the others' spread at 11–12% where this record read 4.9%, and 9 of the 12 benchmarks beside
/// them stayed `inconclusive` after three head runs (docs/accuracy.md, "Half the suite moved
/// by the change"). The others' median (a whole run slowed, or a faster host) is not capped.
/// Runs are matched from the newest, as [`history_floor`]. `None` without three pairs of runs
/// with more than [`MIN_BENCHMARKS_TO_POOL`] benchmarks each, or below [`MIN_SHORT_HISTORY`]
/// runs.
pub fn history_spread_record(histories: &[&[f64]]) -> Option<f64> {
    let longest = histories.iter().map(|h| h.len()).max().unwrap_or(0);
    if longest < MIN_SHORT_HISTORY {
        return None;
    }
    let spreads: Vec<f64> = (1..longest)
        .filter_map(|back| successive_moves(histories, back).map(|mut m| pair_spread(&mut m)))
        .collect();
    (spreads.len() >= 3).then(|| spreads.into_iter().fold(0.0, f64::max))
}

/// The larger of the two spreads [`history_spread_record`] reads of one pair of runs' moves.
fn pair_spread(moves: &mut [f64]) -> f64 {
    moves.sort_by(f64::total_cmp);
    let Place {
        deviations, under, ..
    } = Place::at(moves, quantile_of_sorted(moves, 0.5));
    let faster = if under.is_empty() {
        0.0
    } else {
        quantile_of_sorted(&under, 0.5)
    };
    1.4826 * quantile_of_sorted(&deviations, 0.5).max(faster)
}

/// Each benchmark's move between the history's run `back` from the newest and the one before
/// it (runs matched from the newest: each benchmark's history ends at the base run), where
/// more than [`MIN_BENCHMARKS_TO_POOL`] benchmarks have both.
fn successive_moves(histories: &[&[f64]], back: usize) -> Option<Vec<f64>> {
    let moves: Vec<f64> = histories
        .iter()
        .filter(|h| h.len() > back)
        .map(|h| h[h.len() - back] - h[h.len() - back - 1])
        .filter(|m| m.is_finite())
        .collect();
    (moves.len() > MIN_BENCHMARKS_TO_POOL).then_some(moves)
}

/// The floor for a single-round comparison from how far this machine moved whole runs in its
/// stored history: for each pair of successive runs, the 90th percentile of the benchmarks'
/// |moves| between them (the measure a single run's own others' moves gave before, read where
/// the change under review cannot reach it), the median over the pairs, as a half-normal scale
/// (`/ 1.645`). A busy machine's neighbour slows a few benchmarks of each run by 30–60%, a
/// different few each time (busy recording: 3 to 6 of 18, 0.30 at the median pair; idle: 0.03):
/// one benchmark's own runs may not show it, the suite's do. Runs are matched from the newest
/// (each benchmark's history ends at the base run). `None` without three pairs of runs with
/// more than [`MIN_BENCHMARKS_TO_POOL`] benchmarks each, or below [`MIN_SHORT_HISTORY`] runs.
pub fn history_floor(histories: &[&[f64]]) -> Option<f64> {
    let longest = histories.iter().map(|h| h.len()).max().unwrap_or(0);
    if longest < MIN_SHORT_HISTORY {
        return None;
    }
    let mut pairs: Vec<f64> = (1..longest)
        .filter_map(|back| {
            let mut moves: Vec<f64> = successive_moves(histories, back)?
                .into_iter()
                .map(f64::abs)
                .collect();
            moves.sort_by(f64::total_cmp);
            Some(quantile_of_sorted(&moves, 0.9))
        })
        .collect();
    (pairs.len() >= 3).then(|| median(&mut pairs) / 1.644_853_6)
}

/// The `q` quantile (linear interpolation) of `sorted`, not empty.
fn quantile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let rank = q * (sorted.len() - 1) as f64;
    let below = rank.floor() as usize;
    sorted[below]
        + (rank - rank.floor()) * (sorted[(below + 1).min(sorted.len() - 1)] - sorted[below])
}

/// The floor for an uncalibrated comparison (no rounds, no history), where the others' moves
/// are all there is to go on and a busy machine's interference must not read as a regression:
/// a half-normal scale from the 90th percentile of the others' |d| (`/ 1.645`), the benchmark
/// itself left out (docs/accuracy.md). Real changes elsewhere raise it: without history, a
/// benchmark's band cannot tell them from interference.
pub fn plain_others_spread(sorted_moves: &[f64], own: f64) -> Option<f64> {
    (sorted_moves.len() > MIN_BENCHMARKS_TO_POOL)
        .then(|| leave_one_out_quantile(sorted_moves, own, 0.9) / 1.644_853_6)
}

/// How far a round's change may sit from its benchmark's median before the round counts as
/// interfered, in robust standard deviations (Hampel's identifier, with its usual cut).
pub const INTERFERED_CUT: f64 = 3.5;

/// The fewest rounds a benchmark keeps after setting interfered ones aside.
pub const MIN_KEPT: usize = 3;

/// The robust per-round spread of `d`: `1.4826 · MAD`, the normal's standard deviation when
/// nothing interfered, and barely moved by a minority of rounds that something did.
pub fn robust_spread(d: &[f64]) -> f64 {
    let centre = median(&mut d.to_vec());
    1.4826 * median(&mut d.iter().map(|x| (x - centre).abs()).collect::<Vec<_>>())
}

/// The spread the comparison's benchmarks share when nothing interferes: the median of their
/// [`robust_spread`]s (benchmarks with at least three rounds; `None` below
/// [`MIN_BENCHMARKS_TO_POOL`] of them). A quiet benchmark's three rounds can agree by chance
/// to a spread of nearly zero; this keeps a clean round from being set aside for it.
pub fn shared_spread(rounds: &[&[f64]]) -> Option<f64> {
    let mut spreads: Vec<f64> = rounds
        .iter()
        .filter(|d| d.len() >= 3)
        .map(|d| robust_spread(d))
        .collect();
    (spreads.len() >= MIN_BENCHMARKS_TO_POOL).then(|| median(&mut spreads))
}

/// The rounds of a benchmark that interference left alone, as a mask over `d`; `None` when
/// none is set aside.
///
/// On a shared machine a neighbour slows whichever run it overlaps, by 15–90% on
/// tests/fixtures/recordings/busy, while the rest of the runs sit within a few per cent: one
/// interfered base or head run throws its round's change far from the others, both ways. A
/// round is set aside when its change is more than [`INTERFERED_CUT`] robust spreads from the
/// benchmark's median change, the spread being at least `shared` (the comparison's). Only
/// while at least [`MIN_KEPT`] rounds remain and they are a strict majority: two rounds kept
/// would have one degree of freedom of their own, and the shared level would speak for a
/// benchmark it may not describe (with 3 fixed rounds on the idle recording, setting one of
/// three aside let 13% of slowdowns at the latency limit through); a benchmark whose rounds
/// split into two camps is left whole, and its spread speaks for itself. The cut is symmetric
/// about the median, which follows the true change, so a real slowdown is neither hidden nor
/// invented by it.
pub fn undisturbed(d: &[f64], shared: f64) -> Option<Vec<bool>> {
    if d.len() < MIN_KEPT + 1 {
        return None;
    }
    let centre = median(&mut d.to_vec());
    let spread = robust_spread(d).max(shared);
    if spread <= 0.0 || !spread.is_finite() {
        return None;
    }
    let kept: Vec<bool> = d
        .iter()
        .map(|x| (x - centre).abs() <= INTERFERED_CUT * spread)
        .collect();
    let count = kept.iter().filter(|k| **k).count();
    (count < d.len() && 2 * count > d.len() && count >= MIN_KEPT).then_some(kept)
}

/// A single-round benchmark's floors from the others' moves ([`others_spread`] and
/// [`plain_others_spread`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Floors {
    /// With calibrated history: the machine's state, which real changes to fewer than half the
    /// others cannot raise.
    pub robust: Option<f64>,
    /// For a stored baseline's `pass`: the others' moves in this run only, the smaller of
    /// [`OthersSpread::of`] and [`OthersSpread::faster_of`], without the machine's record of
    /// interference, which only ever adds time and so cannot make a slowdown read as a pass
    /// (see [`one_sided_pass`]).
    pub shared: Option<f64>,
    /// Uncalibrated: every other move counts.
    pub plain: Option<f64>,
    /// Whether `shared` was cut to the machine's record ([`history_spread_record`]): the
    /// others moved further apart than the machine ever moved them, by their code.
    pub shared_at_record: bool,
}

/// Assesses one benchmark.
pub fn assess(
    rounds: &Rounds<'_>,
    prior: Option<Prior>,
    floors: Floors,
    history: Option<&[f64]>,
) -> Assessed {
    let n = rounds.d.len() as f64;
    let d = mean(rounds.d);
    // Whether a single round's noise is the machine's interference (the floor) rather than the
    // benchmark's own: its tails are then interference's, heavy (see `UNCALIBRATED_DF`).
    let mut interference_tails = false;
    let (round_variance, df, source) = match observed_variance(rounds) {
        Some((observed, observed_df)) => match prior {
            // Rounds that disagree far beyond what the others' noise allows keep their own
            // variance: the shared level must not talk a benchmark out of its own evidence.
            Some(prior)
                if f_upper_tail(observed / prior.variance, observed_df, prior.df)
                    < OWN_NOISE_LEVEL =>
            {
                (observed, observed_df, NoiseSource::Rounds)
            }
            Some(prior) => (
                (prior.df * prior.variance + observed_df * observed) / (prior.df + observed_df),
                prior.df + observed_df,
                NoiseSource::Rounds,
            ),
            None => (observed, observed_df, NoiseSource::Rounds),
        },
        None => {
            let from_history =
                history.and_then(|h| history_variance(h, rounds.base_runs, rounds.head_runs));
            let (variance, df, source) = match from_history {
                Some(variance) => (
                    variance,
                    history_df(history.map_or(0, <[f64]>::len)),
                    NoiseSource::History,
                ),
                _ => (
                    2.0 * UNCALIBRATED_RUN_NOISE * UNCALIBRATED_RUN_NOISE,
                    f64::INFINITY,
                    NoiseSource::Assumed,
                ),
            };
            // A single round cannot see this comparison's own noise; the others' moves can.
            let spread = if source == NoiseSource::History {
                floors.robust
            } else {
                floors.plain
            }
            .unwrap_or(0.0);
            interference_tails = spread * spread > variance;
            (variance.max(spread * spread), df, source)
        }
    };
    let round_variance = round_variance.max(rounds.within);
    let se = (round_variance / n).sqrt().max(1e-12);
    let (pass_se, pass_excess, pass_on_floor) = match (source, history, rounds.base_time) {
        (NoiseSource::History, Some(history), Some(base)) if rounds.d.len() == 1 => {
            let (reference, in_a_known_mode) = pass_reference(history, base, base + rounds.d[0]);
            one_sided_pass(
                history,
                base,
                reference,
                pass_floor(in_a_known_mode, floors),
                rounds.pass_within,
                rounds.base_runs,
                rounds.head_runs,
            )
            .map(|(se, excess, on_floor)| (se, excess, on_floor && floors.shared_at_record))
            .unwrap_or((se, 0.0, false))
        }
        _ => (se, 0.0, false),
    };
    // A short history has not shown its benchmark's tails: a `regressed` is claimed against
    // tails as heavy as an uncalibrated one's.
    let short =
        source == NoiseSource::History && history.is_some_and(|h| is_short_history(h.len()));
    let claim_df = if source == NoiseSource::Assumed || interference_tails || short {
        df.min(UNCALIBRATED_DF)
    } else {
        df
    };
    let fastest = match (source, history, rounds.best) {
        (NoiseSource::History, Some(history), Some(best)) if rounds.d.len() == 1 => {
            fastest_head_claim(
                history,
                best,
                rounds.base_runs,
                rounds.head_runs,
                rounds.pass_within,
            )
        }
        _ => None,
    };
    Assessed {
        d,
        se,
        df,
        claim_df,
        p_slower: 1.0 - t_cdf(d / se, claim_df),
        source,
        round_variance,
        pass_se,
        pass_excess,
        pass_on_floor,
        fastest,
    }
}

/// What a stored baseline's `pass` rests on, one run a side: `(standard error, excess)`.
///
/// `d = Δ + (ε_head − ε_base) + (J_head − J_base)`, with ε the runs' clean noise and J ≥ 0 what
/// interference added. A `pass` must bound Δ from above: `J_head` only raises `d`, so only the
/// base's interference can hide a slowdown, and it is at most how far the base sits above
/// `reference`, a run of its history that was clean ([`pass_reference`]). What is left is the
/// clean noise, the history's robust spread (`1.4826 · MAD` of its successive differences), not
/// the tail-aware one, whose jumps are what the excess bounds. The others' moves and the
/// within-run interval stay floors. The third value says whether the others' floor is at least
/// the clean noise of one head run (see [`Assessed::pass_on_floor`]). `None` when the history
/// has no robust spread.
fn one_sided_pass(
    history: &[f64],
    base: f64,
    reference: f64,
    floor: f64,
    within: f64,
    base_runs: usize,
    head_runs: usize,
) -> Option<(f64, f64, bool)> {
    let sigma = clean_sigma(history);
    if !sigma.is_finite() {
        return None;
    }
    let clean = |runs: usize| 2.0 * sigma * sigma * pair_variance_share(base_runs, runs);
    let variance = clean(head_runs).max(floor * floor).max(within);
    Some((
        variance.sqrt().max(1e-12),
        base - reference,
        floor > 0.0 && floor * floor >= clean(1),
    ))
}

/// How far, in standard deviations, a run may sit above the second fastest of its neighbours
/// and still count among a history's clean runs ([`clean_sigma`]). Three: a clean run sits that
/// far above the second fastest of seven well under once in a hundred, and on the first busy recording the runs a
/// neighbour slowed sit 10–90% above, tens of standard deviations. 2.5 and 4 decided as many
/// comparisons within a point or two, either way by setting (docs/accuracy.md, "A history's
/// clean runs").
pub const CLEAN_RUN_CUT: f64 = 3.0;

/// The neighbours either side of a run whose second fastest (with the run) is its floor for
/// [`CLEAN_RUN_CUT`]: a floor from seven runs (the second fastest, so that one run in a faster
/// mode of its own is no floor its neighbours sit above), local enough that a step the code took (a level the history then
/// keeps) leaves its runs clean.
pub const CLEAN_RUN_NEIGHBOURS: usize = 3;

/// The least a run must sit above its neighbours' floor to be set aside, whatever the spread
/// ([`clean_sigma`]): 5%, so that a series whose values repeat (whole nanoseconds, a few
/// levels) cannot read its spread down to nothing by setting aside all but its fastest level.
pub const CLEAN_RUN_SMALLEST_JUMP: f64 = 0.05;

/// A history's clean noise per run, as a stored baseline's `pass` reads it: the robust spread
/// of the successive differences of its clean runs ([`clean_runs_sigma`]: those a neighbour did
/// not slow), pooled with the assumed noise while the history is short. The `pass` bounds the
/// base's interference apart and the head's only raises `d`, so what is left to bound is how
/// the clean runs scatter. A benchmark that alternates between its clean level and one a
/// neighbour slowed has successive differences as large as the gap, and read through them its
/// `pass` could not be decided at all on the first busy recording.
fn clean_sigma(history: &[f64]) -> f64 {
    short_history_sigma(
        clean_runs_sigma(
            history,
            CLEAN_RUN_CUT,
            CLEAN_RUN_SMALLEST_JUMP,
            CLEAN_RUN_NEIGHBOURS,
        ),
        history.len(),
    )
}

/// How far, in the history's clean standard deviations, a base may sit above its recent floor
/// by noise alone when the others' moves are read for a `pass`'s floor; the rest is taken for
/// the base run's interference (see [`move_from_clean_base`]).
pub const CLEAN_EXCESS_SIGMAS: f64 = 2.0;

/// The move `d` of a benchmark whose base is `base`, with what the base sits above its recent
/// floor beyond [`CLEAN_EXCESS_SIGMAS`] standard deviations taken back out: a base run slowed
/// by interference makes its benchmark read faster by as much, and that says nothing of how
/// much faster the head's host runs the others. The standard deviation is the history's whole
/// robust spread, not its clean runs' ([`clean_sigma`]): a larger one takes less of a base's
/// height for interference, so the others' faster moves stay a floor where a faster host
/// could be. Read through the clean runs, two more slowdowns at the limit of 45 passed on the
/// noisy changes recording (docs/accuracy.md, "A history's clean runs"). `d` itself where the
/// history has no spread.
pub fn move_from_clean_base(history: &[f64], base: f64, d: f64) -> f64 {
    let sigma = short_history_sigma(successive_difference_sigma(history), history.len());
    if !sigma.is_finite() {
        return d;
    }
    let excess = base - recent_floor(history, base);
    d + (excess - CLEAN_EXCESS_SIGMAS * sigma).max(0.0)
}

/// The base's floor: the fastest of the base run and its [`RECENT_FLOOR_RUNS`] newest runs.
fn recent_floor(history: &[f64], base: f64) -> f64 {
    history[history.len().saturating_sub(RECENT_FLOOR_RUNS)..]
        .iter()
        .copied()
        .fold(base, f64::min)
}

/// The run a stored baseline's `pass` reads the base's interference against (`ln` time), and
/// whether the head ran in a mode its history showed. The base's floor ([`recent_floor`])
/// while the head reads at or above it. A head faster than all of those runs says that they
/// may all have been slowed (a neighbour that stayed longer than five runs): then the fastest
/// run of the whole history. A head faster than that too may run in a mode the history never
/// showed (the loopback handshake on the noisy recording read 25% faster than any of its
/// runs): `false` (docs/accuracy.md, "A pass judged on its own history" and "A head faster
/// than its recent runs").
fn pass_reference(history: &[f64], base: f64, head: f64) -> (f64, bool) {
    let recent = recent_floor(history, base);
    if head >= recent {
        return (recent, true);
    }
    let fastest = history.iter().copied().fold(base, f64::min);
    (fastest, head >= fastest)
}

/// The floor of a stored baseline's `pass` (`ln` times). The head's interference only raises
/// its time and the base's is bounded by its height above a clean run ([`pass_reference`]), so
/// the machine's record of interference ([`history_floor`]) is not part of it: the run's
/// others' moves are ([`Floors::shared`]). For a head in a mode its history never showed, the
/// machine's record is the floor again. With a margin of two clean standard deviations there,
/// 3 of 45 of the noisy recording's slowdowns of 1.5 times the limit passed; without one,
/// none (docs/accuracy.md, "A pass judged on its own history").
fn pass_floor(in_a_known_mode: bool, floors: Floors) -> f64 {
    let floor = if in_a_known_mode {
        floors.shared
    } else {
        floors.robust
    };
    floor.unwrap_or(0.0)
}

/// The `q` quantile (linear interpolation) of `sorted` with one occurrence of `left_out`
/// removed, in O(log n).
pub fn leave_one_out_quantile(sorted: &[f64], left_out: f64, q: f64) -> f64 {
    let position = sorted.partition_point(|v| *v < left_out);
    let at = |i: usize| {
        if i < position {
            sorted[i]
        } else {
            sorted[i + 1]
        }
    };
    let last = sorted.len() - 2;
    let rank = q * last as f64;
    let below = rank.floor() as usize;
    at(below) + (rank - rank.floor()) * (at((below + 1).min(last)) - at(below))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn alike_variances_pool_fully_and_unlike_ones_barely() {
        // Twenty benchmarks whose 2-df variances scatter as χ² sampling alone would: all alike.
        let chi2_2 = [
            0.1, 0.3, 0.5, 0.8, 1.0, 1.2, 1.5, 1.9, 2.3, 2.8, 0.2, 0.4, 0.7, 1.1, 1.4, 1.7, 2.1,
            2.6, 3.4, 4.6,
        ];
        let alike: Vec<(f64, f64)> = chi2_2.iter().map(|x| (0.01 * x / 2.0, 2.0)).collect();
        let prior = fit_prior(&alike).unwrap();
        assert!(prior.df > 20.0, "{prior:?}");
        assert!((prior.variance / 0.01 - 1.0).abs() < 0.35, "{prior:?}");

        // Half of them 100 times noisier: a quiet one must not be pooled into the noisy ones.
        let unlike: Vec<(f64, f64)> = alike
            .iter()
            .enumerate()
            .map(|(i, (s2, df))| (if i % 2 == 0 { s2 * 100.0 } else { *s2 }, *df))
            .collect();
        let prior = fit_prior(&unlike).unwrap();
        assert!(prior.df <= MIN_PRIOR_DF + 1e-9, "{prior:?}");
    }

    #[test]
    fn a_round_far_from_the_others_is_set_aside_while_a_majority_stays() {
        // One interfered round among calm ones.
        assert_eq!(
            undisturbed(&[0.01, -0.005, 0.6, 0.0], 0.01),
            Some(vec![true, true, false, true])
        );
        // Both ways: a slowed base reads as a head far faster.
        assert_eq!(
            undisturbed(&[0.01, -0.45, 0.0, 0.02, 0.6], 0.01),
            Some(vec![true, false, true, true, false])
        );
        // Two camps: no majority to trust, every round stays.
        assert_eq!(undisturbed(&[0.0, 0.0, 0.5, 0.5], 0.01), None);
        // Three rounds with one off would keep two: too few, every round stays.
        assert_eq!(undisturbed(&[0.0, 0.01, 0.5], 0.01), None);
        // Two rounds cannot say which one moved.
        assert_eq!(undisturbed(&[0.0, 0.5], 0.01), None);
        // Calm rounds: none set aside.
        assert_eq!(undisturbed(&[0.0, 0.01, -0.01, 0.005], 0.01), None);
        // The comparison's shared spread keeps a 3% round among three that agree to 0.1%.
        assert_eq!(undisturbed(&[0.0, 0.001, 0.0005, 0.03], 0.01), None);
        assert_eq!(
            undisturbed(&[0.0, 0.001, 0.0005, 0.03], 0.001),
            Some(vec![true, true, true, false])
        );
    }

    #[test]
    fn the_shared_spread_is_the_median_benchmarks_and_needs_enough_of_them() {
        let calm: Vec<Vec<f64>> = (0..6)
            .map(|i| vec![0.0, 0.01 * (i + 1) as f64, -0.01 * (i + 1) as f64])
            .collect();
        let views: Vec<&[f64]> = calm.iter().map(Vec::as_slice).collect();
        // Each robust spread is 1.4826 · (i + 1)%; the median of six is 1.4826 · 3.5%.
        let shared = shared_spread(&views).unwrap();
        assert!((shared - 1.4826 * 0.035).abs() < 1e-12, "{shared}");
        assert!(shared_spread(&views[..4]).is_none());
        // Benchmarks with two rounds have no robust spread.
        let pairs = [[0.0, 0.1]; 8];
        let views: Vec<&[f64]> = pairs.iter().map(|p| p.as_slice()).collect();
        assert!(shared_spread(&views).is_none());
    }

    #[test]
    fn a_third_of_the_suite_really_changing_does_not_raise_the_others_floor() {
        // Eight benchmarks moved by the machine's noise alone (about ±1.2%)...
        let calm = [0.01, -0.012, 0.008, -0.02, 0.015, 0.011, -0.004, 0.0];
        let mut sorted = calm.to_vec();
        sorted.sort_by(f64::total_cmp);
        let quiet = others_spread(&sorted, 0.015).unwrap();
        assert!((0.008..0.02).contains(&quiet), "{quiet}");
        // ...and four more really 20–71% slower: the floor stays the machine's, far below the
        // smallest real change, for the calm benchmarks and the changed ones alike.
        let mut moves: Vec<f64> = calm
            .iter()
            .copied()
            .chain([0.536, 0.262, 0.182, 0.3])
            .collect();
        moves.sort_by(f64::total_cmp);
        for own in [0.015, 0.536] {
            let floor = others_spread(&moves, own).unwrap();
            assert!(floor < 3.0 * quiet && floor < 0.05, "{own}: {floor}");
        }
        // The 90th percentile of the others' moves, the floor before, was one of the changes.
        let plain = plain_others_spread(&moves, 0.015).unwrap();
        assert!(plain > 0.15, "{plain}");
        // A whole run slowed by 12%: every benchmark's floor says so.
        let mut slowed: Vec<f64> = calm.iter().map(|d| d + 0.12).collect();
        slowed.sort_by(f64::total_cmp);
        let floor = others_spread(&slowed, slowed[3]).unwrap();
        assert!((0.12..0.15).contains(&floor), "{floor}");
        // Too few others to tell.
        assert!(others_spread(&moves[..5], moves[0]).is_none());
    }

    #[test]
    fn a_head_under_its_recent_runs_is_read_against_the_fastest_of_its_history() {
        // Clean at 0, then the newest five runs and the base all slowed by 20% or more.
        let mut history = vec![0.0, 0.01, -0.01, 0.005, 0.0, 0.01];
        history.extend([0.2, 0.25, 0.3, 0.2, 0.22]);
        let base = 0.21;
        // At or above the newest runs: their fastest.
        assert_eq!(pass_reference(&history, base, 0.2), (0.2, true));
        // Under them, but among the older runs: the fastest of all.
        assert_eq!(pass_reference(&history, base, 0.0), (-0.01, true));
        // Faster than every run: a mode the history never showed, read against the fastest.
        assert_eq!(pass_reference(&history, base, -0.05), (-0.01, false));
    }

    #[test]
    fn a_base_run_above_its_floor_by_more_than_noise_gives_the_rest_back() {
        // Clean runs at 0, 1% and 2% (σ about 1%); the base run, last, sits 30% above its
        // floor of 0.
        let mut history: Vec<f64> = (0..20).map(|i| [0.0, 0.01, 0.0, 0.02][i % 4]).collect();
        history.push(0.3);
        let sigma = successive_difference_sigma(&history);
        assert!((0.01..0.02).contains(&sigma), "{sigma}");
        // A clean head at 0 read 30% faster; all but two clean standard deviations of that
        // was the base's interference.
        let back = move_from_clean_base(&history, 0.3, -0.3);
        assert!((back + 2.0 * sigma).abs() < 1e-12, "{back}");
        // A base within its noise of the floor keeps its move.
        history.pop();
        assert_eq!(move_from_clean_base(&history, 0.01, -0.05), -0.05);
        // No spread to read: the move as it is.
        assert_eq!(move_from_clean_base(&[0.0, 0.3], 0.3, -0.3), -0.3);
    }

    #[test]
    fn a_run_slowed_in_most_benchmarks_says_nothing_against_a_pass_and_a_faster_host_does() {
        let calm = [0.01, -0.012, 0.008, -0.02, 0.015, 0.011, -0.004, 0.0];
        let sorted_of = |moves: &[f64]| {
            let mut sorted = moves.to_vec();
            sorted.sort_by(f64::total_cmp);
            OthersSpread::new(&sorted)
        };
        // Clean noise: about the others' standard deviation, either way it is read.
        let quiet = sorted_of(&calm);
        let faster = quiet.faster_of(0.015).unwrap();
        assert!((0.005..0.03).contains(&faster), "{faster}");
        // Interference slowed eight more by 15–60% (more than half the run): the two-sided
        // spread is theirs; what could make a benchmark read faster than its code is not.
        let busy: Vec<f64> = calm
            .iter()
            .copied()
            .chain([0.15, 0.22, 0.3, 0.41, 0.6, 0.18, 0.35, 0.26])
            .collect();
        let spreads = sorted_of(&busy);
        assert!(spreads.of(0.008).unwrap() > 0.15);
        let faster = spreads.faster_of(0.008).unwrap();
        assert!(faster < 0.03, "{faster}");
        // A host 12% faster for everything: the pass's floor says so.
        let fast_host: Vec<f64> = calm.iter().map(|d| d - 0.12).collect();
        let floor = sorted_of(&fast_host).faster_of(fast_host[2]).unwrap();
        assert!((0.12..0.15).contains(&floor), "{floor}");
        // Faster for half of them by 20%: at least the gap's scale.
        let mixed: Vec<f64> = calm
            .iter()
            .enumerate()
            .map(|(i, d)| if i % 2 == 0 { d - 0.2 } else { *d })
            .chain([-0.19, 0.005])
            .collect();
        let floor = sorted_of(&mixed).faster_of(0.005).unwrap();
        assert!(floor > 0.1, "{floor}");
        assert!(sorted_of(&calm[..5]).faster_of(calm[0]).is_none());
    }

    #[test]
    fn the_faster_spread_of_every_benchmark_at_once_is_each_one_left_out() {
        // As defined: the others (one copy of `own` left out), their median clipped at 0, and
        // 1.4826 · the median gap under it of those below it.
        let by_definition = |sorted: &[f64], own: f64| {
            let at = sorted.iter().position(|v| *v == own).unwrap();
            let mut others: Vec<f64> = sorted.to_vec();
            others.remove(at);
            let level = median(&mut others.clone()).min(0.0);
            let mut gaps: Vec<f64> = others
                .iter()
                .filter(|d| **d < level)
                .map(|d| level - d)
                .collect();
            let gap = if gaps.is_empty() {
                0.0
            } else {
                median(&mut gaps)
            };
            level.hypot(1.4826 * gap)
        };
        matches_its_definition(
            11,
            &[(6, 0.0), (7, 0.3), (12, -0.1), (13, 0.2), (101, 0.0)],
            OthersSpread::faster_of,
            by_definition,
        );
    }

    /// Checks `fast` against `by_definition` for every move of comparisons of `n` pseudo-random
    /// moves in `[shift − 0.5, shift + 0.5)`, every fifth of them 0 (ties).
    fn matches_its_definition(
        seed: u64,
        cases: &[(usize, f64)],
        fast: impl Fn(&OthersSpread, f64) -> Option<f64>,
        by_definition: impl Fn(&[f64], f64) -> f64,
    ) {
        let mut state = seed;
        for &(n, shift) in cases {
            let mut moves: Vec<f64> = (0..n)
                .map(|i| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    if i % 5 == 0 {
                        0.0
                    } else {
                        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5 + shift
                    }
                })
                .collect();
            moves.sort_by(f64::total_cmp);
            let spreads = OthersSpread::new(&moves);
            for &own in &moves {
                let quick = fast(&spreads, own).unwrap();
                let slow = by_definition(&moves, own);
                assert!(
                    (quick - slow).abs() <= 1e-15 * slow.abs().max(1.0),
                    "n {n}: {quick} vs {slow}"
                );
            }
        }
    }

    #[test]
    fn the_others_spread_of_every_benchmark_at_once_is_each_one_left_out() {
        // The floor as defined: the others (one copy of `own` left out), their median, and
        // 1.4826 · their median absolute deviation from it.
        let by_definition = |sorted: &[f64], own: f64| {
            let at = sorted.iter().position(|v| *v == own).unwrap();
            let mut others: Vec<f64> = sorted.to_vec();
            others.remove(at);
            let centre = median(&mut others.clone());
            let mut deviations: Vec<f64> = others.iter().map(|d| (d - centre).abs()).collect();
            centre.hypot(1.4826 * median(&mut deviations))
        };
        matches_its_definition(
            7,
            &[(6, 0.1), (7, 0.1), (12, 0.1), (13, 0.1), (101, 0.1)],
            OthersSpread::of,
            by_definition,
        );
    }

    /// Twelve benchmarks, 15 runs each: quiet (±1%), in a fixed pseudo-random pattern.
    fn quiet_runs() -> Vec<Vec<f64>> {
        let wobble = |b: usize, r: usize| 0.01 * (((b * 7 + r * 13) % 11) as f64 / 5.0 - 1.0);
        (0..12)
            .map(|b| (0..15).map(|r| 1.0 + b as f64 + wobble(b, r)).collect())
            .collect()
    }

    #[test]
    fn the_spread_record_is_the_widest_the_history_moved_its_benchmarks_apart() {
        // Successive moves of at most ±2% about a common one.
        let quiet = quiet_runs();
        let record = |h: &[Vec<f64>]| {
            history_spread_record(&h.iter().map(Vec::as_slice).collect::<Vec<_>>())
        };
        let idle = record(&quiet).unwrap();
        assert!((0.005..0.03).contains(&idle), "{idle}");
        // A whole run 30% slower moves the others' median, not their spread.
        let mut slowed = quiet.clone();
        for runs in &mut slowed {
            runs[9] += 0.3;
        }
        assert!((record(&slowed).unwrap() - idle).abs() < 0.005);
        // One run where half the benchmarks sat 20% faster (a host faster for some than for
        // others) is the record: the floor may read that far.
        let mut split = quiet.clone();
        for runs in &mut split[..6] {
            runs[9] -= 0.2;
        }
        let wide = record(&split).unwrap();
        assert!(wide > 0.1, "{wide}");
        // Too short a history.
        let short: Vec<Vec<f64>> = quiet
            .iter()
            .map(|h| h[..MIN_SHORT_HISTORY - 1].to_vec())
            .collect();
        assert!(record(&short).is_none());
    }

    #[test]
    fn the_history_floor_is_how_far_this_machine_moves_whole_runs() {
        let quiet = quiet_runs();
        fn view(h: &[Vec<f64>]) -> Vec<&[f64]> {
            h.iter().map(Vec::as_slice).collect()
        }
        let idle = history_floor(&view(&quiet)).unwrap();
        assert!(idle < 0.015, "{idle}");
        // A busy machine: in every run a different two of the twelve are 45% slower.
        let busy: Vec<Vec<f64>> = quiet
            .iter()
            .enumerate()
            .map(|(b, runs)| {
                let hit = |r: usize| b == r % 12 || b == (r + 5) % 12;
                runs.iter()
                    .enumerate()
                    .map(|(r, x)| if hit(r) { x + 0.45 } else { *x })
                    .collect()
            })
            .collect();
        let floor = history_floor(&view(&busy)).unwrap();
        assert!(floor > 0.2, "{floor}");
        // A real change in one benchmark's history (a step at run 8) is one move of many.
        let mut stepped = quiet.clone();
        for x in &mut stepped[3][8..] {
            *x += 0.5;
        }
        let floor = history_floor(&view(&stepped)).unwrap();
        assert!(floor < 0.015, "{floor}");
        // Too short a history, too few benchmarks.
        let short: Vec<Vec<f64>> = quiet
            .iter()
            .map(|h| h[..MIN_SHORT_HISTORY - 1].to_vec())
            .collect();
        assert!(history_floor(&view(&short)).is_none());
        assert!(history_floor(&view(&quiet[..MIN_BENCHMARKS_TO_POOL])).is_none());
    }

    #[test]
    fn the_leave_one_out_quantile_matches_sorting_without_the_value() {
        let values = [0.5, 0.01, 0.3, 0.02, 0.02, 0.9, 0.04, 0.1, 0.0, 0.07];
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        for (j, value) in values.iter().enumerate() {
            let mut others: Vec<f64> = values
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != j)
                .map(|(_, v)| *v)
                .collect();
            others.sort_by(f64::total_cmp);
            for q in [0.5, 0.9] {
                let rank = q * (others.len() - 1) as f64;
                let below = rank.floor() as usize;
                let expected = others[below]
                    + (rank - rank.floor())
                        * (others[(below + 1).min(others.len() - 1)] - others[below]);
                let got = leave_one_out_quantile(&sorted, *value, q);
                assert!((got - expected).abs() < 1e-12, "{j}: {got} vs {expected}");
            }
        }
    }

    #[test]
    fn a_base_at_the_level_of_its_newest_runs_is_their_median_and_one_that_moved_stays_alone() {
        const LIMIT: f64 = 0.139_761_942_375_158_8; // ln 1.15
        // Sixteen runs alternating ±1% about 0, then the base run.
        let level: Vec<f64> = (0..16)
            .map(|i| if i % 2 == 0 { 0.01 } else { -0.01 })
            .collect();
        let with_base = |base: f64| {
            let mut h = level.clone();
            h.push(base);
            h
        };
        let at = |history: &[f64], base: f64, limit: f64| {
            let level = pooled_base(history, base, limit, true);
            assert_eq!(level.above_base, 0.0, "{level:?}");
            (level.ln, level.runs)
        };
        // At the level: the median of the base and its eight newest runs (four at −1%, four at
        // 1%, and 2%).
        assert_eq!(at(&with_base(0.02), 0.02, LIMIT), (0.01, POOLED_BASE_RUNS));
        // Moved 8% or 20% by the base commit, beyond this history's noise: alone.
        assert_eq!(at(&with_base(0.08), 0.08, LIMIT), (0.08, 1));
        assert_eq!(at(&with_base(0.2), 0.2, LIMIT), (0.2, 1));
        // A noisy history (±3%): 8% is within 2.5 of its standard deviations, but more than
        // half the 15% limit: alone. 6%: the level.
        let noisy: Vec<f64> = level.iter().map(|v| v * 3.0).chain([0.08]).collect();
        let sigma = successive_difference_sigma(&noisy);
        assert!(2.5 * sigma * 1.357_3_f64.sqrt() > 0.08, "{sigma}");
        assert_eq!(at(&noisy, 0.08, LIMIT), (0.08, 1));
        let mut lower = noisy.clone();
        lower[16] = 0.06;
        assert_eq!(at(&lower, 0.06, LIMIT), (0.03, POOLED_BASE_RUNS));
        // A quiet history (±0.2%): 3% is within half the limit but beyond its noise.
        let quiet: Vec<f64> = level.iter().map(|v| v / 5.0).chain([0.03]).collect();
        assert_eq!(at(&quiet, 0.03, LIMIT), (0.03, 1));
        assert_eq!(
            at(
                &quiet[..16]
                    .iter()
                    .copied()
                    .chain([0.004])
                    .collect::<Vec<_>>(),
                0.004,
                LIMIT
            ),
            (0.002, POOLED_BASE_RUNS)
        );
        // A history that does not end at the base run, or too short a history: alone.
        assert_eq!(at(&level, 0.0, LIMIT), (0.0, 1));
        assert_eq!(at(&with_base(0.02)[8..], 0.02, LIMIT), (0.02, 1));
        // One old jump of 30%: the level is still the median of the newest nine.
        let mut jumped = with_base(0.02);
        jumped[5] = 0.3;
        assert_eq!(at(&jumped, 0.02, LIMIT), (0.01, POOLED_BASE_RUNS));
        // A base run 9% faster than its newest runs. One of them was as fast (8.5%): the faster
        // level is the benchmark's own mode, and a time keeps the level, the median of the base
        // and its eight newest runs (−9%, −8.5%, four at −1%, three at 1%), 8% above the base
        // run; a metric that is not a time stays alone.
        let mut moded = with_base(-0.09);
        moded[10] = -0.085;
        let faster = pooled_base(&moded, -0.09, LIMIT, true);
        assert_eq!((faster.ln, faster.runs), (-0.01, POOLED_BASE_RUNS));
        assert!((faster.above_base - 0.08).abs() < 1e-12, "{faster:?}");
        assert_eq!(
            pooled_base(&moded, -0.09, LIMIT, false),
            BaseLevel {
                ln: -0.09,
                runs: 1,
                above_base: 0.0
            }
        );
        // None of them was: the base commit's own step, alone.
        assert_eq!(at(&with_base(-0.09), -0.09, LIMIT), (-0.09, 1));
        // 8% slower stays alone either way.
        assert_eq!(pooled_base(&with_base(0.08), 0.08, LIMIT, false).runs, 1);
    }

    #[test]
    fn a_history_with_a_jump_bands_one_run_by_its_tails_and_medians_of_three_by_its_spread() {
        // Alternating ±1%, and one run 30% up: the tail-aware spread 2.5 times the robust one.
        let mut history: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 0.01 } else { -0.01 })
            .collect();
        history[7] = 0.3;
        let (robust, tails) = (
            successive_difference_sigma(&history),
            tail_aware_sigma(&history),
        );
        assert!(tails > 2.0 * robust, "{robust} {tails}");
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-12;
        // One head run: the tails, and the base counts as one run whatever it is the median of.
        let one = history_variance(&history, 5, 1).unwrap();
        assert!(close(one, 2.0 * tails * tails), "{one}");
        assert!(close(history_variance(&history, 1, 1).unwrap(), one));
        // Two head runs: a median of two is their mean, one jump moves it; still the tails.
        let two = history_variance(&history, 5, 2).unwrap();
        assert!(close(two, tails * tails * (1.0 + 0.5)), "{two}");
        // Three head runs against a base of five: one jump moves neither median.
        let three = history_variance(&history, 5, 3).unwrap();
        assert!(
            close(three, robust * robust * (0.286_8 + 0.448_7)),
            "{three}"
        );
        // Three head runs against the base run alone: not guarded, the tails.
        let alone = history_variance(&history, 1, 3).unwrap();
        assert!(close(alone, tails * tails * (1.0 + 0.448_7)), "{alone}");
        // A short history: its tails pooled with the assumed level, the base one run; too
        // short: none.
        let short = &history[..MIN_HISTORY - 1];
        let sigma = short_history_sigma(tail_aware_sigma(short), short.len());
        let expected = (3.0 * 0.05 * 0.05 + 8.0 * tail_aware_sigma(short).powi(2)) / 11.0;
        assert!(close(sigma * sigma, expected), "{sigma}");
        assert!(close(
            history_variance(short, 5, 3).unwrap(),
            sigma * sigma * (1.0 + 0.448_7)
        ));
        assert_eq!(history_df(short.len()), 11.0);
        assert_eq!(history_df(history.len()), 19.0);
        assert_eq!(
            history_variance(&history[..MIN_SHORT_HISTORY - 1], 5, 3),
            None
        );
    }
}
