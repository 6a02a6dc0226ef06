//! What an upload must pass before its body is read as a run: the bearer token (only its
//! SHA-256 is stored), checked from the headers before any of the body is read, and the body,
//! within the limit by its `Content-Length` and as read, un-gzipped within the limit too.

use std::io::Read as _;

use axum::body::{Body, Bytes};
use axum::http::header::CONTENT_LENGTH;
use axum::http::{HeaderMap, StatusCode};
use benchgate_collector::RepositoryName;
use sha2::{Digest, Sha256};

use super::AppState;
use super::error::ApiError;

/// SHA-256 of a token, hex: all the store keeps.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The repository whose token authorizes the request.
pub async fn authorize(state: &AppState, headers: &HeaderMap) -> Result<RepositoryName, ApiError> {
    let unauthorized = |message: &str| {
        ApiError::new(StatusCode::UNAUTHORIZED, message).at("header", "authorization")
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
        Err(e) => Err(ApiError::store("checking the token", e)),
    }
}

/// The body, read only now (after the token was checked): refused on its `Content-Length`
/// before a byte is read when that is over `limit`, and cut off at `limit` when it does not say.
pub async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is over the {limit}-byte limit"),
        )
        .at("header", "content-length")
    };
    // hyper has already refused a Content-Length that is not a number.
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|error| {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
        while let Some(e) = source {
            if e.is::<http_body_util::LengthLimitError>() {
                return too_large();
            }
            if e.is::<tower_http::timeout::TimeoutError>() {
                return ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "the body did not arrive in time",
                );
            }
            source = e.source();
        }
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the body could not be read: {error}"),
        )
    })
}

/// The body, un-gzipped when `Content-Encoding: gzip`, within `limit` either way.
pub fn decoded_body(headers: &HeaderMap, body: &Bytes, limit: usize) -> Result<Vec<u8>, ApiError> {
    let encoding = headers
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("identity")
        .trim()
        .to_ascii_lowercase();
    let at_encoding = |error: ApiError| error.at("header", "content-encoding");
    match encoding.as_str() {
        "identity" => Ok(body.to_vec()),
        "gzip" => {
            let mut out = Vec::new();
            let read = flate2::read::GzDecoder::new(&body[..])
                .take(limit as u64 + 1)
                .read_to_end(&mut out);
            match read {
                Ok(_) if out.len() > limit => Err(at_encoding(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body un-gzips to over the {limit}-byte limit"),
                ))),
                Ok(_) => Ok(out),
                Err(e) => Err(at_encoding(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("the body is not valid gzip: {e}"),
                ))),
            }
        }
        other => Err(at_encoding(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("content encoding {other:?} is not supported; send gzip or nothing"),
        ))),
    }
}
