//! How runs are laid out in the store: the SQL shared by the store's queries, the row codecs
//! (rows to domain values and back), the content hash that makes ingest idempotent, and the
//! packed encodings of samples and statistics.

use super::*;
use sqlx::{ColumnIndex, Database, Decode, Encode, Type};

/// The columns and joins every run query starts with; `run_summary_from_row` reads them.
macro_rules! run_summary_select {
    () => {
        "SELECT r.id, repo.name AS repository, r.commit_sha, r.branch, r.kind, r.pr_number, \
         r.attempt, f.hash AS fingerprint, r.recorded_at_ms, r.n_benchmarks"
    };
}

/// The joins from a run to its repository and fingerprint.
macro_rules! run_joins {
    () => {
        " FROM runs r JOIN repositories repo ON repo.id = r.repository_id \
         JOIN fingerprints f ON f.id = r.fingerprint_id"
    };
}

pub(super) const RUN_SUMMARY_SELECT_ALL: &str =
    concat!(run_summary_select!(), run_joins!(), " ORDER BY r.id");

pub(super) const RUN_SUMMARY_SELECT_ON_FINGERPRINT: &str = concat!(
    run_summary_select!(),
    run_joins!(),
    " WHERE repo.name = $1 AND f.hash = $2 ORDER BY r.id"
);

pub(super) const BENCHMARK_SERIES_SELECT: &str = concat!(
    run_summary_select!(),
    ", m.median_point, m.median_lower, m.median_upper, m.min_point",
    run_joins!(),
    // The benchmark is found by (repository, name) first, then each run's measurement of it by
    // UNIQUE (run_id, benchmark_id): one probe per run (migrations/sqlite/0011).
    " JOIN benchmarks b ON b.repository_id = r.repository_id \
     JOIN measurements m ON m.run_id = r.id AND m.benchmark_id = b.id \
     WHERE repo.name = $1 AND f.hash = $2 AND b.name = $3 ORDER BY r.id"
);

pub(super) const RUN_SUMMARY_SELECT_ONE: &str =
    concat!(run_summary_select!(), run_joins!(), " WHERE r.id = $1");

pub(super) const RUN_SELECT_ONE: &str = concat!(
    run_summary_select!(),
    ", f.cpu_arch, f.cpu_vendor, f.cpu_brand, f.physical_cores, f.logical_cores, f.memory_gib, \
     f.cpu_features, f.os_name, f.os_major_version, f.runner_image, f.runner_image_version, \
     f.rustc_version, f.host_triple, r.hostname, r.cpu_frequency_mhz, r.kernel_version, r.os_version",
    run_joins!(),
    " WHERE r.id = $1"
);

/// `sql` followed by the ids of `runs` as bound parameters and a closing parenthesis: for the
/// `... WHERE x IN (` queries over a chunk of runs.
pub(super) fn in_runs<DB: Database>(sql: impl Into<String>, runs: &[RunId]) -> QueryBuilder<DB>
where
    for<'q> i64: Encode<'q, DB> + Type<DB>,
{
    let mut query = QueryBuilder::<DB>::new(sql);
    let mut ids = query.separated(", ");
    for id in runs {
        ids.push_bind(id.get());
    }
    query.push(")");
    query
}

/// A measurement ready to bind, with its integer columns converted once.
pub(super) struct MeasurementRow<'a> {
    pub(super) measurement: &'a Measurement,
    pub(super) benchmark_id: i64,
    pub(super) throughput_kind: Option<&'static str>,
    pub(super) throughput_amount: Option<i64>,
    pub(super) throughput_bytes: Option<i64>,
    pub(super) n_samples: i64,
    pub(super) min_point: f64,
    /// The second best sample (the best again for a single sample): with `min_point`, all the
    /// minimum statistic and its within-run interval read of the samples.
    pub(super) second_point: f64,
}

impl<'a> MeasurementRow<'a> {
    pub(super) fn new(
        measurement: &'a Measurement,
        benchmark_ids: &HashMap<String, i64>,
    ) -> Result<Self> {
        let benchmark_id =
            *benchmark_ids
                .get(measurement.id.as_str())
                .ok_or_else(|| Error::CorruptRow {
                    table: "benchmarks",
                    reason: format!("benchmark {:?} was not stored", measurement.id.as_str()),
                })?;
        let throughput = measurement.throughput;
        let (min_point, second_point) = best_two(measurement);
        Ok(Self {
            measurement,
            benchmark_id,
            throughput_kind: throughput.map(|t| t.kind()),
            throughput_amount: throughput.map(|t| to_i64(t.amount())).transpose()?,
            throughput_bytes: throughput
                .and_then(|t| t.secondary_bytes())
                .map(to_i64)
                .transpose()?,
            n_samples: to_i64(measurement.samples.len() as u64)?,
            min_point,
            second_point,
        })
    }
}

/// The two best samples per iteration: the fastest, or for a higher-is-better custom metric the
/// highest (the best twice for a single sample).
fn best_two(measurement: &Measurement) -> (f64, f64) {
    let higher = matches!(&measurement.custom, Some(c) if c.direction == Direction::HigherIsBetter);
    let better = |a: f64, b: f64| if higher { a > b } else { a < b };
    let mut values = measurement.samples.per_iteration();
    let Some(first) = values.next() else {
        return (f64::NAN, f64::NAN);
    };
    let (mut best, mut second) = (first, f64::NAN);
    for value in values {
        if better(value, best) {
            second = best;
            best = value;
        } else if second.is_nan() || better(value, second) {
            second = value;
        }
    }
    (best, if second.is_nan() { best } else { second })
}

/// One measurement in `runs.gate_view` (see migrations/sqlite/0009_gate_view.sql), with
/// one-letter keys: a 10,000-benchmark run's view is a tenth of its samples' size.
#[derive(serde::Serialize, serde::Deserialize)]
struct ViewEntry<'a> {
    #[serde(borrow, rename = "i")]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow, rename = "t", default, skip_serializing_if = "Option::is_none")]
    throughput: Option<(std::borrow::Cow<'a, str>, u64, Option<u64>)>,
    #[serde(rename = "a")]
    mean: [f64; 3],
    #[serde(rename = "m")]
    median: [f64; 3],
    #[serde(rename = "c")]
    confidence: f64,
    #[serde(borrow, rename = "s", default, skip_serializing_if = "Option::is_none")]
    sampling_mode: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, rename = "u", default, skip_serializing_if = "Option::is_none")]
    custom: Option<(std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>,
    #[serde(rename = "b")]
    best: [f64; 2],
}

/// `runs.gate_view` of a run's rows; `None` when a value cannot be written as JSON (then the
/// gate reads the measurements table, as for a run stored before the view existed).
pub(super) fn encode_gate_view(rows: &[MeasurementRow<'_>]) -> Option<Vec<u8>> {
    let estimate = |e: &Estimate| [e.point, e.lower, e.upper];
    let entries: Vec<ViewEntry<'_>> = rows
        .iter()
        .map(|row| {
            let m = row.measurement;
            ViewEntry {
                id: m.id.as_str().into(),
                throughput: m
                    .throughput
                    .map(|t| (t.kind().into(), t.amount(), t.secondary_bytes())),
                mean: estimate(&m.mean),
                median: estimate(&m.median),
                confidence: m.mean.confidence_level,
                sampling_mode: m.sampling_mode.as_deref().map(Into::into),
                custom: m
                    .custom
                    .as_ref()
                    .map(|c| (c.unit.as_str().into(), c.direction.as_str().into())),
                best: [row.min_point, row.second_point],
            }
        })
        .collect();
    let finite = entries.iter().all(|e| {
        e.mean
            .iter()
            .chain(&e.median)
            .chain(&e.best)
            .chain(std::iter::once(&e.confidence))
            .all(|v| v.is_finite())
    });
    finite.then(|| serde_json::to_vec(&entries).ok()).flatten()
}

/// The measurements of a `runs.gate_view`, each with its two best samples as its samples (one
/// iteration each): the minimum statistic, its within-run interval and the median read the same
/// as from the whole measurement; anything that needs every sample must read the measurements
/// table. `None` when the view does not decode.
pub(super) fn decode_gate_view(bytes: &[u8]) -> Option<Vec<Measurement>> {
    let entries: Vec<ViewEntry<'_>> = serde_json::from_slice(bytes).ok()?;
    entries
        .into_iter()
        .map(|e| {
            let estimate = |[point, lower, upper]: [f64; 3]| Estimate {
                point,
                lower,
                upper,
                confidence_level: e.confidence,
            };
            let throughput = match e.throughput {
                Some((kind, amount, bytes)) => Some(Throughput::from_parts(&kind, amount, bytes)?),
                None => None,
            };
            let custom = match e.custom {
                Some((unit, direction)) => Some(CustomMetric {
                    unit: unit.into_owned(),
                    direction: Direction::parse(&direction)?,
                }),
                None => None,
            };
            Some(Measurement {
                id: BenchmarkId::parse(&e.id).ok()?,
                throughput,
                mean: estimate(e.mean),
                median: estimate(e.median),
                sampling_mode: e.sampling_mode.map(std::borrow::Cow::into_owned),
                samples: Samples::new(vec![1.0, 1.0], e.best.to_vec()).ok()?,
                custom,
            })
        })
        .collect()
}

/// One measurement of a trend, as read from a run's gate view: benchmark id, median, its
/// interval, the best sample (the `min_point` column) and a custom metric's unit.
/// A trend's values of one measurement: id, median with its interval, fastest iteration, a
/// custom metric's unit and whether higher is better, and a Criterion throughput's kind and
/// amount per iteration.
pub(super) type TrendValues = (
    String,
    f64,
    f64,
    f64,
    f64,
    Option<String>,
    bool,
    Option<(String, u64)>,
);

/// A run's trend values from its `runs.gate_view`, in the order its measurements were stored;
/// `None` when the view does not decode (then the measurements table is read).
pub(super) fn decode_trend_view(bytes: &[u8]) -> Option<Vec<TrendValues>> {
    let entries: Vec<ViewEntry<'_>> = serde_json::from_slice(bytes).ok()?;
    Some(
        entries
            .into_iter()
            .map(|e| {
                let [median, lower, upper] = e.median;
                (
                    e.id.into_owned(),
                    median,
                    lower,
                    upper,
                    e.best[0],
                    e.custom.as_ref().map(|(unit, _)| unit.clone().into_owned()),
                    e.custom
                        .as_ref()
                        .is_some_and(|(_, direction)| direction == "higher"),
                    e.throughput
                        .map(|(kind, amount, _)| (kind.into_owned(), amount)),
                )
            })
            .collect(),
    )
}

pub(super) fn run_summary_from_row<R>(row: &R) -> Result<RunSummary>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    let corrupt = |reason: String| Error::CorruptRow {
        table: "runs",
        reason,
    };
    let get_error = |e: sqlx::Error| corrupt(e.to_string());
    let kind: String = row.try_get("kind").map_err(get_error)?;
    let pr_number: Option<i64> = row.try_get("pr_number").map_err(get_error)?;
    let attempt: i64 = row.try_get("attempt").map_err(get_error)?;
    let n_benchmarks: i64 = row.try_get("n_benchmarks").map_err(get_error)?;
    let recorded_at_ms: i64 = row.try_get("recorded_at_ms").map_err(get_error)?;
    Ok(RunSummary {
        id: RunId::from_row(row.try_get("id").map_err(get_error)?),
        meta: RunMeta {
            repository: RepositoryName::parse(
                &row.try_get::<String, _>("repository").map_err(get_error)?,
            )?,
            commit: CommitSha::parse(&row.try_get::<String, _>("commit_sha").map_err(get_error)?)?,
            branch: row.try_get("branch").map_err(get_error)?,
            kind: RunKind::from_str(&kind)?,
            pr_number: pr_number
                .map(|n| u64::try_from(n).map_err(|_| corrupt(format!("pr_number {n}"))))
                .transpose()?,
            attempt: u32::try_from(attempt).map_err(|_| corrupt(format!("attempt {attempt}")))?,
        },
        fingerprint: Fingerprint::parse(
            &row.try_get::<String, _>("fingerprint").map_err(get_error)?,
        )?,
        recorded_at: UNIX_EPOCH + Duration::from_millis(u64::try_from(recorded_at_ms).unwrap_or(0)),
        n_benchmarks: usize::try_from(n_benchmarks)
            .map_err(|_| corrupt(format!("n_benchmarks {n_benchmarks}")))?,
    })
}

pub(super) fn profile_from_row<R>(row: &R) -> Result<HardwareProfile>
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    let get_error = |e: sqlx::Error| Error::CorruptRow {
        table: "fingerprints",
        reason: e.to_string(),
    };
    let count = |name: &str| -> Result<i64> { row.try_get::<i64, _>(name).map_err(get_error) };
    let features: String = row.try_get("cpu_features").map_err(get_error)?;
    Ok(HardwareProfile {
        cpu_arch: row.try_get("cpu_arch").map_err(get_error)?,
        cpu_vendor: row.try_get("cpu_vendor").map_err(get_error)?,
        cpu_brand: row.try_get("cpu_brand").map_err(get_error)?,
        physical_cores: u32::try_from(count("physical_cores")?).unwrap_or(0),
        logical_cores: u32::try_from(count("logical_cores")?).unwrap_or(0),
        memory_gib: u64::try_from(count("memory_gib")?).unwrap_or(0),
        cpu_features: features
            .split(',')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect(),
        os_name: row.try_get("os_name").map_err(get_error)?,
        os_major_version: row.try_get("os_major_version").map_err(get_error)?,
        runner_image: row.try_get("runner_image").map_err(get_error)?,
        runner_image_version: row.try_get("runner_image_version").map_err(get_error)?,
        rustc_version: row.try_get("rustc_version").map_err(get_error)?,
        host_triple: row.try_get("host_triple").map_err(get_error)?,
        hostname: row.try_get("hostname").map_err(get_error)?,
        cpu_frequency_mhz: row
            .try_get::<Option<i64>, _>("cpu_frequency_mhz")
            .map_err(get_error)?
            .and_then(|mhz| u64::try_from(mhz).ok()),
        kernel_version: row.try_get("kernel_version").map_err(get_error)?,
        os_version: row.try_get("os_version").map_err(get_error)?,
    })
}

/// The columns `measurement_from_row` reads, in its positional order.
pub(super) const MEASUREMENT_COLUMNS: &str = "b.name, m.throughput_kind, m.throughput_amount, m.throughput_bytes, \
     m.mean_point, m.mean_lower, m.mean_upper, m.median_point, m.median_lower, m.median_upper, \
     m.confidence_level, m.sampling_mode, m.sample_iters, m.sample_times, m.unit, m.direction, \
     m.sample_encoding";

/// A row of [`MEASUREMENT_COLUMNS`], read by position and borrowing its text and blobs.
pub(super) fn measurement_from_row<'r, R>(row: &'r R) -> Result<Measurement>
where
    R: Row,
    usize: ColumnIndex<R>,
    &'r str: Decode<'r, R::Database> + Type<R::Database>,
    &'r [u8]: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    f64: Decode<'r, R::Database> + Type<R::Database>,
{
    let corrupt = |reason: String| Error::CorruptRow {
        table: "measurements",
        reason,
    };
    let get_error = |e: sqlx::Error| corrupt(e.to_string());
    let name: &str = row.try_get(0).map_err(get_error)?;
    let throughput_kind: Option<&str> = row.try_get(1).map_err(get_error)?;
    let throughput = match throughput_kind {
        None => None,
        Some(kind) => {
            let amount: i64 = row.try_get(2).map_err(get_error)?;
            let bytes: Option<i64> = row.try_get(3).map_err(get_error)?;
            let amount = u64::try_from(amount)
                .map_err(|_| corrupt(format!("{name}: throughput_amount {amount}")))?;
            let bytes = bytes.and_then(|b| u64::try_from(b).ok());
            Some(
                Throughput::from_parts(kind, amount, bytes)
                    .ok_or_else(|| corrupt(format!("{name}: throughput kind {kind:?}")))?,
            )
        }
    };
    let confidence_level: f64 = row.try_get(10).map_err(get_error)?;
    let estimate = |first: usize| -> Result<Estimate> {
        Ok(Estimate {
            point: row.try_get(first).map_err(get_error)?,
            lower: row.try_get(first + 1).map_err(get_error)?,
            upper: row.try_get(first + 2).map_err(get_error)?,
            confidence_level,
        })
    };
    let unit: Option<&str> = row.try_get(14).map_err(get_error)?;
    let direction: Option<&str> = row.try_get(15).map_err(get_error)?;
    let custom = match (unit, direction) {
        (None, None) => None,
        (Some(unit), Some(direction)) => Some(CustomMetric {
            unit: unit.to_owned(),
            direction: Direction::parse(direction)
                .ok_or_else(|| corrupt(format!("{name}: direction {direction:?}")))?,
        }),
        _ => return Err(corrupt(format!("{name}: a unit without a direction"))),
    };
    let encoding: i64 = row.try_get(16).map_err(get_error)?;
    let iters = samples::decode(encoding, row.try_get::<&[u8], _>(12).map_err(get_error)?)
        .ok_or_else(|| {
            corrupt(format!(
                "{name}: sample_iters is not an array of sample encoding {encoding}"
            ))
        })?;
    let times = samples::decode(encoding, row.try_get::<&[u8], _>(13).map_err(get_error)?)
        .ok_or_else(|| {
            corrupt(format!(
                "{name}: sample_times is not an array of sample encoding {encoding}"
            ))
        })?;
    Ok(Measurement {
        id: BenchmarkId::parse(name)?,
        throughput,
        mean: estimate(4)?,
        median: estimate(7)?,
        sampling_mode: row.try_get(11).map_err(get_error)?,
        samples: Samples::new(iters, times)
            .map_err(|(field, reason)| corrupt(format!("{name}: {field} {reason}")))?,
        custom,
    })
}

/// The run's content: what the user supplied, less the time it was recorded. Two ingests of
/// the same results hash the same; any other difference does not.
pub(super) fn content_hash(run: &NewRun) -> String {
    fn field(hasher: &mut Sha256, bytes: &[u8]) {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    let mut hasher = Sha256::new();
    // The sample arrays are hashed as their little-endian `f64`s, through one buffer.
    let mut floats = Vec::new();
    let mut samples = |hasher: &mut Sha256, values: &[f64]| {
        floats.clear();
        for value in values {
            floats.extend_from_slice(&value.to_le_bytes());
        }
        field(hasher, &floats);
    };
    field(
        &mut hasher,
        run.meta.branch.as_deref().unwrap_or("").as_bytes(),
    );
    field(&mut hasher, &run.meta.pr_number.unwrap_or(0).to_le_bytes());
    for m in &run.measurements {
        field(&mut hasher, m.id.as_str().as_bytes());
        let throughput = m
            .throughput
            .map(|t| format!("{}:{}:{:?}", t.kind(), t.amount(), t.secondary_bytes()));
        field(&mut hasher, throughput.unwrap_or_default().as_bytes());
        for estimate in [m.mean, m.median] {
            for value in [
                estimate.point,
                estimate.lower,
                estimate.upper,
                estimate.confidence_level,
            ] {
                field(&mut hasher, &value.to_bits().to_le_bytes());
            }
        }
        field(
            &mut hasher,
            m.sampling_mode.as_deref().unwrap_or("").as_bytes(),
        );
        samples(&mut hasher, m.samples.iters());
        samples(&mut hasher, m.samples.times());
        // Only custom metrics add fields, so Criterion runs hash as they always did.
        if let Some(custom) = &m.custom {
            field(&mut hasher, custom.unit.as_bytes());
            field(&mut hasher, custom.direction.as_str().as_bytes());
        }
    }
    to_hex(&hasher.finalize())
}

/// `runs.statistics`: per measurement, benchmark id (i64), median and minimum (f64), little-endian.
pub(super) fn encode_run_statistics(rows: &[MeasurementRow<'_>]) -> Vec<u8> {
    let entries: Vec<(i64, f64, f64)> = rows
        .iter()
        .map(|row| {
            (
                row.benchmark_id,
                row.measurement.median.point,
                row.min_point,
            )
        })
        .collect();
    encode_statistics_entries(&entries)
}

/// `runs.statistics` of (benchmark id, median, minimum) entries.
pub(super) fn encode_statistics_entries(entries: &[(i64, f64, f64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 24);
    for (benchmark, median, min) in entries {
        out.extend_from_slice(&benchmark.to_le_bytes());
        out.extend_from_slice(&median.to_le_bytes());
        out.extend_from_slice(&min.to_le_bytes());
    }
    out
}

pub(super) fn decode_run_statistics(bytes: &[u8]) -> Option<Vec<(i64, f64, f64)>> {
    let entries = bytes.chunks_exact(24);
    if !entries.remainder().is_empty() {
        return None;
    }
    let word = |b: &[u8]| -> [u8; 8] {
        let mut array = [0u8; 8];
        array.copy_from_slice(b);
        array
    };
    Some(
        entries
            .map(|e| {
                (
                    i64::from_le_bytes(word(&e[..8])),
                    f64::from_le_bytes(word(&e[8..16])),
                    f64::from_le_bytes(word(&e[16..])),
                )
            })
            .collect(),
    )
}

pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

pub(super) fn from_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

pub(super) fn to_i64(value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|_| {
        Error::InvalidInput(benchgate_core::InvalidInput {
            what: "integer",
            value: value.to_string(),
            reason: "too large to store (above 2^63 - 1)",
        })
    })
}

pub(super) fn epoch_ms(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used, clippy::unwrap_used)]

    use super::*;
    use crate::domain::{CommitSha, RunKind};

    fn profile() -> HardwareProfile {
        HardwareProfile {
            cpu_arch: "x86_64".into(),
            cpu_vendor: "AuthenticAMD".into(),
            cpu_brand: "AMD EPYC".into(),
            physical_cores: 2,
            logical_cores: 2,
            memory_gib: 24,
            cpu_features: vec!["avx2".into()],
            os_name: "Debian".into(),
            os_major_version: "12".into(),
            runner_image: None,
            runner_image_version: None,
            rustc_version: "rustc 1.95.0".into(),
            host_triple: "x86_64-unknown-linux-gnu".into(),
            hostname: None,
            cpu_frequency_mhz: None,
            kernel_version: None,
            os_version: None,
        }
    }

    fn measurement(id: &str, scale: f64, custom: bool) -> Measurement {
        let estimate = |point: f64| Estimate {
            point,
            lower: point * 0.99,
            upper: point * 1.01,
            confidence_level: 0.95,
        };
        let iters: Vec<f64> = (1..=30).map(|k| f64::from(k) * 7.0).collect();
        let times: Vec<f64> = iters.iter().map(|n| (n * scale).round() + 0.5).collect();
        Measurement {
            id: BenchmarkId::parse(id).unwrap(),
            throughput: (!custom).then_some(Throughput::Bytes(4096)),
            mean: estimate(scale * 1.02),
            median: estimate(scale),
            sampling_mode: Some("Linear".into()),
            samples: Samples::new(iters, times).unwrap(),
            custom: custom.then(|| CustomMetric {
                unit: "MiB".into(),
                direction: Direction::HigherIsBetter,
            }),
        }
    }

    /// A stored run's hash is what a later ingest of the same results is compared with
    /// (`Unchanged` or `RunConflict`): however it is computed, it must not change. The value is
    /// what the implementation of a2c4179 (per-field buffers) gave.
    #[test]
    fn the_content_hash_is_the_one_stored_runs_carry() {
        let run = NewRun {
            meta: RunMeta {
                repository: RepositoryName::parse("acme/widgets").unwrap(),
                commit: CommitSha::parse("0123456789abcdef0123456789abcdef01234567").unwrap(),
                branch: Some("main".into()),
                kind: RunKind::Push,
                pr_number: Some(7),
                attempt: 1,
            },
            profile: profile(),
            recorded_at: UNIX_EPOCH,
            measurements: vec![
                measurement("parse/json", 1234.5, false),
                measurement("size/binary", 9.75, true),
            ],
            function_costs: Default::default(),
        };
        assert_eq!(
            content_hash(&run),
            "9e223defbd6d0d7f16959e377c40c4f4754027368f2fb2305b674a99267ae6f5"
        );
    }
}
