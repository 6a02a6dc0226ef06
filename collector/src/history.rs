//! github-action-benchmark histories (`data.js` or `data.json` from a `gh-pages` branch), so
//! projects can bring their past along, and git-bench's `data.json`, which has the same shape
//! with RFC 3339 dates and Criterion's `[low, high]` interval. Times (the `cargo` tool's
//! `ns/iter`, and `customSmallerIsBetter` in a time unit) read as ns per iteration; the custom
//! tools' other units (`customBiggerIsBetter` throughput in `MiB/s` or `Hz`,
//! `customSmallerIsBetter` memory in `MiB`), and rates of any tool (`ops/sec`), read as custom
//! metrics with their unit and which way is better.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One benchmark run of the history: a commit and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The full commit SHA.
    pub commit: String,
    /// When it ran, milliseconds since the epoch.
    pub date_ms: u64,
    /// The suite name (github-action-benchmark's `name` input, `Benchmark` by default).
    pub suite: String,
    /// Every benchmark of the run.
    pub benches: Vec<Bench>,
}

/// One benchmark's value in one entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Bench {
    /// The benchmark's name.
    pub name: String,
    /// ns per iteration, or for a custom metric (`metric` set) the value in its unit.
    pub value: f64,
    /// The interval about the value, in the same unit, when the history gives one: `± N`
    /// (libtest's and github-action-benchmark's `cargo` tool) or `[low unit, high unit]`
    /// (Criterion's own interval, as git-bench writes it). Other `range` texts give none.
    pub interval: Option<(f64, f64)>,
    /// For a value that is not a time: its unit and which way is better.
    pub metric: Option<crate::domain::CustomMetric>,
}

/// How a history value reads: a time (scaled to ns) or a custom metric.
enum Reading {
    Time(f64),
    Custom(crate::domain::CustomMetric),
}

/// github-action-benchmark's tools whose values are better when higher.
const HIGHER_IS_BETTER_TOOLS: &[&str] = &[
    "customBiggerIsBetter",
    "benchmarkjs",
    "pytest",
    "benchmarkluau",
];

/// Whether a unit is a rate (per second): better when higher, whatever the tool.
fn is_rate(unit: &str) -> bool {
    let unit = unit.trim();
    unit.ends_with("/s")
        || unit.ends_with("/sec")
        || unit.ends_with("/second")
        || unit.ends_with("Hz")
}

/// What a value of `unit` from `tool` is; `Err` says why it cannot be read.
fn reading(tool: Option<&str>, unit: &str) -> Result<Reading, String> {
    use crate::domain::{CustomMetric, Direction};
    let custom = |direction| {
        let unit = unit.trim();
        if unit.is_empty() || unit.len() > 32 {
            return Err(format!("{unit:?} is not a unit (1 to 32 characters)"));
        }
        Ok(Reading::Custom(CustomMetric {
            unit: unit.to_owned(),
            direction,
        }))
    };
    if tool.is_some_and(|t| HIGHER_IS_BETTER_TOOLS.contains(&t)) {
        return custom(Direction::HigherIsBetter);
    }
    if let Some(scale) = ns_per(unit) {
        return Ok(Reading::Time(scale));
    }
    if is_rate(unit) {
        return custom(Direction::HigherIsBetter);
    }
    if tool == Some("customSmallerIsBetter") {
        return custom(Direction::LowerIsBetter);
    }
    Err(format!(
        "{unit:?} is neither a time unit (ns/iter, us, ms, s) nor a rate (…/s, Hz), and the tool ({}) does not say which way is better (customBiggerIsBetter or customSmallerIsBetter do)",
        tool.unwrap_or("not given")
    ))
}

/// A history that cannot be read, naming the file and the field.
#[derive(Debug, thiserror::Error)]
#[error("{}: `{field}`: {message}", path.display())]
pub struct HistoryError {
    /// The file.
    pub path: PathBuf,
    /// The field at fault.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
struct File {
    entries: std::collections::BTreeMap<String, Vec<RawEntry>>,
}

#[derive(Deserialize)]
struct RawEntry {
    commit: RawCommit,
    #[serde(default)]
    tool: Option<String>,
    date: RawDate,
    benches: Vec<RawBench>,
}

/// github-action-benchmark writes milliseconds since the epoch; git-bench an RFC 3339 time.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawDate {
    Millis(u64),
    Text(String),
}

#[derive(Deserialize)]
struct RawCommit {
    id: String,
}

#[derive(Deserialize)]
struct RawBench {
    name: String,
    value: f64,
    #[serde(default)]
    range: Option<String>,
    unit: String,
}

/// ns per unit of time for the units github-action-benchmark's time tools write.
fn ns_per(unit: &str) -> Option<f64> {
    let unit = unit.strip_suffix("/iter").unwrap_or(unit);
    match unit {
        "ns" | "nanoseconds" => Some(1.0),
        "us" | "µs" | "μs" | "microseconds" => Some(1e3),
        "ms" | "milliseconds" => Some(1e6),
        "s" | "sec" | "seconds" => Some(1e9),
        _ => None,
    }
}

/// A `± N` range about a custom metric's value, in its unit.
fn plus_minus(range: &str, value: f64) -> Option<(f64, f64)> {
    let range = range.trim();
    let spread: f64 = range
        .strip_prefix('±')
        .or_else(|| range.strip_prefix("+/-"))?
        .trim()
        .parse()
        .ok()?;
    (spread.is_finite() && spread >= 0.0).then(|| ((value - spread).max(0.0), value + spread))
}

/// A `range` as an interval about `value` (both in the bench's unit, scaled to ns by `scale`):
/// `± N`, or `[low unit, high unit]` with each end in a time unit. `None` for anything else.
fn interval(range: &str, value: f64, scale: f64) -> Option<(f64, f64)> {
    let range = range.trim();
    if let Some(spread) = range
        .strip_prefix('±')
        .or_else(|| range.strip_prefix("+/-"))
    {
        let spread: f64 = spread.trim().parse().ok()?;
        return (spread.is_finite() && spread >= 0.0)
            .then(|| ((value - spread).max(0.0) * scale, (value + spread) * scale));
    }
    let inner = range.strip_prefix('[')?.strip_suffix(']')?;
    let (low, high) = inner.split_once(',')?;
    let end = |text: &str| -> Option<f64> {
        let mut parts = text.split_whitespace();
        let number: f64 = parts.next()?.parse().ok()?;
        let ns = match parts.next() {
            Some(unit) => number * ns_per(unit)?,
            None => number * scale,
        };
        (parts.next().is_none() && ns.is_finite() && ns >= 0.0).then_some(ns)
    };
    let (low, high) = (end(low)?, end(high)?);
    (low <= value * scale && value * scale <= high).then_some((low, high))
}

/// Reads a `data.js` (`window.BENCHMARK_DATA = {...}`) or `data.json` history, oldest first.
pub fn read(path: &Path, text: &str) -> Result<Vec<Entry>, HistoryError> {
    let error = |field: String, message: String| HistoryError {
        path: path.to_owned(),
        field,
        message,
    };
    let start = text.find('{').ok_or_else(|| {
        error(
            ".".into(),
            "no JSON object (expected `window.BENCHMARK_DATA = {...}`)".into(),
        )
    })?;
    let json = text[start..].trim_end().trim_end_matches(';');
    let deserializer = &mut serde_json::Deserializer::from_str(json);
    let file: File = serde_path_to_error::deserialize(deserializer)
        .map_err(|e| error(e.path().to_string(), e.inner().to_string()))?;
    let mut entries = Vec::new();
    for (suite, raw) in file.entries {
        for (i, entry) in raw.into_iter().enumerate() {
            let at = |field: &str| format!("entries.{suite}[{i}].{field}");
            let commit = entry.commit.id.to_ascii_lowercase();
            if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(error(
                    at("commit.id"),
                    format!("{commit:?} is not a full commit SHA"),
                ));
            }
            let mut benches = Vec::with_capacity(entry.benches.len());
            for (j, bench) in entry.benches.into_iter().enumerate() {
                let at = |field: &str| at(&format!("benches[{j}].{field}"));
                let reading = reading(entry.tool.as_deref(), &bench.unit)
                    .map_err(|message| error(at("unit"), message))?;
                if !(bench.value.is_finite() && bench.value >= 0.0) {
                    return Err(error(
                        at("value"),
                        format!("{} is not a finite value ≥ 0", bench.value),
                    ));
                }
                let bench = match reading {
                    Reading::Time(scale) => {
                        if bench.value * scale > crate::domain::MAX_NS_PER_ITERATION {
                            return Err(error(
                                at("value"),
                                format!(
                                    "{} {} is more than an hour per iteration; not a measurement",
                                    bench.value, bench.unit
                                ),
                            ));
                        }
                        let interval = bench
                            .range
                            .as_deref()
                            .and_then(|r| interval(r, bench.value, scale));
                        Bench {
                            name: bench.name,
                            value: bench.value * scale,
                            interval,
                            metric: None,
                        }
                    }
                    Reading::Custom(metric) => Bench {
                        interval: bench
                            .range
                            .as_deref()
                            .and_then(|r| plus_minus(r, bench.value)),
                        name: bench.name,
                        value: bench.value,
                        metric: Some(metric),
                    },
                };
                benches.push(bench);
            }
            let date_ms = match entry.date {
                RawDate::Millis(ms) => ms,
                RawDate::Text(text) => humantime::parse_rfc3339_weak(&text)
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .and_then(|d| u64::try_from(d.as_millis()).ok())
                    .ok_or_else(|| {
                        error(
                            at("date"),
                            format!(
                                "{text:?} is neither milliseconds since the epoch nor an RFC 3339 time"
                            ),
                        )
                    })?,
            };
            entries.push(Entry {
                commit,
                date_ms,
                suite: suite.clone(),
                benches,
            });
        }
    }
    entries.sort_by_key(|e| e.date_ms);
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Direction;

    fn direction(tool: Option<&str>, unit: &str) -> Option<Direction> {
        match reading(tool, unit) {
            Ok(Reading::Custom(metric)) => Some(metric.direction),
            _ => None,
        }
    }

    #[test]
    fn units_and_tools_say_what_a_value_is() {
        assert!(matches!(
            reading(Some("cargo"), "ns/iter"),
            Ok(Reading::Time(1.0))
        ));
        assert!(matches!(
            reading(Some("customSmallerIsBetter"), "milliseconds"),
            Ok(Reading::Time(1e6))
        ));
        for rate in ["Hz", "ops/sec", "MiB/s", "req/s"] {
            assert_eq!(
                direction(None, rate),
                Some(Direction::HigherIsBetter),
                "{rate}"
            );
        }
        assert_eq!(
            direction(Some("customBiggerIsBetter"), "MiB"),
            Some(Direction::HigherIsBetter)
        );
        assert_eq!(
            direction(Some("customSmallerIsBetter"), "MiB"),
            Some(Direction::LowerIsBetter)
        );
        assert!(reading(Some("cargo"), "MiB").is_err());
    }
}
