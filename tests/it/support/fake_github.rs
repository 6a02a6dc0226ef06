//! A local stand-in for GitHub's REST API, for the publisher's tests: an axum server on a
//! loopback port that keeps comments, check runs and statuses in memory, checks each request
//! the way GitHub documents it (method, path, `Authorization`, JSON body keys, values and
//! lengths), answers with GitHub's documented shapes, and can be told to fail a request once.
//! Anything GitHub would reject is answered as GitHub would and recorded as a violation.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub const TOKEN: &str = "ghs_test_token";
pub const OWNER: &str = "acme";
pub const REPO: &str = "rocket";
pub const BOT: &str = "github-actions[bot]";

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: String,
    pub body: Value,
}

/// A one-shot failure for the next request matching a method and a path suffix.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: &'static str,
    pub path_ends_with: String,
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    /// Perform the request anyway, then answer with the failure (a lost response).
    pub after_effect: bool,
}

#[derive(Debug, Default)]
pub struct Data {
    pub seen: Vec<Seen>,
    pub violations: Vec<String>,
    /// (id, issue number, body, login, type)
    pub comments: Vec<(u64, u64, String, String, String)>,
    pub check_runs: Vec<Value>,
    pub statuses: Vec<(String, Value)>,
    pub permissions: HashMap<String, &'static str>,
    pub pulls: HashMap<u64, String>,
    /// Base commits of pull requests, where not `1111…` (the default).
    pub bases: HashMap<u64, String>,
    /// Pull requests that are closed (the rest of `pulls` are open).
    pub closed: Vec<u64>,
    /// Issues: (number, title, body, labels).
    pub issues: Vec<(u64, String, String, Vec<String>)>,
    /// Commits merged through a pull request: sha → (number, title).
    pub merged: HashMap<String, (u64, String)>,
    /// (comment id, content) of every reaction made.
    pub reactions: Vec<(u64, String)>,
    pub faults: VecDeque<Fault>,
    /// Static files answered to a GET of their path without a token (release downloads).
    pub files: HashMap<String, Vec<u8>>,
    next_id: u64,
}

pub struct FakeGitHub {
    pub api_url: String,
    pub data: Arc<Mutex<Data>>,
}

impl FakeGitHub {
    /// Serves under `prefix` ("" for api.github.com, "/api/v3" for GitHub Enterprise).
    pub fn start(prefix: &str) -> Self {
        let data = Arc::new(Mutex::new(Data {
            next_id: 1000,
            ..Data::default()
        }));
        let state = (data.clone(), prefix.to_owned());
        let address = serve_in_thread(Router::new().fallback(handle).with_state(state));
        Self {
            api_url: format!("http://{address}{prefix}"),
            data,
        }
    }

    pub fn data(&self) -> std::sync::MutexGuard<'_, Data> {
        self.data.lock().unwrap()
    }

    pub fn fail_once(&self, fault: Fault) {
        self.data().faults.push_back(fault);
    }

    /// (method, path) of every request, in order.
    pub fn requests(&self) -> Vec<(String, String)> {
        self.data()
            .seen
            .iter()
            .map(|s| (s.method.clone(), s.path.clone()))
            .collect()
    }

    pub fn assert_no_violations(&self) {
        let violations = self.data().violations.clone();
        assert!(
            violations.is_empty(),
            "GitHub would reject: {violations:#?}"
        );
    }
}

type AppState = (Arc<Mutex<Data>>, String);

fn user(login: &str, kind: &str) -> Value {
    json!({
        "login": login, "id": 41898282, "node_id": "MDM6Qm90NDE4OTgyODI=",
        "avatar_url": "https://avatars.githubusercontent.com/in/15368?v=4", "gravatar_id": "",
        "url": format!("https://api.github.com/users/{login}"),
        "html_url": format!("https://github.com/{login}"), "type": kind, "site_admin": false
    })
}

fn comment_json(id: u64, issue: u64, body: &str, login: &str, kind: &str) -> Value {
    json!({
        "id": id, "node_id": format!("IC_{id}"),
        "url": format!("https://api.github.com/repos/{OWNER}/{REPO}/issues/comments/{id}"),
        "html_url": format!("https://github.com/{OWNER}/{REPO}/pull/{issue}#issuecomment-{id}"),
        "issue_url": format!("https://api.github.com/repos/{OWNER}/{REPO}/issues/{issue}"),
        "body": body, "user": user(login, kind),
        "created_at": "2026-11-22T10:00:00Z", "updated_at": "2026-11-22T10:00:00Z",
        "author_association": if kind == "Bot" { "NONE" } else { "MEMBER" }
    })
}

fn issue_json(number: u64, title: &str, body: &str, labels: &[String]) -> Value {
    json!({
        "id": number * 10, "node_id": format!("I_{number}"), "number": number,
        "title": title, "body": body, "state": "open", "user": user(BOT, "Bot"),
        "labels": labels.iter().map(|l| json!({"name": l, "color": "ededed"})).collect::<Vec<_>>(),
        "html_url": format!("https://github.com/{OWNER}/{REPO}/issues/{number}"),
        "created_at": "2026-11-22T10:00:00Z"
    })
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            "status": status.as_u16().to_string()
        })),
    )
        .into_response()
}

fn only_keys(body: &Value, allowed: &[&str], violations: &mut Vec<String>, what: &str) -> bool {
    let Some(object) = body.as_object() else {
        violations.push(format!("{what}: body is not a JSON object: {body}"));
        return false;
    };
    let unknown: Vec<&String> = object
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .collect();
    if !unknown.is_empty() {
        violations.push(format!(
            "{what}: keys GitHub does not document: {unknown:?}"
        ));
        return false;
    }
    true
}

/// A comment body as "Create/Update an issue comment" documents it: `{"body": "..."}` within
/// 65,536 characters.
fn comment_text(
    body: &Value,
    violations: &mut Vec<String>,
    what: &str,
) -> Result<String, Box<Response>> {
    if !only_keys(body, &["body"], violations, what) || !body["body"].is_string() {
        return Err(Box::new(error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid request.",
        )));
    }
    let text = body["body"].as_str().unwrap_or_default();
    if text.chars().count() > 65_536 {
        violations.push(format!("{what}: body over 65536 characters"));
        return Err(Box::new(error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Body is too long (maximum is 65536 characters)",
        )));
    }
    Ok(text.to_owned())
}

/// Checks a check-run body as GitHub's "Create/Update a check run" documents it.
fn check_run_body(body: &Value, create: bool, violations: &mut Vec<String>) -> Option<String> {
    let what = if create {
        "create check run"
    } else {
        "update check run"
    };
    let mut allowed = vec![
        "name",
        "details_url",
        "external_id",
        "status",
        "started_at",
        "conclusion",
        "completed_at",
        "output",
        "actions",
    ];
    if create {
        allowed.push("head_sha");
    }
    if !only_keys(body, &allowed, violations, what) {
        return Some("Invalid request.".into());
    }
    if create && (!body["name"].is_string() || !body["head_sha"].is_string()) {
        return Some("name and head_sha are required".into());
    }
    let status = body["status"].as_str();
    if let Some(status) = status
        && ![
            "queued",
            "in_progress",
            "completed",
            "waiting",
            "requested",
            "pending",
        ]
        .contains(&status)
    {
        return Some(format!("status {status:?} is not a valid value"));
    }
    if let Some(conclusion) = body.get("conclusion") {
        let valid = [
            "action_required",
            "cancelled",
            "failure",
            "neutral",
            "success",
            "skipped",
            "stale",
            "timed_out",
        ];
        if !conclusion.as_str().is_some_and(|c| valid.contains(&c)) {
            return Some(format!("conclusion {conclusion} is not a valid value"));
        }
    } else if status == Some("completed") {
        return Some("conclusion is required when status is completed".into());
    }
    for key in ["started_at", "completed_at"] {
        if let Some(time) = body.get(key)
            && !time
                .as_str()
                .is_some_and(|t| t.len() == 20 && t.ends_with('Z') && t.as_bytes()[10] == b'T')
        {
            return Some(format!(
                "{key} must be ISO 8601 YYYY-MM-DDTHH:MM:SSZ, got {time}"
            ));
        }
    }
    if let Some(output) = body.get("output") {
        if !only_keys(
            output,
            &["title", "summary", "text", "annotations", "images"],
            violations,
            what,
        ) {
            return Some("Invalid output.".into());
        }
        if !output["title"].is_string() || !output["summary"].is_string() {
            return Some("output.title and output.summary are required".into());
        }
        // GitHub documents 65,535 characters but counts bytes: a text of fewer characters
        // with `µs` on every row is refused.
        for key in ["summary", "text"] {
            if output[key].as_str().is_some_and(|t| t.len() > 65_535) {
                return Some(format!(
                    "Invalid request.\n\nFor 'properties/{key}', {key} exceeds a maximum bytesize of 65535."
                ));
            }
        }
    }
    None
}

async fn handle(
    State((data, prefix)): State<AppState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut guard = data.lock().unwrap();
    let d = &mut *guard;
    let path = uri.path().to_owned();
    let query = uri.query().unwrap_or("").to_owned();
    if method == Method::GET
        && let Some(bytes) = d.files.get(&path)
    {
        return (StatusCode::OK, bytes.clone()).into_response();
    }
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(_) => {
                d.violations
                    .push(format!("{method} {path}: body is not JSON"));
                return error(StatusCode::BAD_REQUEST, "Problems parsing JSON");
            }
        }
    };
    d.seen.push(Seen {
        method: method.to_string(),
        path: path.clone(),
        query: query.clone(),
        body: body.clone(),
    });
    if headers.get("authorization").and_then(|v| v.to_str().ok())
        != Some(&format!("Bearer {TOKEN}"))
    {
        d.violations.push(format!(
            "{method} {path}: missing or wrong Authorization header"
        ));
        return error(StatusCode::UNAUTHORIZED, "Bad credentials");
    }
    if (method == Method::POST || method == Method::PATCH)
        && headers.get("content-type").and_then(|v| v.to_str().ok()) != Some("application/json")
    {
        d.violations.push(format!(
            "{method} {path}: content-type is not application/json"
        ));
    }
    let Some(rest) = path.strip_prefix(&prefix) else {
        d.violations.push(format!(
            "{method} {path}: outside the API base path {prefix:?}"
        ));
        return error(StatusCode::NOT_FOUND, "Not Found");
    };
    let Some(rest) = rest.strip_prefix(&format!("/repos/{OWNER}/{REPO}/")) else {
        d.violations
            .push(format!("{method} {path}: not this repository"));
        return error(StatusCode::NOT_FOUND, "Not Found");
    };
    let rest = rest.to_owned();
    // A scripted failure, once.
    let mut after_effect: Option<Fault> = None;
    if let Some(i) = d
        .faults
        .iter()
        .position(|f| f.method == method.as_str() && path.ends_with(&f.path_ends_with))
    {
        let fault = d.faults.remove(i).unwrap();
        if fault.after_effect {
            after_effect = Some(fault);
        } else {
            let mut response = error(
                StatusCode::from_u16(fault.status).unwrap(),
                "scripted failure",
            );
            for (name, value) in &fault.headers {
                response.headers_mut().insert(*name, value.parse().unwrap());
            }
            return response;
        }
    }
    let segments: Vec<&str> = rest.split('/').collect();
    let response = route(d, &method, &segments, &query, &body);
    match after_effect {
        Some(fault) => error(
            StatusCode::from_u16(fault.status).unwrap(),
            "scripted lost response",
        ),
        None => response,
    }
}

fn route(d: &mut Data, method: &Method, segments: &[&str], query: &str, body: &Value) -> Response {
    let what = format!("{method} {}", segments.join("/"));
    match (method.as_str(), segments) {
        ("GET", ["issues", number, "comments"]) => {
            let number: u64 = number.parse().unwrap_or(0);
            let params: HashMap<&str, &str> =
                query.split('&').filter_map(|p| p.split_once('=')).collect();
            let per_page: usize = params
                .get("per_page")
                .and_then(|p| p.parse().ok())
                .unwrap_or(30);
            let page: usize = params.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
            if per_page > 100 {
                d.violations
                    .push(format!("{what}: per_page {per_page} > 100"));
            }
            let all: Vec<Value> = d
                .comments
                .iter()
                .filter(|c| c.1 == number)
                .map(|c| comment_json(c.0, c.1, &c.2, &c.3, &c.4))
                .collect();
            let page: Vec<Value> = all
                .into_iter()
                .skip((page - 1) * per_page)
                .take(per_page)
                .collect();
            axum::Json(Value::Array(page)).into_response()
        }
        ("POST", ["issues", number, "comments"]) => {
            let text = match comment_text(body, &mut d.violations, &what) {
                Ok(text) => text,
                Err(response) => return *response,
            };
            let number: u64 = number.parse().unwrap_or(0);
            d.next_id += 1;
            let id = d.next_id;
            d.comments
                .push((id, number, text.clone(), BOT.into(), "Bot".into()));
            (
                StatusCode::CREATED,
                axum::Json(comment_json(id, number, &text, BOT, "Bot")),
            )
                .into_response()
        }
        ("PATCH", ["issues", "comments", id]) => {
            let text = match comment_text(body, &mut d.violations, &what) {
                Ok(text) => text,
                Err(response) => return *response,
            };
            let id: u64 = id.parse().unwrap_or(0);
            match d.comments.iter_mut().find(|c| c.0 == id) {
                Some(c) => {
                    if c.3 != BOT {
                        return error(
                            StatusCode::FORBIDDEN,
                            "Resource not accessible by integration",
                        );
                    }
                    c.2 = text;
                    axum::Json(comment_json(c.0, c.1, &c.2, &c.3, &c.4)).into_response()
                }
                None => error(StatusCode::NOT_FOUND, "Not Found"),
            }
        }
        ("POST", ["check-runs"]) => {
            if d.permissions.get("__checks") == Some(&"none") {
                return error(
                    StatusCode::FORBIDDEN,
                    "Resource not accessible by integration",
                );
            }
            if let Some(message) = check_run_body(body, true, &mut d.violations) {
                d.violations.push(format!("{what}: {message}"));
                return error(StatusCode::UNPROCESSABLE_ENTITY, &message);
            }
            d.next_id += 1;
            let mut run = json!({
                "id": d.next_id, "node_id": format!("CR_{}", d.next_id), "head_sha": body["head_sha"],
                "external_id": "", "url": format!("https://api.github.com/repos/{OWNER}/{REPO}/check-runs/{}", d.next_id),
                "html_url": format!("https://github.com/{OWNER}/{REPO}/runs/{}", d.next_id),
                "details_url": null, "status": body.get("status").cloned().unwrap_or(json!("queued")),
                "conclusion": body.get("conclusion").cloned().unwrap_or(Value::Null),
                "started_at": body.get("started_at").cloned().unwrap_or(json!("2026-11-22T10:00:00Z")),
                "completed_at": body.get("completed_at").cloned().unwrap_or(Value::Null),
                "output": {"title": null, "summary": null, "text": null, "annotations_count": 0, "annotations_url": ""},
                "name": body["name"], "check_suite": {"id": 5}, "app": {"id": 15368, "slug": "github-actions"},
                "pull_requests": []
            });
            if let Some(output) = body.get("output") {
                for key in ["title", "summary", "text"] {
                    run["output"][key] = output.get(key).cloned().unwrap_or(Value::Null);
                }
            }
            if run["conclusion"].is_string() {
                run["status"] = json!("completed");
            }
            d.check_runs.push(run.clone());
            (StatusCode::CREATED, axum::Json(run)).into_response()
        }
        ("PATCH", ["check-runs", id]) => {
            if let Some(message) = check_run_body(body, false, &mut d.violations) {
                d.violations.push(format!("{what}: {message}"));
                return error(StatusCode::UNPROCESSABLE_ENTITY, &message);
            }
            let id: u64 = id.parse().unwrap_or(0);
            let Some(run) = d.check_runs.iter_mut().find(|r| r["id"] == id) else {
                return error(StatusCode::NOT_FOUND, "Not Found");
            };
            for key in ["name", "status", "conclusion", "started_at", "completed_at"] {
                if let Some(v) = body.get(key) {
                    run[key] = v.clone();
                }
            }
            if let Some(output) = body.get("output") {
                for key in ["title", "summary", "text"] {
                    if let Some(v) = output.get(key) {
                        run["output"][key] = v.clone();
                    }
                }
            }
            if run["conclusion"].is_string() {
                run["status"] = json!("completed");
            }
            axum::Json(run.clone()).into_response()
        }
        ("GET", ["commits", sha, "check-runs"]) => {
            let name = query
                .split('&')
                .find_map(|p| p.strip_prefix("check_name="))
                .map(str::to_owned);
            let runs: Vec<Value> = d
                .check_runs
                .iter()
                .filter(|r| r["head_sha"] == *sha && name.as_deref().is_none_or(|n| r["name"] == n))
                .cloned()
                .collect();
            axum::Json(json!({"total_count": runs.len(), "check_runs": runs})).into_response()
        }
        ("POST", ["statuses", sha]) => {
            if !only_keys(
                body,
                &["state", "target_url", "description", "context"],
                &mut d.violations,
                &what,
            ) {
                return error(StatusCode::UNPROCESSABLE_ENTITY, "Invalid request.");
            }
            if !body["state"]
                .as_str()
                .is_some_and(|s| ["error", "failure", "pending", "success"].contains(&s))
            {
                d.violations
                    .push(format!("{what}: state {}", body["state"]));
                return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
            }
            if body["description"]
                .as_str()
                .is_some_and(|t| t.chars().count() > 140)
            {
                d.violations
                    .push(format!("{what}: description over 140 characters"));
                return error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "description is too long (maximum is 140 characters)",
                );
            }
            d.statuses.push(((*sha).to_owned(), body.clone()));
            d.next_id += 1;
            (StatusCode::CREATED, axum::Json(json!({
                "id": d.next_id, "state": body["state"], "description": body["description"],
                "context": body.get("context").cloned().unwrap_or(json!("default")),
                "target_url": body.get("target_url").cloned().unwrap_or(Value::Null),
                "creator": user(BOT, "Bot"), "created_at": "2026-11-22T10:00:00Z", "updated_at": "2026-11-22T10:00:00Z"
            })))
                .into_response()
        }
        ("GET", ["collaborators", login, "permission"]) => {
            match d.permissions.get(*login) {
                Some(role) => {
                    // GitHub's legacy `permission`: maintain reads as write, triage as read.
                    let legacy = match *role {
                        "admin" => "admin",
                        "maintain" | "write" => "write",
                        "triage" | "read" => "read",
                        _ => "none",
                    };
                    axum::Json(json!({"permission": legacy, "role_name": role, "user": user(login, "User")}))
                    .into_response()
                }
                None => error(StatusCode::NOT_FOUND, "Not Found"),
            }
        }
        ("POST", ["issues", "comments", id, "reactions"]) => {
            // GitHub: 201 for a new reaction, 200 when this user already reacted so.
            const CONTENTS: [&str; 8] = [
                "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
            ];
            if !only_keys(body, &["content"], &mut d.violations, &what) {
                return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
            }
            let Some(content) = body["content"].as_str().filter(|c| CONTENTS.contains(c)) else {
                d.violations
                    .push(format!("{what}: content {}", body["content"]));
                return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
            };
            let id: u64 = id.parse().unwrap_or(0);
            if !d.comments.iter().any(|c| c.0 == id) {
                return error(StatusCode::NOT_FOUND, "Not Found");
            }
            let again = d.reactions.contains(&(id, content.to_owned()));
            if !again {
                d.reactions.push((id, content.to_owned()));
            }
            d.next_id += 1;
            let status = if again {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            };
            (
                status,
                axum::Json(json!({
                    "id": d.next_id, "node_id": format!("REA_{}", d.next_id), "user": user(BOT, "Bot"),
                    "content": content, "created_at": "2026-11-22T10:00:00Z"
                })),
            )
                .into_response()
        }
        ("GET", ["issues"]) => {
            let params: HashMap<&str, &str> =
                query.split('&').filter_map(|p| p.split_once('=')).collect();
            let per_page: usize = params
                .get("per_page")
                .and_then(|p| p.parse().ok())
                .unwrap_or(30);
            let page: usize = params.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
            if per_page > 100 {
                d.violations
                    .push(format!("{what}: per_page {per_page} > 100"));
            }
            if params.get("state") != Some(&"all") {
                d.violations.push(format!(
                    "{what}: without state=all a closed issue is not found again"
                ));
            }
            let label = params.get("labels").copied();
            let listed: Vec<Value> = d
                .issues
                .iter()
                .filter(|i| label.is_none_or(|l| i.3.iter().any(|x| x == l)))
                .map(|i| issue_json(i.0, &i.1, &i.2, &i.3))
                .skip((page - 1) * per_page)
                .take(per_page)
                .collect();
            axum::Json(Value::Array(listed)).into_response()
        }
        ("POST", ["issues"]) => {
            if !only_keys(
                body,
                &["title", "body", "labels", "assignees", "milestone"],
                &mut d.violations,
                &what,
            ) {
                return error(StatusCode::UNPROCESSABLE_ENTITY, "Invalid request.");
            }
            let Some(title) = body["title"].as_str() else {
                d.violations.push(format!("{what}: no title"));
                return error(StatusCode::UNPROCESSABLE_ENTITY, "Invalid request.");
            };
            let text = body["body"].as_str().unwrap_or("");
            if title.chars().count() > 256 || text.chars().count() > 65_536 {
                d.violations.push(format!("{what}: title or body too long"));
                return error(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
            }
            let labels: Vec<String> = body["labels"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|l| l.as_str().map(str::to_owned))
                .collect();
            d.next_id += 1;
            let number = d.next_id;
            d.issues
                .push((number, title.to_owned(), text.to_owned(), labels.clone()));
            (
                StatusCode::CREATED,
                axum::Json(issue_json(number, title, text, &labels)),
            )
                .into_response()
        }
        ("PATCH", ["issues", number]) => {
            let number: u64 = number.parse().unwrap_or(0);
            if !only_keys(
                body,
                &[
                    "title",
                    "body",
                    "state",
                    "state_reason",
                    "labels",
                    "assignees",
                    "milestone",
                ],
                &mut d.violations,
                &what,
            ) {
                return error(StatusCode::UNPROCESSABLE_ENTITY, "Invalid request.");
            }
            let Some(issue) = d.issues.iter_mut().find(|i| i.0 == number) else {
                return error(StatusCode::NOT_FOUND, "Not Found");
            };
            if let Some(title) = body["title"].as_str() {
                issue.1 = title.to_owned();
            }
            if let Some(text) = body["body"].as_str() {
                issue.2 = text.to_owned();
            }
            let issue = issue.clone();
            axum::Json(issue_json(issue.0, &issue.1, &issue.2, &issue.3)).into_response()
        }
        ("GET", ["commits", sha, "pulls"]) => {
            if !(sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())) {
                d.violations.push(format!("{what}: not a full commit SHA"));
                return error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    &format!("No commit found for SHA: {sha}"),
                );
            }
            let pulls: Vec<Value> = d
                .merged
                .get(*sha)
                .map(|(number, title)| {
                    json!({
                        "number": number, "state": "closed", "title": title,
                        "html_url": format!("https://github.com/{OWNER}/{REPO}/pull/{number}"),
                        "merged_at": "2026-11-20T10:00:00Z",
                        "head": {"sha": sha, "ref": "feature", "label": "acme:feature"},
                        "base": {"sha": "1".repeat(40), "ref": "main", "label": "acme:main"},
                        "user": user("octocat", "User")
                    })
                })
                .into_iter()
                .collect();
            axum::Json(Value::Array(pulls)).into_response()
        }
        ("GET", ["pulls", number]) => {
            let number: u64 = number.parse().unwrap_or(0);
            let state = if d.closed.contains(&number) {
                "closed"
            } else {
                "open"
            };
            let base = d
                .bases
                .get(&number)
                .cloned()
                .unwrap_or_else(|| "1".repeat(40));
            match d.pulls.get(&number) {
                Some(sha) => axum::Json(json!({
                    "number": number, "state": state, "title": "A change",
                    "head": {"sha": sha, "ref": "feature", "label": "acme:feature"},
                    "base": {"sha": base, "ref": "main", "label": "acme:main"},
                    "user": user("octocat", "User")
                }))
                .into_response(),
                None => error(StatusCode::NOT_FOUND, "Not Found"),
            }
        }
        _ => {
            d.violations.push(format!("{what}: no such endpoint"));
            error(StatusCode::NOT_FOUND, "Not Found")
        }
    }
}

/// A `pull_request` event payload as GitHub writes it to `GITHUB_EVENT_PATH` (the fields
/// benchgate reads, and a few around them).
pub fn pull_request_event(number: u64, head_sha: &str) -> Value {
    json!({
        "action": "synchronize", "number": number,
        "pull_request": {
            "number": number, "state": "open",
            "head": {"sha": head_sha, "ref": "feature"},
            "base": {"sha": "1".repeat(40), "ref": "main"}
        },
        "repository": {"full_name": format!("{OWNER}/{REPO}"), "name": REPO, "owner": {"login": OWNER}},
        "sender": user("octocat", "User")
    })
}

/// An `issue_comment` event payload.
pub fn issue_comment_event(
    action: &str,
    id: u64,
    login: &str,
    kind: &str,
    body: &str,
    on_pr: bool,
) -> Value {
    let mut issue =
        json!({"number": 7, "title": "A change", "state": "open", "user": user("octocat", "User")});
    if on_pr {
        issue["pull_request"] =
            json!({"url": format!("https://api.github.com/repos/{OWNER}/{REPO}/pulls/7")});
    }
    json!({
        "action": action,
        "comment": {"id": id, "body": body, "user": user(login, kind), "author_association": "MEMBER"},
        "issue": issue,
        "repository": {"full_name": format!("{OWNER}/{REPO}")},
        "sender": user(login, kind)
    })
}

/// A `pull_request_target` event: `login` added `label` to pull request `number`.
pub fn labeled_event(number: u64, head_sha: &str, label: &str, login: &str) -> Value {
    let mut event = pull_request_event(number, head_sha);
    event["action"] = json!("labeled");
    event["label"] = json!({"id": 208045946, "name": label, "color": "f29513", "default": false});
    event["sender"] = user(login, "User");
    event
}

/// Serves `app` on a loopback port from a thread of its own, for as long as the test runs;
/// the port is bound before this returns.
pub fn serve_in_thread(app: Router) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    address
}
