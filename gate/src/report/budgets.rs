//! The budgets as a checklist, with values in their units.

use std::fmt::Write as _;

use super::cells::{format_ns, with_si_prefix};
use crate::budget::{BudgetResult, BudgetVerdict};

/// A value of a budget as people read it: times in ns…s, rates in B/s…GiB/s, ratios as `1.05x`.
pub(super) fn budget_value(value: f64, unit: &str) -> String {
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
        // A custom metric's own unit (`conn/s`, `%`).
        other => with_si_prefix(value, other),
    }
}

/// The budgets as a checklist, the shape of the "pass if all true" lists projects keep.
pub(super) fn budget_checklist(out: &mut String, budgets: &[BudgetResult]) {
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
