//! Reads Criterion's output tree (`<dir>/**/new/{benchmark,estimates,sample}.json`), modern and
//! legacy formats, into validated [`Measurement`]s. A tree is read whole or not at all.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

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
    Ok(read_tree_dated(root, baseline)?
        .into_iter()
        .map(|(measurement, _)| measurement)
        .collect())
}

/// [`read_tree`], each measurement with the time Criterion wrote its `sample.json` (`None`
/// where the file system keeps none).
pub fn read_tree_dated(
    root: &Path,
    baseline: &str,
) -> Result<Vec<(Measurement, Option<SystemTime>)>> {
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
    let mut unreadable = Vec::new();
    for visited in visit(root, root.to_owned(), baseline) {
        match visited {
            Visited::Benchmark(dir, outcome, written) => found.push((dir, outcome, written)),
            Visited::Unreadable(dir, error) => unreadable.push((dir, error)),
        }
    }
    // The walk ran on every core: whatever order it finished in, the error reported is that
    // of the first directory in path order, an unreadable directory before a bad benchmark.
    unreadable.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some((_, error)) = unreadable.into_iter().next() {
        return Err(error);
    }
    if found.is_empty() {
        return Err(Error::EmptyTree {
            path: root.to_owned(),
            baseline: baseline.to_owned(),
        });
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut measurements = Vec::with_capacity(found.len());
    let mut dirs = Vec::with_capacity(found.len());
    for (dir, outcome, when) in found {
        measurements.push((outcome?, when));
        dirs.push(dir);
    }
    let mut seen: HashMap<&str, &Path> = HashMap::with_capacity(measurements.len());
    for ((measurement, _), dir) in measurements.iter().zip(&dirs) {
        if let Some(first) = seen.insert(measurement.id.as_str(), dir) {
            return Err(Error::DuplicateBenchmark {
                id: measurement.id.as_str().to_owned(),
                first: first.join(baseline),
                second: dir.join(baseline),
            });
        }
    }
    measurements.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    Ok(measurements)
}

/// The longest pause between two benchmarks' results that one run of a bench command makes:
/// Criterion writes each benchmark's results as it finishes it, so a run's are minutes apart
/// at most (a benchmark that took an hour an iteration is refused as no measurement).
pub const RUN_GAP: Duration = Duration::from_secs(3600);

/// The measurements of `dated` written before the newest run: older than the next newer one
/// by more than `gap`, or than one that is. A benchmark the latest `cargo bench` did not run
/// (renamed, removed, or filtered out) keeps its old results in the tree. Indices into
/// `dated`, oldest first; none where the file system keeps no times.
pub fn left_behind(dated: &[(Measurement, Option<SystemTime>)], gap: Duration) -> Vec<usize> {
    let mut order: Vec<(usize, SystemTime)> = dated
        .iter()
        .enumerate()
        .filter_map(|(i, (_, when))| when.map(|w| (i, w)))
        .collect();
    if order.len() < dated.len() {
        return Vec::new();
    }
    order.sort_by_key(|&(_, when)| std::cmp::Reverse(when));
    let cut = order.windows(2).position(|pair| {
        pair[0]
            .1
            .duration_since(pair[1].1)
            .is_ok_and(|pause| pause > gap)
    });
    match cut {
        Some(last_of_run) => order[last_of_run + 1..]
            .iter()
            .rev()
            .map(|(i, _)| *i)
            .collect(),
        None => Vec::new(),
    }
}

/// What the walk found in one directory.
enum Visited {
    /// A benchmark directory, its measurement or what is wrong with it, and when its
    /// `sample.json` was written.
    Benchmark(PathBuf, Result<Measurement>, Option<SystemTime>),
    /// A directory that could not be listed.
    Unreadable(PathBuf, Error),
}

/// Walks `dir` and everything below it, on every core (rayon), reading each benchmark
/// directory as it is found: the listing, the reads and the parsing of different directories
/// overlap, and the files are read at once rather than asked for first.
fn visit(root: &Path, dir: PathBuf, baseline: &str) -> Vec<Visited> {
    use rayon::prelude::*;
    let children = match subdirectories(&dir) {
        Ok(children) => children,
        Err(error) => return vec![Visited::Unreadable(dir, error)],
    };
    let mut visited = Vec::new();
    // A results directory holding any of Criterion's files is a benchmark, so one missing a
    // file is refused by name, never silently left out.
    let mut is_benchmark = false;
    if children.iter().any(|name| name == baseline) {
        let files = ResultsFiles::read(&dir.join(baseline));
        if !files.is_empty() {
            is_benchmark = true;
            let written = files.written;
            let outcome = read_benchmark(root, &dir, baseline, files);
            visited.push(Visited::Benchmark(dir.clone(), outcome, written));
        }
    }
    let below: Vec<Visited> = children
        .into_par_iter()
        // Results directories (`new`, `base`, `change`, saved baselines) hold no benchmarks;
        // `report` holds Criterion's HTML.
        .filter(|name| {
            !(is_benchmark
                && (name == baseline || name == "base" || name == "change" || name == "report"))
        })
        .flat_map_iter(|name| visit(root, dir.join(name), baseline))
        .collect();
    visited.extend(below);
    visited
}

/// The names of `dir`'s subdirectories, from the listing's own file types.
fn subdirectories(dir: &Path) -> Result<Vec<std::ffi::OsString>> {
    let unreadable = |source| Error::ReadFile {
        path: dir.to_owned(),
        source,
    };
    let mut children = Vec::new();
    for entry in fs::read_dir(dir).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let file_type = entry.file_type().map_err(|source| Error::ReadFile {
            path: entry.path(),
            source,
        })?;
        if file_type.is_dir() {
            children.push(entry.file_name());
        }
    }
    Ok(children)
}

/// The three files of a results directory, each read whole: `None` where it is not there.
struct ResultsFiles {
    benchmark: (PathBuf, std::io::Result<Option<Vec<u8>>>),
    estimates: (PathBuf, std::io::Result<Option<Vec<u8>>>),
    sample: (PathBuf, std::io::Result<Option<Vec<u8>>>),
    /// When `sample.json` was last written.
    written: Option<SystemTime>,
}

impl ResultsFiles {
    fn read(results: &Path) -> Self {
        let read = |name: &str| {
            let path = results.join(name);
            let bytes = match fs::read(&path) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            };
            (path, bytes)
        };
        ResultsFiles {
            benchmark: read("benchmark.json"),
            estimates: read("estimates.json"),
            sample: read("sample.json"),
            written: fs::metadata(results.join("sample.json"))
                .and_then(|m| m.modified())
                .ok(),
        }
    }

    /// Whether none of the three is there (a failed read counts as there).
    fn is_empty(&self) -> bool {
        [&self.benchmark, &self.estimates, &self.sample]
            .iter()
            .all(|(_, bytes)| matches!(bytes, Ok(None)))
    }
}

/// A required file's bytes, or the error naming it.
fn required(
    (path, bytes): (PathBuf, std::io::Result<Option<Vec<u8>>>),
) -> Result<(PathBuf, Vec<u8>)> {
    match bytes {
        Ok(Some(bytes)) => Ok((path, bytes)),
        Ok(None) => Err(Error::MissingFile {
            path,
            needs: "estimates.json and sample.json in its results directory",
        }),
        Err(source) => Err(Error::ReadFile { path, source }),
    }
}

/// One benchmark directory's measurement from its `<baseline>/` files, already read.
fn read_benchmark(
    root: &Path,
    dir: &Path,
    baseline: &str,
    files: ResultsFiles,
) -> Result<Measurement> {
    let (benchmark_path, benchmark) = files.benchmark;
    let benchmark = benchmark.map_err(|source| Error::ReadFile {
        path: benchmark_path.clone(),
        source,
    })?;
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

    let (estimates_path, estimates) = required(files.estimates)?;
    let estimates: EstimatesFile = parse_json(&estimates_path, &estimates)?;
    let mean = validate_estimate(&estimates_path, "mean", &estimates.mean)?;
    let median = validate_estimate(&estimates_path, "median", &estimates.median)?;

    let (sample_path, sample) = required(files.sample)?;
    let (sampling_mode, samples) = samples_file(&sample_path, &sample)?;

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

/// A `sample.json` read from `path`, in either layout: `{"iters": [...], "times": [...]}` or
/// legacy `[[iters], [times]]`.
fn samples_file(path: &Path, bytes: &[u8]) -> Result<(Option<String>, Samples)> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let (sampling_mode, iters, times, prefix) = if first == Some(b'[') {
        let (iters, times): (Vec<f64>, Vec<f64>) = parse_json(path, bytes)?;
        (None, iters, times, ("[0]", "[1]"))
    } else {
        let file: SampleFile = parse_json(path, bytes)?;
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
