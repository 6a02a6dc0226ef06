//! Snapshots of perf-summary.md, perf-summary.json and the terminal text, on a real corpus pair
//! (deduplicate's two snapshots) and on a same-job A/B comparison with a regression.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::collections::HashMap;
use std::path::Path;

use benchgate_collector::criterion::read_tree;
mod common;

use benchgate_collector::Throughput;
use benchgate_gate::Policy;
use benchgate_gate::decision::{Decision, Input, Mode, Overall, evaluate};
use benchgate_gate::report::{Context, render_markdown, render_text, summary_json};
use common::measurement;

fn corpus(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative)
}

fn deduplicate_pair() -> (Decision, Context) {
    let base = vec![
        read_tree(
            &corpus("garypen__deduplicate/@64cc24b82a/target/criterion"),
            "new",
        )
        .unwrap(),
    ];
    let head = vec![read_tree(&corpus("garypen__deduplicate/target/criterion"), "new").unwrap()];
    let history = HashMap::new();
    let decision = evaluate(
        &Input {
            mode: Mode::StoredBaseline,
            base_rounds: &base,
            head_rounds: &head,
            history: &history,
        },
        &Policy::default(),
    );
    let context = Context {
        base: "64cc24b82a29".into(),
        head: "37d4f0b979e6".into(),
        base_commit: Some("64cc24b82a29348523623673346add76cba98245".into()),
        head_commit: Some("37d4f0b979e679bf39e00d6436aab992f1d5f4de".into()),
        fingerprint: None,
    };
    (decision, context)
}

/// Three rounds; `parse/json` is 30% slower, `hash/sha` 12% lower throughput, `io/read` 40%
/// faster, `net/rtt` too noisy, the rest unchanged.
fn ab_regression() -> (Decision, Context) {
    let wobble = [1.0, 1.012, 0.991];
    let noisy = [0.7, 1.45, 1.1];
    let mut base = Vec::new();
    let mut head = Vec::new();
    for k in 0..3 {
        let mut b = Vec::new();
        let mut h = Vec::new();
        for i in 0..6 {
            let id = format!("steady/{i}");
            b.push(measurement(&id, 1000.0 * wobble[k], 0.005, None));
            h.push(measurement(&id, 1000.0 * wobble[(k + i) % 3], 0.005, None));
        }
        b.push(measurement("parse/json", 5000.0 * wobble[k], 0.005, None));
        h.push(measurement(
            "parse/json",
            6500.0 * wobble[(k + 1) % 3],
            0.005,
            None,
        ));
        b.push(measurement(
            "hash/sha",
            2000.0 * wobble[k],
            0.005,
            Some(Throughput::Bytes(4096)),
        ));
        h.push(measurement(
            "hash/sha",
            2000.0 / 0.88 * wobble[(k + 2) % 3],
            0.005,
            Some(Throughput::Bytes(4096)),
        ));
        b.push(measurement("io/read", 90_000.0 * wobble[k], 0.005, None));
        h.push(measurement("io/read", 54_000.0 * wobble[k], 0.005, None));
        b.push(measurement("net/rtt", 1e6, 0.005, None));
        h.push(measurement("net/rtt", 1e6 * noisy[k], 0.005, None));
        base.push(b);
        head.push(h);
    }
    let history = HashMap::new();
    let decision = evaluate(
        &Input {
            mode: Mode::SameJobAb,
            base_rounds: &base,
            head_rounds: &head,
            history: &history,
        },
        &Policy::default(),
    );
    let context = Context {
        base: "1111111".into(),
        head: "2222222".into(),
        base_commit: Some("1111111111111111111111111111111111111111".into()),
        head_commit: Some("2222222222222222222222222222222222222222".into()),
        fingerprint: Some(
            "dd48e16126ad9cffe24dce0cd48db47104f2ae1327c87c9a4a94f972c3094eb0".into(),
        ),
    };
    (decision, context)
}

#[test]
fn a_real_pair_of_snapshots_reports_improvements_and_new_benchmarks() {
    let (decision, context) = deduplicate_pair();
    assert_eq!(decision.verdict, Overall::Inconclusive);
    insta::assert_snapshot!(
        "deduplicate_md",
        render_markdown(&decision, &context, &Policy::default())
    );
    insta::assert_json_snapshot!(
        "deduplicate_json",
        summary_json(&decision, &context, &Policy::default())
    );
}

#[test]
fn an_ab_regression_leads_the_report() {
    let (decision, context) = ab_regression();
    assert_eq!(decision.verdict, Overall::Regressed);
    let markdown = render_markdown(&decision, &context, &Policy::default());
    assert!(
        markdown.starts_with("## ❌ benchgate regressed: 2 of 10 benchmarks"),
        "{markdown}"
    );
    insta::assert_snapshot!("ab_regression_md", markdown);
    insta::assert_json_snapshot!(
        "ab_regression_json",
        summary_json(&decision, &context, &Policy::default())
    );
    insta::assert_snapshot!(
        "ab_regression_text",
        render_text(&decision, &context, &Policy::default(), false)
    );
}

#[test]
fn terminal_colour_only_when_asked() {
    let (decision, context) = ab_regression();
    assert!(
        render_text(&decision, &context, &Policy::default(), true).contains("\x1b[31mregressed")
    );
    assert!(!render_text(&decision, &context, &Policy::default(), false).contains('\x1b'));
}
