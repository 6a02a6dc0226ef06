//! `benchgate export --format csv|jsonl`: one row per measurement, filtered by repository and
//! date.

use crate::support::*;
use serde_json::Value;

const TREE: &str = "dicethedev__MerkleForge/target/criterion";

/// Splits CSV text into records of fields (RFC 4180 quoting).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let (mut record, mut field, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => record.push(std::mem::take(&mut field)),
            ('\n', false) => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (c, _) => field.push(c),
        }
    }
    records
}

#[test]
fn every_measurement_is_a_row_with_its_run_machine_and_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let tree = corpus(TREE);
    let sha = "c".repeat(40);
    let output = benchgate(
        dir.path(),
        &[
            "ingest",
            tree.to_str().unwrap(),
            "--repo",
            "acme/merkle",
            "--commit",
            &sha,
            "--branch",
            "main",
            "--kind",
            "push",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let data = corpus("rune-rs__rune/dev/bench/data.js");
    let output = benchgate(
        dir.path(),
        &[
            "import-history",
            data.to_str().unwrap(),
            "--repo",
            "rune-rs/rune",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let output = benchgate(
        dir.path(),
        &["export", "--format", "csv", "--repo", "acme/merkle"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let records = parse_csv(&stdout(&output));
    let header = &records[0];
    assert_eq!(header[0], "run");
    assert_eq!(header.len(), 30);
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows = &records[1..];
    assert_eq!(rows.len(), 30, "one row per measurement of the one run");
    assert!(
        rows.iter()
            .all(|r| r.len() == 30 && r[column("repository")] == "acme/merkle")
    );
    assert!(
        rows.iter()
            .all(|r| r[column("commit")] == sha && r[column("branch")] == "main")
    );
    assert!(
        rows.iter()
            .all(|r| r[column("rustc_version")].starts_with("rustc "))
    );

    // The values are the stored ones; throughput per second follows from them.
    let shown: Value =
        serde_json::from_slice(&benchgate(dir.path(), &["show", "1", "--format", "json"]).stdout)
            .unwrap();
    for m in shown["measurements"].as_array().unwrap() {
        let row = rows
            .iter()
            .find(|r| r[column("benchmark")] == m["id"].as_str().unwrap())
            .unwrap();
        assert_eq!(
            (row[column("unit")].as_str(), row[column("better")].as_str()),
            ("ns", "lower"),
            "Criterion's measurements are ns per iteration"
        );
        let median: f64 = row[column("median")].parse().unwrap();
        assert_eq!(median, m["median"]["point"].as_f64().unwrap());
        assert_eq!(
            row[column("throughput_kind")],
            m["throughput"]["kind"].as_str().unwrap()
        );
        let amount = m["throughput"]["amount"].as_f64().unwrap();
        let per_second: f64 = row[column("median_throughput_per_s")].parse().unwrap();
        assert!((per_second - amount / (median * 1e-9)).abs() <= per_second * 1e-12);
    }

    // JSON Lines: the same rows, keyed by the CSV's columns, numbers as numbers.
    let output = benchgate(
        dir.path(),
        &["export", "--format", "jsonl", "--repo", "acme/merkle"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let objects: Vec<Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects.len(), rows.len());
    for (object, row) in objects.iter().zip(rows) {
        let keys: Vec<&str> = object
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, header.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(object["benchmark"], row[column("benchmark")].as_str());
        let median: f64 = row[column("median")].parse().unwrap();
        assert_eq!(object["median"].as_f64(), Some(median));
        assert_eq!(
            object["n_samples"].as_u64(),
            row[column("n_samples")].parse().ok()
        );
        assert_eq!(object["pr"], Value::Null, "an empty cell is null");
        assert_eq!(object["branch"], "main");
    }

    // --since keeps the newer runs only: rune's entries of 2026-07 and later.
    let output = benchgate(
        dir.path(),
        &["export", "--repo", "rune-rs/rune", "--since", "2026-07-01"],
    );
    let records = parse_csv(&stdout(&output));
    let commits: std::collections::BTreeSet<&str> =
        records[1..].iter().map(|r| r[2].as_str()).collect();
    assert_eq!(commits.len(), 3, "{commits:?}");
    assert!(records[1..].iter().all(|r| r[7].as_str() >= "2026-07-01"));
    // An imported history's machine is known by its suite: what its profile does not know is
    // empty, not 0 cores, 0 GiB or "unknown".
    for row in &records[1..] {
        assert!(
            row[column("cpu_brand")].starts_with("imported suite "),
            "{row:?}"
        );
        for unknown in [
            "logical_cores",
            "memory_gib",
            "os",
            "rustc_version",
            "host_triple",
        ] {
            assert_eq!(row[column(unknown)], "", "{unknown}: {row:?}");
        }
    }
    let output = benchgate(
        dir.path(),
        &[
            "export",
            "--format",
            "jsonl",
            "--repo",
            "rune-rs/rune",
            "--since",
            "2026-07-01",
        ],
    );
    let first: Value = serde_json::from_str(stdout(&output).lines().next().unwrap()).unwrap();
    assert_eq!(
        (&first["logical_cores"], &first["os"]),
        (&Value::Null, &Value::Null)
    );
    assert_refused(
        &benchgate(dir.path(), &["export", "--since", "yesterday"]),
        &["--since \"yesterday\"", "expected a date"],
    );
}
