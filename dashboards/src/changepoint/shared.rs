//! What the runs of one machine shared: each run's factor (how far its benchmarks sat from
//! their typical levels, together), and each benchmark's series without it, so a step of one
//! benchmark shows and a slower host does not.

use benchgate_gate::stats::{median, successive_difference_sigma};

use super::{ChangePoint, Config, detect};

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

/// The part of the run factors that comes and goes: each of `factors` (oldest run first, from
/// [`run_factors`]) minus the median of its stretch between the factors' own change points. A
/// step every benchmark took at once (a change that slows everything, a new toolchain) then
/// stays in every series, to be found there, while the run-to-run movement of a shared runner is
/// still taken out.
pub fn transient(factors: &[f64], config: &Config) -> Vec<f64> {
    transient_and_steps(factors, config).0
}

/// [`transient`], and the factors' own change points (indices are runs; `before`, `after` and
/// `ratio` are of the factor as a ratio, 1 being the machine's typical run).
fn transient_and_steps(factors: &[f64], config: &Config) -> (Vec<f64>, Vec<ChangePoint>) {
    let levels: Vec<f64> = factors.iter().map(|f| f.exp()).collect();
    let config = Config {
        min_window: config.min_window.max(FACTOR_MIN_WINDOW),
        ..*config
    };
    let steps = detect(&levels, &config);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(steps.iter().map(|c| c.index));
    bounds.push(factors.len());
    let mut out = Vec::with_capacity(factors.len());
    for stretch in bounds.windows(2) {
        let segment = &factors[stretch[0]..stretch[1]];
        let level = median(&mut segment.to_vec());
        out.extend(segment.iter().map(|f| f - level));
    }
    (out, steps)
}

/// The smallest window of a step the whole suite (or a family) took: a few runs on a slower
/// host move every benchmark for as long as they last, and are the runner's weather, not a step
/// to keep in every series.
const FACTOR_MIN_WINDOW: usize = 5;

/// Peers whose runs a benchmark is compared with in [`Shared::adjust`].
const PEERS: usize = 5;

/// Fewest runs two benchmarks must share to be compared as peers.
const MIN_SHARED_RUNS: usize = 10;

/// What the runs of one machine shared, for taking it out of each benchmark's series: the
/// machine's [`run_factors`] (with their own steps kept, [`transient`]) and each benchmark's
/// distance from its own typical level in each run.
#[derive(Debug, Clone)]
pub struct Shared {
    /// `ln(value) − ln(typical level)` by benchmark, NaN where a run has none:
    /// `[benchmark][run]`.
    columns: Vec<Vec<f64>>,
    /// The machine's transient factor per run.
    machine: Vec<f64>,
    /// The change points of the machine's factor: steps the whole suite took at once.
    suite_steps: Vec<ChangePoint>,
}

impl Shared {
    /// `table[run][benchmark]`, oldest run first (as for [`run_factors`]).
    pub fn new(table: &[Vec<Option<f64>>], config: &Config) -> Self {
        let width = table.iter().map(Vec::len).max().unwrap_or(0);
        let usable = |v: Option<&Option<f64>>| {
            v.copied()
                .flatten()
                .filter(|v| v.is_finite() && *v > 0.0)
                .map(f64::ln)
        };
        let levels: Vec<Option<f64>> = (0..width)
            .map(|b| {
                let mut xs: Vec<f64> = table.iter().filter_map(|run| usable(run.get(b))).collect();
                (!xs.is_empty()).then(|| median(&mut xs))
            })
            .collect();
        let columns = (0..width)
            .map(|b| {
                table
                    .iter()
                    .map(|run| {
                        usable(run.get(b))
                            .zip(levels[b])
                            .map_or(f64::NAN, |(v, level)| v - level)
                    })
                    .collect()
            })
            .collect();
        let (machine, suite_steps) = transient_and_steps(&run_factors(table), config);
        Self {
            columns,
            machine,
            suite_steps,
        }
    }

    /// The machine's transient factor of each run (see [`transient`]).
    pub fn machine(&self) -> &[f64] {
        &self.machine
    }

    /// Steps the whole suite took at once: the change points of the machine's [`run_factors`]
    /// (their `index` is a run of the table; `ratio` is how far the typical benchmark moved).
    /// These stay in every series that took them, so each benchmark's page shows them too.
    pub fn suite_steps(&self) -> &[ChangePoint] {
        &self.suite_steps
    }

    /// Benchmark `b`'s values (`values[i]` from run `runs[i]`) without what their runs shared,
    /// by the quieter of two estimates of it: the whole machine's factor, or the median offset
    /// of the `PEERS` (5) benchmarks whose run-to-run movement is most like `b`'s (the largest
    /// correlation of successive differences). Benchmarks of one kind (memory-bound, say) often
    /// move together and apart from the rest of the suite. Either factor keeps its own steps
    /// ([`transient`]), so a change that slows a whole family of benchmarks stays in each of
    /// their series, and each is applied with the series' own loading ([`without_shared`]).
    pub fn adjust(&self, b: usize, runs: &[usize], values: &[f64], config: &Config) -> Vec<f64> {
        let at = |factors: &[f64]| -> Vec<f64> {
            runs.iter()
                .map(|&r| factors.get(r).copied().unwrap_or(0.0))
                .collect()
        };
        let by_machine = without_shared(values, &at(&self.machine));
        let Some(peers) = self.peer_factors(b) else {
            return by_machine;
        };
        let by_peers = without_shared(values, &at(&transient(&peers, config)));
        let noise =
            |v: &[f64]| successive_difference_sigma(&v.iter().map(|x| x.ln()).collect::<Vec<_>>());
        if noise(&by_peers) < noise(&by_machine) {
            by_peers
        } else {
            by_machine
        }
    }

    /// The median offset, in each run, of `b`'s closest peers; the machine's factor in runs where
    /// fewer than three of them ran. `None` without enough peers.
    fn peer_factors(&self, b: usize) -> Option<Vec<f64>> {
        let offset = |r: usize, c: usize| {
            self.columns
                .get(c)
                .and_then(|column| column.get(r))
                .copied()
                .filter(|v| !v.is_nan())
        };
        let mut scores: Vec<(f64, usize)> = (0..self.columns.len())
            .filter(|&p| p != b)
            .filter_map(|p| {
                // The correlation of the two benchmarks' successive differences over the runs
                // both have, without collecting them (this runs for every pair of a machine's
                // benchmarks): a pass to count them, one for their means, one for the sums.
                let (mine, theirs) = (self.columns.get(b)?, self.columns.get(p)?);
                let both = || {
                    mine.iter()
                        .zip(theirs)
                        .filter(|(x, y)| !(x.is_nan() || y.is_nan()))
                        .map(|(x, y)| (*x, *y))
                };
                let steps = || {
                    both()
                        .scan(None, |previous: &mut Option<(f64, f64)>, (x, y)| {
                            let step = previous.map(|(px, py)| (x - px, y - py));
                            *previous = Some((x, y));
                            Some(step)
                        })
                        .flatten()
                };
                if both().count() < MIN_SHARED_RUNS {
                    return None;
                }
                let correlation = correlation(steps);
                correlation.is_finite().then_some((correlation, p))
            })
            .collect();
        if scores.len() < MIN_SUITE {
            return None;
        }
        scores.sort_by(|x, y| y.0.total_cmp(&x.0));
        let peers: Vec<usize> = scores.iter().take(PEERS).map(|&(_, p)| p).collect();
        Some(
            (0..self.machine.len())
                .map(|r| {
                    let mut xs: Vec<f64> = peers.iter().filter_map(|&p| offset(r, p)).collect();
                    if xs.len() < MIN_SUITE {
                        self.machine.get(r).copied().unwrap_or(0.0)
                    } else {
                        median(&mut xs)
                    }
                })
                .collect(),
        )
    }
}

/// Pearson's correlation of the pairs `pairs()` yields (each call yields them again).
fn correlation<I: Iterator<Item = (f64, f64)>>(pairs: impl Fn() -> I) -> f64 {
    let n = pairs().count() as f64;
    let (mx, my) = pairs().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in pairs() {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    sxy / (sxx * syy).sqrt()
}

/// Loadings tried by [`without_shared`]: 0, 0.05, …, 1.5.
const LOADINGS: usize = 30;

/// `values` (positive, oldest first) without what their runs shared with the machine's other
/// benchmarks: each divided by `exp(β · factor)`, the run's [`run_factors`] entry, with the
/// loading β (0 to 1.5) that leaves the series quietest (the smallest MAD of successive
/// differences). A benchmark that moves with its machine gets β ≈ 1; one that does not (a
/// memory-bound benchmark on a machine whose factor follows the CPU) keeps its own values, where
/// dividing by the factor would only add the other benchmarks' noise. `factors` is aligned with
/// `values`; a series too short to tell is divided by the whole factor.
pub fn without_shared(values: &[f64], factors: &[f64]) -> Vec<f64> {
    let with = |beta: f64| -> Vec<f64> {
        values
            .iter()
            .zip(factors)
            .map(|(v, f)| v.ln() - beta * f)
            .collect()
    };
    let beta = if values.len() < 5 {
        1.0
    } else {
        (0..=LOADINGS)
            .map(|i| i as f64 * 1.5 / LOADINGS as f64)
            .map(|beta| (successive_difference_sigma(&with(beta)), beta))
            .filter(|(sigma, _)| sigma.is_finite())
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or(1.0, |(_, beta)| beta)
    };
    with(beta).into_iter().map(f64::exp).collect()
}

#[cfg(test)]
mod suite_tests {
    use super::*;

    /// Six benchmarks at different typical levels over 60 runs, ±2% noise, `at` changing each
    /// run's value of benchmark b (None: not run).
    fn suite(at: impl Fn(usize, usize, f64) -> Option<f64>) -> Vec<Vec<Option<f64>>> {
        let mut state = 7u64;
        (0..60)
            .map(|run| {
                (0..6)
                    .map(|b| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        let u = (state % 10_000) as f64 / 10_000.0 - 0.5;
                        let level = 1000.0 * (1.0 + b as f64);
                        at(run, b, level * (1.0 + 0.04 * u))
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_benchmark_that_stops_being_run_is_no_step_of_the_suite() {
        // Benchmark 2 sat 30% above its own median for its first 30 runs (its own step), and is
        // not run after run 30: the runs after lose it, and must not read as a suite step.
        let table = suite(|run, b, v| match (run, b) {
            (30.., 2) => None,
            (0..30, 2) => Some(v * 1.3),
            (0..30, 3) => Some(v * 1.25),
            (_, 3) => Some(v),
            _ => Some(v),
        });
        let shared = Shared::new(&table, &Config::default());
        assert!(
            shared.suite_steps().is_empty(),
            "{:?}",
            shared.suite_steps()
        );
    }

    #[test]
    fn a_step_every_benchmark_took_is_a_step_of_the_suite() {
        let table = suite(|run, _, v| Some(if run >= 30 { v * 1.2 } else { v }));
        let shared = Shared::new(&table, &Config::default());
        let steps = shared.suite_steps();
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!(steps[0].index, 30);
        assert!((steps[0].ratio - 1.2).abs() < 0.03, "{steps:?}");
    }
}
