//! The trend chart's SVG for a small fixed dataset, as a snapshot: a step, a band, one change
//! point, one override.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use benchgate_dashboards::changepoint::{Config, detect};
use benchgate_dashboards::chart::{BudgetLine, Point, sparkline_svg, trend_svg};

fn points() -> Vec<Point> {
    let values = [
        100.0, 101.0, 99.5, 100.4, 99.8, 100.9, 100.2, 99.7, 124.0, 125.1, 124.6, 123.9, 125.4,
        124.2,
    ];
    values
        .iter()
        .enumerate()
        .map(|(i, v)| Point {
            commit: format!("{i:040x}"),
            recorded_at_ms: 1_700_000_000_000 + i as u64 * 86_400_000,
            value: *v,
            lower: v * 0.99,
            upper: v * 1.01,
            fastest: v * 0.98,
            overridden: i == 9,
        })
        .collect()
}

#[test]
fn a_step_with_its_change_point_and_an_override() {
    let points = points();
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    let changes = detect(&values, &Config::default());
    assert_eq!(changes.iter().map(|c| c.index).collect::<Vec<_>>(), vec![8]);
    let budget = BudgetLine {
        label: "median < 130 ns".into(),
        ns: 130.0,
    };
    let url = "https://github.com/acme/rocket/commit/";
    let svg = trend_svg("parse/json", &points, &changes, &[budget], None, Some(url)).unwrap();
    assert!(svg.contains("median &lt; 130 ns") || svg.contains("median < 130 ns"));
    assert_eq!(svg.matches("<circle").count(), points.len());
    // Each point: a tooltip with its run, commit, date and value, inside a link to its commit.
    assert_eq!(svg.matches("<title>").count(), points.len());
    assert!(
        svg.contains(&format!(
            "<a href=\"{url}{:040x}\"><circle",
            8
        )) && svg.contains("<title>#8 · 000000000000 · 2023-11-22 · 124.0 ns (122.8 ns – 125.2 ns) · fastest 121.5 ns</title></circle></a>"),
        "{svg}"
    );
    assert!(
        !trend_svg("parse/json", &points, &changes, &[], None, None)
            .unwrap()
            .contains("<a href"),
        "no links without an address"
    );
    // The gate's statistic beside the medians: each run's fastest iteration as a grey line,
    // and in each tooltip.
    assert_eq!(svg.matches("stroke=\"#6E7781\"").count(), 1, "{svg}");
    assert!(svg.contains("· fastest 121.5 ns</title>"), "{svg}");
    // The axis is labelled with each run's day (run 8 ran on 2023-11-22), not a run number.
    assert!(svg.contains(">\n2023-11-22\n</text>"), "{svg}");
    assert!(svg.contains("run date (UTC"), "{svg}");
    // Three runs: the axis's half-run ticks get no label, and no day is written twice.
    let three = trend_svg("parse/json", &points[..3], &[], &[], None, None).unwrap();
    for day in ["2023-11-14", "2023-11-15", "2023-11-16"] {
        assert_eq!(
            three.matches(&format!(">\n{day}\n</text>")).count(),
            1,
            "{three}"
        );
    }
    insta::assert_snapshot!("trend_step", svg);
    insta::assert_snapshot!("sparkline_step", sparkline_svg(&values));
}

/// The value axis's tick labels, bottom to top (the only right-aligned text of the chart).
fn tick_labels(svg: &str) -> Vec<String> {
    svg.split("text-anchor=\"end\"")
        .skip(1)
        .map(|text| {
            let body = &text[text.find('>').unwrap() + 1..];
            body[..body.find("</text>").unwrap()].trim().to_owned()
        })
        .collect()
}

/// The vertical positions of the chart's points, in pixels (SVG's y grows downwards).
fn point_heights(svg: &str) -> Vec<f64> {
    svg.split("<circle")
        .skip(1)
        .map(|circle| {
            let cy = circle.split("cy=\"").nth(1).unwrap();
            cy[..cy.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

#[test]
fn a_sevenfold_step_is_drawn_on_a_log_axis_that_keeps_the_noise_visible() {
    // 20 runs at 100 ns, then 20 at 700 ns, each ±2% (a fixed zig-zag).
    let points: Vec<Point> = (0..40)
        .map(|i| {
            let level = if i < 20 { 100.0 } else { 700.0 };
            let v = level * if i % 2 == 0 { 0.98 } else { 1.02 };
            Point {
                commit: format!("{i:040x}"),
                recorded_at_ms: 1_700_000_000_000 + i as u64 * 86_400_000,
                value: v,
                lower: v * 0.995,
                upper: v * 1.005,
                fastest: v * 0.99,
                overridden: false,
            }
        })
        .collect();
    let svg = trend_svg("parse/json", &points, &[], &[], None, None).unwrap();
    assert!(svg.contains("time per iteration, log scale"), "{svg}");
    // Ticks at round values, not at round logarithms (plotters' own: 99.48, 121.5, 148.4 …).
    assert_eq!(
        tick_labels(&svg),
        ["100 ns", "150 ns", "200 ns", "300 ns", "500 ns", "700 ns"],
        "{svg}"
    );
    let heights = point_heights(&svg);
    assert_eq!(heights.len(), 40);
    let spread = |part: &[f64]| {
        part.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            - part.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let (before, after) = heights.split_at(20);
    // ±2% on each side is as tall as the other: equal ratios, equal heights. On a linear axis
    // the noise before the step would be a seventh of the noise after it (about 1.6 px).
    // (Equal to within a pixel of rounding: 5 or 6 px each.)
    assert!(
        (spread(before) - spread(after)).abs() <= 1.0,
        "{before:?} {after:?}"
    );
    assert!(spread(before) >= 4.0, "{before:?}");
    // The step itself still dominates: ln 7 against ln(1.02/0.98).
    let step = before.iter().sum::<f64>() / 20.0 - after.iter().sum::<f64>() / 20.0;
    assert!(step > 20.0 * spread(before), "{step} {before:?}");

    // A 25% step stays on a linear axis (the snapshot above is one), its ticks plotters' own
    // round steps, written without trailing zeros.
    let svg = trend_svg("parse/json", &self::points(), &[], &[], None, None).unwrap();
    assert!(!svg.contains("log scale"));
    assert_eq!(
        tick_labels(&svg),
        ["100 ns", "105 ns", "110 ns", "115 ns", "120 ns", "125 ns"],
        "{svg}"
    );
}

#[test]
fn a_custom_metric_is_drawn_without_a_fastest_iteration_and_a_bare_value_without_an_interval() {
    // A rate with samples (its lowest 2% under its median), and one value imported bare.
    let mut points = points();
    for point in &mut points {
        point.value += 1000.0;
        point.lower = point.value * 0.99;
        point.upper = point.value * 1.01;
        point.fastest = point.value * 0.98;
    }
    points[8].lower = points[8].value;
    points[8].upper = points[8].value;
    let svg = trend_svg("sequential_read", &points, &[], &[], Some("MiB/s"), None).unwrap();
    assert_eq!(svg.matches("stroke=\"#6E7781\"").count(), 0, "{svg}");
    assert!(!svg.contains("fastest"), "{svg}");
    assert!(
        svg.contains("<title>#8 · 000000000000 · 2023-11-22 · 1,124 MiB/s</title>"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>#7 · 000000000000 · 2023-11-21 · 1,100 MiB/s (1,089 MiB/s – 1,111 MiB/s)</title>"),
        "{svg}"
    );
    // A time keeps its grey line and its fastest iteration.
    let timed = trend_svg("parse/json", &points, &[], &[], None, None).unwrap();
    assert_eq!(timed.matches("stroke=\"#6E7781\"").count(), 1, "{timed}");
    assert!(timed.contains(" · fastest "), "{timed}");
}
