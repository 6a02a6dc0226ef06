//! The collector service as a baseline source for `benchgate gate --collector URL`: runs,
//! their measurements and history read over HTTP instead of from a local SQLite file.

use std::collections::{BTreeMap, HashMap};

use anyhow::Context as _;
use benchgate_collector::callgrind::Profile;
use benchgate_collector::wire::reads::{HistoryJson, RunSummaryJson, StoredRunJson};
use benchgate_collector::{
    BenchmarkId, Fingerprint, Measurement, NewRun, RepositoryName, RunId, RunSummary,
    StoredStatistic,
};
use http_body_util::Empty;
use hyper::body::Bytes;
use serde::de::DeserializeOwned;

use super::HttpClient;

/// A collector service, for one repository.
#[derive(Clone)]
pub struct Collector {
    base: String,
    repository: RepositoryName,
    client: HttpClient<Empty<Bytes>>,
}

impl Collector {
    /// The service at `url`, for `repository`.
    pub fn new(url: &str, repository: RepositoryName) -> anyhow::Result<Self> {
        Ok(Self {
            base: url.trim_end_matches('/').to_owned(),
            repository,
            client: super::client()?,
        })
    }

    /// GET `path` under the repository as a `T`; retried on lost connections, 5xx and 429.
    async fn get<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        let url = format!("{}/api/v1/repos/{}/{path}", self.base, self.repository);
        let uri: hyper::Uri = url
            .parse()
            .with_context(|| format!("--collector: {url} is not a URL"))?;
        let what = format!("GET {url}");
        let body = super::send(&self.client, &what, || {
            Ok(hyper::Request::get(uri.clone())
                .header("user-agent", super::USER_AGENT)
                .body(Empty::new())?)
        })
        .await?;
        super::answer(&what, &body)
    }

    /// Every run of the repository.
    async fn runs(&self) -> anyhow::Result<Vec<RunSummary>> {
        let runs: Vec<RunSummaryJson> = self.get("runs").await?;
        runs.into_iter()
            .enumerate()
            .map(|(i, run)| {
                run.into_summary()
                    .map_err(|e| anyhow::anyhow!("the service's run list: [{i}].{e}"))
            })
            .collect()
    }

    /// One run's summary.
    pub async fn run_summary(&self, id: RunId) -> anyhow::Result<RunSummary> {
        self.runs()
            .await?
            .into_iter()
            .find(|run| run.id == id)
            .with_context(|| format!("the service has no run {id} of {}", self.repository))
    }

    /// The repository's runs on `fingerprint`, oldest first.
    pub async fn runs_on_fingerprint(
        &self,
        fingerprint: &Fingerprint,
    ) -> anyhow::Result<Vec<RunSummary>> {
        Ok(self
            .runs()
            .await?
            .into_iter()
            .filter(|run| &run.fingerprint == fingerprint)
            .collect())
    }

    /// One run's measurements, sorted by id.
    pub async fn measurements(&self, id: RunId) -> anyhow::Result<Vec<Measurement>> {
        Ok(self.run(id).await?.measurements)
    }

    /// A run's profiles by function (its run document's `function_costs`).
    pub async fn function_costs(
        &self,
        id: RunId,
    ) -> anyhow::Result<BTreeMap<BenchmarkId, Profile>> {
        Ok(self.run(id).await?.function_costs)
    }

    /// A run, every field checked.
    async fn run(&self, id: RunId) -> anyhow::Result<NewRun> {
        let stored: StoredRunJson = self.get(&format!("runs/{id}")).await?;
        stored
            .run
            .into_run()
            .map_err(|e| anyhow::anyhow!("run {id} from the service: {e}"))
    }

    /// A stored statistic per benchmark over `runs`, in their order.
    pub async fn statistic_series(
        &self,
        runs: &[RunId],
        statistic: StoredStatistic,
    ) -> anyhow::Result<HashMap<String, Vec<f64>>> {
        let ids: Vec<String> = runs.iter().map(ToString::to_string).collect();
        let name = match statistic {
            StoredStatistic::Median => "median",
            StoredStatistic::Min => "min",
        };
        let history: HistoryJson = self
            .get(&format!("history?statistic={name}&runs={}", ids.join(",")))
            .await?;
        Ok(history.series.into_iter().collect())
    }
}
