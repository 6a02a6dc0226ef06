//! Custom metrics: measurements Criterion does not take (a load test's tail latency, memory,
//! connections per second), read from a JSON file in Bencher's metric format with benchgate's
//! additions, and stored beside Criterion's measurements.
//!
//! ```json
//! {
//!   "mixnet/rr": {
//!     "latency-p95": {"value": 41.2, "lower_value": 39.0, "upper_value": 44.1, "unit": "ms", "direction": "lower"},
//!     "connections": {"samples": [9811, 10022, 9954], "unit": "conn/s", "direction": "higher"}
//!   },
//!   "server/startup": {"latency": {"value": 88000000.0}}
//! }
//! ```
//!
//! The top level maps a benchmark name to its measures; each measure becomes the benchmark
//! `NAME/MEASURE`. A measure has `value` (Bencher's required point), optional `lower_value` and
//! `upper_value` (its interval), or `samples` (raw observations; the point and interval are then
//! computed from them), and `unit` and `direction` (`lower` or `higher` is better). Bencher's
//! built-in measures need neither: `latency` is ns and lower, `throughput` operations/s and
//! higher, `file-size` bytes and lower, `build-time` seconds and lower. Anything else is an
//! error that names the file and the field.

use std::path::Path;

use serde_json::Value;

use crate::domain::{BenchmarkId, CustomMetric, Direction, Estimate, Measurement, Samples};
use crate::error::Result;

/// Bencher's built-in measures: (slug, unit, direction).
const BUILT_IN: &[(&str, &str, Direction)] = &[
    ("latency", "ns", Direction::LowerIsBetter),
    ("throughput", "ops/s", Direction::HigherIsBetter),
    ("file-size", "B", Direction::LowerIsBetter),
    ("build-time", "s", Direction::LowerIsBetter),
];

/// The two-sided 95% normal quantile.
const Z_95: f64 = 1.959_963_984_540_054;

/// Reads a metrics file; every measurement or an error naming the file and the field.
pub fn read_file(path: &Path) -> Result<Vec<Measurement>> {
    crate::error::parse_json_file(path, parse)
}

type FieldError = (String, String);

/// Parses a metrics document; errors are (field path, reason).
pub fn parse(document: &Value) -> std::result::Result<Vec<Measurement>, FieldError> {
    let benchmarks = document.as_object().ok_or_else(|| {
        (
            "(document)".to_owned(),
            "must be an object of benchmark names".to_owned(),
        )
    })?;
    if benchmarks.is_empty() {
        return Err(("(document)".to_owned(), "holds no benchmarks".to_owned()));
    }
    let mut measurements = Vec::new();
    for (name, measures) in benchmarks {
        let measures = measures.as_object().ok_or_else(|| {
            (
                format!("{name:?}"),
                "must be an object of measures".to_owned(),
            )
        })?;
        if measures.is_empty() {
            return Err((format!("{name:?}"), "has no measures".to_owned()));
        }
        for (measure, body) in measures {
            let field = format!("{name:?}.{measure:?}");
            measurements.push(measurement(name, measure, body).map_err(|(key, reason)| {
                let field = if key.is_empty() {
                    field.clone()
                } else {
                    format!("{field}.{key}")
                };
                (field, reason)
            })?);
        }
    }
    Ok(measurements)
}

fn number(body: &Value, key: &str) -> std::result::Result<Option<f64>, FieldError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let n = v
                .as_f64()
                .ok_or_else(|| (key.to_owned(), format!("is {v}; expected a number")))?;
            check_value(n).map_err(|reason| (key.to_owned(), reason))?;
            Ok(Some(n))
        }
    }
}

fn check_value(n: f64) -> std::result::Result<(), String> {
    if !n.is_finite() {
        Err(format!("is {n}; values must be finite"))
    } else if n < 0.0 {
        Err(format!(
            "is {n}; values must not be negative (the gate compares ratios)"
        ))
    } else {
        Ok(())
    }
}

fn measurement(
    name: &str,
    measure: &str,
    body: &Value,
) -> std::result::Result<Measurement, FieldError> {
    let object = body
        .as_object()
        .ok_or_else(|| (String::new(), "must be an object with a value".to_owned()))?;
    for key in object.keys() {
        if ![
            "value",
            "lower_value",
            "upper_value",
            "samples",
            "unit",
            "direction",
        ]
        .contains(&key.as_str())
        {
            return Err((
                key.clone(),
                "is not a field of a measure (value, lower_value, upper_value, samples, unit, direction)"
                    .to_owned(),
            ));
        }
    }
    let id = BenchmarkId::parse(&format!("{name}/{measure}"))
        .map_err(|e| (String::new(), e.to_string()))?;

    let (unit, direction) = unit_and_direction(object, measure)?;

    let value = number(body, "value")?;
    let lower = number(body, "lower_value")?;
    let upper = number(body, "upper_value")?;
    let samples = samples_of(object)?;

    let (mean, median, observations) = estimates_of(value, lower, upper, samples)?;
    let samples = Samples::new(vec![1.0; observations.len()], observations)
        .map_err(|(field, reason)| (format!("samples ({field})"), reason))?;
    Ok(Measurement {
        id,
        throughput: None,
        mean,
        median,
        sampling_mode: None,
        samples,
        custom: Some(CustomMetric { unit, direction }),
    })
}

/// A measure's unit and which direction is better: given, or a built-in measure's.
fn unit_and_direction(
    object: &serde_json::Map<String, Value>,
    measure: &str,
) -> std::result::Result<(String, Direction), FieldError> {
    let built_in = BUILT_IN.iter().find(|(slug, _, _)| *slug == measure);
    let unit = match (object.get("unit"), built_in) {
        (Some(Value::String(unit)), _) if (1..=32).contains(&unit.trim().len()) => {
            unit.trim().to_owned()
        }
        (Some(other), _) => {
            return Err((
                "unit".to_owned(),
                format!(
                    "is {other}; expected a unit of 1 to 32 characters, such as \"ms\", \"MiB\" or \"conn/s\""
                ),
            ));
        }
        (None, Some((_, unit, _))) => (*unit).to_owned(),
        (None, None) => {
            return Err((
                "unit".to_owned(),
                format!(
                    "is missing; {measure:?} is not one of Bencher's built-in measures (latency, throughput, file-size, build-time), so it needs a unit"
                ),
            ));
        }
    };
    let direction = match (object.get("direction"), built_in) {
        (Some(Value::String(d)), _) => match d.as_str() {
            "lower" => Direction::LowerIsBetter,
            "higher" => Direction::HigherIsBetter,
            other => {
                return Err((
                    "direction".to_owned(),
                    format!("is {other:?}; expected \"lower\" or \"higher\" (which is better)"),
                ));
            }
        },
        (Some(other), _) => {
            return Err((
                "direction".to_owned(),
                format!("is {other}; expected \"lower\" or \"higher\""),
            ));
        }
        (None, Some((_, _, direction))) => *direction,
        (None, None) => {
            return Err((
                "direction".to_owned(),
                format!("is missing; say whether \"lower\" or \"higher\" {measure:?} is better"),
            ));
        }
    };
    Ok((unit, direction))
}

/// A measure's `samples`, each checked; `None` when it has none.
fn samples_of(
    object: &serde_json::Map<String, Value>,
) -> std::result::Result<Option<Vec<f64>>, FieldError> {
    Ok(match object.get("samples") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            if items.is_empty() {
                return Err(("samples".to_owned(), "is empty".to_owned()));
            }
            let mut values = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let n = item.as_f64().ok_or_else(|| {
                    (
                        format!("samples[{i}]"),
                        format!("is {item}; expected a number"),
                    )
                })?;
                check_value(n).map_err(|reason| (format!("samples[{i}]"), reason))?;
                values.push(n);
            }
            Some(values)
        }
        Some(other) => {
            return Err((
                "samples".to_owned(),
                format!("is {other}; expected a list of numbers"),
            ));
        }
    })
}

/// The mean and median with their intervals, and the observations they rest on: from the
/// samples, or from the value and its optional bounds.
fn estimates_of(
    value: Option<f64>,
    lower: Option<f64>,
    upper: Option<f64>,
    samples: Option<Vec<f64>>,
) -> std::result::Result<(Estimate, Estimate, Vec<f64>), FieldError> {
    Ok(match samples {
        Some(values) => {
            if lower.is_some() || upper.is_some() {
                return Err((
                    "samples".to_owned(),
                    "comes with lower_value/upper_value; give one or the other (the interval is computed from the samples)".to_owned(),
                ));
            }
            let (mean, median) = estimates(&values);
            if let Some(v) = value {
                let (min, max) = values
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                        (lo.min(x), hi.max(x))
                    });
                if v < min || v > max {
                    return Err((
                        "value".to_owned(),
                        format!("is {v}, outside the samples' range [{min}, {max}]"),
                    ));
                }
            }
            (mean, median, values)
        }
        None => {
            let point = value.ok_or_else(|| {
                (
                    "value".to_owned(),
                    "is missing; a measure needs a value or samples".to_owned(),
                )
            })?;
            let lower = lower.unwrap_or(point);
            let upper = upper.unwrap_or(point);
            if lower > point {
                return Err((
                    "lower_value".to_owned(),
                    format!("is {lower}, above the value {point}"),
                ));
            }
            if upper < point {
                return Err((
                    "upper_value".to_owned(),
                    format!("is {upper}, below the value {point}"),
                ));
            }
            let estimate = Estimate {
                point,
                lower,
                upper,
                confidence_level: 0.95,
            };
            (estimate, estimate, vec![point])
        }
    })
}

/// The mean (t-free normal interval) and the median (distribution-free order-statistic
/// interval) of observations, at 95%.
fn estimates(values: &[f64]) -> (Estimate, Estimate) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let half = Z_95 * (variance / n).sqrt();
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = (sorted.len() - 1) as f64 / 2.0;
    let median = (sorted[middle.floor() as usize] + sorted[middle.ceil() as usize]) / 2.0;
    let spread = Z_95 * n.sqrt() / 2.0;
    let low = sorted[(middle - spread).floor().max(0.0) as usize];
    let high = sorted[((middle + spread).ceil() as usize).min(sorted.len() - 1)];
    (
        Estimate {
            point: mean,
            lower: (mean - half).max(0.0),
            upper: mean + half,
            confidence_level: 0.95,
        },
        Estimate {
            point: median,
            lower: low.min(median),
            upper: high.max(median),
            confidence_level: 0.95,
        },
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn bencher_documents_read_with_built_in_units() {
        let read = parse(&json!({
            "server/startup": {"latency": {"value": 88.0, "lower_value": 87.0, "upper_value": 90.0}},
            "load": {"throughput": {"value": 1200.0}}
        }))
        .unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].id.as_str(), "server/startup/latency");
        assert_eq!(read[0].median.lower, 87.0);
        let custom = read[0].custom.as_ref().unwrap();
        assert_eq!(
            (custom.unit.as_str(), custom.direction),
            ("ns", Direction::LowerIsBetter)
        );
        let custom = read[1].custom.as_ref().unwrap();
        assert_eq!(
            (custom.unit.as_str(), custom.direction),
            ("ops/s", Direction::HigherIsBetter)
        );
    }

    #[test]
    fn samples_give_the_point_and_the_interval() {
        let samples: Vec<f64> = (1..=21).map(f64::from).collect();
        let read = parse(
            &json!({"load": {"p95": {"samples": samples, "unit": "ms", "direction": "lower"}}}),
        )
        .unwrap();
        let m = &read[0];
        assert_eq!(m.median.point, 11.0);
        assert_eq!(m.mean.point, 11.0);
        // ±1.96·√21/2 ≈ 4.49 ranks around rank 10 (0-based): ranks 5 and 15, values 6 and 16.
        assert_eq!((m.median.lower, m.median.upper), (6.0, 16.0));
        assert_eq!(m.samples.len(), 21);
    }

    #[test]
    fn bad_measures_name_their_field() {
        let cases = [
            (
                json!({"a": {"rss": {"value": 1.0}}}),
                "\"a\".\"rss\".unit",
                "needs a unit",
            ),
            (
                json!({"a": {"rss": {"value": 1.0, "unit": "MiB"}}}),
                "\"a\".\"rss\".direction",
                "is missing",
            ),
            (
                json!({"a": {"rss": {"value": 1.0, "unit": "MiB", "direction": "up"}}}),
                "\"a\".\"rss\".direction",
                "\"up\"",
            ),
            (
                json!({"a": {"latency": {"value": -1.0}}}),
                "\"a\".\"latency\".value",
                "must not be negative",
            ),
            (
                json!({"a": {"latency": {"value": 5.0, "lower_value": 6.0}}}),
                "\"a\".\"latency\".lower_value",
                "above the value",
            ),
            (
                json!({"a": {"latency": {"samples": [1.0, "x"]}}}),
                "\"a\".\"latency\".samples[1]",
                "expected a number",
            ),
            (
                json!({"a": {"latency": {"value": 1.0, "extra": 2}}}),
                "\"a\".\"latency\".extra",
                "not a field",
            ),
            (
                json!({"a": {"latency": {"lower_value": 1.0}}}),
                "\"a\".\"latency\".value",
                "is missing",
            ),
            (
                json!({"a": {"latency": {"value": 9.0, "samples": [1.0, 2.0]}}}),
                "\"a\".\"latency\".value",
                "outside",
            ),
            (json!([]), "(document)", "object of benchmark names"),
        ];
        for (document, field, reason) in cases {
            let (f, r) = parse(&document).unwrap_err();
            assert_eq!(f, field, "{document}");
            assert!(r.contains(reason), "{document}: {r}");
        }
    }
}
