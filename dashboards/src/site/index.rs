//! A machine's index page: every benchmark's newest run against its typical level, what
//! needs a look first, and the steps the whole suite took.

use std::fmt::Write as _;

use super::{
    DAY_MS, Machine, Repository, Row, SUITE_NEAR, SUITE_SHOWN, SuiteStep, commit_link, describe,
    escape, judged, page, percent, run_key, short, slug,
};
use crate::chart::{date, format_measure, sparkline_svg};

/// Runs whose median is a benchmark's typical level, on the index.
pub(super) const TYPICAL: usize = 10;

/// The smallest move the index colours, in percent, however quiet the benchmark.
pub(super) const FLAT_PERCENT: f64 = 2.0;

/// A newest run this far off its typical level (and beyond its noise) is flagged and sorted up.
pub(super) const JUMP: f64 = 0.10;

/// The fewest runs a typical level is judged from before a move is coloured: the spread of one
/// or two runs says nothing of a benchmark's noise (an A/B's base and head rounds stored on a
/// laptop are one point each, and itertools' `array comb c1`, unchanged by the A/B's verdict,
/// read red "newest run +17.3%" against the one point before it). The same five runs a
/// change point needs before it (`changepoint::FIRST_AT`).
pub(super) const JUDGED_FROM: usize = 5;

/// The newest run against a typical level: the ratio, and whether it is beyond the noise.
#[derive(Debug, Clone, Copy)]
pub(super) struct Move {
    ratio: f64,
    beyond_noise: bool,
}

impl Move {
    /// `newest / median(before)`, judged against the spread of `before` around its median, and
    /// beyond every run of `before`: a series that alternates between two levels (two kinds
    /// of runner: safetensors' `test_flax_sf_load` at 5 and 9 iter/sec) has a small spread
    /// about its usual level, and its newest run at the other level is no news. Fewer than
    /// [`JUDGED_FROM`] runs before it are no level to judge against: the move is shown grey.
    fn of(newest: f64, before: &[f64]) -> Option<Self> {
        let logs: Vec<f64> = before
            .iter()
            .filter(|v| v.is_finite() && **v > 0.0)
            .map(|v| v.ln())
            .collect();
        if logs.is_empty() || !(newest.is_finite() && newest > 0.0) {
            return None;
        }
        let level = benchgate_gate::stats::median(&mut logs.clone());
        let mut deviations: Vec<f64> = logs.iter().map(|l| (l - level).abs()).collect();
        let spread = 1.4826 * benchgate_gate::stats::median(&mut deviations);
        let change = newest.ln() - level;
        let (lowest, highest) = logs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), l| {
                (lo.min(*l), hi.max(*l))
            });
        let past_every_run = if change > 0.0 {
            newest.ln() > highest
        } else {
            newest.ln() < lowest
        };
        Some(Self {
            ratio: change.exp(),
            beyond_noise: logs.len() >= JUDGED_FROM
                && past_every_run
                && change.abs() > (4.0 * spread).max((1.0 + FLAT_PERCENT / 100.0).ln()),
        })
    }

    fn cell(self, higher_is_better: bool) -> String {
        if self.beyond_noise {
            percent(self.ratio, Some(higher_is_better))
        } else {
            format!(
                "<span class=\"flat\">{:+.1}%</span>",
                (self.ratio - 1.0) * 100.0
            )
        }
    }
}

/// Where a benchmark's newest run stands on the index.
pub(super) struct Standing {
    /// Not in the machine's newest run.
    pub(super) stale: bool,
    /// Against the median of the runs before it.
    typical: Option<Move>,
    /// Against the median of the runs before the month before.
    month: Option<Move>,
    /// Set when the newest run is [`JUMP`] or more off its typical level, beyond its noise.
    pub(super) jump: Option<f64>,
}

impl Standing {
    /// How far the benchmark moved lately, for sorting: the largest log step.
    pub(super) fn size(&self) -> f64 {
        self.jump.map_or(0.0, |r| r.ln().abs())
    }
}

pub(super) fn standing(row: &Row<'_>, newest: Option<(u64, &str)>) -> Standing {
    let points = &row.series.points;
    let Some(latest) = points.last() else {
        return Standing {
            stale: true,
            typical: None,
            month: None,
            jump: None,
        };
    };
    let before: Vec<f64> = points[..points.len() - 1]
        .iter()
        .rev()
        .take(TYPICAL)
        .map(|p| p.value)
        .collect();
    let month_ago: Vec<f64> = points
        .iter()
        .rev()
        .filter(|p| p.recorded_at_ms + 30 * DAY_MS <= latest.recorded_at_ms)
        .take(TYPICAL)
        .map(|p| p.value)
        .collect();
    let typical = Move::of(latest.value, &before);
    let jump = typical
        .filter(|m| m.beyond_noise && (m.ratio.ln().abs() >= (1.0 + JUMP).ln()))
        .map(|m| m.ratio);
    Standing {
        stale: newest.is_some_and(|n| run_key(latest) != n),
        typical,
        month: Move::of(latest.value, &month_ago),
        jump,
    }
}

pub(super) fn machine_index(
    repository: &Repository,
    machine: &Machine,
    rows: &[Row<'_>],
    suite: &[SuiteStep<'_>],
) -> String {
    let mut body = format!(
        "<h1>{}</h1><p class=\"muted\">Machine <code>{}</code>: {}</p>",
        escape(&repository.name),
        escape(short(&machine.fingerprint)),
        escape(&describe(machine))
    );
    machines_list(&mut body, repository, machine);
    suite_steps(&mut body, repository, suite);
    // The machine's newest run: a benchmark not in it is no longer run.
    let newest = rows
        .iter()
        .filter_map(|r| r.series.points.last().map(run_key))
        .max();
    let standing: Vec<Standing> = rows.iter().map(|row| standing(row, newest)).collect();
    let mut ordered: Vec<(&Row<'_>, &Standing)> = rows.iter().zip(&standing).collect();
    // What needs a look first (a recent change point, or a newest run far off its typical
    // level): for the worse before for the better, the largest move first; benchmarks no
    // longer run last.
    ordered.sort_by(|(a, sa), (b, sb)| {
        a.urgency(sa)
            .cmp(&b.urgency(sb))
            .then_with(|| sb.size().total_cmp(&sa.size()))
            .then_with(|| a.series.benchmark.cmp(&b.series.benchmark))
    });
    let _ = write!(
        body,
        "<h2>Benchmarks ({})</h2><p><input type=\"search\" id=\"filter\" placeholder=\"Filter benchmarks\" aria-label=\"Filter benchmarks\"></p><p class=\"muted\">The newest run against the median of the {TYPICAL} runs before it, and against the median of the {TYPICAL} runs before the month before; coloured only beyond the benchmark's own run-to-run noise (4 × its robust spread, at least {FLAT_PERCENT}%) and past every one of those runs, and only once there are {JUDGED_FROM} of them.</p><div class=\"table\"><table id=\"benchmarks\"><thead><tr><th>benchmark</th><th>newest</th><th>vs typical</th><th>vs 30 days before</th><th>trend</th></tr></thead><tbody>",
        rows.len()
    );
    for (row, standing) in ordered {
        benchmark_row(&mut body, row, standing);
    }
    body.push_str("</tbody></table></div>");
    body.push_str(
        "<script>document.getElementById('filter').addEventListener('input', function (e) {\n  var q = e.target.value.toLowerCase();\n  document.querySelectorAll('#benchmarks tbody tr').forEach(function (row) {\n    row.hidden = q !== '' && row.dataset.name.indexOf(q) < 0;\n  });\n});</script>",
    );
    page(&format!("{} benchmarks", repository.name), 3, &body)
}

/// The other machines of the repository, each with what differs from this one.
fn machines_list(body: &mut String, repository: &Repository, machine: &Machine) {
    // The fingerprint selector, with what differs between machines.
    if repository.machines.len() > 1 {
        body.push_str("<h2>Machines</h2><ul class=\"machines\">");
        for other in &repository.machines {
            if other.fingerprint == machine.fingerprint {
                let _ = write!(
                    body,
                    "<li><strong>{}</strong> (this one)</li>",
                    escape(short(&other.fingerprint))
                );
                continue;
            }
            // An imported machine is known only by its origin ("imported suite NAME"): its
            // name says which it is where a list of fields would not.
            let imported = other
                .components
                .iter()
                .find(|(name, value)| name == "cpu_brand" && value.starts_with("imported "));
            let differs = match imported {
                Some((_, brand)) => brand.clone(),
                None => other
                    .components
                    .iter()
                    .filter_map(|(name, value)| {
                        let mine = machine
                            .components
                            .iter()
                            .find(|(n, _)| n == name)
                            .map(|(_, v)| v);
                        (mine != Some(value)).then(|| {
                            format!("{name}: {} → {}", mine.map_or("—", |v| v.as_str()), value)
                        })
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            let _ = write!(
                body,
                "<li><a href=\"../{}/index.html\">{}</a> <span class=\"muted\">{}</span></li>",
                escape(short(&other.fingerprint)),
                escape(short(&other.fingerprint)),
                escape(&differs)
            );
        }
        body.push_str("</ul>");
    }
}

/// The steps the whole suite took, newest first, the older ones folded.
fn suite_steps(body: &mut String, repository: &Repository, suite: &[SuiteStep<'_>]) {
    if !suite.is_empty() {
        let _ = write!(
            body,
            "<h2>Steps the whole suite took</h2><p class=\"muted\">The typical benchmark on this machine moved at these runs: a change to something they all share (the toolchain, the runner's image, a common dependency, the machine itself). Each benchmark that took the step shows it on its page too; a change point within {SUITE_NEAR} runs counts.</p><ul class=\"machines\" id=\"suite-steps\">"
        );
        for (i, step) in suite.iter().enumerate() {
            if i == SUITE_SHOWN {
                let _ = write!(
                    body,
                    "</ul><details><summary>{} older</summary><ul class=\"machines\">",
                    suite.len() - SUITE_SHOWN
                );
            }
            let _ = write!(
                body,
                "<li>{} {}: {} <span class=\"muted\">· in {} of {} benchmarks</span></li>",
                date(step.run.0),
                commit_link(&repository.name, step.run.1),
                // The suite's steps are its times' (`SharedRuns`): higher is worse.
                percent(step.ratio, Some(false)),
                step.with_change,
                step.of
            );
        }
        body.push_str("</ul>");
        if suite.len() > SUITE_SHOWN {
            body.push_str("</details>");
        }
    }
}

/// One benchmark's row of the index: its newest value and how far it moved, with badges for
/// an open change point and a newest run off its typical level.
fn benchmark_row(body: &mut String, row: &Row<'_>, standing: &Standing) {
    let points = &row.series.points;
    let Some(latest) = points.last() else {
        return;
    };
    let spark: Vec<f64> = points
        .iter()
        .rev()
        .take(40)
        .rev()
        .map(|p| p.value)
        .collect();
    // Worse is red, better green: a time's worse is higher, a rate's lower.
    let higher = row.series.higher_is_better;
    let badge_of = |what: &str, ratio: f64| {
        let (class, words) = judged(ratio, higher);
        format!(
            " <span class=\"badge {class}\" title=\"{what} {words}\">{what} {:+.1}%</span>",
            (ratio - 1.0) * 100.0
        )
    };
    let mut badge = row
        .open_change()
        .and_then(|i| row.changes.iter().find(|c| c.index == i))
        .map(|c| badge_of("change", c.ratio))
        .unwrap_or_default();
    if let (Some(ratio), false) = (standing.jump, standing.stale) {
        badge.push_str(&badge_of("newest run", ratio));
    }
    let newest_cell = if standing.stale {
        format!(
            "<span class=\"muted\">not run since {}</span>",
            date(latest.recorded_at_ms)
        )
    } else {
        format_measure(latest.value, row.series.unit.as_deref())
    };
    let _ = write!(
        body,
        "<tr data-name=\"{}\"{}><td><a href=\"b/{}.html\">{}</a>{badge}</td><td class=\"num\">{newest_cell}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
        escape(&row.series.benchmark.to_lowercase()),
        if standing.stale {
            " class=\"stale\""
        } else {
            ""
        },
        slug(&row.series.benchmark),
        escape(&row.series.benchmark),
        standing.typical.map_or("—".to_owned(), |m| m.cell(higher)),
        standing.month.map_or("—".to_owned(), |m| m.cell(higher)),
        sparkline_svg(&spark)
    );
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::Move;

    #[test]
    fn a_newest_run_at_a_level_the_series_keeps_returning_to_is_no_news() {
        // safetensors' test_flax_sf_load, its 10 runs before the newest (iter/sec): two
        // runners, at about 5 and 9.
        let before = [5.52, 5.53, 5.37, 5.51, 5.54, 5.36, 10.01, 4.61, 5.77, 5.12];
        let up = Move::of(9.31, &before).unwrap();
        // Against the median, between 5.51 and 5.52 (of the logarithms).
        assert!(
            (up.ratio - 9.31 / (5.51f64 * 5.52).sqrt()).abs() < 1e-9,
            "{up:?}"
        );
        assert!(!up.beyond_noise, "{up:?}");
        // Past the highest of them, it is.
        assert!(Move::of(11.0, &before).unwrap().beyond_noise);
        // A quiet series' step within the range it has never left is not, beyond it is.
        let quiet = [
            100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1, 99.9, 100.3,
        ];
        assert!(!Move::of(100.9, &quiet).unwrap().beyond_noise);
        assert!(Move::of(110.0, &quiet).unwrap().beyond_noise);
        assert!(Move::of(90.0, &quiet).unwrap().beyond_noise);
    }

    #[test]
    fn a_move_is_judged_only_against_five_runs_or_more() {
        // itertools' `array comb c1` stored by an A/B on a laptop: the base commit's rounds
        // and the head's, one point each at their median (µs); the A/B found no change.
        let one_before = Move::of(444.4, &[378.9]).unwrap();
        assert!((one_before.ratio - 444.4 / 378.9).abs() < 1e-9);
        assert!(!one_before.beyond_noise, "{one_before:?}");
        // Four steady runs are still no level; a fifth makes one, and the move stands out.
        let steady = [378.9, 379.5, 378.2, 379.1, 378.6];
        assert!(!Move::of(444.4, &steady[..4]).unwrap().beyond_noise);
        assert!(Move::of(444.4, &steady).unwrap().beyond_noise);
    }
}
