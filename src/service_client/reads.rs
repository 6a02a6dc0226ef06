//! The collector service as a baseline source for `benchgate gate --collector URL`: runs,
//! their measurements and history read over HTTP instead of from a local SQLite file.

use std::collections::HashMap;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::Context as _;
use benchgate_collector::wire::RunDocument;
use benchgate_collector::{
    CommitSha, Fingerprint, Measurement, RepositoryName, RunId, RunKind, RunMeta, RunSummary,
    StoredStatistic,
};
use http_body_util::Empty;
use hyper::body::Bytes;
use serde_json::Value;

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

    /// GET `path` under the repository, as JSON; retried on lost connections, 5xx and 429.
    async fn get(&self, path: &str) -> anyhow::Result<Value> {
        let url = format!("{}/api/v1/repos/{}/{path}", self.base, self.repository);
        let uri: hyper::Uri = url
            .parse()
            .with_context(|| format!("--collector: {url} is not a URL"))?;
        let (_, value) = super::send(&self.client, &format!("GET {url}"), || {
            Ok(hyper::Request::get(uri.clone())
                .header("user-agent", super::USER_AGENT)
                .body(Empty::new())?)
        })
        .await?;
        Ok(value)
    }

    /// Every run of the repository.
    async fn runs(&self) -> anyhow::Result<Vec<RunSummary>> {
        let value = self.get("runs").await?;
        value
            .as_array()
            .context("the service's run list is not a list")?
            .iter()
            .map(summary_from_json)
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
        let mut value = self.get(&format!("runs/{id}")).await?;
        if let Some(object) = value.as_object_mut() {
            object.remove("id");
        }
        let text = serde_json::to_vec(&value)?;
        let run = RunDocument::from_json(&text)
            .and_then(RunDocument::into_run)
            .map_err(|e| anyhow::anyhow!("run {id} from the service: {e}"))?;
        Ok(run.measurements)
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
        let value = self
            .get(&format!("history?statistic={name}&runs={}", ids.join(",")))
            .await?;
        serde_json::from_value(value["series"].clone())
            .context("the service's history is not a map of series")
    }
}

fn summary_from_json(value: &Value) -> anyhow::Result<RunSummary> {
    let text = |key: &str| {
        value[key]
            .as_str()
            .with_context(|| format!("the service's run has no `{key}`"))
    };
    let number = |key: &str| {
        value[key]
            .as_u64()
            .with_context(|| format!("the service's run has no `{key}`"))
    };
    Ok(RunSummary {
        id: RunId::parse(&number("id")?.to_string())?,
        meta: RunMeta {
            repository: RepositoryName::parse(text("repository")?)?,
            commit: CommitSha::parse(text("commit")?)?,
            branch: value["branch"].as_str().map(str::to_owned),
            kind: text("kind")?.parse::<RunKind>()?,
            pr_number: value["pr"].as_u64(),
            attempt: u32::try_from(number("attempt")?)?,
        },
        fingerprint: Fingerprint::parse(text("fingerprint")?)?,
        recorded_at: UNIX_EPOCH + Duration::from_millis(number("recorded_at_ms")?),
        n_benchmarks: usize::try_from(number("n_benchmarks")?)?,
    })
}
