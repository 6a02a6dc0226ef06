//! `benchgate serve`: the collector over HTTP. Runs are uploaded with a per-repository token,
//! read back for dashboards and comparisons, and GitHub webhooks feed the override flow. Every
//! route is listed in [`router`], a pure function; [`serve`] binds it and runs the worker. The
//! handlers live in a file per concern (`runs`, `queries`, `webhook`, `pages`), answer errors as
//! [`error::ApiError`], and the token and body checks are in `auth`.

mod auth;
mod error;
mod listen;
mod pages;
mod queries;
mod runs;
mod webhook;

pub use auth::token_hash;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use benchgate_collector::{Location, Store};
use serde_json::json;
use tokio::sync::Notify;
use tower_http::LatencyUnit;
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

use crate::github::GitHubArgs;
use error::{ApiError, ApiResult};

/// The default limit on an uploaded run's body (and on its size once un-gzipped).
pub const DEFAULT_BODY_LIMIT: usize = 32 * 1024 * 1024;
/// Connections the kernel may queue before the server accepts them.
const ACCEPT_BACKLOG: u32 = 1024;
/// GitHub's cap on a webhook payload.
const WEBHOOK_LIMIT: usize = 25 * 1024 * 1024;
/// Uploads handled at once; more are answered 503 with `Retry-After` at once (each holds its
/// body, up to the body limit, in memory while it is decoded and stored).
pub const DEFAULT_MAX_UPLOADS: u16 = 16;

/// How the service is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// The largest upload accepted, compressed or not.
    pub body_limit: usize,
    /// Uploads handled at once.
    pub max_uploads: usize,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive.
    pub body_timeout: Duration,
    /// How long a request waits for another process's lock on the store.
    pub store_timeout: Duration,
    /// The webhook secret; without one, webhooks are refused.
    pub webhook_secret: Option<Vec<u8>>,
    /// How to reach GitHub for the work webhooks ask for.
    pub github: GitHubArgs,
}

#[derive(Clone)]
pub(crate) struct AppState {
    store: Store,
    config: Arc<Config>,
    work: Arc<Notify>,
}

/// The service's routes. Pure: the store, the settings and the worker's bell come in.
fn router(state: AppState) -> Router {
    let uploads = tower::ServiceBuilder::new()
        .layer(HandleErrorLayer::new(overloaded))
        .load_shed()
        .concurrency_limit(state.config.max_uploads);
    Router::new()
        .route("/healthz", get(healthz))
        .route("/api/v1/runs", post(runs::create_run).layer(uploads))
        .route("/api/v1/repos/{owner}/{repo}/runs", get(runs::list_runs))
        .route("/api/v1/repos/{owner}/{repo}/runs/{id}", get(runs::get_run))
        .route(
            "/api/v1/repos/{owner}/{repo}/compare",
            get(queries::get_comparison),
        )
        .route(
            "/api/v1/repos/{owner}/{repo}/series",
            get(queries::get_series),
        )
        .route(
            "/api/v1/repos/{owner}/{repo}/history",
            get(queries::get_history),
        )
        .route("/github/webhook", post(webhook::receive_webhook))
        .fallback(pages::get_page)
        .layer(RequestBodyTimeoutLayer::new(state.config.body_timeout))
        // One structured line per request (tower-http's trace layer): the request's method, URI
        // and version as the span's fields, its status and latency in milliseconds.
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
                .on_request(())
                .on_response(
                    DefaultOnResponse::new()
                        .level(Level::INFO)
                        .latency_unit(LatencyUnit::Millis),
                ),
        )
        .with_state(state)
}

/// 503 with `Retry-After` when the uploads in flight are at their limit.
async fn overloaded(_: tower::BoxError) -> Response {
    ApiError::unavailable("too many uploads at once; retry after a second").into_response()
}

/// `GET /healthz`: ok when the store answers; 503 (detail in the log) when it does not.
async fn healthz(State(state): State<AppState>) -> ApiResult {
    match state.store.list_runs().await {
        Ok(_) => Ok(axum::Json(json!({ "status": "ok" })).into_response()),
        Err(e) => {
            tracing::error!(error = %e, "health check");
            Err(ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "the store does not answer; the server's log has the details",
            ))
        }
    }
}

/// `benchgate serve`: binds `bind`, prints the address, serves until SIGTERM or Ctrl-C, and
/// lets requests in flight finish.
pub async fn serve(db: Location, bind: SocketAddr, config: Config) -> anyhow::Result<()> {
    let store = Store::connect_with(&db, config.store_timeout).await?;
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
    let worker = tokio::spawn(webhook::worker(
        store.clone(),
        config.github.clone(),
        work.clone(),
    ));
    let state = AppState {
        store: store.clone(),
        config: Arc::new(config),
        work,
    };
    tracing::info!(
        address = %format!("http://{address}"),
        engine = %db.engine(),
        store = %db,
        "listening"
    );
    let header_timeout = state.config.header_timeout;
    listen::serve(listener, router(state), header_timeout, shutdown()).await;
    worker.abort();
    tracing::info!("stopped; every request in flight finished");
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
    use super::webhook::signature_ok;
    use super::*;
    use axum::body::Body;
    use axum::http::StatusCode;
    use serde_json::Value;
    use tower::ServiceExt as _;

    async fn app(secret: Option<&str>) -> (tempfile::TempDir, Router) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).await.unwrap();
        let state = AppState {
            store,
            config: Arc::new(Config {
                body_limit: 1000,
                max_uploads: usize::from(DEFAULT_MAX_UPLOADS),
                header_timeout: Duration::from_secs(10),
                body_timeout: Duration::from_secs(60),
                store_timeout: Duration::from_secs(30),
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
