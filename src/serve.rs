//! `benchgate serve`: the collector over HTTP. Runs are uploaded with a per-repository token,
//! read back for dashboards and comparisons, and GitHub webhooks feed the override flow. The
//! router is built by a pure function ([`router`]); [`serve`] binds it and runs the worker.

// Helpers return the response to answer as their error: once per request, never hot.
#![allow(clippy::result_large_err)]

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use benchgate_collector::wire::{RunDocument, epoch_ms};
use benchgate_collector::{
    Error as StoreError, Fingerprint, IngestOutcome, RepositoryName, RunId, Store,
};
use benchgate_gate::decision::{Input, Mode, evaluate};
use benchgate_gate::report::{Context, summary};
use hmac::{KeyInit, Mac};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use crate::github::GitHubArgs;

/// The default limit on an uploaded run's body (and on its size once un-gzipped).
pub const DEFAULT_BODY_LIMIT: usize = 32 * 1024 * 1024;
/// Connections the kernel may queue before the server accepts them.
const ACCEPT_BACKLOG: u32 = 1024;
/// GitHub's cap on a webhook payload.
const WEBHOOK_LIMIT: usize = 25 * 1024 * 1024;

/// How the service is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// The largest upload accepted, compressed or not.
    pub body_limit: usize,
    /// The webhook secret; without one, webhooks are refused.
    pub webhook_secret: Option<Vec<u8>>,
    /// How to reach GitHub for the work webhooks ask for.
    pub github: GitHubArgs,
}

#[derive(Clone)]
struct AppState {
    store: Store,
    config: Arc<Config>,
    work: Arc<Notify>,
}

/// The one shape of every error: what went wrong and the field or header at fault.
fn error(status: StatusCode, message: impl Into<String>, at: Option<(&str, &str)>) -> Response {
    let mut body = json!({ "error": { "status": status.as_u16(), "message": message.into() } });
    if let Some((kind, name)) = at {
        body["error"][kind] = json!(name);
    }
    (status, axum::Json(body)).into_response()
}

/// The service's routes. Pure: the store, the settings and the worker's bell come in.
fn router(state: AppState) -> Router {
    let limit = state.config.body_limit;
    Router::new()
        .route("/healthz", get(healthz))
        .route(
            "/api/v1/runs",
            post(upload_run).layer(DefaultBodyLimit::max(limit)),
        )
        .route("/api/v1/repos/{owner}/{repo}/runs", get(list_runs))
        .route("/api/v1/repos/{owner}/{repo}/runs/{id}", get(get_run))
        .route("/api/v1/repos/{owner}/{repo}/compare", get(compare))
        .route("/api/v1/repos/{owner}/{repo}/series", get(series))
        .route("/api/v1/repos/{owner}/{repo}/history", get(history))
        .route(
            "/github/webhook",
            post(webhook).layer(DefaultBodyLimit::max(WEBHOOK_LIMIT)),
        )
        .fallback(pages)
        .layer(middleware::from_fn(trace))
        .with_state(state)
}

/// The dashboard, live: the same pages `benchgate dashboard` writes, rendered from the store
/// on each request. Anything else is a 404 in the error shape.
async fn pages(
    State(state): State<AppState>,
    method: axum::http::Method,
    uri: axum::http::Uri,
) -> Response {
    let not_found = || error(StatusCode::NOT_FOUND, "no such endpoint", None);
    if method != axum::http::Method::GET || uri.path().starts_with("/api/") {
        return not_found();
    }
    let path = match uri.path().trim_start_matches('/') {
        "" => "index.html".to_owned(),
        p if p.ends_with('/') => format!("{p}index.html"),
        p => p.to_owned(),
    };
    let repositories = match crate::dashboard::load(&state.store, &[]).await {
        Ok(r) => r,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"), None),
    };
    match benchgate_dashboards::site::build(&repositories)
        .into_iter()
        .find(|(p, _)| *p == path)
    {
        Some((_, html)) => (
            [(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")],
            html,
        )
            .into_response(),
        None => not_found(),
    }
}

/// One line per request on stderr: method, path, status, time.
async fn trace(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let line = format!("{} {}", request.method(), request.uri().path());
    let response = next.run(request).await;
    eprintln!(
        "benchgate serve: {line} -> {} in {:.1} ms",
        response.status().as_u16(),
        started.elapsed().as_secs_f64() * 1e3
    );
    response
}

async fn healthz(State(state): State<AppState>) -> Response {
    match state.store.list_runs().await {
        Ok(_) => axum::Json(json!({ "status": "ok" })).into_response(),
        Err(e) => error(StatusCode::SERVICE_UNAVAILABLE, e.to_string(), None),
    }
}

/// SHA-256 of a token, hex: all the store keeps.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The repository whose token authorizes the request, or the 401 to answer.
async fn authorize(state: &AppState, headers: &HeaderMap) -> Result<RepositoryName, Response> {
    let unauthorized = |message: &str| {
        error(
            StatusCode::UNAUTHORIZED,
            message,
            Some(("header", "authorization")),
        )
    };
    let Some(value) = headers.get("authorization") else {
        return Err(unauthorized("missing `Authorization: Bearer <token>`"));
    };
    let Some(token) = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
    else {
        return Err(unauthorized("expected `Authorization: Bearer <token>`"));
    };
    match state.store.token_repository(&token_hash(token)).await {
        Ok(Some(repository)) => Ok(repository),
        Ok(None) => Err(unauthorized("unknown or revoked token")),
        Err(e) => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            e.to_string(),
            None,
        )),
    }
}

fn body_rejection(rejection: BytesRejection, limit: usize) -> Response {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is over the {limit}-byte limit"),
            Some(("header", "content-length")),
        )
    } else {
        error(StatusCode::BAD_REQUEST, rejection.body_text(), None)
    }
}

/// The body, un-gzipped when `Content-Encoding: gzip`, within `limit` either way.
fn decoded_body(headers: &HeaderMap, body: &Bytes, limit: usize) -> Result<Vec<u8>, Response> {
    let encoding = headers
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("identity")
        .trim()
        .to_ascii_lowercase();
    match encoding.as_str() {
        "identity" => Ok(body.to_vec()),
        "gzip" => {
            let mut out = Vec::new();
            let read = flate2::read::GzDecoder::new(&body[..])
                .take(limit as u64 + 1)
                .read_to_end(&mut out);
            match read {
                Ok(_) if out.len() > limit => Err(error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body un-gzips to over the {limit}-byte limit"),
                    Some(("header", "content-encoding")),
                )),
                Ok(_) => Ok(out),
                Err(e) => Err(error(
                    StatusCode::BAD_REQUEST,
                    format!("the body is not valid gzip: {e}"),
                    Some(("header", "content-encoding")),
                )),
            }
        }
        other => Err(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("content encoding {other:?} is not supported; send gzip or nothing"),
            Some(("header", "content-encoding")),
        )),
    }
}

/// `POST /api/v1/runs`: 201 stored, 200 already stored, 409 a different run under its key.
async fn upload_run(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let repository = match authorize(&state, &headers).await {
        Ok(repository) => repository,
        Err(response) => return response,
    };
    let limit = state.config.body_limit;
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return body_rejection(rejection, limit),
    };
    let text = match decoded_body(&headers, &body, limit) {
        Ok(text) => text,
        Err(response) => return response,
    };
    let document = match RunDocument::from_json(&text) {
        Ok(document) => document,
        Err(e) => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                e.message,
                Some(("field", &e.field)),
            );
        }
    };
    if document.repository != repository.as_str() {
        return error(
            StatusCode::FORBIDDEN,
            format!("the token is for {repository}, not {}", document.repository),
            Some(("field", "repository")),
        );
    }
    let run = match document.into_run() {
        Ok(run) => run,
        Err(e) => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                e.message,
                Some(("field", &e.field)),
            );
        }
    };
    match state.store.ingest(&run, false).await {
        Ok(IngestOutcome::Created(id)) => (
            StatusCode::CREATED,
            axum::Json(json!({ "id": id.get(), "status": "created" })),
        )
            .into_response(),
        Ok(IngestOutcome::Unchanged(id) | IngestOutcome::Replaced { id, .. }) => (
            StatusCode::OK,
            axum::Json(json!({ "id": id.get(), "status": "unchanged" })),
        )
            .into_response(),
        Err(StoreError::RunConflict { existing, .. }) => (
            StatusCode::CONFLICT,
            axum::Json(json!({ "error": {
                "status": 409,
                "message": format!(
                    "run {existing} is stored under the same key (repository, commit, fingerprint, kind, attempt) with different results; upload it as a new attempt"
                ),
                "field": "attempt",
                "existing": existing,
            }})),
        )
            .into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    }
}

fn repository_of(owner: &str, repo: &str) -> Result<RepositoryName, Response> {
    RepositoryName::parse(&format!("{owner}/{repo}")).map_err(|e| {
        error(
            StatusCode::UNPROCESSABLE_ENTITY,
            e.to_string(),
            Some(("path", "owner/repo")),
        )
    })
}

fn run_json(run: &benchgate_collector::RunSummary) -> Value {
    let mut value = crate::render::summary_json(run);
    value["recorded_at_ms"] = json!(epoch_ms(run.recorded_at));
    value
}

async fn list_runs(
    State(state): State<AppState>,
    UrlPath((owner, repo)): UrlPath<(String, String)>,
) -> Response {
    let repository = match repository_of(&owner, &repo) {
        Ok(r) => r,
        Err(response) => return response,
    };
    match state.store.list_runs().await {
        Ok(runs) => axum::Json(
            runs.iter()
                .filter(|r| r.meta.repository == repository)
                .map(run_json)
                .collect::<Vec<_>>(),
        )
        .into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    }
}

async fn load_run(
    state: &AppState,
    repository: &RepositoryName,
    id: &str,
    field: &str,
) -> Result<benchgate_collector::StoredRun, Response> {
    let not_found = || {
        error(
            StatusCode::NOT_FOUND,
            format!("{repository} has no run {id}"),
            Some(("field", field)),
        )
    };
    let id = RunId::parse(id).map_err(|_| not_found())?;
    match state.store.get_run(id).await {
        Ok(run) if &run.summary.meta.repository == repository => Ok(run),
        Ok(_) | Err(StoreError::RunNotFound(_)) => Err(not_found()),
        Err(e) => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            e.to_string(),
            None,
        )),
    }
}

/// `GET .../runs/{id}`: the run document, samples and all, with its id.
async fn get_run(
    State(state): State<AppState>,
    UrlPath((owner, repo, id)): UrlPath<(String, String, String)>,
) -> Response {
    let repository = match repository_of(&owner, &repo) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let run = match load_run(&state, &repository, &id, "id").await {
        Ok(run) => run,
        Err(response) => return response,
    };
    let new_run = benchgate_collector::NewRun {
        meta: run.summary.meta.clone(),
        profile: run.profile,
        recorded_at: run.summary.recorded_at,
        measurements: run.measurements,
    };
    let mut value = serde_json::to_value(RunDocument::from_run(&new_run)).unwrap_or(Value::Null);
    value["id"] = json!(run.summary.id.get());
    axum::Json(value).into_response()
}

#[derive(Deserialize)]
struct CompareQuery {
    base: Option<String>,
    head: Option<String>,
}

/// `GET .../compare?base=RUN&head=RUN`: the gate's perf-summary.json for two stored runs.
async fn compare(
    State(state): State<AppState>,
    UrlPath((owner, repo)): UrlPath<(String, String)>,
    Query(query): Query<CompareQuery>,
) -> Response {
    let repository = match repository_of(&owner, &repo) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let (Some(base), Some(head)) = (query.base, query.head) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "both `base` and `head` run ids are required",
            Some(("query", "base")),
        );
    };
    let base = match load_run(&state, &repository, &base, "base").await {
        Ok(run) => run,
        Err(response) => return response,
    };
    let head = match load_run(&state, &repository, &head, "head").await {
        Ok(run) => run,
        Err(response) => return response,
    };
    let policy = benchgate_gate::Policy::default();
    let history = std::collections::HashMap::new();
    let decision = evaluate(
        &Input {
            mode: Mode::StoredBaseline,
            base_rounds: std::slice::from_ref(&base.measurements),
            head_rounds: std::slice::from_ref(&head.measurements),
            history: &history,
        },
        &policy,
    );
    let context = Context {
        base: format!(
            "{} (run {})",
            base.summary.meta.commit.short(),
            base.summary.id
        ),
        head: format!(
            "{} (run {})",
            head.summary.meta.commit.short(),
            head.summary.id
        ),
        base_commit: Some(base.summary.meta.commit.to_string()),
        head_commit: Some(head.summary.meta.commit.to_string()),
        fingerprint: (base.summary.fingerprint == head.summary.fingerprint)
            .then(|| head.summary.fingerprint.to_string()),
        builds: Vec::new(),
        source: None,
    };
    axum::Json(summary(&decision, &context, &policy)).into_response()
}

#[derive(Deserialize)]
struct SeriesQuery {
    benchmark: Option<String>,
    fingerprint: Option<String>,
}

/// `GET .../series?benchmark=ID&fingerprint=HASH`: one benchmark's value per run, oldest first.
async fn series(
    State(state): State<AppState>,
    UrlPath((owner, repo)): UrlPath<(String, String)>,
    Query(query): Query<SeriesQuery>,
) -> Response {
    let repository = match repository_of(&owner, &repo) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let Some(benchmark) = query.benchmark else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "`benchmark` is required",
            Some(("query", "benchmark")),
        );
    };
    let Some(fingerprint) = query.fingerprint else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "`fingerprint` is required",
            Some(("query", "fingerprint")),
        );
    };
    let fingerprint = match Fingerprint::parse(&fingerprint) {
        Ok(f) => f,
        Err(e) => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                e.to_string(),
                Some(("query", "fingerprint")),
            );
        }
    };
    match state
        .store
        .benchmark_series(&repository, &fingerprint, &benchmark)
        .await
    {
        Ok(points) => axum::Json(json!({
            "repository": repository.as_str(),
            "fingerprint": fingerprint.as_str(),
            "benchmark": benchmark,
            "points": points.iter().map(|p| json!({
                "run": p.run.id.get(),
                "commit": p.run.meta.commit.as_str(),
                "branch": p.run.meta.branch,
                "kind": p.run.meta.kind.as_str(),
                "recorded_at_ms": epoch_ms(p.run.recorded_at),
                "median": p.median,
                "median_lower": p.median_lower,
                "median_upper": p.median_upper,
                "min": p.min,
            })).collect::<Vec<_>>(),
        }))
        .into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    }
}

#[derive(Deserialize)]
struct HistoryQuery {
    runs: Option<String>,
    statistic: Option<String>,
}

/// `GET .../history?runs=1,2,3&statistic=min|median`: each benchmark's statistic over those
/// runs, in their order (what `gate --collector` calibrates its noise with).
async fn history(
    State(state): State<AppState>,
    UrlPath((owner, repo)): UrlPath<(String, String)>,
    Query(query): Query<HistoryQuery>,
) -> Response {
    let repository = match repository_of(&owner, &repo) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let statistic = match query.statistic.as_deref() {
        Some("median") => benchgate_collector::StoredStatistic::Median,
        Some("min") => benchgate_collector::StoredStatistic::Min,
        _ => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "`statistic` must be median or min",
                Some(("query", "statistic")),
            );
        }
    };
    let mut runs = Vec::new();
    for text in query
        .runs
        .as_deref()
        .unwrap_or("")
        .split(',')
        .filter(|t| !t.is_empty())
    {
        let found = match RunId::parse(text) {
            Ok(id) => state.store.run_summary(id).await.ok(),
            Err(_) => None,
        };
        match found {
            Some(run) if run.meta.repository == repository => runs.push(run.id),
            _ => {
                return error(
                    StatusCode::NOT_FOUND,
                    format!("{repository} has no run {text}"),
                    Some(("query", "runs")),
                );
            }
        }
    }
    match state.store.statistic_series(&runs, statistic).await {
        Ok(series) => axum::Json(json!({ "series": series })).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    }
}

/// Checks `X-Hub-Signature-256` over the raw body, in constant time.
fn signature_ok(secret: &[u8], body: &[u8], header: &str) -> bool {
    let Some(hex) = header.strip_prefix("sha256=") else {
        return false;
    };
    let Some(expected) = decode_hex(hex) else {
        return false;
    };
    let Ok(mut mac) = hmac::Hmac::<Sha256>::new_from_slice(secret) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// `POST /github/webhook`: verified, stored, answered at once; the work happens in the worker.
async fn webhook(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(secret) = &state.config.webhook_secret else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "no webhook secret is configured (BENCHGATE_WEBHOOK_SECRET)",
            None,
        );
    };
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return body_rejection(rejection, WEBHOOK_LIMIT),
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(signature) = header("x-hub-signature-256") else {
        return error(
            StatusCode::UNAUTHORIZED,
            "missing signature",
            Some(("header", "x-hub-signature-256")),
        );
    };
    if !signature_ok(secret, &body, signature) {
        return error(
            StatusCode::UNAUTHORIZED,
            "the signature does not match the body and the configured secret",
            Some(("header", "x-hub-signature-256")),
        );
    }
    let Some(delivery) = header("x-github-delivery").filter(|d| !d.is_empty() && d.len() <= 100)
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "missing delivery id",
            Some(("header", "x-github-delivery")),
        );
    };
    let Some(event) = header("x-github-event").filter(|e| !e.is_empty() && e.len() <= 100) else {
        return error(
            StatusCode::BAD_REQUEST,
            "missing event name",
            Some(("header", "x-github-event")),
        );
    };
    match state.store.record_delivery(delivery, event, &body).await {
        Ok(true) => {
            state.work.notify_one();
            (
                StatusCode::ACCEPTED,
                axum::Json(json!({ "status": "queued", "delivery": delivery })),
            )
                .into_response()
        }
        Ok(false) => {
            axum::Json(json!({ "status": "duplicate", "delivery": delivery })).into_response()
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None),
    }
}

/// Works through pending deliveries, oldest first, whenever woken (and once at start, so a
/// restart finishes what an earlier process had accepted).
async fn worker(store: Store, github: GitHubArgs, work: Arc<Notify>) {
    loop {
        match store.pending_deliveries().await {
            Ok(pending) => {
                for (delivery, event, payload) in pending {
                    let (ok, outcome) = process(&store, &github, &delivery, &event, &payload).await;
                    eprintln!("benchgate serve: delivery {delivery} ({event}): {outcome}");
                    if let Err(e) = store.finish_delivery(&delivery, ok, &outcome).await {
                        eprintln!("benchgate serve: delivery {delivery}: cannot record: {e}");
                    }
                }
            }
            Err(e) => eprintln!("benchgate serve: cannot read pending deliveries: {e}"),
        }
        work.notified().await;
    }
}

async fn process(
    store: &Store,
    github: &GitHubArgs,
    delivery: &str,
    event: &str,
    payload: &[u8],
) -> (bool, String) {
    if event != "issue_comment" {
        return (
            true,
            format!("ignored: benchgate acts on issue_comment, not {event}"),
        );
    }
    let Ok(text) = std::str::from_utf8(payload) else {
        return (false, "the payload is not UTF-8".into());
    };
    let source = format!("delivery {delivery}");
    match crate::github::overrides::handle_event(text, &source, None, github, store).await {
        Ok(crate::github::overrides::Outcome::Ignored(why)) => (true, format!("ignored: {why}")),
        Ok(crate::github::overrides::Outcome::Refused(why)) => (true, format!("refused: {why}")),
        Ok(crate::github::overrides::Outcome::Overridden { head_sha }) => {
            (true, format!("overridden at {head_sha}"))
        }
        Err(e) => (false, format!("{e:#}")),
    }
}

/// `benchgate serve`: binds `bind`, prints the address, serves until SIGTERM or Ctrl-C, and
/// lets requests in flight finish.
pub async fn serve(db: PathBuf, bind: SocketAddr, config: Config) -> anyhow::Result<()> {
    let store = Store::open(&db).await?;
    // A deep accept queue (the default is 128): CI fleets upload in bursts.
    let listener = (|| {
        let socket = if bind.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        socket.bind(bind)?;
        socket.listen(ACCEPT_BACKLOG)
    })()
    .map_err(|e| anyhow::anyhow!("--bind {bind}: {e}"))?;
    let address = listener.local_addr()?;
    let work = Arc::new(Notify::new());
    let worker = tokio::spawn(worker(store.clone(), config.github.clone(), work.clone()));
    let state = AppState {
        store: store.clone(),
        config: Arc::new(config),
        work,
    };
    eprintln!(
        "benchgate serve: listening on http://{address} (store {})",
        db.display()
    );
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown())
        .await?;
    worker.abort();
    eprintln!("benchgate serve: stopped; every request in flight finished");
    store.close().await;
    Ok(())
}

async fn shutdown() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = terminate => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    // A moment for the log line to appear before the listener closes.
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use axum::body::Body;
    use tower::ServiceExt as _;

    async fn app(secret: Option<&str>) -> (tempfile::TempDir, Router) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).await.unwrap();
        let state = AppState {
            store,
            config: Arc::new(Config {
                body_limit: 1000,
                webhook_secret: secret.map(|s| s.as_bytes().to_vec()),
                github: GitHubArgs::default(),
            }),
            work: Arc::new(Notify::new()),
        };
        (dir, router(state))
    }

    async fn call(app: Router, request: axum::http::Request<Body>) -> (StatusCode, Value) {
        let response = app.oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    #[tokio::test]
    async fn the_router_answers_every_error_in_one_shape() {
        let (_dir, app) = app(None).await;
        let get = |uri: &str| axum::http::Request::get(uri).body(Body::empty()).unwrap();
        assert_eq!(
            call(app.clone(), get("/healthz")).await,
            (StatusCode::OK, json!({"status": "ok"}))
        );
        let (status, body) = call(app.clone(), get("/nowhere")).await;
        assert_eq!(
            (status, body),
            (
                StatusCode::NOT_FOUND,
                json!({"error": {"status": 404, "message": "no such endpoint"}})
            )
        );
        let upload = axum::http::Request::post("/api/v1/runs")
            .body(Body::from("{}"))
            .unwrap();
        let (status, body) = call(app.clone(), upload).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(body["error"]["header"], "authorization");
        let hook = axum::http::Request::post("/github/webhook")
            .body(Body::from("{}"))
            .unwrap();
        let (status, body) = call(app.clone(), hook).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("BENCHGATE_WEBHOOK_SECRET")
        );
        let (status, body) = call(app, get("/api/v1/repos/a/b/compare?base=1")).await;
        assert_eq!(
            (status, &body["error"]["query"]),
            (StatusCode::UNPROCESSABLE_ENTITY, &json!("base"))
        );
    }

    #[test]
    fn githubs_documented_signature_example_verifies() {
        let secret = b"It's a Secret to Everybody";
        let header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert!(signature_ok(secret, b"Hello, World!", header));
        assert!(!signature_ok(secret, b"Hello, World?", header));
        assert!(!signature_ok(b"another secret", b"Hello, World!", header));
        assert!(!signature_ok(
            secret,
            b"Hello, World!",
            &header.replace("sha256=", "sha1=")
        ));
        assert!(!signature_ok(secret, b"Hello, World!", "sha256=zz"));
    }
}
