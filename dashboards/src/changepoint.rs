//! Change points in a benchmark's history, in the spirit of Apache Otava (Hunter): a windowed
//! two-sample comparison at every split, the strongest split accepted first and the series cut
//! there (E-divisive style), until no split is both significant and large enough.
//!
//! Robust by construction: the noise is the MAD of successive differences (a step moves one
//! difference, an outlier two), windows are compared by their medians, and a step counts only
//! once it has held for [`Config::hold`] points (each of them on the new side), so a single
//! outlier is never a change point. Works on `ln(value)`: steps are ratios.

use benchgate_gate::stats::{median, normal_cdf, successive_difference_sigma};

/// Below this many points after a split, every one of them must sit on the new side.
const FEW_AFTER: usize = 5;

/// The detector's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Points compared on each side of a split.
    pub window: usize,
    /// The largest two-sided p-value of a change point.
    pub p_value: f64,
    /// The smallest step, as a fraction (0.05 = 5%).
    pub min_magnitude: f64,
    /// Points a step must have held for (each on its new side) to be confirmed.
    pub hold: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            window: 40,
            p_value: 1e-4,
            min_magnitude: 0.04,
            hold: 2,
        }
    }
}

/// A confirmed step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first point at the new level.
    pub index: usize,
    /// The median before (same unit as the input).
    pub before: f64,
    /// The median after.
    pub after: f64,
    /// `after / before`.
    pub ratio: f64,
    /// The two-sided p-value of the split.
    pub p_value: f64,
}

/// Fewest benchmarks a run needs for its shared factor to be estimated.
const MIN_SUITE: usize = 3;

/// What each run shares with the other benchmarks of its suite on the same machine, as a log
/// ratio: the median, over the run's benchmarks, of how far each sits from its own typical level
/// (the median of its history). On shared runners most run-to-run movement is common to the
/// whole run (a slower host, a busy neighbour); a code change moves one benchmark or a few.
/// `table[run][benchmark]` holds each run's values, oldest run first; a run with fewer than
/// three benchmarks gets 0.
pub fn run_factors(table: &[Vec<Option<f64>>]) -> Vec<f64> {
    let width = table.iter().map(Vec::len).max().unwrap_or(0);
    let usable = |v: &Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0).map(f64::ln);
    let levels: Vec<Option<f64>> = (0..width)
        .map(|b| {
            let mut xs: Vec<f64> = table
                .iter()
                .filter_map(|run| run.get(b).and_then(usable))
                .collect();
            (!xs.is_empty()).then(|| median(&mut xs))
        })
        .collect();
    table
        .iter()
        .map(|run| {
            let mut offsets: Vec<f64> = run
                .iter()
                .zip(&levels)
                .filter_map(|(v, level)| Some(usable(v)? - (*level)?))
                .collect();
            if offsets.len() < MIN_SUITE {
                0.0
            } else {
                median(&mut offsets)
            }
        })
        .collect()
}

/// The change points of `values` (positive, oldest first), in order.
pub fn detect(values: &[f64], config: &Config) -> Vec<ChangePoint> {
    if values.len() < config.hold + 3 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return Vec::new();
    }
    let x: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let sigma = successive_difference_sigma(&x);
    // A floor for series quieter than their rounding: 0.1%.
    let sigma = if sigma.is_finite() {
        sigma.max(1e-3)
    } else {
        return Vec::new();
    };
    let mut cuts: Vec<usize> = Vec::new();
    loop {
        let mut best: Option<(f64, ChangePoint)> = None;
        for t in 1..x.len() {
            if cuts.contains(&t) {
                continue;
            }
            let (left, right) = windows(&x, &cuts, t, config.window);
            if left.len() < 3 || right.len() < config.hold {
                continue;
            }
            let Some((z, point)) = split(left, right, sigma, t, config) else {
                continue;
            };
            if best.as_ref().is_none_or(|(b, _)| z > *b) {
                best = Some((z, point));
            }
        }
        match best {
            Some((_, point)) => {
                let (left, right) = windows(&x, &cuts, point.index, config.window);
                let a = point.index - left.len();
                let b = point.index + right.len();
                cuts.push(refine(&x[a..b], config.hold).map_or(point.index, |k| a + k));
            }
            None => break,
        }
    }
    cuts.sort_unstable();
    // The same tests, to measure a split rather than to accept it.
    let measure_only = Config {
        p_value: 1.0,
        min_magnitude: 0.0,
        ..*config
    };
    // A cut accepted early is tested against windows that later cuts shorten; once they are
    // all in, each must still be a significant, large enough, held step between its
    // neighbours. The weakest that is not goes, and the rest are tested again.
    loop {
        let weakest = cuts
            .iter()
            .enumerate()
            .filter_map(|(i, &t)| {
                let (left, right) = windows(&x, &cuts, t, config.window);
                let fails = left.len() < 3
                    || right.len() < config.hold
                    || split(left, right, sigma, t, config).is_none();
                fails.then(|| {
                    let strength =
                        split(left, right, sigma, t, &measure_only).map_or(0.0, |(z, _)| z);
                    (i, strength)
                })
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match weakest {
            Some((i, _)) => {
                cuts.remove(i);
            }
            None => break,
        }
    }
    cuts.iter()
        .map(|&t| {
            let (left, right) = windows(&x, &cuts, t, config.window);
            let mut point = split(left, right, sigma, t, &measure_only)
                .map(|(_, p)| p)
                .unwrap_or(ChangePoint {
                    index: t,
                    before: 0.0,
                    after: 0.0,
                    ratio: 1.0,
                    p_value: 1.0,
                });
            point.index = t;
            point
        })
        .collect()
}

/// The up-to-`window` points before and from `t`, within the segment between accepted `cuts`.
fn windows<'a>(x: &'a [f64], cuts: &[usize], t: usize, window: usize) -> (&'a [f64], &'a [f64]) {
    let low = cuts.iter().copied().filter(|c| *c < t).max().unwrap_or(0);
    let high = cuts
        .iter()
        .copied()
        .filter(|c| *c > t)
        .min()
        .unwrap_or(x.len());
    (
        &x[t.saturating_sub(window).max(low)..t],
        &x[t..(t + window).min(high)],
    )
}

/// Where in `segment` a single step most likely is: the split with the largest standardized
/// rank-sum (Mann–Whitney) statistic. Ranks keep one outlier from pulling the estimate; the
/// statistic peaks more sharply than a difference of medians. `None` if no split qualifies.
fn refine(segment: &[f64], hold: usize) -> Option<usize> {
    let n = segment.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| segment[i].total_cmp(&segment[j]));
    let mut ranks = vec![0.0; n];
    for (rank, &i) in order.iter().enumerate() {
        ranks[i] = rank as f64 + 1.0;
    }
    let total: f64 = ranks.iter().sum();
    let mut right_sum = total;
    let mut best: Option<(f64, usize)> = None;
    for k in 1..n {
        right_sum -= ranks[k - 1];
        let (left, right) = (k as f64, (n - k) as f64);
        if k < 3 || n - k < hold {
            continue;
        }
        let expected = right * (n as f64 + 1.0) / 2.0;
        let sd = (left * right * (n as f64 + 1.0) / 12.0).sqrt();
        let z = (right_sum - expected).abs() / sd;
        if best.is_none_or(|(b, _)| z > b) {
            best = Some((z, k));
        }
    }
    best.map(|(_, k)| k)
}

/// The split at `t` if it is a confirmed, significant, large enough step: (|z|, the point).
fn split(
    left: &[f64],
    right: &[f64],
    sigma: f64,
    t: usize,
    config: &Config,
) -> Option<(f64, ChangePoint)> {
    let before = median(&mut left.to_vec());
    let after = median(&mut right.to_vec());
    let step = after - before;
    // Medians of n normal draws have variance ≈ π/2 · σ²/n.
    let se = sigma
        * (std::f64::consts::FRAC_PI_2 * (1.0 / left.len() as f64 + 1.0 / right.len() as f64))
            .sqrt();
    let z = step.abs() / se;
    let p_value = 2.0 * (1.0 - normal_cdf(z));
    if p_value > config.p_value || step.abs() < (1.0 + config.min_magnitude).ln() {
        return None;
    }
    // Held: with few points after the split (the newest runs), each must be past the midpoint,
    // so one outlier at the end is not a step; with more, their median already is robust.
    let midpoint = before + step / 2.0;
    let held = right.len() >= FEW_AFTER
        || right
            .iter()
            .all(|v| (v - midpoint).signum() == step.signum());
    held.then(|| {
        (
            z,
            ChangePoint {
                index: t,
                before: before.exp(),
                after: after.exp(),
                ratio: step.exp(),
                p_value,
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic noisy series: level × (1 ± noise), pseudo-random.
    fn noisy(levels: &[(usize, f64)], noise: f64, seed: u64) -> Vec<f64> {
        let mut state = seed;
        let mut out = Vec::new();
        for &(n, level) in levels {
            for _ in 0..n {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let u = (state % 10_000) as f64 / 10_000.0 - 0.5;
                out.push(level * (1.0 + noise * 2.0 * u));
            }
        }
        out
    }

    #[test]
    fn flat_noisy_series_have_almost_no_change_points() {
        // 4,000 points of ±3% noise: the target is at most 1 per 100 points; expect far fewer.
        let found: usize = (1..=20)
            .map(|seed| detect(&noisy(&[(200, 1000.0)], 0.03, seed), &Config::default()).len())
            .sum();
        assert!(found <= 2, "{found} false change points in 4,000 points");
    }

    #[test]
    fn a_fifteen_percent_step_is_found_where_it_is() {
        let series = noisy(&[(60, 1000.0), (40, 1150.0)], 0.02, 7);
        let points = detect(&series, &Config::default());
        assert_eq!(points.len(), 1, "{points:?}");
        assert!(points[0].index.abs_diff(60) <= 1, "{points:?}");
        assert!((points[0].ratio - 1.15).abs() < 0.02, "{points:?}");
    }

    #[test]
    fn a_single_outlier_is_not_a_step_but_two_held_points_are() {
        let mut series = noisy(&[(50, 1000.0)], 0.01, 3);
        series[30] = 1500.0;
        assert_eq!(detect(&series, &Config::default()), vec![]);
        // At the end of the series: one high point is not confirmed; two are.
        let mut tail = noisy(&[(40, 1000.0)], 0.01, 5);
        tail.push(1250.0);
        assert_eq!(detect(&tail, &Config::default()), vec![]);
        tail.push(1260.0);
        let points = detect(&tail, &Config::default());
        assert_eq!(points.iter().map(|p| p.index).collect::<Vec<_>>(), vec![40]);
    }

    #[test]
    fn a_slow_run_is_shared_and_a_step_of_one_benchmark_is_not() {
        // Five benchmarks; run 6 ran 30% slow for all of them; benchmark 0 steps up 20% at 10.
        let table: Vec<Vec<Option<f64>>> = (0..20)
            .map(|run| {
                (0..5)
                    .map(|b| {
                        let mut v = 100.0 * (b + 1) as f64;
                        if run == 6 {
                            v *= 1.3;
                        }
                        if b == 0 && run >= 10 {
                            v *= 1.2;
                        }
                        Some(v)
                    })
                    .collect()
            })
            .collect();
        let factors = run_factors(&table);
        assert!((factors[6] - 1.3f64.ln()).abs() < 1e-12, "{factors:?}");
        assert!(
            factors
                .iter()
                .enumerate()
                .all(|(r, f)| r == 6 || f.abs() < 1e-12)
        );
        // Too few benchmarks in a run: no factor.
        assert_eq!(run_factors(&[vec![Some(1.0), Some(2.0)]]), vec![0.0]);
    }

    #[test]
    fn two_steps_are_both_found() {
        let series = noisy(&[(40, 1000.0), (40, 800.0), (40, 1000.0)], 0.02, 11);
        let found: Vec<usize> = detect(&series, &Config::default())
            .iter()
            .map(|p| p.index)
            .collect();
        assert_eq!(found, vec![40, 80]);
    }
}
