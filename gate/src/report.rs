//! Reports of a [`Decision`]: `perf-summary.json` (a stable, versioned schema), the markdown the
//! PR comment carries (`perf-summary.md`) and terminal text. Pure functions of their inputs.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use crate::budget::{BudgetResult, BudgetVerdict};
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
    /// Each side's bench executables (same-job A/B): proof that each side ran its own build.
    pub builds: Vec<SideBuild>,
    /// How the sides were obtained, in a few words (`one run a side`), where the mode alone
    /// would mislead: `compare` of two directories has no stored baseline.
    pub source: Option<String>,
}

/// The bench executables one side of a same-job A/B was built into and ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideBuild {
    /// `base` or `head`.
    pub side: String,
    /// The commit the side was built from.
    pub commit: String,
    /// Its bench executables, in the order they ran.
    pub executables: Vec<BuiltExecutable>,
}

/// One bench executable: which target it is, where it was kept, and a hash of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltExecutable {
    /// `package/target`, e.g. `zoo/zoo`.
    pub target: String,
    /// Where the executable was kept for the rounds.
    pub path: String,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
}

/// `perf-summary.json`, typed: serialized straight to text without building a tree (a
/// report of 10,000 benchmarks is written in a few milliseconds). Field order is the schema's.
/// The same structs read a summary back ([`read_summary`]), refusing unknown fields.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary<'a> {
    schema_version: u32,
    verdict: Overall,
    mode: Mode,
    rounds: usize,
    base_commit: Option<Cow<'a, str>>,
    head_commit: Option<Cow<'a, str>>,
    base: Cow<'a, str>,
    head: Cow<'a, str>,
    fingerprint: Option<Cow<'a, str>>,
    statistic: String,
    confidence: f64,
    false_alarm_rate: f64,
    counts: Counts,
    benchmarks: Vec<SummaryBenchmark<'a>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    budgets: Vec<BudgetResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    builds: Vec<SideBuild>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<Cow<'a, str>>,
}

/// How many benchmarks got each verdict, in the schema's order.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
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

#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryBenchmark<'a> {
    id: Cow<'a, str>,
    metric: Metric,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unit: Option<Cow<'a, str>>,
    verdict: Verdict,
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
    throughput: Option<SummaryThroughput<'a>>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryThroughput<'a> {
    kind: Cow<'a, str>,
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
        verdict: decision.verdict,
        mode: decision.mode,
        rounds: decision.rounds,
        base_commit: context.base_commit.as_deref().map(Cow::Borrowed),
        head_commit: context.head_commit.as_deref().map(Cow::Borrowed),
        base: Cow::Borrowed(&context.base),
        head: Cow::Borrowed(&context.head),
        fingerprint: context.fingerprint.as_deref().map(Cow::Borrowed),
        statistic: policy.statistic.name(),
        confidence: policy.confidence,
        false_alarm_rate: policy.false_alarm_rate,
        counts,
        benchmarks: decision
            .benchmarks
            .iter()
            .map(|b| SummaryBenchmark {
                id: Cow::Borrowed(&b.id),
                metric: b.metric,
                unit: b.unit.as_deref().map(Cow::Borrowed),
                verdict: b.verdict,
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
                    .map(|(kind, amount)| SummaryThroughput {
                        kind: Cow::Borrowed(kind),
                        amount,
                    }),
            })
            .collect(),
        budgets: decision.budgets.clone(),
        builds: context.builds.clone(),
        source: context.source.as_deref().map(Cow::Borrowed),
    }
}

/// A `perf-summary.json` read back: what `benchgate publish` renders the comment and the check
/// from. The policy carries only what the renderings use (statistic, confidence, error rate).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadSummary {
    /// The decision, every benchmark as reported.
    pub decision: Decision,
    /// What was compared.
    pub context: Context,
    /// The default policy with the summary's statistic, confidence and false-alarm rate.
    pub policy: Policy,
}

/// The longest benchmark id a summary may carry (Criterion's own ids are far shorter).
const MAX_ID_LENGTH: usize = 1024;

/// Reads a `perf-summary.json` written by this version (schema 1). The text is untrusted (it may
/// come from a fork's artifact): every field is checked, unknown fields are refused, and errors
/// name the file and the field.
pub fn read_summary(path: &std::path::Path, text: &str) -> crate::Result<ReadSummary> {
    let error = |field: String, message: String| crate::Error::Summary {
        path: path.to_owned(),
        field,
        message,
    };
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    let summary: Summary<'static> = serde_path_to_error::deserialize(deserializer)
        .map_err(|e| error(e.path().to_string(), e.inner().to_string()))?;
    if summary.schema_version != SCHEMA_VERSION {
        return Err(error(
            "schema_version".into(),
            format!(
                "{} is not supported; this benchgate reads schema {SCHEMA_VERSION}",
                summary.schema_version
            ),
        ));
    }
    let statistic = crate::policy::Statistic::parse(&summary.statistic).ok_or_else(|| {
        error(
            "statistic".into(),
            format!("{:?} is not median, min or pNN", summary.statistic),
        )
    })?;
    let unit = |value: f64| value.is_finite() && value > 0.0 && value < 1.0;
    if !unit(summary.confidence) {
        return Err(error("confidence".into(), "must lie in (0, 1)".into()));
    }
    if !unit(summary.false_alarm_rate) {
        return Err(error(
            "false_alarm_rate".into(),
            "must lie in (0, 1)".into(),
        ));
    }
    let mut benchmarks = Vec::with_capacity(summary.benchmarks.len());
    for (i, b) in summary.benchmarks.into_iter().enumerate() {
        let field = |name: &str| format!("benchmarks[{i}].{name}");
        let id = b.id.into_owned();
        if id.is_empty() || id.len() > MAX_ID_LENGTH || id.chars().any(char::is_control) {
            return Err(error(
                field("id"),
                format!("must be 1 to {MAX_ID_LENGTH} characters without control characters"),
            ));
        }
        if !(b.limit.is_finite() && b.limit > 1.0) {
            return Err(error(field("limit"), "must be a time ratio above 1".into()));
        }
        let throughput = match b.throughput {
            None => None,
            Some(t) => {
                let kind = [
                    "Bytes",
                    "BytesDecimal",
                    "Elements",
                    "Bits",
                    "ElementsAndBytes",
                ]
                .into_iter()
                .find(|k| *k == t.kind)
                .ok_or_else(|| {
                    error(
                        field("throughput.kind"),
                        format!("{:?} is not a Criterion throughput kind", t.kind),
                    )
                })?;
                Some((kind, t.amount))
            }
        };
        benchmarks.push(BenchmarkResult {
            id,
            metric: b.metric,
            unit: b.unit.map(Cow::into_owned),
            verdict: b.verdict,
            base_ns: b.base,
            head_ns: b.head,
            throughput_per_iteration: throughput,
            ratio: b.ratio,
            limit: b.limit,
            noise: b.noise,
            interval: b.interval.map(|[low, high]| (low, high)),
            p_slower: b.p_slower,
            noise_source: b.noise_source,
            uncalibrated: b.uncalibrated,
            rounds: b.rounds,
        });
    }
    let policy = Policy {
        statistic,
        confidence: summary.confidence,
        false_alarm_rate: summary.false_alarm_rate,
        ..Policy::default()
    };
    Ok(ReadSummary {
        decision: Decision {
            verdict: summary.verdict,
            mode: summary.mode,
            rounds: summary.rounds,
            benchmarks,
            budgets: summary.budgets,
        },
        context: Context {
            base: summary.base.into_owned(),
            head: summary.head.into_owned(),
            base_commit: summary.base_commit.map(Cow::into_owned),
            head_commit: summary.head_commit.map(Cow::into_owned),
            fingerprint: summary.fingerprint.map(Cow::into_owned),
            builds: summary.builds,
            source: summary.source.map(Cow::into_owned),
        },
        policy,
    })
}

/// `perf-summary.json` as a JSON value, for callers that inspect or embed it.
pub fn summary_json(decision: &Decision, context: &Context, policy: &Policy) -> Value {
    // Serializing these types into a value cannot fail: every map key is a string.
    serde_json::to_value(summary(decision, context, policy)).unwrap_or(Value::Null)
}

/// The headline: the verdict first, with the worst regression.
pub fn headline(decision: &Decision) -> String {
    let missed = decision.missed_budgets();
    let base = regression_headline(decision);
    if missed == 0 {
        base
    } else {
        format!(
            "{base}; {missed} of {} budget{} missed",
            decision.budgets.len(),
            if decision.budgets.len() == 1 { "" } else { "s" }
        )
    }
}

fn regression_headline(decision: &Decision) -> String {
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
        (Some(ratio), Metric::Lower) => signed_percent(ratio - 1.0),
        (Some(ratio), Metric::Higher) => signed_percent(1.0 / ratio - 1.0),
        (None, _) => "-".to_owned(),
    }
}

fn limit_text(b: &BenchmarkResult) -> String {
    if b.metric.higher_is_better() {
        signed_percent(1.0 / b.limit - 1.0)
    } else {
        signed_percent(b.limit - 1.0)
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

fn value_text(ns: Option<f64>, unit: Option<&str>) -> String {
    ns.map_or_else(|| "-".to_owned(), |value| format_measure(value, unit))
}

/// A value as people read it: ns per iteration (`unit` `None`) or a custom metric's value in
/// its unit; a custom metric in a time unit reads like a time (`41.20 ms`).
pub fn format_measure(value: f64, unit: Option<&str>) -> String {
    let Some(unit) = unit else {
        return format_ns(value);
    };
    let ns_per_unit = match unit {
        "ns" => 1.0,
        "µs" | "μs" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return format!("{} {unit}", format_value(value)),
    };
    format_ns(value * ns_per_unit)
}

/// A custom metric's value: four significant digits, no exponent for everyday magnitudes.
pub fn format_value(value: f64) -> String {
    let magnitude = if value == 0.0 {
        0
    } else {
        value.abs().log10().floor() as i32
    };
    if (-3..6).contains(&magnitude) {
        let decimals = (3 - magnitude).max(0) as usize;
        format!("{value:.decimals$}")
    } else {
        format!("{value:.3e}")
    }
}

fn row(b: &BenchmarkResult, with_verdict: bool) -> Vec<String> {
    let mut cells = vec![format!("`{}`", b.id.replace('`', "'").replace('|', "\\|"))];
    if with_verdict {
        cells.push(b.verdict.as_str().to_owned());
    }
    cells.extend([
        value_text(b.base_ns, b.unit.as_deref()),
        value_text(b.head_ns, b.unit.as_deref()),
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
        if decision.missed_budgets() > 0 {
            "❌"
        } else {
            verdict_icon(decision.verdict)
        },
        headline(decision)
    );
    let _ = writeln!(out, "{}\n", comparison_sentence(decision, context, policy));
    if let Some(builds) = builds_sentence(context) {
        let _ = writeln!(out, "{builds}\n");
    }
    budget_checklist(&mut out, &decision.budgets);

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

/// A value of a budget as people read it: times in ns…s, rates in B/s…GiB/s, ratios as `1.05x`.
fn budget_value(value: f64, unit: &str) -> String {
    match unit {
        "ns" => format_ns(value),
        "x" => format!("{value:.3}x"),
        "B/s" | "B" => {
            let (scaled, prefix) = [
                ("Gi", 1024f64.powi(3)),
                ("Mi", 1024f64.powi(2)),
                ("Ki", 1024.0),
            ]
            .into_iter()
            .find(|(_, scale)| value >= *scale)
            .map_or((value, ""), |(prefix, scale)| (value / scale, prefix));
            format!("{scaled:.3} {prefix}{unit}")
        }
        "elem/s" => {
            let (scaled, prefix) = [("G", 1e9), ("M", 1e6), ("K", 1e3)]
                .into_iter()
                .find(|(_, scale)| value >= *scale)
                .map_or((value, ""), |(prefix, scale)| (value / scale, prefix));
            format!("{scaled:.3} {prefix}elem/s")
        }
        // A custom metric's own unit (`conn/s`, `%`): the value as it was given.
        other => format!("{} {other}", format_value(value)),
    }
}

/// The budgets as a checklist, the shape of the "pass if all true" lists projects keep.
fn budget_checklist(out: &mut String, budgets: &[BudgetResult]) {
    if budgets.is_empty() {
        return;
    }
    let count = |v: BudgetVerdict| budgets.iter().filter(|b| b.verdict == v).count();
    let _ = writeln!(
        out,
        "### Budgets ({} met, {} missed, {} unclear)\n\n| | benchmark | budget | value | 95% interval |\n|---|---|---|---|---|",
        count(BudgetVerdict::Met),
        count(BudgetVerdict::Missed),
        count(BudgetVerdict::Unclear)
    );
    for b in budgets {
        let mark = match b.verdict {
            BudgetVerdict::Met => "✅",
            BudgetVerdict::Missed if b.warn => "⚠️",
            BudgetVerdict::Missed => "❌",
            BudgetVerdict::Unclear => "❔",
        };
        let value = b.value.map_or("—".to_owned(), |v| budget_value(v, &b.unit));
        let interval = b.interval.map_or("—".to_owned(), |[low, high]| {
            format!(
                "{} – {}",
                budget_value(low, &b.unit),
                budget_value(high, &b.unit)
            )
        });
        let note = b
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {mark} | `{}` | {} {}{}{note} | {value} | {interval} |",
            b.benchmark.replace('|', "\\|"),
            b.statistic,
            b.expression.replace('|', "\\|"),
            if b.warn { " (warn)" } else { "" }
        );
    }
    out.push('\n');
}

/// Which executables each side ran (same-job A/B), by target and the start of their hash.
fn builds_sentence(context: &Context) -> Option<String> {
    if context.builds.is_empty() {
        return None;
    }
    let sides: Vec<String> = context
        .builds
        .iter()
        .map(|build| {
            let executables: Vec<String> = build
                .executables
                .iter()
                .map(|e| format!("`{}` `{}`", e.target, &e.sha256[..e.sha256.len().min(12)]))
                .collect();
            format!(
                "{} `{}`: {}",
                build.side,
                &build.commit[..build.commit.len().min(12)],
                executables.join(", ")
            )
        })
        .collect();
    Some(format!(
        "Each side ran the executables built from its own sources (SHA-256): {}.",
        sides.join("; ")
    ))
}

/// How the comparison was made and how sure the gate is, in one paragraph.
fn comparison_sentence(decision: &Decision, context: &Context, policy: &Policy) -> String {
    let how = match (&context.source, decision.mode) {
        (Some(source), _) => source.clone(),
        (None, Mode::SameJobAb) => {
            format!("same-job A/B, {} rounds alternating", decision.rounds)
        }
        (None, Mode::StoredBaseline) => "stored baseline".to_owned(),
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
    if decision.verdict == Overall::NoBaseline {
        return format!(
            "Head `{}` has no comparable baseline: no stored run of `{}` or its nearest ancestors{machine}. Nothing was compared, so nothing passed or failed. Store a run of the base branch on this machine (a push or nightly run), or run base and head in the same job (`benchgate ab`).",
            context.head, context.base
        );
    }
    if compared == 0 {
        return format!(
            "Head `{}` against base `{}` ({how}){machine}: no benchmark was measured on both sides, so none was compared.",
            context.head, context.base
        );
    }
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
            crate::policy::Statistic::Median => "median".to_owned(),
            crate::policy::Statistic::Quantile(0.0) => "minimum".to_owned(),
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
    if let Some(builds) = builds_sentence(context) {
        let _ = writeln!(out, "{}\n", builds.replace('`', ""));
    }
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
