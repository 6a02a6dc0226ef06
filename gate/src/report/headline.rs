//! The report's first line (the verdict, the worst change, what else moved) and the check
//! run's line of counts and bounds.

use std::fmt::Write as _;

use super::cells::{bound_text, change_text};
use super::is_too_noisy;
use crate::verdict::{BenchmarkResult, Decision, Mode, Overall, Verdict};

/// The benchmark whose change (head against base, above 1 worse) is the largest.
pub(super) fn largest_change<'a>(rows: &[&'a BenchmarkResult]) -> Option<&'a BenchmarkResult> {
    rows.iter()
        .copied()
        .max_by(|a, b| a.ratio.unwrap_or(1.0).total_cmp(&b.ratio.unwrap_or(1.0)))
}

/// When benchmarks left undecided moved further than the worst confirmed regression, the
/// headline says so: the largest changes are not hidden further down.
pub(super) fn larger_unconfirmed(decision: &Decision) -> String {
    let worst = decision
        .worst_regression()
        .and_then(|b| b.ratio)
        .unwrap_or(f64::INFINITY);
    let larger: Vec<&BenchmarkResult> = decision
        .benchmarks
        .iter()
        .filter(|b| {
            b.verdict == Verdict::Inconclusive
                && b.quarantined.is_none()
                && b.ratio.is_some_and(|r| r > worst)
        })
        .collect();
    match largest_change(&larger) {
        None => String::new(),
        Some(largest) => format!(
            "; {} more possibly slower, up to {}, unconfirmed",
            larger.len(),
            change_text(largest)
        ),
    }
}

/// What improved, for the end of a headline that has no regression to lead with: `; 3
/// improved, up to 76.8% faster`. An improvement is news a reader wants in the first line too,
/// not only in its section; beside a regression it would only lengthen the line that has to
/// say what failed.
pub(super) fn improved_tail(decision: &Decision) -> String {
    let improved: Vec<&BenchmarkResult> = decision
        .benchmarks
        .iter()
        .filter(|b| b.verdict == Verdict::Improved)
        .collect();
    let best = improved
        .iter()
        .copied()
        .min_by(|a, b| a.ratio.unwrap_or(1.0).total_cmp(&b.ratio.unwrap_or(1.0)));
    match (improved.len(), best) {
        (0, _) | (_, None) => String::new(),
        (1, Some(best)) => format!("; 1 improved: {} {}", best.id, change_text(best)),
        (n, Some(best)) => format!("; {n} improved, up to {}", change_text(best)),
    }
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

pub(super) fn regression_headline(decision: &Decision) -> String {
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
                "regressed: {} of {compared} benchmarks slower than their limit{worst}{}",
                decision.count(Verdict::Regressed),
                larger_unconfirmed(decision)
            )
        }
        Overall::Inconclusive => {
            // Past the limit but not confirmed (too few rounds, or too noisy): say so first.
            let suspected: Vec<&BenchmarkResult> = decision
                .benchmarks
                .iter()
                .filter(|b| {
                    b.verdict == Verdict::Inconclusive
                        && b.quarantined.is_none()
                        && b.ratio.is_some_and(|r| r >= b.limit)
                })
                .collect();
            let undecided = decision.count(Verdict::Inconclusive);
            // Judged against an assumed noise level (†): nothing has measured them yet, so they
            // are neither too noisy nor sure to be decided by more head runs of a stored
            // baseline, which keep the assumption until the machine has history.
            let all_unmeasured = decision
                .benchmarks
                .iter()
                .filter(|b| b.verdict == Verdict::Inconclusive)
                .all(|b| b.uncalibrated);
            let noisy = decision
                .benchmarks
                .iter()
                .filter(|b| is_too_noisy(b))
                .count();
            let improved = improved_tail(decision);
            match largest_change(&suspected) {
                None if all_unmeasured => format!(
                    "inconclusive: {undecided} of {compared} benchmarks undecided against an assumed noise level (†); none confirmed regressed{improved}"
                ),
                // The headline's counts are the sections': "Inconclusive" and "Too noisy to
                // gate" are two of them.
                None => {
                    let counts = match (undecided - noisy, noisy) {
                        (0, noisy) => format!("{noisy} of {compared} benchmarks too noisy to gate"),
                        (rest, 0) => format!("{rest} of {compared} benchmarks undecided"),
                        (rest, noisy) => format!(
                            "{rest} of {compared} benchmarks undecided, {noisy} too noisy to gate"
                        ),
                    };
                    format!("inconclusive: {counts}; none confirmed regressed{improved}")
                }
                Some(worst) => {
                    let others = undecided - suspected.len();
                    // Only where some of them could still be decided: a benchmark too noisy
                    // to gate stays undecided at the most rounds the plan allows.
                    let more = if suspected.iter().all(|b| is_too_noisy(b)) {
                        ""
                    } else if decision.mode == Mode::StoredBaseline
                        && suspected.iter().all(|b| b.uncalibrated)
                    {
                        "; too little history on this machine to confirm them (†)"
                    } else {
                        "; more rounds would confirm or clear them"
                    };
                    format!(
                        "inconclusive: {} of {compared} benchmarks past their limit but unconfirmed (worst: {} {}){more}{}{improved}",
                        suspected.len(),
                        worst.id,
                        change_text(worst),
                        match (others, noisy) {
                            (0, 0) => String::new(),
                            (others, 0) => format!("; {others} more undecided"),
                            (_, noisy) if noisy == undecided => {
                                format!("; all {noisy} too noisy to gate")
                            }
                            (_, noisy) => format!(
                                "; {} inconclusive, {noisy} too noisy to gate",
                                undecided - noisy
                            ),
                        }
                    )
                }
            }
        }
        Overall::Pass => format!(
            "pass: no regression in {compared} benchmarks{}",
            improved_tail(decision)
        ),
        Overall::NoBaseline => "no baseline: nothing comparable to compare against".to_owned(),
    }
}

pub(super) fn verdict_icon(verdict: Overall) -> &'static str {
    match verdict {
        Overall::Pass => "✅",
        Overall::Regressed => "❌",
        Overall::Inconclusive => "⚠️",
        Overall::NoBaseline => "➖",
    }
}

/// How many regressed benchmarks [`verdict_line`] names with their bounds, at most.
pub const BOUNDS_NAMED: usize = 3;

/// One line of how sure the verdict is, for the check run's summary: the count of every
/// section, and the worst regressions with the bound each rests on
/// ("`parse/json` ≥ 22.1% slower").
pub fn verdict_line(decision: &Decision) -> String {
    let count = |wanted: &dyn Fn(&BenchmarkResult) -> bool| {
        decision.benchmarks.iter().filter(|b| wanted(b)).count()
    };
    let sections: [(&str, usize); 9] = [
        ("regressed", count(&|b| b.verdict == Verdict::Regressed)),
        (
            "inconclusive",
            count(&|b| b.verdict == Verdict::Inconclusive && !is_too_noisy(b)),
        ),
        ("too noisy to gate", count(&is_too_noisy)),
        ("warned", count(&|b| b.verdict == Verdict::Warn)),
        ("improved", count(&|b| b.verdict == Verdict::Improved)),
        ("passed", count(&|b| b.verdict == Verdict::Pass)),
        ("new", count(&|b| b.verdict == Verdict::New)),
        ("missing", count(&|b| b.verdict == Verdict::Missing)),
        ("ignored", count(&|b| b.verdict == Verdict::Ignored)),
    ];
    let counted: Vec<String> = sections
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{n} {name}"))
        .collect();
    let mut line = format!(
        "**{} benchmark{}:** {}.",
        decision.benchmarks.len(),
        if decision.benchmarks.len() == 1 {
            ""
        } else {
            "s"
        },
        counted.join(" · ")
    );
    let mut regressed: Vec<&BenchmarkResult> = decision
        .benchmarks
        .iter()
        .filter(|b| b.verdict == Verdict::Regressed)
        .collect();
    regressed.sort_by(|a, b| {
        let lower = |r: &BenchmarkResult| r.bound.and_then(|b| b.lower).unwrap_or(0.0);
        lower(b).total_cmp(&lower(a)).then_with(|| a.id.cmp(&b.id))
    });
    if !regressed.is_empty() {
        let named: Vec<String> = regressed
            .iter()
            .take(BOUNDS_NAMED)
            .map(|b| format!("`{}` {}", b.id.replace('`', "'"), bound_text(b)))
            .collect();
        let _ = write!(
            line,
            " Slower at least (the bound each regression rests on): {}{}.",
            named.join(", "),
            if regressed.len() > BOUNDS_NAMED {
                format!(" and {} more", regressed.len() - BOUNDS_NAMED)
            } else {
                String::new()
            }
        );
    }
    line
}
