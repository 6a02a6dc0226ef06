//! Looking more than once: adaptive A/B runs rounds until each benchmark is decided, and every
//! look is a chance to be wrong. A [`Plan`] says which looks there will be; each look spends a
//! share of the error rates (`confidence`, `false_alarm_rate`), so that over all the looks the
//! chance of a wrong `pass` or a false `regressed` stays within them whatever the rounds show
//! and whenever the runner stops (alpha spending with a union bound over the looks: no
//! assumption about how the looks correlate, so valid under optional stopping).

use crate::stats::normal_cdf;

/// The looks a comparison gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Plan {
    /// One look, at whatever rounds there are: the whole error rates are spent on it.
    #[default]
    Fixed,
    /// A look after each round from `first` to `max` rounds (adaptive A/B).
    Sequential {
        /// Rounds at the first look.
        first: usize,
        /// Rounds at the last.
        max: usize,
    },
    /// A stored baseline's head run, and a look after each re-run of the head up to `max`
    /// head runs (`gate -- <bench command>`). The A/B waits (rounds to fail, to decide a large
    /// move, to give up) guard against the alternation of sides and do not apply.
    Reruns {
        /// Head runs at the last look.
        max: usize,
    },
}

/// How the error rates are spread over the looks: look `i` of `L` spends `(i / L)^SPENDING_POWER`
/// less what the looks before spent (Kim and DeMets' power family); ¾ keeps more for the first
/// looks, where most benchmarks decide. Measured in docs/accuracy.md, "Error spent more on the
/// first looks".
pub const SPENDING_POWER: f64 = 0.75;

/// Rounds an adaptive comparison needs before it may fail a benchmark: a suspected
/// regression is confirmed by more rounds before the gate fails. A benchmark whose speed
/// depends on per-process state, such as a random hash seed, lines up with the alternation
/// three rounds running by chance: `HashMap::insert/100` on the busy recording did, in 1 of
/// 72 identical comparisons, with three rounds to fail (docs/accuracy.md).
pub const MIN_ROUNDS_TO_FAIL: usize = 4;

/// Rounds an adaptive comparison needs before it decides a benchmark whose rounds moved as
/// far as its limit either way: two interfered base runs in a row on a busy machine read as a
/// head far faster, and would hide a real slowdown behind a `pass`.
pub const MIN_ROUNDS_FOR_LARGE_MOVES: usize = 3;

/// An adaptive comparison stops a benchmark still `inconclusive` once the chance that the
/// plan's last look decides it falls below this ([`power`]); it cannot raise either error rate.
/// Measured in docs/accuracy.md ("futility").
pub const FUTILITY_POWER: f64 = 0.1;

/// Rounds an adaptive comparison runs before it may stop a benchmark for futility: the
/// trend of fewer is itself too noisy to give up on (from 5, busy throughput comparisons
/// cost 3.04 rounds, more than 3 fixed rounds, measured with A B A B rounds; with the rounds
/// counterbalanced, from 3 they cost 3.10 and from 4 3.17, both with the rates spent evenly
/// over the looks: docs/accuracy.md, "Limits").
pub const MIN_ROUNDS_FOR_FUTILITY: usize = 4;

/// One side of a decision as seen from a look: the estimate it rests on, the per-round
/// standard deviation of that estimate, and the quantile the last look would use.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    /// The estimate (`d̂`, plus any excess the bound adds).
    pub estimate: f64,
    /// The per-round standard deviation.
    pub round_sd: f64,
    /// The last look's quantile for this side's bound.
    pub quantile: f64,
    /// Rounds so far this side rests on.
    pub rounds: f64,
}

impl Side {
    /// The chance that, after `more` rounds drawn like these, the bound clears `limit`
    /// (from below for `pass`, from above for `regressed`).
    fn chance(self, more: f64, limit: f64, passing: bool) -> f64 {
        let total = self.rounds + more;
        // Predictive power: the last look's mean is (n·d̂ + m·future) / (n + m); with d̂ itself
        // uncertain it moves by σ·√(m / (n·(n + m))) around d̂. Its standard error is then
        // σ / √(n + m).
        let drift = self.round_sd * (more / (total * self.rounds)).sqrt();
        let margin = self.quantile * self.round_sd / total.sqrt();
        let room = if passing {
            limit - margin - self.estimate
        } else {
            self.estimate - limit - margin
        };
        if drift > 0.0 {
            normal_cdf(room / drift)
        } else if room > 0.0 {
            1.0
        } else {
            0.0
        }
    }
}

/// The chance that `more` rounds decide a benchmark: its `pass` side's bound falls below
/// `limit` or its `regressed` side's rises above it at the last look.
pub fn power(pass: Side, regressed: Side, more: f64, limit: f64) -> f64 {
    (pass.chance(more, limit, true) + regressed.chance(more, limit, false)).min(1.0)
}

impl Plan {
    /// Whether a benchmark still undecided at `rounds` rounds may be stopped for futility.
    pub fn may_stop_for_futility_at(self, rounds: usize) -> bool {
        self.reached(rounds, MIN_ROUNDS_FOR_FUTILITY)
    }

    /// Whether a benchmark that moved as far as its limit may be decided at `rounds` rounds.
    pub fn may_decide_large_move_at(self, rounds: usize) -> bool {
        self.reached(rounds, MIN_ROUNDS_FOR_LARGE_MOVES)
    }

    /// Whether a `regressed` may be claimed at `rounds` rounds.
    pub fn may_fail_at(self, rounds: usize) -> bool {
        self.reached(rounds, MIN_ROUNDS_TO_FAIL)
    }

    /// Whether `rounds` is at least `needed`, or the plan's last look: a fixed plan has no
    /// more rounds coming, so it is always there.
    fn reached(self, rounds: usize, needed: usize) -> bool {
        match self {
            Plan::Fixed | Plan::Reruns { .. } => true,
            Plan::Sequential { max, .. } => rounds >= needed.min(max),
        }
    }

    /// Adaptive A/B from 2 rounds to `max`.
    pub fn adaptive(max: usize) -> Self {
        Plan::Sequential {
            first: 2.min(max),
            max,
        }
    }

    /// The share of each error rate spent at the look with `rounds` rounds (1 for a fixed plan).
    pub fn share(self, rounds: usize) -> f64 {
        let (first, max) = match self {
            Plan::Fixed => return 1.0,
            Plan::Sequential { first, max } => (first, max),
            Plan::Reruns { max } => (1, max),
        };
        let looks = (max.max(first) - first + 1) as f64;
        let look = (rounds.clamp(first, max.max(first)) - first + 1) as f64;
        let spent = |i: f64| (i / looks).powf(SPENDING_POWER);
        spent(look) - spent(look - 1.0)
    }

    /// The most rounds this plan runs (`None` for a fixed plan: no more are coming).
    pub fn max_rounds(self) -> Option<usize> {
        match self {
            Plan::Fixed => None,
            Plan::Sequential { max, .. } | Plan::Reruns { max } => Some(max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_of_a_plan_add_up_to_the_whole_rate() {
        for max in 2..=12 {
            let plan = Plan::adaptive(max);
            let total: f64 = (2..=max).map(|n| plan.share(n)).sum();
            assert!((total - 1.0).abs() < 1e-12, "{max}: {total}");
        }
        assert_eq!(Plan::Fixed.share(3), 1.0);
        // (1/5)^¾ of the rates at the first of five looks, (2/5)^¾ − (1/5)^¾ at the second.
        assert!((Plan::adaptive(6).share(2) - 0.299_069_756_2).abs() < 1e-9);
        assert!((Plan::adaptive(6).share(3) - 0.203_903_615_6).abs() < 1e-9);
        assert!((Plan::adaptive(6).share(6) - (1.0 - 0.8_f64.powf(0.75))).abs() < 1e-12);
        assert_eq!(Plan::adaptive(6).max_rounds(), Some(6));
        // Re-runs of a stored baseline's head look from the first run: (1/3)^¾ of the rates
        // at one head run, and never the A/B waits.
        let reruns = Plan::Reruns { max: 3 };
        let total: f64 = (1..=3).map(|n| reruns.share(n)).sum();
        assert!((total - 1.0).abs() < 1e-12, "{total}");
        assert!((reruns.share(1) - (1.0_f64 / 3.0).powf(0.75)).abs() < 1e-12);
        assert!(reruns.may_fail_at(1) && reruns.may_decide_large_move_at(1));
        assert_eq!(Plan::Reruns { max: 1 }.share(1), 1.0);
    }

    fn side(estimate: f64, round_sd: f64, quantile: f64) -> Side {
        Side {
            estimate,
            round_sd,
            quantile,
            rounds: 4.0,
        }
    }

    #[test]
    fn power_is_the_predictive_chance_that_the_last_look_clears_the_limit() {
        // 4 rounds so far, 4 to come: the last look's mean moves by σ·√(4 / (8·4)) and its
        // bound sits t·σ/√8 above it. Values from scipy.stats.norm.cdf.
        let quiet = power(side(0.0, 0.1, 2.0), side(0.0, 0.1, 5.0), 4.0, 0.14);
        // (0.14 − 2·0.1/√8) / (0.1·√(1/8)) = 1.95980: norm.cdf = 0.974991.
        assert!((quiet - 0.974_991).abs() < 1e-5, "{quiet}");
        let hopeless = power(side(0.0, 0.3, 3.0), side(0.0, 0.3, 5.0), 4.0, 0.14);
        // (0.14 − 3·0.3/√8) / (0.3·√(1/8)) = −1.68007: norm.cdf = 0.046474; the regressed
        // side, (−0.14 − 5·0.3/√8) / 0.106066 = −6.32, adds nothing visible.
        assert!((hopeless - 0.046_474).abs() < 1e-5, "{hopeless}");
        assert!(hopeless < FUTILITY_POWER && quiet > FUTILITY_POWER);
        // A benchmark heading past the limit: the regressed side carries it.
        let slowed = power(side(0.3, 0.05, 3.0), side(0.3, 0.05, 5.0), 4.0, 0.14);
        assert!(slowed > 0.99, "{slowed}");
        // No rounds to come: the bound as it stands.
        assert_eq!(
            power(side(0.0, 0.01, 2.0), side(0.0, 0.01, 5.0), 0.0, 0.14),
            1.0
        );
        assert_eq!(
            power(side(0.2, 0.01, 2.0), side(0.1, 0.01, 5.0), 0.0, 0.14),
            0.0
        );
    }
}
