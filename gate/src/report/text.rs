//! The terminal report.

use std::fmt::Write as _;

use super::cells::{row, shows_detectable};
use super::headline::headline;
use super::{
    Context, Pairs, builds_sentence, comparison_sentence, count_cell, unjudged_note, work_note,
};
use crate::policy::Policy;
use crate::verdict::{BenchmarkResult, Decision, Verdict};

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
    if let Some(incomplete) = &context.incomplete {
        let _ = writeln!(out, "{}", incomplete.sentence());
        for line in &incomplete.stderr_tail {
            let _ = writeln!(out, "  | {line}");
        }
    }
    for note in context.notes.iter().cloned().chain(work_note(decision)) {
        let _ = writeln!(out, "{}", note.replace('`', ""));
    }
    let _ = writeln!(
        out,
        "{}\n",
        comparison_sentence(decision, context, policy).replace('`', "")
    );
    if let Some(builds) = builds_sentence(context) {
        let _ = writeln!(out, "{}\n", builds.replace('`', ""));
    }
    let pairs = Pairs::new(decision);
    let with_counts = !pairs.counts_of.is_empty();
    let shown: Vec<&BenchmarkResult> = decision
        .benchmarks
        .iter()
        .filter(|b| pairs.time_of(&b.id).is_none())
        .collect();
    let with_detectable = shown.iter().any(|b| shows_detectable(b));
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|b| {
            let mut cells = row(b, true, with_detectable);
            cells[0] = b.id.clone();
            if with_counts {
                cells.push(pairs.count_of(&b.id).map_or("-".to_owned(), count_cell));
            }
            cells
        })
        .collect();
    let mut header = vec![
        "BENCHMARK",
        "VERDICT",
        "BASE",
        "HEAD",
        "CHANGE",
        "LIMIT",
        "DECIDED ON",
    ];
    if with_detectable {
        header.push("DETECTABLE");
    }
    header.push("ROUNDS");
    if with_counts {
        header.push("INSTRUCTIONS");
    }
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
    let header: Vec<String> = header.into_iter().map(str::to_owned).collect();
    let _ = writeln!(out, "{}", line(&header, None));
    for (cells, b) in rows.iter().zip(&shown) {
        let _ = writeln!(out, "{}", line(cells, Some(b.verdict)));
    }
    let mut note = String::new();
    unjudged_note(&mut note, decision);
    out.push_str(&note.replace('`', ""));
    out
}
