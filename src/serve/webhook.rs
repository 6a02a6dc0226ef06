//! GitHub webhooks: `POST /github/webhook` is verified (HMAC-SHA256 over the raw body),
//! stored once per delivery id and answered at once; the worker does the work afterwards.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use benchgate_collector::Store;
use hmac::{KeyInit, Mac};
use serde_json::json;
use sha2::Sha256;
use tokio::sync::Notify;

use super::auth::read_body;
use super::error::{ApiError, ApiResult};
use super::{AppState, WEBHOOK_LIMIT};
use crate::github::GitHubArgs;
use crate::github::overrides::{self, Outcome};

/// Checks `X-Hub-Signature-256` over the raw body, in constant time.
pub fn signature_ok(secret: &[u8], body: &[u8], header: &str) -> bool {
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

/// GitHub's delivery ids are GUIDs and event names short words: at most this long.
const MAX_HEADER_VALUE: usize = 100;

/// A short header GitHub always sends: its value, or 400 saying whether it is missing or too
/// long.
fn named_header<'a>(headers: &'a HeaderMap, name: &str, what: &str) -> Result<&'a str, ApiError> {
    let error = |message: String| {
        ApiError::new(StatusCode::BAD_REQUEST, message).at("header", name.to_owned())
    };
    match headers.get(name).map(|v| v.to_str()) {
        None => Err(error(format!("missing {what}"))),
        Some(Err(_)) => Err(error(format!("the {what} is not visible ASCII"))),
        Some(Ok("")) => Err(error(format!("the {what} is empty"))),
        Some(Ok(value)) if value.len() > MAX_HEADER_VALUE => Err(error(format!(
            "the {what} is {} bytes long; at most {MAX_HEADER_VALUE}",
            value.len()
        ))),
        Some(Ok(value)) => Ok(value),
    }
}

/// `POST /github/webhook`: verified, stored, answered at once; the work happens in the worker.
pub async fn receive_webhook(
    State(state): State<AppState>,
    headers: HeaderMap,
    raw: Body,
) -> ApiResult {
    let Some(secret) = &state.config.webhook_secret else {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "no webhook secret is configured (BENCHGATE_WEBHOOK_SECRET)",
        ));
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let unauthorized = |message: &str| {
        ApiError::new(StatusCode::UNAUTHORIZED, message).at("header", "x-hub-signature-256")
    };
    // Everything the headers can settle is settled before the body is read.
    let Some(signature) = header("x-hub-signature-256") else {
        return Err(unauthorized("missing signature"));
    };
    let delivery = named_header(&headers, "x-github-delivery", "delivery id")?;
    let event = named_header(&headers, "x-github-event", "event name")?;
    let body = read_body(&headers, raw, WEBHOOK_LIMIT).await?;
    if !signature_ok(secret, &body, signature) {
        return Err(unauthorized(
            "the signature does not match the body and the configured secret",
        ));
    }
    let fresh = state
        .store
        .record_delivery(delivery, event, &body)
        .await
        .map_err(|e| ApiError::store("recording the delivery", e))?;
    if fresh {
        state.work.notify_one();
        Ok((
            StatusCode::ACCEPTED,
            axum::Json(json!({ "status": "queued", "delivery": delivery })),
        )
            .into_response())
    } else {
        Ok(axum::Json(json!({ "status": "duplicate", "delivery": delivery })).into_response())
    }
}

/// How long a worker's claim on a delivery holds: far longer than a delivery's work (a few
/// GitHub calls, each with its own timeout); a claim whose worker died lapses after it.
const CLAIM_LEASE: Duration = Duration::from_secs(600);

/// How often a worker looks for work nobody woke it for: deliveries another instance accepted
/// and did not finish, and lapsed claims.
const POLL: Duration = Duration::from_secs(30);

/// Works through pending deliveries, oldest first, whenever woken, every [`POLL`], and once
/// at start (so a restart finishes what an earlier process had accepted). Each delivery is
/// claimed first: with several instances on one store, each is worked on once.
pub async fn worker(store: Store, github: GitHubArgs, work: Arc<Notify>) {
    loop {
        match store.pending_deliveries().await {
            Ok(pending) => {
                for benchgate_collector::Delivery {
                    id: delivery,
                    event,
                    payload,
                } in pending
                {
                    match store.claim_delivery(&delivery, CLAIM_LEASE).await {
                        Ok(true) => {}
                        // Finished or being worked on by another instance.
                        Ok(false) => continue,
                        Err(e) => {
                            tracing::error!(delivery = %delivery, error = %e, "cannot claim the delivery");
                            continue;
                        }
                    }
                    let (ok, outcome) = process(&store, &github, &delivery, &event, &payload).await;
                    // Recorded first, then logged: the log line means the outcome is stored.
                    if let Err(e) = store.finish_delivery(&delivery, ok, &outcome).await {
                        tracing::error!(delivery = %delivery, error = %e, "cannot record the outcome");
                    }
                    tracing::info!(delivery = %delivery, event = %event, outcome = %outcome, "delivery worked on");
                }
            }
            Err(e) => tracing::error!(error = %e, "cannot read pending deliveries"),
        }
        let _ = tokio::time::timeout(POLL, work.notified()).await;
    }
}

/// One delivery's work: whether it is done, and what happened, for the log and the store.
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
    match overrides::handle_event(text, &source, None, github, store).await {
        Ok(Outcome::Ignored(why)) => (true, format!("ignored: {why}")),
        Ok(Outcome::Refused(why)) => (true, format!("refused: {why}")),
        Ok(Outcome::Overridden { head_sha }) => (true, format!("overridden at {head_sha}")),
        Err(e) => (false, format!("{e:#}")),
    }
}
