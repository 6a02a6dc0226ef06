//! Snapshots of perf-summary.md, perf-summary.json and the terminal text, on a real corpus pair
//! (deduplicate's two snapshots) and on a same-job A/B comparison with a regression.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::collections::HashMap;
use std::path::Path;

use benchgate_collector::criterion::read_tree;
mod common;

use benchgate_collector::Throughput;
use benchgate_gate::Policy;
use benchgate_gate::decision::{Decision, Input, Mode, Overall, Verdict, evaluate, evaluate_with};
use benchgate_gate::github_text::{
    CHECK_TEXT_LIMIT, COMMENT_LIMIT, Conclusion, OverrideNote, check_output, comment_body,
    conclusion, status_description,
};
use benchgate_gate::report::{
    BuiltExecutable, Context, Cost, CountProfile, Incomplete, Links, ProfileRow, SideBuild,
    headline, read_summary, render_markdown, render_markdown_linked, render_text, summary,
    summary_json,
};
use benchgate_gate::sequential::Plan;
use common::{decide_ab, measurement};

fn corpus(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/corpus")
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
        cost: None,
        profiles: Vec::new(),
        base: "64cc24b82a29".into(),
        head: "37d4f0b979e6".into(),
        base_commit: Some("64cc24b82a29348523623673346add76cba98245".into()),
        head_commit: Some("37d4f0b979e679bf39e00d6436aab992f1d5f4de".into()),
        fingerprint: None,
        builds: Vec::new(),
        source: None,
        incomplete: None,
        notes: Vec::new(),
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
    let decision = decide_ab(&base, &head);
    let context = Context {
        cost: None,
        profiles: Vec::new(),
        base: "1111111".into(),
        head: "2222222".into(),
        base_commit: Some("1111111111111111111111111111111111111111".into()),
        head_commit: Some("2222222222222222222222222222222222222222".into()),
        fingerprint: Some(
            "dd48e16126ad9cffe24dce0cd48db47104f2ae1327c87c9a4a94f972c3094eb0".into(),
        ),
        builds: Vec::new(),
        source: None,
        incomplete: None,
        notes: Vec::new(),
    };
    (decision, context)
}

/// Three rounds of six steady benchmarks, `io/read` 40% and `alloc/vec` 25% faster, and (with
/// `noisy`) `net/rtt`, whose rounds swing by half.
fn ab_improvements(noisy: bool, improved: usize) -> Decision {
    let wobble = [1.0, 1.012, 0.991];
    let swing = [0.7, 1.45, 1.1];
    let (mut base, mut head) = (Vec::new(), Vec::new());
    for k in 0..3 {
        let (mut b, mut h) = (Vec::new(), Vec::new());
        for i in 0..6 {
            let id = format!("steady/{i}");
            b.push(measurement(&id, 1000.0 * wobble[k], 0.005, None));
            h.push(measurement(&id, 1000.0 * wobble[(k + i) % 3], 0.005, None));
        }
        for (id, ns, faster) in [("io/read", 90_000.0, 0.6), ("alloc/vec", 400.0, 0.75)]
            .into_iter()
            .take(improved)
        {
            b.push(measurement(id, ns * wobble[k], 0.005, None));
            h.push(measurement(
                id,
                ns * faster * wobble[(k + 1) % 3],
                0.005,
                None,
            ));
        }
        if noisy {
            b.push(measurement("net/rtt", 1e6, 0.005, None));
            h.push(measurement("net/rtt", 1e6 * swing[k], 0.005, None));
        }
        base.push(b);
        head.push(h);
    }
    decide_ab(&base, &head)
}

#[test]
fn a_headline_without_a_regression_names_what_improved_and_counts_as_its_sections_do() {
    // On itertools (a real crate), an A/B whose head made three benchmarks 69–77% faster
    // headed its comment "1 of 8 benchmarks too noisy to decide; none confirmed regressed",
    // the improvements only further down.
    let decision = ab_improvements(true, 2);
    assert_eq!(decision.verdict, Overall::Inconclusive);
    assert_eq!(decision.count(Verdict::Improved), 2);
    assert_eq!(
        headline(&decision),
        "inconclusive: 1 of 9 benchmarks too noisy to gate; none confirmed regressed; 2 improved, up to 40.0% faster"
    );
    let md = render_markdown(&decision, &Context::default(), &Policy::default());
    assert!(md.contains("### Too noisy to gate (1)"), "{md}");
    assert!(md.contains("### Improvements (2)"), "{md}");
    // One more left undecided but not too noisy (a budget spent, say): two sections, two
    // counts.
    let mut mixed = decision.clone();
    let steady = mixed
        .benchmarks
        .iter_mut()
        .find(|b| b.id == "steady/0")
        .unwrap();
    steady.verdict = Verdict::Inconclusive;
    steady.too_noisy = None;
    assert_eq!(
        headline(&mixed),
        "inconclusive: 1 of 9 benchmarks undecided, 1 too noisy to gate; none confirmed regressed; 2 improved, up to 40.0% faster"
    );
    let md = render_markdown(&mixed, &Context::default(), &Policy::default());
    assert!(md.contains("### Inconclusive (1)"), "{md}");
    assert!(md.contains("### Too noisy to gate (1)"), "{md}");

    let decision = ab_improvements(false, 2);
    assert_eq!(decision.verdict, Overall::Pass);
    assert_eq!(
        headline(&decision),
        "pass: no regression in 8 benchmarks; 2 improved, up to 40.0% faster"
    );
    let decision = ab_improvements(false, 1);
    assert_eq!(
        headline(&decision),
        "pass: no regression in 7 benchmarks; 1 improved: io/read 40.0% faster"
    );
    let decision = ab_improvements(false, 0);
    assert_eq!(headline(&decision), "pass: no regression in 6 benchmarks");
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
fn a_linked_report_links_commits_the_dashboard_and_each_regressions_trend() {
    let (decision, context) = ab_regression();
    let links = Links {
        repository: Some("https://github.com/acme/rocket".into()),
        dashboard: Some("https://acme.github.io/rocket/".into()),
        repository_name: Some("acme/rocket".into()),
        trend_images: true,
    };
    let markdown = render_markdown_linked(&decision, &context, &Policy::default(), &links);
    insta::assert_snapshot!("ab_regression_linked_md", markdown);
    let site = "https://acme.github.io/rocket/acme/rocket/dd48e16126ad";
    assert!(
        markdown.contains(&format!(
            "Head [`2222222`](https://github.com/acme/rocket/commit/{}) against base [`1111111`](https://github.com/acme/rocket/commit/{})",
            "2".repeat(40),
            "1".repeat(40)
        )),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!("([dashboard]({site}/index.html))")),
        "{markdown}"
    );
    let slug = benchgate_gate::report::links::slug("parse/json");
    assert!(
        markdown.contains(&format!(
            "| `parse/json` ([trend]({site}/b/{slug}.html)) | 5.005 µs | 6.506 µs | 30.0% slower |"
        )),
        "{markdown}"
    );
    // The two regressions' charts, each linking to its page; no chart for the others.
    assert_eq!(markdown.matches("[![trend of ").count(), 2, "{markdown}");
    assert!(
        markdown.contains(&format!(
            "[![trend of parse/json]({site}/b/{slug}.svg)]({site}/b/{slug}.html)"
        )),
        "{markdown}"
    );
    // Each benchmark in one table only: the passing ones folded, nothing repeated.
    for id in ["parse/json", "hash/sha", "net/rtt", "steady/0"] {
        assert_eq!(
            markdown.matches(&format!("| `{id}` ")).count(),
            1,
            "{id}: {markdown}"
        );
    }
    // Throughput in its unit; the override hint because the gate fails.
    assert!(
        markdown.contains("| 1.906 GiB/s | 1.677 GiB/s | 12.0% slower | 10.0% slower |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("comments `/benchgate override <reason>`"),
        "{markdown}"
    );
    // A pass has no hint, and without links nothing is linked.
    let (pass, pass_context) = ab_pass();
    let plain = render_markdown(&pass, &pass_context, &Policy::default());
    assert!(!plain.contains("/benchgate override"), "{plain}");
    assert!(!plain.contains("](http"), "{plain}");
}

#[test]
fn terminal_colour_only_when_asked() {
    let (decision, context) = ab_regression();
    assert!(
        render_text(&decision, &context, &Policy::default(), true).contains("\x1b[31mregressed")
    );
    assert!(!render_text(&decision, &context, &Policy::default(), false).contains('\x1b'));
}

/// Three rounds of six steady benchmarks: nothing changed.
#[test]
fn a_benchmark_whose_rounds_disagree_wildly_reads_in_factors_not_rows_of_digits() {
    // Two rounds, as unicode-segmentation's `word_bounds/grapheme/hindi` had on a loaded
    // machine (base 759 µs and 758 µs, head 320 µs and 1.2 ms; then wider still): with one degree of freedom the
    // bound and the detectable change were 10^70 times the value.
    let side = |ns: [f64; 2]| -> Vec<Vec<_>> {
        ns.iter()
            .map(|&wild| {
                let mut round: Vec<_> = (0..5)
                    .map(|i| {
                        measurement(&format!("steady/{i}"), 1000.0 * (1 + i) as f64, 0.005, None)
                    })
                    .collect();
                round.push(measurement("wild", wild, 0.005, None));
                round
            })
            .collect()
    };
    for (head, bound) in [
        ([320_000.0, 1_200_000.0], "≤ 154 times slower"),
        ([120_000.0, 4_800_000.0], "none under 1000 times slower"),
    ] {
        let decision = decide_ab(&side([759_000.0, 758_000.0]), &side(head));
        let (_, context) = ab_regression();
        let markdown = render_markdown(&decision, &context, &Policy::default());
        let rows: Vec<&str> = markdown.lines().filter(|l| l.starts_with("| `")).collect();
        let row = rows
            .iter()
            .find(|l| l.starts_with("| `wild` |"))
            .unwrap_or_else(|| panic!("{markdown}"));
        let wild = decision.benchmarks.iter().find(|b| b.id == "wild").unwrap();
        assert!(wild.detectable.unwrap() > 1000.0, "{wild:#?}");
        assert!(
            row.ends_with(&format!("| {bound} | over 1000 times slower | 2 |")),
            "{row}"
        );
        // No row holds a figure of more than four digits before its point.
        for row in &rows {
            let digits = row
                .split(|c: char| !c.is_ascii_digit())
                .map(str::len)
                .max()
                .unwrap();
            assert!(digits <= 4, "{row}");
        }
    }
}

fn ab_pass() -> (Decision, Context) {
    let wobble = [1.0, 1.012, 0.991];
    let rounds = |shift: usize| -> Vec<Vec<_>> {
        (0..3)
            .map(|k| {
                (0..6)
                    .map(|i| {
                        measurement(
                            &format!("steady/{i}"),
                            1000.0 * (1 + i) as f64 * wobble[(k + shift * i) % 3],
                            0.005,
                            None,
                        )
                    })
                    .collect()
            })
            .collect()
    };
    let decision = decide_ab(&rounds(0), &rounds(1));
    let (_, context) = ab_regression();
    (decision, context)
}

fn override_note() -> OverrideNote {
    OverrideNote {
        by: "octo-maintainer".into(),
        reason: "the new parser trades speed for correctness; accepted in #42".into(),
        head_sha: "2222222222222222222222222222222222222222".into(),
    }
}

fn github_texts(
    decision: &Decision,
    context: &Context,
    overriding: Option<&OverrideNote>,
) -> String {
    let markdown = render_markdown(decision, context, &Policy::default());
    let output = check_output(decision, &markdown, overriding);
    format!(
        "conclusion: {}\nstatus: {}\n\n===== check title\n{}\n===== check summary\n{}===== check text\n{}===== comment\n{}",
        conclusion(decision, false, overriding.is_some()).as_str(),
        status_description(decision, overriding),
        output.title,
        output.summary,
        output.text,
        comment_body(&markdown, overriding),
    )
}

#[test]
fn github_texts_for_a_pass_a_regression_an_inconclusive_result_and_an_override() {
    let (pass, context) = ab_pass();
    assert_eq!(pass.verdict, Overall::Pass);
    let texts = github_texts(&pass, &context, None);
    assert!(
        texts.starts_with("conclusion: success\nstatus: Pass: no regression in 6 benchmarks\n")
    );
    insta::assert_snapshot!("github_pass", texts);

    let (regressed, context) = ab_regression();
    let texts = github_texts(&regressed, &context, None);
    assert!(texts.starts_with("conclusion: failure\n"), "{texts}");
    assert!(texts.contains("===== comment\n<!-- benchgate:sticky-comment -->\n## ❌"));
    insta::assert_snapshot!("github_regression", texts);
    assert_eq!(conclusion(&regressed, true, false), Conclusion::Neutral);

    let (inconclusive, context) = deduplicate_pair();
    let texts = github_texts(&inconclusive, &context, None);
    assert!(texts.starts_with("conclusion: neutral\n"), "{texts}");
    insta::assert_snapshot!("github_inconclusive", texts);

    let note = override_note();
    let texts = github_texts(&regressed, &ab_regression().1, Some(&note));
    assert!(texts.starts_with(
        "conclusion: success\nstatus: Overridden by @octo-maintainer: the new parser trades speed for correctness; accepted in #42\n"
    ));
    insta::assert_snapshot!("github_override", texts);
}

#[test]
fn a_status_description_never_exceeds_140_characters() {
    let (regressed, _) = ab_regression();
    let mut note = override_note();
    note.reason = "because ".repeat(40);
    let description = status_description(&regressed, Some(&note));
    assert_eq!(description.chars().count(), 140);
    assert!(description.ends_with('…'));
}

#[test]
fn a_comment_over_githubs_limit_is_cut_at_a_row_with_a_count() {
    let (regressed, context) = ab_regression();
    let mut big = regressed.clone();
    let template = big.benchmarks[0].clone();
    for i in 0..3000 {
        let mut b = template.clone();
        b.id = format!("generated/a_rather_long_benchmark_name_{i:05}");
        big.benchmarks.push(b);
    }
    let markdown = render_markdown(&big, &context, &Policy::default());
    assert!(markdown.chars().count() > COMMENT_LIMIT);
    let body = comment_body(&markdown, None);
    assert!(
        body.len() <= COMMENT_LIMIT,
        "bytes, never more than characters"
    );
    let rows_before = markdown.lines().filter(|l| l.starts_with("| `")).count();
    let rows_after = body.lines().filter(|l| l.starts_with("| `")).count();
    let note = format!(
        "_… {} more rows left out: GitHub shows at most 65536 bytes here.",
        rows_before - rows_after
    );
    assert!(body.contains(&note), "{}", &body[body.len() - 400..]);
    // Every line that is left is whole: each table row ends with its closing bar.
    assert!(
        body.lines()
            .filter(|l| l.starts_with("| "))
            .all(|l| l.ends_with(" |"))
    );
    assert!(body.ends_with("</details>\n"));
}

#[test]
fn a_summary_reads_back_to_the_same_decision_and_report() {
    for (decision, context) in [ab_regression(), deduplicate_pair(), ab_pass()] {
        let text =
            serde_json::to_string(&summary(&decision, &context, &Policy::default())).unwrap();
        let read = read_summary(Path::new("perf-summary.json"), &text).unwrap();
        assert_eq!(read.decision, decision);
        assert_eq!(read.context, context);
        assert_eq!(
            render_markdown(&read.decision, &read.context, &read.policy),
            render_markdown(&decision, &context, &Policy::default())
        );
    }
}

#[test]
fn each_sides_executables_are_named_in_the_report_and_read_back() {
    let (decision, mut context) = ab_regression();
    let side = |side: &str, commit: char, hash: char| SideBuild {
        side: side.to_owned(),
        commit: commit.to_string().repeat(40),
        executables: vec![BuiltExecutable {
            target: "zoo/zoo".to_owned(),
            path: format!("/w/target/benchgate-ab/bin/{side}/zoo-943ade2340d16799"),
            sha256: hash.to_string().repeat(64),
        }],
    };
    context.builds = vec![side("base", '1', 'a'), side("head", '2', 'b')];
    let markdown = render_markdown(&decision, &context, &Policy::default());
    assert!(
        markdown.contains(
            "Each side ran the executables built from its own sources (SHA-256): base `111111111111`: `zoo/zoo` `aaaaaaaaaaaa`; head `222222222222`: `zoo/zoo` `bbbbbbbbbbbb`."
        ),
        "{markdown}"
    );
    let json = summary_json(&decision, &context, &Policy::default());
    assert_eq!(json["builds"][1]["side"], "head");
    assert_eq!(
        json["builds"][1]["executables"][0]["sha256"],
        "b".repeat(64)
    );
    let read = read_summary(Path::new("perf-summary.json"), &json.to_string()).unwrap();
    assert_eq!(read.context.builds, context.builds);
    // Reports without builds keep the schema they had: no `builds` key.
    let (decision, context) = ab_regression();
    assert!(
        summary_json(&decision, &context, &Policy::default())
            .get("builds")
            .is_none()
    );
}

#[test]
fn no_baseline_and_one_run_a_side_are_said_as_they_are() {
    let empty: Vec<Vec<benchgate_collector::Measurement>> = Vec::new();
    let history = HashMap::new();
    let decision = evaluate(
        &Input {
            mode: Mode::StoredBaseline,
            base_rounds: &empty,
            head_rounds: &empty,
            history: &history,
        },
        &Policy::default(),
    );
    assert_eq!(decision.verdict, Overall::NoBaseline);
    let context = Context {
        cost: None,
        profiles: Vec::new(),
        base: "64cc24b82a29".into(),
        head: "37d4f0b979e6 (run 3)".into(),
        fingerprint: Some("dd48e16126ad9cffe24dce0cd48db47104f2ae13".into()),
        ..Context::default()
    };
    let markdown = render_markdown(&decision, &context, &Policy::default());
    assert!(
        markdown.contains(
            "Head `37d4f0b979e6 (run 3)` has no comparable baseline: no stored run of `64cc24b82a29` or its nearest ancestors on fingerprint `dd48e16126ad`. Nothing was compared"
        ),
        "{markdown}"
    );
    assert!(!markdown.contains("Holm"), "{markdown}");

    // Two directories, one run a side: no stored baseline was involved.
    let (decision, mut context) = deduplicate_pair();
    context.source = Some("one run a side".into());
    let markdown = render_markdown(&decision, &context, &Policy::default());
    assert!(
        markdown.contains("against base `64cc24b82a29` (one run a side)"),
        "{markdown}"
    );
    assert!(!markdown.contains("stored baseline"), "{markdown}");
    let json = summary_json(&decision, &context, &Policy::default());
    assert_eq!(json["source"], "one run a side");
    let read = read_summary(Path::new("perf-summary.json"), &json.to_string()).unwrap();
    assert_eq!(read.context, context);
}

#[test]
fn what_an_ab_job_spent_is_said_in_the_fold_and_reads_back() {
    let (decision, mut context) = ab_regression();
    context.cost = Some(Cost {
        bench_seconds: 95.4,
        build_seconds: 451.0,
    });
    let markdown = render_markdown(&decision, &context, &Policy::default());
    assert!(
        markdown
            .contains("Decided in 3 rounds, 95 s of benchmarking (7.5 min building both sides)."),
        "{markdown}"
    );
    let json = summary_json(&decision, &context, &Policy::default());
    assert_eq!(json["bench_seconds"], 95.4);
    assert_eq!(json["build_seconds"], 451.0);
    let read = read_summary(Path::new("perf-summary.json"), &json.to_string()).unwrap();
    assert_eq!(read.context, context);
    // Without a cost (a stored baseline), neither field is written, and the fold says nothing.
    let (decision, context) = ab_pass();
    let json = summary_json(&decision, &context, &Policy::default());
    assert!(json.get("bench_seconds").is_none() && json.get("build_seconds").is_none());
    assert!(!render_markdown(&decision, &context, &Policy::default()).contains("of benchmarking"));
    // A cost is whole and plausible, or refused naming the field.
    let (decision, mut context) = ab_regression();
    context.cost = Some(Cost {
        bench_seconds: 1.0,
        build_seconds: 2.0,
    });
    let good = summary_json(&decision, &context, &Policy::default());
    let refuse = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value = good.clone();
        edit(&mut value);
        read_summary(Path::new("perf-summary.json"), &value.to_string())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refuse(&|v| v["bench_seconds"] = (-3.0).into()),
        "perf-summary.json: `bench_seconds`: is -3; seconds are finite and not negative"
    );
    assert_eq!(
        refuse(&|v| {
            v.as_object_mut().unwrap().remove("build_seconds");
        }),
        "perf-summary.json: `bench_seconds`: comes with build_seconds, or neither is given"
    );
}

#[test]
fn a_bad_summary_is_refused_naming_the_field() {
    let (decision, context) = ab_regression();
    let good = summary_json(&decision, &context, &Policy::default());
    let refuse = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value = good.clone();
        edit(&mut value);
        read_summary(Path::new("artifact/perf-summary.json"), &value.to_string())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refuse(&|v| v["schema_version"] = 2.into()),
        "artifact/perf-summary.json: `schema_version`: 2 is not supported; this benchgate reads schema 1"
    );
    let unknown = refuse(&|v| v["benchmarks"][1]["colour"] = "red".into());
    assert!(
        unknown.starts_with("artifact/perf-summary.json: `benchmarks[1]"),
        "{unknown}"
    );
    assert!(unknown.contains("unknown field `colour`"), "{unknown}");
    let verdict = refuse(&|v| v["benchmarks"][0]["verdict"] = "fine".into());
    assert!(
        verdict.starts_with(
            "artifact/perf-summary.json: `benchmarks[0].verdict`: unknown variant `fine`"
        ),
        "{verdict}"
    );
    assert_eq!(
        refuse(&|v| v["benchmarks"][2]["id"] = "a\u{7}b".into()),
        "artifact/perf-summary.json: `benchmarks[2].id`: must be 1 to 1024 characters without control characters"
    );
    assert_eq!(
        refuse(&|v| v["benchmarks"][0]["limit"] = 0.5.into()),
        "artifact/perf-summary.json: `benchmarks[0].limit`: must be a time ratio above 1"
    );
    assert_eq!(
        refuse(&|v| v["benchmarks"][0]["set_aside"] = 3.into()),
        "artifact/perf-summary.json: `benchmarks[0].set_aside`: 3 rounds set aside of 3: a verdict keeps at least one"
    );
    assert_eq!(
        refuse(&|v| v["confidence"] = 1.5.into()),
        "artifact/perf-summary.json: `confidence`: must lie in (0, 1)"
    );
}

#[test]
fn a_job_that_stopped_early_says_so_and_reads_back_whole() {
    let (decision, mut context) = ab_regression();
    context.incomplete = Some(Incomplete {
        round: 3,
        side: "head".into(),
        failure: "`zoo/zoo (bin/head/zoo-1)` failed with exit status: 101".into(),
        stderr_tail: vec!["thread 'main' panicked at benches/zoo.rs:9:5: gone".into()],
    });
    context.notes =
        vec!["Dependencies: each side built with its own committed `Cargo.lock`.".into()];
    let markdown = render_markdown(&decision, &context, &Policy::default());
    let first = markdown.lines().nth(2).unwrap();
    assert_eq!(
        first,
        "⚠️ **Incomplete: round 3 failed on the head side (`zoo/zoo (bin/head/zoo-1)` failed with exit status: 101); the verdicts rest on the 2 complete rounds before it.**"
    );
    assert!(
        markdown.contains("```text\nthread 'main' panicked at benches/zoo.rs:9:5: gone\n```"),
        "{markdown}"
    );
    // The check run's summary (the report up to its first section) carries it too.
    let check = benchgate_gate::github_text::check_output(&decision, &markdown, None);
    assert!(
        check.summary.contains("**Incomplete: round 3"),
        "{}",
        check.summary
    );
    let json = summary_json(&decision, &context, &Policy::default());
    let read = read_summary(Path::new("perf-summary.json"), &json.to_string()).unwrap();
    assert_eq!(read.context, context);

    // A fork's artifact cannot smuggle control characters or a made-up round into the comment.
    let refuse = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value = json.clone();
        edit(&mut value);
        read_summary(Path::new("artifact/perf-summary.json"), &value.to_string())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refuse(&|v| v["notes"][0] = "a\u{1b}[2Jb".into()),
        "artifact/perf-summary.json: `notes[0]`: must be at most 1024 characters without control characters"
    );
    assert!(
        refuse(&|v| v["incomplete"]["stderr_tail"][0] = "x\ry".into())
            .starts_with("artifact/perf-summary.json: `incomplete`: at most 20 lines")
    );
    assert_eq!(
        refuse(&|v| v["incomplete"]["round"] = 1.into()),
        "artifact/perf-summary.json: `incomplete.round`: a job that stopped early completed at least its first round"
    );
}

/// Real gungraun counts (the fixture of `aead/seal/chacha20_poly1305_16_kib`) beside three noisy
/// rounds of its wall-time twin; the head does twice the work per seal.
fn verdict_of(decision: &Decision, id: &str) -> Verdict {
    decision
        .benchmarks
        .iter()
        .find(|b| b.id == id)
        .unwrap()
        .verdict
}

fn counts_beside_time(policy: &Policy) -> Decision {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../collector/tests/fixtures/gungraun/aead-seal-chacha20_poly1305_16_kib.summary.json",
    );
    let (_, base_counts) = benchgate_collector::gungraun::read_file(&fixture).unwrap();
    let doubled: Vec<_> = base_counts
        .iter()
        .map(|m| {
            let mut m = m.clone();
            let value = m.median.point * 2.0;
            m.median = benchgate_collector::Estimate {
                point: value,
                lower: value,
                upper: value,
                confidence_level: 0.95,
            };
            m.mean = m.median;
            m.samples = benchgate_collector::Samples::single(value);
            m
        })
        .collect();
    let noisy = [0.7, 1.45, 1.1];
    let time = "aead/seal/chacha20-poly1305/16 KiB";
    let (mut base, mut head) = (Vec::new(), Vec::new());
    for (k, wobble) in noisy.iter().enumerate() {
        let mut b = vec![measurement(time, 10_000.0, 0.005, None)];
        let mut h = vec![measurement(time, 11_200.0 * wobble, 0.005, None)];
        if k == 0 {
            b.extend(base_counts.clone());
            h.extend(doubled.clone());
        }
        base.push(b);
        head.push(h);
    }
    let history = HashMap::new();
    evaluate(
        &Input {
            mode: Mode::SameJobAb,
            base_rounds: &base,
            head_rounds: &head,
            history: &history,
        },
        policy,
    )
}

#[test]
fn an_instruction_count_shares_its_wall_time_twins_row_and_decides() {
    let decision = counts_beside_time(&Policy::default());
    let count = "aead/seal/chacha20_poly1305_16_kib/instructions";
    let verdict = |id: &str| verdict_of(&decision, id);
    assert_eq!(verdict(count), Verdict::Regressed);
    assert_eq!(
        verdict("aead/seal/chacha20-poly1305/16 KiB"),
        Verdict::Inconclusive
    );
    assert_eq!(decision.verdict, Overall::Regressed);
    // The fixture's other events have no default limit: stored, not judged.
    assert_eq!(
        decision.unjudged,
        [
            "aead/seal/chacha20_poly1305_16_kib/L1 hits",
            "aead/seal/chacha20_poly1305_16_kib/LL hits",
            "aead/seal/chacha20_poly1305_16_kib/RAM hits",
            "aead/seal/chacha20_poly1305_16_kib/estimated cycles",
        ]
    );
    let markdown = render_markdown(&decision, &Context::default(), &Policy::default());
    insta::assert_snapshot!("counts_beside_time_md", markdown);
    // The time row carries the count's verdict; the count has no row of its own where its twin
    // is shown, but leads the regressions.
    // One round a side: the wall time is undecided and too noisy to gate, listed there once.
    assert!(!markdown.contains("### Inconclusive"), "{markdown}");
    let inconclusive = markdown
        .split("### Too noisy to gate")
        .nth(1)
        .unwrap()
        .split("###")
        .next()
        .unwrap();
    assert!(
        inconclusive.contains("| `aead/seal/chacha20-poly1305/16 KiB` | 10.00 µs |")
            && inconclusive.contains("| 100.0% higher (worse): regressed |"),
        "{inconclusive}"
    );
    assert!(
        !inconclusive.contains(&format!("`{count}`")),
        "{inconclusive}"
    );
    let regressions = markdown.split("### Too noisy to gate").next().unwrap();
    assert!(
        regressions.contains(&format!("| `{count}` |")),
        "{regressions}"
    );
    let text = render_text(&decision, &Context::default(), &Policy::default(), false);
    assert!(text.contains("INSTRUCTIONS"), "{text}");
    assert!(text.contains("100.0% higher (worse): regressed"), "{text}");

    // `[instructions] decide = false`: the count informs, the gate follows wall time alone.
    let informing = Policy::from_toml(
        "[instructions]\ndecide = false\nestimated_cycles = \"10%\"\n",
        Path::new("benchgate.toml"),
    )
    .unwrap();
    let decision = counts_beside_time(&informing);
    assert_eq!(verdict(count), Verdict::Regressed);
    let informed = decision.benchmarks.iter().find(|b| b.id == count).unwrap();
    assert_eq!(
        informed.quarantined.as_deref(),
        Some(benchgate_gate::counts::INFORM_ONLY)
    );
    assert_eq!(decision.verdict, Overall::Inconclusive);
    // Estimated cycles now have a limit: judged, no longer among the unjudged.
    assert_eq!(decision.unjudged.len(), 3);
    assert!(
        decision
            .benchmarks
            .iter()
            .any(|b| b.id.ends_with("/estimated cycles") && b.verdict == Verdict::Regressed)
    );
    // The summary keeps it all.
    let text = serde_json::to_string(&summary(&decision, &Context::default(), &informing)).unwrap();
    let read = read_summary(Path::new("perf-summary.json"), &text).unwrap();
    assert_eq!(read.decision, decision);
}

#[test]
fn where_a_count_regressions_instructions_went_is_folded_under_it_and_reads_back() {
    use benchgate_collector::callgrind::{self, Profile};
    let policy = Policy::default();
    let decision = counts_beside_time(&policy);
    let count = "aead/seal/chacha20_poly1305_16_kib/instructions";
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../collector/tests/fixtures/callgrind");
    let read = |name: &str| Profile::read(&[fixtures.join(name)], callgrind::INSTRUCTIONS).unwrap();
    let explained = callgrind::explain(
        &read("seal-base.out"),
        &read("seal-head-sealed-twice.out"),
        2,
    );
    let row = |r: &callgrind::FunctionChange| ProfileRow {
        function: r.function.clone(),
        base: r.base,
        head: r.head,
    };
    let mut context = Context {
        base: "main".into(),
        head: "pr".into(),
        profiles: vec![CountProfile {
            benchmark: count.into(),
            event: explained.event.clone(),
            base_total: explained.base_total,
            head_total: explained.head_total,
            rows: explained.rows.iter().map(row).collect(),
            rest: row(&explained.rest),
        }],
        ..Context::default()
    };
    let markdown = render_markdown(&decision, &context, &policy);
    let section = markdown
        .split("<details><summary>Where the instructions went: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{markdown}"));
    assert!(
        section.starts_with(&format!(
            "<code>{count}</code>, 91,234 → 182,255 (+91,021, +99.8%)</summary>"
        )),
        "{section}"
    );
    assert!(
        section.contains("| `ring_core_0_17_14__chacha20_poly1305_seal_avx2` | 90,848 | 181,696 | +90,848 | 99.8% |\n| `poly_hash_ad_internal` | 75 | 150 | +75 | 0.1% |\n| everything else | 311 | 409 | +98 | 0.1% |"),
        "{section}"
    );
    // It sits in the regressions' section, before the account of how it was decided.
    let at = |text: &str| {
        markdown
            .find(text)
            .unwrap_or_else(|| panic!("{text}: {markdown}"))
    };
    assert!(at("### Regressions (1)") < at("Where the instructions went"));
    assert!(at("Where the instructions went") < at("How benchgate decided"));
    let json = summary_json(&decision, &context, &policy);
    assert_eq!(json["profiles"][0]["rows"][0]["base"], 90_848);
    let back = read_summary(Path::new("perf-summary.json"), &json.to_string()).unwrap();
    assert_eq!(back.context.profiles, context.profiles);
    // A damaged profile is refused whole, naming the field.
    let mut bad = json.clone();
    bad["profiles"][0]["rest"]["head"] = 1.into();
    assert_eq!(
        read_summary(Path::new("perf-summary.json"), &bad.to_string())
            .unwrap_err()
            .to_string(),
        "perf-summary.json: `profiles[0].rest`: the rows and the rest do not add up to head_total minus base_total"
    );
    // A generic name hundreds of characters long keeps its ends.
    context.profiles[0].rows[0].function = format!("alloc::{}::grow", "Vec<u8>::".repeat(40));
    let markdown = render_markdown(&decision, &context, &policy);
    assert!(
        markdown.contains(
            "| `alloc::Vec<u8>::Vec<u8>::Vec<u8>::Vec<u8>::Ve…::Vec<u8>::Vec<u8>::Vec<u8>::Vec<u8>::::grow` |"
        ),
        "{markdown}"
    );
    // Without a profile the section is not there; a stored baseline says why there is none
    // and what keeps one.
    context.profiles.clear();
    let markdown = render_markdown(&decision, &context, &policy);
    assert!(!markdown.contains("Where the instructions went"));
    assert!(!markdown.contains("No profile"), "{markdown}");
    let mut stored = decision.clone();
    stored.mode = Mode::StoredBaseline;
    assert!(
        render_markdown(&stored, &context, &policy).contains(
            "No profile: the stored runs hold these instruction counts without their profile by function. `benchgate ingest` keeps one when gungraun's Callgrind files are beside its summaries"
        )
    );
}

#[test]
fn a_bad_instructions_table_is_refused_naming_the_key() {
    let error = Policy::from_toml(
        "[instructions]\ninstructions = \"five\"\n",
        Path::new("benchgate.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("instructions.instructions"), "{error}");
    let error = Policy::from_toml(
        "[instructions]\nl2_hits = \"5%\"\n",
        Path::new("benchgate.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("l2_hits"), "{error}");
}

#[test]
fn ids_pair_ignoring_case_and_punctuation() {
    use benchgate_gate::report::pair_key;
    let key = "aead_seal_chacha20_poly1305_16_kib";
    assert_eq!(pair_key("aead/seal/chacha20-poly1305/16 KiB"), key);
    assert_eq!(pair_key("aead/seal/chacha20_poly1305_16_kib"), key);
    assert_eq!(
        pair_key("parse/csv numbers/256"),
        pair_key("parse/csv_numbers/_256")
    );
    assert_ne!(
        pair_key("parse/csv numbers/256"),
        pair_key("parse/csv_numbers/_2560")
    );
    assert_eq!(pair_key("naïve λ lookup"), "naïve_λ_lookup");
}

#[test]
fn a_check_text_under_the_character_limit_but_over_the_byte_limit_is_cut() {
    // Rows of `µs` (two bytes each µ): find a suite whose report is under 65,535 characters
    // but over 65,535 bytes, as GitHub counts.
    let (regressed, context) = ab_regression();
    let template = regressed.benchmarks[0].clone();
    let markdown_with = |n: usize| {
        let mut big = regressed.clone();
        for i in 0..n {
            let mut b = template.clone();
            b.id = format!("generated/µ_{i:05}");
            big.benchmarks.push(b);
        }
        (
            big.clone(),
            render_markdown(&big, &context, &Policy::default()),
        )
    };
    let (decision, markdown) = (100..2000)
        .step_by(10)
        .map(markdown_with)
        .find(|(_, md)| md.len() > CHECK_TEXT_LIMIT)
        .unwrap();
    assert!(
        markdown.chars().count() <= CHECK_TEXT_LIMIT,
        "a character count would pass it"
    );
    let output = check_output(&decision, &markdown, None);
    assert!(
        output.text.len() <= CHECK_TEXT_LIMIT,
        "{}",
        output.text.len()
    );
    assert!(
        output
            .text
            .contains("more rows left out: GitHub shows at most 65535 bytes here")
    );
    assert!(output.summary.len() <= CHECK_TEXT_LIMIT);
}

#[test]
fn a_pass_whose_bound_excludes_any_slowdown_reads_like_every_pass_and_an_improvement_does_not() {
    // `quick` is 1.5% faster in every round: under `min_change` (2%), so it passes, and its
    // bound lies below no change. A pass rests on the slowdown it excludes ("≤ x slower");
    // only an improvement is decided on "≥ x faster".
    let wobble = [1.0, 1.001, 0.999];
    let side = |quick: f64, read: f64| -> Vec<Vec<_>> {
        (0..3)
            .map(|k| {
                let mut round: Vec<_> = (0..5)
                    .map(|i| {
                        measurement(
                            &format!("steady/{i}"),
                            1000.0 * (1 + i) as f64 * wobble[(k + i) % 3],
                            0.005,
                            None,
                        )
                    })
                    .collect();
                round.push(measurement(
                    "quick",
                    1000.0 * quick * wobble[k],
                    0.005,
                    None,
                ));
                round.push(measurement("io/read", read * wobble[k], 0.005, None));
                round
            })
            .collect()
    };
    let decision = decide_ab(&side(1.0, 90_000.0), &side(0.985, 54_000.0));
    assert_eq!(verdict_of(&decision, "quick"), Verdict::Pass);
    assert_eq!(verdict_of(&decision, "io/read"), Verdict::Improved);
    let (_, context) = ab_regression();
    let markdown = render_markdown(&decision, &context, &Policy::default());
    let cell = |id: &str| {
        let row = markdown
            .lines()
            .find(|l| l.starts_with(&format!("| `{id}` |")))
            .unwrap_or_else(|| panic!("{markdown}"));
        row.split(" | ").nth(5).unwrap().to_owned()
    };
    let quick = cell("quick");
    let faster = quick
        .strip_prefix("≤ no change (≥ ")
        .and_then(|rest| rest.strip_suffix("% faster)"))
        .unwrap_or_else(|| panic!("{quick}"));
    let faster: f64 = faster.parse().unwrap();
    assert!((1.0..=1.5).contains(&faster), "{quick}");
    let read = cell("io/read");
    assert!(
        read.starts_with("≥ ") && read.ends_with("% faster"),
        "{read}"
    );
}

/// base64 0.23.1's `decode_small_input/decode/*` and `encode_small_input/encode/*` (MIT OR
/// Apache-2.0), measured on this project's 2-core machine on 2026-12-05: the fastest sample of
/// each of 10 default-branch runs in ns (`cargo bench --bench benchmarks --
/// '_small_input/(encode|decode)/'`, each stored with `ingest --kind push`), the last of them
/// the base, then a head whose decoder first scans its whole input for invalid bytes. A third
/// of the runs read 1.5–2 times their level in a few benchmarks at a time: the machine, not
/// the code.
#[rustfmt::skip]
const BASE64_RUNS: [(&str, Option<u64>, [f64; 11]); 10] = [
    ("decode_small_input/decode/100", Some(100), [85.8, 154.1, 77.5, 84.3, 78.0, 85.4, 84.1, 151.6, 145.5, 88.0, 123.4]),
    ("decode_small_input/decode/3", Some(3), [66.4, 48.2, 49.1, 51.7, 49.5, 72.2, 49.0, 82.2, 67.7, 56.3, 50.2]),
    ("decode_small_input/decode/3072", Some(3072), [1329.4, 2013.4, 1276.3, 1364.2, 1246.9, 2183.4, 1365.8, 1461.2, 1438.8, 1454.4, 2765.5]),
    ("decode_small_input/decode/50", Some(50), [68.6, 66.6, 63.5, 71.3, 64.9, 65.6, 66.8, 116.4, 64.4, 70.5, 94.0]),
    ("decode_small_input/decode/500", Some(500), [270.8, 506.6, 247.9, 244.3, 233.7, 258.9, 267.3, 462.7, 420.1, 274.5, 496.4]),
    ("encode_small_input/encode/100", Some(100), [101.1, 112.2, 104.6, 97.8, 98.1, 98.8, 98.4, 105.8, 121.3, 168.7, 110.1]),
    ("encode_small_input/encode/3", Some(3), [31.5, 47.5, 29.1, 30.2, 49.7, 29.9, 41.5, 32.9, 30.1, 35.9, 32.9]),
    ("encode_small_input/encode/3072", Some(3072), [1467.5, 1471.5, 2934.6, 1463.8, 1462.9, 1545.7, 1460.9, 2403.3, 1466.8, 1629.6, 1446.6]),
    ("encode_small_input/encode/50", Some(50), [62.0, 60.8, 120.7, 103.3, 64.1, 71.0, 62.9, 64.6, 73.5, 68.6, 68.4]),
    ("encode_small_input/encode/500", Some(500), [324.3, 319.9, 284.3, 285.9, 312.0, 291.3, 288.0, 328.4, 289.8, 547.3, 297.4]),
];

/// The prose of a report's section: from its `heading` to its table.
fn prose_under<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let section = markdown.split(heading).nth(1).expect(heading);
    section.split("| benchmark |").next().unwrap_or(section)
}

/// The base64 head against its stored baseline and history, one head run.
fn base64_stored_baseline() -> Decision {
    stored_baseline_of(&BASE64_RUNS)
}

/// A stored baseline of one head run: each row's first nine runs and the base run (its tenth)
/// are the history, the tenth the base, the eleventh the head; `None` is judged on time.
fn stored_baseline_of(runs: &[(&str, Option<u64>, [f64; 11])]) -> Decision {
    let run = |k: usize| {
        runs.iter()
            .map(|(id, bytes, ns)| measurement(id, ns[k], 0.01, bytes.map(Throughput::Bytes)))
            .collect::<Vec<_>>()
    };
    let history: HashMap<String, Vec<f64>> = runs
        .iter()
        .map(|(id, _, ns)| ((*id).to_owned(), ns[..10].iter().map(|v| v.ln()).collect()))
        .collect();
    evaluate(
        &Input {
            mode: Mode::StoredBaseline,
            base_rounds: &[run(9)],
            head_rounds: &[run(10)],
            history: &history,
        },
        &Policy::default(),
    )
}

/// A real crate's history that moves whole stretches of a run 1.5–2 times leaves a stored
/// baseline unable to decide: the report says it is the machine's history, not the benchmarks,
/// and points to what decided the same change (`ab`: every benchmark, right, in 4 rounds). Its
/// headline does not promise that more rounds would settle what the plan's rounds cannot.
#[test]
fn a_history_too_noisy_for_a_stored_baseline_points_to_a_same_job_ab() {
    let decision = base64_stored_baseline();
    assert_eq!(decision.verdict, Overall::Inconclusive);
    let noisy: Vec<&str> = decision
        .benchmarks
        .iter()
        .filter(|b| b.too_noisy.is_some() && b.verdict == Verdict::Inconclusive)
        .map(|b| b.id.as_str())
        .collect();
    assert_eq!(noisy.len(), 10, "{noisy:?}");
    let markdown = render_markdown(
        &decision,
        &context_of("90b23d2d8b5b", "682d29eb0ef9"),
        &Policy::default(),
    );
    let headline = markdown.lines().next().unwrap();
    assert!(
        headline.contains("4 of 10 benchmarks past their limit but unconfirmed")
            && headline.ends_with("; all 10 too noisy to gate"),
        "{headline}"
    );
    assert!(!headline.contains("more rounds"), "{headline}");
    let section = prose_under(&markdown, "### Too noisy to gate (10)");
    assert!(
        section
            .contains("a machine that moves them that far from one run to the next, or a change that moves much of the suite at once, looks to it like a disturbed run")
            && section.contains("A same-job A/B (`benchgate ab`, the Action's `mode: ab`)"),
        "{section}"
    );
    assert!(!section.contains("make them steadier"), "{section}");
}

/// simdutf8 (its repository; MIT OR Apache-2.0), `cargo bench --manifest-path bench/Cargo.toml
/// --bench throughput_basic` (Criterion 0.8.1) on one 2-core machine: each benchmark's fastest
/// sample in ns of ten default-branch runs (the last the base run) and of the head, whose basic
/// API picks AVX2 over AVX-512. That change moves the 16 benchmarks on the SIMD path 20–58%
/// slower (docs/accuracy.md, "A change that moves most of the suite"). `None`: judged on time.
#[rustfmt::skip]
const SIMDUTF8_RUNS: [(&str, Option<u64>, [f64; 11]); 30] = [
    ("0-empty/000000", None, [1.354, 1.263, 1.392, 1.354, 1.335, 1.319, 1.257, 1.354, 1.253, 1.253, 1.27]),
    ("1-latin/000001", Some(1), [3.062, 3.183, 3.348, 3.34, 3.341, 3.34, 3.053, 3.062, 2.689, 3.164, 2.979]),
    ("1-latin/000008", Some(8), [5.031, 5.411, 5.428, 5.467, 5.624, 5.399, 5.222, 5.409, 5.362, 5.593, 5.406]),
    ("1-latin/000064", Some(64), [1.887, 2.036, 2.046, 1.949, 1.853, 2.037, 1.85, 1.767, 1.896, 1.771, 1.949]),
    ("1-latin/000512", Some(512), [5.958, 5.699, 6.124, 5.959, 5.846, 6.124, 5.261, 5.815, 5.261, 5.512, 5.178]),
    ("1-latin/004096", Some(4096), [41.11, 39.87, 41.22, 41.13, 42.15, 41.93, 41.27, 38.65, 38.72, 39.25, 46.38]),
    ("1-latin/065536", Some(65536), [769.1, 730.2, 794.4, 768.8, 793.4, 773.0, 730.0, 769.3, 730.0, 735.7, 772.2]),
    ("1-latin/131072", Some(131072), [1577.0, 1520.7, 1544.2, 1461.3, 1536.9, 1577.4, 1468.9, 1477.5, 1473.0, 1428.8, 1500.4]),
    ("2-cyrillic/000002", Some(2), [2.458, 2.506, 2.475, 2.374, 2.456, 2.508, 2.386, 2.259, 2.374, 2.505, 2.373]),
    ("2-cyrillic/000008", Some(8), [5.916, 5.751, 5.568, 5.567, 5.261, 5.275, 5.451, 5.449, 5.275, 5.697, 5.417]),
    ("2-cyrillic/000065", Some(65), [7.553, 7.398, 7.874, 7.5, 7.249, 7.629, 7.398, 7.292, 7.398, 7.455, 15.68]),
    ("2-cyrillic/000513", Some(513), [28.2, 27.82, 27.44, 28.3, 27.3, 28.08, 27.78, 28.08, 25.86, 27.52, 37.98]),
    ("2-cyrillic/004096", Some(4096), [186.6, 187.4, 188.3, 168.4, 172.6, 186.6, 175.2, 169.7, 169.1, 181.7, 234.1]),
    ("2-cyrillic/065536", Some(65536), [2914.0, 2908.9, 2996.2, 3010.4, 2769.9, 2987.4, 2782.1, 2701.7, 2764.4, 3013.9, 3737.6]),
    ("2-cyrillic/131072", Some(131072), [5655.9, 5592.0, 5887.0, 6054.7, 5826.7, 5873.5, 5389.2, 5400.3, 5432.8, 5984.1, 8270.6]),
    ("3-chinese/000003", Some(3), [2.901, 3.002, 2.983, 2.98, 3.136, 3.086, 2.963, 2.914, 2.901, 2.995, 3.013]),
    ("3-chinese/000009", Some(9), [6.125, 5.852, 5.958, 6.124, 5.512, 6.124, 6.05, 5.609, 5.378, 5.972, 5.867]),
    ("3-chinese/000066", Some(66), [7.43, 6.976, 7.468, 7.667, 7.398, 7.61, 7.227, 7.221, 7.222, 6.803, 15.53]),
    ("3-chinese/000512", Some(512), [24.57, 22.58, 24.3, 25.43, 23.16, 24.44, 24.52, 22.48, 23.13, 24.35, 32.36]),
    ("3-chinese/004096", Some(4096), [181.7, 172.6, 181.1, 187.9, 182.8, 188.7, 173.7, 176.7, 169.4, 182.7, 241.6]),
    ("3-chinese/065538", Some(65538), [2742.2, 2913.5, 2716.4, 2909.7, 2986.5, 3024.8, 2935.5, 2697.1, 2795.5, 2794.6, 4040.5]),
    ("3-chinese/131072", Some(131072), [5687.5, 5893.3, 5534.2, 5754.3, 5882.8, 5898.6, 5864.4, 5399.4, 5426.1, 5534.6, 7655.9]),
    ("4-emoji/000003", Some(3), [2.818, 3.061, 3.049, 2.979, 2.901, 3.063, 3.039, 2.888, 3.023, 3.062, 2.756]),
    ("4-emoji/000011", Some(11), [6.514, 7.175, 6.857, 6.789, 7.122, 7.138, 6.93, 6.389, 7.367, 6.514, 6.514]),
    ("4-emoji/000067", Some(67), [7.107, 7.4, 7.462, 7.398, 7.398, 7.217, 7.178, 6.976, 6.713, 7.494, 16.74]),
    ("4-emoji/000515", Some(515), [26.74, 27.33, 27.7, 27.48, 28.08, 28.08, 27.5, 25.86, 27.79, 27.3, 38.07]),
    ("4-emoji/004099", Some(4099), [171.9, 184.6, 172.5, 186.1, 175.4, 176.7, 184.6, 171.1, 185.5, 176.6, 264.2]),
    ("4-emoji/065538", Some(65538), [2733.5, 2949.1, 2919.0, 2988.3, 2779.7, 2785.6, 2909.5, 2673.3, 3007.4, 2909.2, 4264.6]),
    ("4-emoji/131072", Some(131072), [5405.3, 5985.1, 5827.2, 6009.2, 5534.7, 5826.3, 5532.6, 5296.6, 5825.7, 5624.3, 8312.0]),
    ("x-error/065536", None, [2705.0, 3014.0, 2955.2, 2988.3, 2773.1, 2696.7, 3018.3, 2696.6, 2696.7, 2715.2, 4142.0]),
];

/// The benchmarks the simdutf8 head's change reaches (inputs of 65 bytes and more, and the
/// late error): every other benchmark's code is the same.
const SIMDUTF8_CHANGED: [&str; 16] = [
    "2-cyrillic/000065",
    "2-cyrillic/000513",
    "2-cyrillic/004096",
    "2-cyrillic/065536",
    "2-cyrillic/131072",
    "3-chinese/000066",
    "3-chinese/000512",
    "3-chinese/004096",
    "3-chinese/065538",
    "3-chinese/131072",
    "4-emoji/000067",
    "4-emoji/000515",
    "4-emoji/004099",
    "4-emoji/065538",
    "4-emoji/131072",
    "x-error/065536",
];

/// A change that moves most of a real suite, against a stored baseline with ten runs of
/// history, one head run: the others' floor cannot tell it from a disturbed run, so the gate
/// claims nothing of them. It must never pass a changed benchmark nor call an unchanged one
/// `regressed`, and its report must not blame the benchmarks' history (a few per cent a run)
/// for the band the other benchmarks' moves set.
#[test]
fn a_change_that_moves_most_of_the_suite_is_never_passed_and_its_band_is_not_blamed_on_history() {
    let decision = stored_baseline_of(&SIMDUTF8_RUNS);
    assert_eq!(decision.benchmarks.len(), 30);
    for b in &decision.benchmarks {
        if SIMDUTF8_CHANGED.contains(&b.id.as_str()) {
            assert!(
                !matches!(b.verdict, Verdict::Pass | Verdict::Improved),
                "{} is 20-58% slower: {:?}",
                b.id,
                b.verdict
            );
        } else {
            assert_ne!(b.verdict, Verdict::Regressed, "{} did not change", b.id);
        }
    }
    let markdown = render_markdown(
        &decision,
        &context_of("cd7568e6d65e", "2806ba730a9f"),
        &Policy::default(),
    );
    let section = prose_under(&markdown, "### Too noisy to gate (");
    assert!(
        section.contains("how far this run's other benchmarks moved beside them")
            && section.contains("a change that moves much of the suite at once"),
        "{section}"
    );
    assert!(
        !section.contains("this machine's stored runs of them move that far"),
        "{section}"
    );
}

/// Where some benchmark past its limit could still be decided by more rounds, the headline
/// says so; and a same-job A/B's benchmark too noisy to gate is its own noise, not a machine's
/// history.
#[test]
fn more_rounds_are_promised_only_where_they_could_decide() {
    let (decision, context) = ab_regression();
    let markdown = render_markdown(&decision, &context, &Policy::default());
    let section = markdown.split("### Too noisy to gate").nth(1).unwrap();
    assert!(section.contains("or make them steadier"), "{section}");
    assert!(!section.contains("benchgate ab"), "{section}");

    let mut decision = base64_stored_baseline();
    let worst = decision
        .benchmarks
        .iter_mut()
        .find(|b| b.id == "decode_small_input/decode/3072")
        .unwrap();
    worst.too_noisy = None;
    let headline = render_markdown(
        &decision,
        &context_of("90b23d2d8b5b", "682d29eb0ef9"),
        &Policy::default(),
    )
    .lines()
    .next()
    .unwrap()
    .to_owned();
    assert!(
        headline.contains(
            "; more rounds would confirm or clear them; 1 inconclusive, 9 too noisy to gate"
        ),
        "{headline}"
    );
}

/// A context with nothing but the two sides' short SHAs.
fn context_of(base: &str, head: &str) -> Context {
    Context {
        cost: None,
        profiles: Vec::new(),
        base: base.into(),
        head: head.into(),
        base_commit: None,
        head_commit: None,
        fingerprint: None,
        builds: Vec::new(),
        source: None,
        incomplete: None,
        notes: Vec::new(),
    }
}

/// An A/B job whose budget ran out after one round (base64's code-timed benches at the
/// default budget) has measured no noise: its benchmarks are uncalibrated, never "too noisy
/// to gate" (which would point the user at a quarantine), and the headline says more rounds
/// would decide them.
#[test]
fn an_ab_stopped_after_one_round_calls_nothing_too_noisy() {
    let mut base = Vec::new();
    let mut head = Vec::new();
    for i in 0..6 {
        let id = format!("decode/{i}");
        base.push(measurement(&id, 1000.0, 0.005, None));
        let slower = if i == 0 { 1.44 } else { 1.0 + 0.01 * i as f64 };
        head.push(measurement(&id, 1000.0 * slower, 0.005, None));
    }
    // As `benchgate ab` judges its rounds: adaptive, up to 8.
    let history = HashMap::new();
    let base = [base];
    let decide = |head: &[Vec<benchgate_collector::Measurement>]| {
        evaluate_with(
            &Input {
                mode: Mode::SameJobAb,
                base_rounds: &base,
                head_rounds: head,
                history: &history,
            },
            &Policy::default(),
            Plan::adaptive(8),
        )
    };
    let mut head = [head];
    let decision = decide(&head);
    assert_eq!(decision.verdict, Overall::Inconclusive);
    assert_eq!(decision.rounds, 1);
    for b in &decision.benchmarks {
        assert!(b.uncalibrated, "{b:?}");
        assert_eq!(b.too_noisy, None, "{b:?}");
        assert_eq!(b.verdict, Verdict::Inconclusive, "{b:?}");
    }
    let context = Context {
        base: "1111111".into(),
        head: "2222222".into(),
        ..Context::default()
    };
    let text = render_text(&decision, &context, &Policy::default(), false);
    assert!(
        text.starts_with(
            "benchgate inconclusive: 1 of 6 benchmarks past their limit but unconfirmed (worst: decode/0 44.0% slower); more rounds would confirm or clear them; 5 more undecided\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("(same-job A/B, 1 round alternating)"),
        "{text}"
    );
    assert!(!text.contains("too noisy"), "{text}");
    // Every row is undecided, so each shows what it would take to call it `regressed`.
    assert!(text.contains("DETECTABLE"), "{text}");
    let markdown = render_markdown(&decision, &context, &Policy::default());
    assert!(markdown.contains("### Inconclusive (6)"), "{markdown}");
    assert!(!markdown.contains("Too noisy"), "{markdown}");

    // Nothing past its limit: undecided, and said to be so against an assumed level, not
    // "too noisy to decide".
    head[0][0] = measurement("decode/0", 1010.0, 0.005, None);
    let decision = decide(&head);
    let text = render_text(&decision, &context, &Policy::default(), false);
    assert!(
        text.starts_with(
            "benchgate inconclusive: 6 of 6 benchmarks undecided against an assumed noise level (†); none confirmed regressed\n"
        ),
        "{text}"
    );
}
