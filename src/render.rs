//! Text and JSON renderings of runs, measurements and hardware profiles for the terminal and for
//! scripts. The JSON shapes are documented in docs/schema.md and stable.

use std::fmt::Write as _;
use std::time::SystemTime;

use benchgate_collector::wire::reads::RunSummaryJson;
use benchgate_collector::{Estimate, HardwareProfile, Measurement, RunSummary, StoredRun};
use benchgate_gate::report::{format_measure, format_rate};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The file `benchgate fingerprint --format json` writes and `ingest --fingerprint` reads.
#[derive(Serialize, Deserialize)]
pub struct ProfileFile {
    /// The fingerprint hash.
    pub fingerprint: String,
    /// Every component, hashed or recorded.
    pub profile: HardwareProfile,
}

fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

/// A run's summary as JSON (`runs --format json`; the service's shape adds `recorded_at_ms`).
fn summary_json(run: &RunSummary) -> Value {
    serde_json::to_value(RunSummaryJson::new(run)).unwrap_or(Value::Null)
}

fn estimate_json(estimate: &Estimate) -> Value {
    json!({ "point": estimate.point, "lower": estimate.lower, "upper": estimate.upper })
}

fn measurement_json(m: &Measurement) -> Value {
    let throughput = m.throughput.map(|t| {
        let mut value = json!({ "kind": t.kind(), "amount": t.amount() });
        if let Some(bytes) = t.secondary_bytes() {
            value["bytes"] = json!(bytes);
        }
        value
    });
    json!({
        "id": m.id.as_str(),
        "throughput": throughput,
        "mean": estimate_json(&m.mean),
        "median": estimate_json(&m.median),
        "n_samples": m.samples.len(),
        "metric": m.custom.as_ref().map(|c| json!({ "unit": c.unit, "direction": c.direction.as_str() })),
    })
}

/// A value of `m`: a time, or a custom metric's value in its unit.
fn value_text(m: &Measurement, value: f64) -> String {
    format_measure(value, m.custom.as_ref().map(|c| c.unit.as_str()))
}

/// `benchgate runs`.
pub fn runs(runs: &[RunSummary], as_json: bool) -> anyhow::Result<String> {
    if as_json {
        let list: Vec<Value> = runs.iter().map(summary_json).collect();
        return Ok(serde_json::to_string_pretty(&list)? + "\n");
    }
    if runs.is_empty() {
        return Ok("no runs stored yet; add one with `benchgate ingest`\n".to_owned());
    }
    let rows: Vec<[String; 9]> = runs
        .iter()
        .map(|r| {
            [
                r.id.to_string(),
                r.meta.repository.to_string(),
                r.meta.commit.short().to_owned(),
                r.meta.branch.clone().unwrap_or_else(|| "-".to_owned()),
                match r.meta.pr_number {
                    Some(pr) => format!("{} #{pr}", r.meta.kind),
                    None => r.meta.kind.to_string(),
                },
                r.meta.attempt.to_string(),
                r.fingerprint.short().to_owned(),
                timestamp(r.recorded_at),
                r.n_benchmarks.to_string(),
            ]
        })
        .collect();
    let header = [
        "ID",
        "REPOSITORY",
        "COMMIT",
        "BRANCH",
        "KIND",
        "ATTEMPT",
        "FINGERPRINT",
        "RECORDED",
        "BENCHMARKS",
    ];
    Ok(table(&header, &rows))
}

/// `benchgate show RUN`.
pub fn run(run: &StoredRun, as_json: bool) -> anyhow::Result<String> {
    if as_json {
        let value = json!({
            "run": summary_json(&run.summary),
            "measurements": run.measurements.iter().map(measurement_json).collect::<Vec<_>>(),
        });
        return Ok(serde_json::to_string_pretty(&value)? + "\n");
    }
    let s = &run.summary;
    let mut out = String::new();
    writeln!(
        out,
        "run {}: {}@{} ({}{}, attempt {}){}",
        s.id,
        s.meta.repository,
        s.meta.commit.short(),
        s.meta.kind,
        s.meta
            .pr_number
            .map(|pr| format!(" #{pr}"))
            .unwrap_or_default(),
        s.meta.attempt,
        s.meta
            .branch
            .as_deref()
            .map(|b| format!(" on {b}"))
            .unwrap_or_default()
    )?;
    // An imported history's machine is known only by its origin ("imported suite NAME").
    let machine = if run.profile.logical_cores == 0 {
        run.profile.cpu_brand.clone()
    } else {
        format!(
            "{}, {} cores, {}",
            run.profile.cpu_brand, run.profile.logical_cores, run.profile.rustc_version
        )
    };
    writeln!(
        out,
        "recorded {} on {} ({machine})",
        timestamp(s.recorded_at),
        s.fingerprint.short(),
    )?;
    writeln!(out)?;
    let rows: Vec<[String; 5]> = run
        .measurements
        .iter()
        .map(|m| {
            [
                m.id.to_string(),
                with_interval(m, &m.median),
                with_interval(m, &m.mean),
                m.throughput
                    .map(|t| format_throughput(t.kind(), t.amount(), m.median.point))
                    .unwrap_or_else(|| "-".to_owned()),
                m.samples.len().to_string(),
            ]
        })
        .collect();
    out.push_str(&table(
        &["BENCHMARK", "MEDIAN", "MEAN", "THROUGHPUT", "SAMPLES"],
        &rows,
    ));
    Ok(out)
}

/// `benchgate fingerprint`.
pub fn profile(profile: &HardwareProfile, as_json: bool) -> anyhow::Result<String> {
    let fingerprint = profile.fingerprint();
    if as_json {
        let file = ProfileFile {
            fingerprint: fingerprint.to_string(),
            profile: profile.clone(),
        };
        return Ok(serde_json::to_string_pretty(&file)? + "\n");
    }
    let mut out = String::new();
    writeln!(out, "hardware profile {}", fingerprint)?;
    writeln!(out, "\nhashed into the fingerprint:")?;
    for (name, value) in profile.hashed_components() {
        writeln!(
            out,
            "  {name:<22}{}",
            if value.is_empty() { "-" } else { &value }
        )?;
    }
    writeln!(out, "\nrecorded, not hashed:")?;
    let unhashed = [
        ("hostname", profile.hostname.clone()),
        (
            "cpu_frequency_mhz",
            profile.cpu_frequency_mhz.map(|mhz| mhz.to_string()),
        ),
        ("kernel_version", profile.kernel_version.clone()),
        ("os_version", profile.os_version.clone()),
    ];
    for (name, value) in unhashed {
        writeln!(out, "  {name:<22}{}", value.as_deref().unwrap_or("-"))?;
    }
    Ok(out)
}

/// An estimate with its interval's half-width (`1.234 µs ±0.8%`); a bare value (an imported
/// history's, one sample, no range) has none to show, not a spread of 0.0%.
fn with_interval(m: &Measurement, estimate: &Estimate) -> String {
    let value = value_text(m, estimate.point);
    if m.samples.len() < 2 && estimate.lower == estimate.upper {
        return value;
    }
    format!("{value} ±{:.1}%", half_width_percent(estimate))
}

fn half_width_percent(estimate: &Estimate) -> f64 {
    if estimate.point > 0.0 {
        (estimate.upper - estimate.lower) / 2.0 / estimate.point * 100.0
    } else {
        0.0
    }
}

/// Throughput at the median time, in the units Criterion would print.
fn format_throughput(kind: &str, amount: u64, ns_per_iteration: f64) -> String {
    if ns_per_iteration <= 0.0 {
        return "-".to_owned();
    }
    format_rate(ns_per_iteration, kind, amount)
}

fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            text.push_str(cell);
            text.extend(std::iter::repeat_n(' ', widths[i] - cell.chars().count()));
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}
