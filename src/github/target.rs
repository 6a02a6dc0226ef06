//! Where a report goes on GitHub: the flags, then the Actions variables, resolved once into a
//! `Target` (repository, pull request, commit, token, API URL) with its client.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, bail};
use benchgate_collector::{CommitSha, RepositoryName};
use serde_json::Value;

use super::api::GitHub;

/// Where and how to reach GitHub; each flag overrides the Actions variable named beside it.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct GitHubArgs {
    /// The API URL [env GITHUB_API_URL, else https://api.github.com]; GitHub Enterprise's
    /// carries a path, e.g. https://ghe.example.com/api/v3.
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// The token [env GITHUB_TOKEN]. Prefer the variable: a flag shows in process lists.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// The event payload [env GITHUB_EVENT_PATH]: the pull request and its head commit.
    #[arg(long, value_name = "FILE")]
    pub event_path: Option<PathBuf>,
    /// The pull request [default: from the event].
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// The commit the check is on [default: the event's pull-request head, else the summary's
    /// head commit, else GITHUB_SHA].
    #[arg(long, value_name = "SHA")]
    pub sha: Option<String>,
    /// The job summary file [env GITHUB_STEP_SUMMARY].
    #[arg(long, value_name = "FILE")]
    pub step_summary: Option<PathBuf>,
    /// The step outputs file [env GITHUB_OUTPUT].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The login whose comment is the sticky one [default: any bot's comment with the marker].
    #[arg(long, value_name = "LOGIN")]
    pub comment_author: Option<String>,
    /// The dashboard's address (GitHub Pages, or a `benchgate serve`) [env
    /// BENCHGATE_DASHBOARD_URL]: the comment links each benchmark's trend page and shows the
    /// regressions' trend charts.
    #[arg(long, value_name = "URL")]
    pub dashboard_url: Option<String>,
    /// The longest wait, in seconds, for GitHub's rate limits before giving up.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub max_wait: u64,
}

impl GitHubArgs {
    /// The event payload: `--event-path`, else `GITHUB_EVENT_PATH`, else an error saying so.
    pub fn event_path_or_env(&self) -> anyhow::Result<PathBuf> {
        self.event_path
            .clone()
            .or_else(|| env("GITHUB_EVENT_PATH").map(PathBuf::from))
            .context("no event: pass --event-path or set GITHUB_EVENT_PATH")
    }
}

/// An Actions variable, when set and not empty.
pub(super) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Where the verdict goes: the client, the pull request and the commit.
pub struct Target {
    pub(super) github: Option<GitHub>,
    pub(super) pr: Option<u64>,
    pub(super) sha: Option<String>,
    pub(super) args: GitHubArgs,
    pub(super) workflow_run_head_sha: Option<String>,
    /// The event that triggered the `workflow_run` being reacted to (`pull_request`, `push`).
    pub(super) workflow_run_event: Option<String>,
}

impl Target {
    /// Resolves flags, then the Actions environment. `repository` is the `--repo` flag if the
    /// command has one; `head_commit` the summary's, when known.
    pub fn resolve(
        args: &GitHubArgs,
        repository: Option<&str>,
        head_commit: Option<&str>,
    ) -> anyhow::Result<Self> {
        let event_path = args
            .event_path
            .clone()
            .or_else(|| env("GITHUB_EVENT_PATH").map(PathBuf::from));
        let event = match &event_path {
            Some(path) => read_json(path)?,
            None => Value::Null,
        };
        let pr = args
            .pr
            .or_else(|| event["pull_request"]["number"].as_u64())
            .or_else(|| {
                // issue_comment on a pull request
                event["issue"]["pull_request"]
                    .is_object()
                    .then(|| event["issue"]["number"].as_u64())
                    .flatten()
            });
        let sha = args
            .sha
            .clone()
            .or_else(|| {
                event["pull_request"]["head"]["sha"]
                    .as_str()
                    .map(str::to_owned)
            })
            .or_else(|| head_commit.map(str::to_owned))
            .or_else(|| env("GITHUB_SHA"));
        if let Some(sha) = &sha {
            CommitSha::parse(sha).context("--sha")?;
        }
        let repository = repository
            .map(str::to_owned)
            .or_else(|| event["repository"]["full_name"].as_str().map(str::to_owned))
            .or_else(|| env("GITHUB_REPOSITORY"));
        let token = args.token.clone().or_else(|| env("GITHUB_TOKEN"));
        let github = match (token, repository) {
            (Some(token), Some(repository)) => {
                RepositoryName::parse(&repository).context("--repo")?;
                let api_url = args
                    .api_url
                    .clone()
                    .or_else(|| env("GITHUB_API_URL"))
                    .unwrap_or_else(|| "https://api.github.com".to_owned());
                Some(GitHub::new(
                    &api_url,
                    &token,
                    &repository,
                    Duration::from_secs(args.max_wait),
                )?)
            }
            (None, _) => None,
            (Some(_), None) => {
                bail!(
                    "no repository to publish to: pass --repo OWNER/NAME or set GITHUB_REPOSITORY"
                )
            }
        };
        Ok(Self {
            github,
            pr,
            sha,
            args: args.clone(),
            workflow_run_head_sha: event["workflow_run"]["head_sha"]
                .as_str()
                .map(str::to_owned),
            workflow_run_event: event["workflow_run"]["event"].as_str().map(str::to_owned),
        })
    }

    /// The event that triggered the `workflow_run` this job reacts to, if it is one.
    pub fn workflow_run_event(&self) -> Option<&str> {
        self.workflow_run_event.as_deref()
    }

    /// The pull request.
    pub fn pr(&self) -> Option<u64> {
        self.pr
    }

    /// The commit the check goes on.
    pub fn sha(&self) -> Option<&str> {
        self.sha.as_deref()
    }

    /// In a `workflow_run` workflow, the head commit of the run that made the artifact.
    pub fn workflow_run_head_sha(&self) -> Option<&str> {
        self.workflow_run_head_sha.as_deref()
    }

    /// Where the report links: the repository's commits on GitHub (GITHUB_SERVER_URL, else
    /// github.com) and, when one is given, the dashboard.
    pub fn links(&self) -> benchgate_gate::report::Links {
        let repository = self.github.as_ref().map(|g| g.repository().to_owned());
        let server = env("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".to_owned());
        let dashboard = self
            .args
            .dashboard_url
            .clone()
            .or_else(|| env("BENCHGATE_DASHBOARD_URL"));
        benchgate_gate::report::Links {
            repository: repository
                .as_ref()
                .map(|r| format!("{}/{r}", server.trim_end_matches('/'))),
            trend_images: dashboard.is_some(),
            dashboard,
            repository_name: repository,
        }
    }

    /// The client, or an error saying how to give one.
    pub fn github_client(&self) -> anyhow::Result<&GitHub> {
        self.github.as_ref().context(
            "no GitHub token: set GITHUB_TOKEN (in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`) or pass --token",
        )
    }
}

/// A check run created when the gate starts, to be completed with the verdict.
fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("event {}: cannot read", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("event {}: not JSON", path.display()))
}

/// Now, as GitHub's timestamps are written.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}
