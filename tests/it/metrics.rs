//! Custom metrics end to end (`benchgate ingest --metrics`): a load test's tail latency and
//! connection rate, a server's memory and a Bencher built-in throughput are stored, gated in
//! both directions, budgeted, shown in the comment, exported to CSV, uploaded and charted; bad
//! files are refused naming the file and the field, with nothing stored.

use std::path::Path;

use crate::support::server::Server;
use crate::support::*;
use serde_json::{Value, json};

const REPO: &str = "acme/mixnet";
const BASE: &str = "1111111111111111111111111111111111111111";
const HEAD: &str = "2222222222222222222222222222222222222222";

/// Twenty observations around `center`, spread ±`spread` (fraction), the same shape every time
/// but shifted per `round`, as a load test's per-second readings are.
fn readings(center: f64, spread: f64, round: u32) -> Vec<f64> {
    (0..20u32)
        .map(|i| {
            let wobble = (((i * 7 + round * 3) % 11) as f64 - 5.0) / 5.0;
            center * (1.0 + spread * wobble) * (1.0 + 0.004 * f64::from(round))
        })
        .collect()
}

/// One round's metrics file: the p95 latency of the mixnet round trip (lower is better), its
/// connection rate (higher), the server's resident memory (a value with its interval) and a
/// Bencher built-in `throughput` (operations/s, higher).
fn metrics(latency_ms: f64, connections: f64, rss_mib: f64, ops: f64, round: u32) -> Value {
    let rss = rss_mib * (1.0 + 0.002 * f64::from(round));
    json!({
        "mixnet/rr": {
            "latency-p95": {"samples": readings(latency_ms, 0.02, round), "unit": "ms", "direction": "lower"},
            "connections": {"samples": readings(connections, 0.02, round), "unit": "conn/s", "direction": "higher"}
        },
        "server": {
            "rss": {"value": rss, "lower_value": rss * 0.995, "upper_value": rss * 1.005, "unit": "MiB", "direction": "lower"}
        },
        "load": {
            "throughput": {"samples": readings(ops, 0.01, round)}
        }
    })
}

fn ingest(dir: &Path, document: &Value, commit: &str, attempt: u32) -> String {
    let file = dir.join(format!("metrics-{commit}-{attempt}.json"));
    std::fs::write(&file, document.to_string()).unwrap();
    let attempt = attempt.to_string();
    let output = benchgate(
        dir,
        &[
            "ingest",
            "--metrics",
            file.to_str().unwrap(),
            "--repo",
            REPO,
            "--commit",
            commit,
            "--branch",
            "main",
            "--kind",
            "push",
            "--attempt",
            &attempt,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("4 benchmarks"),
        "{}",
        stderr(&output)
    );
    stdout(&output).trim().to_owned()
}

const BUDGETS: &str = r#"
# The mixnet's p95 under 100 ms: met.
[[budget]]
benchmark = "mixnet/rr/latency-p95"
bound = "< 100 ms"

# At least 10,000 connections a second: met.
[[budget]]
benchmark = "mixnet/rr/connections"
bound = ">= 10000 conn/s"

# Memory under 150 MiB: missed (about 182 MiB).
[[budget]]
benchmark = "server/rss"
bound = "< 150 MiB"
warn = true

# A bound in a unit the metric is not in.
[[budget]]
benchmark = "server/rss"
bound = "< 1 GiB/s"
warn = true
"#;

#[test]
fn custom_metrics_are_stored_gated_budgeted_exported_and_charted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Three A/B rounds: the head's p95 is 40% slower and its throughput 30% lower (both worse),
    // its connection rate 25% higher (better), its memory unchanged.
    let mut base_runs = Vec::new();
    let mut head_runs = Vec::new();
    for round in 1..=3 {
        base_runs.push(ingest(
            d,
            &metrics(40.0, 10_000.0, 182.0, 5_000.0, round),
            BASE,
            round,
        ));
        head_runs.push(ingest(
            d,
            &metrics(56.0, 12_500.0, 182.0, 3_500.0, round),
            HEAD,
            round,
        ));
    }
    std::fs::write(d.join("benchgate.toml"), BUDGETS).unwrap();
    let mut args = vec!["compare".to_owned()];
    for (base, head) in base_runs.iter().zip(&head_runs) {
        args.extend(["--base".into(), base.clone(), "--head".into(), head.clone()]);
    }
    args.extend(
        [
            "--out-json",
            "perf-summary.json",
            "--out-md",
            "perf-summary.md",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = benchgate(d, &args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a regression fails: {}",
        stderr(&output)
    );

    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("perf-summary.json")).unwrap())
            .unwrap();
    let benchmark = |id: &str| {
        summary["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["id"] == id)
            .unwrap_or_else(|| panic!("no {id} in {summary:#}"))
            .clone()
    };
    let latency = benchmark("mixnet/rr/latency-p95");
    assert_eq!(latency["verdict"], "regressed", "{latency:#}");
    assert_eq!(latency["metric"], "lower");
    assert_eq!(latency["unit"], "ms");
    assert!(
        (latency["ratio"].as_f64().unwrap() - 1.4).abs() < 0.01,
        "{latency:#}"
    );
    assert!((latency["limit"].as_f64().unwrap() - 1.15).abs() < 1e-9);

    let connections = benchmark("mixnet/rr/connections");
    assert_eq!(
        connections["verdict"], "improved",
        "higher is better: {connections:#}"
    );
    assert_eq!(connections["metric"], "higher");
    // The ratio is worse-over-better: base/head for a higher-is-better metric.
    assert!(
        (connections["ratio"].as_f64().unwrap() - 0.8).abs() < 0.01,
        "{connections:#}"
    );

    let throughput = benchmark("load/throughput");
    assert_eq!(throughput["verdict"], "regressed", "{throughput:#}");
    assert_eq!(throughput["unit"], "ops/s", "Bencher's built-in unit");
    assert!(
        (throughput["limit"].as_f64().unwrap() - 1.0 / 0.9).abs() < 1e-9,
        "the throughput limit"
    );

    let rss = benchmark("server/rss");
    assert!(
        ["pass", "inconclusive"].contains(&rss["verdict"].as_str().unwrap()),
        "unchanged memory is not a change: {rss:#}"
    );
    assert_eq!(summary["counts"]["regressed"], 2);
    assert_eq!(summary["counts"]["improved"], 1);

    let budgets = summary["budgets"].as_array().unwrap();
    let verdicts: Vec<(&str, &str)> = budgets
        .iter()
        .map(|b| {
            (
                b["expression"].as_str().unwrap(),
                b["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("< 100 ms", "met"),
            (">= 10000 conn/s", "met"),
            ("< 150 MiB", "missed"),
            ("< 1 GiB/s", "unclear"),
        ]
    );
    // ms are compared as ns; MiB as bytes; conn/s as themselves.
    assert_eq!(budgets[0]["unit"], "ns");
    let p95 = budgets[0]["value"].as_f64().unwrap();
    assert!((p95 / 56e6 - 1.0).abs() < 0.02, "{p95}");
    assert_eq!(budgets[1]["unit"], "conn/s");
    assert_eq!(budgets[2]["unit"], "B");
    assert_eq!(budgets[3]["note"], "the bound is in B/s but median is in B");

    let markdown = std::fs::read_to_string(d.join("perf-summary.md")).unwrap();
    let row = |id: &str| {
        markdown
            .lines()
            .find(|l| l.starts_with(&format!("| `{id}` |")))
            .unwrap_or_else(|| panic!("no row for {id} in {markdown}"))
            .to_owned()
    };
    let latency_row = row("mixnet/rr/latency-p95");
    assert!(
        latency_row.contains("40.") && latency_row.contains(" ms"),
        "{latency_row}"
    );
    assert!(
        latency_row.contains("| 40.0% higher (worse) |"),
        "{latency_row}"
    );
    let connections_row = row("mixnet/rr/connections");
    assert!(connections_row.contains("conn/s"), "{connections_row}");
    assert!(
        connections_row.contains("| 25.0% higher (better) |"),
        "the value went up: {connections_row}"
    );
    assert!(
        row("load/throughput").contains("| 30.0% lower (worse) |"),
        "{}",
        row("load/throughput")
    );

    // CSV: the unit and the direction of each custom metric, the values as ingested.
    let output = benchgate(d, &["export", "--format", "csv", "--repo", REPO]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let csv = stdout(&output);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 6 * 4);
    let rss_row = rows
        .iter()
        .find(|r| r[column("benchmark")] == "server/rss")
        .unwrap();
    assert_eq!(rss_row[column("unit")], "MiB");
    assert_eq!(rss_row[column("better")], "lower");
    let rss_value: f64 = rss_row[column("median")].parse().unwrap();
    assert!((rss_value - 182.0 * 1.002).abs() < 1e-9, "{rss_value}");
    let connections_row = rows
        .iter()
        .find(|r| r[column("benchmark")] == "mixnet/rr/connections")
        .unwrap();
    assert_eq!(connections_row[column("unit")], "conn/s");
    assert_eq!(connections_row[column("better")], "higher");
    let best: f64 = connections_row[column("min")].parse().unwrap();
    let highest = readings(10_000.0, 0.02, 1)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(
        best, highest,
        "for higher-is-better the best sample is the highest"
    );

    // The dashboard charts them in their units.
    let output = benchgate(d, &["dashboard", "--out", "site"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let page = walk(&d.join("site"))
        .into_iter()
        .find(|p| {
            p.to_string_lossy().ends_with(".html") && {
                let text = std::fs::read_to_string(p).unwrap();
                text.contains("<h1>mixnet/rr/connections</h1>")
            }
        })
        .expect("a page for the connection rate");
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("value (conn/s)"), "the axis is in conn/s");
    assert!(html.contains(" conn/s</td>"), "the runs table is in conn/s");
    assert!(
        !html.contains(" µs</td>"),
        "no times on a custom metric's page"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn custom_metrics_travel_to_the_service_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = ingest(d, &metrics(40.0, 10_000.0, 182.0, 5_000.0, 1), BASE, 1);
    let db = d.join("service.db");
    let output = benchgate(
        d,
        &[
            "token",
            "create",
            "--repo",
            REPO,
            "--db",
            db.to_str().unwrap(),
        ],
    );
    let token = stdout(&output).trim().to_owned();
    let server = Server::start(&db, &[], None);
    let url = format!("http://{}", server.address);
    let output = benchgate(d, &["upload", &run, "--collector", &url, "--token", &token]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let id = stdout(&output).trim().to_owned();
    let (status, document) = server.get(&format!("/api/v1/repos/{REPO}/runs/{id}"));
    assert_eq!(status, 200);
    let rss = document["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "server/rss")
        .unwrap();
    assert_eq!(rss["metric"], json!({"unit": "MiB", "direction": "lower"}));
    assert_eq!(rss["median"]["point"], 182.0 * 1.002);

    // A document with a bad direction is refused naming the field.
    let mut bad = document.clone();
    bad.as_object_mut().unwrap().remove("id");
    bad["attempt"] = json!(2);
    bad["measurements"][0]["metric"] = json!({"unit": "ms", "direction": "sideways"});
    let (status, body) = server.upload(&token, &bad);
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["field"], "measurements[0].metric.direction");
}

#[test]
fn custom_metrics_sit_beside_criterion_output_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("load.json");
    std::fs::write(
        &file,
        json!({"handshake": {"latency": {"value": 41_000_000.0}}}).to_string(),
    )
    .unwrap();
    let tree = corpus("dicethedev__MerkleForge/target/criterion");
    let ingest_both = |commit: &str| {
        benchgate(
            d,
            &[
                "ingest",
                tree.to_str().unwrap(),
                "--metrics",
                file.to_str().unwrap(),
                "--repo",
                REPO,
                "--commit",
                commit,
            ],
        )
    };
    let output = ingest_both(BASE);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = stdout(&output).trim().to_owned();
    let shown = json(&benchgate(d, &["show", &run, "--format", "json"]));
    let text = shown.to_string();
    assert!(text.contains("handshake/latency"), "{text}");
    assert!(text.contains("hash_throughput/SHA-256"), "Criterion's too");
    let handshake = shown["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "handshake/latency")
        .unwrap();
    assert_eq!(
        handshake["metric"],
        json!({"unit": "ns", "direction": "lower"})
    );
    let table = stdout(&benchgate(d, &["show", &run]));
    let row = table
        .lines()
        .find(|l| l.starts_with("handshake/latency"))
        .unwrap();
    assert!(
        row.contains("41.00 ms"),
        "Bencher's latency in ns reads as a time: {row}"
    );

    // The same id twice is refused.
    std::fs::write(
        &file,
        json!({"hash_throughput/SHA-256": {"1024": {"value": 1.0, "unit": "ms", "direction": "lower"}}})
            .to_string(),
    )
    .unwrap();
    let output = ingest_both(HEAD);
    assert_refused(
        &output,
        &[
            "load.json",
            "\"hash_throughput/SHA-256/1024\"",
            "measured twice",
        ],
    );
}

#[test]
fn bad_metrics_files_are_refused_naming_the_field_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (document, needles) in [
        (
            json!({"load": {"rss": {"value": 1.0, "unit": "MiB"}}}),
            vec!["bad.json", "`\"load\".\"rss\".direction`", "is missing"],
        ),
        (
            json!({"load": {"latency": {"samples": [1.0, -2.0]}}}),
            vec!["`\"load\".\"latency\".samples[1]`", "must not be negative"],
        ),
        (
            json!({"load": {"p95": {"value": 3.0, "unit": "ms", "direction": "lower", "p": 1}}}),
            vec!["`\"load\".\"p95\".p`", "not a field"],
        ),
    ] {
        std::fs::write(d.join("bad.json"), document.to_string()).unwrap();
        let output = benchgate(
            d,
            &[
                "ingest",
                "--metrics",
                "bad.json",
                "--repo",
                REPO,
                "--commit",
                BASE,
            ],
        );
        assert_refused(&output, &needles);
    }
    std::fs::write(d.join("bad.json"), "{\"load\": ").unwrap();
    let output = benchgate(
        d,
        &[
            "ingest",
            "--metrics",
            "bad.json",
            "--repo",
            REPO,
            "--commit",
            BASE,
        ],
    );
    assert_refused(&output, &["bad.json", "EOF"]);
    assert!(
        !d.join(".benchgate/benchgate.db").exists(),
        "nothing was stored, not even an empty store"
    );
}
