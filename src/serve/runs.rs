//! Runs over HTTP: `POST /api/v1/runs` stores one (idempotently); `GET .../runs` lists a
//! repository's, `GET .../runs/{id}` returns one whole.

use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use benchgate_collector::callgrind::Profile;
use benchgate_collector::wire::RunDocument;
use benchgate_collector::wire::reads::{RunCreatedJson, RunSummaryJson, StoredRunJson};
use benchgate_collector::{Error as StoreError, IngestOutcome, RepositoryName, RunId};
use serde_json::json;

use super::AppState;
use super::auth::{authorize, decoded_body, read_body};
use super::error::{ApiError, ApiResult, QueryOf};

/// `POST /api/v1/runs`' query: `?attempt=next` stores the run as the next attempt under its
/// key (see `Store::ingest_next_attempt`), whatever attempt it names.
#[derive(serde::Deserialize)]
pub struct CreateRunQuery {
    attempt: Option<String>,
}

/// `POST /api/v1/runs`: 201 stored, 200 already stored, 409 a different run under its key.
/// The token is checked from the headers before any of the body is read.
pub async fn create_run(
    State(state): State<AppState>,
    QueryOf(query): QueryOf<CreateRunQuery>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    let repository = authorize(&state, &headers).await?;
    let next_attempt = match query.attempt.as_deref() {
        None => false,
        Some("next") => true,
        Some(other) => {
            return Err(ApiError::unprocessable(format!(
                "attempt {other:?}: the query takes only `attempt=next` (a run's own attempt is in its document)"
            ))
            .at("query", "attempt"));
        }
    };
    let limit = state.config.body_limit;
    let text = decoded_body(&headers, &read_body(&headers, body, limit).await?, limit)?;
    let document = RunDocument::from_json(&text)
        .map_err(|e| ApiError::unprocessable(e.message).at("field", e.field))?;
    if document.repository != repository.as_str() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("the token is for {repository}, not {}", document.repository),
        )
        .at("field", "repository"));
    }
    let run = document
        .into_run()
        .map_err(|e| ApiError::unprocessable(e.message).at("field", e.field))?;
    let stored = if next_attempt {
        state.store.ingest_next_attempt(&run).await
    } else {
        state.store.ingest(&run).await
    };
    match stored {
        Ok(IngestOutcome::Created(id)) => Ok((StatusCode::CREATED, created(id, "created")).into_response()),
        Ok(IngestOutcome::Unchanged(id) | IngestOutcome::Replaced { id, .. }) => {
            Ok((StatusCode::OK, created(id, "unchanged")).into_response())
        }
        Err(StoreError::RunConflict { existing, .. }) => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "run {existing} is stored under the same key (repository, commit, fingerprint, kind, attempt) with different results; upload it as a new attempt (`--attempt N`, or `--attempt next`)"
            ),
        )
        .at("field", "attempt")
        .with("existing", json!(existing))),
        Err(e) => Err(ApiError::store("storing the run", e)),
    }
}

/// The repository named by the URL's `{owner}/{repo}`.
pub fn repository_of(owner: &str, repo: &str) -> Result<RepositoryName, ApiError> {
    RepositoryName::parse(&format!("{owner}/{repo}"))
        .map_err(|e| ApiError::unprocessable(e.to_string()).at("path", "owner/repo"))
}

/// `POST /api/v1/runs`' answer body.
fn created(id: RunId, status: &str) -> axum::Json<RunCreatedJson> {
    axum::Json(RunCreatedJson {
        id: id.get(),
        status: status.to_owned(),
    })
}

/// `GET .../runs`: the repository's runs, oldest first.
pub async fn list_runs(
    State(state): State<AppState>,
    UrlPath((owner, repo)): UrlPath<(String, String)>,
) -> ApiResult {
    let repository = repository_of(&owner, &repo)?;
    let runs = state
        .store
        .list_runs()
        .await
        .map_err(|e| ApiError::store("listing runs", e))?;
    Ok(axum::Json(
        runs.iter()
            .filter(|r| r.meta.repository == repository)
            .map(RunSummaryJson::with_ms)
            .collect::<Vec<_>>(),
    )
    .into_response())
}

/// Run `id` of `repository`; a 404 naming `field` when there is no such run there.
pub async fn load_run(
    state: &AppState,
    repository: &RepositoryName,
    id: &str,
    field: &str,
) -> Result<benchgate_collector::StoredRun, ApiError> {
    let not_found = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("{repository} has no run {id}"),
        )
        .at("field", field)
    };
    let id = RunId::parse(id).map_err(|_| not_found())?;
    match state.store.get_run(id).await {
        Ok(run) if &run.summary.meta.repository == repository => Ok(run),
        Ok(_) | Err(StoreError::RunNotFound(_)) => Err(not_found()),
        Err(e) => Err(ApiError::store("reading a run", e)),
    }
}

/// A stored run's profiles by function, for its run document.
async fn stored_function_costs(
    state: &AppState,
    id: RunId,
) -> Result<std::collections::BTreeMap<benchgate_collector::BenchmarkId, Profile>, ApiError> {
    state
        .store
        .function_costs(id)
        .await
        .map_err(|e| ApiError::store("reading a run's profiles", e))
}

/// `GET .../runs/{id}`: the run document, samples and all, with its id.
pub async fn get_run(
    State(state): State<AppState>,
    UrlPath((owner, repo, id)): UrlPath<(String, String, String)>,
) -> ApiResult {
    let repository = repository_of(&owner, &repo)?;
    let run = load_run(&state, &repository, &id, "id").await?;
    let function_costs = stored_function_costs(&state, run.summary.id).await?;
    let new_run = benchgate_collector::NewRun {
        meta: run.summary.meta.clone(),
        profile: run.profile,
        recorded_at: run.summary.recorded_at,
        measurements: run.measurements,
        function_costs,
    };
    Ok(axum::Json(StoredRunJson {
        run: RunDocument::from_run(&new_run),
        id: run.summary.id.get(),
    })
    .into_response())
}
