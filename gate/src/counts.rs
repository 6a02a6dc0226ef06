//! Exact counts (gungraun's instruction counts under Valgrind): judged as what they are.
//!
//! The same binary on the same input counts the same events whatever else the machine does, so
//! a change between base and head is not noise and needs no rounds: one run a side decides.
//! Counts are not free of artefacts (code layout, allocator state, a new toolchain move them a
//! little, and code with randomness, such as a randomly seeded hash map, counts differently
//! run to run), so each benchmark's tolerance is what its counts were seen to move where the
//! code did not change: between the rounds of each side, and, with history, the typical move
//! between consecutive commits (the median, which the minority of commits that really changed
//! the benchmark cannot inflate). Without either the arithmetic is exact.
//!
//! Each event kind has its own limit (`[instructions]` in `benchgate.toml`); an event without
//! one is stored and charted, not judged ([`crate::verdict::Decision::unjudged`]). Whether a count verdict decides the gate is the policy's
//! `decide`: when it does not, its results inform (they are marked like quarantined ones).

use crate::noise::NoiseSource;
use crate::policy::Policy;
use crate::stats::median;
use crate::verdict::{BenchmarkResult, DecisionBound, Metric, TooNoisy, Verdict};

/// Multiplies the median move between consecutive commits into a tolerance: a move several
/// times the typical one is a change, not an artefact.
pub const HISTORY_TOLERANCE_FACTOR: f64 = 3.0;

/// Why count verdicts do not decide when `[instructions] decide = false`.
pub const INFORM_ONLY: &str = "instruction counts inform only ([instructions] decide = false)";

/// One count benchmark's values: per round, base and head (exact counts; usually one round).
pub struct CountInput<'a> {
    /// The measurement's id (`GROUP/FUNCTION/ID/EVENT`).
    pub id: &'a str,
    /// The event, also the unit (`instructions`, `L1 hits`, ...).
    pub event: &'a str,
    /// The base side's count in each round.
    pub base: &'a [f64],
    /// The head side's count in each round.
    pub head: &'a [f64],
    /// ln(count) of the baseline's previous runs, oldest first, when stored history exists.
    pub history: Option<&'a [f64]>,
}

/// How far counts moved where the code did not change, as a log ratio: the spread within each
/// side's rounds, and the history's typical move between commits times
/// [`HISTORY_TOLERANCE_FACTOR`]. Zero when neither shows any (exact arithmetic).
pub fn tolerance(base: &[f64], head: &[f64], history: Option<&[f64]>) -> f64 {
    let spread = |values: &[f64]| {
        let logs = values.iter().filter(|v| **v > 0.0).map(|v| v.ln());
        let (low, high) = logs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        if high >= low { high - low } else { 0.0 }
    };
    let rounds = spread(base).max(spread(head));
    let between_commits = history
        .filter(|h| h.len() >= 2)
        .map(|h| {
            let mut moves: Vec<f64> = h.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
            median(&mut moves) * HISTORY_TOLERANCE_FACTOR
        })
        .unwrap_or(0.0);
    rounds.max(between_commits)
}

/// Judges one count benchmark at its event's limit (`limit`: the largest tolerated increase, as
/// a fraction).
pub fn judge(input: &CountInput<'_>, limit: f64, policy: &Policy) -> BenchmarkResult {
    let quarantined = policy
        .quarantine_reason(input.id)
        .map(str::to_owned)
        .or_else(|| (!policy.counts.decide).then(|| INFORM_ONLY.to_owned()));
    let base = median(&mut input.base.to_vec());
    let head = median(&mut input.head.to_vec());
    let rounds = input.base.len().min(input.head.len());
    let mut result = BenchmarkResult {
        id: input.id.to_owned(),
        metric: Metric::Lower,
        unit: Some(input.event.to_owned()),
        verdict: Verdict::Inconclusive,
        base_ns: Some(base),
        head_ns: Some(head),
        throughput_per_iteration: None,
        head_work: None,
        ratio: None,
        limit: 1.0 + limit,
        noise: None,
        interval: None,
        p_slower: None,
        noise_source: Some(NoiseSource::Exact),
        uncalibrated: false,
        rounds,
        set_aside: 0,
        base_runs: 1,
        bound: None,
        detectable: None,
        too_noisy: None,
        futile: false,
        quarantined,
        pass_on_floor: false,
    };
    if !(base > 0.0 && head > 0.0) {
        // A zero count cannot be compared as a ratio: the same zero is no change.
        result.verdict = if base == head {
            Verdict::Pass
        } else {
            Verdict::Inconclusive
        };
        return result;
    }
    let d = (head / base).ln();
    let tolerance = tolerance(input.base, input.head, input.history);
    result.ratio = Some(d.exp());
    result.noise = Some(tolerance.exp() - 1.0);
    result.interval = Some(((d - tolerance).exp(), (d + tolerance).exp()));
    let log_limit = limit.ln_1p();
    let min_change = policy.min_change.ln_1p();
    result.detectable = Some(log_limit.max(tolerance).exp());
    let lower = (d - tolerance).exp();
    let upper = (d + tolerance).exp();
    let bound = |lower: Option<f64>, upper: Option<f64>| DecisionBound {
        lower,
        upper,
        confidence: 1.0,
    };
    let (verdict, decided_on) = if tolerance >= log_limit {
        // The counts move as much as the limit where the code did not change.
        result.too_noisy = Some(TooNoisy {
            rounds,
            detectable: tolerance.exp(),
        });
        (Verdict::Inconclusive, bound(None, Some(upper)))
    } else if d - tolerance >= log_limit {
        (Verdict::Regressed, bound(Some(lower), None))
    } else if d > tolerance && d >= min_change {
        (Verdict::Warn, bound(Some(lower), Some(upper)))
    } else if d < -tolerance && d <= -min_change {
        (Verdict::Improved, bound(None, Some(upper)))
    } else {
        (Verdict::Pass, bound(None, Some(upper)))
    };
    result.verdict = verdict;
    result.bound = Some(decided_on);
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn judged(base: &[f64], head: &[f64], history: Option<&[f64]>) -> BenchmarkResult {
        judge(
            &CountInput {
                id: "aead/seal/x/instructions",
                event: "instructions",
                base,
                head,
                history,
            },
            0.05,
            &Policy::default(),
        )
    }

    #[test]
    fn one_run_a_side_decides_by_exact_arithmetic() {
        let doubled = judged(&[91_234.0], &[182_468.0], None);
        assert_eq!(doubled.verdict, Verdict::Regressed);
        assert_eq!(doubled.ratio, Some(2.0));
        assert_eq!(doubled.bound.unwrap().lower, Some(2.0));
        let same = judged(&[91_234.0], &[91_234.0], None);
        assert_eq!(same.verdict, Verdict::Pass);
        assert_eq!(same.noise, Some(0.0));
        // +3%: real (exact), under the 5% default limit.
        assert_eq!(judged(&[100.0], &[103.0], None).verdict, Verdict::Warn);
        assert_eq!(judged(&[100.0], &[90.0], None).verdict, Verdict::Improved);
        // +1%: under the smallest change worth reporting.
        assert_eq!(judged(&[100.0], &[101.0], None).verdict, Verdict::Pass);
    }

    #[test]
    fn history_and_rounds_set_the_tolerance() {
        // Consecutive commits moved the count by 0, 2%, 0, 0, 40% (one real change): the
        // median move (0) keeps the arithmetic exact.
        let ln = |v: f64| v.ln();
        let history: Vec<f64> = [100.0, 100.0, 102.0, 102.0, 102.0, 142.8]
            .into_iter()
            .map(ln)
            .collect();
        assert_eq!(tolerance(&[1.0], &[1.0], Some(&history)), 0.0);
        // A randomly seeded map: every commit moves it about 1%; +2% is within 3 × 1%, +10%
        // is beyond it and the limit.
        let jumpy = |step: f64| -> Vec<f64> {
            [1.0, step, 1.0, step, 1.0]
                .into_iter()
                .map(|v| (100.0 * v).ln())
                .collect()
        };
        let result = judged(&[100.0], &[102.0], Some(&jumpy(1.01)));
        assert_eq!(result.verdict, Verdict::Pass);
        assert!((result.noise.unwrap() - (1.01f64.powi(3) - 1.0)).abs() < 1e-9);
        let result = judged(&[100.0], &[110.0], Some(&jumpy(1.01)));
        assert_eq!(result.verdict, Verdict::Regressed);
        // Moving 3% between commits, 3 × 3% exceeds the 5% limit: too noisy to gate.
        let result = judged(&[100.0], &[110.0], Some(&jumpy(1.03)));
        assert_eq!(result.verdict, Verdict::Inconclusive);
        assert!((result.too_noisy.unwrap().detectable - 1.03f64.powi(3)).abs() < 1e-9);
        // Rounds of one side that disagree by more than the limit: too noisy to gate.
        let result = judged(&[100.0, 110.0], &[120.0], None);
        assert_eq!(result.verdict, Verdict::Inconclusive);
        assert!(result.too_noisy.is_some());
    }
}
