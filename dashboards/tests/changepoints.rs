//! How good is the change-point detector? Real github-action-benchmark histories from
//! ../shared/corpus (rune, lofty-rs, flatcontainer), unmodified and with steps of 5, 10, 15 and
//! 25% injected at random places. Recall counts a detection within 3 points of the step; false
//! change points are counted on the unmodified histories, per 100 points.
//!
//! Print the table: `cargo test -p benchgate-dashboards --release --test changepoints -- --nocapture`
//! (add `--ignored` for the table without run factors).
//!
//! Each series is measured twice: as it is, and divided by its runs' shared factors
//! (`run_factors`: most run-to-run movement on a shared runner is common to the whole run), which
//! is what the site does; the assertions are on the second.
//!
//! The targets (recall ≥ 90% for steps of 10% or more, ≤ 1 false change point per 100
//! points) are NOT met on these histories: their runs move 6–12% from one to the next
//! (shared runners, two CPU models), and the unmodified histories hold real changes that count
//! as "false" here. The assertions below are floors at what the detector reaches today
//! (docs/changepoints.md has the table), so a change that makes it worse fails.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::collections::BTreeMap;
use std::path::Path;

use benchgate_dashboards::changepoint::{Config, detect, run_factors};
use benchgate_dashboards::history;

const HISTORIES: [&str; 3] = [
    "rune-rs__rune",
    "Serial-ATA__lofty-rs",
    "antiguru__flatcontainer",
];
const STEPS: [f64; 4] = [0.05, 0.10, 0.15, 0.25];
const TRIALS: usize = 10;

/// Every run's value of every benchmark, `None` where it has none.
type Rows = Vec<Vec<Option<f64>>>;
/// A benchmark: its column, and the runs it has a value in.
type Column = (usize, Vec<usize>);

/// One history as a table: every run (in date order) × every benchmark, and the benchmarks with
/// 20 points or more as (column, the runs they have a value in).
fn table(name: &str) -> (Rows, Vec<Column>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(name)
        .join("dev/bench/data.js");
    let entries = history::read(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for entry in &entries {
        for bench in &entry.benches {
            let next = names.len();
            names.entry(bench.name.clone()).or_insert(next);
        }
    }
    let mut rows = vec![vec![None; names.len()]; entries.len()];
    for (run, entry) in entries.iter().enumerate() {
        for bench in &entry.benches {
            rows[run][names[&bench.name]] = Some(bench.ns.max(1.0));
        }
    }
    let columns = names
        .values()
        .map(|&b| {
            let runs: Vec<usize> = (0..rows.len()).filter(|&r| rows[r][b].is_some()).collect();
            (b, runs)
        })
        .filter(|(_, runs)| runs.len() >= 20)
        .collect();
    (rows, columns)
}

/// A column's values, divided by each run's shared factor when `factors` are given.
fn column(
    rows: &[Vec<Option<f64>>],
    b: usize,
    runs: &[usize],
    factors: Option<&[f64]>,
) -> Vec<f64> {
    runs.iter()
        .map(|&r| rows[r][b].unwrap() / factors.map_or(1.0, |f| f[r].exp()))
        .collect()
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The harness: (the table, the false rate per 100 points, recall per step). With
/// `normalize`, each series is divided by its runs' shared factors first (computed with the
/// injected step in place, as the site would see it).
fn measure(normalize: bool) -> (String, f64, [f64; 4]) {
    let config = Config::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut table = String::from(
        "| history | series | points | false CPs / 100 points | recall 5% | recall 10% | recall 15% | recall 25% |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let (mut all_points, mut all_false) = (0usize, 0usize);
    let mut all_hits = [0usize; 4];
    let mut all_trials = 0usize;
    for name in HISTORIES {
        let (rows, columns) = self::table(name);
        let factors = normalize.then(|| run_factors(&rows));
        let points: usize = columns.iter().map(|(_, runs)| runs.len()).sum();
        let false_points: usize = columns
            .iter()
            .map(|(b, runs)| detect(&column(&rows, *b, runs, factors.as_deref()), &config).len())
            .sum();
        let mut hits = [0usize; 4];
        let mut trials = 0usize;
        for (b, runs) in &columns {
            for _ in 0..TRIALS {
                // A step anywhere but the first 10 points and the last 5.
                let at = 10 + rng.below(runs.len() - 15);
                trials += 1;
                for (k, step) in STEPS.iter().enumerate() {
                    let mut stepped = rows.clone();
                    for &r in &runs[at..] {
                        stepped[r][*b] = stepped[r][*b].map(|v| v * (1.0 + step));
                    }
                    let factors = normalize.then(|| run_factors(&stepped));
                    let values = column(&stepped, *b, runs, factors.as_deref());
                    if detect(&values, &config)
                        .iter()
                        .any(|p| p.index.abs_diff(at) <= 3)
                    {
                        hits[k] += 1;
                    }
                }
            }
        }
        let recall = |k: usize| format!("{:.1}%", 100.0 * hits[k] as f64 / trials as f64);
        table.push_str(&format!(
            "| {name} | {} | {points} | {:.2} | {} | {} | {} | {} |\n",
            columns.len(),
            100.0 * false_points as f64 / points as f64,
            recall(0),
            recall(1),
            recall(2),
            recall(3)
        ));
        all_points += points;
        all_false += false_points;
        all_trials += trials;
        for k in 0..4 {
            all_hits[k] += hits[k];
        }
    }
    let recall: [f64; 4] = std::array::from_fn(|k| all_hits[k] as f64 / all_trials as f64);
    let false_rate = 100.0 * all_false as f64 / all_points as f64;
    table.push_str(&format!(
        "| all | | {all_points} | {false_rate:.2} | {:.1}% | {:.1}% | {:.1}% | {:.1}% |\n",
        100.0 * recall[0],
        100.0 * recall[1],
        100.0 * recall[2],
        100.0 * recall[3]
    ));
    (table, false_rate, recall)
}

/// The same detector on each series as it is, for comparison (docs/changepoints.md):
/// `cargo test -p benchgate-dashboards --release --test changepoints -- --ignored --nocapture`.
#[test]
#[ignore = "a comparison table, not a check; the site divides by run factors"]
fn the_same_histories_without_run_factors() {
    let (raw, ..) = measure(false);
    println!("Each series as it is:\n{raw}");
}

#[test]
fn recall_and_false_change_points_on_real_histories() {
    let (table, false_rate, recall) = measure(true);
    println!("Each series divided by its runs' shared factors (what the site does):\n{table}");
    assert!(
        false_rate <= 1.6,
        "{false_rate} change points per 100 unmodified points\n{table}"
    );
    for (k, floor) in [(1, 0.68), (2, 0.83), (3, 0.94)] {
        assert!(
            recall[k] >= floor,
            "recall of {}% steps is {} < {floor}\n{table}",
            STEPS[k] * 100.0,
            recall[k]
        );
    }
}
