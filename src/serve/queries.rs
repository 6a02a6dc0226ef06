//! The read side: a comparison of two stored runs, one benchmark's series, and the statistic
//! history `gate --collector` calibrates its noise with.

use axum::extract::{Path as UrlPath, State};
use axum::response::IntoResponse;
use benchgate_collector::wire::reads::{HistoryJson, SeriesJson, SeriesPointJson};
use benchgate_collector::{Fingerprint, RunId};
use benchgate_gate::decision::{Input, Mode, evaluate};
use benchgate_gate::report::{Context, summary};
use serde::Deserialize;

use super::AppState;
use super::error::{ApiError, ApiResult, QueryOf};
use super::runs::{load_run, repository_of};

/// `compare`'s query.
#[derive(Deserialize)]
pub struct CompareQuery {
    base: Option<String>,
    head: Option<String>,
}

/// `GET .../compare?base=RUN&head=RUN`: the gate's perf-summary.json for two stored runs.
pub async fn get_comparison(
    State(state): State<AppState>,
    UrlPath((owner, repo)): UrlPath<(String, String)>,
    QueryOf(query): QueryOf<CompareQuery>,
) -> ApiResult {
    let repository = repository_of(&owner, &repo)?;
    let (Some(base), Some(head)) = (query.base, query.head) else {
        return Err(
            ApiError::unprocessable("both `base` and `head` run ids are required")
                .at("query", "base"),
        );
    };
    let base = load_run(&state, &repository, &base, "base").await?;
    let head = load_run(&state, &repository, &head, "head").await?;
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
        cost: None,
        profiles: Vec::new(),
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
        incomplete: None,
        notes: Vec::new(),
    };
    Ok(axum::Json(summary(&decision, &context, &policy)).into_response())
}

/// `series`' query.
#[derive(Deserialize)]
pub struct SeriesQuery {
    benchmark: Option<String>,
    fingerprint: Option<String>,
}

/// `GET .../series?benchmark=ID&fingerprint=HASH`: one benchmark's value per run, oldest first.
pub async fn get_series(
    State(state): State<AppState>,
    UrlPath((owner, repo)): UrlPath<(String, String)>,
    QueryOf(query): QueryOf<SeriesQuery>,
) -> ApiResult {
    let repository = repository_of(&owner, &repo)?;
    let Some(benchmark) = query.benchmark else {
        return Err(ApiError::unprocessable("`benchmark` is required").at("query", "benchmark"));
    };
    let Some(fingerprint) = query.fingerprint else {
        return Err(ApiError::unprocessable("`fingerprint` is required").at("query", "fingerprint"));
    };
    let fingerprint = Fingerprint::parse(&fingerprint)
        .map_err(|e| ApiError::unprocessable(e.to_string()).at("query", "fingerprint"))?;
    let points = state
        .store
        .benchmark_series(&repository, &fingerprint, &benchmark)
        .await
        .map_err(|e| ApiError::store("reading the series", e))?;
    Ok(axum::Json(SeriesJson {
        repository: repository.to_string(),
        fingerprint: fingerprint.to_string(),
        benchmark,
        points: points.iter().map(SeriesPointJson::new).collect(),
    })
    .into_response())
}

/// `history`'s query.
#[derive(Deserialize)]
pub struct HistoryQuery {
    runs: Option<String>,
    statistic: Option<String>,
}

/// `GET .../history?runs=1,2,3&statistic=min|median`: each benchmark's statistic over those
/// runs, in their order (what `gate --collector` calibrates its noise with).
pub async fn get_history(
    State(state): State<AppState>,
    UrlPath((owner, repo)): UrlPath<(String, String)>,
    QueryOf(query): QueryOf<HistoryQuery>,
) -> ApiResult {
    let repository = repository_of(&owner, &repo)?;
    let statistic = match query.statistic.as_deref() {
        Some("median") => benchgate_collector::StoredStatistic::Median,
        Some("min") => benchgate_collector::StoredStatistic::Min,
        _ => {
            return Err(ApiError::unprocessable("`statistic` must be median or min")
                .at("query", "statistic"));
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
                return Err(ApiError::new(
                    axum::http::StatusCode::NOT_FOUND,
                    format!("{repository} has no run {text}"),
                )
                .at("query", "runs"));
            }
        }
    }
    let series = state
        .store
        .statistic_series(&runs, statistic)
        .await
        .map_err(|e| ApiError::store("reading the history", e))?;
    Ok(axum::Json(HistoryJson {
        series: series.into_iter().collect(),
    })
    .into_response())
}
