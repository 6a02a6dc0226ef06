//! Looking more than once: adaptive A/B runs rounds until each benchmark is decided, and every
//! look is a chance to be wrong. A [`Plan`] says which looks there will be; each look spends a
//! share of the error rates (`confidence`, `false_alarm_rate`), so that over all the looks the
//! chance of a wrong `pass` or a false `regressed` stays within them whatever the rounds show
//! and whenever the runner stops (alpha spending with a union bound over the looks: no
//! assumption about how the looks correlate, so valid under optional stopping).

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
}

/// How the error rates are spread over the looks: the share spent by look `i` of `L` is
/// `(i / L)^SPENDING_POWER`. 1 spends evenly (Pocock-like, early stops cheap); larger values
/// keep more for the last look (O'Brien–Fleming-like).
pub const SPENDING_POWER: f64 = 1.0;

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

impl Plan {
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
            Plan::Fixed => true,
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
        match self {
            Plan::Fixed => 1.0,
            Plan::Sequential { first, max } => {
                let looks = (max.max(first) - first + 1) as f64;
                let look = (rounds.clamp(first, max.max(first)) - first + 1) as f64;
                let spent = |i: f64| (i / looks).powf(SPENDING_POWER);
                spent(look) - spent(look - 1.0)
            }
        }
    }

    /// The most rounds this plan runs (`None` for a fixed plan: no more are coming).
    pub fn max_rounds(self) -> Option<usize> {
        match self {
            Plan::Fixed => None,
            Plan::Sequential { max, .. } => Some(max),
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
        assert!((Plan::adaptive(6).share(2) - 0.2).abs() < 1e-12);
        assert_eq!(Plan::adaptive(6).max_rounds(), Some(6));
    }
}
