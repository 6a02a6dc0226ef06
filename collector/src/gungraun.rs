//! gungraun's instruction counts: the `summary.json` files its runner writes per benchmark
//! (`cargo bench -- --save-summary=json`, under `target/gungraun/`), read into measurements
//! stored beside Criterion's.
//!
//! Each benchmark `GROUP/FUNCTION[/ID]` becomes one measurement per Callgrind event it counted,
//! named `GROUP/FUNCTION[/ID]/EVENT`: `instructions` (Callgrind's `Ir`), and when the cache
//! simulation ran, `L1 hits`, `LL hits`, `RAM hits` and `estimated cycles`. Each is a custom
//! metric whose unit is the event and where lower is better, one observation per run: counts
//! are exact, not sampled.
//!
//! Only the schema this version was written against is read ([`SCHEMA_VERSION`], what gungraun
//! 0.20 writes); a summary of another version, or a damaged one, is refused whole with the file
//! and the field named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::callgrind;
use crate::domain::{BenchmarkId, CustomMetric, Direction, Estimate, Measurement, Samples};
use crate::error::{Error, Result};

/// The `version` of gungraun's summary this reader understands (gungraun 0.20).
pub const SCHEMA_VERSION: &str = "7";

/// The file name gungraun gives each benchmark's summary.
pub const SUMMARY_FILE: &str = "summary.json";

pub use benchgate_core::counts::{EVENTS, INSTRUCTIONS, is_count_unit};

#[derive(Deserialize)]
struct Summary {
    group: String,
    function_name: String,
    #[serde(default)]
    id: Option<String>,
    profiles: Vec<Profile>,
}

#[derive(Deserialize)]
struct Profile {
    tool: String,
    data: ProfileData,
}

#[derive(Deserialize)]
struct ProfileData {
    total: Total,
}

#[derive(Deserialize)]
struct Total {
    metrics: BTreeMap<String, MetricValues>,
}

#[derive(Deserialize)]
struct MetricValues {
    values: Values,
}

/// This run's count (`new`) and, when gungraun compared, the previous one's (`old`).
#[derive(Deserialize)]
struct Values {
    #[serde(default)]
    new: Option<Value>,
}

/// Every `summary.json` under `dir`, sorted; an error if `dir` is missing or holds none.
pub fn find_summaries(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.exists() {
        return Err(Error::MissingDirectory {
            path: dir.to_owned(),
        });
    }
    if !dir.is_dir() {
        return Err(Error::NotADirectory {
            path: dir.to_owned(),
        });
    }
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(current) = pending.pop() {
        let entries = std::fs::read_dir(&current).map_err(|source| Error::ReadFile {
            path: current.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| Error::ReadFile {
                path: current.clone(),
                source,
            })?;
            let kind = entry.file_type().map_err(|source| Error::ReadFile {
                path: entry.path(),
                source,
            })?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() && entry.file_name() == SUMMARY_FILE {
                found.push(entry.path());
            }
        }
    }
    if found.is_empty() {
        return Err(Error::NoGungraunSummaries {
            path: dir.to_owned(),
        });
    }
    found.sort();
    Ok(found)
}

/// Reads every summary under `dir`: all their measurements, or the first error. Two summaries
/// naming the same benchmark are an error naming both files.
pub fn read_dir(dir: &Path) -> Result<Vec<Measurement>> {
    Ok(read_summaries(dir)?.0)
}

/// Each benchmark's directory under `dir`, by name (`GROUP/FUNCTION[/ID]`): where gungraun
/// keeps its summary and its Callgrind files.
pub fn benchmark_dirs(dir: &Path) -> Result<BTreeMap<String, PathBuf>> {
    Ok(read_summaries(dir)?.1)
}

/// What `ingest` reads of gungraun's output under `dir`: every summary's measurements, as
/// [`read_dir`], and each instruction count's cost by function from the Callgrind files beside
/// its summary, kept to its [`callgrind::STORED_FUNCTIONS`] largest functions, by the count's
/// id. A benchmark without Callgrind files, or whose files do not read (truncated, foreign),
/// gets no profile and a note saying why: its counts are stored all the same.
pub fn read_dir_with_costs(dir: &Path) -> Result<WithCosts> {
    let (measurements, homes) = read_summaries(dir)?;
    let mut costs = BTreeMap::new();
    let mut notes = Vec::new();
    for (name, home) in homes {
        let Ok(id) = BenchmarkId::parse(&format!("{name}/{INSTRUCTIONS}")) else {
            continue;
        };
        if measurements.binary_search_by(|m| m.id.cmp(&id)).is_err() {
            continue;
        }
        let files = callgrind::output_files(&home)?;
        if files.is_empty() {
            notes.push(format!(
                "no profile of {name}: {} holds no callgrind.*.out file",
                home.display()
            ));
            continue;
        }
        match callgrind::Profile::read(&files, callgrind::INSTRUCTIONS) {
            Ok(profile) => {
                costs.insert(id, profile.keep_largest(callgrind::STORED_FUNCTIONS));
            }
            Err(e) => notes.push(format!("no profile of {name}: {e}")),
        }
    }
    Ok(WithCosts {
        measurements,
        costs,
        notes,
    })
}

/// gungraun's output as `ingest` reads it ([`read_dir_with_costs`]).
pub struct WithCosts {
    /// Every count, sorted by id.
    pub measurements: Vec<Measurement>,
    /// The instruction counts' profiles by function, by the count's id.
    pub costs: BTreeMap<BenchmarkId, callgrind::Profile>,
    /// Why a benchmark has no profile.
    pub notes: Vec<String>,
}

/// Every summary under `dir`, each read once: their measurements sorted by id, and each
/// benchmark's directory by name; two summaries naming the same benchmark are an error naming
/// both files.
fn read_summaries(dir: &Path) -> Result<(Vec<Measurement>, BTreeMap<String, PathBuf>)> {
    let mut measurements = Vec::new();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for path in find_summaries(dir)? {
        let (name, read) = read_file(&path)?;
        if let Some(first) = seen.insert(name.clone(), path.clone()) {
            return Err(Error::DuplicateBenchmark {
                id: name,
                first,
                second: path,
            });
        }
        measurements.extend(read);
    }
    measurements.sort_by(|a, b| a.id.cmp(&b.id));
    let homes = seen
        .into_iter()
        .filter_map(|(name, summary)| Some((name, summary.parent()?.to_owned())))
        .collect();
    Ok((measurements, homes))
}

/// Reads one summary: the benchmark's name (`GROUP/FUNCTION[/ID]`) and its counts.
pub fn read_file(path: &Path) -> Result<(String, Vec<Measurement>)> {
    crate::error::parse_json_file(path, parse)
}

type FieldError = (String, String);

/// Parses one summary document; errors are (field path, reason).
pub fn parse(document: &Value) -> std::result::Result<(String, Vec<Measurement>), FieldError> {
    match document.get("version") {
        Some(Value::String(version)) if version == SCHEMA_VERSION => {}
        Some(other) => {
            return Err((
                "version".to_owned(),
                format!(
                    "is {other}; this benchgate reads gungraun's summary version {SCHEMA_VERSION:?} (gungraun 0.20): install the matching gungraun-runner"
                ),
            ));
        }
        None => {
            return Err((
                "version".to_owned(),
                "is missing; not a gungraun summary.json".to_owned(),
            ));
        }
    }
    let summary: Summary = serde_path_to_error::deserialize(document)
        .map_err(|e| (e.path().to_string(), e.inner().to_string()))?;
    let mut name = format!("{}/{}", summary.group, summary.function_name);
    if let Some(id) = &summary.id {
        name = format!("{name}/{id}");
    }
    let (index, callgrind) = summary
        .profiles
        .iter()
        .enumerate()
        .find(|(_, p)| p.tool == "Callgrind")
        .ok_or_else(|| {
            (
                "profiles".to_owned(),
                "holds no Callgrind profile; benchgate stores Callgrind's event counts".to_owned(),
            )
        })?;
    let mut measurements = Vec::new();
    for (event, measure) in EVENTS {
        let Some(metric) = callgrind.data.total.metrics.get(*event) else {
            continue;
        };
        let field = format!("profiles[{index}].data.total.metrics.{event}.values.new");
        let count = match &metric.values.new {
            Some(Value::Number(n)) => n.as_f64().filter(|v| v.is_finite() && *v >= 0.0),
            _ => None,
        }
        .ok_or_else(|| {
            (
                field.clone(),
                format!(
                    "is {}; expected this run's count, a number ≥ 0",
                    metric
                        .values
                        .new
                        .as_ref()
                        .map_or("missing".to_owned(), Value::to_string)
                ),
            )
        })?;
        let id = BenchmarkId::parse(&format!("{name}/{measure}"))
            .map_err(|e| ("group".to_owned(), e.to_string()))?;
        measurements.push(count_measurement(id, count, measure));
    }
    if !measurements
        .iter()
        .any(|m| m.custom.as_ref().is_some_and(|c| c.unit == INSTRUCTIONS))
    {
        return Err((
            format!("profiles[{index}].data.total.metrics.Ir"),
            "is missing; benchgate needs the instruction count (Callgrind's Ir)".to_owned(),
        ));
    }
    Ok((name, measurements))
}

/// An exact count as a measurement: one observation, a zero-width interval.
fn count_measurement(id: BenchmarkId, count: f64, unit: &str) -> Measurement {
    let estimate = Estimate {
        point: count,
        lower: count,
        upper: count,
        confidence_level: 0.95,
    };
    Measurement {
        id,
        throughput: None,
        mean: estimate,
        median: estimate,
        sampling_mode: None,
        samples: Samples::single(count),
        custom: Some(CustomMetric {
            unit: unit.to_owned(),
            direction: Direction::LowerIsBetter,
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn summary(version: &str, ir: Value) -> Value {
        serde_json::json!({
            "version": version,
            "group": "aead",
            "function_name": "seal",
            "id": "chacha20_poly1305_16_kib",
            "profiles": [{"tool": "Callgrind", "data": {"total": {"metrics": {
                "Ir": {"values": {"new": ir}},
                "EstimatedCycles": {"values": {"new": 107318}},
                "D1mr": {"values": {"new": 6}}
            }, "regressions": []}, "parts": []}}]
        })
    }

    #[test]
    fn counts_become_one_measurement_per_event() {
        let (name, read) = parse(&summary("7", serde_json::json!(91234))).unwrap();
        assert_eq!(name, "aead/seal/chacha20_poly1305_16_kib");
        let ids: Vec<&str> = read.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "aead/seal/chacha20_poly1305_16_kib/instructions",
                "aead/seal/chacha20_poly1305_16_kib/estimated cycles"
            ]
        );
        assert_eq!(read[0].median.point, 91234.0);
        assert_eq!(read[0].samples.times(), [91234.0]);
        assert_eq!(read[0].custom.as_ref().unwrap().unit, "instructions");
    }

    #[test]
    fn another_version_or_a_bad_count_is_refused_naming_the_field() {
        let (field, reason) = parse(&summary("6", serde_json::json!(1))).unwrap_err();
        assert_eq!(field, "version");
        assert!(reason.contains("\"6\""), "{reason}");
        let (field, reason) = parse(&summary("7", serde_json::json!("many"))).unwrap_err();
        assert_eq!(field, "profiles[0].data.total.metrics.Ir.values.new");
        assert!(reason.contains("\"many\""), "{reason}");
        let (field, _) = parse(&summary("7", serde_json::json!(-1))).unwrap_err();
        assert_eq!(field, "profiles[0].data.total.metrics.Ir.values.new");
    }
}
