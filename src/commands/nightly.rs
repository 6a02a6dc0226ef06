//! `benchgate nightly`: after a nightly run is stored, bisect each recent slowdown beyond its
//! limit that this machine's trend shows, within a time budget, and open one GitHub issue per
//! step (found again by a hidden marker, so a rerun updates it instead of opening another).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use benchgate_collector::{Bisection, CommitSha, RepositoryName, Store};
use benchgate_dashboards::site::{self, RECENT};
use benchgate_gate::report::links::benchmark_path;
use serde_json::Value;

use super::JobArgs;
use super::bisect::{self, Request};
use crate::environment;
use crate::reporting::load_policy;

/// `benchgate nightly`.
#[derive(clap::Args)]
pub struct Args {
    /// The time all bisections together may take; a step not reached stays for the next night.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    budget: Duration,
    /// The policy file [default: benchgate.toml if present]: a step beyond a benchmark's
    /// latency limit is bisected.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// GitHub's API [env GITHUB_API_URL, else https://api.github.com]; issues are opened only
    /// when GITHUB_TOKEN is set.
    #[arg(long, value_name = "URL")]
    api_url: Option<String>,
    /// The dashboard's address [env BENCHGATE_DASHBOARD_URL], for the issue's chart link.
    #[arg(long, value_name = "URL")]
    dashboard_url: Option<String>,
    /// The label of the issues opened (and found again).
    #[arg(long, default_value = "benchgate-bisect")]
    label: String,
    #[command(flatten)]
    job: JobArgs,
    /// The bench command, run in each checkout, e.g. `cargo bench`.
    #[arg(last = true, required = true, value_name = "BENCH COMMAND")]
    command: Vec<String>,
}

/// A recent slowdown of one benchmark on this machine.
#[derive(Debug, Clone)]
struct Step {
    benchmark: String,
    good: String,
    bad: String,
    /// after / before, time (per unit of work, of a throughput).
    ratio: f64,
    /// A Criterion throughput: its change is said of its rate, as the gate's report says it.
    throughput: bool,
}

impl Step {
    /// How much slower, in percent: of the time, or of a throughput's rate.
    fn slower_percent(&self) -> f64 {
        if self.throughput {
            (1.0 - self.ratio.recip()) * 100.0
        } else {
            (self.ratio - 1.0) * 100.0
        }
    }
}

/// Bisects the new steps, opens or updates their issues; returns 0 (2 on an error).
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let started = Instant::now();
    let policy = load_policy(args.config.as_deref())?;
    let repository = match &args.job.repo {
        Some(name) => RepositoryName::parse(name).context("--repo")?,
        None => environment::repository()?,
    };
    let fingerprint = environment::detect_profile()?.fingerprint().to_string();
    let store = Store::connect(&args.job.store.db).await?;
    let loaded = crate::trends::load(&store, &[]).await;
    let bisected = store.bisections().await;
    store.close().await;
    let (repositories, bisected) = (loaded?, bisected?);

    let Some(machine) = repositories
        .iter()
        .find(|r| r.name == repository.as_str())
        .and_then(|r| r.machines.iter().find(|m| m.fingerprint == fingerprint))
    else {
        eprintln!(
            "benchgate: no trend of {repository} on this machine ({}); nothing to bisect",
            &fingerprint[..12]
        );
        return Ok(0);
    };
    let steps = recent_steps(machine, &policy);
    eprintln!(
        "benchgate: {} recent slowdown(s) beyond the limit on {}",
        steps.len(),
        &fingerprint[..12]
    );

    let night = Night {
        github: crate::github::from_token(args.api_url.as_deref(), &repository)?,
        dashboard: args
            .dashboard_url
            .clone()
            .filter(|url| !url.is_empty())
            .or_else(|| crate::environment::non_empty_var("BENCHGATE_DASHBOARD_URL")),
        args: &args,
        repository: &repository,
        fingerprint: &fingerprint,
    };
    let mut failed = 0;
    for step in &steps {
        // A step left inconclusive (a noisy night, or the budget ran out) is tried again.
        let known = bisected.iter().rev().find(|b| {
            b.fingerprint == fingerprint
                && b.benchmark == step.benchmark
                && b.good.as_str() == step.good
                && b.bad.as_str() == step.bad
                && b.outcome != "inconclusive"
        });
        let found = match known {
            // Bisected on an earlier night: its evidence stands; only the issue is refreshed.
            Some(b) => Found {
                report: serde_json::from_str::<Value>(&b.report)
                    .context("a stored bisect report")?,
                outcome: b.outcome.clone(),
                culprits: b.culprits.clone(),
            },
            None => match night.bisect(step, started).await {
                None => continue,
                Some(Ok(found)) => found,
                // One step that cannot be bisected (history rewritten, a commit that does not
                // build) does not hold up the others; the run still fails at the end.
                Some(Err(e)) => {
                    eprintln!(
                        "benchgate: error: bisecting {} between {} and {}: {e:#}",
                        step.benchmark,
                        &step.good[..7],
                        &step.bad[..7]
                    );
                    failed += 1;
                    continue;
                }
            },
        };
        eprintln!(
            "benchgate: {} {}..{}: {}",
            step.benchmark,
            &step.good[..7],
            &step.bad[..7],
            found.outcome
        );
        print!("{}", bisect::text(&found.report));
        night.file(step, found).await?;
    }
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} steps could not be bisected (see above)",
            steps.len()
        );
    }
    Ok(0)
}

/// Recent steps of Criterion benchmarks beyond their limit: a time's latency limit, a
/// throughput's drop limit (its trend is a rate, each run's own work over its own time, so an
/// input that grew is not a step).
fn recent_steps(machine: &site::Machine, policy: &benchgate_gate::Policy) -> Vec<Step> {
    let mut steps = Vec::new();
    for (series, changes) in machine.series.iter().zip(site::change_points(machine)) {
        let n = series.points.len();
        let is_throughput = series.throughput.is_some();
        if series.unit.is_some() && !is_throughput {
            continue;
        }
        for change in changes {
            // after / before of the time per unit of work
            let ratio = if is_throughput {
                change.ratio.recip()
            } else {
                change.ratio
            };
            if change.index + RECENT < n
                || ratio.ln() < policy.log_limit(&series.benchmark, is_throughput)
            {
                continue;
            }
            steps.push(Step {
                benchmark: series.benchmark.clone(),
                good: series.points[change.index - 1].commit.clone(),
                bad: series.points[change.index].commit.clone(),
                ratio,
                throughput: is_throughput,
            });
        }
    }
    steps
}

/// What a bisection of a step found: its report, outcome and culprits.
struct Found {
    report: Value,
    outcome: String,
    culprits: Vec<CommitSha>,
}

/// What every step of one night shares.
struct Night<'a> {
    args: &'a Args,
    repository: &'a RepositoryName,
    fingerprint: &'a str,
    github: Option<crate::github::api::GitHub>,
    dashboard: Option<String>,
}

impl Night<'_> {
    /// Bisects `step` within what is left of the budget; `None` when nothing is left (the step
    /// waits for the next night).
    async fn bisect(&self, step: &Step, started: Instant) -> Option<anyhow::Result<Found>> {
        let args = self.args;
        let Some(left) = args.budget.checked_sub(started.elapsed()) else {
            eprintln!(
                "benchgate: the budget ({}) is spent; {} {}..{} waits for the next night",
                humantime::format_duration(args.budget),
                step.benchmark,
                &step.good[..7],
                &step.bad[..7]
            );
            return None;
        };
        let bisected = bisect::bisect(&Request {
            good: &step.good,
            bad: &step.bad,
            benches: std::slice::from_ref(&step.benchmark),
            max_rounds: args.job.max_rounds,
            budget: Some(left),
            started: Instant::now(),
            db: &args.job.store.db,
            repo: Some(self.repository.as_str()),
            target_dir: args.job.target_dir.as_deref(),
            config: args.config.as_deref(),
            api_url: args.api_url.as_deref(),
            command: &args.command,
        })
        .await;
        Some(bisected.map(|report| {
            let outcome = report["outcome"].as_str().unwrap_or("").to_owned();
            let culprits = report["causes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| CommitSha::parse(c["commit"].as_str()?).ok())
                .collect();
            Found {
                report,
                outcome,
                culprits,
            }
        }))
    }

    /// Opens or updates the step's issue (with a GitHub token) and records the bisection.
    async fn file(&self, step: &Step, found: Found) -> anyhow::Result<()> {
        let Some(github) = &self.github else {
            return Ok(());
        };
        let args = self.args;
        let chart = self.dashboard.as_ref().map(|url| {
            format!(
                "{}/{}",
                url.trim_end_matches('/'),
                benchmark_path(
                    self.repository.as_str(),
                    self.fingerprint,
                    &step.benchmark,
                    "html"
                )
            )
        });
        let (title, body) = issue_text(step, self.fingerprint, &found.report, chart.as_deref());
        let marker = marker(step, self.fingerprint);
        let existing = github
            .issues_labelled(&args.label)
            .await
            .context("listing benchgate's issues")?
            .into_iter()
            .find(|issue| issue.body.as_deref().is_some_and(|b| b.contains(&marker)));
        let number = match existing {
            Some(issue) => {
                github
                    .update_issue(issue.number, &title, &body)
                    .await
                    .with_context(|| format!("updating issue #{}", issue.number))?;
                eprintln!("benchgate: issue #{} updated", issue.number);
                issue.number
            }
            None => {
                let number = github
                    .create_issue(&title, &body, &[&args.label])
                    .await
                    .context("opening an issue")?;
                eprintln!("benchgate: issue #{number} opened");
                number
            }
        };
        let store = Store::connect(&args.job.store.db).await?;
        let recorded = store
            .record_bisection(&Bisection {
                repository: self.repository.clone(),
                fingerprint: self.fingerprint.to_owned(),
                benchmark: step.benchmark.clone(),
                good: CommitSha::parse(&step.good)?,
                bad: CommitSha::parse(&step.bad)?,
                outcome: found.outcome,
                culprits: found.culprits,
                issue_number: Some(number),
                report: found.report.to_string(),
            })
            .await;
        store.close().await;
        recorded?;
        Ok(())
    }
}

/// The hidden line that finds a step's issue again: machine, benchmark and commits.
fn marker(step: &Step, fingerprint: &str) -> String {
    format!(
        "<!-- benchgate:bisect {} {} {} {} -->",
        &fingerprint[..fingerprint.len().min(12)],
        step.good,
        step.bad,
        step.benchmark.replace("--", "-\u{200b}-")
    )
}

/// GitHub's limit on an issue's body, in characters.
const BODY_LIMIT: usize = 65_536;

/// The issue's title and body: the benchmark, the step's size, the chart, what bisecting found
/// and every probe.
fn issue_text(
    step: &Step,
    fingerprint: &str,
    report: &Value,
    chart: Option<&str>,
) -> (String, String) {
    use std::fmt::Write as _;
    let change = step.slower_percent();
    let title: String = format!(
        "{} {change:.1}% slower between {} and {}",
        step.benchmark,
        &step.good[..7],
        &step.bad[..7]
    )
    .chars()
    .take(256)
    .collect();
    let mut body = marker(step, fingerprint);
    let _ = write!(
        body,
        "\n## `{}` got {change:.1}% slower\n\nThe nightly trend on machine `{}` stepped between {} and {}",
        step.benchmark,
        &fingerprint[..fingerprint.len().min(12)],
        &step.good[..7],
        &step.bad[..7]
    );
    match chart {
        Some(url) => {
            let _ = writeln!(body, " ([trend]({url})).\n");
        }
        None => body.push_str(".\n\n"),
    }
    let causes = report["causes"].as_array().cloned().unwrap_or_default();
    let cause = |c: &Value| {
        let pull = c
            .get("pull_request")
            .map(|p| {
                format!(
                    " from #{} ({})",
                    p["number"],
                    p["title"].as_str().unwrap_or("")
                )
            })
            .unwrap_or_default();
        format!(
            "{} {}{pull}",
            c["commit"].as_str().unwrap_or(""),
            c["subject"].as_str().unwrap_or("")
        )
    };
    match report["outcome"].as_str() {
        Some("culprit") => {
            let _ = writeln!(body, "**Culprit:** {}\n", cause(&causes[0]));
        }
        Some("several") => {
            let _ = writeln!(body, "**Built up by {} commits:**\n", causes.len());
            for c in &causes {
                let _ = writeln!(body, "- {}", cause(c));
            }
            body.push('\n');
        }
        Some("no-culprit") => body.push_str(
            "**No culprit:** the bad commit is not slower than the good one when both are measured in the same job; the step was the machine.\n\n",
        ),
        _ => {
            let unresolved = &report["unresolved"];
            let _ = writeln!(
                body,
                "**Unresolved** ({}): between {} and {}.\n",
                unresolved["why"].as_str().unwrap_or(""),
                unresolved["last_good"].as_str().unwrap_or(""),
                unresolved["first_bad"].as_str().unwrap_or("")
            );
        }
    }
    body.push_str("<details><summary>Probes</summary>\n\n```\n");
    body.push_str(&bisect::text(report));
    body.push_str("```\n</details>\n\n");
    body.push_str("A later fix closes nothing on its own: close this issue when the step is accepted or undone. benchgate updates it when the nightly finds the same step again.\n");
    if body.chars().count() > BODY_LIMIT {
        body = body.chars().take(BODY_LIMIT - 200).collect::<String>()
            + "\n\n… (cut at GitHub's limit)\n";
    }
    (title, body)
}

#[cfg(test)]
mod tests {
    use benchgate_dashboards::chart::Point;
    use benchgate_dashboards::site::{Machine, Series};

    use super::recent_steps;

    /// 40 runs of `value` with ±1% of scatter, times `step` from run 33 on; a rate
    /// (`throughput`, in GiB/s, higher is better) or a time in ns.
    fn series(name: &str, value: f64, step: f64, throughput: bool) -> Series {
        Series {
            benchmark: name.to_owned(),
            points: (0..40u64)
                .map(|r| {
                    let scatter = 1.0 + 0.01 * (((r * 7) % 5) as f64 - 2.0) / 2.0;
                    let value = value * scatter * if r >= 33 { step } else { 1.0 };
                    Point {
                        commit: format!("{r:040x}"),
                        recorded_at_ms: 1_700_000_000_000 + r * 86_400_000,
                        value,
                        lower: value,
                        upper: value,
                        fastest: value,
                        overridden: false,
                    }
                })
                .collect(),
            budgets: Vec::new(),
            unit: throughput.then(|| "GiB/s".to_owned()),
            higher_is_better: throughput,
            count_change: None,
            throughput: throughput.then(|| "Bytes".to_owned()),
        }
    }

    #[test]
    fn a_throughput_is_held_to_the_drop_limit_and_a_time_to_the_latency_limit() {
        // The defaults: 10% less throughput, 15% more time. A rate that fell 12% is 13.6% more
        // time per byte: under the latency limit, beyond the throughput one.
        let machine = Machine {
            fingerprint: "f".repeat(64),
            components: Vec::new(),
            series: vec![
                series("encode/fell-12", 1.9, 0.88, true),
                series("encode/fell-8", 1.9, 0.92, true),
                series("encode/rose-30", 1.9, 1.3, true),
                series("parse/slower-13", 850.0, 1.13, false),
                series("parse/slower-20", 850.0, 1.2, false),
            ],
        };
        let steps = recent_steps(&machine, &benchgate_gate::Policy::default());
        let found: Vec<(&str, &str, f64)> = steps
            .iter()
            .map(|s| (s.benchmark.as_str(), &s.bad[36..], s.ratio))
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, "encode/fell-12");
        assert_eq!(found[0].1, "0021", "{found:?}");
        assert!((found[0].2 - 1.0 / 0.88).abs() < 0.01, "{found:?}");
        // Said of the rate, as the pull request comment says it: 12% slower, not 13.6%.
        assert!((steps[0].slower_percent() - 12.0).abs() < 0.5, "{found:?}");
        assert!((steps[1].slower_percent() - 20.0).abs() < 0.5, "{found:?}");
        assert_eq!(found[1].0, "parse/slower-20");
        assert!((found[1].2 - 1.2).abs() < 0.01, "{found:?}");
    }
}
