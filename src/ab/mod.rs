//! Same-job A/B's sides and their preparation before the first round: each side's worktree
//! (`side`), the dependency versions both sides build with, the benchmarks the bench command
//! selects (checked with Criterion's `--list`), and what identical executables mean for the
//! comparison.

pub mod bisect;
pub mod identical;
pub mod lockfile;
pub mod plan;
pub mod rounds;
pub mod side;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use benchgate_collector::CommitSha;
use benchgate_gate::Policy;
use benchgate_gate::decision::{BenchmarkResult, Decision, Mode, overall};

use crate::bench_command::CargoBench;
use crate::environment;
use crate::side_build;
use side::{Side, git};

/// The branch a ref names (`main`, `origin/main` → `main`), for the runs stored under it; none
/// for a SHA or an expression like `main~1`.
pub fn branch_of(reference: &str) -> Option<String> {
    let full = git(&["rev-parse", "--symbolic-full-name", reference]).ok()?;
    if let Some(branch) = full.strip_prefix("refs/heads/") {
        return Some(branch.to_owned());
    }
    let remote = full.strip_prefix("refs/remotes/")?;
    remote.split_once('/').map(|(_, branch)| branch.to_owned())
}

/// The benchmark ids each side's executables select, from Criterion's `--list`.
pub struct Listed {
    /// Base's, then head's.
    pub ids: [Vec<String>; 2],
    /// Per side, each executable's target and the ids it selects.
    pub by_target: [Vec<(String, Vec<String>)>; 2],
    /// Per side, the ids it listed once and not again: benchmarks named anew on every run (an
    /// id built from the current time, say), which no two runs share. Left out of `ids` and
    /// `by_target`.
    pub renamed: [Vec<String>; 2],
}

impl Listed {
    /// Every id either side selects, sorted.
    pub fn union(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.ids.iter().flatten().cloned().collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// The benchmarks named anew on every run, as the side that listed more of them named
    /// them (the head on a tie).
    pub fn renamed_shown(&self) -> &[String] {
        let [base, head] = &self.renamed;
        if base.len() > head.len() { base } else { head }
    }

    /// Whether both sides select the same benchmarks.
    pub fn same(&self) -> bool {
        let sorted = |ids: &[String]| {
            let mut ids = ids.to_vec();
            ids.sort();
            ids
        };
        sorted(&self.ids[0]) == sorted(&self.ids[1])
    }
}

/// Checks the bench command before any round, in seconds: each side's executables list the
/// benchmarks it selects, and with benchgate's exact-id filter in place of the user's they
/// list the same ones, so later rounds can be narrowed to the undecided benchmarks.
pub fn check_bench_command(
    sides: [&Side; 2],
    bench: &CargoBench,
    scratch: &Path,
    target_dir: &Path,
) -> anyhow::Result<Listed> {
    let home = scratch.join("criterion-list");
    let checking = "checking the bench command before the first round (Criterion's --list)";
    let mut ids: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    let mut by_target: [Vec<(String, Vec<String>)>; 2] = [Vec::new(), Vec::new()];
    for (i, side) in sides.iter().enumerate() {
        let each = side_build::list_each(&side.executables, bench, None, &home, target_dir)
            .with_context(|| format!("{checking}, {}", side.name))?;
        ids[i] = each.iter().flatten().cloned().collect();
        by_target[i] = side
            .executables
            .iter()
            .map(|e| e.target.clone())
            .zip(each)
            .collect();
        if let Some(why) = side_build::shared_ids(&by_target[i]) {
            bail!("{checking}, {}: {why}", side.name);
        }
    }
    let mut listed = Listed {
        ids,
        by_target,
        renamed: [Vec::new(), Vec::new()],
    };
    let all = listed.union();
    if all.is_empty() {
        bail!(
            "{checking}: the bench command selects no benchmark{}",
            bench
                .user_filter()
                .map(|f| format!(" (its filter is {f:?})"))
                .unwrap_or_default()
        );
    }
    for (i, side) in sides.iter().enumerate() {
        let mine = &listed.ids[i];
        if mine.is_empty() {
            continue;
        }
        let narrowed = side_build::list(&side.executables, bench, Some(mine), &home, target_dir)
            .with_context(|| {
                format!(
                    "{checking}: the command with benchgate's exact-id filter in place of the user's, {}",
                    side.name
                )
            })?;
        let narrowed: HashSet<&String> = narrowed.iter().collect();
        let missing: Vec<String> = mine
            .iter()
            .filter(|id| !narrowed.contains(id))
            .cloned()
            .collect();
        if missing.is_empty() {
            continue;
        }
        // An id the filter missed may be one the bench names anew on every run: listed once
        // more as the user runs it, such an id is gone too.
        let again = side_build::list(&side.executables, bench, None, &home, target_dir)
            .with_context(|| format!("{checking}, listed again, {}", side.name))?;
        if missing.iter().any(|id| again.contains(id)) {
            bail!(
                "{checking}: with benchgate's exact-id filter the {} side lists {} of its {} benchmarks; benchgate cannot narrow later rounds of this command (ids with characters Criterion's filter does not take?)",
                side.name,
                mine.len() - missing.len(),
                mine.len()
            );
        }
        listed.ids[i].retain(|id| !missing.contains(id));
        for (_, ids) in listed.by_target[i].iter_mut() {
            ids.retain(|id| !missing.contains(id));
        }
        listed.renamed[i] = missing;
    }
    if listed.union().is_empty() {
        bail!(
            "{checking}: every benchmark the bench command selects is named anew on each run ({}), so no two runs can be compared",
            renamed_text(listed.renamed_shown())
        );
    }
    eprintln!(
        "benchgate: the bench command selects {} benchmarks{}",
        listed.union().len(),
        bench
            .user_filter()
            .map(|f| format!(" (filter {f:?})"))
            .unwrap_or_default()
    );
    Ok(listed)
}

/// The note on benchmarks [`Listed::renamed`] leaves out of the rounds, or `None`.
pub fn renamed_note(listed: &Listed) -> Option<String> {
    let shown = listed.renamed_shown();
    let one = shown.len() == 1;
    (!shown.is_empty()).then(|| {
        format!(
            "Left out {} benchmark{} named anew on every run ({}, as one listing named {}): no two runs share {}, so none can be compared. An id built from a fixed value (`BenchmarkId::new(\"name\", \"now\")` rather than the current time) gates {}.",
            shown.len(),
            if one { "" } else { "s" },
            renamed_text(shown),
            if one { "it" } else { "them" },
            if one { "its id" } else { "their ids" },
            if one { "it" } else { "them" },
        )
    })
}

/// The first few of `ids`, in backticks.
fn renamed_text(ids: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut text = ids
        .iter()
        .take(SHOWN)
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    text
}

/// Adds the benchmarks of executables both sides built alike (left out of the rounds) to
/// `decision` as passes, not measured, and judges it again.
pub fn pass_unmeasured(decision: &mut Decision, ids: &[String], policy: &Policy) {
    if ids.is_empty() {
        return;
    }
    decision.benchmarks.extend(
        ids.iter()
            .map(|id| BenchmarkResult::same_executables(id, policy)),
    );
    decision.benchmarks.sort_by(|a, b| a.id.cmp(&b.id));
    decision.verdict = overall(&decision.benchmarks);
}

/// The decision when no round ran because base and head built the same executables: every
/// benchmark passes, not measured.
pub fn not_measured_decision(ids: &[String], policy: &Policy) -> Decision {
    let benchmarks: Vec<BenchmarkResult> = ids
        .iter()
        .map(|id| BenchmarkResult::same_executables(id, policy))
        .collect();
    Decision {
        verdict: overall(&benchmarks),
        mode: Mode::SameJobAb,
        rounds: 0,
        benchmarks,
        budgets: Vec::new(),
        unjudged: Vec::new(),
    }
}

/// The commit `reference` names, or an error naming `flag`.
pub fn resolve(flag: &str, reference: &str) -> anyhow::Result<CommitSha> {
    let sha = git(&["rev-parse", "--verify", &format!("{reference}^{{commit}}")])
        .with_context(|| format!("{flag} {reference}: not a commit in this repository"))?;
    Ok(CommitSha::parse(&sha)?)
}

/// The scratch directory beside Criterion's output (`target/NAME`), absolute: the bench command
/// runs inside the worktrees.
pub fn scratch_dir(name: &str) -> anyhow::Result<PathBuf> {
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    let scratch = environment::criterion_home()?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| top.join("target"))
        .join(name);
    std::path::absolute(&scratch).context("cannot resolve the scratch directory")
}

/// The cargo target directory every side builds into: `--target-dir`, else `scratch/target`.
pub fn shared_target_dir(option: Option<&Path>, scratch: &Path) -> anyhow::Result<PathBuf> {
    match option {
        Some(dir) => std::path::absolute(dir).context("--target-dir: cannot resolve it"),
        None => Ok(scratch.join("target")),
    }
}
