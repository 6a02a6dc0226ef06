//! The store: runs, their fingerprints and measurements, through sqlx, in an embedded SQLite
//! file (WAL; the default) or a PostgreSQL database (for several service instances). All SQL
//! of benchgate lives in this module, written once in the dialect both engines speak (`$N`
//! parameters, `ON CONFLICT`, `RETURNING`) and run on either pool by `with_pool!`; only the
//! schema (`migrations/sqlite`, `migrations/postgres`) and how a write takes its lock differ.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::TryStreamExt as _;
use sha2::{Digest, Sha256};
use sqlx::postgres::{PgConnectOptions, PgPool};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection as _, QueryBuilder, Row, SqlitePool};

use crate::domain::{
    BenchmarkId, CommitSha, CustomMetric, Direction, Estimate, Measurement, RepositoryName, RunId,
    RunKind, Samples, Throughput,
};
use crate::domain::{NewRun, RunMeta};
use crate::error::{Error, Result};

use crate::fingerprint::{Fingerprint, HardwareProfile, to_hex};

mod bisections;

/// The branch `bisect` stores its probes' rounds under: old commits measured today, kept as
/// evidence but no point of any trend.
pub const BISECT_BRANCH: &str = "benchgate/bisect";

mod location;
mod overrides;
mod prune;
mod rows;
mod runs;
mod samples;
mod series;
mod service;
mod write;

pub use bisections::Bisection;
pub use location::Location;
pub use prune::{PrunePlan, PruneReport};

/// Runs `$body` with `$pool` bound to the store's pool, whichever engine it is: the body is
/// compiled once per engine, so each gets its own driver's types and no dynamic dispatch.
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            $crate::store::Pool::Sqlite($pool) => $body,
            $crate::store::Pool::Postgres($pool) => $body,
        }
    };
}
pub(crate) use with_pool;

/// Rows per multi-row INSERT. A store opened by one command prepares each statement anew, and
/// SQLite's parse of a VALUES list grows with it: 100 rows (2,000 parameters) prepared once and
/// run ten times for 1,000 benchmarks cost fewer instructions than 500 or 1,000 rows parsed
/// whole (callgrind: 165M against 179M per ingest, docs/speed.md), and stay well under the
/// 32,766 parameters SQLite binds.
const MEASUREMENT_ROWS_PER_INSERT: usize = 100;
const BENCHMARK_ROWS_PER_INSERT: usize = 100;
/// Runs of at least this many measurements are hashed and encoded on rayon's threads.
const PARALLEL_ENCODING_FROM: usize = 500;
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
    /// The fastest iteration (the gate's statistic); a custom metric's value.
    pub min: f64,
    /// A custom metric's unit (then the values are in it, not ns per iteration).
    pub unit: Option<String>,
    /// Whether a higher value is better (a custom metric that says so: a rate in `Hz`, …);
    /// `false` for times, where lower is better.
    pub higher_is_better: bool,
    /// A Criterion throughput benchmark's kind (`Bytes`, `Elements`, …) and its work per
    /// iteration in this run.
    pub throughput: Option<(String, u64)>,
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

/// What differs between the engines beyond their SQL types: how a write transaction takes
/// the lock that keeps concurrent writers of one repository in turn.
pub(crate) trait Engine: sqlx::Database {
    /// Begins a transaction for writing runs of `repositories`.
    fn begin_write(
        pool: &sqlx::Pool<Self>,
        repositories: &[&str],
    ) -> impl std::future::Future<Output = sqlx::Result<sqlx::Transaction<'static, Self>>> + Send;
}

impl Engine for sqlx::Sqlite {
    /// `BEGIN IMMEDIATE` takes SQLite's one write lock up front, so concurrent ingests queue
    /// instead of failing on a read-to-write upgrade.
    async fn begin_write(
        pool: &SqlitePool,
        _repositories: &[&str],
    ) -> sqlx::Result<sqlx::Transaction<'static, Self>> {
        pool.begin_with("BEGIN IMMEDIATE").await
    }
}

impl Engine for sqlx::Postgres {
    /// A transaction-scoped advisory lock per repository (taken in one order, so two writers
    /// never wait on each other): writers of one repository queue, as on SQLite, so the
    /// second ingest of a run finds the first's, whichever instance took it; writers of
    /// different repositories go side by side.
    async fn begin_write(
        pool: &PgPool,
        repositories: &[&str],
    ) -> sqlx::Result<sqlx::Transaction<'static, Self>> {
        let mut keys: Vec<i64> = repositories.iter().map(|r| lock_key(r)).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut tx = pool.begin().await?;
        for key in keys {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx)
    }
}

/// The advisory-lock key of a repository's writes: the first 8 bytes of a SHA-256.
fn lock_key(repository: &str) -> i64 {
    let digest = Sha256::digest(format!("benchgate ingest {repository}").as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_le_bytes(bytes)
}

/// The engine behind a [`Store`].
#[derive(Debug, Clone)]
pub(crate) enum Pool {
    /// An embedded SQLite file.
    Sqlite(SqlitePool),
    /// A PostgreSQL database.
    Postgres(PgPool),
}

/// The benchgate store: one SQLite file or one PostgreSQL database.
#[derive(Debug, Clone)]
pub struct Store {
    pool: Pool,
    /// Runs waiting to be written together (group commit; see `runs.rs`), shared by clones.
    writes: std::sync::Arc<runs::WriteQueue>,
    location: Location,
    /// Shown in errors: the file, or the URL without its password.
    shown: String,
}

impl Store {
    /// Opens a SQLite store that must already exist: reading commands never create one.
    pub async fn open_existing(path: &Path) -> Result<Self> {
        Self::connect_existing(&Location::Sqlite(path.to_owned())).await
    }

    /// Opens the SQLite store at `path`, creating it (and its directory) when missing, and
    /// brings its schema up to date. A write waits up to [`DEFAULT_BUSY_TIMEOUT`] for another
    /// writer.
    pub async fn open(path: &Path) -> Result<Self> {
        Self::connect(&Location::Sqlite(path.to_owned())).await
    }

    /// As [`Store::open`], waiting up to `busy_timeout` for another writer's lock (then the
    /// error [`Error::is_busy`]).
    pub async fn open_with(path: &Path, busy_timeout: Duration) -> Result<Self> {
        Self::connect_with(&Location::Sqlite(path.to_owned()), busy_timeout).await
    }

    /// Opens a store that must already exist: a SQLite file that is there, or a PostgreSQL
    /// database (whose schema is brought up to date, as the server must exist to connect).
    pub async fn connect_existing(location: &Location) -> Result<Self> {
        if let Location::Sqlite(path) = location
            && !path.is_file()
        {
            return Err(Error::NoStore {
                path: path.to_owned(),
            });
        }
        Self::connect(location).await
    }

    /// Opens the store at `location` and brings its schema up to date. A SQLite file (and its
    /// directory) is created when missing; a PostgreSQL database must exist. A write waits up
    /// to [`DEFAULT_BUSY_TIMEOUT`] for another writer.
    pub async fn connect(location: &Location) -> Result<Self> {
        Self::connect_with(location, DEFAULT_BUSY_TIMEOUT).await
    }

    /// As [`Store::connect`], waiting up to `busy_timeout` for another writer's lock (then
    /// the error [`Error::is_busy`]).
    pub async fn connect_with(location: &Location, busy_timeout: Duration) -> Result<Self> {
        let shown = location.to_string();
        let database = |source| Error::Database {
            store: shown.clone(),
            source,
        };
        let migration = |source| Error::Migration {
            store: shown.clone(),
            source,
        };
        let pool = match location {
            Location::Sqlite(path) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    create_store_dir(parent)?;
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
                    .map_err(database)?;
                sqlx::migrate!("../migrations/sqlite")
                    .run(&pool)
                    .await
                    .map_err(migration)?;
                Pool::Sqlite(pool)
            }
            Location::Postgres(url) => {
                let lock_timeout = format!("{}ms", busy_timeout.as_millis().max(1));
                let options = PgConnectOptions::from_str(url)
                    .map_err(database)?
                    .application_name("benchgate")
                    // A write waits this long for another's lock, as SQLite's busy timeout.
                    .options([("lock_timeout", lock_timeout.as_str())]);
                // One attempt first, so a wrong URL or a server that is down is an error at
                // once: the pool would retry it until its acquire timeout.
                let probe = sqlx::PgConnection::connect_with(&options)
                    .await
                    .map_err(database)?;
                probe.close().await.map_err(database)?;
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(busy_timeout.max(Duration::from_secs(1)))
                    .connect_with(options)
                    .await
                    .map_err(database)?;
                // The migrator takes PostgreSQL's advisory lock: instances starting together
                // migrate once.
                sqlx::migrate!("../migrations/postgres")
                    .run(&pool)
                    .await
                    .map_err(migration)?;
                Pool::Postgres(pool)
            }
        };
        Ok(Self {
            pool,
            writes: Default::default(),
            location: location.clone(),
            shown,
        })
    }

    /// Closes the pool (for SQLite, checkpointing the WAL).
    pub async fn close(self) {
        with_pool!(self, pool => pool.close().await)
    }

    /// Where the store is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    fn db_error(&self) -> impl Fn(sqlx::Error) -> Error + '_ {
        move |source| Error::Database {
            store: self.shown.clone(),
            source,
        }
    }
}

/// The directory benchgate keeps its own store in by default: kept out of git.
const OWN_DIRECTORY: &str = ".benchgate";

/// Creates the store's directory when missing. The default `.benchgate/` gets a `.gitignore` of
/// `*` (as pytest and ruff do for their caches), so it never shows as untracked in the user's
/// repository.
fn create_store_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let failed = |source| Error::ReadFile {
        path: dir.to_owned(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    if dir.file_name().is_some_and(|name| name == OWN_DIRECTORY) {
        std::fs::write(
            dir.join(".gitignore"),
            "# Created by benchgate: its store is not part of the repository.\n*\n",
        )
        .map_err(failed)?;
    }
    Ok(())
}
