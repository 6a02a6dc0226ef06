//! `benchgate bisect`: from a step between two commits to the commit (or commits) that made it.
//! Each probe is a same-job A/B comparison (the `ab` machinery: worktrees, one shared target
//! directory, adaptive rounds of only the benchmarks in question) of a commit against the last
//! level known to be good; every round is stored as a run.
//!
//! The search: first the bad commit against the good one, to measure the step; then a binary
//! search on the first-parent commits between them for the first commit slower than the good
//! level by a quarter of the step; then the same from that commit, until the bad commit is no
//! slower than the last one found. One commit found is the culprit; several built the step up
//! together; a probe that stays inconclusive after its rounds ends the search with the range it
//! narrowed, never a guess.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use benchgate_collector::store::BISECT_BRANCH;
use benchgate_collector::{
    Bisection, CommitSha, HardwareProfile, Location, RepositoryName, RunKind, Store,
};
use serde_json::{Value, json};

use super::{Format, JobArgs};
use crate::ab::bisect::{Builds, Found, Lab, Search, first_parent_range, search};
use crate::ab::rounds::{Job, Rounds};
use crate::ab::side::git;
use crate::ab::{resolve, scratch_dir, shared_target_dir};
use crate::bench_command::CargoBench;
use crate::environment;
use crate::github::api::CommitPull;
use crate::reporting::load_policy;

/// `benchgate bisect`.
#[derive(clap::Args)]
pub struct Args {
    /// The last commit known to be at the old level.
    #[arg(long, value_name = "REF")]
    good: String,
    /// The first commit known to be at the new level.
    #[arg(long, value_name = "REF")]
    bad: String,
    /// A benchmark whose step to follow (its exact id; repeat for several) [default: every
    /// benchmark the bad commit regressed against the good one].
    #[arg(long = "bench", value_name = "ID")]
    benches: Vec<String>,
    /// Stop probing once the bisection has taken this long (e.g. `30m`), reporting the range
    /// narrowed so far.
    #[arg(long, value_parser = humantime::parse_duration)]
    budget: Option<Duration>,
    /// The policy file [default: benchgate.toml if present].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// GitHub's API, to name the culprit's pull request [env GITHUB_API_URL, else
    /// https://api.github.com]; asked only when GITHUB_TOKEN is set.
    #[arg(long, value_name = "URL")]
    api_url: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    job: JobArgs,
    /// The bench command, run in each checkout, e.g. `cargo bench`.
    #[arg(last = true, required = true, value_name = "BENCH COMMAND")]
    command: Vec<String>,
}

/// Bisects, prints what it found, and returns 0 (2 on an error).
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let document = bisect(&Request {
        good: &args.good,
        bad: &args.bad,
        benches: &args.benches,
        max_rounds: args.job.max_rounds,
        budget: args.budget,
        started: Instant::now(),
        db: &args.job.store.db,
        repo: args.job.repo.as_deref(),
        target_dir: args.job.target_dir.as_deref(),
        config: args.config.as_deref(),
        api_url: args.api_url.as_deref(),
        command: &args.command,
    })
    .await?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&document)?),
        Format::Text => print!("{}", text(&document)),
    }
    Ok(0)
}

/// One step to bisect, as `bisect` and `nightly` ask for it.
pub(super) struct Request<'a> {
    pub good: &'a str,
    pub bad: &'a str,
    /// The benchmarks to follow; empty: those the step regressed.
    pub benches: &'a [String],
    pub max_rounds: u32,
    /// The time the bisection may take, counted from `started`.
    pub budget: Option<Duration>,
    pub started: Instant,
    pub db: &'a Location,
    pub repo: Option<&'a str>,
    pub target_dir: Option<&'a Path>,
    pub config: Option<&'a Path>,
    pub api_url: Option<&'a str>,
    pub command: &'a [String],
}

/// Bisects one step, records what it found for each followed benchmark in the store (one row
/// per step, replacing an earlier one), and returns the report (JSON).
pub(super) async fn bisect(request: &Request<'_>) -> anyhow::Result<Value> {
    let policy = load_policy(request.config)?;
    let good = resolve("--good", request.good)?;
    let bad = resolve("--bad", request.bad)?;
    let commits = first_parent_range(&good, &bad)?;
    let repository = match request.repo {
        Some(name) => RepositoryName::parse(name).context("--repo")?,
        None => environment::repository()?,
    };
    let profile = environment::detect_profile()?;
    let scratch = scratch_dir("benchgate-bisect")?;
    let target_dir = shared_target_dir(request.target_dir, &scratch)?;
    let mut builds = Builds {
        bench: CargoBench::parse(request.command).context("the bench command")?,
        sides: HashMap::new(),
        job: Job {
            rounds: Rounds::Adaptive {
                max: request.max_rounds as usize,
                budget: None,
                stop_futile: false,
            },
            command: request.command,
            kind: RunKind::Local,
            branch: Some(BISECT_BRANCH),
        },
        scratch,
        target_dir,
    };
    let store = Store::connect(request.db).await?;
    let mut lab = Lab {
        builds: &mut builds,
        store: &store,
        repository: &repository,
        profile: &profile,
    };
    let searched = search(
        &mut lab,
        &policy,
        &Search {
            good: &good,
            bad: &bad,
            commits: &commits,
            only: request.benches,
            budget: request.budget,
            started: request.started,
        },
    )
    .await;
    drop(builds);
    let found = match searched {
        Ok(found) => found,
        Err(e) => {
            store.close().await;
            return Err(e);
        }
    };
    let pulls = match pull_requests(&found, request.api_url, &repository).await {
        Ok(pulls) => pulls,
        Err(e) => {
            store.close().await;
            return Err(e);
        }
    };
    let subjects: HashMap<CommitSha, String> = commits
        .iter()
        .chain(std::iter::once(&good))
        .map(|c| {
            let subject = git(&["log", "-1", "--format=%s", c.as_str()]).unwrap_or_default();
            (c.clone(), subject)
        })
        .collect();
    let document = found.to_json(&good, &bad, commits.len(), &subjects, &pulls);
    let recorded = record(&store, &document, &found, &repository, &profile).await;
    store.close().await;
    recorded?;
    Ok(document)
}

/// Stores what the bisection found, one row per followed benchmark.
async fn record(
    store: &Store,
    document: &Value,
    found: &Found,
    repository: &RepositoryName,
    profile: &HardwareProfile,
) -> anyhow::Result<()> {
    let (Some(good), Some(bad), Some(outcome)) = (
        document["good"].as_str(),
        document["bad"].as_str(),
        document["outcome"].as_str(),
    ) else {
        return Ok(());
    };
    // A step that was not reproduced is recorded under the benchmarks asked about, or none.
    let followed: Vec<String> = if found.step.is_empty() {
        found
            .probes
            .first()
            .map(|p| {
                p.benchmarks
                    .iter()
                    .filter_map(|b| b["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    } else {
        found.step.iter().map(|(id, _)| id.clone()).collect()
    };
    for benchmark in followed {
        store
            .record_bisection(&Bisection {
                repository: repository.clone(),
                fingerprint: profile.fingerprint().to_string(),
                benchmark,
                good: CommitSha::parse(good)?,
                bad: CommitSha::parse(bad)?,
                outcome: outcome.to_owned(),
                culprits: found.causes.iter().map(|c| c.commit.clone()).collect(),
                issue_number: None,
                report: document.to_string(),
            })
            .await?;
    }
    Ok(())
}

/// The pull request each cause came from, when `GITHUB_TOKEN` is set.
async fn pull_requests(
    found: &Found,
    api_url: Option<&str>,
    repository: &RepositoryName,
) -> anyhow::Result<HashMap<CommitSha, CommitPull>> {
    let mut pulls = HashMap::new();
    if found.causes.is_empty() {
        return Ok(pulls);
    }
    let Some(github) = crate::github::from_token(api_url, repository)? else {
        return Ok(pulls);
    };
    for cause in &found.causes {
        let pull = github
            .commit_pulls(cause.commit.as_str())
            .await
            .with_context(|| {
                format!("asking GitHub for {}'s pull request", cause.commit.short())
            })?;
        if let Some(pull) = pull.into_iter().next() {
            pulls.insert(cause.commit.clone(), pull);
        }
    }
    Ok(pulls)
}

impl Found {
    fn to_json(
        &self,
        good: &CommitSha,
        bad: &CommitSha,
        commits: usize,
        subjects: &HashMap<CommitSha, String>,
        pulls: &HashMap<CommitSha, CommitPull>,
    ) -> Value {
        let commit = |c: &CommitSha| {
            let mut value = json!({
                "commit": c.as_str(),
                "subject": subjects.get(c).cloned().unwrap_or_default(),
            });
            if let Some(pull) = pulls.get(c) {
                value["pull_request"] = json!({
                    "number": pull.number,
                    "title": pull.title,
                    "url": pull.url,
                });
            }
            value
        };
        let outcome = match (&self.unresolved, self.causes.len(), self.step.is_empty()) {
            (_, _, true) => "no-culprit",
            (Some(_), _, _) => "inconclusive",
            (None, 1, _) => "culprit",
            (None, _, _) => "several",
        };
        json!({
            "good": good.as_str(),
            "bad": bad.as_str(),
            "commits": commits,
            "outcome": outcome,
            "step": self.step.iter().map(|(id, r)| json!({"id": id, "ratio": r})).collect::<Vec<_>>(),
            "threshold": self.threshold,
            "causes": self.causes.iter().map(|cause| {
                let mut value = commit(&cause.commit);
                value["ratios"] = cause.ratios.iter().map(|(id, r)| json!({"id": id, "ratio": r})).collect();
                value
            }).collect::<Vec<_>>(),
            "unresolved": self.unresolved.as_ref().map(|(low, high, why)| json!({
                "last_good": low.as_str(),
                "first_bad": high.as_str(),
                "why": why,
            })),
            "probes": self.probes.iter().map(|p| json!({
                "base": p.base.as_str(),
                "head": p.head.as_str(),
                "outcome": p.outcome.as_str(),
                "rounds": p.rounds,
                "benchmarks": p.benchmarks,
            })).collect::<Vec<_>>(),
            "bench_runs": self.probes.iter().map(|p| 2 * p.rounds).sum::<usize>(),
        })
    }
}

fn short(sha: &Value) -> &str {
    let text = sha.as_str().unwrap_or("");
    text.get(..7).unwrap_or(text)
}

fn percent(ratio: Option<f64>) -> String {
    ratio.map_or("-".to_owned(), |r| {
        let change = (r - 1.0) * 100.0;
        if change >= 0.0 {
            format!("{change:.1}% slower")
        } else {
            format!("{:.1}% faster", -change)
        }
    })
}

/// The report people read: the outcome first, then every probe.
pub(super) fn text(document: &Value) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let list = |key: &str| document[key].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "bisected {} first-parent commits from {} (good) to {} (bad)",
        document["commits"],
        short(&document["good"]),
        short(&document["bad"])
    );
    let step = list("step");
    if step.is_empty() {
        let _ = writeln!(
            out,
            "no culprit: {} is not slower than {} on this machine (the step was the machine it was measured on, or is not reproduced here)",
            short(&document["bad"]),
            short(&document["good"])
        );
    } else {
        for s in &step {
            let _ = writeln!(
                out,
                "step: {} {} (bad against good)",
                s["id"].as_str().unwrap_or(""),
                percent(s["ratio"].as_f64())
            );
        }
    }
    let cause_line = |cause: &Value| {
        let pull = cause
            .get("pull_request")
            .map(|p| format!(" (#{} {})", p["number"], p["title"].as_str().unwrap_or("")))
            .unwrap_or_default();
        let sizes: Vec<String> = cause["ratios"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                format!(
                    "{} {}",
                    r["id"].as_str().unwrap_or(""),
                    percent(r["ratio"].as_f64())
                )
            })
            .collect();
        format!(
            "{} {:?}{pull}: {}",
            short(&cause["commit"]),
            cause["subject"].as_str().unwrap_or(""),
            sizes.join(", ")
        )
    };
    let causes = list("causes");
    match document["outcome"].as_str() {
        Some("culprit") => {
            let _ = writeln!(out, "culprit: {}", cause_line(&causes[0]));
        }
        Some("several") => {
            let _ = writeln!(
                out,
                "the step was built up by {} commits, each against the level before it:",
                causes.len()
            );
            for cause in &causes {
                let _ = writeln!(out, "  {}", cause_line(cause));
            }
        }
        Some("inconclusive") => {
            for cause in &causes {
                let _ = writeln!(out, "found: {}", cause_line(cause));
            }
            let unresolved = &document["unresolved"];
            let _ = writeln!(
                out,
                "unresolved ({}): between {} (last at the old level) and {} (first past it); more rounds (--max-rounds) or a quieter machine would narrow it",
                unresolved["why"].as_str().unwrap_or(""),
                short(&unresolved["last_good"]),
                short(&unresolved["first_bad"])
            );
        }
        _ => {}
    }
    let _ = writeln!(
        out,
        "\nprobes ({} bench runs):\n  head     against  outcome       rounds  change (bound)",
        document["bench_runs"]
    );
    for probe in list("probes") {
        let changes: Vec<String> = probe["benchmarks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|b| {
                let bound = match (b["lower"].as_f64(), b["upper"].as_f64()) {
                    (Some(l), _) if b["verdict"] == "regressed" => {
                        format!("≥ {}", percent(Some(l)))
                    }
                    (_, Some(u)) => format!("≤ {}", percent(Some(u))),
                    _ => "-".to_owned(),
                };
                format!(
                    "{} {} ({bound})",
                    b["id"].as_str().unwrap_or(""),
                    percent(b["ratio"].as_f64())
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "  {:<8} {:<8} {:<13} {:>6}  {}",
            short(&probe["head"]),
            short(&probe["base"]),
            probe["outcome"].as_str().unwrap_or(""),
            probe["rounds"].as_u64().unwrap_or(0),
            changes.join("; ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(c: char) -> String {
        c.to_string().repeat(40)
    }

    #[test]
    fn the_text_report_names_the_culprit_its_pull_request_and_every_probe() {
        let document = json!({
            "good": sha('a'), "bad": sha('f'), "commits": 5, "outcome": "culprit",
            "step": [{"id": "push", "ratio": 4.0}],
            "threshold": 1.414,
            "causes": [{"commit": sha('c'), "subject": "push more",
                        "pull_request": {"number": 42, "title": "Push more", "url": "u"},
                        "ratios": [{"id": "push", "ratio": 3.98}]}],
            "unresolved": null,
            "probes": [
                {"base": sha('a'), "head": sha('f'), "outcome": "slower", "rounds": 3,
                 "benchmarks": [{"id": "push", "verdict": "regressed", "ratio": 4.0, "lower": 3.5, "upper": null}]},
                {"base": sha('a'), "head": sha('b'), "outcome": "not slower", "rounds": 2,
                 "benchmarks": [{"id": "push", "verdict": "pass", "ratio": 1.01, "lower": null, "upper": 1.08}]}
            ],
            "bench_runs": 10,
        });
        let report = text(&document);
        assert_eq!(
            report,
            "bisected 5 first-parent commits from aaaaaaa (good) to fffffff (bad)
step: push 300.0% slower (bad against good)
culprit: ccccccc \"push more\" (#42 Push more): push 298.0% slower

probes (10 bench runs):
  head     against  outcome       rounds  change (bound)
  fffffff  aaaaaaa  slower             3  push 300.0% slower (≥ 250.0% slower)
  bbbbbbb  aaaaaaa  not slower         2  push 1.0% slower (≤ 8.0% slower)
"
        );
    }
}
