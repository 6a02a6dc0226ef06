//! The run document: one run as JSON, what `benchgate upload` sends and `POST /api/v1/runs`
//! accepts (schema version 1, documented in docs/schema.md). Every field is checked on the way in
//! and errors name the field (`measurements[3].samples.times[7]`).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::callgrind::{Profile, ProfileDocument};

use crate::domain::{
    BenchmarkId, CommitSha, CustomMetric, Direction, Estimate, Measurement, NewRun, RepositoryName,
    RunKind, RunMeta, Samples, Throughput,
};
use crate::fingerprint::HardwareProfile;

pub mod reads;

/// The version of the run document's schema.
pub const RUN_SCHEMA_VERSION: u32 = 1;

/// One run, as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDocument {
    /// Always [`RUN_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `owner/name`.
    pub repository: String,
    /// The full 40-hex commit SHA.
    pub commit: String,
    /// The branch, if known.
    #[serde(default)]
    pub branch: Option<String>,
    /// `local`, `push`, `pr` or `nightly`.
    pub kind: String,
    /// The pull request, for `pr` runs.
    #[serde(default)]
    pub pr: Option<u64>,
    /// The attempt under the same key (CI re-runs count up); 1 if absent.
    #[serde(default = "one")]
    pub attempt: u32,
    /// When the results were recorded, milliseconds since the Unix epoch.
    pub recorded_at_ms: u64,
    /// The machine's fingerprint; must be the hash of `profile`.
    pub fingerprint: String,
    /// The machine, every component.
    pub profile: HardwareProfile,
    /// Every benchmark measured.
    pub measurements: Vec<MeasurementDocument>,
    /// Where instruction counts' instructions went, by function: the count measurement's id
    /// to its profile, kept to the largest functions. Absent when the run has none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub function_costs: BTreeMap<String, ProfileDocument>,
}

fn one() -> u32 {
    1
}

/// One benchmark's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasurementDocument {
    /// The benchmark id (Criterion's `full_id`).
    pub id: String,
    /// Work per iteration, if declared.
    #[serde(default)]
    pub throughput: Option<ThroughputDocument>,
    /// Mean ns per iteration with its interval.
    pub mean: EstimateDocument,
    /// Median ns per iteration with its interval.
    pub median: EstimateDocument,
    /// The intervals' confidence level.
    pub confidence_level: f64,
    /// Criterion's sampling mode, if known.
    #[serde(default)]
    pub sampling_mode: Option<String>,
    /// Every sample: `iters[i]` iterations took `times[i]` ns.
    pub samples: SamplesDocument,
    /// A custom metric's unit and direction (`ingest --metrics`); its estimates and samples
    /// are then values in that unit. Absent for Criterion's measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<MetricDocument>,
}

/// A custom metric's unit and which way is better.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricDocument {
    /// The unit of the values (`ms`, `MiB`, `conn/s`, ...).
    pub unit: String,
    /// `lower` or `higher`: which way is better.
    pub direction: String,
}

/// Criterion's throughput declaration.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputDocument {
    /// `Bytes`, `BytesDecimal`, `Elements`, `Bits` or `ElementsAndBytes`.
    pub kind: String,
    /// The amount per iteration.
    pub amount: u64,
    /// Bytes per iteration, for `ElementsAndBytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// A point estimate and its interval, ns per iteration.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EstimateDocument {
    /// The estimate.
    pub point: f64,
    /// The interval's lower bound.
    pub lower: f64,
    /// The interval's upper bound.
    pub upper: f64,
}

/// The raw samples.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplesDocument {
    /// Iterations per sample.
    pub iters: Vec<f64>,
    /// Total ns per sample.
    pub times: Vec<f64>,
}

/// A document that is not a valid run: the field at fault and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {message}")]
pub struct DocumentError {
    /// The field's path, e.g. `measurements[3].samples.times[7]`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// Parses JSON text into `T`, naming the field at fault (`measurements[3].samples`).
fn parse_json<T: serde::de::DeserializeOwned>(text: &[u8]) -> Result<T, DocumentError> {
    let deserializer = &mut serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let message = e.inner().to_string();
        let mut path = e.path().to_string();
        // A missing field is reported at its parent: name the field itself.
        if let Some(name) = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
        {
            path = if path.is_empty() || path == "." {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            };
        }
        invalid(if path.is_empty() { ".".into() } else { path }, message)
    })
}

fn invalid(field: impl Into<String>, message: impl Into<String>) -> DocumentError {
    DocumentError {
        field: field.into(),
        message: message.into(),
    }
}

impl RunDocument {
    /// Parses JSON text, naming the field at fault.
    pub fn from_json(text: &[u8]) -> Result<Self, DocumentError> {
        parse_json(text)
    }

    /// The document of a run.
    pub fn from_run(run: &NewRun) -> Self {
        let estimate = |e: &Estimate| EstimateDocument {
            point: e.point,
            lower: e.lower,
            upper: e.upper,
        };
        Self {
            schema_version: RUN_SCHEMA_VERSION,
            repository: run.meta.repository.to_string(),
            commit: run.meta.commit.to_string(),
            branch: run.meta.branch.clone(),
            kind: run.meta.kind.as_str().to_owned(),
            pr: run.meta.pr_number,
            attempt: run.meta.attempt,
            recorded_at_ms: run
                .recorded_at
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            fingerprint: run.profile.fingerprint().to_string(),
            profile: run.profile.clone(),
            measurements: run
                .measurements
                .iter()
                .map(|m| MeasurementDocument {
                    id: m.id.as_str().to_owned(),
                    throughput: m.throughput.map(|t| ThroughputDocument {
                        kind: t.kind().to_owned(),
                        amount: t.amount(),
                        bytes: t.secondary_bytes(),
                    }),
                    mean: estimate(&m.mean),
                    median: estimate(&m.median),
                    confidence_level: m.median.confidence_level,
                    sampling_mode: m.sampling_mode.clone(),
                    samples: SamplesDocument {
                        iters: m.samples.iters().to_vec(),
                        times: m.samples.times().to_vec(),
                    },
                    metric: m.custom.as_ref().map(|c| MetricDocument {
                        unit: c.unit.clone(),
                        direction: c.direction.as_str().to_owned(),
                    }),
                })
                .collect(),
            function_costs: run
                .function_costs
                .iter()
                .map(|(id, profile)| (id.as_str().to_owned(), profile.to_document()))
                .collect(),
        }
    }

    /// The run, every field checked.
    pub fn into_run(self) -> Result<NewRun, DocumentError> {
        if self.schema_version != RUN_SCHEMA_VERSION {
            return Err(invalid(
                "schema_version",
                format!(
                    "{} is not supported; this benchgate reads {RUN_SCHEMA_VERSION}",
                    self.schema_version
                ),
            ));
        }
        let repository = RepositoryName::parse(&self.repository)
            .map_err(|e| invalid("repository", e.to_string()))?;
        let commit =
            CommitSha::parse(&self.commit).map_err(|e| invalid("commit", e.to_string()))?;
        let kind: RunKind = self
            .kind
            .parse()
            .map_err(|e: benchgate_core::InvalidInput| invalid("kind", e.to_string()))?;
        if self.pr == Some(0) {
            return Err(invalid("pr", "a pull request number is positive"));
        }
        if self.attempt == 0 {
            return Err(invalid("attempt", "attempts count from 1"));
        }
        let computed = self.profile.fingerprint();
        if computed.as_str() != self.fingerprint {
            return Err(invalid(
                "fingerprint",
                format!(
                    "is {} but the profile hashes to {computed}",
                    self.fingerprint
                ),
            ));
        }
        if self.measurements.is_empty() {
            return Err(invalid(
                "measurements",
                "is empty; a run measures something",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let mut measurements = Vec::with_capacity(self.measurements.len());
        for (i, m) in self.measurements.into_iter().enumerate() {
            let at = |field: &str| format!("measurements[{i}].{field}");
            let id = BenchmarkId::parse(&m.id).map_err(|e| invalid(at("id"), e.to_string()))?;
            if !seen.insert(m.id.clone()) {
                return Err(invalid(at("id"), format!("{:?} appears twice", m.id)));
            }
            measurements.push(measurement_of(id, m, &at)?);
        }
        measurements.sort_by(|a, b| a.id.cmp(&b.id));
        let mut function_costs = BTreeMap::new();
        for (id, document) in self.function_costs {
            let at = |field: &str| format!("function_costs[{id:?}]{field}");
            if !seen.contains(&id) {
                return Err(invalid(
                    at(""),
                    "a profile of a benchmark the run does not measure",
                ));
            }
            let profile = Profile::from_document(document).map_err(|e| {
                let (field, message) = e.split_once(": ").unwrap_or(("", e.as_str()));
                invalid(at(&format!(".{field}")), message)
            })?;
            let id = BenchmarkId::parse(&id).map_err(|e| invalid(at(""), e.to_string()))?;
            function_costs.insert(id, profile);
        }
        Ok(NewRun {
            meta: RunMeta {
                repository,
                commit,
                branch: self.branch,
                kind,
                pr_number: self.pr,
                attempt: self.attempt,
            },
            profile: self.profile,
            recorded_at: UNIX_EPOCH + Duration::from_millis(self.recorded_at_ms),
            measurements,
            function_costs,
        })
    }
}

/// One measurement of a run document, every field checked; `at` names a field of it.
fn measurement_of(
    id: BenchmarkId,
    m: MeasurementDocument,
    at: &dyn Fn(&str) -> String,
) -> Result<Measurement, DocumentError> {
    if !(m.confidence_level > 0.0 && m.confidence_level < 1.0) {
        return Err(invalid(at("confidence_level"), "must lie in (0, 1)"));
    }
    let estimate = |e: EstimateDocument, name: &str| -> Result<Estimate, DocumentError> {
        for (value, part) in [(e.point, "point"), (e.lower, "lower"), (e.upper, "upper")] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(
                    at(&format!("{name}.{part}")),
                    format!("is {value}; times are finite and not negative"),
                ));
            }
        }
        Ok(Estimate {
            point: e.point,
            lower: e.lower,
            upper: e.upper,
            confidence_level: m.confidence_level,
        })
    };
    let throughput = match &m.throughput {
        None => None,
        Some(t) => Some(
            Throughput::from_parts(&t.kind, t.amount, t.bytes).ok_or_else(|| {
                invalid(
                    at("throughput.kind"),
                    format!("{:?} is not a throughput kind", t.kind),
                )
            })?,
        ),
    };
    let samples = Samples::new(m.samples.iters, m.samples.times)
        .map_err(|(field, reason)| invalid(at(&format!("samples.{field}")), reason))?;
    let custom = m.metric.map(|metric| custom_of(metric, at)).transpose()?;
    let measurement = Measurement {
        id,
        throughput,
        mean: estimate(m.mean, "mean")?,
        median: estimate(m.median, "median")?,
        sampling_mode: m.sampling_mode,
        samples,
        custom,
    };
    measurement.check_plausible().map_err(|(field, reason)| {
        let field = field
            .replacen("times", "samples.times", 1)
            .replacen("point_estimate", "point", 1)
            .replacen("confidence_interval.lower_bound", "lower", 1)
            .replacen("confidence_interval.upper_bound", "upper", 1);
        invalid(at(&field), reason)
    })?;
    Ok(measurement)
}

/// A custom metric's unit and direction, checked.
fn custom_of(
    metric: MetricDocument,
    at: &dyn Fn(&str) -> String,
) -> Result<CustomMetric, DocumentError> {
    let unit = metric.unit.trim();
    if unit.is_empty() || unit.len() > 32 {
        return Err(invalid(at("metric.unit"), "must be 1 to 32 characters"));
    }
    let direction = Direction::parse(&metric.direction).ok_or_else(|| {
        invalid(
            at("metric.direction"),
            format!(
                "is {:?}; expected \"lower\" or \"higher\"",
                metric.direction
            ),
        )
    })?;
    Ok(CustomMetric {
        unit: unit.to_owned(),
        direction,
    })
}

/// Milliseconds since the epoch, for [`RunDocument::recorded_at_ms`].
pub fn epoch_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
