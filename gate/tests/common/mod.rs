//! Helpers shared by the gate's tests.

#![allow(dead_code, clippy::unwrap_used)] // each test file uses a subset; tests fail loudly

use benchgate_collector::{BenchmarkId, Estimate, Measurement, Samples, Throughput};

/// A measurement whose median is `ns`, with a ±`within` relative 95% interval.
pub fn measurement(id: &str, ns: f64, within: f64, throughput: Option<Throughput>) -> Measurement {
    let estimate = Estimate {
        point: ns,
        lower: ns * (1.0 - within),
        upper: ns * (1.0 + within),
        confidence_level: 0.95,
    };
    Measurement {
        id: BenchmarkId::parse(id).unwrap(),
        throughput,
        mean: estimate,
        median: estimate,
        sampling_mode: None,
        samples: Samples::new(vec![1.0], vec![ns]).unwrap(),
    }
}
