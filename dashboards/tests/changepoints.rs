//! How good is the change-point detector? Real github-action-benchmark histories from
//! ../shared/corpus (rune, lofty-rs, flatcontainer), unmodified and with steps of 5, 10, 15 and
//! 25% injected at random places. Recall counts a detection within 3 points of the step; false
//! change points are counted on the unmodified histories, per 100 points: all of them, and those
//! where no step is visible (see [`visible`]; the issue counts false change points "where a
//! maintainer would see none", and these histories hold real changes a maintainer would see).
//!
//! Print the table: `cargo test -p benchgate-dashboards --release --test changepoints -- --nocapture`
//! (add `--ignored` for the table without run factors).
//!
//! Each series is measured twice: as it is, and without what its runs shared with the machine's
//! other benchmarks or its closest peers (`Shared::adjust`: most run-to-run movement on a shared
//! runner is common to the whole run, but a step the whole suite or a family took stays), which
//! is what the site does; the assertions are on the second.
//!
//! The targets are recall ≥ 90% for steps of 10% or more and ≤ 1 false change point per
//! 100 points where no step is visible; both are asserted below, with floors for 15% and 25%
//! steps at what the detector reaches today (docs/changepoints.md has the table), so a change
//! that makes it worse fails. Recall of 10% steps is 90.9% over 860 trials: a margin of about
//! one standard error. Precision is judged by eye on labelled charts
//! (`precision_by_eye_on_labelled_charts`). These runs move 6–12% from one to the next (shared runners, two CPU
//! models), and many steps land next to the histories' own changes or in 20-point series.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

#[path = "../../tests/common/shared_corpus.rs"]
mod shared_corpus;

use shared_corpus::shared_corpus;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use benchgate_collector::history;
use benchgate_dashboards::changepoint::{Config, Shared, detect};

const HISTORIES: [&str; 3] = [
    "rune-rs__rune",
    "Serial-ATA__lofty-rs",
    "antiguru__flatcontainer",
];
/// The histories whose charts are labelled by eye: [`HISTORIES`], hyper's two suites (whole
/// nanoseconds per iteration, 440 runs), rivet's (series at 94 ns that read only a handful
/// of values) and rhai's (49 series of whole nanoseconds, 265 runs, in this crate's fixtures).
const LABELLED: [&str; 7] = [
    "rune-rs__rune",
    "Serial-ATA__lofty-rs",
    "antiguru__flatcontainer",
    "hyperium__hyper:end_to_end",
    "hyperium__hyper:pipeline",
    "pulseengine__rivet",
    "schungx__rhai",
];
const STEPS: [f64; 4] = [0.05, 0.10, 0.15, 0.25];
const TRIALS: usize = 10;

/// Every run's value of every benchmark, `None` where it has none.
type Rows = Vec<Vec<Option<f64>>>;
/// A benchmark: its column, and the runs it has a value in.
type Column = (usize, Vec<usize>);

/// One history as a table: every run (in date order) × every benchmark, and the benchmarks with
/// 20 points or more as (column, the runs they have a value in).
fn table(corpus: &Path, name: &str) -> (Rows, Vec<Column>) {
    table_of(corpus, name, 20)
}

/// A history's data file: `dev/bench/data.js`, else `data.json` (git-bench writes that), in
/// this crate's `tests/fixtures/histories` (histories fetched for labelling, trimmed; see its
/// SOURCES.md) or else in the corpus.
fn data_file(corpus: &Path, name: &str) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/histories")
        .join(name);
    let dir = if fixture.is_dir() {
        fixture
    } else {
        corpus.join(name)
    }
    .join("dev/bench");
    let js = dir.join("data.js");
    if js.is_file() {
        js
    } else {
        dir.join("data.json")
    }
}

/// The entries of a history: `owner__repo` (all its suites) or `owner__repo:suite` (one suite,
/// which the site draws as a machine of its own).
fn entries(corpus: &Path, name: &str) -> Vec<history::Entry> {
    let (repo, suite) = name.split_once(':').unwrap_or((name, ""));
    let path = data_file(corpus, repo);
    let mut entries = history::read(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    if !suite.is_empty() {
        entries.retain(|e| e.suite == suite);
        assert!(!entries.is_empty(), "{name}: no suite {suite}");
    }
    entries
}

/// As [`table`], keeping the benchmarks with `min_points` points or more.
fn table_of(corpus: &Path, name: &str, min_points: usize) -> (Rows, Vec<Column>) {
    let entries = entries(corpus, name);
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
            rows[run][names[&bench.name]] = Some(bench.value.max(1.0));
        }
    }
    let columns = names
        .values()
        .map(|&b| {
            let runs: Vec<usize> = (0..rows.len()).filter(|&r| rows[r][b].is_some()).collect();
            (b, runs)
        })
        .filter(|(_, runs)| runs.len() >= min_points)
        .collect();
    (rows, columns)
}

/// A column's values, without what they share with their runs when `shared` is given (as the
/// site does it).
fn column(
    rows: &[Vec<Option<f64>>],
    b: usize,
    runs: &[usize],
    shared: Option<&Shared>,
) -> Vec<f64> {
    let values: Vec<f64> = runs.iter().map(|&r| rows[r][b].unwrap()).collect();
    match shared {
        Some(shared) => shared.adjust(b, runs, &values, &Config::default()),
        None => values,
    }
}

/// The `q` quantile of `xs` (linear between order statistics).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let at = q * (v.len() - 1) as f64;
    let (low, high) = (at.floor() as usize, at.ceil() as usize);
    v[low] + (v[high] - v[low]) * (at - low as f64)
}

/// Whether a maintainer would see a step at `t` in the chart of `x`, judged without the
/// detector: the up to 10 points before and the up to 10 from `t` differ by 10% or more in
/// their medians, and their interquartile ranges do not overlap. Never with fewer than 5
/// points on a side. (Until 2026-11-23 it needed 10 a side, so it could not judge the first or
/// last 10 points of a series and counted every change point there as one no maintainer
/// would see: in a 20-point series, all but those at point 10.)
fn visible(x: &[f64], t: usize) -> bool {
    const SIDE: usize = 10;
    const FEWEST: usize = 5;
    if t < FEWEST || t + FEWEST > x.len() {
        return false;
    }
    let (a, b) = (
        &x[t.saturating_sub(SIDE)..t],
        &x[t..(t + SIDE).min(x.len())],
    );
    let (before, after) = (quantile(a, 0.5), quantile(b, 0.5));
    if (after / before).ln().abs() < 1.1f64.ln() {
        return false;
    }
    if after > before {
        quantile(a, 0.75) < quantile(b, 0.25)
    } else {
        quantile(b, 0.75) < quantile(a, 0.25)
    }
}

/// Whether a visible step (in `raw` or in `adjusted`) lies within 3 points of `i`.
fn explained(i: usize, raw: &[f64], adjusted: &[f64]) -> bool {
    (i.saturating_sub(3)..=(i + 3).min(raw.len() - 1))
        .any(|t| visible(raw, t) || visible(adjusted, t))
}

/// How many of `found` have no visible step (in `raw` or in `adjusted`) within 3 points.
fn unexplained(found: &[usize], raw: &[f64], adjusted: &[f64]) -> usize {
    found
        .iter()
        .filter(|&&i| !explained(i, raw, adjusted))
        .count()
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

/// What the harness measured.
struct Measured {
    table: String,
    /// Change points per 100 points of the unmodified histories.
    false_rate: f64,
    /// Of those, the ones with no visible step within 3 points.
    unseen_rate: f64,
    /// Of the points of the unmodified histories, the share with a visible step within 3
    /// points: the precision of a detector that put its change points at random.
    chance: f64,
    /// Recall of each of [`STEPS`].
    recall: [f64; 4],
}

/// The harness: the table, the false rates per 100 points, recall per step. With
/// `normalize`, each series is freed of what its runs shared first, as the site does it
/// (`Shared::new` and `Shared::adjust`, computed with the injected step in place).
fn measure(corpus: &Path, normalize: bool) -> Measured {
    measure_on(corpus, &HISTORIES, 20, normalize)
}

/// [`measure`] on `histories`, counting the benchmarks with `min_points` points or more.
fn measure_on(corpus: &Path, histories: &[&str], min_points: usize, normalize: bool) -> Measured {
    let config = Config::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut table = String::from(
        "| history | series | points | CPs / 100 points | where no step is visible | precision | by chance | recall 5% | recall 10% | recall 15% | recall 25% |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let (mut all_points, mut all_false, mut all_unseen) = (0usize, 0usize, 0usize);
    let mut all_near = 0usize;
    let mut all_hits = [0usize; 4];
    let mut all_trials = 0usize;
    for &name in histories {
        let (rows, columns) = self::table_of(corpus, name, min_points);
        let shared = normalize.then(|| Shared::new(&rows, &config));
        let points: usize = columns.iter().map(|(_, runs)| runs.len()).sum();
        let (mut false_points, mut unseen, mut near) = (0usize, 0usize, 0usize);
        for (b, runs) in &columns {
            let adjusted = column(&rows, *b, runs, shared.as_ref());
            let raw = column(&rows, *b, runs, None);
            let found: Vec<usize> = detect(&adjusted, &config.for_series(&raw))
                .iter()
                .map(|p| p.index)
                .collect();
            false_points += found.len();
            unseen += unexplained(&found, &raw, &adjusted);
            near += (0..raw.len())
                .filter(|&i| explained(i, &raw, &adjusted))
                .count();
        }
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
                    let shared = normalize.then(|| Shared::new(&stepped, &config));
                    let values = column(&stepped, *b, runs, shared.as_ref());
                    let raw = column(&stepped, *b, runs, None);
                    if detect(&values, &config.for_series(&raw))
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
            "| {name} | {} | {points} | {:.2} | {:.2} | {:.1}% | {:.1}% | {} | {} | {} | {} |\n",
            columns.len(),
            100.0 * false_points as f64 / points as f64,
            100.0 * unseen as f64 / points as f64,
            100.0 * (1.0 - unseen as f64 / false_points as f64),
            100.0 * near as f64 / points as f64,
            recall(0),
            recall(1),
            recall(2),
            recall(3)
        ));
        all_points += points;
        all_false += false_points;
        all_unseen += unseen;
        all_near += near;
        all_trials += trials;
        for k in 0..4 {
            all_hits[k] += hits[k];
        }
    }
    let recall: [f64; 4] = std::array::from_fn(|k| all_hits[k] as f64 / all_trials as f64);
    let false_rate = 100.0 * all_false as f64 / all_points as f64;
    let unseen_rate = 100.0 * all_unseen as f64 / all_points as f64;
    let chance = all_near as f64 / all_points as f64;
    table.push_str(&format!(
        "| all | | {all_points} | {false_rate:.2} | {unseen_rate:.2} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% |\n",
        100.0 * (1.0 - all_unseen as f64 / all_false as f64),
        100.0 * chance,
        100.0 * recall[0],
        100.0 * recall[1],
        100.0 * recall[2],
        100.0 * recall[3]
    ));
    Measured {
        table,
        false_rate,
        unseen_rate,
        chance,
        recall,
    }
}

/// The site's detector on histories its defaults were not chosen on (series of 16 points or
/// more), for docs/changepoints.md:
/// `cargo test -p benchgate-dashboards --release --test changepoints -- --ignored --nocapture`.
#[test]
#[ignore = "a comparison table, not a check"]
fn histories_it_was_not_tuned_on() {
    let Some(corpus) = shared_corpus("histories_it_was_not_tuned_on") else {
        return;
    };
    let histories = [
        "pulseengine__rivet",
        "risinglightdb__risinglight",
        "fedemagnani__git-bench",
        "hyperium__hyper:end_to_end",
    ];
    let measured = measure_on(&corpus, &histories, 16, true);
    println!("Histories it was not tuned on:\n{}", measured.table);
}

/// The same detector on each series as it is, for comparison (docs/changepoints.md):
/// `cargo test -p benchgate-dashboards --release --test changepoints -- --ignored --nocapture`.
#[test]
#[ignore = "a comparison table, not a check; the site divides by run factors"]
fn the_same_histories_without_run_factors() {
    let Some(corpus) = shared_corpus("the_same_histories_without_run_factors") else {
        return;
    };
    let raw = measure(&corpus, false);
    println!("Each series as it is:\n{}", raw.table);
}

#[test]
fn recall_and_false_change_points_on_real_histories() {
    let Some(corpus) = shared_corpus("recall_and_false_change_points_on_real_histories") else {
        return;
    };
    let Measured {
        table,
        false_rate,
        unseen_rate,
        chance,
        recall,
    } = measure(&corpus, true);
    // Precision: the change points where a step is visible. Well above what change points put
    // at random would score, and not below today's (docs/changepoints.md).
    let precision = 1.0 - unseen_rate / false_rate;
    assert!(
        precision >= 0.65 && precision >= 2.0 * chance,
        "precision {precision}, by chance {chance}\n{table}"
    );
    println!("Each series without what its runs shared (what the site does):\n{table}");
    // The target.
    assert!(
        unseen_rate <= 1.0,
        "{unseen_rate} change points per 100 unmodified points where no step is visible\n{table}"
    );
    assert!(
        false_rate <= 2.7,
        "{false_rate} change points per 100 unmodified points\n{table}"
    );
    for (k, floor) in [(1, 0.90), (2, 0.94), (3, 0.975)] {
        assert!(
            recall[k] >= floor,
            "recall of {}% steps is {} < {floor}\n{table}",
            STEPS[k] * 100.0,
            recall[k]
        );
    }
}

/// Precision as a reader of the chart judges it: `fixtures/changepoint-labels.json` holds
/// change points and random places of these histories, drawn and labelled by eye, blind (see
/// the file's `about` and docs/changepoints.md). Of the labelled change points the detector
/// still reports (within a run), the share that shows a step, per history and pooled, must not
/// fall; and the labels must still cover the detector (at least 150 of them reported), or they
/// describe another detector: label anew.
#[test]
fn precision_by_eye_on_labelled_charts() {
    let Some(corpus) = shared_corpus("precision_by_eye_on_labelled_charts") else {
        return;
    };
    let labels: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/changepoint-labels.json")).unwrap();
    let found: BTreeMap<(String, String), Vec<usize>> = searched(&corpus)
        .into_iter()
        .map(|s| ((s.history.to_owned(), s.benchmark), s.found))
        .collect();
    // Per history: (change points still reported, of them with a step, random places, of them
    // with a step).
    let mut tally: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    for item in labels["items"].as_array().unwrap() {
        let history = item["history"].as_str().unwrap().to_owned();
        let key = (
            history.clone(),
            item["benchmark"].as_str().unwrap().to_owned(),
        );
        let index = item["index"].as_u64().unwrap() as usize;
        let step = usize::from(item["step"].as_bool().unwrap());
        let counts = tally.entry(history).or_default();
        if item["shown"] == "random place" {
            counts[2] += 1;
            counts[3] += step;
        } else if found[&key].iter().any(|p| p.abs_diff(index) <= 1) {
            counts[0] += 1;
            counts[1] += step;
        }
    }
    let share = |part: usize, whole: usize| 100.0 * part as f64 / whole.max(1) as f64;
    let row = |name: &str, counts: &[usize; 4]| {
        println!(
            "| {name} | {} | {} ({:.1}%) | {} of {} ({:.1}%) |",
            counts[0],
            counts[1],
            share(counts[1], counts[0]),
            counts[3],
            counts[2],
            share(counts[3], counts[2])
        );
    };
    let mut all = [0usize; 4];
    println!(
        "| history | change points still reported | with a step | random places with a step |"
    );
    println!("|---|---:|---:|---:|");
    for (history, counts) in &tally {
        row(history, counts);
        for k in 0..4 {
            all[k] += counts[k];
        }
    }
    row("all", &all);
    assert!(
        all[0] >= 150,
        "only {} labelled change points are reported: label anew",
        all[0]
    );
    // Each history on its own, not below where it is today (docs/changepoints.md: the target
    // is 90% on each, and hyper, rivet, rune and rhai fall short of it).
    for (history, floor) in PRECISION_TODAY {
        let counts = tally[history];
        let precision = share(counts[1], counts[0]);
        assert!(
            precision >= floor,
            "{history}: {precision:.1}% by eye, below {floor}%"
        );
    }
    // Pooled, not below today's 80.8% (80.3% before a step in the newest runs was placed
    // only where it holds): 82.8% before batch 7 added 40 of rhai's change points (23 with a
    // step), 85.4% before batch 6 added 40 of hyper's (27 with a step).
    let pooled = share(all[1], all[0]);
    assert!(pooled >= 80.5, "{pooled:.1}% by eye");
}

/// Each history's precision by eye today, rounded down: a change to the detector that makes
/// one of them worse fails [`precision_by_eye_on_labelled_charts`].
const PRECISION_TODAY: [(&str, f64); 6] = [
    ("rune-rs__rune", 88.5),
    ("Serial-ATA__lofty-rs", 94.0),
    ("antiguru__flatcontainer", 90.0),
    ("hyperium__hyper:end_to_end", 69.0),
    ("pulseengine__rivet", 88.0),
    ("schungx__rhai", 58.5),
];

/// One series of the histories as the site searches it.
struct Searched {
    history: &'static str,
    benchmark: String,
    raw: Vec<f64>,
    adjusted: Vec<f64>,
    found: Vec<usize>,
}

/// Every series of [`LABELLED`] freed of what its runs shared, with its change points.
fn searched(corpus: &Path) -> Vec<Searched> {
    let config = Config::default();
    let mut out = Vec::new();
    for history in LABELLED {
        let (rows, columns) = self::table(corpus, history);
        let names = benchmark_names(corpus, history);
        let shared = Shared::new(&rows, &config);
        for (b, runs) in &columns {
            let raw = column(&rows, *b, runs, None);
            let config = config.for_series(&raw);
            let adjusted = column(&rows, *b, runs, Some(&shared));
            let found = detect(&adjusted, &config).iter().map(|p| p.index).collect();
            out.push(Searched {
                history,
                benchmark: names[*b].clone(),
                raw,
                adjusted,
                found,
            });
        }
    }
    out
}

/// The benchmark names of `name`'s history, by column (as [`table`] numbers them).
fn benchmark_names(corpus: &Path, name: &str) -> Vec<String> {
    let entries = entries(corpus, name);
    let mut names: Vec<String> = Vec::new();
    for entry in &entries {
        for bench in &entry.benches {
            if !names.contains(&bench.name) {
                names.push(bench.name.clone());
            }
        }
    }
    names
}

/// Every series of the histories as the site searches it, with its change points, for
/// `scripts/changepoint-sheets.py` (the charts labelled by eye; see docs/changepoints.md):
/// `DUMP=/tmp/series.json cargo test -p benchgate-dashboards --release --test changepoints
/// series_for_labelling -- --ignored`.
#[test]
#[ignore = "writes the series for labelling by eye"]
fn series_for_labelling() {
    let Some(corpus) = shared_corpus("series_for_labelling") else {
        return;
    };
    let out: Vec<serde_json::Value> = searched(&corpus)
        .into_iter()
        .map(|s| {
            serde_json::json!({
                "history": s.history, "benchmark": s.benchmark, "raw": s.raw,
                "adjusted": s.adjusted, "found": s.found,
            })
        })
        .collect();
    let path = std::env::var("DUMP").expect("DUMP=FILE: where to write the series");
    std::fs::write(path, serde_json::to_vec(&out).unwrap()).unwrap();
}
