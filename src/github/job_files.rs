//! What a job shows of a verdict on its own runner: the job summary (`GITHUB_STEP_SUMMARY`) and
//! the step outputs (`GITHUB_OUTPUT`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use benchgate_gate::decision::Verdict;
use benchgate_gate::github_text::{Measure, OverrideNote, STEP_SUMMARY_LIMIT, fit, with_override};
use benchgate_gate::report::{ReadSummary, render_markdown_linked};

use super::target::{Target, env};

/// What a job shows of a verdict it does not publish (`--to-artifact`): the job summary and
/// the step outputs.
pub(super) fn write_job_files(
    target: &Target,
    summary: &ReadSummary,
    summary_path: &Path,
) -> anyhow::Result<()> {
    let markdown = render_markdown_linked(
        &summary.decision,
        &summary.context,
        &summary.policy,
        &target.links(),
    );
    write_step_summary(target, &markdown, None)?;
    write_outputs(target, summary, summary_path, false)
}

pub(super) fn write_step_summary(
    target: &Target,
    markdown: &str,
    overriding: Option<&OverrideNote>,
) -> anyhow::Result<()> {
    let Some(path) = target
        .args
        .step_summary
        .clone()
        .or_else(|| env("GITHUB_STEP_SUMMARY").map(PathBuf::from))
    else {
        return Ok(());
    };
    let text = fit(
        &with_override(markdown, overriding),
        STEP_SUMMARY_LIMIT,
        Measure::Bytes,
    );
    append(&path, &text).with_context(|| format!("job summary {}", path.display()))
}

pub(super) fn write_outputs(
    target: &Target,
    summary: &ReadSummary,
    summary_path: &Path,
    overridden: bool,
) -> anyhow::Result<()> {
    let Some(path) = target
        .args
        .output
        .clone()
        .or_else(|| env("GITHUB_OUTPUT").map(PathBuf::from))
    else {
        return Ok(());
    };
    let count = |verdict: Verdict| {
        summary
            .decision
            .benchmarks
            .iter()
            .filter(|b| b.verdict == verdict)
            .count()
    };
    let report_path = std::path::absolute(summary_path).unwrap_or_else(|_| summary_path.to_owned());
    let verdict = if overridden {
        "overridden"
    } else {
        summary.decision.verdict.as_str()
    };
    let lines = format!(
        "verdict={verdict}\nregressions={}\nimprovements={}\nreport-path={}\n",
        count(Verdict::Regressed),
        count(Verdict::Improved),
        report_path.display()
    );
    append(&path, &lines).with_context(|| format!("step outputs {}", path.display()))
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        file.write_all(b"\n")?;
    }
    Ok(())
}
