//! Reports of a [`Decision`]: `perf-summary.json` (a stable, versioned schema), the markdown the
//! PR comment carries (`perf-summary.md`) and terminal text. Pure functions of their inputs.

use std::fmt::Write as _;

use serde_json::Value;

use crate::decision::{
    BenchmarkResult, Decision, Metric, Mode, NoiseSource, Overall, UNCALIBRATED_RUN_NOISE, Verdict,
};
use crate::policy::Policy;

/// The version of the `perf-summary.json` schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// What was compared, for people: the decision does not know where its inputs came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The base side: a commit SHA, run ids or directories.
    pub base: String,
    /// The head side.
    pub head: String,
    /// The base commit, when known.
    pub base_commit: Option<String>,
    /// The head commit, when known.
    pub head_commit: Option<String>,
    /// The hardware fingerprint both sides ran on, when known.
    pub fingerprint: Option<String>,
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::SameJobAb => "same-job-ab",
        Mode::StoredBaseline => "stored-baseline",
    }
}

/// `perf-summary.json`, typed: serialized straight to text without building a tree (a
/// report of 10,000 benchmarks is written in a few milliseconds). Field order is the schema's.
#[derive(Debug, serde::Serialize)]
pub struct Summary<'a> {
    schema_version: u32,
    verdict: &'static str,
    mode: &'static str,
    rounds: usize,
    base_commit: Option<&'a str>,
    head_commit: Option<&'a str>,
    base: &'a str,
    head: &'a str,
    fingerprint: Option<&'a str>,
    statistic: String,
    confidence: f64,
    false_alarm_rate: f64,
    counts: Counts,
    benchmarks: Vec<SummaryBenchmark<'a>>,
}

/// How many benchmarks got each verdict, in the schema's order.
#[derive(Debug, serde::Serialize)]
struct Counts {
    regressed: usize,
    inconclusive: usize,
    warn: usize,
    improved: usize,
    pass: usize,
    new: usize,
    missing: usize,
    ignored: usize,
}

#[derive(Debug, serde::Serialize)]
struct SummaryBenchmark<'a> {
    id: &'a str,
    metric: Metric,
    verdict: &'static str,
    base: Option<f64>,
    head: Option<f64>,
    ratio: Option<f64>,
    limit: f64,
    noise: Option<f64>,
    interval: Option<[f64; 2]>,
    uncalibrated: bool,
    noise_source: Option<NoiseSource>,
    rounds: usize,
    p_slower: Option<f64>,
    throughput: Option<SummaryThroughput>,
}

#[derive(Debug, serde::Serialize)]
struct SummaryThroughput {
    kind: &'static str,
    amount: u64,
}

/// `perf-summary.json` of a decision.
pub fn summary<'a>(decision: &'a Decision, context: &'a Context, policy: &Policy) -> Summary<'a> {
    let mut counts = Counts {
        regressed: 0,
        inconclusive: 0,
        warn: 0,
        improved: 0,
        pass: 0,
        new: 0,
        missing: 0,
        ignored: 0,
    };
    for b in &decision.benchmarks {
        *match b.verdict {
            Verdict::Regressed => &mut counts.regressed,
            Verdict::Inconclusive => &mut counts.inconclusive,
            Verdict::Warn => &mut counts.warn,
            Verdict::Improved => &mut counts.improved,
            Verdict::Pass => &mut counts.pass,
            Verdict::New => &mut counts.new,
            Verdict::Missing => &mut counts.missing,
            Verdict::Ignored => &mut counts.ignored,
        } += 1;
    }
    Summary {
        schema_version: SCHEMA_VERSION,
        verdict: decision.verdict.as_str(),
        mode: mode_name(decision.mode),
        rounds: decision.rounds,
        base_commit: context.base_commit.as_deref(),
        head_commit: context.head_commit.as_deref(),
        base: &context.base,
        head: &context.head,
        fingerprint: context.fingerprint.as_deref(),
        statistic: policy.statistic.name(),
        confidence: policy.confidence,
        false_alarm_rate: policy.false_alarm_rate,
        counts,
        benchmarks: decision
            .benchmarks
            .iter()
            .map(|b| SummaryBenchmark {
                id: &b.id,
                metric: b.metric,
                verdict: b.verdict.as_str(),
                base: b.base_ns,
                head: b.head_ns,
                ratio: b.ratio,
                limit: b.limit,
                noise: b.noise,
                interval: b.interval.map(|(low, high)| [low, high]),
                uncalibrated: b.uncalibrated,
                noise_source: b.noise_source,
                rounds: b.rounds,
                p_slower: b.p_slower,
                throughput: b
                    .throughput_per_iteration
                    .map(|(kind, amount)| SummaryThroughput { kind, amount }),
            })
            .collect(),
    }
}

/// `perf-summary.json` as a JSON value, for callers that inspect or embed it.
pub fn summary_json(decision: &Decision, context: &Context, policy: &Policy) -> Value {
    // Serializing these types into a value cannot fail: every map key is a string.
    serde_json::to_value(summary(decision, context, policy)).unwrap_or(Value::Null)
}

/// The headline: the verdict first, with the worst regression.
pub fn headline(decision: &Decision) -> String {
    let compared = decision
        .benchmarks
        .iter()
        .filter(|b| b.ratio.is_some())
        .count();
    match decision.verdict {
        Overall::Regressed => {
            let worst = decision
                .worst_regression()
                .map(|b| format!("; worst: {} {}", b.id, change_text(b)))
                .unwrap_or_default();
            format!(
                "regressed: {} of {compared} benchmarks slower than their limit{worst}",
                decision.count(Verdict::Regressed)
            )
        }
        Overall::Inconclusive => format!(
            "inconclusive: {} of {compared} benchmarks too noisy to decide; none regressed",
            decision.count(Verdict::Inconclusive)
        ),
        Overall::Pass => format!("pass: no regression in {compared} benchmarks"),
        Overall::NoBaseline => "no baseline: nothing comparable to compare against".to_owned(),
    }
}

fn verdict_icon(verdict: Overall) -> &'static str {
    match verdict {
        Overall::Pass => "✅",
        Overall::Regressed => "❌",
        Overall::Inconclusive => "⚠️",
        Overall::NoBaseline => "➖",
    }
}

/// Nanoseconds for people: 4 significant digits in ns, µs, ms or s.
pub fn format_ns(ns: f64) -> String {
    // Thresholds just below each power of 1000, so 999,999.99 ns reads 1.000 ms, not 1000.0 µs.
    let (value, unit) = match ns {
        n if n < 999.95 => (n, "ns"),
        n if n < 999_950.0 => (n / 1e3, "µs"),
        n if n < 999_950_000.0 => (n / 1e6, "ms"),
        n => (n / 1e9, "s"),
    };
    let decimals = if value >= 100.0 {
        1
    } else if value >= 10.0 {
        2
    } else {
        3
    };
    format!("{value:.decimals$} {unit}")
}

fn signed_percent(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

/// The change as people read it: time for latency, throughput for throughput benchmarks.
fn change_text(b: &BenchmarkResult) -> String {
    match (b.ratio, b.metric) {
        (Some(ratio), Metric::Time) => format!("{} time", signed_percent(ratio - 1.0)),
        (Some(ratio), Metric::Throughput) => {
            format!("{} throughput", signed_percent(1.0 / ratio - 1.0))
        }
        (None, _) => "-".to_owned(),
    }
}

fn limit_text(b: &BenchmarkResult) -> String {
    match b.metric {
        Metric::Time => signed_percent(b.limit - 1.0),
        Metric::Throughput => signed_percent(1.0 / b.limit - 1.0),
    }
}

fn noise_text(b: &BenchmarkResult) -> String {
    match b.noise {
        Some(noise) => format!(
            "±{:.1}%{}",
            noise * 100.0,
            if b.uncalibrated { " †" } else { "" }
        ),
        None => "-".to_owned(),
    }
}

fn value_text(ns: Option<f64>) -> String {
    ns.map(format_ns).unwrap_or_else(|| "-".to_owned())
}

fn row(b: &BenchmarkResult, with_verdict: bool) -> Vec<String> {
    let mut cells = vec![format!("`{}`", b.id.replace('`', "'").replace('|', "\\|"))];
    if with_verdict {
        cells.push(b.verdict.as_str().to_owned());
    }
    cells.extend([
        value_text(b.base_ns),
        value_text(b.head_ns),
        change_text(b),
        limit_text(b),
        noise_text(b),
    ]);
    cells
}

fn markdown_table(out: &mut String, rows: &[&BenchmarkResult], with_verdict: bool) {
    let mut header = vec!["benchmark"];
    if with_verdict {
        header.push("verdict");
    }
    header.extend(["base", "head", "change", "limit", "noise band"]);
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for b in rows {
        let _ = writeln!(out, "| {} |", row(b, with_verdict).join(" | "));
    }
}

/// `perf-summary.md`: what the PR comment carries. Verdict first, then regressions,
/// inconclusive results, warnings and improvements, then every benchmark folded.
pub fn render_markdown(decision: &Decision, context: &Context, policy: &Policy) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## {} benchgate {}\n",
        verdict_icon(decision.verdict),
        headline(decision)
    );
    let _ = writeln!(out, "{}\n", comparison_sentence(decision, context, policy));

    let sections = [
        (Verdict::Regressed, "Regressions", ""),
        (
            Verdict::Inconclusive,
            "Inconclusive",
            "The noise band is too wide to exclude a regression as large as the limit; more rounds narrow it (roughly by √rounds).",
        ),
        (
            Verdict::Warn,
            "Warnings",
            "Significantly slower, but within the limit.",
        ),
        (Verdict::Improved, "Improvements", ""),
        (Verdict::New, "New benchmarks", ""),
        (
            Verdict::Missing,
            "Missing benchmarks",
            "In the base but not in the head.",
        ),
    ];
    for (verdict, title, note) in sections {
        let rows: Vec<&BenchmarkResult> = decision
            .benchmarks
            .iter()
            .filter(|b| b.verdict == verdict)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "### {title} ({})\n", rows.len());
        if !note.is_empty() {
            let _ = writeln!(out, "{note}\n");
        }
        markdown_table(&mut out, &rows, false);
        out.push('\n');
    }
    if decision.benchmarks.iter().any(|b| b.uncalibrated) {
        let _ = writeln!(
            out,
            "† uncalibrated: no rounds and fewer than 10 runs of history on this fingerprint, so the band assumes {:.0}% noise per run. Run base and head in the same job (`benchgate ab --rounds 3`) for a calibrated answer.\n",
            UNCALIBRATED_RUN_NOISE * 100.0
        );
    }
    let all: Vec<&BenchmarkResult> = decision.benchmarks.iter().collect();
    let _ = writeln!(
        out,
        "<details><summary>All {} benchmarks</summary>\n",
        all.len()
    );
    markdown_table(&mut out, &all, true);
    let _ = writeln!(out, "\n</details>");
    out
}

/// How the comparison was made and how sure the gate is, in one paragraph.
fn comparison_sentence(decision: &Decision, context: &Context, policy: &Policy) -> String {
    let how = match decision.mode {
        Mode::SameJobAb => format!("same-job A/B, {} rounds alternating", decision.rounds),
        Mode::StoredBaseline => "stored baseline".to_owned(),
    };
    let machine = context
        .fingerprint
        .as_deref()
        .map(|f| format!(" on fingerprint `{}`", &f[..f.len().min(12)]))
        .unwrap_or_default();
    let compared = decision
        .benchmarks
        .iter()
        .filter(|b| b.ratio.is_some())
        .count();
    format!(
        "Head `{}` against base `{}` ({how}){machine}, comparing the {} time per iteration of each round. A benchmark passes when a slowdown as large as its limit is excluded with {:.0}% confidence; it fails only when it is at least the limit and significant after Holm's correction over {compared} benchmarks ({:.0}% chance of any false alarm per comparison). The noise band is the {:.0}% interval of the change, from {}.",
        context.head,
        context.base,
        match policy.statistic {
            crate::decision::Statistic::Median => "median".to_owned(),
            crate::decision::Statistic::Quantile(0.0) => "minimum".to_owned(),
            other => format!("{} quantile of the", other.name()),
        },
        policy.confidence * 100.0,
        policy.false_alarm_rate * 100.0,
        policy.confidence * 100.0,
        noise_sources(decision)
    )
}

/// Where the noise bands came from, in words.
fn noise_sources(decision: &Decision) -> String {
    let count = |source: NoiseSource| {
        decision
            .benchmarks
            .iter()
            .filter(|b| b.noise_source == Some(source))
            .count()
    };
    let parts: Vec<String> = [
        (NoiseSource::Rounds, "the spread between rounds"),
        (
            NoiseSource::History,
            "the baseline's history on this fingerprint",
        ),
        (
            NoiseSource::Assumed,
            "an assumed noise level (uncalibrated, marked †)",
        ),
    ]
    .into_iter()
    .filter_map(|(source, words)| match count(source) {
        0 => None,
        n if n
            == count(NoiseSource::Rounds)
                + count(NoiseSource::History)
                + count(NoiseSource::Assumed) =>
        {
            Some(words.to_owned())
        }
        n => Some(format!("{words} for {n}")),
    })
    .collect();
    if parts.is_empty() {
        "nothing: no benchmark was compared".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Terminal text; `color` adds ANSI colours to verdicts (the caller knows whether it is a TTY).
pub fn render_text(decision: &Decision, context: &Context, policy: &Policy, color: bool) -> String {
    let paint = |text: &str, verdict: Verdict| -> String {
        let code = match verdict {
            Verdict::Regressed => "31",
            Verdict::Inconclusive | Verdict::Warn => "33",
            Verdict::Improved | Verdict::Pass => "32",
            _ => "0",
        };
        if color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    };
    let mut out = String::new();
    let _ = writeln!(out, "benchgate {}", headline(decision));
    let _ = writeln!(
        out,
        "{}\n",
        comparison_sentence(decision, context, policy).replace('`', "")
    );
    let rows: Vec<Vec<String>> = decision
        .benchmarks
        .iter()
        .map(|b| {
            let mut cells = row(b, true);
            cells[0] = b.id.clone();
            cells
        })
        .collect();
    let header = [
        "BENCHMARK",
        "VERDICT",
        "BASE",
        "HEAD",
        "CHANGE",
        "LIMIT",
        "NOISE",
    ];
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for cells in &rows {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String], verdict: Option<Verdict>| -> String {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let padded = format!("{cell}{}", " ".repeat(widths[i] - cell.chars().count()));
            match (i, verdict) {
                (1, Some(v)) => text.push_str(&paint(&padded, v)),
                _ => text.push_str(&padded),
            }
            text.push_str("  ");
        }
        text.trim_end().to_owned()
    };
    let _ = writeln!(out, "{}", line(&header.map(str::to_owned), None));
    for (cells, b) in rows.iter().zip(&decision.benchmarks) {
        let _ = writeln!(out, "{}", line(cells, Some(b.verdict)));
    }
    out
}
