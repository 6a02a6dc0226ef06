//! GitHub's REST API through octocrab: the few endpoints benchgate uses, with GitHub's rate
//! limits honoured and POSTs never blindly repeated (a lost response must not leave a second
//! comment or check run).
//!
//! Responses are read into benchgate's own minimal types rather than octocrab's models, so a
//! field GitHub (or GitHub Enterprise) leaves out that benchgate does not need cannot fail a run.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, Method, StatusCode};
use octocrab::Octocrab;
use serde::Deserialize;
use serde_json::{Value, json};

/// How long to back off after a server error or a lost connection before trying again.
const TRANSIENT_BACKOFF: [Duration; 2] = [Duration::from_secs(1), Duration::from_secs(2)];

/// A request GitHub refused or that never got an answer.
#[derive(Debug, thiserror::Error)]
#[error("GitHub {request}: {}{message}", status.map(|s| format!("HTTP {} ", s.as_u16())).unwrap_or_default())]
pub struct ApiError {
    /// `METHOD /path` of the request.
    pub request: String,
    /// The HTTP status, if there was a response.
    pub status: Option<StatusCode>,
    /// GitHub's message, or the transport error.
    pub message: String,
}

impl ApiError {
    /// A 403 or 404 that is not a rate limit: the token lacks a permission (GitHub answers 404
    /// for some endpoints a token may not see).
    pub fn is_forbidden(&self) -> bool {
        self.status == Some(StatusCode::FORBIDDEN)
    }

    /// A server error or no response at all: the request may or may not have taken effect.
    pub fn is_transient(&self) -> bool {
        self.status.is_none_or(|s| s.is_server_error())
    }
}

/// An issue, as the issues list gives it.
#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    /// Its number.
    pub number: u64,
    /// Its text (GitHub sends `null` for none).
    #[serde(default)]
    pub body: Option<String>,
    /// Set when the "issue" is a pull request.
    #[serde(default)]
    pub pull_request: Option<Value>,
}

/// A pull request a commit belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitPull {
    /// Its number.
    pub number: u64,
    /// Its title.
    pub title: String,
    /// Its page.
    pub url: String,
    /// Whether it was merged.
    pub merged: bool,
}

/// A pull request's head and base (`GET /repos/{owner}/{repo}/pulls/{n}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pull {
    /// The head commit.
    pub head_sha: String,
    /// The base branch's commit.
    pub base_sha: String,
    /// The base branch.
    pub base_ref: String,
    /// `open` or `closed`.
    pub state: String,
}

/// An issue or pull-request comment.
#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    /// Its id.
    pub id: u64,
    /// Its text.
    #[serde(default)]
    pub body: Option<String>,
    /// Its author.
    pub user: User,
}

/// A GitHub account.
#[derive(Debug, Clone, Deserialize)]
pub struct User {
    /// The login.
    pub login: String,
    /// `User`, `Bot` or `Organization`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

/// A check run, as far as benchgate reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct CheckRun {
    /// Its id.
    pub id: u64,
    /// Its output, as last written.
    #[serde(default)]
    pub output: Option<CheckRunOutput>,
}

/// A check run's output.
#[derive(Debug, Clone, Deserialize)]
pub struct CheckRunOutput {
    /// The summary.
    #[serde(default)]
    pub summary: Option<String>,
    /// The text.
    #[serde(default)]
    pub text: Option<String>,
}

/// A client for one repository.
#[derive(Debug, Clone)]
pub struct GitHub {
    octo: Octocrab,
    repository: String,
    max_wait: Duration,
}

impl GitHub {
    /// A client for `repository` (`owner/name`) at `api_url` (a GitHub Enterprise URL may carry
    /// a path, `https://ghe.example.com/api/v3`), waiting at most `max_wait` in all for rate limits.
    pub fn new(
        api_url: &str,
        token: &str,
        repository: &str,
        max_wait: Duration,
    ) -> anyhow::Result<Self> {
        let octo = Octocrab::builder()
            .base_uri(api_url.trim_end_matches('/'))
            .map_err(|e| anyhow::anyhow!("--api-url {api_url:?}: {e}"))?
            .personal_token(token.to_owned())
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the GitHub client: {e}"))?;
        Ok(Self {
            octo,
            repository: repository.to_owned(),
            max_wait,
        })
    }

    /// The repository, `owner/name`.
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// Sends one request. Rate limits (429, or 403 with `retry-after` or an exhausted quota) are
    /// waited out within the client's bound; server errors and lost connections are retried
    /// for GET and PATCH only (both are idempotent); a POST's fate is left to its caller.
    async fn send(
        &self,
        method: Method,
        route: &str,
        body: Option<&Value>,
    ) -> Result<Value, ApiError> {
        let request = format!("{method} {route}");
        let started = Instant::now();
        let mut transient_attempt = 0;
        loop {
            let response = match method {
                Method::GET => self.octo._get(route).await,
                Method::POST => self.octo._post(route, body).await,
                Method::PATCH => self.octo._patch(route, body).await,
                _ => {
                    return Err(ApiError {
                        request,
                        status: None,
                        message: "unsupported method".into(),
                    });
                }
            };
            let retry_transient = |attempt: usize| {
                (method != Method::POST)
                    .then(|| TRANSIENT_BACKOFF.get(attempt).copied())
                    .flatten()
            };
            let response = match response {
                Ok(response) => response,
                Err(error) => {
                    if let Some(pause) = retry_transient(transient_attempt) {
                        transient_attempt += 1;
                        tokio::time::sleep(pause).await;
                        continue;
                    }
                    return Err(ApiError {
                        request,
                        status: None,
                        message: error.to_string(),
                    });
                }
            };
            let status = response.status();
            let headers = response.headers().clone();
            let text = self.octo.body_to_string(response).await.unwrap_or_default();
            if status.is_success() {
                return if text.trim().is_empty() {
                    Ok(Value::Null)
                } else {
                    serde_json::from_str(&text).map_err(|e| ApiError {
                        request,
                        status: Some(status),
                        message: format!("the response is not JSON: {e}"),
                    })
                };
            }
            if let Some(wait) = rate_limit_wait(status, &headers) {
                if started.elapsed() + wait <= self.max_wait {
                    eprintln!(
                        "benchgate: GitHub rate limit on {request}: waiting {} s as GitHub asks",
                        wait.as_secs()
                    );
                    tokio::time::sleep(wait).await;
                    continue;
                }
                return Err(ApiError {
                    request,
                    status: Some(status),
                    message: format!(
                        "rate limited; GitHub asks to wait {} s, beyond the {} s allowed (--max-wait)",
                        wait.as_secs(),
                        self.max_wait.as_secs()
                    ),
                });
            }
            if status.is_server_error()
                && let Some(pause) = retry_transient(transient_attempt)
            {
                transient_attempt += 1;
                tokio::time::sleep(pause).await;
                continue;
            }
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_owned))
                .unwrap_or(text);
            return Err(ApiError {
                request,
                status: Some(status),
                message,
            });
        }
    }

    fn route(&self, rest: &str) -> String {
        format!("/repos/{}/{rest}", self.repository)
    }

    /// Every comment on issue or pull request `number`, oldest first.
    pub async fn comments(&self, number: u64) -> Result<Vec<Comment>, ApiError> {
        let mut all = Vec::new();
        for page in 1.. {
            let route = self.route(&format!(
                "issues/{number}/comments?per_page=100&page={page}"
            ));
            let value = self.send(Method::GET, &route, None).await?;
            let comments: Vec<Comment> = parse(&route, value)?;
            let last = comments.len() < 100;
            all.extend(comments);
            if last {
                break;
            }
        }
        Ok(all)
    }

    /// Every issue (open or closed, pull requests left out) with `label`, oldest page first.
    pub async fn issues_labelled(&self, label: &str) -> Result<Vec<Issue>, ApiError> {
        let mut all = Vec::new();
        for page in 1.. {
            let route = self.route(&format!(
                "issues?state=all&labels={label}&per_page=100&page={page}"
            ));
            let value = self.send(Method::GET, &route, None).await?;
            let issues: Vec<Issue> = parse(&route, value)?;
            let last = issues.len() < 100;
            all.extend(issues.into_iter().filter(|i| i.pull_request.is_none()));
            if last {
                break;
            }
        }
        Ok(all)
    }

    /// Opens an issue with `labels`; returns its number.
    pub async fn create_issue(
        &self,
        title: &str,
        body: &str,
        labels: &[&str],
    ) -> Result<u64, ApiError> {
        let route = self.route("issues");
        let value = self
            .send(
                Method::POST,
                &route,
                Some(&json!({ "title": title, "body": body, "labels": labels })),
            )
            .await?;
        parse::<Issue>(&route, value).map(|issue| issue.number)
    }

    /// Replaces issue `number`'s title and body (its state and labels stay as they are).
    pub async fn update_issue(&self, number: u64, title: &str, body: &str) -> Result<(), ApiError> {
        let route = self.route(&format!("issues/{number}"));
        self.send(
            Method::PATCH,
            &route,
            Some(&json!({ "title": title, "body": body })),
        )
        .await
        .map(drop)
    }

    /// Creates a comment on issue or pull request `number`.
    pub async fn create_comment(&self, number: u64, body: &str) -> Result<Comment, ApiError> {
        let route = self.route(&format!("issues/{number}/comments"));
        let value = self
            .send(Method::POST, &route, Some(&json!({ "body": body })))
            .await?;
        parse(&route, value)
    }

    /// Replaces comment `id`'s body.
    pub async fn update_comment(&self, id: u64, body: &str) -> Result<Comment, ApiError> {
        let route = self.route(&format!("issues/comments/{id}"));
        let value = self
            .send(Method::PATCH, &route, Some(&json!({ "body": body })))
            .await?;
        parse(&route, value)
    }

    /// The newest check run named `name` on commit `sha`.
    pub async fn find_check_run(
        &self,
        sha: &str,
        name: &str,
    ) -> Result<Option<CheckRun>, ApiError> {
        let route = self.route(&format!(
            "commits/{sha}/check-runs?check_name={}&filter=latest&per_page=100",
            url_escape(name)
        ));
        let value = self.send(Method::GET, &route, None).await?;
        #[derive(Deserialize)]
        struct List {
            check_runs: Vec<CheckRun>,
        }
        let list: List = parse(&route, value)?;
        Ok(list.check_runs.into_iter().max_by_key(|run| run.id))
    }

    /// Creates a check run from `body` (name, head_sha, status, ...).
    pub async fn create_check_run(&self, body: &Value) -> Result<CheckRun, ApiError> {
        let route = self.route("check-runs");
        let value = self.send(Method::POST, &route, Some(body)).await?;
        parse(&route, value)
    }

    /// Updates check run `id` with `body`.
    pub async fn update_check_run(&self, id: u64, body: &Value) -> Result<CheckRun, ApiError> {
        let route = self.route(&format!("check-runs/{id}"));
        let value = self.send(Method::PATCH, &route, Some(body)).await?;
        parse(&route, value)
    }

    /// Sets a commit status on `sha`.
    pub async fn create_status(&self, sha: &str, body: &Value) -> Result<(), ApiError> {
        let route = self.route(&format!("statuses/{sha}"));
        self.send(Method::POST, &route, Some(body)).await.map(drop)
    }

    /// A pull request's head commit.
    pub async fn pull_head_sha(&self, number: u64) -> Result<String, ApiError> {
        Ok(self.pull(number).await?.head_sha)
    }

    /// A pull request's head and base, as GitHub has them now.
    pub async fn pull(&self, number: u64) -> Result<Pull, ApiError> {
        let route = self.route(&format!("pulls/{number}"));
        let value = self.send(Method::GET, &route, None).await?;
        let text = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ApiError {
                    request: format!("GET {route}"),
                    status: None,
                    message: format!("the response has no {}", &pointer[1..].replace('/', ".")),
                })
        };
        Ok(Pull {
            head_sha: text("/head/sha")?,
            base_sha: text("/base/sha")?,
            base_ref: text("/base/ref")?,
            state: text("/state")?,
        })
    }

    /// The pull requests a commit belongs to (`GET /repos/{owner}/{repo}/commits/{sha}/pulls`),
    /// the merged one first.
    pub async fn commit_pulls(&self, sha: &str) -> Result<Vec<CommitPull>, ApiError> {
        let route = self.route(&format!("commits/{sha}/pulls"));
        let value = self.send(Method::GET, &route, None).await?;
        let malformed = |what: &str| ApiError {
            request: format!("GET {route}"),
            status: None,
            message: format!("the response has no {what}"),
        };
        let mut pulls = Vec::new();
        for (i, pull) in value
            .as_array()
            .ok_or_else(|| malformed("array of pull requests"))?
            .iter()
            .enumerate()
        {
            pulls.push(CommitPull {
                number: pull["number"]
                    .as_u64()
                    .ok_or_else(|| malformed(&format!("[{i}].number")))?,
                title: pull["title"].as_str().unwrap_or_default().to_owned(),
                url: pull["html_url"].as_str().unwrap_or_default().to_owned(),
                merged: !pull["merged_at"].is_null(),
            });
        }
        pulls.sort_by_key(|p| !p.merged);
        Ok(pulls)
    }

    /// Reacts to comment `id` on an issue or pull request with `content` (`rocket`, `+1`, ...).
    pub async fn create_reaction(&self, id: u64, content: &str) -> Result<(), ApiError> {
        let route = self.route(&format!("issues/comments/{id}/reactions"));
        self.send(Method::POST, &route, Some(&json!({ "content": content })))
            .await
            .map(drop)
    }

    /// `user`'s role on the repository (`admin`, `maintain`, `write`, `triage`, `read`, or a
    /// custom role), read as text: octocrab's typed call cannot parse `write`, `read` or `none`.
    pub async fn permission(&self, user: &str) -> Result<(String, String), ApiError> {
        let route = self.route(&format!("collaborators/{}/permission", url_escape(user)));
        let value = self.send(Method::GET, &route, None).await?;
        let text = |key: &str| value[key].as_str().unwrap_or("").to_owned();
        Ok((text("permission"), text("role_name")))
    }
}

fn parse<T: serde::de::DeserializeOwned>(route: &str, value: Value) -> Result<T, ApiError> {
    serde_json::from_value(value).map_err(|e| ApiError {
        request: route.to_owned(),
        status: None,
        message: format!("unexpected response: {e}"),
    })
}

/// How long GitHub asks us to wait, if this response is a rate limit: `retry-after`, else the
/// primary limit's reset time when the quota is spent (GitHub's documented rules).
fn rate_limit_wait(status: StatusCode, headers: &HeaderMap) -> Option<Duration> {
    if status != StatusCode::TOO_MANY_REQUESTS && status != StatusCode::FORBIDDEN {
        return None;
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(seconds) = header("retry-after").and_then(|v| v.trim().parse::<u64>().ok()) {
        return Some(Duration::from_secs(seconds));
    }
    if header("x-ratelimit-remaining") == Some("0") {
        let reset = header("x-ratelimit-reset").and_then(|v| v.trim().parse::<u64>().ok())?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
        return Some(Duration::from_secs(reset.saturating_sub(now) + 1));
    }
    // A secondary limit without either header: GitHub says to wait at least a minute.
    (status == StatusCode::TOO_MANY_REQUESTS).then_some(Duration::from_secs(60))
}

fn url_escape(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
