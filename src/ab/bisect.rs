//! Bisection of a step: the first-parent commits between a good and a bad commit, probed
//! with adaptive same-job A/B rounds (each commit built once, in its own worktree) until the
//! commits that added the step are found, or a probe or the budget leaves it unresolved.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use benchgate_collector::{CommitSha, HardwareProfile, RepositoryName, Store};
use benchgate_gate::Policy;
use benchgate_gate::decision::{Decision, Verdict};
use benchgate_gate::glob::Glob;
use benchgate_gate::policy::Override;
use serde_json::{Value, json};

use super::identical;
use super::rounds::{self, Job, RoundsSetting};
use super::side::{self, Side, Worktree, git};
use crate::bench_command::CargoBench;

/// The smallest share of the step a commit must add to count as one of its causes.
pub const SHARE_OF_STEP: f64 = 0.25;

/// The smallest slowdown a probe looks for, however small the step: 3%.
pub const SMALLEST_THRESHOLD: f64 = 0.03;

/// What one probe found: `head` against `base`, for the benchmarks followed.
#[derive(Debug, Clone)]
pub struct Probe {
    pub base: CommitSha,
    pub head: CommitSha,
    /// Slower than `base` by the threshold (`regressed`), not (`pass`, `warn`, `improved`), or
    /// undecided after its rounds.
    pub outcome: Outcome,
    /// The rounds it took (the most any followed benchmark needed).
    pub rounds: usize,
    /// Per benchmark: id, ratio (head / base, time), verdict, the bound it rests on.
    pub benchmarks: Vec<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Slower,
    NotSlower,
    Inconclusive,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Slower => "slower",
            Outcome::NotSlower => "not slower",
            Outcome::Inconclusive => "inconclusive",
        }
    }
}

/// A commit that added part (or all) of the step.
pub struct Cause {
    pub commit: CommitSha,
    /// Its time against the level before it (the previous cause, or the good commit).
    pub ratios: Vec<(String, f64)>,
}

/// The commits built so far, each once, in its own worktree.
pub struct Builds<'a> {
    pub scratch: PathBuf,
    pub target_dir: PathBuf,
    pub bench: Option<CargoBench>,
    pub sides: HashMap<CommitSha, Side>,
    pub job: Job<'a>,
}

impl Builds<'_> {
    fn ensure(&mut self, commit: &CommitSha) -> anyhow::Result<()> {
        if self.sides.contains_key(commit) {
            return Ok(());
        }
        let short = commit.short().to_string();
        let mut side = Side {
            worktree: Worktree::add(self.scratch.join("worktrees").join(&short), commit)?,
            name: short.clone(),
            commit: commit.clone(),
            executables: Vec::new(),
            sources: Default::default(),
            branch: None,
        };
        if let Some(bench) = &self.bench {
            let bin = self.scratch.join("bin").join(&short);
            side::build_side(&mut side, bench, &self.target_dir, &bin)?;
        }
        self.sides.insert(commit.clone(), side);
        Ok(())
    }
}

/// The first-parent commits after `good` up to and including `bad`, oldest first.
pub fn first_parent_range(good: &CommitSha, bad: &CommitSha) -> anyhow::Result<Vec<CommitSha>> {
    if good == bad {
        bail!("--good and --bad are the same commit, {}", good.short());
    }
    git(&["merge-base", "--is-ancestor", good.as_str(), bad.as_str()]).with_context(|| {
        format!(
            "--good {} is not an ancestor of --bad {}",
            good.short(),
            bad.short()
        )
    })?;
    let listed = git(&[
        "rev-list",
        "--first-parent",
        "--reverse",
        &format!("{}..{}", good.as_str(), bad.as_str()),
    ])?;
    let commits: Vec<CommitSha> = listed
        .lines()
        .map(CommitSha::parse)
        .collect::<Result<_, _>>()?;
    if commits.last() != Some(bad) {
        bail!(
            "--bad {} is not on the first-parent line after --good {}",
            bad.short(),
            good.short()
        );
    }
    Ok(commits)
}

/// What to search.
pub struct Search<'a> {
    pub good: &'a CommitSha,
    pub bad: &'a CommitSha,
    /// After `good`, up to `bad`, oldest first.
    pub commits: &'a [CommitSha],
    /// The benchmarks to follow; empty: those the step regressed.
    pub only: &'a [String],
    pub budget: Option<Duration>,
    pub started: Instant,
}

/// What the search found.
pub struct Found {
    /// The benchmarks followed, with the step's size (bad against good, time ratio).
    pub step: Vec<(String, f64)>,
    /// The threshold each probe looked for, a time ratio.
    pub threshold: f64,
    pub probes: Vec<Probe>,
    pub causes: Vec<Cause>,
    /// When a probe stayed inconclusive or the budget ran out: the last commit known to be at
    /// the previous level and the first known to be past it.
    pub unresolved: Option<(CommitSha, CommitSha, &'static str)>,
}

/// Where probes run: the commits built so far, and where their runs are stored.
pub struct Lab<'s, 'b> {
    pub builds: &'s mut Builds<'b>,
    pub store: &'s Store,
    pub repository: &'s RepositoryName,
    pub profile: &'s HardwareProfile,
}

/// Measures the step (bad against good), then, stage by stage, finds the first commit after the
/// level so far that is slower than it by the threshold: each such commit is a cause, and the
/// next stage starts from it, until the bad commit is reached or a stage finds nothing.
pub async fn search(
    lab: &mut Lab<'_, '_>,
    policy: &Policy,
    what: &Search<'_>,
) -> anyhow::Result<Found> {
    let mut found = measure_step(lab, policy, what).await?;
    if found.step.is_empty() {
        // Not slower here: the step was the machine it was measured on, or is not reproduced.
        return Ok(found);
    }
    let followed: Vec<String> = found.step.iter().map(|(id, _)| id.clone()).collect();
    let probe_policy = threshold_policy(policy, &followed, found.threshold);
    let mut level = what.good.clone();
    let mut known_slower = true; // bad against good, just measured
    loop {
        let start = what
            .commits
            .iter()
            .position(|c| *c == level)
            .map_or(0, |i| i + 1);
        let stage = Stage {
            policy: &probe_policy,
            followed: &followed,
            level: &level,
            candidates: &what.commits[start..],
            known_slower,
        };
        if stage.candidates.is_empty() {
            break;
        }
        let Some(culprit) = stage.next_cause(lab, what, &mut found).await? else {
            break;
        };
        // Its size against the level before it: the probe that showed it slower.
        let ratios = found
            .probes
            .iter()
            .rev()
            .find(|p| p.base == level && p.head == culprit && p.outcome == Outcome::Slower)
            .map(|p| {
                p.benchmarks
                    .iter()
                    .filter_map(|b| Some((b["id"].as_str()?.to_owned(), b["ratio"].as_f64()?)))
                    .collect()
            })
            .unwrap_or_default();
        found.causes.push(Cause {
            commit: culprit.clone(),
            ratios,
        });
        if culprit == *what.bad {
            break;
        }
        level = culprit;
        known_slower = false;
    }
    Ok(found)
}

/// The first probe, bad against good under the policy's own limits: the benchmarks it finds
/// regressed are the step, and the threshold every later probe looks for is a share of it.
async fn measure_step(
    lab: &mut Lab<'_, '_>,
    policy: &Policy,
    what: &Search<'_>,
) -> anyhow::Result<Found> {
    let only = (!what.only.is_empty()).then(|| what.only.to_vec());
    let first = lab.probe(policy, what.good, what.bad, only).await?;
    let step: Vec<(String, f64)> = first
        .benchmarks
        .iter()
        .filter(|b| what.only.is_empty() || what.only.iter().any(|id| b["id"] == id.as_str()))
        .filter(|b| b["verdict"] == "regressed")
        .filter_map(|b| Some((b["id"].as_str()?.to_owned(), b["ratio"].as_f64()?)))
        .collect();
    for id in what.only {
        if !first.benchmarks.iter().any(|b| b["id"] == id.as_str()) {
            bail!(
                "--bench {id:?}: no such benchmark in the bad commit's run ({} were measured)",
                first.benchmarks.len()
            );
        }
    }
    let smallest_step = step
        .iter()
        .map(|(_, r)| r.ln())
        .fold(f64::INFINITY, f64::min);
    let threshold = (smallest_step * SHARE_OF_STEP)
        .exp()
        .max(1.0 + SMALLEST_THRESHOLD);
    Ok(Found {
        threshold: if step.is_empty() { 1.0 } else { threshold },
        step,
        probes: vec![first],
        causes: Vec::new(),
        unresolved: None,
    })
}

/// One stage of the search: the commits after `level`, the last of them (bad) slower than it.
struct Stage<'a> {
    policy: &'a Policy,
    followed: &'a [String],
    level: &'a CommitSha,
    candidates: &'a [CommitSha],
    /// Whether the bad commit is already known to be slower than `level`.
    known_slower: bool,
}

impl Stage<'_> {
    /// The first candidate slower than the level, by bisection; `None` when the bad commit is
    /// not slower than the level (the search is done) or a probe or the budget left it
    /// unresolved (said in `found`).
    async fn next_cause(
        &self,
        lab: &mut Lab<'_, '_>,
        what: &Search<'_>,
        found: &mut Found,
    ) -> anyhow::Result<Option<CommitSha>> {
        let (level, candidates) = (self.level, self.candidates);
        if !self.known_slower {
            let last = lab.probe(self.policy, level, what.bad, Some(self.followed.to_vec()));
            let last = last.await?;
            let outcome = last.outcome;
            found.probes.push(last);
            match outcome {
                Outcome::NotSlower => return Ok(None),
                Outcome::Inconclusive => {
                    found.unresolved = Some((level.clone(), what.bad.clone(), "inconclusive"));
                    return Ok(None);
                }
                Outcome::Slower => {}
            }
        }
        // Invariant: `level` (index -1) is not slower than itself; candidates[hi] is slower
        // than `level`; every candidate up to `lo` is not.
        let mut lo: isize = -1;
        let mut hi = candidates.len() - 1;
        let at = |i: isize| -> CommitSha {
            usize::try_from(i).map_or_else(|_| level.clone(), |i| candidates[i].clone())
        };
        while hi as isize - lo > 1 {
            if let Some(budget) = what.budget
                && what.started.elapsed() >= budget
            {
                found.unresolved = Some((at(lo), candidates[hi].clone(), "budget spent"));
                return Ok(None);
            }
            let mid = lo + (hi as isize - lo) / 2;
            let result = lab
                .probe(self.policy, level, &at(mid), Some(self.followed.to_vec()))
                .await?;
            let outcome = result.outcome;
            found.probes.push(result);
            match outcome {
                Outcome::Slower => hi = mid as usize,
                Outcome::NotSlower => lo = mid,
                Outcome::Inconclusive => {
                    found.unresolved = Some((at(lo), candidates[hi].clone(), "inconclusive"));
                    return Ok(None);
                }
            }
        }
        Ok(Some(candidates[hi].clone()))
    }
}

/// The policy with each followed benchmark's limit set to `threshold` (a time ratio), so a
/// probe's `regressed` means "slower by the threshold" and `pass` "excluded".
pub fn threshold_policy(policy: &Policy, followed: &[String], threshold: f64) -> Policy {
    let mut probe_policy = policy.clone();
    let increase = threshold - 1.0;
    let drop = 1.0 - 1.0 / threshold;
    let overrides = followed.iter().map(|id| Override {
        benchmarks: Glob::new(id),
        latency_increase: Some(increase),
        throughput_drop: Some(drop),
    });
    probe_policy.overrides = overrides.chain(policy.overrides.clone()).collect();
    probe_policy.quarantine.clear();
    probe_policy.budgets.clear();
    probe_policy
}

/// One probe: `head` against `base`, adaptive rounds of `only` (every benchmark when `None`).
impl Lab<'_, '_> {
    pub async fn probe(
        &mut self,
        policy: &Policy,
        base: &CommitSha,
        head: &CommitSha,
        only: Option<Vec<String>>,
    ) -> anyhow::Result<Probe> {
        let Lab {
            builds,
            store,
            repository,
            profile,
        } = self;
        let (store, repository, profile) = (*store, *repository, *profile);
        builds.ensure(base)?;
        builds.ensure(head)?;
        eprintln!("benchgate: probe {} against {}", head.short(), base.short());
        let (Some(base_side), Some(head_side)) = (builds.sides.get(base), builds.sides.get(head))
        else {
            bail!("internal: a probed commit was not built");
        };
        // Each probe's pair lists its benchmarks first, as `ab` does: a command two of whose
        // executables name one benchmark is refused, not probed on whichever ran last. The same
        // executables with nothing else changed cannot differ in speed: no rounds.
        if let Some(bench) = &builds.bench {
            let pair = [base_side, head_side];
            let listed =
                crate::ab::check_bench_command(pair, bench, &builds.scratch, &builds.target_dir)?;
            if identical::same_executables(pair)
                && identical::compare(pair, &listed, true)?.skips_rounds()
            {
                eprintln!(
                    "benchgate: probe {} against {}: the same executables, not measured",
                    head.short(),
                    base.short()
                );
                let decision = crate::ab::not_measured_decision(&listed.union(), policy);
                return Ok(summarize(base, head, &decision, only.as_deref()));
            }
        }
        let setting = RoundsSetting {
            counts: &[],
            job: builds.job,
            policy,
            bench: builds.bench.as_ref(),
            store,
            sides: [base_side, head_side],
            scratch: &builds.scratch,
            target_dir: &builds.target_dir,
            repository,
            profile,
            plan: None,
        };
        let ran = rounds::run_rounds(&setting, only.clone()).await?;
        if let Some(incomplete) = &ran.incomplete {
            bail!(
                "probe {} against {}: round {} failed on {} ({})",
                head.short(),
                base.short(),
                incomplete.round,
                incomplete.side,
                incomplete.failure
            );
        }
        let decision = ran.decide(policy, builds.job.rounds.plan());
        Ok(summarize(base, head, &decision, only.as_deref()))
    }
}

pub fn summarize(
    base: &CommitSha,
    head: &CommitSha,
    decision: &Decision,
    only: Option<&[String]>,
) -> Probe {
    let followed: Vec<_> = decision
        .benchmarks
        .iter()
        .filter(|b| only.is_none_or(|ids| ids.contains(&b.id)))
        .filter(|b| b.ratio.is_some())
        .collect();
    let verdicts: Vec<Verdict> = followed.iter().map(|b| b.verdict).collect();
    let outcome = if verdicts.contains(&Verdict::Regressed) {
        Outcome::Slower
    } else if !verdicts.is_empty()
        && verdicts
            .iter()
            .all(|v| matches!(v, Verdict::Pass | Verdict::Warn | Verdict::Improved))
    {
        Outcome::NotSlower
    } else {
        Outcome::Inconclusive
    };
    Probe {
        base: base.clone(),
        head: head.clone(),
        outcome,
        rounds: followed.iter().map(|b| b.rounds).max().unwrap_or(0),
        benchmarks: followed
            .iter()
            .map(|b| {
                json!({
                    "id": b.id,
                    "verdict": b.verdict.as_str(),
                    "ratio": b.ratio,
                    "lower": b.bound.and_then(|bound| bound.lower),
                    "upper": b.bound.and_then(|bound| bound.upper),
                    "rounds": b.rounds,
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_policy_limits_only_the_followed_benchmarks_to_the_threshold() {
        let followed = vec!["push".to_owned()];
        let policy = threshold_policy(&Policy::default(), &followed, 1.5);
        assert!((policy.log_limit("push", false) - 1.5f64.ln()).abs() < 1e-12);
        assert!((policy.log_limit("push", true) - 1.5f64.ln()).abs() < 1e-12);
        assert!((policy.log_limit("mix", false) - 0.15f64.ln_1p()).abs() < 1e-12);
    }
}
