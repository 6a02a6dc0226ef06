//! A report row's words and numbers: times, rates and custom values as people read them, each
//! change in words, the bound, the limit and what could be detected.

use crate::noise::NoiseSource;
use crate::verdict::{BenchmarkResult, Metric, Verdict};

/// Nanoseconds for people: 4 significant digits in ns, µs, ms or s.
pub fn format_ns(ns: f64) -> String {
    // Thresholds just below each power of 1000, so 999,999.99 ns reads 1.000 ms, not 1000.0 µs.
    let (value, unit) = match ns {
        n if n < 999.95 => (n, "ns"),
        n if n < 999_950.0 => (n / 1e3, "µs"),
        n if n < 999_950_000.0 => (n / 1e6, "ms"),
        n => (n / 1e9, "s"),
    };
    let decimals = if value >= 100.0 {
        1
    } else if value >= 10.0 {
        2
    } else {
        3
    };
    format!("{value:.decimals$} {unit}")
}

/// A ratio (above 1 worse) as the change of the value the report shows, in words, so no sign
/// can be misread: time and throughput are `30.0% slower` or `8.0% faster` (throughput's
/// percentage is of the throughput shown); a custom metric is `12.0% higher` or `lower`.
pub(super) fn ratio_words(b: &BenchmarkResult, ratio: f64) -> String {
    let change = if b.metric.higher_is_better() {
        1.0 / ratio - 1.0
    } else {
        ratio - 1.0
    };
    let size = size_words(change.abs());
    if size == "0.0%" {
        return "no change".to_owned();
    }
    let word = match b.metric {
        Metric::Time | Metric::Throughput if ratio > 1.0 => "slower",
        Metric::Time | Metric::Throughput => "faster",
        Metric::Lower | Metric::Higher if change > 0.0 => "higher",
        Metric::Lower | Metric::Higher => "lower",
    };
    format!("{size} {word}")
}

/// How large a change is: a percentage, and from ten times the value on the factor (a bound or
/// detectable change of a benchmark whose rounds disagree wildly can be 10^70 times: a row of
/// digits says nothing a factor does not), past a thousand times no figure at all.
fn size_words(size: f64) -> String {
    let factor = 1.0 + size;
    if factor >= LARGEST_FACTOR || factor.is_nan() {
        format!("over {LARGEST_FACTOR:.0} times")
    } else if factor >= 10.0 {
        format!("{factor:.0} times")
    } else {
        format!("{:.1}%", size * 100.0)
    }
}

/// The largest factor [`size_words`] gives a figure.
const LARGEST_FACTOR: f64 = 1000.0;

/// The change as people read it (see [`ratio_words`]); a custom metric says which way is worse.
pub(super) fn change_text(b: &BenchmarkResult) -> String {
    match b.ratio {
        None => "-".to_owned(),
        Some(ratio) => {
            let words = ratio_words(b, ratio);
            match b.metric {
                Metric::Lower | Metric::Higher if words != "no change" => {
                    format!("{words} ({})", if ratio > 1.0 { "worse" } else { "better" })
                }
                _ => words,
            }
        }
    }
}

pub(super) fn limit_text(b: &BenchmarkResult) -> String {
    ratio_words(b, b.limit)
}

/// The bound the verdict rests on, in the change's words: `≤ 21.2% slower` (the largest
/// slowdown not excluded), `≥ 22.1% slower` (at least), `≥ 3.0% faster` (an improvement),
/// `≤ no change (≥ 4.4% faster)` (a pass whose bound excludes any slowdown), or `a … b` for a
/// warning.
pub(super) fn bound_text(b: &BenchmarkResult) -> String {
    let Some(bound) = b.bound else {
        return "-".to_owned();
    };
    let text = match (bound.lower, bound.upper) {
        (Some(lower), Some(upper)) => {
            format!("{} … {}", ratio_words(b, lower), ratio_words(b, upper))
        }
        // ratio ≤ upper: at most that much worse, or at least that much better.
        // Within a rounding of no change, the bound's own side: "≤ no change" for an upper.
        (None, Some(upper)) => {
            let words = ratio_words(b, upper);
            let at_most = upper >= 1.0 || words == "no change";
            match words.strip_prefix("over ") {
                // "≤ over 1000 times slower" would read as a bound.
                Some(past) if at_most => format!("none under {past}"),
                _ if at_most => format!("≤ {words}"),
                // An improvement is claimed on this side; anything else rests on the slowdown
                // it excludes, as every pass does ("≤ x slower"), and says how far past it.
                _ if b.verdict == Verdict::Improved => format!("≥ {words}"),
                _ => format!("≤ no change (≥ {words})"),
            }
        }
        // ratio ≥ lower: at least that much worse, or at most that much better.
        (Some(lower), None) => {
            let words = ratio_words(b, lower);
            let at_least = lower >= 1.0 || words == "no change";
            format!("{} {words}", if at_least { "≥" } else { "≤" })
        }
        (None, None) => "-".to_owned(),
    };
    format!("{text}{}", if b.uncalibrated { " †" } else { "" })
}

/// The smallest slowdown that would read `regressed`: what an undecided benchmark lacks. A
/// decided one needs none, and beside a pass's "≤ 5.5% slower" a "75.7% slower" read as a
/// contradiction (#45), so its cell is empty.
pub(super) fn detectable_text(b: &BenchmarkResult) -> String {
    b.detectable
        .filter(|_| shows_detectable(b))
        .map_or_else(|| "-".to_owned(), |ratio| ratio_words(b, ratio))
}

/// Whether a row's detectable change is worth its cell: only an undecided benchmark's is.
pub(super) fn shows_detectable(b: &BenchmarkResult) -> bool {
    b.verdict == Verdict::Inconclusive
}

/// A throughput benchmark's time per iteration as the rate people read (`1.907 GiB/s`),
/// in Criterion's units for its kind: binary prefixes for bytes, decimal for the rest. The
/// report and `show` read rates through this one.
pub fn format_rate(ns: f64, kind: &str, amount: u64) -> String {
    let per_second = amount as f64 / (ns * 1e-9);
    let (unit, binary) = match kind {
        "Bytes" => ("B/s", true),
        "BytesDecimal" => ("B/s", false),
        "Bits" => ("bit/s", false),
        _ => ("elem/s", false),
    };
    let prefixes: [(&str, f64); 4] = if binary {
        [
            ("Ti", 1024f64.powi(4)),
            ("Gi", 1024f64.powi(3)),
            ("Mi", 1024f64.powi(2)),
            ("Ki", 1024.0),
        ]
    } else {
        [("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)]
    };
    let (scaled, prefix) = prefixes
        .into_iter()
        .find(|(_, scale)| per_second >= *scale)
        .map_or((per_second, ""), |(prefix, scale)| {
            (per_second / scale, prefix)
        });
    // Four significant digits; a binary prefix leaves up to 1,023 of a unit (`1020 MiB/s`).
    let decimals = if scaled >= 1000.0 {
        0
    } else if scaled >= 100.0 {
        1
    } else if scaled >= 10.0 {
        2
    } else {
        3
    };
    format!("{scaled:.decimals$} {prefix}{unit}")
}

/// A side's value in the unit of the measure compared: a rate for throughput benchmarks.
pub(super) fn side_text(b: &BenchmarkResult, ns: Option<f64>) -> String {
    match (ns, b.metric, b.throughput_per_iteration) {
        (Some(ns), Metric::Throughput, Some((kind, amount))) if ns > 0.0 && amount > 0 => {
            format_rate(ns, kind, amount)
        }
        _ => value_text(ns, b.unit.as_deref()),
    }
}

pub(super) fn value_text(ns: Option<f64>, unit: Option<&str>) -> String {
    ns.map_or_else(|| "-".to_owned(), |value| format_measure(value, unit))
}

/// A value as people read it: ns per iteration (`unit` `None`) or a custom metric's value in
/// its unit; a custom metric in a time unit reads like a time (`41.20 ms`).
pub fn format_measure(value: f64, unit: Option<&str>) -> String {
    let Some(unit) = unit else {
        return format_ns(value);
    };
    let ns_per_unit = match unit {
        "ns" => 1.0,
        "µs" | "μs" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return with_si_prefix(value, unit),
    };
    format_ns(value * ns_per_unit)
}

/// A custom metric's value in its unit, four significant digits: an SI prefix beyond a million
/// or below a thousandth (`93.48 MHz`, `2.500 µs/op`), never an exponent. A unit that already
/// starts with a binary prefix (`MiB/s`) keeps its own: the SI one stands apart from it.
pub fn with_si_prefix(value: f64, unit: &str) -> String {
    const PREFIXES: [(&str, i32); 10] = [
        ("E", 18),
        ("P", 15),
        ("T", 12),
        ("G", 9),
        ("M", 6),
        ("m", -3),
        ("µ", -6),
        ("n", -9),
        ("p", -12),
        ("f", -15),
    ];
    let magnitude = if value == 0.0 || !value.is_finite() {
        0
    } else {
        value.abs().log10().floor() as i32
    };
    let (scaled, prefix) = if (-3..6).contains(&magnitude) {
        (value, "")
    } else {
        PREFIXES
            .iter()
            .find(|(_, power)| magnitude >= *power)
            .or(PREFIXES.last())
            .map_or((value, ""), |(prefix, power)| {
                (value / 10f64.powi(*power), *prefix)
            })
    };
    let number = format_value(scaled);
    let binary = unit.len() > 1 && unit.as_bytes().get(1) == Some(&b'i');
    match (prefix, binary) {
        ("", _) => format!("{number} {unit}"),
        (prefix, true) => format!("{number} {prefix} {unit}"),
        (prefix, false) => format!("{number} {prefix}{unit}"),
    }
}

/// A plain number of everyday magnitude: four significant digits, thousands grouped
/// (`123,456`), never an exponent (see [`with_si_prefix`] for the rest).
pub fn format_value(value: f64) -> String {
    let magnitude = if value == 0.0 || !value.is_finite() {
        0
    } else {
        value.abs().log10().floor() as i32
    };
    let decimals = (3 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if magnitude < 3 {
        return text;
    }
    // Group the integer digits by thousands.
    let (sign, digits) = text
        .strip_prefix('-')
        .map_or(("", text.as_str()), |d| ("-", d));
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}")
}

/// A table row; `with_detectable` where the table has an undecided benchmark to show it for.
pub(super) fn row(b: &BenchmarkResult, with_verdict: bool, with_detectable: bool) -> Vec<String> {
    let mut cells = vec![format!("`{}`", b.id.replace('`', "'").replace('|', "\\|"))];
    if with_verdict {
        cells.push(b.verdict.as_str().to_owned());
    }
    cells.extend([
        side_text(b, b.base_ns),
        side_text(b, b.head_ns),
        change_text(b),
        limit_text(b),
        bound_text(b),
    ]);
    if with_detectable {
        cells.push(detectable_text(b));
    }
    cells.push(rounds_text(b));
    if let Some(reason) = &b.quarantined {
        cells[0] = format!("{} (quarantined: {})", cells[0], reason.replace('|', "\\|"));
    }
    cells
}

/// The rounds a verdict took, with those set aside and whether it was stopped for futility.
pub(super) fn rounds_text(b: &BenchmarkResult) -> String {
    if b.noise_source == Some(NoiseSource::SameExecutables) {
        return "not measured (same executables)".to_owned();
    }
    if b.rounds == 0 {
        return "-".to_owned();
    }
    let mut notes = Vec::new();
    if b.set_aside > 0 {
        notes.push(format!("{} set aside", b.set_aside));
    }
    if b.futile {
        notes.push("stopped early".to_owned());
    }
    if b.base_runs > 1 {
        notes.push(format!("base: median of {} runs", b.base_runs));
    }
    if notes.is_empty() {
        b.rounds.to_string()
    } else {
        format!("{} ({})", b.rounds, notes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::format_rate;

    #[test]
    fn a_rate_has_four_significant_digits_under_a_binary_prefix_too() {
        // base64's `decode/100` at 1020 MiB/s read `1020.0 MiB/s` beside `1.522 GiB/s`.
        let mib = 1024.0 * 1024.0;
        let ns = |per_second: f64| 100.0 / per_second * 1e9;
        assert_eq!(format_rate(ns(1020.0 * mib), "Bytes", 100), "1020 MiB/s");
        assert_eq!(format_rate(ns(713.4 * mib), "Bytes", 100), "713.4 MiB/s");
        assert_eq!(
            format_rate(ns(1.522 * 1024.0 * mib), "Bytes", 100),
            "1.522 GiB/s"
        );
        assert_eq!(
            format_rate(ns(97.2 * 1e6), "Elements", 100),
            "97.20 Melem/s"
        );
    }
}
