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
        custom: None,
        samples: Samples::new(vec![1.0], vec![ns]).unwrap(),
    }
}

/// A same-job A/B decision of `base` and `head` rounds (no history) under the default policy.
pub fn decide_ab(
    base: &[Vec<Measurement>],
    head: &[Vec<Measurement>],
) -> benchgate_gate::decision::Decision {
    use benchgate_gate::decision::{Input, Mode, evaluate};
    let history = std::collections::HashMap::new();
    evaluate(
        &Input {
            mode: Mode::SameJobAb,
            base_rounds: base,
            head_rounds: head,
            history: &history,
        },
        &benchgate_gate::Policy::default(),
    )
}
