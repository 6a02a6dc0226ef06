//! Budgets end to end on real Criterion output: an acceptance checklist of the kind projects
//! keep by hand (absolute throughput per payload size, a latency bound, a cross-benchmark
//! tail-latency parity rule), its verdicts with their intervals, the exit code, and bad budgets.

use crate::support::*;
use serde_json::Value;

const TREE: &str = "dicethedev__MerkleForge/target/criterion";

const CHECKLIST: &str = r#"
# SHA-256 ≥ 1.5 GiB/s on every payload size.
[[budget]]
benchmark = "hash_throughput/SHA-256/*"
statistic = "throughput"
bound = ">= 1.5 GiB/s"

# BLAKE3 ≥ 2 GiB/s on 1 KiB: it is not (about 0.94 GiB/s).
[[budget]]
benchmark = "hash_throughput/BLAKE3/1024"
statistic = "throughput"
bound = ">= 2 GiB/s"

# A node hash under 150 ns.
[[budget]]
benchmark = "node_hash/SHA-256"
bound = "< 150 ns"

# A bound that sits inside the median's own interval: the run cannot tell.
[[budget]]
benchmark = "leaf_hash/BLAKE3/128"
bound = "< 174.5 ns"

# Tail-latency parity: SHA-256's p95 within 60% of BLAKE3's on 64-byte leaves.
[[budget]]
benchmark = "leaf_hash/SHA-256/64"
statistic = "p95"
bound = 'within 60% of "leaf_hash/BLAKE3/64"'

# And a parity rule naming a benchmark that does not exist.
[[budget]]
benchmark = "node_hash/BLAKE3"
bound = '<= 1.1 x "node_hash/Poseidon"'
"#;

fn compare(dir: &std::path::Path, config: &str) -> (Option<i32>, Value, String) {
    std::fs::write(dir.join("benchgate.toml"), config).unwrap();
    let tree = corpus(TREE);
    let tree = tree.to_str().unwrap();
    let output = benchgate(
        dir,
        &[
            "compare",
            "--base",
            tree,
            "--head",
            tree,
            "--base",
            tree,
            "--head",
            tree,
            "--format",
            "json",
            "--out-md",
            "perf-summary.md",
        ],
    );
    let summary = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    let markdown = std::fs::read_to_string(dir.join("perf-summary.md")).unwrap_or_default();
    (output.status.code(), summary, markdown + &stderr(&output))
}

fn verdicts(summary: &Value) -> Vec<(String, String)> {
    summary["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["benchmark"].as_str().unwrap().to_owned(),
                b["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn an_acceptance_checklist_is_judged_with_its_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let (code, summary, markdown) = compare(dir.path(), CHECKLIST);
    assert_eq!(
        summary["verdict"], "pass",
        "no regression: base and head are the same"
    );
    assert_eq!(code, Some(1), "a missed budget fails the gate\n{markdown}");
    let strings = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(
        verdicts(&summary),
        strings(&[
            ("hash_throughput/SHA-256/1024", "met"),
            ("hash_throughput/SHA-256/1048576", "met"),
            ("hash_throughput/SHA-256/16384", "met"),
            ("hash_throughput/SHA-256/65536", "met"),
            ("hash_throughput/BLAKE3/1024", "missed"),
            ("node_hash/SHA-256", "met"),
            ("leaf_hash/BLAKE3/128", "unclear"),
            ("leaf_hash/SHA-256/64", "met"),
            ("node_hash/BLAKE3", "unclear"),
        ])
    );
    let budgets = summary["budgets"].as_array().unwrap();
    // Throughput in bytes per second, from the declared 1 KiB and the median time.
    let blake = &budgets[4];
    assert_eq!(blake["unit"], "B/s");
    let value = blake["value"].as_f64().unwrap();
    assert!((value / (1024.0 * 1024.0) - 958.7).abs() < 1.0, "{value}");
    let [low, high] = [
        blake["interval"][0].as_f64().unwrap(),
        blake["interval"][1].as_f64().unwrap(),
    ];
    assert!(low < value && value < high && high < 2.0 * 1024f64.powi(3));
    // The unclear one: the bound is inside the interval.
    let unclear = &budgets[6];
    let bound = 174.5;
    assert!(
        unclear["interval"][0].as_f64().unwrap() < bound
            && bound < unclear["interval"][1].as_f64().unwrap()
    );
    assert_eq!(
        budgets[8]["note"],
        "no benchmark \"node_hash/Poseidon\" in this run"
    );
    assert_eq!(budgets[7]["unit"], "x");
    // The comment's checklist.
    assert!(
        markdown.starts_with(
            "## ❌ benchgate pass: no regression in 30 benchmarks; 1 of 9 budgets missed"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("### Budgets (6 met, 1 missed, 2 unclear)"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| ❌ | `hash_throughput/BLAKE3/1024` | throughput >= 2 GiB/s | 958."),
        "{markdown}"
    );

    // Marked warn, the miss no longer fails the gate.
    let warned = CHECKLIST.replace(
        "bound = \">= 2 GiB/s\"",
        "bound = \">= 2 GiB/s\"\nwarn = true",
    );
    let (code, summary, markdown) = compare(dir.path(), &warned);
    assert_eq!(code, Some(0), "{markdown}");
    assert_eq!(summary["budgets"][4]["warn"], true);
    assert!(
        markdown.contains("| ⚠️ | `hash_throughput/BLAKE3/1024` | throughput >= 2 GiB/s (warn) |"),
        "{markdown}"
    );
}

#[test]
fn bad_budgets_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    for (config, needles) in [
        (
            "[[budget]]\nbenchmark = \"a\"\nbound = \">= 2 GiB/sec\"\n",
            &[
                "benchgate.toml",
                "`budget[0].bound`",
                "unknown unit \"GiB/sec\"",
            ][..],
        ),
        (
            "[[budget]]\nbenchmark = \"a\"\nbound = \"< 5 ms\"\n[[budget]]\nbenchmark = \"b\"\nstatistic = \"p50\"\nbound = \"< 5 ms\"\n",
            &[
                "`budget[1].statistic`",
                "expected median, mean, p95, p99 or throughput",
            ][..],
        ),
        (
            "[[budget]]\nbenchmark = \"a\"\nbound = \"within 10% of tcp\"\n",
            &["`budget[0].bound`", "double quotes"][..],
        ),
        (
            "[[budget]]\nbenchmark = \"a\"\nbound = \"< 5 ms\"\nlimit = 3\n",
            &["`budget[0].limit`", "unknown field `limit`"][..],
        ),
    ] {
        let (code, _, output) = compare(dir.path(), config);
        assert_eq!(code, Some(2), "{output}");
        for needle in needles {
            assert!(output.contains(needle), "{needle:?} not in {output}");
        }
    }
}
