//! How good is the change-point detector? Real github-action-benchmark histories from
//! ../shared/corpus (rune, lofty-rs, flatcontainer), unmodified and with steps of 5, 10, 15 and
//! 25% injected at random places. Recall counts a detection within 3 points of the step; false
//! change points are counted on the unmodified histories, per 100 points.
//!
//! Print the table: `cargo test -p benchgate-dashboards --release --test changepoints -- --nocapture`.
//!
//! The targets (recall ≥ 90% for steps of 10% or more, ≤ 1 false change point per 100
//! points) are NOT met on these histories: their runs move 6–12% from one to the next
//! (shared runners, two CPU models), and the unmodified histories hold real changes that count
//! as "false" here. The assertions below are floors at what the detector reaches today
//! (docs/changepoints.md has the table), so a change that makes it worse fails.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::collections::BTreeMap;
use std::path::Path;

use benchgate_dashboards::changepoint::{Config, detect};
use benchgate_dashboards::history;

const HISTORIES: [&str; 3] = [
    "rune-rs__rune",
    "Serial-ATA__lofty-rs",
    "antiguru__flatcontainer",
];
const STEPS: [f64; 4] = [0.05, 0.10, 0.15, 0.25];
const TRIALS: usize = 10;

/// Every benchmark's series (ns, in date order) of one history, 20 points or more.
fn series(name: &str) -> Vec<(String, Vec<f64>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(name)
        .join("dev/bench/data.js");
    let entries = history::read(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut by_name: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for entry in &entries {
        for bench in &entry.benches {
            by_name
                .entry(bench.name.clone())
                .or_default()
                .push(bench.ns.max(1.0));
        }
    }
    by_name.into_iter().filter(|(_, v)| v.len() >= 20).collect()
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

#[test]
fn recall_and_false_change_points_on_real_histories() {
    let config = Config::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut table = String::from(
        "| history | series | points | false CPs / 100 points | recall 5% | recall 10% | recall 15% | recall 25% |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let (mut all_points, mut all_false) = (0usize, 0usize);
    let mut all_hits = [0usize; 4];
    let mut all_trials = 0usize;
    for name in HISTORIES {
        let series = series(name);
        let points: usize = series.iter().map(|(_, v)| v.len()).sum();
        let false_points: usize = series.iter().map(|(_, v)| detect(v, &config).len()).sum();
        let mut hits = [0usize; 4];
        let mut trials = 0usize;
        for (_, values) in &series {
            for _ in 0..TRIALS {
                // A step anywhere but the first 10 points and the last 5.
                let at = 10 + rng.below(values.len() - 15);
                trials += 1;
                for (k, step) in STEPS.iter().enumerate() {
                    let mut stepped = values.clone();
                    for v in &mut stepped[at..] {
                        *v *= 1.0 + step;
                    }
                    if detect(&stepped, &config)
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
            series.len(),
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
    let recall = |k: usize| all_hits[k] as f64 / all_trials as f64;
    let false_rate = 100.0 * all_false as f64 / all_points as f64;
    table.push_str(&format!(
        "| all | | {all_points} | {false_rate:.2} | {:.1}% | {:.1}% | {:.1}% | {:.1}% |\n",
        100.0 * recall(0),
        100.0 * recall(1),
        100.0 * recall(2),
        100.0 * recall(3)
    ));
    println!("{table}");
    assert!(
        false_rate <= 2.0,
        "{false_rate} change points per 100 unmodified points\n{table}"
    );
    for (k, floor) in [(1, 0.55), (2, 0.75), (3, 0.9)] {
        assert!(
            recall(k) >= floor,
            "recall of {}% steps is {} < {floor}\n{table}",
            STEPS[k] * 100.0,
            recall(k)
        );
    }
}
