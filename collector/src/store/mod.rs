//! The store: runs, their fingerprints and measurements in SQLite (WAL), through sqlx. All SQL of
//! benchgate lives in this module, written portably so a PostgreSQL backend can follow.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::TryStreamExt as _;
use sha2::{Digest, Sha256};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{QueryBuilder, Row, Sqlite, SqlitePool};

use crate::domain::{
    BenchmarkId, CommitSha, CustomMetric, Direction, Estimate, Measurement, RepositoryName, RunId,
    RunKind, Samples, Throughput,
};
use crate::domain::{NewRun, RunMeta};
use crate::error::{Error, Result};

use crate::fingerprint::{Fingerprint, HardwareProfile, to_hex};

mod overrides;
mod rows;
mod runs;
mod series;
mod service;

/// Rows per multi-row INSERT: well under SQLite's 32,766 bound parameters.
const MEASUREMENT_ROWS_PER_INSERT: usize = 500;
const BENCHMARK_ROWS_PER_INSERT: usize = 1000;
/// Rows SQLite's worker thread may queue ahead of the reader (sqlx's default is 50): with a
/// deep queue a large run streams without the two threads waking each other row by row.
const ROW_BUFFER: usize = 4096;

/// Per-iteration statistics the store keeps as columns, for history queries without samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredStatistic {
    /// Criterion's median estimate.
    Median,
    /// The minimum over samples of `times[i] / iters[i]`.
    Min,
}

/// What [`Store::ingest`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngestOutcome {
    /// A new run was stored.
    Created(RunId),
    /// The same run was already stored; nothing changed.
    Unchanged(RunId),
    /// A different run under the same key was replaced (only with `replace`).
    Replaced {
        /// The new run.
        id: RunId,
        /// The run that was deleted.
        previous: RunId,
    },
}

impl IngestOutcome {
    /// The id of the run that is now stored under the key.
    pub fn run_id(self) -> RunId {
        match self {
            IngestOutcome::Created(id)
            | IngestOutcome::Unchanged(id)
            | IngestOutcome::Replaced { id, .. } => id,
        }
    }
}

/// A stored run, without its measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The run's id.
    pub id: RunId,
    /// What was measured and why.
    pub meta: RunMeta,
    /// The machine's fingerprint.
    pub fingerprint: Fingerprint,
    /// When the results were recorded.
    pub recorded_at: SystemTime,
    /// Number of benchmarks measured.
    pub n_benchmarks: usize,
}

/// One measurement with its run and machine, for exports (see [`Store::for_each_export_row`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportRow {
    /// The run id.
    pub run: i64,
    /// `owner/name`.
    pub repository: String,
    /// The commit.
    pub commit: String,
    /// The branch, if known.
    pub branch: Option<String>,
    /// `local`, `push`, `pr` or `nightly`.
    pub kind: String,
    /// The pull request, if any.
    pub pr: Option<i64>,
    /// The attempt.
    pub attempt: i64,
    /// When the run was recorded.
    pub recorded_at: SystemTime,
    /// The fingerprint hash.
    pub fingerprint: String,
    /// CPU brand.
    pub cpu_brand: String,
    /// Logical cores.
    pub logical_cores: i64,
    /// Memory, GiB.
    pub memory_gib: i64,
    /// OS name and major version.
    pub os: String,
    /// Runner image, if any.
    pub runner_image: Option<String>,
    /// rustc version.
    pub rustc_version: String,
    /// Host triple.
    pub host_triple: String,
    /// The benchmark id.
    pub benchmark: String,
    /// Criterion's throughput kind, if declared.
    pub throughput_kind: Option<String>,
    /// Its amount per iteration.
    pub throughput_amount: Option<i64>,
    /// Mean ns per iteration: point, lower, upper.
    pub mean: [f64; 3],
    /// Median ns per iteration: point, lower, upper.
    pub median: [f64; 3],
    /// Minimum ns per iteration, when kept.
    pub min: Option<f64>,
    /// Samples taken.
    pub n_samples: i64,
    /// A custom metric's unit and direction (`lower`/`higher`); `None` for ns per iteration.
    pub metric: Option<(String, String)>,
}

/// One measurement of a trend (see [`Store::trend_rows`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TrendRow {
    /// `owner/name`.
    pub repository: String,
    /// The fingerprint hash.
    pub fingerprint: String,
    /// The benchmark id.
    pub benchmark: String,
    /// The run's commit.
    pub commit: String,
    /// When the run was recorded, ms since the epoch.
    pub recorded_at_ms: u64,
    /// Median ns per iteration.
    pub median: f64,
    /// Its interval's lower bound.
    pub lower: f64,
    /// Its interval's upper bound.
    pub upper: f64,
    /// A custom metric's unit (then the values are in it, not ns per iteration).
    pub unit: Option<String>,
}

/// One run's value of one benchmark, for trends.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesPoint {
    /// The run.
    pub run: RunSummary,
    /// Median ns per iteration.
    pub median: f64,
    /// Lower bound of the median's interval.
    pub median_lower: f64,
    /// Upper bound of the median's interval.
    pub median_upper: f64,
    /// Minimum ns per iteration (absent for runs stored before it was kept).
    pub min: Option<f64>,
}

/// A maintainer's override of the gate for one head commit of a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateOverride {
    /// The repository.
    pub repository: RepositoryName,
    /// The pull request.
    pub pr_number: u64,
    /// The head commit the override applies to.
    pub head_sha: CommitSha,
    /// Who overrode (GitHub login).
    pub login: String,
    /// Why.
    pub reason: String,
    /// The `/benchgate override` comment's id.
    pub comment_id: u64,
    /// When.
    pub created_at: SystemTime,
}

/// A stored run with its machine and every measurement.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The run.
    pub summary: RunSummary,
    /// The machine, as recorded for this run.
    pub profile: HardwareProfile,
    /// Every measurement, sorted by benchmark id.
    pub measurements: Vec<Measurement>,
}

/// An upload token as `token list` shows it (never the token: only its hash is stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    /// The token's id, for `token revoke`.
    pub id: i64,
    /// The repository it may upload to.
    pub repository: String,
    /// When it was created.
    pub created_at: SystemTime,
    /// When it was revoked, if it was.
    pub revoked_at: Option<SystemTime>,
}

/// A GitHub webhook delivery waiting for the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// GitHub's delivery id (`X-GitHub-Delivery`).
    pub id: String,
    /// The event name (`X-GitHub-Event`).
    pub event: String,
    /// The raw body, as verified.
    pub payload: Vec<u8>,
}

/// Where a delivery stands: `pending`, `done` or `failed`, and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryState {
    /// `pending`, `done` or `failed`.
    pub state: String,
    /// The worker's outcome, once worked on.
    pub outcome: Option<String>,
}

/// A head commit a maintainer overrode the gate on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OverriddenCommit {
    /// The repository, OWNER/NAME.
    pub repository: String,
    /// The overridden head commit.
    pub head_sha: String,
}

/// How long a write waits for another process's lock on the store by default.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The benchgate store: one SQLite file.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
}

impl Store {
    /// Opens a store that must already exist: reading commands never create one.
    pub async fn open_existing(path: &Path) -> Result<Self> {
        if !path.is_file() {
            return Err(Error::NoStore {
                path: path.to_owned(),
            });
        }
        Self::open(path).await
    }

    /// Opens the store at `path`, creating it (and its directory) when missing, and brings
    /// its schema up to date. A write waits up to [`DEFAULT_BUSY_TIMEOUT`] for another writer.
    pub async fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, DEFAULT_BUSY_TIMEOUT).await
    }

    /// As [`Store::open`], waiting up to `busy_timeout` for another writer's lock (then the
    /// error [`Error::is_busy`]).
    pub async fn open_with(path: &Path, busy_timeout: Duration) -> Result<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| Error::ReadFile {
                path: parent.to_owned(),
                source,
            })?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
            .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(busy_timeout)
            .row_buffer_size(ROW_BUFFER);
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|source| Error::Database {
                path: path.to_owned(),
                source,
            })?;
        sqlx::migrate!("../migrations")
            .run(&pool)
            .await
            .map_err(|source| Error::Migration {
                path: path.to_owned(),
                source,
            })?;
        Ok(Self {
            pool,
            path: path.to_owned(),
        })
    }

    /// Closes the pool, checkpointing the WAL.
    pub async fn close(self) {
        self.pool.close().await;
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn db_error(&self) -> impl Fn(sqlx::Error) -> Error + '_ {
        move |source| Error::Database {
            path: self.path.clone(),
            source,
        }
    }
}
