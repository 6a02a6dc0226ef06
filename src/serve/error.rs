//! The service's one error type. Every error answers in one shape,
//! `{"error": {"status", "message", "field"|"header"|"query"|"path"}}`; a 5xx names no
//! internals (no SQL codes, no paths): its detail goes to the server's log.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// An answer other than success: status, message, and what in the request was at fault.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    /// More keys of the error object, in order: what was at fault, then any extra.
    keys: Vec<(&'static str, Value)>,
    /// Seconds for `Retry-After`, on a 503.
    retry_after: Option<u64>,
}

/// What a client is told to wait before retrying a 503.
pub const RETRY_AFTER_SECONDS: u64 = 1;

/// What a handler returns.
pub type ApiResult = Result<Response, ApiError>;

/// axum's `Query`, refusing a bad query string (a duplicate key, a value of the wrong type) in
/// the one JSON shape instead of axum's plain text.
pub struct QueryOf<T>(pub T);

impl<T, S> axum::extract::FromRequestParts<S> for QueryOf<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Self(value)),
            Err(rejection) => Err(
                ApiError::new(StatusCode::BAD_REQUEST, rejection.body_text())
                    .at("query", parts.uri.query().unwrap_or_default()),
            ),
        }
    }
}

impl ApiError {
    /// An error the client caused or can act on; `message` is shown to it.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            keys: Vec::new(),
            retry_after: None,
        }
    }

    /// 503 with `Retry-After`: the service cannot take the request now, but will.
    pub fn unavailable(message: impl Into<String>) -> Self {
        let mut error = Self::new(StatusCode::SERVICE_UNAVAILABLE, message);
        error.retry_after = Some(RETRY_AFTER_SECONDS);
        error
    }

    /// A store error while doing `what`: 503 with `Retry-After` when the store was busy
    /// (locked by another writer), else 500. Either way no internals reach the client.
    pub fn store(what: &str, error: benchgate_collector::Error) -> Self {
        if error.is_busy() {
            tracing::warn!(what = %what, error = %error, "store busy");
            Self::unavailable(format!(
                "the store is busy {what}; retry after {RETRY_AFTER_SECONDS} s"
            ))
        } else {
            Self::internal(what, error)
        }
    }

    /// 422 for a request field, header, query key or path segment that is not acceptable.
    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }

    /// The part of the request at fault: `("field", "attempt")`, `("header", "authorization")`.
    pub fn at(mut self, kind: &'static str, name: impl Into<String>) -> Self {
        self.keys.push((kind, Value::String(name.into())));
        self
    }

    /// One more key in the error object, e.g. the id of the run in the way.
    pub fn with(mut self, key: &'static str, value: Value) -> Self {
        self.keys.push((key, value));
        self
    }

    /// 500: the server failed at `what`. The client is told only that; the log gets `error`.
    pub fn internal(what: &str, error: impl std::fmt::Display) -> Self {
        tracing::error!(what = %what, error = %error, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the server failed {what}; its log has the details"),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({ "error": {
            "status": self.status.as_u16(),
            "message": self.message,
        }});
        for (key, value) in self.keys {
            body["error"][key] = value;
        }
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(seconds),
            );
        }
        response
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    async fn body_of(error: ApiError) -> (StatusCode, Value) {
        let response = error.into_response();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn a_server_error_names_what_failed_but_no_internals() {
        let (status, body) = body_of(ApiError::internal(
            "storing the run",
            "error returned from database: (code: 5) database is locked at /var/lib/benchgate.db",
        ))
        .await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            body,
            json!({"error": {
                "status": 500,
                "message": "the server failed storing the run; its log has the details",
            }})
        );
    }

    #[tokio::test]
    async fn a_client_error_names_the_part_at_fault_then_any_extra_key() {
        let error = ApiError::new(StatusCode::CONFLICT, "run 4 is in the way")
            .at("field", "attempt")
            .with("existing", json!(4));
        let (status, body) = body_of(error).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"error":{"status":409,"message":"run 4 is in the way","field":"attempt","existing":4}}"#
        );
    }
}
