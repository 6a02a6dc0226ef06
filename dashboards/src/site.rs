//! The trend site: plain HTML and CSS (a few lines of JavaScript for the filter box), SVG charts,
//! no external resources, readable on a phone. [`build`] renders every page from the data, as
//! (relative path, content); the binary writes them (`benchgate dashboard`) or serves them.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use benchgate_core::to_hex;
use rayon::prelude::*;
use sha2::{Digest as _, Sha256};

use crate::changepoint::{ChangePoint, Config, Shared, detect};
use crate::chart::{BudgetLine, Point, date};

mod index;
mod page;

use index::{Standing, machine_index};
use page::{benchmark_page, row_svg};

/// One benchmark's trend on one machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The benchmark id.
    pub benchmark: String,
    /// Its points, oldest first.
    pub points: Vec<Point>,
    /// Time budgets on its median, drawn on the chart.
    pub budgets: Vec<BudgetLine>,
    /// A custom metric's unit, or the unit of a Criterion throughput benchmark's rate; `None`
    /// for Criterion's ns per iteration.
    pub unit: Option<String>,
    /// Whether a higher value is better (a rate such as `Hz`, a custom bigger-is-better
    /// metric); `false` for times, where lower is better.
    pub higher_is_better: bool,
    /// For an instruction count: where its instructions went at its newest change, when both
    /// runs were stored with their profile by function.
    pub count_change: Option<CountChange>,
    /// For a Criterion benchmark that declares its work per iteration: Criterion's kind
    /// (`Bytes`, `Elements`, …). Its points are then rates in `unit`, each run's own work over
    /// its own time (higher is better), as Criterion and the gate's report show them: an input
    /// that grows between runs is not a slowdown. Change points are searched in time per unit
    /// of work, with the machine's other Criterion benchmarks.
    pub throughput: Option<String>,
}

impl Series {
    /// Whether Criterion timed it (a time per iteration or a throughput): the series that
    /// move with their runs, searched without what the runs shared.
    fn timed(&self) -> bool {
        self.unit.is_none() || self.throughput.is_some()
    }

    /// Its values as times (a rate as time per unit of work, in any scale), for the change
    /// point search, which reads every Criterion series in one direction.
    fn as_times(&self) -> Vec<f64> {
        self.points
            .iter()
            .map(|p| {
                if self.throughput.is_some() {
                    p.value.recip()
                } else {
                    p.value
                }
            })
            .collect()
    }
}

/// Where an instruction count's instructions went between two runs: the newest change of the
/// count, explained by function from the profiles stored with both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CountChange {
    /// The commit of the run before the change.
    pub before: String,
    /// The commit of the run that changed.
    pub after: String,
    /// The functions whose own instructions changed most, and everything else.
    pub profile: benchgate_gate::report::CountProfile,
}

/// One machine (fingerprint) of a repository, with what describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The fingerprint hash.
    pub fingerprint: String,
    /// Its components, (name, value), in a fixed order.
    pub components: Vec<(String, String)>,
    /// Every benchmark measured on it.
    pub series: Vec<Series>,
}

/// A repository and its machines.
#[derive(Debug, Clone, PartialEq)]
pub struct Repository {
    /// `owner/name`.
    pub name: String,
    /// Its machines, the one with the most recent run first.
    pub machines: Vec<Machine>,
    /// What `benchgate bisect` found for its change points.
    pub bisections: Vec<StepMark>,
}

/// What a bisection found for one benchmark's step between two commits on one machine, shown
/// beside the change point it explains.
#[derive(Debug, Clone, PartialEq)]
pub struct StepMark {
    /// The machine.
    pub fingerprint: String,
    /// The benchmark.
    pub benchmark: String,
    /// The last commit at the old level.
    pub good: String,
    /// The first commit at the new level.
    pub bad: String,
    /// `culprit`, `several`, `no-culprit` or `inconclusive`.
    pub outcome: String,
    /// The commits that made the step, oldest first.
    pub culprits: Vec<String>,
    /// The GitHub issue opened for it.
    pub issue: Option<u64>,
}

impl StepMark {
    /// The change-point table's cell: the culprit commits, or what was found instead, and the
    /// issue.
    fn cell(&self, repository: &str) -> String {
        let mut cell = match self.outcome.as_str() {
            "no-culprit" => "no culprit (the machine)".to_owned(),
            "inconclusive" => "inconclusive".to_owned(),
            _ => self
                .culprits
                .iter()
                .map(|c| commit_link(repository, c))
                .collect::<Vec<_>>()
                .join(" + "),
        };
        if let Some(issue) = self.issue {
            let _ = write!(
                cell,
                " · <a href=\"https://github.com/{}/issues/{issue}\">issue #{issue}</a>",
                escape(repository)
            );
        }
        cell
    }
}

const DAY_MS: u64 = 24 * 3600 * 1000;
/// Benchmarks with a change point among their last this many points are listed first.
pub const RECENT: usize = 10;

const STYLE: &str = r#"
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --worse: #cf222e; --better: #1a7f37; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); margin: 0 auto; padding: 12px; max-width: 1100px; }
h1 { font-size: 1.4em; margin: 0.3em 0; overflow-wrap: anywhere; } h2 { font-size: 1.15em; margin: 1.2em 0 0.4em; }
a { color: #0969da; text-decoration: none; } a:hover { text-decoration: underline; }
.muted { color: var(--muted); } nav { margin-bottom: 8px; }
.table { overflow-x: auto; } table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.worse { color: var(--worse); } .better { color: var(--better); } .flat { color: var(--muted); }
tr.stale td { opacity: 0.6; }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; background: #eff2f5; color: var(--fg); font-size: 0.85em; }
.badge.worse { background: #ffebe9; color: var(--worse); } .badge.better { background: #dafbe1; color: var(--better); }
.chart svg { width: 100%; height: auto; } .spark { vertical-align: middle; }
input[type=search] { width: 100%; max-width: 420px; padding: 6px 8px; font-size: 1em; border: 1px solid var(--line); border-radius: 6px; }
ul.machines { padding-left: 18px; } code { font-size: 0.9em; }
#benchmarks td:first-child { white-space: normal; overflow-wrap: anywhere; } .badge { white-space: nowrap; }
#benchmarks tr.stale td.num { white-space: normal; }
@media (max-width: 600px) {
  body { padding: 8px; } th, td { padding: 4px 5px; }
  #benchmarks th:nth-child(n+4), #benchmarks td:nth-child(n+4) { display: none; }
}
"#;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn page(title: &str, depth: usize, body: &str) -> String {
    let root = "../".repeat(depth);
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body><nav><a href=\"{root}index.html\">benchgate</a></nav>{body}</body></html>\n",
        escape(title)
    )
}

pub use benchgate_gate::report::links::slug;

/// The first 12 digits of a fingerprint: its directory and its name for people.
fn short(fingerprint: &str) -> &str {
    &fingerprint[..fingerprint.len().min(12)]
}

fn machine_dir(repository: &str, machine: &Machine) -> String {
    format!("{repository}/{}", short(&machine.fingerprint))
}

/// Whether a change is worse or better: red or green, and the words to say so.
fn judged(ratio: f64, higher_is_better: bool) -> (&'static str, String) {
    let change = (ratio - 1.0) * 100.0;
    let worse = if higher_is_better {
        change < 0.0
    } else {
        change > 0.0
    };
    let words = format!(
        "{:.1}% {} ({})",
        change.abs(),
        if change > 0.0 { "higher" } else { "lower" },
        if worse { "worse" } else { "better" }
    );
    (if worse { "worse" } else { "better" }, words)
}

/// A signed change in percent, coloured by its direction: `higher_is_better` is `None` where
/// the values mix directions (a suite of times and rates), and then it is not coloured.
fn percent(ratio: f64, higher_is_better: Option<bool>) -> String {
    let change = (ratio - 1.0) * 100.0;
    match higher_is_better {
        Some(higher) if change.abs() > 0.5 => {
            let (class, words) = judged(ratio, higher);
            format!("<span class=\"{class}\" title=\"{words}\">{change:+.1}%</span>")
        }
        _ => format!("<span class=\"muted\">{change:+.1}%</span>"),
    }
}

fn commit_link(repository: &str, commit: &str) -> String {
    format!(
        "<a href=\"https://github.com/{}/commit/{commit}\"><code>{}</code></a>",
        escape(repository),
        &commit[..commit.len().min(12)]
    )
}

struct Row<'a> {
    series: &'a Series,
    changes: Vec<ChangePoint>,
}

impl Row<'_> {
    /// The index of the newest change point among the last [`RECENT`] points.
    fn open_change(&self) -> Option<usize> {
        let n = self.series.points.len();
        self.changes
            .iter()
            .rev()
            .find(|c| c.index + RECENT >= n)
            .map(|c| c.index)
    }

    /// Where the row sorts on its machine's index: 0 for a flagged move for the worse (a
    /// recent change point or a newest run far off), 1 for one for the better, 2 for the
    /// rest, 3 for a benchmark no longer run.
    fn urgency(&self, standing: &Standing) -> u8 {
        if standing.stale {
            return 3;
        }
        let step = self
            .open_change()
            .and_then(|i| self.changes.iter().find(|c| c.index == i))
            .map(|c| c.ratio);
        let moves: Vec<f64> = step.into_iter().chain(standing.jump).collect();
        if moves.is_empty() {
            2
        } else if moves
            .iter()
            .any(|ratio| judged(*ratio, self.series.higher_is_better).0 == "worse")
        {
            0
        } else {
            1
        }
    }
}

/// Each benchmark's change points on `machine`, in the order of its series, as its pages show
/// them: Criterion's times without what each run shared with the machine's other benchmarks, a
/// custom metric as it is.
pub fn change_points(machine: &Machine) -> Vec<Vec<ChangePoint>> {
    let config = Config::default();
    changes_of(machine, &SharedRuns::new(machine, &config), &config)
}

/// Each series is searched on its own, so on every core (rayon): the search is most of a
/// build's time.
fn changes_of(machine: &Machine, shared: &SharedRuns, config: &Config) -> Vec<Vec<ChangePoint>> {
    // Each Criterion series' place among the machine's Criterion series (`Shared`'s columns).
    let mut timed = 0;
    let columns: Vec<Option<usize>> = machine
        .series
        .iter()
        .map(|series| {
            series.timed().then(|| {
                timed += 1;
                timed - 1
            })
        })
        .collect();
    machine
        .series
        .par_iter()
        .zip(columns)
        .map(|(series, column)| {
            let raw = series.as_times();
            let config = config.for_series(&raw);
            let values = match column {
                Some(b) => shared.adjust(b, series, &raw, &config),
                None => raw,
            };
            let mut changes = detect(&values, &config);
            if series.throughput.is_some() {
                // Back from time per unit of work to the rates the page shows.
                for change in &mut changes {
                    change.before = change.before.recip();
                    change.after = change.after.recip();
                    change.ratio = change.ratio.recip();
                }
            }
            changes
        })
        .collect()
}

/// What each machine's pages were built from, by the machine's directory in the site: a
/// digest of everything they show (see [`digest`]).
pub type Built = BTreeMap<String, String>;

/// Bumped whenever what a machine's pages show changes for the same data (a new column, a new
/// chart), so a site built by an older benchgate is redrawn whole. 2: changes coloured by
/// direction, SI prefixes, a legend of what is drawn, the phone layout, how long a step held.
/// 3: change points judged against the resolution of coarse series. 4: where an instruction
/// count's newest change went, by function. 5: a Criterion throughput benchmark charted as
/// its rate.
const PAGES_FORMAT: u32 = 5;

/// A digest of everything a machine's pages show: the repository's name and its machines (the
/// index lists the others), this machine's series and the bisections of its steps, and the
/// pages' format. Equal digests draw equal pages: the pages are a function of these alone.
pub fn digest(repository: &Repository, machine: &Machine) -> String {
    let mut hash = Sha256::new();
    let text = |hash: &mut Sha256, t: &str| {
        hash.update((t.len() as u64).to_le_bytes());
        hash.update(t.as_bytes());
    };
    text(&mut hash, env!("CARGO_PKG_VERSION"));
    text(&mut hash, &PAGES_FORMAT.to_string());
    text(&mut hash, STYLE);
    text(&mut hash, &repository.name);
    for other in &repository.machines {
        text(&mut hash, &other.fingerprint);
        for (name, value) in &other.components {
            text(&mut hash, name);
            text(&mut hash, value);
        }
    }
    for mark in repository
        .bisections
        .iter()
        .filter(|m| m.fingerprint == machine.fingerprint)
    {
        text(&mut hash, &format!("{mark:?}"));
    }
    text(&mut hash, &machine.fingerprint);
    for series in &machine.series {
        text(&mut hash, &series.benchmark);
        text(&mut hash, series.unit.as_deref().unwrap_or(""));
        text(&mut hash, series.throughput.as_deref().unwrap_or(""));
        text(
            &mut hash,
            if series.higher_is_better {
                "higher"
            } else {
                "lower"
            },
        );
        for budget in &series.budgets {
            text(&mut hash, &budget.label);
            text(&mut hash, &budget.ns.to_bits().to_string());
        }
        let mut numbers = Vec::with_capacity(series.points.len() * 41);
        for point in &series.points {
            text(&mut hash, &point.commit);
            numbers.extend_from_slice(&point.recorded_at_ms.to_le_bytes());
            for value in [point.value, point.lower, point.upper, point.fastest] {
                numbers.extend_from_slice(&value.to_bits().to_le_bytes());
            }
            numbers.push(u8::from(point.overridden));
        }
        hash.update(&numbers);
        if let Some(change) = &series.count_change {
            text(&mut hash, &format!("{change:?}"));
        }
    }
    to_hex(&hash.finalize())
}

/// Every page of the site, as (path relative to the site's root, HTML).
pub fn build(repositories: &[Repository]) -> Vec<(String, String)> {
    render(repositories, None).0
}

/// The pages of the machines whose [`digest`] is not the one in `before` (every page, for an
/// empty `before`), and the root index, as (path relative to the site's root, HTML); and what
/// every machine's pages are now built from. A machine whose data did not change is not
/// searched for change points nor drawn again.
pub fn build_changed(
    repositories: &[Repository],
    before: &Built,
) -> (Vec<(String, String)>, Built) {
    render(repositories, Some(before))
}

/// [`build`] (`before` is `None`: every page, no digests) or [`build_changed`].
fn render(repositories: &[Repository], before: Option<&Built>) -> (Vec<(String, String)>, Built) {
    let config = Config::default();
    let mut built = Built::new();
    let mut files = Vec::new();
    let mut root = String::from("<h1>Benchmarks</h1>");
    for repository in repositories {
        let _ = write!(
            root,
            "<h2>{}</h2><ul class=\"machines\">",
            escape(&repository.name)
        );
        for machine in &repository.machines {
            let newest = machine
                .series
                .iter()
                .filter_map(|s| s.points.last())
                .map(|p| p.recorded_at_ms)
                .max();
            let _ = write!(
                root,
                "<li><a href=\"{}/index.html\">{}</a> <span class=\"muted\">{} benchmark{} · {}{}</span></li>",
                escape(&machine_dir(&repository.name, machine)),
                escape(short(&machine.fingerprint)),
                machine.series.len(),
                if machine.series.len() == 1 { "" } else { "s" },
                escape(&describe(machine)),
                newest.map_or(String::new(), |ms| format!(" · newest run {}", date(ms)))
            );
        }
        root.push_str("</ul>");
        for machine in &repository.machines {
            let dir = machine_dir(&repository.name, machine);
            if let Some(before) = before {
                let digest = digest(repository, machine);
                let unchanged = before.get(&dir) == Some(&digest);
                built.insert(dir.clone(), digest);
                if unchanged {
                    continue;
                }
            }
            let shared = SharedRuns::new(machine, &config);
            let rows: Vec<Row<'_>> = machine
                .series
                .iter()
                .zip(changes_of(machine, &shared, &config))
                .map(|(series, changes)| Row { series, changes })
                .collect();
            let suite = shared.suite_steps(&rows);
            files.push((
                format!("{dir}/index.html"),
                machine_index(repository, machine, &rows, &suite),
            ));
            let pages: Vec<Vec<(String, String)>> = rows
                .par_iter()
                .map(|row| {
                    let slug = slug(&row.series.benchmark);
                    let svg = row_svg(repository, row);
                    let mut files = vec![(
                        format!("{dir}/b/{slug}.html"),
                        benchmark_page(repository, machine, row, svg.as_deref()),
                    )];
                    // The chart alone, for the PR comment to show as an image.
                    if let Some(svg) = svg {
                        files.push((format!("{dir}/b/{slug}.svg"), svg));
                    }
                    files
                })
                .collect();
            files.extend(pages.into_iter().flatten());
        }
    }
    files.push(("index.html".to_owned(), page("benchgate", 0, &root)));
    (files, built)
}

/// A run of a machine: when it was recorded, and its commit.
fn run_key(point: &Point) -> (u64, &str) {
    (point.recorded_at_ms, point.commit.as_str())
}

/// What the runs of a machine's Criterion benchmarks shared (see [`Shared`]), and which run
/// each point is from.
struct SharedRuns<'a> {
    shared: Shared,
    /// The machine's runs with a Criterion benchmark, oldest first.
    runs: Vec<(u64, &'a str)>,
    index: HashMap<(u64, &'a str), usize>,
}

/// A step the whole suite of a machine took at once (see [`Shared::suite_steps`]).
struct SuiteStep<'a> {
    /// The first run at the new level.
    run: (u64, &'a str),
    /// How far the typical benchmark moved.
    ratio: f64,
    /// Criterion benchmarks with a change point of their own within [`SUITE_NEAR`] runs of it.
    with_change: usize,
    /// Criterion benchmarks that ran on both sides of it.
    of: usize,
}

/// How many runs from a suite-wide step a benchmark's change point counts as the same step.
const SUITE_NEAR: usize = 2;

/// Suite-wide steps listed on a machine's index before the rest fold away.
const SUITE_SHOWN: usize = 3;

impl<'a> SharedRuns<'a> {
    fn new(machine: &'a Machine, config: &Config) -> Self {
        let timed: Vec<&Series> = machine.series.iter().filter(|s| s.timed()).collect();
        let mut runs: Vec<(u64, &str)> = timed
            .iter()
            .flat_map(|s| s.points.iter().map(run_key))
            .collect();
        runs.sort_unstable();
        runs.dedup();
        let index: HashMap<(u64, &str), usize> =
            runs.iter().enumerate().map(|(i, key)| (*key, i)).collect();
        let mut table = vec![vec![None; timed.len()]; runs.len()];
        for (b, series) in timed.iter().enumerate() {
            for (point, value) in series.points.iter().zip(series.as_times()) {
                table[index[&run_key(point)]][b] = Some(value);
            }
        }
        Self {
            shared: Shared::new(&table, config),
            runs,
            index,
        }
    }

    /// The run a point is from.
    fn run(&self, point: &Point) -> Option<usize> {
        self.index.get(&run_key(point)).copied()
    }

    /// The steps the whole suite took, newest first, with how many benchmarks show each.
    fn suite_steps(&self, rows: &[Row<'a>]) -> Vec<SuiteStep<'a>> {
        // Each Criterion benchmark's first and last run, and the runs of its change points.
        let timed: Vec<((usize, usize), Vec<usize>)> = rows
            .iter()
            .filter(|r| r.series.timed())
            .filter_map(|row| {
                let runs: Vec<usize> = row
                    .series
                    .points
                    .iter()
                    .filter_map(|p| self.run(p))
                    .collect();
                let changes = row
                    .changes
                    .iter()
                    .filter_map(|c| runs.get(c.index).copied())
                    .collect();
                let span = runs.iter().min().zip(runs.iter().max())?;
                Some(((*span.0, *span.1), changes))
            })
            .collect();
        self.shared
            .suite_steps()
            .iter()
            .rev()
            .filter_map(|step| {
                let run = *self.runs.get(step.index)?;
                let mut of = 0;
                let mut with_change = 0;
                for ((first, last), changes) in &timed {
                    if !(*first < step.index && *last >= step.index) {
                        continue;
                    }
                    of += 1;
                    if changes.iter().any(|r| r.abs_diff(step.index) <= SUITE_NEAR) {
                        with_change += 1;
                    }
                }
                Some(SuiteStep {
                    run,
                    ratio: step.ratio,
                    with_change,
                    of,
                })
            })
            .collect()
    }

    /// The `b`th Criterion series' values without what their runs shared.
    fn adjust(&self, b: usize, series: &Series, values: &[f64], config: &Config) -> Vec<f64> {
        let runs: Vec<usize> = series
            .points
            .iter()
            .map(|p| self.run(p).unwrap_or(usize::MAX))
            .collect();
        self.shared.adjust(b, &runs, values, config)
    }
}

fn describe(machine: &Machine) -> String {
    let get = |name: &str| {
        machine
            .components
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    // What is known of it: an imported history's machine is "unknown" but for its origin.
    [get("cpu_brand"), get("os"), get("rustc")]
        .into_iter()
        .filter(|v| !v.split_whitespace().all(|w| w == "unknown"))
        .collect::<Vec<_>>()
        .join(" · ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)] // tests fail loudly

    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_785_377_777_264), "2026-07-30");
        assert_eq!(date(951_782_400_000), "2000-02-29");
    }

    /// A machine of `benchmarks` Criterion series over 40 runs that share ±4% of noise, each
    /// `step` times slower from run `at`; run `r`'s commit is `r` in 40 hex digits.
    fn machine(benchmarks: usize, step: f64, at: usize) -> Machine {
        let mut state = 17u64;
        let mut noise = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            1.0 + 0.08 * ((state % 10_000) as f64 / 10_000.0 - 0.5)
        };
        let shared: Vec<f64> = (0..40).map(|_| noise()).collect();
        let series = (0..benchmarks)
            .map(|b| Series {
                benchmark: format!("bench/{b}"),
                points: (0..40)
                    .map(|r| {
                        let value = 1000.0
                            * (b + 1) as f64
                            * shared[r]
                            * (1.0 + (noise() - 1.0) / 8.0)
                            * if r >= at { step } else { 1.0 };
                        Point {
                            commit: format!("{r:040x}"),
                            recorded_at_ms: 1_700_000_000_000 + r as u64 * DAY_MS,
                            value,
                            lower: value,
                            upper: value,
                            fastest: value * 0.97,
                            overridden: false,
                        }
                    })
                    .collect(),
                budgets: Vec::new(),
                unit: None,
                higher_is_better: false,
                count_change: None,
                throughput: None,
            })
            .collect();
        Machine {
            fingerprint: "f".repeat(64),
            components: Vec::new(),
            series,
        }
    }

    /// The site of `acme/rocket` with `machine` alone: the page whose path `wanted` picks.
    fn built(machine: Machine, wanted: impl Fn(&str) -> bool) -> String {
        let repository = Repository {
            name: "acme/rocket".to_owned(),
            machines: vec![machine],
            bisections: Vec::new(),
        };
        build(&[repository])
            .into_iter()
            .find(|(path, _)| wanted(path))
            .map(|(_, html)| html)
            .expect("the page")
    }

    fn index(machine: Machine) -> String {
        built(machine, |path| {
            path == "acme/rocket/ffffffffffff/index.html"
        })
    }

    fn bench_0_page(machine: Machine) -> String {
        built(machine, |path| {
            path.contains("/b/bench_0-") && path.ends_with(".html")
        })
    }

    #[test]
    fn a_step_the_whole_suite_took_is_shown_once_on_the_index() {
        let html = index(machine(6, 1.2, 25));
        let list = html
            .split("<ul class=\"machines\" id=\"suite-steps\">")
            .nth(1)
            .and_then(|rest| rest.split("</ul>").next())
            .unwrap_or_else(|| panic!("no suite steps in\n{html}"));
        assert_eq!(list.matches("<li>").count(), 1, "{list}");
        // Run 25's commit and date, the typical benchmark's step, and every benchmark took it.
        assert!(list.contains(&format!("/commit/{:040x}\"", 25)), "{list}");
        assert!(
            list.contains(&date(1_700_000_000_000 + 25 * DAY_MS)),
            "{list}"
        );
        assert!(list.contains("in 6 of 6 benchmarks"), "{list}");
        let percent = list
            .split("<span class=\"worse\" title=\"")
            .nth(1)
            .and_then(|rest| rest.split("\">+").nth(1))
            .and_then(|rest| rest.split('%').next())
            .and_then(|p| p.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no step in {list}"));
        assert!((percent - 20.0).abs() < 2.0, "{list}");
        // Without a step, no such list.
        assert!(!index(machine(6, 1.0, 25)).contains("suite-steps"));
        // Each benchmark's page gives the step's run numbers and how long the new level held.
        let page = bench_0_page(machine(6, 1.2, 25));
        let table = page
            .split("<h2>Change points</h2>")
            .nth(1)
            .and_then(|rest| rest.split("</table>").next())
            .expect("a change-point table");
        assert!(
            table.contains("<td class=\"num\">#24 → #25</td>"),
            "{table}"
        );
        assert!(
            table.contains("<td class=\"num\">15 runs so far</td>"),
            "{table}"
        );
        assert!(!table.contains("<th>p</th>"), "{table}");
    }

    #[test]
    fn a_newest_run_far_off_is_flagged_first_and_a_benchmark_no_longer_run_goes_last() {
        let mut machine = machine(6, 1.0, 0);
        // bench/0 fell 85% on the newest run; bench/5 was not in it.
        if let Some(last) = machine.series[0].points.last_mut() {
            last.value *= 0.15;
        }
        machine.series[5].points.pop();
        let html = index(machine);
        let rows: Vec<&str> = html
            .split("<tbody>")
            .nth(1)
            .expect("a table")
            .split("</tr>")
            .filter(|r| r.contains("<tr"))
            .collect();
        assert_eq!(rows.len(), 6);
        assert!(rows[0].contains(">bench/0</a>"), "{}", rows[0]);
        assert!(
            rows[0].contains("<span class=\"badge better\" title=\"newest run 85.")
                && rows[0].contains("% lower (better)\">newest run -85."),
            "{}",
            rows[0]
        );
        assert!(rows[5].contains(">bench/5</a>"), "{}", rows[5]);
        assert!(
            rows[5].contains(&format!(
                "not run since {}",
                date(1_700_000_000_000 + 38 * DAY_MS)
            )) && rows[5].contains("class=\"stale\""),
            "{}",
            rows[5]
        );
        // The steady ones move within their noise: shown, not coloured.
        for row in &rows[1..5] {
            assert!(!row.contains("newest run"), "{row}");
            assert!(row.contains("<span class=\"flat\">"), "{row}");
        }
    }

    /// The machine's benchmarks as rates in `Hz`, where higher is better.
    fn rates(mut machine: Machine) -> Machine {
        for series in &mut machine.series {
            series.unit = Some("Hz".to_owned());
            series.higher_is_better = true;
        }
        machine
    }

    /// How many `change` badges of `class` the page has, with the words they carry.
    fn badges(html: &str, class: &str, words: &str) -> usize {
        html.matches(&format!(
            "<span class=\"badge {class}\" title=\"change {words}"
        ))
        .count()
    }

    #[test]
    fn a_slowdown_is_flagged_red_and_a_speedup_green() {
        // A step 5 runs before the newest is open: its benchmarks are flagged.
        let slower = index(machine(6, 1.2, 35));
        assert_eq!(badges(&slower, "worse", ""), 6, "{slower}");
        assert_eq!(badges(&slower, "better", ""), 0);
        assert_eq!(slower.matches("% higher (worse)\">change +").count(), 6);
        let faster = index(machine(6, 0.8, 35));
        assert_eq!(
            (badges(&faster, "worse", ""), badges(&faster, "better", "")),
            (0, 6)
        );
    }

    #[test]
    fn a_rate_that_drops_is_worse_in_colour_and_words() {
        // Rates 20% lower: worse, red, and said so, on the badge, the index cells and the
        // suite's step.
        let html = index(rates(machine(6, 0.8, 35)));
        assert_eq!(badges(&html, "worse", ""), 6, "{html}");
        assert_eq!(badges(&html, "better", ""), 0, "{html}");
        assert_eq!(
            html.matches("% lower (worse)\">change -").count(),
            6,
            "{html}"
        );
        assert!(html.contains("% lower (worse)\">-2"), "{html}");
        assert!(!html.contains("class=\"better\""), "{html}");
        // 20% higher: better, green.
        let html = index(rates(machine(6, 1.2, 35)));
        assert_eq!(
            (badges(&html, "worse", ""), badges(&html, "better", "")),
            (0, 6)
        );
        assert_eq!(html.matches("% higher (better)\">change +").count(), 6);
    }

    #[test]
    fn the_newest_move_for_the_worse_comes_first_whichever_way_is_worse() {
        // bench/2's newest run is 30% lower, bench/4's 60% higher: the larger move is bench/4's.
        let moved = |rates_too: bool| {
            let mut m = machine(6, 1.0, 0);
            if rates_too {
                m = rates(m);
            }
            for (b, factor) in [(2, 0.7), (4, 1.6)] {
                if let Some(last) = m.series[b].points.last_mut() {
                    last.value *= factor;
                }
            }
            let html = index(m);
            let body = html.split("<tbody>").nth(1).expect("a table").to_owned();
            body.split("</tr>")
                .filter_map(|r| r.split("\">bench/").nth(1))
                .map(|r| r.chars().next().unwrap_or('?'))
                .take(2)
                .collect::<String>()
        };
        // Times: higher is worse, so bench/4 first; rates: lower is worse, so bench/2 first,
        // ahead of the larger move for the better.
        assert_eq!(moved(false), "42");
        assert_eq!(moved(true), "24");
    }

    #[test]
    fn no_number_on_the_site_is_in_scientific_notation() {
        // Rates around 10⁸ Hz, with a step: values, ticks, tooltips, change points, runs.
        let mut machine = rates(machine(6, 0.7, 30));
        for series in &mut machine.series {
            for point in &mut series.points {
                for value in [
                    &mut point.value,
                    &mut point.lower,
                    &mut point.upper,
                    &mut point.fastest,
                ] {
                    *value *= 93_480.0;
                }
            }
        }
        let repository = Repository {
            name: "acme/rocket".to_owned(),
            machines: vec![machine],
            bisections: Vec::new(),
        };
        let pages = build(&[repository]);
        let mut megahertz = 0;
        for (path, html) in &pages {
            let bytes = html.as_bytes();
            for (i, _) in html.match_indices('e') {
                let digit = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_digit);
                let exponent =
                    digit(i + 1) || (matches!(bytes.get(i + 1), Some(b'+' | b'-')) && digit(i + 2));
                // A colour (`#59636e`) is no number.
                let start = html[..i]
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
                    .map_or(0, |j| j + 1);
                let colour = start > 0 && bytes[start - 1] == b'#';
                assert!(
                    colour || !(i > 0 && digit(i - 1) && exponent),
                    "{path}: {}",
                    &html[i.saturating_sub(20)..(i + 10).min(html.len())]
                );
            }
            megahertz += html.matches(" MHz").count();
        }
        assert!(megahertz > 100, "{megahertz}");
    }

    #[test]
    fn the_legend_names_only_what_the_chart_draws() {
        let flat = bench_0_page(rates(machine(6, 1.0, 0)));
        assert!(
            flat.contains("Blue: each run's value (Hz; higher is better)."),
            "{flat}"
        );
        for absent in [
            "Grey",
            "Red lines",
            "Green triangles",
            "Orange dashes",
            "only adds time",
        ] {
            assert!(!flat.contains(absent), "{absent}: {flat}");
        }
        let stepped = bench_0_page(machine(6, 1.2, 25));
        assert!(
            stepped.contains("Grey: each run's fastest iteration"),
            "{stepped}"
        );
        assert!(stepped.contains("Red lines: change points"), "{stepped}");
        assert!(!stepped.contains("Green triangles"), "{stepped}");
    }
}
