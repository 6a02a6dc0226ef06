//! Reads `cargo criterion --message-format=json` output: one JSON message per line, of which the
//! `benchmark-complete` ones carry a benchmark's estimates and samples.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use crate::domain::{BenchmarkId, Estimate, Measurement, Samples, Throughput};
use crate::error::{Error, Result};

/// cargo-criterion does not write the confidence level; its default (and Criterion's) is 95%.
const CARGO_CRITERION_CONFIDENCE_LEVEL: f64 = 0.95;

#[derive(Deserialize)]
struct MessageHeader {
    reason: String,
}

#[derive(Deserialize)]
struct BenchmarkComplete {
    id: String,
    iteration_count: Vec<f64>,
    measured_values: Vec<f64>,
    unit: String,
    #[serde(default)]
    throughput: Vec<ThroughputMessage>,
    mean: IntervalMessage,
    median: IntervalMessage,
}

#[derive(Deserialize)]
struct ThroughputMessage {
    per_iteration: u64,
    unit: String,
}

#[derive(Deserialize)]
struct IntervalMessage {
    estimate: f64,
    lower_bound: f64,
    upper_bound: f64,
    unit: String,
}

/// Reads every `benchmark-complete` message from `reader`; other messages (`group-complete`, ...)
/// and blank lines are skipped. `source_name` names the input in errors (`-` for standard input).
/// Fails whole on the first malformed line, naming its number and field.
pub fn read_messages(reader: impl BufRead, source_name: &Path) -> Result<Vec<Measurement>> {
    let mut measurements: Vec<Measurement> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (index, line) in reader.lines().enumerate() {
        let line_number = index + 1;
        let line_error = |message: String| Error::MessageLine {
            source_name: source_name.to_owned(),
            line: line_number,
            message,
        };
        let line = line.map_err(|e| line_error(format!("cannot read: {e}")))?;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let is_benchmark = match serde_json::from_str::<MessageHeader>(trimmed) {
            Ok(header) => header.reason == "benchmark-complete",
            // A cut-off message: parse it as a benchmark below to name the field it stops in.
            Err(e) if e.is_eof() && trimmed.starts_with('{') => true,
            Err(e) => {
                return Err(line_error(format!(
                    "not a cargo-criterion JSON message: {e}"
                )));
            }
        };
        if !is_benchmark {
            continue;
        }
        let mut deserializer = serde_json::Deserializer::from_str(trimmed);
        let message: BenchmarkComplete = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|e| {
                let truncated = if e.inner().is_eof() {
                    "message is truncated: "
                } else {
                    ""
                };
                line_error(format!("{truncated}field `{}`: {}", e.path(), e.inner()))
            })?;
        let measurement = to_measurement(message)
            .map_err(|(field, reason)| line_error(format!("field `{field}`: {reason}")))?;
        if let Some(first_line) = seen.insert(measurement.id.as_str().to_owned(), line_number) {
            return Err(line_error(format!(
                "duplicate benchmark id {:?} (first on line {first_line})",
                measurement.id.as_str()
            )));
        }
        measurements.push(measurement);
    }
    if measurements.is_empty() {
        return Err(Error::MessageLine {
            source_name: source_name.to_owned(),
            line: 0,
            message:
                "no benchmark-complete message found; run `cargo criterion --message-format=json`"
                    .to_owned(),
        });
    }
    measurements.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(measurements)
}

fn to_measurement(
    message: BenchmarkComplete,
) -> std::result::Result<Measurement, (String, String)> {
    let id = BenchmarkId::parse(&message.id).map_err(|_| {
        (
            "id".to_owned(),
            "must be non-empty and hold no control characters".to_owned(),
        )
    })?;
    if message.unit != "ns" {
        return Err((
            "unit".to_owned(),
            format!(
                "is {:?}; benchgate reads wall-clock time in ns",
                message.unit
            ),
        ));
    }
    let mean = interval(&message.mean, "mean")?;
    let median = interval(&message.median, "median")?;
    let throughput = match message.throughput.as_slice() {
        [] => None,
        [first, ..] => Some(match first.unit.as_str() {
            "bytes" => Throughput::Bytes(first.per_iteration),
            "bytes_decimal" => Throughput::BytesDecimal(first.per_iteration),
            "elements" => Throughput::Elements(first.per_iteration),
            "bits" => Throughput::Bits(first.per_iteration),
            other => {
                return Err((
                    "throughput[0].unit".to_owned(),
                    format!("is {other:?}; expected bytes, bytes_decimal, elements or bits"),
                ));
            }
        }),
    };
    let samples = Samples::new(message.iteration_count, message.measured_values).map_err(
        |(field, reason)| {
            let field = field.replacen("iters", "iteration_count", 1).replacen(
                "times",
                "measured_values",
                1,
            );
            (field, reason)
        },
    )?;
    let measurement = Measurement {
        id,
        throughput,
        mean,
        median,
        sampling_mode: None,
        samples,
        custom: None,
    };
    measurement.check_plausible().map_err(|(field, reason)| {
        let field = field
            .replacen("times", "measured_values", 1)
            .replacen("point_estimate", "estimate", 1)
            .replacen("confidence_interval.", "", 1);
        (field, reason)
    })?;
    Ok(measurement)
}

fn interval(
    message: &IntervalMessage,
    field: &str,
) -> std::result::Result<Estimate, (String, String)> {
    if message.unit != "ns" {
        return Err((
            format!("{field}.unit"),
            format!("is {:?}; expected ns", message.unit),
        ));
    }
    for (name, value) in [
        ("estimate", message.estimate),
        ("lower_bound", message.lower_bound),
        ("upper_bound", message.upper_bound),
    ] {
        if !value.is_finite() || value < 0.0 {
            return Err((
                format!("{field}.{name}"),
                format!("is {value}; a time must be finite and not negative"),
            ));
        }
    }
    if message.lower_bound > message.upper_bound {
        return Err((
            field.to_owned(),
            format!(
                "lower_bound {} is above upper_bound {}",
                message.lower_bound, message.upper_bound
            ),
        ));
    }
    Ok(Estimate {
        point: message.estimate,
        lower: message.lower_bound,
        upper: message.upper_bound,
        confidence_level: CARGO_CRITERION_CONFIDENCE_LEVEL,
    })
}
