//! The dashboard, live: the same pages `benchgate dashboard` writes, rendered from the store on
//! each request. Anything else is a 404 in the error shape.

use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::IntoResponse;

use super::AppState;
use super::error::{ApiError, ApiResult};

/// Every path the router does not know: a dashboard page, or 404.
pub async fn get_page(State(state): State<AppState>, method: Method, uri: Uri) -> ApiResult {
    let not_found = || ApiError::new(StatusCode::NOT_FOUND, "no such endpoint");
    if method != Method::GET || uri.path().starts_with("/api/") {
        return Err(not_found());
    }
    let path = match uri.path().trim_start_matches('/') {
        "" => "index.html".to_owned(),
        p if p.ends_with('/') => format!("{p}index.html"),
        p => p.to_owned(),
    };
    let repositories = crate::trends::load(&state.store, &[])
        .await
        .map_err(|e| ApiError::internal("loading the dashboard", format!("{e:#}")))?;
    match benchgate_dashboards::site::build(&repositories)
        .into_iter()
        .find(|(p, _)| *p == path)
    {
        Some((path, body)) => {
            let kind = if path.ends_with(".svg") {
                "image/svg+xml"
            } else {
                "text/html; charset=utf-8"
            };
            Ok(([(header::CONTENT_TYPE, kind)], body).into_response())
        }
        None => Err(not_found()),
    }
}
