//! Reading `cargo criterion --message-format=json` output recorded from benchgate's own sample
//! workloads (see fixtures/README.md).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches fail loudly

use std::io::Cursor;
use std::path::Path;

use benchgate_collector::cargo_criterion::read_messages;
use benchgate_collector::{Error, Throughput};

const FIXTURE: &str = include_str!("fixtures/cargo-criterion-sample-workloads.jsonl");

#[test]
fn benchmark_complete_messages_become_measurements_with_samples() {
    let measurements = read_messages(Cursor::new(FIXTURE), Path::new("fixture.jsonl")).unwrap();
    let ids: Vec<&str> = measurements.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "naïve λ lookup",
            "parse/csv numbers/16",
            "parse/csv numbers/256",
            "sort/Vec::sort_unstable/1000 u32"
        ]
    );

    let parse = &measurements[1];
    assert_eq!(parse.throughput, Some(Throughput::Bytes(93)));
    assert_eq!(parse.median.point, 234.02265960904492);
    assert_eq!(parse.mean.lower, 233.6750180172529);
    assert_eq!(parse.samples.len(), 20);
    assert_eq!(
        parse.samples.per_iteration().next().unwrap(),
        2801884.0 / 11965.0
    );

    assert_eq!(measurements[3].throughput, Some(Throughput::Elements(1000)));
    assert_eq!(measurements[0].throughput, None);
}

fn error_for(input: &str) -> String {
    read_messages(Cursor::new(input.to_owned()), Path::new("messages.jsonl"))
        .unwrap_err()
        .to_string()
}

#[test]
fn a_garbled_line_is_named_by_number() {
    let mut lines: Vec<&str> = FIXTURE.lines().collect();
    lines.insert(2, "Benchmarking parse: Warming up");
    let message = error_for(&lines.join("\n"));
    assert!(
        message.starts_with("messages.jsonl: line 3: not a cargo-criterion JSON message"),
        "{message}"
    );
}

#[test]
fn a_truncated_message_names_the_line_and_field() {
    let first = FIXTURE.lines().next().unwrap();
    let cut = &first[..first.find("\"measured_values\"").unwrap() + 40];
    let message = error_for(cut);
    assert!(message.starts_with("messages.jsonl: line 1:"), "{message}");
    assert!(message.contains("measured_values"), "{message}");
}

#[test]
fn a_negative_value_and_mismatched_arrays_are_refused() {
    let first = FIXTURE.lines().next().unwrap();
    let mut value: serde_json::Value = serde_json::from_str(first).unwrap();
    value["median"]["estimate"] = (-2.0).into();
    let message = error_for(&value.to_string());
    assert!(message.contains("field `median.estimate`"), "{message}");

    let mut value: serde_json::Value = serde_json::from_str(first).unwrap();
    value["measured_values"].as_array_mut().unwrap().pop();
    let message = error_for(&value.to_string());
    assert!(
        message.contains("measured_values") && message.contains("19 entries but iters has 20"),
        "{message}"
    );
}

#[test]
fn input_without_any_benchmark_is_an_error() {
    let groups_only: String = FIXTURE
        .lines()
        .filter(|l| l.contains("group-complete"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(matches!(
        read_messages(Cursor::new(groups_only), Path::new("-")),
        Err(Error::MessageLine { line: 0, .. })
    ));
}
