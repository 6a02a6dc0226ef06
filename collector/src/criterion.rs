//! Reads Criterion's output tree (`<dir>/**/new/{benchmark,estimates,sample}.json`), modern and
//! legacy formats, into validated [`Measurement`]s. A tree is read whole or not at all.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::domain::{BenchmarkId, Estimate, Measurement, Samples, Throughput};
use crate::error::{Error, Result};

/// Criterion's own name for the latest results of each benchmark.
pub const DEFAULT_BASELINE: &str = "new";

/// `benchmark.json`: the benchmark's identity and throughput.
#[derive(Deserialize)]
struct BenchmarkFile {
    /// Present in every Criterion release we have seen; composed from the parts if not.
    #[serde(default)]
    full_id: Option<String>,
    #[serde(default)]
    group_id: Option<String>,
    #[serde(default)]
    function_id: Option<String>,
    #[serde(default)]
    value_str: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    throughput: Option<ThroughputWire>,
}

/// Throughput as Criterion serialises it (`{"Bytes": 1024}`).
#[derive(Deserialize)]
pub(crate) enum ThroughputWire {
    Bytes(u64),
    BytesDecimal(u64),
    Elements(u64),
    Bits(u64),
    ElementsAndBytes { elements: u64, bytes: u64 },
}

impl From<ThroughputWire> for Throughput {
    fn from(wire: ThroughputWire) -> Self {
        match wire {
            ThroughputWire::Bytes(n) => Throughput::Bytes(n),
            ThroughputWire::BytesDecimal(n) => Throughput::BytesDecimal(n),
            ThroughputWire::Elements(n) => Throughput::Elements(n),
            ThroughputWire::Bits(n) => Throughput::Bits(n),
            ThroughputWire::ElementsAndBytes { elements, bytes } => {
                Throughput::ElementsAndBytes { elements, bytes }
            }
        }
    }
}

/// `estimates.json`: modern keys (`mean`) or legacy capitalised ones (`Mean`).
#[derive(Deserialize)]
struct EstimatesFile {
    #[serde(alias = "Mean")]
    mean: EstimateWire,
    #[serde(alias = "Median")]
    median: EstimateWire,
}

#[derive(Deserialize)]
struct EstimateWire {
    confidence_interval: ConfidenceIntervalWire,
    point_estimate: f64,
}

#[derive(Deserialize)]
struct ConfidenceIntervalWire {
    confidence_level: f64,
    lower_bound: f64,
    upper_bound: f64,
}

/// `sample.json` in the modern layout.
#[derive(Deserialize)]
struct SampleFile {
    #[serde(default)]
    sampling_mode: Option<String>,
    iters: Vec<f64>,
    times: Vec<f64>,
}

/// Reads every benchmark of a Criterion output directory.
///
/// `baseline` names the results directory inside each benchmark: `new` for the latest run, or
/// a name given to `--save-baseline`. Identity is `full_id` from `benchmark.json`; legacy trees
/// without it take the benchmark directory's path below `root`. Measurements come back sorted by
/// id. Any unreadable, truncated or invalid file fails the whole tree with an error naming the
/// file and field.
pub fn read_tree(root: &Path, baseline: &str) -> Result<Vec<Measurement>> {
    let benchmark_dirs = find_benchmark_dirs(root, baseline)?;
    let measurements = read_benchmarks(root, &benchmark_dirs, baseline)?;
    let mut seen: HashMap<&str, &Path> = HashMap::with_capacity(measurements.len());
    for (measurement, dir) in measurements.iter().zip(&benchmark_dirs) {
        if let Some(first) = seen.insert(measurement.id.as_str(), dir) {
            return Err(Error::DuplicateBenchmark {
                id: measurement.id.as_str().to_owned(),
                first: first.join(baseline),
                second: dir.join(baseline),
            });
        }
    }
    let mut measurements = measurements;
    measurements.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(measurements)
}

/// Below this many benchmarks, one thread reads faster than several start.
const PARALLEL_READ_THRESHOLD: usize = 64;

/// Reads the benchmark directories in order, on every available core for large trees. On
/// failure the error is that of the first bad directory in order, however the work was split.
fn read_benchmarks(root: &Path, dirs: &[PathBuf], baseline: &str) -> Result<Vec<Measurement>> {
    let read_chunk = |chunk: &[PathBuf]| -> Result<Vec<Measurement>> {
        chunk
            .iter()
            .map(|dir| read_benchmark(root, dir, baseline))
            .collect()
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads == 1 || dirs.len() < PARALLEL_READ_THRESHOLD {
        return read_chunk(dirs);
    }
    let chunk_results: Vec<Result<Vec<Measurement>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = dirs
            .chunks(dirs.len().div_ceil(threads))
            .map(|chunk| scope.spawn(move || read_chunk(chunk)))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut measurements = Vec::with_capacity(dirs.len());
    for chunk in chunk_results {
        measurements.extend(chunk?);
    }
    Ok(measurements)
}

/// Every directory below `root` (or `root` itself) that holds `<baseline>/estimates.json`,
/// in a stable order.
fn find_benchmark_dirs(root: &Path, baseline: &str) -> Result<Vec<PathBuf>> {
    let metadata = fs::metadata(root).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => Error::MissingDirectory {
            path: root.to_owned(),
        },
        _ => Error::ReadFile {
            path: root.to_owned(),
            source,
        },
    })?;
    if !metadata.is_dir() {
        return Err(Error::NotADirectory {
            path: root.to_owned(),
        });
    }
    let mut found = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let entries = fs::read_dir(&dir).map_err(|source| Error::ReadFile {
            path: dir.clone(),
            source,
        })?;
        let mut children = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| Error::ReadFile {
                path: dir.clone(),
                source,
            })?;
            let file_type = entry.file_type().map_err(|source| Error::ReadFile {
                path: entry.path(),
                source,
            })?;
            if file_type.is_dir() {
                children.push(entry.file_name());
            }
        }
        // A results directory holding any of Criterion's files is a benchmark, so one missing
        // a file is refused by name, never silently left out.
        let is_benchmark = children.iter().any(|name| name == baseline)
            && ["estimates.json", "sample.json", "benchmark.json"]
                .iter()
                .any(|file| dir.join(baseline).join(file).is_file());
        if is_benchmark {
            found.push(dir.clone());
        }
        for name in children {
            // Results directories (`new`, `base`, `change`, saved baselines) hold no benchmarks;
            // `report` holds Criterion's HTML.
            if is_benchmark
                && (name == baseline || name == "base" || name == "change" || name == "report")
            {
                continue;
            }
            pending.push(dir.join(name));
        }
    }
    if found.is_empty() {
        return Err(Error::EmptyTree {
            path: root.to_owned(),
            baseline: baseline.to_owned(),
        });
    }
    found.sort();
    Ok(found)
}

/// Reads one benchmark directory's `<baseline>/` files.
fn read_benchmark(root: &Path, dir: &Path, baseline: &str) -> Result<Measurement> {
    let results = dir.join(baseline);
    let benchmark_path = results.join("benchmark.json");
    // Read at once, not asked for first (one system call fewer per benchmark): only a file
    // that is not there falls through to the other sources of the id.
    let benchmark = match fs::read(&benchmark_path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(Error::ReadFile {
                path: benchmark_path,
                source,
            });
        }
    };
    let (id, throughput) = if let Some(bytes) = benchmark {
        benchmark_file(&benchmark_path, &bytes)?
    } else if baseline != DEFAULT_BASELINE
        && dir.join(DEFAULT_BASELINE).join("benchmark.json").is_file()
    {
        // A saved baseline without its own benchmark.json shares the identity of `new`.
        read_benchmark_file(&dir.join(DEFAULT_BASELINE).join("benchmark.json"))?
    } else {
        (id_from_directory(root, dir)?, None)
    };

    // Read without asking first whether each file is there: `read_file` names a missing one.
    let estimates_path = results.join("estimates.json");
    let estimates: EstimatesFile = parse_json_file(&estimates_path)?;
    let mean = validate_estimate(&estimates_path, "mean", &estimates.mean)?;
    let median = validate_estimate(&estimates_path, "median", &estimates.median)?;

    let sample_path = results.join("sample.json");
    let (sampling_mode, samples) = read_samples(&sample_path)?;

    let measurement = Measurement {
        id,
        throughput,
        mean,
        median,
        sampling_mode,
        samples,
        custom: None,
    };
    measurement.check_plausible().map_err(|(field, reason)| {
        let file = if field.starts_with("mean") || field.starts_with("median") {
            estimates_path
        } else {
            sample_path
        };
        Error::InvalidValue {
            path: file,
            field,
            reason,
        }
    })?;
    Ok(measurement)
}

fn read_benchmark_file(path: &Path) -> Result<(BenchmarkId, Option<Throughput>)> {
    benchmark_file(path, &read_file(path)?)
}

/// The id and throughput in a `benchmark.json` read from `path`.
fn benchmark_file(path: &Path, bytes: &[u8]) -> Result<(BenchmarkId, Option<Throughput>)> {
    let file: BenchmarkFile = parse_json(path, bytes)?;
    let id = identity(&file)
        .and_then(|id| BenchmarkId::parse(&id).ok())
        .ok_or_else(|| Error::InvalidValue {
            path: path.to_owned(),
            field: "full_id".to_owned(),
            reason: "missing or empty (or holding control characters); a benchmark needs an id"
                .to_owned(),
        })?;
    Ok((id, file.throughput.map(Throughput::from)))
}

/// The benchmark's identity: `full_id`, except where Criterion found the same id twice in one
/// run and made the second unique by suffixing its title (`aes-1MB` and `aes-1MB #2`). Without
/// `full_id`, the id is composed as Criterion composes it: `group/function/value`.
fn identity(file: &BenchmarkFile) -> Option<String> {
    let full_id = match &file.full_id {
        Some(full_id) => full_id.clone(),
        None => {
            let parts: Vec<&str> = [&file.group_id, &file.function_id, &file.value_str]
                .into_iter()
                .filter_map(|part| part.as_deref())
                .collect();
            if parts.is_empty() {
                return None;
            }
            parts.join("/")
        }
    };
    if let Some(title) = &file.title
        && let Some(suffix) = title.strip_prefix(full_id.as_str())
        && let Some(number) = suffix.strip_prefix(" #")
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
    {
        return Some(title.clone());
    }
    Some(full_id)
}

/// A legacy tree's identity: the benchmark directory's path below the root, `/`-separated.
fn id_from_directory(root: &Path, dir: &Path) -> Result<BenchmarkId> {
    let relative = dir.strip_prefix(root).unwrap_or(dir);
    let mut parts = Vec::new();
    for component in relative.components() {
        let part = component
            .as_os_str()
            .to_str()
            .ok_or_else(|| Error::InvalidValue {
                path: dir.to_owned(),
                field: "directory name".to_owned(),
                reason: "is not valid UTF-8, so it cannot name a benchmark".to_owned(),
            })?;
        parts.push(part);
    }
    let name = if parts.is_empty() {
        root.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("benchmark")
            .to_owned()
    } else {
        parts.join("/")
    };
    BenchmarkId::parse(&name).map_err(|_| Error::InvalidValue {
        path: dir.to_owned(),
        field: "directory name".to_owned(),
        reason: "cannot name a benchmark (control characters)".to_owned(),
    })
}

/// Reads `sample.json` in either layout: `{"iters": [...], "times": [...]}` or legacy `[[iters], [times]]`.
fn read_samples(path: &Path) -> Result<(Option<String>, Samples)> {
    let bytes = read_file(path)?;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let (sampling_mode, iters, times, prefix) = if first == Some(b'[') {
        let (iters, times): (Vec<f64>, Vec<f64>) = parse_json(path, &bytes)?;
        (None, iters, times, ("[0]", "[1]"))
    } else {
        let file: SampleFile = parse_json(path, &bytes)?;
        (
            file.sampling_mode,
            file.iters,
            file.times,
            ("iters", "times"),
        )
    };
    let samples = Samples::new(iters, times).map_err(|(field, reason)| {
        let field = field
            .replacen("iters", prefix.0, 1)
            .replacen("times", prefix.1, 1);
        Error::InvalidValue {
            path: path.to_owned(),
            field,
            reason,
        }
    })?;
    Ok((sampling_mode, samples))
}

/// Checks that an estimate is a usable time: finite, not negative, lower ≤ upper.
fn validate_estimate(path: &Path, field: &str, wire: &EstimateWire) -> Result<Estimate> {
    let ci = &wire.confidence_interval;
    let checks = [
        ("point_estimate", wire.point_estimate),
        ("confidence_interval.lower_bound", ci.lower_bound),
        ("confidence_interval.upper_bound", ci.upper_bound),
    ];
    for (name, value) in checks {
        if !value.is_finite() || value < 0.0 {
            return Err(Error::InvalidValue {
                path: path.to_owned(),
                field: format!("{field}.{name}"),
                reason: format!("is {value}; a time must be finite and not negative"),
            });
        }
    }
    if ci.lower_bound > ci.upper_bound {
        return Err(Error::InvalidValue {
            path: path.to_owned(),
            field: format!("{field}.confidence_interval"),
            reason: format!(
                "lower_bound {} is above upper_bound {}",
                ci.lower_bound, ci.upper_bound
            ),
        });
    }
    if !(ci.confidence_level > 0.0 && ci.confidence_level <= 1.0) {
        return Err(Error::InvalidValue {
            path: path.to_owned(),
            field: format!("{field}.confidence_interval.confidence_level"),
            reason: format!("is {}; expected a fraction in (0, 1]", ci.confidence_level),
        });
    }
    Ok(Estimate {
        point: wire.point_estimate,
        lower: ci.lower_bound,
        upper: ci.upper_bound,
        confidence_level: ci.confidence_level,
    })
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => Error::MissingFile {
            path: path.to_owned(),
            needs: "estimates.json and sample.json in its results directory",
        },
        _ => Error::ReadFile {
            path: path.to_owned(),
            source,
        },
    })
}

fn parse_json_file<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = read_file(path)?;
    parse_json(path, &bytes)
}

/// Parses JSON, naming the field at fault when it fails.
pub(crate) fn parse_json<T: DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T> {
    // Tracking the path of every value costs more than the parse itself (most of a sample
    // file is two long arrays), so a file is parsed plainly first and again, tracked, only to
    // name the field of a failure: the same value or the same error either way.
    if let Ok(value) = serde_json::from_slice(bytes) {
        return Ok(value);
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|error| json_error(path, error))?;
    deserializer.end().map_err(|error| Error::InvalidJson {
        path: path.to_owned(),
        field: ".".to_owned(),
        message: format!("unexpected data after the JSON document ({error})"),
    })?;
    Ok(value)
}

pub(crate) fn json_error(
    path: &Path,
    error: serde_path_to_error::Error<serde_json::Error>,
) -> Error {
    let field = error.path().to_string();
    let inner = error.into_inner();
    let message = if inner.is_eof() {
        format!("file is truncated ({inner})")
    } else {
        inner.to_string()
    };
    Error::InvalidJson {
        path: path.to_owned(),
        field,
        message,
    }
}
