//! Reports of a [`Decision`]: `perf-summary.json` (a stable, versioned schema), the markdown the
//! PR comment carries (`perf-summary.md`) and terminal text. Pure functions of their inputs.

use std::collections::{HashMap, HashSet};

use benchgate_core::counts::INSTRUCTIONS;
use std::fmt::Write as _;

use crate::decision::{
    BenchmarkResult, Decision, Mode, NoiseSource, Overall, UNCALIBRATED_RUN_NOISE, Verdict,
};
use crate::noise::{INTERFERED_CUT, MIN_SHORT_HISTORY, POOLED_BASE_RUNS};
use crate::policy::Policy;
use crate::sequential::FUTILITY_POWER;

mod budgets;
mod cells;
mod headline;
pub mod links;
mod summary;
mod text;

use budgets::*;
use cells::*;
use headline::*;
pub use links::Links;

pub use cells::{format_measure, format_ns, format_rate, format_value, with_si_prefix};
pub use headline::{BOUNDS_NAMED, headline, verdict_line};
pub use summary::{ReadSummary, SCHEMA_VERSION, Summary, read_summary, summary, summary_json};
pub use text::render_text;

/// What was compared, for people: the decision does not know where its inputs came from.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// Set when the job stopped early (a bench command that failed in a later round): the
    /// verdict rests on the rounds measured before it.
    pub incomplete: Option<Incomplete>,
    /// Facts about how the sides were built, one sentence each (which `Cargo.lock`, executables
    /// the change did not touch).
    pub notes: Vec<String>,
    /// What a same-job A/B job spent, when it ran one.
    pub cost: Option<Cost>,
    /// Where each count regression's instructions went, by function (Callgrind's files), when
    /// both sides' files were read.
    pub profiles: Vec<CountProfile>,
}

/// Where one count's change went, by function: the functions whose own (exclusive) cost
/// changed most, and everything else, which together add up to the change of the totals.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountProfile {
    /// The count benchmark (`GROUP/FUNCTION/ID/instructions`).
    pub benchmark: String,
    /// Callgrind's event (`Ir`).
    pub event: String,
    /// The base run's total of the event.
    pub base_total: u64,
    /// The head run's.
    pub head_total: u64,
    /// The functions, largest change first.
    pub rows: Vec<ProfileRow>,
    /// Every other function together.
    pub rest: ProfileRow,
}

/// One function's own cost of the event on each side.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileRow {
    /// The function, demangled.
    pub function: String,
    /// Its exclusive cost in the base run.
    pub base: u64,
    /// In the head run.
    pub head: u64,
}

impl ProfileRow {
    /// Head minus base.
    pub fn change(&self) -> i128 {
        i128::from(self.head) - i128::from(self.base)
    }
}

impl CountProfile {
    /// Head's total minus base's.
    pub fn change(&self) -> i128 {
        i128::from(self.head_total) - i128::from(self.base_total)
    }
}

/// What a same-job A/B job spent: wall time in the bench executables (both sides, every
/// round) and in building both sides.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    /// Seconds in the bench executables (and instruction counts), both sides, every round.
    pub bench_seconds: f64,
    /// Seconds building both sides (and checking the bench command against their builds).
    pub build_seconds: f64,
}

/// The most lines of a failed command's standard error a report carries.
pub const MAX_STDERR_TAIL: usize = 20;

/// Why a same-job A/B stopped before it was done: the round that failed and how.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Incomplete {
    /// The round that failed, from 1.
    pub round: usize,
    /// The side whose bench command failed: `base` or `head`.
    pub side: String,
    /// What failed and its exit status.
    pub failure: String,
    /// The last lines the failed command wrote to standard error.
    pub stderr_tail: Vec<String>,
}

impl Incomplete {
    /// One line for the top of a report.
    fn sentence(&self) -> String {
        format!(
            "Incomplete: round {} failed on the {} side ({}); the verdicts rest on the {} complete round{} before it.",
            self.round,
            self.side,
            self.failure,
            self.round - 1,
            if self.round == 2 { "" } else { "s" }
        )
    }
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

/// An id as instruction counts and wall time are matched: lower case, every run of other
/// characters than letters and digits one `_`, none at the ends. `aead/seal/chacha20-poly1305/16
/// KiB` and gungraun's `aead/seal/chacha20_poly1305_16_kib` both read
/// `aead_seal_chacha20_poly1305_16_kib`.
pub fn pair_key(id: &str) -> String {
    let mut key = String::with_capacity(id.len());
    for c in id.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            key.push(c);
        } else if !key.ends_with('_') {
            key.push('_');
        }
    }
    key.trim_matches('_').to_owned()
}

/// Which wall-time benchmark each instruction count belongs to, when it is named alike.
pub struct Pairs<'a> {
    /// Wall-time benchmark id → its instruction-count result.
    counts_of: HashMap<&'a str, &'a BenchmarkResult>,
    /// Instruction-count id → the wall-time benchmark id it pairs with.
    time_of: HashMap<&'a str, &'a str>,
}

impl<'a> Pairs<'a> {
    /// Pairs the decision's instruction counts with its wall-time benchmarks.
    pub fn new(decision: &'a Decision) -> Self {
        let suffix = format!("/{INSTRUCTIONS}");
        let counts: HashMap<String, &BenchmarkResult> = decision
            .benchmarks
            .iter()
            .filter(|b| b.unit.as_deref() == Some(INSTRUCTIONS))
            .filter_map(|b| Some((pair_key(b.id.strip_suffix(suffix.as_str())?), b)))
            .collect();
        let mut pairs = Pairs {
            counts_of: HashMap::new(),
            time_of: HashMap::new(),
        };
        for b in &decision.benchmarks {
            if b.unit.is_some() {
                continue;
            }
            if let Some(count) = counts.get(&pair_key(&b.id)) {
                pairs.counts_of.insert(b.id.as_str(), count);
                pairs.time_of.insert(count.id.as_str(), b.id.as_str());
            }
        }
        pairs
    }

    /// The instruction-count result shown on a wall-time benchmark's row.
    pub fn count_of(&self, time_id: &str) -> Option<&'a BenchmarkResult> {
        self.counts_of.get(time_id).copied()
    }

    /// The wall-time benchmark an instruction count pairs with.
    pub fn time_of(&self, count_id: &str) -> Option<&'a str> {
        self.time_of.get(count_id).copied()
    }
}

/// `99.8% higher (worse): regressed`: an instruction count as its wall-time twin's row shows it.
fn count_cell(count: &BenchmarkResult) -> String {
    format!("{}: {}", change_text(count), count.verdict.as_str())
}

fn markdown_table(
    out: &mut String,
    rows: &[&BenchmarkResult],
    with_verdict: bool,
    pairs: &Pairs<'_>,
    links: &Links,
    fingerprint: Option<&str>,
) {
    let with_counts = !pairs.counts_of.is_empty();
    let with_detectable = rows.iter().any(|b| shows_detectable(b));
    let in_table: HashSet<&str> = rows.iter().map(|b| b.id.as_str()).collect();
    let mut header = vec!["benchmark"];
    if with_verdict {
        header.push("verdict");
    }
    header.extend(["base", "head", "change", "limit", "decided on"]);
    if with_detectable {
        header.push("detectable");
    }
    header.push("rounds");
    if with_counts {
        header.push("instructions");
    }
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for b in rows {
        // A count shown on its twin's row in this table needs no row of its own.
        if pairs.time_of(&b.id).is_some_and(|t| in_table.contains(t)) {
            continue;
        }
        let mut cells = row(b, with_verdict, with_detectable);
        if let Some(page) = fingerprint.and_then(|f| links.benchmark(f, &b.id, "html")) {
            cells[0] = format!("{} ([trend]({page}))", cells[0]);
        }
        if with_counts {
            cells.push(pairs.count_of(&b.id).map_or("-".to_owned(), count_cell));
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// The benchmarks too noisy to gate within the rounds there are or can be, and the quarantined.
/// Whether a benchmark is listed under "Too noisy to gate" rather than "Inconclusive": an
/// undecided benchmark that even the plan's last round could not decide. A decided benchmark
/// stays in its verdict's section: each benchmark is listed once.
fn is_too_noisy(b: &BenchmarkResult) -> bool {
    b.verdict == Verdict::Inconclusive && b.too_noisy.is_some()
}

fn too_noisy(
    out: &mut String,
    decision: &Decision,
    pairs: &Pairs,
    links: &Links,
    fingerprint: Option<&str>,
) {
    let noisy: Vec<&BenchmarkResult> = decision
        .benchmarks
        .iter()
        .filter(|b| is_too_noisy(b))
        .collect();
    if !noisy.is_empty() {
        let _ = writeln!(
            out,
            "### Too noisy to gate ({})
",
            noisy.len()
        );
        let rounds = noisy
            .iter()
            .filter_map(|b| b.too_noisy)
            .map(|t| t.rounds)
            .max()
            .unwrap_or(0);
        if decision.mode == Mode::StoredBaseline
            && noisy
                .iter()
                .any(|b| b.noise_source == Some(NoiseSource::History))
        {
            // The machine's history, or a run whose others the change moved far apart, is what a
            // stored baseline cannot see past; the same benchmarks side by side in one job decide
            // (docs/accuracy.md, "A real crate on a machine that slows whole stretches of a run"
            // and "A change that moves most of the suite").
            let _ = writeln!(
                out,
                "Undecided, and even at the most head runs the gate allows ({rounds}) the smallest change these would call `regressed` would be larger than their limit. A stored baseline reads their band from this machine's stored runs of them and from how far this run's other benchmarks moved beside them: a machine that moves them that far from one run to the next, or a change that moves much of the suite at once, looks to it like a disturbed run, and it is no surer than that. A same-job A/B (`benchgate ab`, the Action's `mode: ab`) runs base and head in turn in one job and decides them side by side. Or quarantine them in `benchgate.toml` (`[[quarantine]]` with a `reason`) to report them without letting them decide.
"
            );
        } else {
            let _ = writeln!(
                out,
                "Undecided, and even at the most rounds the plan allows ({rounds}) the smallest change these would call `regressed` would be larger than their limit. Quarantine them in `benchgate.toml` (`[[quarantine]]` with a `reason`) to report them without letting them decide, or make them steadier.
"
            );
        }
        markdown_table(out, &noisy, false, pairs, links, fingerprint);
        out.push('\n');
    }
    let quarantined = decision
        .benchmarks
        .iter()
        .filter(|b| b.quarantined.is_some())
        .count();
    if quarantined > 0 {
        let _ = writeln!(
            out,
            "{quarantined} quarantined benchmarks are reported but decide nothing (`[[quarantine]]` in `benchgate.toml`).\n"
        );
    }
}

/// The count events stored but not judged, in a sentence.
fn unjudged_note(out: &mut String, decision: &Decision) {
    if decision.unjudged.is_empty() {
        return;
    }
    let mut events: Vec<&str> = decision
        .unjudged
        .iter()
        .filter_map(|id| id.rsplit('/').next())
        .collect();
    events.sort_unstable();
    events.dedup();
    let _ = writeln!(
        out,
        "{} counts of {} are stored and charted but not judged: give them a limit under `[instructions]` in `benchgate.toml` to judge them.\n",
        decision.unjudged.len(),
        events.join(", ")
    );
}

/// Benchmarks whose head does another amount of work per iteration than their base (a bigger
/// input, a test file that grew), compared per unit of work: one sentence, `None` without any.
fn work_note(decision: &Decision) -> Option<String> {
    /// The throughput's kind, the base's amount and the head's.
    type Work<'a> = (&'a str, u64, u64);
    let mut groups: Vec<(Work<'_>, Vec<&str>)> = Vec::new();
    for b in &decision.benchmarks {
        let (Some((kind, base)), Some(head)) = (b.throughput_per_iteration, b.head_work) else {
            continue;
        };
        let key = (kind, base, head);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ids)) => ids.push(&b.id),
            None => groups.push((key, vec![&b.id])),
        }
    }
    if groups.is_empty() {
        return None;
    }
    let clauses: Vec<String> = groups
        .iter()
        .map(|((kind, base, head), ids)| {
            let unit = match *kind {
                "Bytes" | "BytesDecimal" => "bytes",
                "Bits" => "bits",
                _ => "elements",
            };
            let named: Vec<String> = ids.iter().take(3).map(|id| format!("`{id}`")).collect();
            let who = match ids.len() - named.len() {
                0 => list_and(&named),
                more => format!("{} and {more} more", named.join(", ")),
            };
            format!(
                "{who} {} {} {unit} an iteration in the head, {} in the base ({:+.1}%)",
                if ids.len() == 1 { "does" } else { "do" },
                grouped(*head),
                grouped(*base),
                (*head as f64 / *base as f64 - 1.0) * 100.0
            )
        })
        .collect();
    let singular = groups.iter().map(|(_, ids)| ids.len()).sum::<usize>() == 1;
    Some(format!(
        "Work per iteration changed: {}. {} compared per unit of work, as throughput, so a bigger input is not read as a slowdown.",
        clauses.join("; "),
        if singular { "It is" } else { "They are" }
    ))
}

/// `a`, `a and b`, `a, b and c`.
pub fn list_and<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [init @ .., last] => {
            let init: Vec<&str> = init.iter().map(AsRef::as_ref).collect();
            format!("{} and {}", init.join(", "), last.as_ref())
        }
    }
}

/// `perf-summary.md`: what the PR comment carries, without links.
pub fn render_markdown(decision: &Decision, context: &Context, policy: &Policy) -> String {
    render_markdown_linked(decision, context, policy, &Links::default())
}

/// How many regressed benchmarks' trend charts a report shows as images, at most.
pub const TREND_IMAGES: usize = 5;

/// The report with `links`: the verdict, one line of what was compared, then the regressions
/// (with their trend charts when asked for), the inconclusive results, warnings and
/// improvements, the override hint when the gate fails, and, folded, the benchmarks that
/// passed and how the gate decided. Each benchmark is in one table only.
pub fn render_markdown_linked(
    decision: &Decision,
    context: &Context,
    policy: &Policy,
    links: &Links,
) -> String {
    let pairs = Pairs::new(decision);
    let fingerprint = context.fingerprint.as_deref();
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
    incomplete_note(&mut out, context);
    for note in &context.notes {
        let _ = writeln!(out, "{note}\n");
    }
    if let Some(note) = work_note(decision) {
        let _ = writeln!(out, "{note}\n");
    }
    let compared = decision.benchmarks.iter().any(|b| b.ratio.is_some());
    if decision.verdict == Overall::NoBaseline || !compared {
        // Nothing was compared: what happened is the news, not a detail to fold.
        let _ = writeln!(out, "{}\n", comparison_sentence(decision, context, policy));
    } else {
        let _ = writeln!(out, "{}\n", compared_line(decision, context, links));
    }
    budget_checklist(&mut out, &decision.budgets);
    if decision.missed_budgets() > 0 && decision.count(Verdict::Regressed) == 0 {
        override_hint(&mut out);
    }

    let sections = [
        (Verdict::Regressed, "Regressions", ""),
        (
            Verdict::Inconclusive,
            "Inconclusive",
            "The bound does not exclude a slowdown as large as the limit; more rounds narrow it (roughly by √rounds).",
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
            .filter(|b| b.verdict == verdict && !is_too_noisy(b))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "### {title} ({})\n", rows.len());
        if !note.is_empty() {
            let _ = writeln!(out, "{note}\n");
        }
        markdown_table(&mut out, &rows, false, &pairs, links, fingerprint);
        out.push('\n');
        if verdict == Verdict::Regressed {
            profiles(&mut out, &rows, context);
            no_profile(&mut out, decision, &rows, context);
            trend_images(&mut out, &rows, links, fingerprint);
            override_hint(&mut out);
        }
    }
    too_noisy(&mut out, decision, &pairs, links, fingerprint);
    if decision.benchmarks.iter().any(|b| b.uncalibrated) {
        let _ = writeln!(
            out,
            "† uncalibrated: no rounds and fewer than {MIN_SHORT_HISTORY} runs of history on this fingerprint, so the band assumes {:.0}% noise per run. Run base and head in the same job (`benchgate ab`) for a calibrated answer.\n",
            UNCALIBRATED_RUN_NOISE * 100.0
        );
    }
    unjudged_note(&mut out, decision);
    let passed: Vec<&BenchmarkResult> = decision
        .benchmarks
        .iter()
        .filter(|b| b.verdict == Verdict::Pass)
        .collect();
    if !passed.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>{} benchmark{} passed</summary>\n",
            passed.len(),
            if passed.len() == 1 { "" } else { "s" }
        );
        markdown_table(&mut out, &passed, false, &pairs, links, fingerprint);
        let _ = writeln!(out, "\n</details>\n");
    }
    if decision.verdict != Overall::NoBaseline && compared {
        how_decided(&mut out, decision, context, policy);
    }
    out
}

/// `1234567` as `1,234,567`.
pub fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `part`'s share of `whole`, one decimal (`99.8%`), or `-` when nothing changed in all.
pub fn share(part: i128, whole: i128) -> String {
    if whole == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// A signed change, grouped: `+300,000`, `-5`.
pub fn signed(change: i128) -> String {
    let sign = if change < 0 { "-" } else { "+" };
    let size = u64::try_from(change.unsigned_abs()).unwrap_or(u64::MAX);
    format!("{sign}{}", grouped(size))
}

/// The most characters of a function's name a table shows: generic Rust names run to
/// hundreds; the middle goes.
const FUNCTION_NAME_CHARS: usize = 90;

/// A function's name for a table cell: shortened in the middle, in code, pipes escaped.
fn function_cell(name: &str) -> String {
    let chars: Vec<char> = name.chars().filter(|c| !c.is_control()).collect();
    let shown: String = if chars.len() > FUNCTION_NAME_CHARS {
        let head: String = chars[..FUNCTION_NAME_CHARS / 2].iter().collect();
        let tail: String = chars[chars.len() - (FUNCTION_NAME_CHARS / 2 - 1)..]
            .iter()
            .collect();
        format!("{head}…{tail}")
    } else {
        chars.into_iter().collect()
    };
    format!("`{}`", shown.replace('`', "'").replace('|', "\\|"))
}

/// Under the regressions: where each regressed count's instructions went, folded.
fn profiles(out: &mut String, rows: &[&BenchmarkResult], context: &Context) {
    for profile in &context.profiles {
        if !rows.iter().any(|b| b.id == profile.benchmark) {
            continue;
        }
        let whole = profile.change();
        let percent = if profile.base_total > 0 {
            format!(
                ", {:+.1}%",
                100.0 * whole as f64 / profile.base_total as f64
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<details><summary>Where the instructions went: <code>{}</code>, {} → {} ({}{percent})</summary>\n",
            profile.benchmark.replace('<', "&lt;"),
            grouped(profile.base_total),
            grouped(profile.head_total),
            signed(whole)
        );
        let _ = writeln!(
            out,
            "| function | base | head | change | share of the change |\n|---|---:|---:|---:|---:|"
        );
        for (row, name) in profile
            .rows
            .iter()
            .map(|r| (r, function_cell(&r.function)))
            .chain(std::iter::once((
                &profile.rest,
                "everything else".to_owned(),
            )))
        {
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} | {} |",
                grouped(row.base),
                grouped(row.head),
                signed(row.change()),
                share(row.change(), whole)
            );
        }
        let _ = writeln!(
            out,
            "\nEach function's own instructions (Callgrind's exclusive `{}`), base and head; `benchgate explain` prints more.\n\n</details>\n",
            profile.event
        );
    }
}

/// Under the regressions, when no table says where the work went: why not, and what would.
fn no_profile(out: &mut String, decision: &Decision, rows: &[&BenchmarkResult], context: &Context) {
    let counted = |b: &BenchmarkResult| b.noise_source == Some(NoiseSource::Exact);
    let counts_regressed: Vec<&&BenchmarkResult> = rows.iter().filter(|b| counted(b)).collect();
    let profiled = |b: &BenchmarkResult| context.profiles.iter().any(|p| p.benchmark == b.id);
    if !decision.benchmarks.iter().any(counted) && decision.unjudged.is_empty() {
        let _ = writeln!(
            out,
            "No profile: instruction counts are not enabled, so nothing here says which functions the time went to. Count them too: `instructions: true` in the Action (`benchgate ab --instructions 'cargo bench --bench instructions'`, with Valgrind and gungraun).\n"
        );
    } else if decision.mode == Mode::StoredBaseline && counts_regressed.iter().any(|b| !profiled(b))
    {
        let _ = writeln!(
            out,
            "No profile: the stored runs hold these instruction counts without their profile by function. `benchgate ingest` keeps one when gungraun's Callgrind files are beside its summaries (the Action's `instructions: true` leaves them there), for base and head alike.\n"
        );
    }
}

/// A job that stopped early: which round failed, and its last lines of standard error.
fn incomplete_note(out: &mut String, context: &Context) {
    if let Some(incomplete) = &context.incomplete {
        let _ = writeln!(out, "⚠️ **{}**\n", incomplete.sentence());
        if !incomplete.stderr_tail.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>Its last lines of standard error</summary>\n\n```text\n{}\n```\n\n</details>\n",
                incomplete
                    .stderr_tail
                    .join("\n")
                    .replace("```", "`\u{200b}``")
            );
        }
    }
}

/// The folded account of how the comparison was decided, and what each column means.
fn how_decided(out: &mut String, decision: &Decision, context: &Context, policy: &Policy) {
    let _ = writeln!(
        out,
        "<details><summary>How benchgate decided</summary>\n\n{}\n",
        comparison_sentence(decision, context, policy)
    );
    if let Some(builds) = builds_sentence(context) {
        let _ = writeln!(out, "{builds}\n");
    }
    if let Some(cost) = context.cost {
        let _ = writeln!(
            out,
            "Decided in {} round{}, {} of benchmarking ({} building both sides).\n",
            decision.rounds,
            if decision.rounds == 1 { "" } else { "s" },
            minutes(cost.bench_seconds),
            minutes(cost.build_seconds)
        );
    }
    let _ = writeln!(
        out,
        "**change** is the head against the base, in the measure shown (time, or throughput where the benchmark declares one); **decided on** is the bound the verdict rests on; **detectable**, shown for an undecided benchmark, is the smallest slowdown that would read `regressed` at this noise and round count; **rounds** is {}; a round **set aside** moved more than {INTERFERED_CUT} robust spreads from the benchmark's other rounds (a neighbour on the machine slowing one run): `pass`, the change and its band rest on the rounds kept, and a `regressed` must hold with every round and without those; **stopped early** means more rounds, up to `--max-rounds`, had less than a {:.0}% chance of deciding it, so none were run.\n\n</details>",
        match decision.mode {
            Mode::SameJobAb => "how many A/B rounds the verdict took",
            Mode::StoredBaseline =>
                "how many head runs the verdict took (a benchmark one run leaves undecided runs again on the head, to `--max-runs`)",
        },
        FUTILITY_POWER * 100.0
    );
}

/// A duration for people: seconds below two minutes, else minutes.
fn minutes(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{:.1} min", seconds / 60.0)
    }
}

/// What a maintainer can do about a failing gate.
fn override_hint(out: &mut String) {
    let _ = writeln!(
        out,
        "A maintainer who accepts this comments `/benchgate override <reason>` on the pull request: the check passes for this head commit, and the next push is gated afresh.\n"
    );
}

/// Head and base as links to their commits, how they were compared, the machine, and the
/// dashboard: one line.
fn compared_line(decision: &Decision, context: &Context, links: &Links) -> String {
    let side = |commit: &Option<String>, text: &str| match commit {
        Some(sha) => links.commit(sha),
        None => format!("`{text}`"),
    };
    let mut parts = Vec::new();
    if context.head_commit.is_some() || !context.head.is_empty() {
        parts.push(format!(
            "Head {} against base {}",
            side(&context.head_commit, &context.head),
            side(&context.base_commit, &context.base)
        ));
    }
    parts.push(how_compared(decision, context));
    if let Some(fingerprint) = &context.fingerprint {
        let machine = format!(
            "fingerprint `{}`",
            &fingerprint[..fingerprint.len().min(12)]
        );
        parts.push(match links.machine_page(fingerprint) {
            Some(url) => format!("{machine} ([dashboard]({url}))"),
            None => machine,
        });
    }
    parts.join(" · ")
}

/// The regressed benchmarks' trend charts, as images the dashboard serves.
fn trend_images(
    out: &mut String,
    rows: &[&BenchmarkResult],
    links: &Links,
    fingerprint: Option<&str>,
) {
    let Some(fingerprint) = fingerprint.filter(|_| links.trend_images) else {
        return;
    };
    let images: Vec<String> = rows
        .iter()
        .take(TREND_IMAGES)
        .filter_map(|b| {
            let image = links.benchmark(fingerprint, &b.id, "svg")?;
            let page = links.benchmark(fingerprint, &b.id, "html")?;
            Some(format!(
                "[![trend of {}]({image})]({page})",
                b.id.replace(['[', ']'], "")
            ))
        })
        .collect();
    if !images.is_empty() {
        let _ = writeln!(out, "{}\n", images.join("\n"));
    }
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
    let how = how_compared(decision, context);
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
        "Head `{}` against base `{}` ({how}){machine}, comparing the {} time per iteration of each round. A benchmark passes when a slowdown as large as its limit is excluded with {:.0}% confidence; it fails only when it is at least the limit and significant after Holm's correction over {compared} benchmarks ({:.0}% chance of any false alarm per comparison). \"Decided on\" is the one-sided bound the verdict rests on (at most, at least, or both for a warning), adaptive looks each spending a share of these rates; the noise comes from {}.{}",
        context.head,
        context.base,
        match policy.statistic {
            crate::policy::Statistic::Median => "median".to_owned(),
            crate::policy::Statistic::Quantile(0.0) => "minimum".to_owned(),
            other => format!("{} quantile of the", other.name()),
        },
        policy.confidence * 100.0,
        policy.false_alarm_rate * 100.0,
        noise_sources(decision),
        pooled_bases(decision)
    )
}

/// The sentence on bases that are the median of several stored runs, if any is.
fn pooled_bases(decision: &Decision) -> String {
    let pooled = decision
        .benchmarks
        .iter()
        .filter(|b| b.base_runs > 1)
        .count();
    if pooled == 0 {
        return String::new();
    }
    format!(
        " The base of {} is the median of the base run and the base commit's newest runs before it (up to {POOLED_BASE_RUNS} in all, \"base: median of N runs\"): the base run sat at their level, or in a faster level they also showed (its pass still counts from the base run's own time), so they measured what it did, with less noise than one run; a base run that moved away from them is compared alone.",
        if pooled
            == decision
                .benchmarks
                .iter()
                .filter(|b| b.ratio.is_some())
                .count()
        {
            "every benchmark".to_owned()
        } else {
            format!("{pooled} benchmark{}", if pooled == 1 { "" } else { "s" })
        }
    )
}

/// How the sides were compared, in a few words.
fn how_compared(decision: &Decision, context: &Context) -> String {
    match (&context.source, decision.mode) {
        (Some(source), _) => source.clone(),
        (None, Mode::SameJobAb) => {
            let fewest = decision
                .benchmarks
                .iter()
                .filter(|b| b.rounds > 0)
                .map(|b| b.rounds)
                .min()
                .unwrap_or(decision.rounds);
            if fewest < decision.rounds {
                format!(
                    "same-job A/B, adaptive: {fewest} to {} rounds alternating, each benchmark until decided",
                    decision.rounds
                )
            } else {
                format!(
                    "same-job A/B, {} round{} alternating",
                    decision.rounds,
                    if decision.rounds == 1 { "" } else { "s" }
                )
            }
        }
        (None, Mode::StoredBaseline) if decision.rounds > 1 => format!(
            "stored baseline, the head run up to {} times: each time only the benchmarks still undecided, their runs pooled",
            decision.rounds
        ),
        (None, Mode::StoredBaseline) => "stored baseline".to_owned(),
    }
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
        (
            NoiseSource::Exact,
            "exact arithmetic on instruction counts (within what their rounds and history moved)",
        ),
        (
            NoiseSource::SameExecutables,
            "nothing: base and head built the same executables, so they were not measured",
        ),
    ]
    .into_iter()
    .filter_map(|(source, words)| match count(source) {
        0 => None,
        n if n
            == count(NoiseSource::Rounds)
                + count(NoiseSource::History)
                + count(NoiseSource::Assumed)
                + count(NoiseSource::Exact)
                + count(NoiseSource::SameExecutables) =>
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_values_read_with_si_prefixes_never_an_exponent() {
        // The Hz history's values and axis ticks (github-action-benchmark, `customBiggerIsBetter`).
        assert_eq!(format_measure(93_480_000.0, Some("Hz")), "93.48 MHz");
        assert_eq!(format_measure(8_886_000.0, Some("Hz")), "8.886 MHz");
        assert_eq!(format_measure(2.5e9, Some("ops/sec")), "2.500 Gops/sec");
        assert_eq!(format_measure(1.5e6, Some("MiB/s")), "1.500 M MiB/s");
        assert_eq!(format_measure(123_456.0, Some("Hz")), "123,456 Hz");
        assert_eq!(format_measure(-4_321.0, Some("B")), "-4,321 B");
        assert_eq!(format_measure(512.25, Some("MiB")), "512.2 MiB");
        assert_eq!(format_measure(0.0025, Some("s/op")), "0.002500 s/op");
        assert_eq!(format_measure(0.000_025, Some("s/op")), "25.00 µs/op");
        assert_eq!(format_measure(0.0, Some("%")), "0.000 %");
        // Times keep their own units.
        assert_eq!(format_measure(2.0, Some("ms")), format_ns(2e6));
        for value in [1e-20, 3e-9, 7e7, 9.9e20] {
            let text = format_measure(value, Some("Hz"));
            assert!(!text.contains('e'), "{value}: {text}");
        }
    }
}
