//! `benchgate dashboard` and the service's pages: the store's trends, shaped for the site.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use anyhow::Context as _;
use benchgate_collector::callgrind;
use benchgate_collector::{Location, Store};
use benchgate_dashboards::chart::{BudgetLine, Point};
use benchgate_dashboards::site::{self, CountChange, Machine, Repository, Series, StepMark};
use benchgate_gate::budget::{Bound, Budget, BudgetStatistic, Dimension};
use rayon::prelude::*;

/// One machine's trends while they are gathered: its newest run's time, and its benchmarks,
/// each with its points and a custom metric's unit and whether higher is better, as its newest
/// run has them (one name may be another metric on another machine: mountpoint-s3's
/// `seq_read_skip_17m` is MiB/s on one imported suite, MiB on another).
type Gathering = (u64, BTreeMap<String, Gathered>);

/// One benchmark's points while they are gathered, each with its Criterion throughput (kind,
/// amount), and its custom metric's unit and direction.
type Gathered = (Vec<(Point, Option<(String, u64)>)>, Option<(String, bool)>);

/// Every repository's trends, from the store: default-branch (non-PR) runs in time order, per
/// machine and benchmark; the machine with the newest run first.
pub async fn load(store: &Store, budgets: &[Budget]) -> anyhow::Result<Vec<Repository>> {
    let rows = store.trend_rows().await?;
    let components = store.fingerprint_components().await?;
    let overridden: HashSet<(String, String)> = store
        .overridden_commits()
        .await?
        .into_iter()
        .map(|commit| (commit.repository, commit.head_sha))
        .collect();
    // repository → what bisections found for its steps
    let mut marks: HashMap<String, Vec<StepMark>> = HashMap::new();
    for bisection in store.bisections().await? {
        marks
            .entry(bisection.repository.as_str().to_owned())
            .or_default()
            .push(StepMark {
                fingerprint: bisection.fingerprint,
                benchmark: bisection.benchmark,
                good: bisection.good.to_string(),
                bad: bisection.bad.to_string(),
                outcome: bisection.outcome,
                culprits: bisection.culprits.iter().map(ToString::to_string).collect(),
                issue: bisection.issue_number,
            });
    }
    // repository → fingerprint → benchmark → points
    let mut tree: BTreeMap<String, HashMap<String, Gathering>> = BTreeMap::new();
    for row in rows {
        let machines = tree.entry(row.repository.clone()).or_default();
        let (newest, benchmarks) = machines.entry(row.fingerprint.clone()).or_default();
        *newest = (*newest).max(row.recorded_at_ms);
        let (points, unit) = benchmarks.entry(row.benchmark).or_default();
        *unit = row.unit.map(|unit| (unit, row.higher_is_better));
        points.push((
            Point {
                overridden: overridden.contains(&(row.repository.clone(), row.commit.clone())),
                commit: row.commit,
                recorded_at_ms: row.recorded_at_ms,
                value: row.median,
                lower: row.lower,
                upper: row.upper,
                fastest: row.min,
            },
            row.throughput,
        ));
    }
    let mut repositories: Vec<Repository> = tree
        .into_iter()
        .map(|(name, machines)| {
            let mut machines: Vec<(u64, Machine)> = machines
                .into_iter()
                .map(|(fingerprint, (newest, benchmarks))| {
                    (
                        newest,
                        Machine {
                            components: components.get(&fingerprint).cloned().unwrap_or_default(),
                            fingerprint,
                            series: benchmarks
                                .into_iter()
                                .map(|(benchmark, (points, unit))| {
                                    let (points, unit, higher_is_better, throughput, axis) =
                                        match (unit, as_rates(&points)) {
                                            (None, Some(rates)) => (
                                                rates.points,
                                                Some(rates.unit),
                                                true,
                                                Some(rates.kind),
                                                Some((rates.dimension, rates.per_base)),
                                            ),
                                            (unit, _) => {
                                                let (unit, higher) = unit
                                                    .map_or((None, false), |(unit, higher)| {
                                                        (Some(unit), higher)
                                                    });
                                                let points =
                                                    points.into_iter().map(|(p, _)| p).collect();
                                                (points, unit, higher, None, None)
                                            }
                                        };
                                    Series {
                                        // Time budget lines are in ns, a rate's in its chart's
                                        // unit; a custom metric's chart draws none.
                                        budgets: match (&unit, axis) {
                                            (None, _) => {
                                                lines(budgets, &benchmark, Dimension::Time, 1.0)
                                            }
                                            (Some(_), Some((dimension, per_base))) => {
                                                lines(budgets, &benchmark, dimension, per_base)
                                            }
                                            _ => Vec::new(),
                                        },
                                        benchmark,
                                        points: one_per_commit(points),
                                        unit,
                                        higher_is_better,
                                        count_change: None,
                                        throughput,
                                    }
                                })
                                .collect(),
                        },
                    )
                })
                .collect();
            machines.sort_by(|a, b| {
                b.0.cmp(&a.0)
                    .then_with(|| a.1.fingerprint.cmp(&b.1.fingerprint))
            });
            Repository {
                bisections: marks.remove(&name).unwrap_or_default(),
                name,
                machines: machines.into_iter().map(|(_, m)| m).collect(),
            }
        })
        .collect();
    // As GitHub lists them: `Serial-ATA/lofty-rs` among the s, not before every lower-case name.
    repositories.sort_by_cached_key(|r| (r.name.to_lowercase(), r.name.clone()));
    for repository in &mut repositories {
        for machine in &mut repository.machines {
            for series in &mut machine.series {
                series.count_change =
                    count_change(store, &repository.name, &machine.fingerprint, series).await?;
            }
        }
    }
    Ok(repositories)
}

/// For an instruction count, where its instructions went at its newest change: the profiles
/// stored with the runs on either side, explained by function (five rows and everything else).
/// `None` for other series, a count that never changed, or a side stored without a profile.
async fn count_change(
    store: &Store,
    repository: &str,
    fingerprint: &str,
    series: &Series,
) -> anyhow::Result<Option<CountChange>> {
    if series.unit.as_deref() != Some(benchgate_collector::gungraun::INSTRUCTIONS) {
        return Ok(None);
    }
    let Some(at) = (1..series.points.len())
        .rev()
        .find(|&i| series.points[i].value != series.points[i - 1].value)
    else {
        return Ok(None);
    };
    let [before, after] = [&series.points[at - 1], &series.points[at]].map(|point| {
        store.function_costs_at(repository, fingerprint, &series.benchmark, &point.commit)
    });
    let (Some(before_costs), Some(after_costs)) = (before.await?, after.await?) else {
        return Ok(None);
    };
    Ok(Some(CountChange {
        before: series.points[at - 1].commit.clone(),
        after: series.points[at].commit.clone(),
        profile: crate::commands::explain::count_profile(
            &series.benchmark,
            &callgrind::explain(
                &before_costs,
                &after_costs,
                crate::commands::explain::REPORT_ROWS,
            ),
        ),
    }))
}

/// A Criterion throughput benchmark's points as the rates its runs measured, each its own
/// amount of work over its own time, as Criterion and the gate's report read it
/// (`format_rate`'s units: binary prefixes for bytes, in a unit the newest run reads in): with
/// the unit and Criterion's kind. `None` unless every point declares one kind with a positive
/// amount: a benchmark that took up `Throughput` later keeps its times, on one axis.
fn as_rates(points: &[(Point, Option<(String, u64)>)]) -> Option<Rates> {
    let (_, Some((kind, _))) = points.last()? else {
        return None;
    };
    let rate = |amount: u64, ns: f64| amount as f64 * 1e9 / ns;
    let newest = points
        .last()
        .and_then(|(p, t)| t.as_ref().map(|(_, amount)| rate(*amount, p.value)))?;
    // The chart's unit, and how many base units (B/s, elem/s) one of it is.
    let (unit, scale) = match kind.as_str() {
        "Bytes" => [("TiB/s", 4), ("GiB/s", 3), ("MiB/s", 2), ("KiB/s", 1)]
            .into_iter()
            .map(|(unit, power)| (unit, 1024f64.powi(power)))
            .find(|(_, scale)| newest >= *scale)
            .unwrap_or(("B/s", 1.0)),
        "BytesDecimal" => ("B/s", 1.0),
        "Bits" => ("bit/s", 1.0),
        _ => ("elem/s", 1.0),
    };
    let rates = points
        .iter()
        .map(|(point, throughput)| match throughput {
            Some((k, amount))
                if k == kind && *amount > 0 && point.lower > 0.0 && point.fastest > 0.0 =>
            {
                let per = |ns: f64| rate(*amount, ns) / scale;
                Some(Point {
                    value: per(point.value),
                    // The slower end of the time is the lower end of the rate.
                    lower: per(point.upper),
                    upper: per(point.lower),
                    fastest: per(point.fastest),
                    ..point.clone()
                })
            }
            _ => None,
        })
        .collect::<Option<Vec<Point>>>()?;
    // A budget's bound is in B/s or elem/s; a chart of bits counts 8 to a byte.
    let (dimension, per_base) = match kind.as_str() {
        "Elements" => (Dimension::Elements, 1.0 / scale),
        "Bits" => (Dimension::Bytes, 8.0 / scale),
        _ => (Dimension::Bytes, 1.0 / scale),
    };
    Some(Rates {
        points: rates,
        unit: unit.to_owned(),
        kind: kind.clone(),
        dimension,
        per_base,
    })
}

/// A Criterion throughput benchmark's points as rates ([`as_rates`]).
struct Rates {
    points: Vec<Point>,
    /// `GiB/s`, `B/s`, `bit/s`, `elem/s`, …
    unit: String,
    /// Criterion's kind: `Bytes`, `BytesDecimal`, `Bits`, `Elements`.
    kind: String,
    /// The budgets' dimension its rate is in, and how many of the chart's units one of the
    /// dimension's base units (B/s, elem/s) is.
    dimension: Dimension,
    per_base: f64,
}

/// One point per commit, where it was first recorded: the runs of one commit on one machine
/// (same-job A/B rounds, a rerun) are one point at their median, so A/B rounds draw no zig-zag
/// between base and head.
fn one_per_commit(points: Vec<Point>) -> Vec<Point> {
    let mut order: Vec<String> = Vec::new();
    let mut runs: HashMap<String, Vec<Point>> = HashMap::new();
    for point in points {
        let same = runs.entry(point.commit.clone()).or_default();
        if same.is_empty() {
            order.push(point.commit.clone());
        }
        same.push(point);
    }
    order
        .into_iter()
        .filter_map(|commit| {
            let mut same = runs.remove(&commit)?;
            if same.len() == 1 {
                return same.pop();
            }
            let middle = |pick: fn(&Point) -> f64| {
                let mut values: Vec<f64> = same.iter().map(pick).collect();
                benchgate_gate::stats::median(&mut values)
            };
            Some(Point {
                value: middle(|p| p.value),
                lower: middle(|p| p.lower),
                upper: middle(|p| p.upper),
                fastest: middle(|p| p.fastest),
                overridden: same.iter().any(|p| p.overridden),
                recorded_at_ms: same[0].recorded_at_ms,
                commit,
            })
        })
        .collect()
}

/// The budgets drawn on `benchmark`'s chart: absolute bounds on its median in the chart's
/// `dimension` (time, or a throughput's rate: `>= 2 GiB/s`), each base unit `per_base` of the
/// chart's units (the chart plots medians; other statistics are not on its axis).
fn lines(
    budgets: &[Budget],
    benchmark: &str,
    dimension: Dimension,
    per_base: f64,
) -> Vec<BudgetLine> {
    budgets
        .iter()
        .filter(|b| b.statistic == BudgetStatistic::Median && b.benchmark.matches(benchmark))
        .filter_map(|b| match b.bound {
            Bound::Absolute {
                value,
                dimension: d,
                ..
            } if d == dimension => Some(BudgetLine {
                label: format!("median {}", b.expression),
                ns: value * per_base,
            }),
            _ => None,
        })
        .collect()
}

/// Where a site keeps what each machine's pages were built from ([`site::Built`]).
const BUILT: &str = ".benchgate-built.json";

/// What `benchgate dashboard` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Pages (and charts) written.
    pub pages: usize,
    /// Machines whose pages were drawn again.
    pub drawn: usize,
    /// Machines whose pages were left as they were: their data did not change.
    pub kept: usize,
}

/// `benchgate dashboard --out DIR`: writes the static site. Unless `full`, the pages of a
/// machine whose data did not change since the last build into `out` are left as they are.
pub async fn write(
    db: &Location,
    out: &Path,
    budgets: &[Budget],
    full: bool,
) -> anyhow::Result<Written> {
    let store = Store::connect_existing(db).await?;
    let repositories = load(&store, budgets).await;
    store.close().await;
    let repositories = repositories?;
    let manifest = out.join(BUILT);
    // A machine counts as built only if its index is still there (a pruned or hand-cleaned
    // site is drawn again).
    let before: site::Built = if full {
        site::Built::new()
    } else {
        read_built(&manifest)
            .into_iter()
            .filter(|(dir, _)| out.join(dir).join("index.html").is_file())
            .collect()
    };
    let (files, built) = site::build_changed(&repositories, &before);
    // Gone while the pages are written: a build cut short leaves no claim that they are whole.
    match std::fs::remove_file(&manifest) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("--out {}", manifest.display()));
        }
        _ => {}
    }
    let dirs: HashSet<&Path> = files
        .iter()
        .filter_map(|(path, _)| Path::new(path).parent())
        .collect();
    for dir in dirs {
        let dir = out.join(dir);
        std::fs::create_dir_all(&dir).with_context(|| format!("--out {}", dir.display()))?;
    }
    files.par_iter().try_for_each(|(path, content)| {
        let target = out.join(path);
        std::fs::write(&target, content).with_context(|| format!("--out {}", target.display()))
    })?;
    let drawn = built
        .iter()
        .filter(|(dir, digest)| before.get(*dir) != Some(*digest))
        .count();
    let kept = built.len() - drawn;
    std::fs::write(&manifest, serde_json::to_vec_pretty(&built)?)
        .with_context(|| format!("--out {}", manifest.display()))?;
    Ok(Written {
        pages: files.len(),
        drawn,
        kept,
    })
}

/// The last build's [`site::Built`]; empty (build everything) if there is none or it cannot be
/// read.
fn read_built(path: &Path) -> site::Built {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}
