//! SVG charts: the large trend chart of one benchmark (plotters) and the index's sparklines.

pub use benchgate_gate::report::{format_measure, format_ns};
use std::ops::Range;

use plotters::coord::ranged1d::{
    BoldPoints, DefaultFormatting, KeyPointHint, KeyPointWeight, Ranged,
};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::changepoint::ChangePoint;

/// One point of a trend: a run's value with its interval, in ns per iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The run's commit.
    pub commit: String,
    /// When it ran, milliseconds since the epoch.
    pub recorded_at_ms: u64,
    /// ns per iteration (the median).
    pub value: f64,
    /// The interval's lower bound.
    pub lower: f64,
    /// The interval's upper bound.
    pub upper: f64,
    /// The run's fastest time per iteration, the statistic the gate compares (interference
    /// only adds time); a custom metric's value.
    pub fastest: f64,
    /// A maintainer overrode the gate at this commit.
    pub overridden: bool,
}

impl Point {
    /// `lower – upper` in `unit`, where the run has an interval (an imported history's value
    /// may have none).
    pub fn interval(&self, unit: Option<&str>) -> Option<String> {
        (self.lower < self.value || self.upper > self.value).then(|| {
            format!(
                "{} – {}",
                format_measure(self.lower, unit),
                format_measure(self.upper, unit)
            )
        })
    }
}

/// A budget drawn on the chart: a horizontal line at a time bound.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetLine {
    /// What it says, e.g. `median < 150 ns`.
    pub label: String,
    /// The bound, in the chart's unit: ns per iteration, or a throughput's rate.
    pub ns: f64,
}

/// The large chart: one position per run, oldest first, the axis labelled with the day each ran;
/// every point (a circle each, with a tooltip of its run number, commit, date
/// and value, and a link to `{commit_url}{commit}` when given), the interval as a band, change
/// points as red vertical lines, overridden commits as green triangles, budgets as orange
/// dashed lines. Values spanning more than `LOG_SCALE_RATIO` are drawn on a log axis, which
/// says so. `None` for no points.
pub fn trend_svg(
    title: &str,
    points: &[Point],
    changes: &[ChangePoint],
    budgets: &[BudgetLine],
    unit: Option<&str>,
    commit_url: Option<&str>,
) -> Option<String> {
    trend_svg_of(
        title,
        points,
        changes,
        budgets,
        unit,
        unit.is_none(),
        commit_url,
    )
}

/// [`trend_svg`], with each run's fastest iteration drawn (`fastest`) whatever the unit: a
/// Criterion throughput's chart is a rate, and its fastest iteration is its highest rate.
pub fn trend_svg_of(
    title: &str,
    points: &[Point],
    changes: &[ChangePoint],
    budgets: &[BudgetLine],
    unit: Option<&str>,
    fastest: bool,
    commit_url: Option<&str>,
) -> Option<String> {
    if points.is_empty() {
        return None;
    }
    let scale = Scale::for_points(points);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 420)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let (y_bottom, y_top) = y_range(points, scale, fastest);
        let axis = ValueAxis::new(y_bottom..y_top, scale);
        let tick = |y: &f64| tick_label(scale.value(*y), unit);
        // Wide enough for the widest tick label beside the axis's rotated title (the labelled
        // ticks are the bold ones; a bare count asks for the light grid's).
        let widest = axis
            .key_points(BoldPoints(Y_LABELS))
            .iter()
            .map(|y| tick(y).chars().count())
            .max()
            .unwrap_or(0);
        let n = points.len();
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(32)
            .y_label_area_size(y_label_area(widest))
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5).max(0.5), axis)
            .ok()?;
        let measure = match (unit, fastest) {
            (None, _) => "time per iteration".to_owned(),
            // A rate Criterion timed: a throughput.
            (Some(u), true) => format!("throughput ({u})"),
            (Some(u), false) => format!("value ({u})"),
        };
        // One position per run, in order (runs are what the detector and the gate count),
        // labelled with the day each ran.
        let day_of = |x: &f64| {
            let index = x.round();
            if (x - index).abs() > 1e-6 || index < 0.0 {
                return String::new();
            }
            points
                .get(index as usize)
                .map_or_else(String::new, |p| date(p.recorded_at_ms))
        };
        chart
            .configure_mesh()
            .x_desc("run date (UTC; one position per run, oldest first)")
            .y_desc(match scale {
                Scale::Linear => measure,
                Scale::Log => format!("{measure}, log scale"),
            })
            .label_style(("sans-serif", LABEL_FONT_PX))
            .axis_desc_style(("sans-serif", LABEL_FONT_PX))
            .x_labels(8)
            .x_label_formatter(&day_of)
            .y_labels(Y_LABELS)
            .y_label_formatter(&tick)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .ok()?;
        draw_values(&mut chart, points, scale, fastest)?;
        for change in changes {
            let x = change.index as f64 - 0.5;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, y_bottom), (x, y_top)],
                    RED.stroke_width(2),
                )))
                .ok()?;
        }
        draw_budgets(&mut chart, budgets, scale, (n as f64 - 0.5).max(0.5))?;
        draw_markers(&mut chart, points, scale)?;
        root.present().ok()?;
    }
    Some(with_tooltips(&svg, points, unit, fastest, commit_url))
}

/// The trend chart's drawing area: runs along x, values (or their logarithms) along y.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, ValueAxis>>;

/// The axes' labels and titles, in pixels of the chart's 960 × 420 box.
const LABEL_FONT_PX: u32 = 10;
/// At most this many labelled ticks up the value axis.
const Y_LABELS: usize = 10;

/// The value axis's label area for tick labels `widest` characters long: the labels (at most
/// 0.65 em a character in a sans-serif face: digits are 0.64), the tick's 10 px, and the
/// rotated title's line with a gap. A fixed width let `6.050 iter/sec` run over the title.
fn y_label_area(widest: usize) -> u32 {
    let label = (widest as f64 * 0.65 * f64::from(LABEL_FONT_PX)).ceil() as u32;
    label + 10 + 2 * LABEL_FONT_PX + 4
}

/// A tick's label: the value as everywhere else, its trailing zeros dropped (`2 iter/sec`,
/// `1.5 µs`), for the ticks sit at round values.
fn tick_label(value: f64, unit: Option<&str>) -> String {
    let text = format_measure(value, unit);
    let (number, rest) = text.split_at(text.find(' ').unwrap_or(text.len()));
    if !number.contains('.') {
        return text;
    }
    let number = number.trim_end_matches('0').trim_end_matches('.');
    format!("{number}{rest}")
}

/// The value axis: plotters' own for values as they are; for their logarithms, ticks at round
/// values (1, 2, 5 × 10ⁿ, or finer where the range is short) rather than at round logarithms
/// (plotters' own would put them at e^0.2k: 1.221, 1.492, 1.822).
struct ValueAxis {
    linear: RangedCoordf64,
    scale: Scale,
}

impl ValueAxis {
    fn new(range: Range<f64>, scale: Scale) -> Self {
        Self {
            linear: range.into(),
            scale,
        }
    }
}

impl Ranged for ValueAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match self.scale {
            Scale::Linear => self.linear.key_points(hint),
            Scale::Log => {
                let range = self.linear.range();
                let bold = matches!(hint.weight(), KeyPointWeight::Bold);
                log_ticks(
                    range.start.exp(),
                    range.end.exp(),
                    hint.max_num_points(),
                    bold,
                )
                .into_iter()
                .map(f64::ln)
                .collect()
            }
        }
    }

    fn range(&self) -> Range<f64> {
        self.linear.range()
    }
}

/// Round values from `low` to `high` for a log axis, at most `most`: the coarsest of decades,
/// 1-2-5, 1-1.5-2-3-5-7 and 1–9 (of each power of ten) that gives at least 4 (`labelled`); the
/// finest that fits for the light grid lines. Decades beyond `most` are thinned to every k-th.
fn log_ticks(low: f64, high: f64, most: usize, labelled: bool) -> Vec<f64> {
    const STEPS: [&[f64]; 4] = [
        &[1.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ];
    if !(low > 0.0 && high > low && high.is_finite()) || most == 0 {
        return Vec::new();
    }
    let within = |mantissas: &[f64]| -> Vec<f64> {
        let first = low.log10().floor() as i32;
        let last = high.log10().ceil() as i32;
        (first..=last)
            .flat_map(|power| mantissas.iter().map(move |m| m * 10f64.powi(power)))
            .filter(|v| (low..=high).contains(v))
            .collect()
    };
    let decades = within(STEPS[0]);
    if decades.len() > most {
        let every = decades.len().div_ceil(most);
        return decades.into_iter().step_by(every).collect();
    }
    // Coarse to fine, each within `most`.
    let mut fitting: Vec<Vec<f64>> = STEPS
        .iter()
        .map(|s| within(s))
        .filter(|t| t.len() <= most)
        .collect();
    let coarsest = labelled
        .then(|| fitting.iter().position(|t| t.len() >= 4))
        .flatten();
    coarsest
        .or(fitting.len().checked_sub(1))
        .map(|chosen| fitting.swap_remove(chosen))
        .unwrap_or_default()
}

/// The y axis's range: every value, interval and (where drawn) fastest iteration, with a
/// margin.
fn y_range(points: &[Point], scale: Scale, fastest: bool) -> (f64, f64) {
    let or_fastest = |p: &Point| if fastest { p.fastest } else { p.value };
    let low = points
        .iter()
        .map(|p| scale.y(p.lower.min(p.value).min(or_fastest(p))))
        .fold(f64::INFINITY, f64::min);
    let high = points
        .iter()
        .map(|p| scale.y(p.upper.max(p.value).max(or_fastest(p))))
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = match scale {
        Scale::Linear => ((high - low) * 0.08).max(high * 0.01),
        Scale::Log => ((high - low) * 0.08).max(0.01),
    };
    let y_bottom = match scale {
        Scale::Linear => (low - pad).max(0.0),
        Scale::Log => low - pad,
    };
    (y_bottom, high + pad)
}

/// Each run's interval (a band), its median (a line) and, of what Criterion timed, its fastest
/// iteration (a grey line). A custom metric's lowest sample is not what the gate judges (nor,
/// of a rate, the best), and the legend does not name it: it is not drawn.
fn draw_values(
    chart: &mut Chart<'_, '_>,
    points: &[Point],
    scale: Scale,
    fastest: bool,
) -> Option<()> {
    // The interval band: upper edge forwards, lower edge back.
    let band: Vec<(f64, f64)> = points
        .iter()
        .enumerate()
        .map(|(i, p)| (i as f64, scale.y(p.upper)))
        .chain(
            points
                .iter()
                .enumerate()
                .rev()
                .map(|(i, p)| (i as f64, scale.y(p.lower))),
        )
        .collect();
    chart
        .draw_series(std::iter::once(Polygon::new(band, BLUE.mix(0.15).filled())))
        .ok()?;
    let mut line = |value: fn(&Point) -> f64, style: ShapeStyle| {
        let at = points
            .iter()
            .enumerate()
            .map(|(i, p)| (i as f64, scale.y(value(p))));
        chart.draw_series(LineSeries::new(at, style)).ok().map(drop)
    };
    line(|p| p.value, BLUE.mix(0.5).stroke_width(1))?;
    // What the gate judges: each run's fastest iteration, a grey line (no markers: the
    // circles are the medians, each with its tooltip).
    if fastest {
        line(|p| p.fastest, RGBColor(110, 119, 129).stroke_width(1))?;
    }
    Some(())
}

/// Each budget a dashed orange line at its bound, labelled.
fn draw_budgets(
    chart: &mut Chart<'_, '_>,
    budgets: &[BudgetLine],
    scale: Scale,
    x_end: f64,
) -> Option<()> {
    let orange = RGBColor(217, 119, 6);
    // A budget off a log axis (zero or below) cannot be drawn on it.
    for budget in budgets.iter().filter(|b| scale.fits(b.ns)) {
        let level = scale.y(budget.ns);
        // Dashes: short segments along the bound.
        let mut x = -0.5;
        let dash = (x_end + 0.5) / 60.0;
        while x < x_end {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, level), ((x + dash).min(x_end), level)],
                    orange.stroke_width(2),
                )))
                .ok()?;
            x += 2.0 * dash;
        }
        chart
            .draw_series(std::iter::once(Text::new(
                budget.label.clone(),
                (-0.3, level),
                ("sans-serif", 13).into_font().color(&orange),
            )))
            .ok()?;
    }
    Some(())
}

/// Each run's median a blue circle (with its tooltip, added after), an overridden commit's a
/// green triangle.
fn draw_markers(chart: &mut Chart<'_, '_>, points: &[Point], scale: Scale) -> Option<()> {
    chart
        .draw_series(
            points
                .iter()
                .enumerate()
                .map(|(i, p)| Circle::new((i as f64, scale.y(p.value)), 3, BLUE.filled())),
        )
        .ok()?;
    chart
        .draw_series(
            points
                .iter()
                .enumerate()
                .filter(|(_, p)| p.overridden)
                .map(|(i, p)| TriangleMarker::new((i as f64, scale.y(p.value)), 7, GREEN.filled())),
        )
        .ok()?;
    Some(())
}

/// Above this ratio of the largest value to the smallest, the trend is drawn on a log axis: on a
/// linear one, a 7× step flattens every move on either side of it into a line.
const LOG_SCALE_RATIO: f64 = 4.0;

/// The trend chart's vertical axis: the values as they are, or their logarithm (equal
/// ratios, equal heights) when they span more than [`LOG_SCALE_RATIO`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    Linear,
    Log,
}

impl Scale {
    fn for_points(points: &[Point]) -> Self {
        let lowest = points
            .iter()
            .map(|p| p.lower.min(p.value).min(p.fastest))
            .fold(f64::INFINITY, f64::min);
        let highest = points
            .iter()
            .map(|p| p.upper.max(p.value))
            .fold(0.0, f64::max);
        if lowest > 0.0 && highest / lowest > LOG_SCALE_RATIO {
            Self::Log
        } else {
            Self::Linear
        }
    }

    /// Where `value` sits on the axis.
    fn y(self, value: f64) -> f64 {
        match self {
            Self::Linear => value,
            Self::Log => value.ln(),
        }
    }

    /// The value at axis position `y`, for its label.
    fn value(self, y: f64) -> f64 {
        match self {
            Self::Linear => y,
            Self::Log => y.exp(),
        }
    }

    fn fits(self, value: f64) -> bool {
        self == Self::Linear || value > 0.0
    }
}

/// The chart's point circles (plotters draws nothing else as a circle, and draws them in the
/// points' order) each with a `<title>` tooltip and, given `commit_url`, a link to its commit.
fn with_tooltips(
    svg: &str,
    points: &[Point],
    unit: Option<&str>,
    with_fastest: bool,
    commit_url: Option<&str>,
) -> String {
    let mut out = String::with_capacity(svg.len() + points.len() * 160);
    let mut rest = svg;
    for (i, point) in points.iter().enumerate() {
        let Some(start) = rest.find("<circle") else {
            break;
        };
        let Some(end) = rest[start..].find("/>").map(|e| start + e) else {
            break;
        };
        out.push_str(&rest[..start]);
        // An interval only where there is one (an imported history's value may have none),
        // and the fastest iteration only of what Criterion timed.
        let interval = point
            .interval(unit)
            .map_or_else(String::new, |i| format!(" ({i})"));
        let fastest = if with_fastest {
            format!(" · fastest {}", format_measure(point.fastest, unit))
        } else {
            String::new()
        };
        let tooltip = format!(
            "#{i} · {} · {} · {}{interval}{fastest}",
            &point.commit[..point.commit.len().min(12)],
            date(point.recorded_at_ms),
            format_measure(point.value, unit),
        );
        // Written straight into the page: this runs for every point of every chart.
        if let Some(url) = commit_url {
            out.push_str("<a href=\"");
            push_escaped(&mut out, url);
            push_escaped(&mut out, &point.commit);
            out.push_str("\">");
        }
        out.push_str(&rest[start..end]);
        out.push_str("><title>");
        push_escaped(&mut out, &tooltip);
        out.push_str("</title></circle>");
        if commit_url.is_some() {
            out.push_str("</a>");
        }
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// `text` onto `out`, escaped for XML text and attribute values.
fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

/// A sparkline: the last values as a polyline in a 120 × 28 box, no axes.
pub fn sparkline_svg(values: &[f64]) -> String {
    let (w, h) = (120.0, 28.0);
    if values.len() < 2 {
        return format!(
            r#"<svg class="spark" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="too few points"></svg>"#
        );
    }
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = (high - low).max(high * 1e-9).max(f64::MIN_POSITIVE);
    let step = w / (values.len() - 1) as f64;
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            format!(
                "{:.1},{:.1}",
                i as f64 * step,
                h - 2.0 - (v - low) / span * (h - 4.0)
            )
        })
        .collect();
    format!(
        r##"<svg class="spark" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="trend"><polyline fill="none" stroke="#1f6feb" stroke-width="1.5" points="{}"/></svg>"##,
        points.join(" ")
    )
}

/// `YYYY-MM-DD` of a time in ms since the epoch (UTC).
pub(crate) fn date(ms: u64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_seconds(time).to_string()[..10].to_owned()
}
