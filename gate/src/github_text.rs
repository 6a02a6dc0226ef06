//! What benchgate shows on GitHub, as text: the sticky PR comment, the check run's title,
//! summary and text, the commit status, and the override note, each within GitHub's limits.
//! Pure functions; the binary's `github` module sends them.

use crate::decision::{Decision, Overall};
use crate::report::headline;

/// The hidden marker that identifies benchgate's comment on a pull request (with its author).
pub const COMMENT_MARKER: &str = "<!-- benchgate:sticky-comment -->";
/// The name of the check run and the context of the fallback commit status.
pub const CHECK_NAME: &str = "benchgate";
/// GitHub's limit on an issue or pull-request comment body: 65,536 characters. benchgate counts
/// UTF-8 bytes against it, which is never more lenient.
pub const COMMENT_LIMIT: usize = 65_536;
/// GitHub's limit on a check run's `output.summary` and `output.text`, each: 65,535 bytes
/// (GitHub's documentation says characters; a text of 65,535 characters with `µs` on every row
/// gets 422 "text exceeds a maximum bytesize").
pub const CHECK_TEXT_LIMIT: usize = 65_535;
/// GitHub's limit on a commit status description, in characters.
pub const STATUS_DESCRIPTION_LIMIT: usize = 140;
/// The job summary's limit per step (1 MiB), in bytes.
pub const STEP_SUMMARY_LIMIT: usize = 1024 * 1024;
/// The longest check-run title benchgate writes (GitHub shows one line).
pub const TITLE_LIMIT: usize = 255;

const OVERRIDE_START: &str = "<!-- benchgate:override -->";
const OVERRIDE_END: &str = "<!-- /benchgate:override -->";

/// A maintainer's override of the gate for one head commit of a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverrideNote {
    /// Who overrode (GitHub login, without `@`).
    pub by: String,
    /// Why, as they wrote it.
    pub reason: String,
    /// The head commit it applies to.
    pub head_sha: String,
}

impl OverrideNote {
    /// "overridden by @who: reason", as the check run's title and the status say it.
    pub fn sentence(&self) -> String {
        format!("overridden by @{}: {}", self.by, one_line(&self.reason))
    }
}

/// A check run's (or commit status's) conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    /// The gate passed, or a maintainer overrode it.
    Success,
    /// A benchmark regressed.
    Failure,
    /// Inconclusive, no baseline, or a regression under `--warn-only`.
    Neutral,
}

impl Conclusion {
    /// The check-run API's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Conclusion::Success => "success",
            Conclusion::Failure => "failure",
            Conclusion::Neutral => "neutral",
        }
    }

    /// The commit-status API's state (it has no neutral: that is a success that says so).
    pub fn status_state(self) -> &'static str {
        match self {
            Conclusion::Failure => "failure",
            Conclusion::Success | Conclusion::Neutral => "success",
        }
    }
}

/// The check's conclusion: an override wins; a regression fails unless `warn_only`.
pub fn conclusion(decision: &Decision, warn_only: bool, overridden: bool) -> Conclusion {
    match decision.verdict {
        _ if overridden => Conclusion::Success,
        _ if decision.fails(warn_only) => Conclusion::Failure,
        _ if decision.missed_budgets() > 0 => Conclusion::Neutral,
        Overall::Pass => Conclusion::Success,
        Overall::Regressed if !warn_only => Conclusion::Failure,
        Overall::Regressed | Overall::Inconclusive | Overall::NoBaseline => Conclusion::Neutral,
    }
}

/// The check run's title: the verdict and the worst regression, or the override.
pub fn check_title(decision: &Decision, overriding: Option<&OverrideNote>) -> String {
    match overriding {
        Some(note) => override_title(note),
        None => cut_chars(&capitalize(&headline(decision)), TITLE_LIMIT),
    }
}

/// The title of an overridden check: "Overridden by @who: reason".
pub fn override_title(note: &OverrideNote) -> String {
    cut_chars(&capitalize(&note.sentence()), TITLE_LIMIT)
}

/// The commit status's description (140 characters at most).
pub fn status_description(decision: &Decision, overriding: Option<&OverrideNote>) -> String {
    cut_chars(&check_title(decision, overriding), STATUS_DESCRIPTION_LIMIT)
}

/// The check run's output: title, summary (the headline and how sure the gate is) and text
/// (every table), each within GitHub's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutput {
    /// One line.
    pub title: String,
    /// Markdown, at most [`CHECK_TEXT_LIMIT`] bytes.
    pub summary: String,
    /// Markdown, at most [`CHECK_TEXT_LIMIT`] bytes.
    pub text: String,
}

/// The check run's output from the report's markdown (`render_markdown`).
pub fn check_output(
    decision: &Decision,
    markdown: &str,
    overriding: Option<&OverrideNote>,
) -> CheckOutput {
    // The summary is the report up to its first table (the headline and the paragraph that
    // says how the comparison was made), then how sure the gate is: the counts and the worst
    // regressions' bounds.
    let intro_end = markdown.find("\n### ").map_or(markdown.len(), |i| i + 1);
    let intro_end = markdown[..intro_end]
        .find("\n<details>")
        .map_or(intro_end, |i| i + 1);
    let mut summary = String::new();
    if let Some(note) = overriding {
        summary.push_str(&override_block(note));
        summary.push('\n');
    }
    summary.push_str(markdown[..intro_end].trim_end());
    summary.push_str("\n\n");
    summary.push_str(&crate::report::verdict_line(decision));
    summary.push('\n');
    CheckOutput {
        title: check_title(decision, overriding),
        summary: fit(&summary, CHECK_TEXT_LIMIT, Measure::Bytes),
        text: fit(markdown, CHECK_TEXT_LIMIT, Measure::Bytes),
    }
}

/// The sticky comment: the marker, the override if any, and the report, within
/// [`COMMENT_LIMIT`] bytes (cut at a table row, with a note of how many rows were left out).
pub fn comment_body(markdown: &str, overriding: Option<&OverrideNote>) -> String {
    let body = format!("{COMMENT_MARKER}\n{}", with_override(markdown, overriding));
    fit(&body, COMMENT_LIMIT, Measure::Bytes)
}

/// The report with the override, if any, above it; no limit applied (the job summary's is
/// far larger than a comment's).
pub fn with_override(markdown: &str, overriding: Option<&OverrideNote>) -> String {
    match overriding {
        Some(note) => format!("{}\n{markdown}", override_block(note)),
        None => markdown.to_owned(),
    }
}

/// An existing sticky comment with `note` shown at its top (replacing an earlier override).
pub fn comment_with_override(existing: &str, note: &OverrideNote) -> String {
    let without = match (existing.find(OVERRIDE_START), existing.find(OVERRIDE_END)) {
        (Some(start), Some(end)) if start < end => {
            let end = end + OVERRIDE_END.len();
            let end = end + usize::from(existing[end..].starts_with('\n'));
            let end = end + usize::from(existing[end..].starts_with('\n'));
            format!("{}{}", &existing[..start], &existing[end..])
        }
        _ => existing.to_owned(),
    };
    let rest = without
        .strip_prefix(COMMENT_MARKER)
        .unwrap_or(&without)
        .trim_start_matches('\n');
    comment_body(rest, Some(note))
}

/// The override recorded in a sticky comment's override block: (login, the head's first 12
/// hex digits, reason), as `override_block` writes them. `None` when there is none.
pub fn override_in_comment(body: &str) -> Option<(String, String, String)> {
    let start = body.find(OVERRIDE_START)? + OVERRIDE_START.len();
    let end = start + body[start..].find(OVERRIDE_END)?;
    let line = body[start..end]
        .lines()
        .find_map(|l| l.strip_prefix("> **Overridden** by @"))?;
    let (by, rest) = line.split_once(" for head `")?;
    let (sha, reason) = rest.split_once("`: ")?;
    let valid_sha = sha.len() == 12 && sha.bytes().all(|b| b.is_ascii_hexdigit());
    (valid_sha && !by.is_empty() && !reason.trim().is_empty())
        .then(|| (by.to_owned(), sha.to_owned(), reason.trim().to_owned()))
}

fn override_block(note: &OverrideNote) -> String {
    let sha = &note.head_sha[..note.head_sha.len().min(12)];
    format!(
        "{OVERRIDE_START}\n> **Overridden** by @{} for head `{sha}`: {}\n>\n> The check passes for this commit; a new push is gated afresh.\n{OVERRIDE_END}\n",
        note.by,
        one_line(&note.reason)
    )
}

/// How a limit is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Unicode characters.
    Chars,
    /// UTF-8 bytes (GitHub's check-run and job-summary limits; benchgate's comments too).
    Bytes,
}

impl Measure {
    fn of(self, text: &str) -> usize {
        match self {
            Measure::Chars => text.chars().count(),
            Measure::Bytes => text.len(),
        }
    }
}

/// `markdown` within `limit`: whole table rows are left out from the end, the tables they
/// leave empty go with them, and a note where the cut begins says how many rows are missing.
pub fn fit(markdown: &str, limit: usize, measure: Measure) -> String {
    if measure.of(markdown) <= limit {
        return markdown.to_owned();
    }
    let lines: Vec<&str> = markdown.split('\n').collect();
    let separator = |i: usize| lines.get(i).is_some_and(|l| l.starts_with("|---"));
    let is_row = |i: usize| lines[i].starts_with('|') && !separator(i) && !separator(i + 1);
    let rows: Vec<usize> = (0..lines.len()).filter(|&i| is_row(i)).collect();
    let note = |n: usize| {
        format!(
            "\n_… {n} more row{} left out: GitHub shows at most {limit} {} here. Every row is in `perf-summary.json` and the job summary._\n",
            if n == 1 { "" } else { "s" },
            match measure {
                Measure::Chars => "characters",
                Measure::Bytes => "bytes",
            }
        )
    };
    // The output shrinks as more rows go: find the fewest that must go.
    let render = |dropped: usize| -> String {
        let kept_rows = rows.len() - dropped;
        let first_dropped = rows.get(kept_rows).copied().unwrap_or(lines.len());
        let mut out: Vec<String> = Vec::with_capacity(lines.len() + 1);
        for (i, line) in lines.iter().enumerate() {
            if i == first_dropped {
                out.push(note(dropped));
            }
            if i >= first_dropped && is_row(i) {
                continue;
            }
            // A header (or its separator) whose rows are all gone goes too.
            let header_of_empty = (separator(i + 1) && !rows_after(&rows, i + 1, kept_rows))
                || (separator(i) && !rows_after(&rows, i, kept_rows));
            if dropped > 0 && header_of_empty {
                continue;
            }
            out.push((*line).to_owned());
        }
        out.join("\n")
    };
    let (mut low, mut high) = (1, rows.len());
    while low < high {
        let mid = (low + high) / 2;
        if measure.of(&render(mid)) <= limit {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    let text = render(high.max(1).min(rows.len()));
    if measure.of(&text) <= limit {
        text
    } else {
        // Not even without rows: cut the text itself.
        let tail = "\n\n_… cut: GitHub's limit reached._\n";
        let keep = limit.saturating_sub(measure.of(tail));
        let mut cut = String::new();
        let mut size = 0;
        for c in text.chars() {
            size += match measure {
                Measure::Chars => 1,
                Measure::Bytes => c.len_utf8(),
            };
            if size > keep {
                break;
            }
            cut.push(c);
        }
        cut + tail
    }
}

/// Whether the table whose separator is at `separator` keeps any of the first `kept` rows
/// (`rows` is in line order, so the kept ones are a sorted prefix).
fn rows_after(rows: &[usize], separator: usize, kept: usize) -> bool {
    rows[..kept].binary_search(&(separator + 1)).is_ok()
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to `limit` characters, ending in `…` when cut.
pub fn cut_chars(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(limit.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(title: &str, rows: usize) -> String {
        let mut out = format!("### {title}\n\n| benchmark | change |\n|---|---|\n");
        for i in 0..rows {
            out.push_str(&format!("| `{title}/{i:03}` | +1.0% |\n"));
        }
        out
    }

    #[test]
    fn fit_leaves_text_that_fits_alone() {
        let text = table("a", 3);
        assert_eq!(fit(&text, text.len(), Measure::Chars), text);
    }

    #[test]
    fn fit_cuts_whole_rows_from_the_end_and_counts_them() {
        let text = format!(
            "# head\n\n{}\nmiddle\n\n{}\nend\n",
            table("a", 5),
            table("b", 50)
        );
        let limit = text.len() - 500;
        let cut = fit(&text, limit, Measure::Chars);
        assert!(cut.chars().count() <= limit, "{}", cut.len());
        let kept_b = cut.lines().filter(|l| l.starts_with("| `b/")).count();
        let kept_a = cut.lines().filter(|l| l.starts_with("| `a/")).count();
        assert_eq!(kept_a, 5);
        assert!(kept_b < 50 && kept_b > 10, "{kept_b}");
        assert!(
            cut.contains(&format!("_… {} more rows left out", 50 - kept_b)),
            "{cut}"
        );
        // Rows are whole, the kept ones are the first ones, and the text after the table stays.
        assert!(cut.contains(&format!("| `b/{:03}` | +1.0% |\n", kept_b - 1)));
        assert!(!cut.contains(&format!("`b/{kept_b:03}`")));
        assert!(cut.ends_with("end\n"));
    }

    #[test]
    fn fit_drops_the_header_of_a_table_it_empties() {
        let text = format!("{}\n{}", table("a", 3), table("b", 40));
        let limit = table("a", 3).len() + 160;
        let cut = fit(&text, limit, Measure::Chars);
        assert!(cut.chars().count() <= limit);
        assert_eq!(cut.matches("|---|---|").count(), 1, "{cut}");
        assert_eq!(cut.lines().filter(|l| l.starts_with("| `a/")).count(), 3);
        assert!(cut.contains("_… 40 more rows left out"), "{cut}");
    }

    #[test]
    fn fit_counts_characters_not_bytes_for_github() {
        let text = table("é", 100);
        let chars = text.chars().count();
        assert!(text.len() > chars);
        assert_eq!(fit(&text, chars, Measure::Chars), text);
        assert_ne!(fit(&text, chars, Measure::Bytes), text);
    }

    #[test]
    fn override_replaces_an_earlier_one_and_keeps_the_report() {
        let first = OverrideNote {
            by: "alice".into(),
            reason: "known noisy".into(),
            head_sha: "a".repeat(40),
        };
        let second = OverrideNote {
            by: "bob".into(),
            reason: "accepted: new algorithm".into(),
            head_sha: "b".repeat(40),
        };
        let body = comment_body("## report\n", None);
        let once = comment_with_override(&body, &first);
        let twice = comment_with_override(&once, &second);
        assert!(twice.starts_with(COMMENT_MARKER));
        assert_eq!(twice.matches(OVERRIDE_START).count(), 1);
        assert!(twice.contains("@bob for head `bbbbbbbbbbbb`: accepted: new algorithm"));
        assert!(!twice.contains("alice"));
        assert!(twice.ends_with("## report\n"));
        assert_eq!(twice, comment_body("## report\n", Some(&second)));
    }

    #[test]
    fn an_override_block_reads_back() {
        let note = OverrideNote {
            by: "maint".into(),
            reason: "accepted: new algorithm".into(),
            head_sha: "ab".repeat(20),
        };
        let body = comment_body("## report\n", Some(&note));
        assert_eq!(
            override_in_comment(&body),
            Some((
                "maint".to_owned(),
                "abababababab".to_owned(),
                "accepted: new algorithm".to_owned()
            ))
        );
        assert_eq!(
            override_in_comment(&comment_body("## report\n", None)),
            None
        );
    }

    #[test]
    fn descriptions_are_cut_to_their_limits() {
        let long = "x".repeat(500);
        assert_eq!(cut_chars(&long, 140).chars().count(), 140);
        assert!(cut_chars(&long, 140).ends_with('…'));
        assert_eq!(cut_chars("short", 140), "short");
    }
}
