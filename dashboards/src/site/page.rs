//! A benchmark's page: its chart, the legend of what the chart draws, its change points and
//! every run.

use std::fmt::Write as _;

use benchgate_gate::report::{grouped, share, signed};

use super::{CountChange, Machine, Repository, Row, commit_link, escape, page, percent, short};
use crate::chart::{date, format_measure, trend_svg_of};

/// A benchmark's trend chart, as its page and the comment show it: each point links its
/// commit on GitHub.
pub(super) fn row_svg(repository: &Repository, row: &Row<'_>) -> Option<String> {
    let series = row.series;
    trend_svg_of(
        &series.benchmark,
        &series.points,
        &row.changes,
        &series.budgets,
        series.unit.as_deref(),
        series.unit.is_none() || series.throughput.is_some(),
        Some(&format!("https://github.com/{}/commit/", repository.name)),
    )
}

/// The chart's legend: only what the chart draws, in the series' own terms.
pub(super) fn legend(row: &Row<'_>) -> String {
    let series = row.series;
    let mut parts = vec![match series.unit.as_deref() {
        Some(unit) if series.throughput.is_some() => format!(
            "Blue: each run's throughput ({}; higher is better), its work an iteration over its median time per iteration, with its interval as a band. Grey: the rate of each run's fastest iteration, which is what the gate compares (interference only adds time).",
            escape(unit)
        ),
        None => "Blue: the median time per iteration of each run, with its interval as a band. Grey: each run's fastest iteration, which is what the gate compares (interference only adds time).".to_owned(),
        Some(unit) => format!(
            "Blue: each run's value ({}; {} is better).",
            escape(unit),
            if series.higher_is_better { "higher" } else { "lower" }
        ),
    }];
    if !row.changes.is_empty() {
        parts.push("Red lines: change points, found after taking out what each run shared with this machine's other benchmarks (a slower host moves them all), so their before and after are typical levels.".to_owned());
    }
    if series.points.iter().any(|p| p.overridden) {
        parts.push("Green triangles: runs where a maintainer overrode the gate.".to_owned());
    }
    if !series.budgets.is_empty() {
        parts.push("Orange dashes: budgets.".to_owned());
    }
    parts.join(" ")
}

pub(super) fn benchmark_page(
    repository: &Repository,
    machine: &Machine,
    row: &Row<'_>,
    svg: Option<&str>,
) -> String {
    let series = row.series;
    let mut body = format!(
        "<p><a href=\"../index.html\">{} · {}</a></p><h1>{}</h1>",
        escape(&repository.name),
        escape(short(&machine.fingerprint)),
        escape(&series.benchmark)
    );
    if let Some(svg) = svg {
        let _ = write!(
            body,
            "<div class=\"chart\" id=\"chart\">{svg}</div><p class=\"muted\">{}</p>",
            legend(row)
        );
    }
    body.push_str("<h2>Change points</h2>");
    if row.changes.is_empty() {
        body.push_str("<p class=\"muted\">None: the trend is flat within its noise.</p>");
    } else {
        body.push_str("<div class=\"table\"><table><thead><tr><th>runs</th><th>between</th><th>and</th><th>before</th><th>after</th><th>change</th><th>held</th><th>culprit</th></tr></thead><tbody>");
        // How many runs each new level held: to the next change point, or to the newest run.
        let ends: Vec<usize> = row
            .changes
            .iter()
            .skip(1)
            .map(|c| c.index)
            .chain(std::iter::once(series.points.len()))
            .collect();
        for (change, end) in row.changes.iter().zip(ends).rev() {
            let before = &series.points[change.index - 1];
            let at = &series.points[change.index];
            let culprit = repository
                .bisections
                .iter()
                .rev()
                .find(|mark| {
                    mark.fingerprint == machine.fingerprint
                        && mark.benchmark == series.benchmark
                        && mark.good == before.commit
                        && mark.bad == at.commit
                })
                .map_or_else(|| "-".to_owned(), |mark| mark.cell(&repository.name));
            let _ = write!(
                body,
                "<tr><td class=\"num\">#{} → #{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{culprit}</td></tr>",
                change.index - 1,
                change.index,
                commit_link(&repository.name, &before.commit),
                commit_link(&repository.name, &at.commit),
                format_measure(change.before, series.unit.as_deref()),
                format_measure(change.after, series.unit.as_deref()),
                percent(change.ratio, Some(series.higher_is_better)),
                {
                    let held = end - change.index;
                    let newest = end == series.points.len();
                    format!(
                        "{held} run{}{}",
                        if held == 1 { "" } else { "s" },
                        if newest { " so far" } else { "" }
                    )
                }
            );
        }
        body.push_str("</tbody></table></div>");
    }
    if let Some(change) = &series.count_change {
        count_change(&mut body, repository, change);
    }
    // The fastest iteration only of what Criterion timed (a time, or a throughput's rate at
    // its fastest iteration), and an interval only where the run had one.
    let unit = series.unit.as_deref();
    let timed = unit.is_none() || series.throughput.is_some();
    let _ = write!(
        body,
        "<h2>Runs</h2><div class=\"table\"><table><thead><tr><th>#</th><th>commit</th><th>recorded</th><th>{}</th><th>interval</th>{}</tr></thead><tbody>",
        if timed { "median" } else { "value" },
        if timed { "<th>fastest</th>" } else { "" }
    );
    for (i, point) in series.points.iter().enumerate().rev() {
        let interval = point.interval(unit).unwrap_or_else(|| "—".to_owned());
        let _ = write!(
            body,
            "<tr><td class=\"num\">{i}</td><td>{}{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{interval}</td>",
            commit_link(&repository.name, &point.commit),
            if point.overridden {
                " <span class=\"badge\">overridden</span>"
            } else {
                ""
            },
            date(point.recorded_at_ms),
            format_measure(point.value, unit),
        );
        if timed {
            let _ = write!(
                body,
                "<td class=\"num\">{}</td>",
                format_measure(point.fastest, unit)
            );
        }
        body.push_str("</tr>");
    }
    body.push_str("</tbody></table></div>");
    page(&series.benchmark, 4, &body)
}

/// Where the count's instructions went at its newest change: each function's own instructions
/// before and after, largest change first, and everything else; the rows add up to the change.
fn count_change(body: &mut String, repository: &Repository, change: &CountChange) {
    let profile = &change.profile;
    let whole = profile.change();
    let _ = write!(
        body,
        "<h2>Where the instructions went</h2><p class=\"muted\">At the newest change of the count, from {} to {}: {} → {} {} ({}). Each function's own instructions (Callgrind's exclusive <code>{}</code>), from the profiles stored with the two runs; <code>benchgate explain</code> shows more.</p>",
        commit_link(&repository.name, &change.before),
        commit_link(&repository.name, &change.after),
        grouped(profile.base_total),
        grouped(profile.head_total),
        escape(&profile.event),
        signed(whole),
        escape(&profile.event)
    );
    body.push_str("<div class=\"table\"><table><thead><tr><th>function</th><th>before</th><th>after</th><th>change</th><th>share</th></tr></thead><tbody>");
    for row in profile.rows.iter().chain(std::iter::once(&profile.rest)) {
        let class = match row.change().signum() {
            1 => "worse",
            -1 => "better",
            _ => "flat",
        };
        let _ = write!(
            body,
            "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num {class}\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&row.function),
            grouped(row.base),
            grouped(row.head),
            signed(row.change()),
            share(row.change(), whole)
        );
    }
    body.push_str("</tbody></table></div>");
}
