//! `perf-summary.json`: the stable, versioned schema of a decision, written straight from the
//! decision and read back (by `publish`, also from an untrusted fork artifact) strictly.

use std::borrow::Cow;

use serde_json::Value;

use super::{Context, Cost, CountProfile, Incomplete, SideBuild};
use crate::budget::BudgetResult;
use crate::decision::{
    BenchmarkResult, Decision, DecisionBound, Metric, Mode, NoiseSource, Overall, TooNoisy, Verdict,
};
use crate::policy::Policy;

/// The version of the `perf-summary.json` schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

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
    /// The round that failed, when the job stopped early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    incomplete: Option<Incomplete>,
    /// Facts about how the sides were built.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    notes: Vec<Cow<'a, str>>,
    /// Counts stored but not judged (no limit under `[instructions]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    unjudged: Vec<Cow<'a, str>>,
    /// Same-job A/B: wall time in the bench executables, both sides, every round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bench_seconds: Option<f64>,
    /// Same-job A/B: wall time building both sides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    build_seconds: Option<f64>,
    /// Where each count regression's instructions went, by function.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    profiles: Vec<CountProfile>,
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
    #[serde(default, skip_serializing_if = "is_zero")]
    set_aside: usize,
    #[serde(default, skip_serializing_if = "is_at_most_one")]
    base_runs: usize,
    p_slower: Option<f64>,
    throughput: Option<SummaryThroughput<'a>>,
    /// The head's own amount of work per iteration, where it differs from the base's
    /// (`throughput.amount`): `head` is then its time at the base's amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    head_amount: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bound: Option<DecisionBound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detectable: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    too_noisy: Option<TooNoisy>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    futile: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    quarantined: Option<Cow<'a, str>>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryThroughput<'a> {
    kind: Cow<'a, str>,
    amount: u64,
}

fn is_at_most_one(n: &usize) -> bool {
    *n <= 1
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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
                set_aside: b.set_aside,
                base_runs: b.base_runs,
                p_slower: b.p_slower,
                throughput: b
                    .throughput_per_iteration
                    .map(|(kind, amount)| SummaryThroughput {
                        kind: Cow::Borrowed(kind),
                        amount,
                    }),
                head_amount: b.head_work,
                bound: b.bound,
                detectable: b.detectable,
                too_noisy: b.too_noisy,
                futile: b.futile,
                quarantined: b.quarantined.as_deref().map(Cow::Borrowed),
            })
            .collect(),
        budgets: decision.budgets.clone(),
        builds: context.builds.clone(),
        source: context.source.as_deref().map(Cow::Borrowed),
        incomplete: context.incomplete.clone(),
        notes: context
            .notes
            .iter()
            .map(|n| Cow::Borrowed(n.as_str()))
            .collect(),
        unjudged: decision
            .unjudged
            .iter()
            .map(|id| Cow::Borrowed(id.as_str()))
            .collect(),
        bench_seconds: context.cost.map(|c| c.bench_seconds),
        build_seconds: context.cost.map(|c| c.build_seconds),
        profiles: context.profiles.clone(),
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
    let mut summary: Summary<'static> = serde_path_to_error::deserialize(deserializer)
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
    check_texts(&summary.notes, summary.incomplete.as_ref(), &error)?;
    check_profiles(&summary.profiles, &error)?;
    let profiles = std::mem::take(&mut summary.profiles);
    let cost = match (summary.bench_seconds, summary.build_seconds) {
        (None, None) => None,
        (Some(bench), Some(build)) => {
            for (field, value) in [("bench_seconds", bench), ("build_seconds", build)] {
                if !(value.is_finite() && value >= 0.0) {
                    return Err(error(
                        field.into(),
                        format!("is {value}; seconds are finite and not negative"),
                    ));
                }
            }
            Some(Cost {
                bench_seconds: bench,
                build_seconds: build,
            })
        }
        _ => {
            return Err(error(
                "bench_seconds".into(),
                "comes with build_seconds, or neither is given".into(),
            ));
        }
    };
    let mut benchmarks = Vec::with_capacity(summary.benchmarks.len());
    for (i, b) in summary.benchmarks.into_iter().enumerate() {
        benchmarks.push(benchmark_of(i, b, &error)?);
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
            unjudged: summary.unjudged.into_iter().map(Cow::into_owned).collect(),
        },
        context: Context {
            base: summary.base.into_owned(),
            head: summary.head.into_owned(),
            base_commit: summary.base_commit.map(Cow::into_owned),
            head_commit: summary.head_commit.map(Cow::into_owned),
            fingerprint: summary.fingerprint.map(Cow::into_owned),
            builds: summary.builds,
            source: summary.source.map(Cow::into_owned),
            incomplete: summary.incomplete,
            notes: summary.notes.into_iter().map(Cow::into_owned).collect(),
            cost,
            profiles,
        },
        policy,
    })
}

/// How a summary's field error is made: the field, the message.
type FieldError<'a> = dyn Fn(String, String) -> crate::Error + 'a;

/// The most functions a profile in a summary may list.
const MAX_PROFILE_ROWS: usize = 20;
/// The longest function name a summary may carry, in characters.
const MAX_FUNCTION_NAME: usize = 2_000;

/// Profiles are text a fork's artifact puts into the comment: a few rows of names without
/// control characters, whose rows and rest add up to the totals' change.
fn check_profiles(profiles: &[CountProfile], error: &FieldError<'_>) -> Result<(), crate::Error> {
    for (i, profile) in profiles.iter().enumerate() {
        let field = |what: &str| format!("profiles[{i}].{what}");
        if profile.rows.len() > MAX_PROFILE_ROWS {
            return Err(error(
                field("rows"),
                format!(
                    "has {} rows; at most {MAX_PROFILE_ROWS}",
                    profile.rows.len()
                ),
            ));
        }
        for (j, row) in profile.rows.iter().chain([&profile.rest]).enumerate() {
            if row.function.chars().count() > MAX_FUNCTION_NAME
                || row.function.chars().any(char::is_control)
            {
                return Err(error(
                    field(&format!("rows[{j}].function")),
                    format!(
                        "must be at most {MAX_FUNCTION_NAME} characters, none a control character"
                    ),
                ));
            }
        }
        let rows: i128 = profile.rows.iter().map(super::ProfileRow::change).sum();
        if rows + profile.rest.change() != profile.change() {
            return Err(error(
                field("rest"),
                "the rows and the rest do not add up to head_total minus base_total".to_owned(),
            ));
        }
    }
    Ok(())
}

/// The notes and the account of a job that stopped early: text a fork's artifact puts into
/// the comment, so short lines and no control characters.
fn check_texts(
    notes: &[Cow<'_, str>],
    incomplete: Option<&Incomplete>,
    error: &FieldError<'_>,
) -> crate::Result<()> {
    let plain = |text: &str| text.len() <= MAX_ID_LENGTH && !text.chars().any(char::is_control);
    for (i, note) in notes.iter().enumerate() {
        if !plain(note) {
            return Err(error(
                format!("notes[{i}]"),
                format!("must be at most {MAX_ID_LENGTH} characters without control characters"),
            ));
        }
    }
    if let Some(incomplete) = incomplete {
        let lines_ok = incomplete.stderr_tail.len() <= crate::report::MAX_STDERR_TAIL
            && incomplete.stderr_tail.iter().all(|l| plain(l));
        if !(plain(&incomplete.side) && plain(&incomplete.failure) && lines_ok) {
            return Err(error(
                "incomplete".into(),
                format!(
                    "at most {} lines of at most {MAX_ID_LENGTH} characters without control characters",
                    crate::report::MAX_STDERR_TAIL
                ),
            ));
        }
        if incomplete.round < 2 {
            return Err(error(
                "incomplete.round".into(),
                "a job that stopped early completed at least its first round".into(),
            ));
        }
    }
    Ok(())
}

/// One benchmark of a summary, every field checked.
fn benchmark_of(
    i: usize,
    b: SummaryBenchmark<'_>,
    error: &FieldError<'_>,
) -> crate::Result<BenchmarkResult> {
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
    let quarantined = b.quarantined.map(Cow::into_owned);
    if quarantined
        .as_deref()
        .is_some_and(|r| r.len() > MAX_ID_LENGTH || r.chars().any(char::is_control))
    {
        return Err(error(
            field("quarantined"),
            format!("must be at most {MAX_ID_LENGTH} characters without control characters"),
        ));
    }
    if b.head_amount == Some(0) || (b.head_amount.is_some() && throughput.is_none()) {
        return Err(error(
            field("head_amount"),
            "must be a positive amount of work, beside a throughput".into(),
        ));
    }
    if b.set_aside >= b.rounds.max(1) {
        return Err(error(
            field("set_aside"),
            format!(
                "{} rounds set aside of {}: a verdict keeps at least one",
                b.set_aside, b.rounds
            ),
        ));
    }
    Ok(BenchmarkResult {
        id,
        metric: b.metric,
        unit: b.unit.map(Cow::into_owned),
        verdict: b.verdict,
        base_ns: b.base,
        head_ns: b.head,
        throughput_per_iteration: throughput,
        head_work: b.head_amount,
        ratio: b.ratio,
        limit: b.limit,
        noise: b.noise,
        interval: b.interval.map(|[low, high]| (low, high)),
        p_slower: b.p_slower,
        noise_source: b.noise_source,
        uncalibrated: b.uncalibrated,
        rounds: b.rounds,
        set_aside: b.set_aside,
        base_runs: b.base_runs.max(usize::from(b.ratio.is_some())),
        bound: b.bound,
        detectable: b.detectable,
        too_noisy: b.too_noisy,
        futile: b.futile,
        quarantined,
        pass_on_floor: false,
    })
}

/// `perf-summary.json` as a JSON value, for callers that inspect or embed it.
pub fn summary_json(decision: &Decision, context: &Context, policy: &Policy) -> Value {
    // Serializing these types into a value cannot fail: every map key is a string.
    serde_json::to_value(summary(decision, context, policy)).unwrap_or(Value::Null)
}
