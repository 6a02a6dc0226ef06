//! The service's read-side JSON: what `GET /api/v1/repos/{owner}/{repo}/...` answers and what
//! `gate --collector` reads back, as one set of types both sides use. Field order is the order
//! on the wire; every field is checked on the way in, and errors name the field.

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{DocumentError, RunDocument, epoch_ms, invalid, parse_json};
use crate::domain::{CommitSha, RepositoryName, RunId, RunKind, RunMeta};
use crate::fingerprint::Fingerprint;
use crate::store::{RunSummary, SeriesPoint};

/// One run's summary: an entry of `GET .../runs` and of `benchgate runs --format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummaryJson {
    /// The run's id.
    pub id: i64,
    /// `owner/name`.
    pub repository: String,
    /// The full commit SHA.
    pub commit: String,
    /// The branch, if known.
    pub branch: Option<String>,
    /// `pr`, `main` or `nightly`.
    pub kind: String,
    /// The pull request's number, for a `pr` run.
    pub pr: Option<u64>,
    /// The attempt (1 unless the same commit was measured again).
    pub attempt: u32,
    /// The machine's fingerprint hash.
    pub fingerprint: String,
    /// When the results were recorded, RFC 3339 to the second.
    pub recorded_at: String,
    /// The number of benchmarks measured.
    pub n_benchmarks: usize,
    /// When the results were recorded, in ms since the epoch (the service's answers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at_ms: Option<u64>,
}

impl RunSummaryJson {
    /// `run`'s summary, without `recorded_at_ms` (the CLI's shape).
    pub fn new(run: &RunSummary) -> Self {
        Self {
            id: run.id.get(),
            repository: run.meta.repository.to_string(),
            commit: run.meta.commit.to_string(),
            branch: run.meta.branch.clone(),
            kind: run.meta.kind.as_str().to_owned(),
            pr: run.meta.pr_number,
            attempt: run.meta.attempt,
            fingerprint: run.fingerprint.to_string(),
            recorded_at: humantime::format_rfc3339_seconds(run.recorded_at).to_string(),
            n_benchmarks: run.n_benchmarks,
            recorded_at_ms: None,
        }
    }

    /// `run`'s summary with `recorded_at_ms` (the service's shape).
    pub fn with_ms(run: &RunSummary) -> Self {
        Self {
            recorded_at_ms: Some(epoch_ms(run.recorded_at)),
            ..Self::new(run)
        }
    }

    /// The summary, every field checked; the time comes from `recorded_at_ms` when present.
    pub fn into_summary(self) -> Result<RunSummary, DocumentError> {
        let recorded_at = match self.recorded_at_ms {
            Some(ms) => UNIX_EPOCH + Duration::from_millis(ms),
            None => humantime::parse_rfc3339(&self.recorded_at)
                .map_err(|e| invalid("recorded_at", e.to_string()))?,
        };
        if self.id <= 0 {
            return Err(invalid("id", format!("{} is not a run id", self.id)));
        }
        let id = RunId::from_row(self.id);
        Ok(RunSummary {
            id,
            meta: RunMeta {
                repository: RepositoryName::parse(&self.repository)
                    .map_err(|e| invalid("repository", e.to_string()))?,
                commit: CommitSha::parse(&self.commit)
                    .map_err(|e| invalid("commit", e.to_string()))?,
                branch: self.branch,
                kind: self
                    .kind
                    .parse::<RunKind>()
                    .map_err(|e| invalid("kind", e.to_string()))?,
                pr_number: self.pr,
                attempt: self.attempt,
            },
            fingerprint: Fingerprint::parse(&self.fingerprint)
                .map_err(|e| invalid("fingerprint", e.to_string()))?,
            recorded_at,
            n_benchmarks: self.n_benchmarks,
        })
    }
}

/// `POST /api/v1/runs`' answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCreatedJson {
    /// The run's id on the service.
    pub id: i64,
    /// `created` (201) or `unchanged` (200: the same run was stored before).
    pub status: String,
}

/// `GET .../runs/{id}`: the run document, samples and all, followed by its id.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredRunJson {
    /// The run.
    #[serde(flatten)]
    pub run: RunDocument,
    /// Its id on the service.
    pub id: i64,
}

/// `GET .../series`: one benchmark's value per run, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesJson {
    /// `owner/name`.
    pub repository: String,
    /// The machine's fingerprint hash.
    pub fingerprint: String,
    /// The benchmark's id.
    pub benchmark: String,
    /// One point per run that measured it.
    pub points: Vec<SeriesPointJson>,
}

/// A point of [`SeriesJson`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPointJson {
    /// The run's id.
    pub run: i64,
    /// Its commit.
    pub commit: String,
    /// Its branch, if known.
    pub branch: Option<String>,
    /// Its kind.
    pub kind: String,
    /// When it was recorded, in ms since the epoch.
    pub recorded_at_ms: u64,
    /// Median ns per iteration (or the custom metric's median).
    pub median: f64,
    /// Lower bound of the median's interval.
    pub median_lower: f64,
    /// Upper bound of the median's interval.
    pub median_upper: f64,
    /// The fastest sample's ns per iteration, for runs that kept it.
    pub min: Option<f64>,
}

impl SeriesPointJson {
    /// `point` on the wire.
    pub fn new(point: &SeriesPoint) -> Self {
        Self {
            run: point.run.id.get(),
            commit: point.run.meta.commit.to_string(),
            branch: point.run.meta.branch.clone(),
            kind: point.run.meta.kind.as_str().to_owned(),
            recorded_at_ms: epoch_ms(point.run.recorded_at),
            median: point.median,
            median_lower: point.median_lower,
            median_upper: point.median_upper,
            min: point.min,
        }
    }
}

/// `GET .../history`: each benchmark's stored statistic over the asked-for runs, in their order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryJson {
    /// Benchmark id → one value per run that measured it.
    pub series: BTreeMap<String, Vec<f64>>,
}

/// Parses one of these answers, naming the field at fault (`[3].commit`).
pub fn from_json<T: DeserializeOwned>(text: &[u8]) -> Result<T, DocumentError> {
    parse_json(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]
    use super::*;

    fn summary() -> RunSummary {
        RunSummary {
            id: RunId::parse("42").expect("id"),
            meta: RunMeta {
                repository: RepositoryName::parse("acme/widgets").expect("repository"),
                commit: CommitSha::parse(&"ab".repeat(20)).expect("commit"),
                branch: Some("main".to_owned()),
                kind: RunKind::Pr,
                pr_number: Some(7),
                attempt: 2,
            },
            fingerprint: Fingerprint::parse(&"c".repeat(64)).expect("fingerprint"),
            recorded_at: UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
            n_benchmarks: 3,
        }
    }

    #[test]
    fn a_summary_read_back_from_the_service_is_the_stored_one_to_the_millisecond() {
        let text = serde_json::to_vec(&vec![RunSummaryJson::with_ms(&summary())]).expect("json");
        let back: Vec<RunSummaryJson> = from_json(&text).expect("parses");
        let back = back[0].clone().into_summary().expect("valid");
        assert_eq!(back.id, summary().id);
        assert_eq!(back.meta, summary().meta);
        assert_eq!(back.fingerprint, summary().fingerprint);
        assert_eq!(back.recorded_at, summary().recorded_at);
        assert_eq!(back.n_benchmarks, 3);
    }

    #[test]
    fn the_cli_shape_has_no_milliseconds_and_keeps_its_key_order() {
        let value = serde_json::to_value(RunSummaryJson::new(&summary())).expect("json");
        let keys: Vec<&str> = value
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "id",
                "repository",
                "commit",
                "branch",
                "kind",
                "pr",
                "attempt",
                "fingerprint",
                "recorded_at",
                "n_benchmarks"
            ]
        );
        assert_eq!(value["recorded_at"], "2023-11-14T22:13:20Z");
    }

    #[test]
    fn a_bad_answer_names_the_field_at_fault() {
        let mut entry = serde_json::to_value(RunSummaryJson::with_ms(&summary())).expect("json");
        entry["attempt"] = serde_json::json!("two");
        let text = serde_json::to_vec(&vec![entry.clone()]).expect("json");
        let error = from_json::<Vec<RunSummaryJson>>(&text).expect_err("a string attempt");
        assert_eq!(error.field, "[0].attempt");

        entry["attempt"] = serde_json::json!(2);
        entry["commit"] = serde_json::json!("not-a-sha");
        let parsed: RunSummaryJson = serde_json::from_value(entry).expect("shape is fine");
        let error = parsed.clone().into_summary().expect_err("a bad commit");
        assert_eq!(error.field, "commit");

        let zero = RunSummaryJson {
            id: 0,
            ..RunSummaryJson::new(&summary())
        };
        assert_eq!(zero.into_summary().expect_err("id 0").field, "id");

        let error = from_json::<HistoryJson>(br#"{"series": {"a": [1.0, "x"]}}"#)
            .expect_err("a string in a series");
        assert_eq!(error.field, "series.a[1]");
    }
}
