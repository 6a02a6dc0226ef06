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
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, HardwareProfile, to_hex};

/// Rows per multi-row INSERT: well under SQLite's 32,766 bound parameters.
const MEASUREMENT_ROWS_PER_INSERT: usize = 500;
const BENCHMARK_ROWS_PER_INSERT: usize = 1000;
/// Rows SQLite's worker thread may queue ahead of the reader (sqlx's default is 50): with a
/// deep queue a large run streams without the two threads waking each other row by row.
const ROW_BUFFER: usize = 4096;

/// What a run measured and why: with the fingerprint, (repository, commit, kind, attempt) form
/// the run's key; branch and pull request describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMeta {
    /// The repository measured.
    pub repository: RepositoryName,
    /// The commit measured.
    pub commit: CommitSha,
    /// The branch, when known.
    pub branch: Option<String>,
    /// Why the run was made.
    pub kind: RunKind,
    /// The pull request, for `pr` runs.
    pub pr_number: Option<u64>,
    /// 1 for the first run under this key; CI re-runs count up.
    pub attempt: u32,
}

/// Per-iteration statistics the store keeps as columns, for history queries without samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredStatistic {
    /// Criterion's median estimate.
    Median,
    /// The minimum over samples of `times[i] / iters[i]`.
    Min,
}

/// A run to store: what was measured, on what machine, and its results.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// What was measured and why.
    pub meta: RunMeta,
    /// The machine.
    pub profile: HardwareProfile,
    /// When the results were recorded.
    pub recorded_at: SystemTime,
    /// One measurement per benchmark, ids unique.
    pub measurements: Vec<Measurement>,
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
    /// its schema up to date.
    pub async fn open(path: &Path) -> Result<Self> {
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
            .busy_timeout(Duration::from_secs(30))
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

    /// Stores a run in one transaction. The same run under the same key again stores nothing;
    /// a different run under the same key is [`Error::RunConflict`] unless `replace`, which
    /// swaps it atomically.
    pub async fn ingest(&self, run: &NewRun, replace: bool) -> Result<IngestOutcome> {
        let db = self.db_error();
        let content_hash = content_hash(run);
        let fingerprint = run.profile.fingerprint();
        let meta = &run.meta;
        let pr_number = meta.pr_number.map(to_i64).transpose()?;

        // IMMEDIATE takes the write lock up front, so concurrent ingests queue instead of failing
        // on a read-to-write upgrade.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await.map_err(&db)?;

        sqlx::query("INSERT INTO repositories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
            .bind(meta.repository.as_str())
            .execute(&mut *tx)
            .await
            .map_err(&db)?;
        let repository_id: i64 = sqlx::query_scalar("SELECT id FROM repositories WHERE name = $1")
            .bind(meta.repository.as_str())
            .fetch_one(&mut *tx)
            .await
            .map_err(&db)?;

        let profile = &run.profile;
        sqlx::query(
            "INSERT INTO fingerprints (hash, cpu_arch, cpu_vendor, cpu_brand, physical_cores, logical_cores, \
             memory_gib, cpu_features, os_name, os_major_version, runner_image, runner_image_version, \
             rustc_version, host_triple) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (hash) DO NOTHING",
        )
        .bind(fingerprint.as_str())
        .bind(&profile.cpu_arch)
        .bind(&profile.cpu_vendor)
        .bind(&profile.cpu_brand)
        .bind(i64::from(profile.physical_cores))
        .bind(i64::from(profile.logical_cores))
        .bind(to_i64(profile.memory_gib)?)
        .bind(profile.cpu_features.join(","))
        .bind(&profile.os_name)
        .bind(&profile.os_major_version)
        .bind(&profile.runner_image)
        .bind(&profile.runner_image_version)
        .bind(&profile.rustc_version)
        .bind(&profile.host_triple)
        .execute(&mut *tx)
        .await
        .map_err(&db)?;
        let fingerprint_id: i64 = sqlx::query_scalar("SELECT id FROM fingerprints WHERE hash = $1")
            .bind(fingerprint.as_str())
            .fetch_one(&mut *tx)
            .await
            .map_err(&db)?;

        let existing = sqlx::query(
            "SELECT id, content_hash FROM runs WHERE repository_id = $1 AND commit_sha = $2 \
             AND fingerprint_id = $3 AND kind = $4 AND attempt = $5",
        )
        .bind(repository_id)
        .bind(meta.commit.as_str())
        .bind(fingerprint_id)
        .bind(meta.kind.as_str())
        .bind(i64::from(meta.attempt))
        .fetch_optional(&mut *tx)
        .await
        .map_err(&db)?;
        let mut previous = None;
        if let Some(row) = existing {
            let existing_id: i64 = row.try_get("id").map_err(&db)?;
            let existing_hash: String = row.try_get("content_hash").map_err(&db)?;
            if existing_hash == content_hash {
                tx.rollback().await.map_err(&db)?;
                return Ok(IngestOutcome::Unchanged(RunId::from_row(existing_id)));
            }
            if !replace {
                tx.rollback().await.map_err(&db)?;
                return Err(Error::RunConflict {
                    existing: existing_id,
                    repository: meta.repository.to_string(),
                    commit: meta.commit.to_string(),
                    kind: meta.kind.to_string(),
                    attempt: meta.attempt,
                });
            }
            sqlx::query("DELETE FROM measurements WHERE run_id = $1")
                .bind(existing_id)
                .execute(&mut *tx)
                .await
                .map_err(&db)?;
            sqlx::query("DELETE FROM runs WHERE id = $1")
                .bind(existing_id)
                .execute(&mut *tx)
                .await
                .map_err(&db)?;
            previous = Some(RunId::from_row(existing_id));
        }

        let run_id: i64 = sqlx::query_scalar(
            "INSERT INTO runs (repository_id, commit_sha, fingerprint_id, kind, attempt, branch, pr_number, \
             recorded_at_ms, content_hash, n_benchmarks, hostname, cpu_frequency_mhz, kernel_version, os_version) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id",
        )
        .bind(repository_id)
        .bind(meta.commit.as_str())
        .bind(fingerprint_id)
        .bind(meta.kind.as_str())
        .bind(i64::from(meta.attempt))
        .bind(&meta.branch)
        .bind(pr_number)
        .bind(epoch_ms(run.recorded_at))
        .bind(&content_hash)
        .bind(to_i64(run.measurements.len() as u64)?)
        .bind(&profile.hostname)
        .bind(profile.cpu_frequency_mhz.map(to_i64).transpose()?)
        .bind(&profile.kernel_version)
        .bind(&profile.os_version)
        .fetch_one(&mut *tx)
        .await
        .map_err(&db)?;

        for chunk in run.measurements.chunks(BENCHMARK_ROWS_PER_INSERT) {
            let mut insert =
                QueryBuilder::<Sqlite>::new("INSERT INTO benchmarks (repository_id, name) ");
            insert.push_values(chunk, |mut row, measurement| {
                row.push_bind(repository_id)
                    .push_bind(measurement.id.as_str());
            });
            insert.push(" ON CONFLICT (repository_id, name) DO NOTHING");
            insert.build().execute(&mut *tx).await.map_err(&db)?;
        }
        let benchmark_ids: HashMap<String, i64> =
            sqlx::query("SELECT id, name FROM benchmarks WHERE repository_id = $1")
                .bind(repository_id)
                .fetch_all(&mut *tx)
                .await
                .map_err(&db)?
                .into_iter()
                .map(|row| Ok((row.try_get("name")?, row.try_get("id")?)))
                .collect::<std::result::Result<_, sqlx::Error>>()
                .map_err(&db)?;

        let rows = run
            .measurements
            .iter()
            .map(|m| MeasurementRow::new(m, &benchmark_ids))
            .collect::<Result<Vec<_>>>()?;
        for chunk in rows.chunks(MEASUREMENT_ROWS_PER_INSERT) {
            let mut insert = QueryBuilder::<Sqlite>::new(
                "INSERT INTO measurements (run_id, benchmark_id, throughput_kind, throughput_amount, throughput_bytes, \
                 mean_point, mean_lower, mean_upper, median_point, median_lower, median_upper, confidence_level, \
                 sampling_mode, n_samples, sample_iters, sample_times, min_point, unit, direction) ",
            );
            insert.push_values(chunk, |mut row, m| {
                row.push_bind(run_id)
                    .push_bind(m.benchmark_id)
                    .push_bind(m.throughput_kind)
                    .push_bind(m.throughput_amount)
                    .push_bind(m.throughput_bytes)
                    .push_bind(m.measurement.mean.point)
                    .push_bind(m.measurement.mean.lower)
                    .push_bind(m.measurement.mean.upper)
                    .push_bind(m.measurement.median.point)
                    .push_bind(m.measurement.median.lower)
                    .push_bind(m.measurement.median.upper)
                    .push_bind(m.measurement.mean.confidence_level)
                    .push_bind(m.measurement.sampling_mode.as_deref())
                    .push_bind(m.n_samples)
                    .push_bind(encode_f64s(m.measurement.samples.iters()))
                    .push_bind(encode_f64s(m.measurement.samples.times()))
                    .push_bind(m.min_point)
                    .push_bind(m.measurement.custom.as_ref().map(|c| c.unit.as_str()))
                    .push_bind(m.measurement.custom.as_ref().map(|c| c.direction.as_str()));
            });
            insert.build().execute(&mut *tx).await.map_err(&db)?;
        }

        sqlx::query("UPDATE runs SET statistics = $1 WHERE id = $2")
            .bind(encode_run_statistics(&rows))
            .bind(run_id)
            .execute(&mut *tx)
            .await
            .map_err(&db)?;

        tx.commit().await.map_err(&db)?;
        let id = RunId::from_row(run_id);
        Ok(match previous {
            Some(previous) => IngestOutcome::Replaced { id, previous },
            None => IngestOutcome::Created(id),
        })
    }

    /// Every stored run, oldest first.
    pub async fn list_runs(&self) -> Result<Vec<RunSummary>> {
        let rows = sqlx::query(RUN_SUMMARY_SELECT_ALL)
            .fetch_all(&self.pool)
            .await
            .map_err(self.db_error())?;
        rows.iter().map(run_summary_from_row).collect()
    }

    /// Every run of `repository` on the machine `fingerprint`, oldest first.
    pub async fn runs_on_fingerprint(
        &self,
        repository: &RepositoryName,
        fingerprint: &Fingerprint,
    ) -> Result<Vec<RunSummary>> {
        let rows = sqlx::query(RUN_SUMMARY_SELECT_ON_FINGERPRINT)
            .bind(repository.as_str())
            .bind(fingerprint.as_str())
            .fetch_all(&self.pool)
            .await
            .map_err(self.db_error())?;
        rows.iter().map(run_summary_from_row).collect()
    }

    /// A per-iteration statistic of each benchmark over `runs`: per benchmark id, its values in
    /// the order of `runs` (runs without the benchmark or the statistic are skipped).
    pub async fn statistic_series(
        &self,
        runs: &[RunId],
        statistic: StoredStatistic,
    ) -> Result<HashMap<String, Vec<f64>>> {
        let column = match statistic {
            StoredStatistic::Median => "m.median_point",
            StoredStatistic::Min => "m.min_point",
        };
        // Values per run, in the order of `runs`: no sort of the (runs × benchmarks) entries.
        let position: HashMap<RunId, usize> =
            runs.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let mut per_run: Vec<Vec<(i64, f64)>> = vec![Vec::new(); runs.len()];
        // One packed row per run; runs stored before it existed are read row by row.
        let mut unpacked: Vec<RunId> = Vec::new();
        for chunk in runs.chunks(500) {
            let packed: Vec<(i64, Option<Vec<u8>>)> =
                in_runs("SELECT id, statistics FROM runs WHERE id IN (", chunk)
                    .build_query_as()
                    .fetch_all(&self.pool)
                    .await
                    .map_err(self.db_error())?;
            for (run, blob) in packed {
                let run = RunId::from_row(run);
                let Some(&slot) = position.get(&run) else {
                    continue;
                };
                match blob.as_deref().and_then(decode_run_statistics) {
                    Some(entries) => {
                        per_run[slot] = entries
                            .into_iter()
                            .map(|(benchmark, median, min)| {
                                let value = match statistic {
                                    StoredStatistic::Min => min,
                                    StoredStatistic::Median => median,
                                };
                                (benchmark, value)
                            })
                            .collect();
                    }
                    None => unpacked.push(run),
                }
            }
        }
        for chunk in unpacked.chunks(500) {
            let sql = format!(
                "SELECT m.run_id, m.benchmark_id, {column} AS value FROM measurements m \
                 WHERE {column} IS NOT NULL AND m.run_id IN ("
            );
            let rows: Vec<(i64, i64, f64)> = in_runs(sql, chunk)
                .build_query_as()
                .fetch_all(&self.pool)
                .await
                .map_err(self.db_error())?;
            for (run, benchmark, value) in rows {
                if let Some(&slot) = position.get(&RunId::from_row(run)) {
                    per_run[slot].push((benchmark, value));
                }
            }
        }
        let mut names: HashMap<i64, String> = HashMap::new();
        for chunk in runs.chunks(500) {
            // The repositories' benchmarks, without joining every run to every benchmark.
            let sql = "SELECT id, name FROM benchmarks WHERE repository_id IN \
                       (SELECT repository_id FROM runs WHERE id IN (";
            let mut query = in_runs(sql, chunk);
            query.push(")");
            let rows: Vec<(i64, String)> = query
                .build_query_as()
                .fetch_all(&self.pool)
                .await
                .map_err(self.db_error())?;
            names.extend(rows);
        }
        let mut series: HashMap<i64, Vec<f64>> = HashMap::with_capacity(names.len());
        for (benchmark, value) in per_run.into_iter().flatten() {
            series
                .entry(benchmark)
                .or_insert_with(|| Vec::with_capacity(runs.len()))
                .push(value);
        }
        series
            .into_iter()
            .map(|(benchmark, values)| {
                let name = names.remove(&benchmark).ok_or_else(|| Error::CorruptRow {
                    table: "measurements",
                    reason: format!("benchmark {benchmark} has no name"),
                })?;
                Ok((name, values))
            })
            .collect()
    }

    /// The highest attempt stored under (repository, commit, fingerprint, kind), 0 if none.
    pub async fn last_attempt(
        &self,
        repository: &RepositoryName,
        commit: &CommitSha,
        fingerprint: &Fingerprint,
        kind: RunKind,
    ) -> Result<u32> {
        let attempt: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(r.attempt) FROM runs r JOIN repositories repo ON repo.id = r.repository_id \
             JOIN fingerprints f ON f.id = r.fingerprint_id \
             WHERE repo.name = $1 AND r.commit_sha = $2 AND f.hash = $3 AND r.kind = $4",
        )
        .bind(repository.as_str())
        .bind(commit.as_str())
        .bind(fingerprint.as_str())
        .bind(kind.as_str())
        .fetch_one(&self.pool)
        .await
        .map_err(self.db_error())?;
        Ok(attempt.and_then(|a| u32::try_from(a).ok()).unwrap_or(0))
    }

    /// Records a maintainer's override; `false` if this comment's override was already stored.
    pub async fn record_override(&self, record: &GateOverride) -> Result<bool> {
        let db = self.db_error();
        let mut tx = self.pool.begin().await.map_err(&db)?;
        sqlx::query("INSERT INTO repositories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
            .bind(record.repository.as_str())
            .execute(&mut *tx)
            .await
            .map_err(&db)?;
        let created_at_ms = record
            .created_at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let inserted = sqlx::query(
            "INSERT INTO overrides (repository_id, pr_number, head_sha, login, reason, comment_id, created_at_ms) \
             SELECT id, $2, $3, $4, $5, $6, $7 FROM repositories WHERE name = $1 \
             ON CONFLICT (comment_id) DO NOTHING",
        )
        .bind(record.repository.as_str())
        .bind(to_i64(record.pr_number)?)
        .bind(record.head_sha.as_str())
        .bind(&record.login)
        .bind(&record.reason)
        .bind(to_i64(record.comment_id)?)
        .bind(created_at_ms)
        .execute(&mut *tx)
        .await
        .map_err(&db)?
        .rows_affected();
        tx.commit().await.map_err(&db)?;
        Ok(inserted == 1)
    }

    /// The newest override of `repository`'s pull request `pr_number` at `head_sha`, if any.
    pub async fn override_for(
        &self,
        repository: &RepositoryName,
        pr_number: u64,
        head_sha: &CommitSha,
    ) -> Result<Option<GateOverride>> {
        let row: Option<(String, String, i64, i64)> = sqlx::query_as(
            "SELECT o.login, o.reason, o.comment_id, o.created_at_ms FROM overrides o \
             JOIN repositories repo ON repo.id = o.repository_id \
             WHERE repo.name = $1 AND o.pr_number = $2 AND o.head_sha = $3 ORDER BY o.id DESC LIMIT 1",
        )
        .bind(repository.as_str())
        .bind(to_i64(pr_number)?)
        .bind(head_sha.as_str())
        .fetch_optional(&self.pool)
        .await
        .map_err(self.db_error())?;
        Ok(
            row.map(|(login, reason, comment_id, created_at_ms)| GateOverride {
                repository: repository.clone(),
                pr_number,
                head_sha: head_sha.clone(),
                login,
                reason,
                comment_id: u64::try_from(comment_id).unwrap_or(0),
                created_at: UNIX_EPOCH
                    + Duration::from_millis(u64::try_from(created_at_ms).unwrap_or(0)),
            }),
        )
    }

    /// Stores an upload token's hash for `repository`; returns the token's id.
    pub async fn create_token(&self, repository: &RepositoryName, hash: &str) -> Result<i64> {
        let db = self.db_error();
        let mut tx = self.pool.begin().await.map_err(&db)?;
        sqlx::query("INSERT INTO repositories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
            .bind(repository.as_str())
            .execute(&mut *tx)
            .await
            .map_err(&db)?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO tokens (repository_id, hash, created_at_ms) \
             SELECT id, $2, $3 FROM repositories WHERE name = $1 RETURNING id",
        )
        .bind(repository.as_str())
        .bind(hash)
        .bind(now_ms())
        .fetch_one(&mut *tx)
        .await
        .map_err(&db)?;
        tx.commit().await.map_err(&db)?;
        Ok(id)
    }

    /// The repository a live (not revoked) token hash belongs to.
    pub async fn token_repository(&self, hash: &str) -> Result<Option<RepositoryName>> {
        let name: Option<String> = sqlx::query_scalar(
            "SELECT repo.name FROM tokens t JOIN repositories repo ON repo.id = t.repository_id \
             WHERE t.hash = $1 AND t.revoked_at_ms IS NULL",
        )
        .bind(hash)
        .fetch_optional(&self.pool)
        .await
        .map_err(self.db_error())?;
        name.map(|n| RepositoryName::parse(&n)).transpose()
    }

    /// Revokes token `id`; `false` if there is no such live token.
    pub async fn revoke_token(&self, id: i64) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE tokens SET revoked_at_ms = $2 WHERE id = $1 AND revoked_at_ms IS NULL",
        )
        .bind(id)
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map_err(self.db_error())?;
        Ok(done.rows_affected() == 1)
    }

    /// Every token: (id, repository, created, revoked).
    pub async fn list_tokens(&self) -> Result<Vec<(i64, String, SystemTime, Option<SystemTime>)>> {
        let rows: Vec<(i64, String, i64, Option<i64>)> = sqlx::query_as(
            "SELECT t.id, repo.name, t.created_at_ms, t.revoked_at_ms FROM tokens t \
             JOIN repositories repo ON repo.id = t.repository_id ORDER BY t.id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(self.db_error())?;
        Ok(rows
            .into_iter()
            .map(|(id, repo, created, revoked)| (id, repo, from_ms(created), revoked.map(from_ms)))
            .collect())
    }

    /// Records a webhook delivery as pending; `false` if this delivery id was seen before.
    pub async fn record_delivery(
        &self,
        delivery_id: &str,
        event: &str,
        payload: &[u8],
    ) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO webhook_deliveries (delivery_id, event, payload, received_at_ms, state) \
             VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT (delivery_id) DO NOTHING",
        )
        .bind(delivery_id)
        .bind(event)
        .bind(payload)
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map_err(self.db_error())?;
        Ok(done.rows_affected() == 1)
    }

    /// Deliveries not yet worked on, oldest first: (delivery id, event, payload).
    pub async fn pending_deliveries(&self) -> Result<Vec<(String, String, Vec<u8>)>> {
        sqlx::query_as(
            "SELECT delivery_id, event, payload FROM webhook_deliveries \
             WHERE state = 'pending' ORDER BY received_at_ms, delivery_id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(self.db_error())
    }

    /// Marks a delivery worked on: `failed` when `ok` is false; `outcome` says what happened.
    pub async fn finish_delivery(&self, delivery_id: &str, ok: bool, outcome: &str) -> Result<()> {
        sqlx::query(
            "UPDATE webhook_deliveries SET state = $2, outcome = $3 WHERE delivery_id = $1",
        )
        .bind(delivery_id)
        .bind(if ok { "done" } else { "failed" })
        .bind(outcome)
        .execute(&self.pool)
        .await
        .map_err(self.db_error())?;
        Ok(())
    }

    /// A delivery's state and outcome.
    pub async fn delivery(&self, delivery_id: &str) -> Result<Option<(String, Option<String>)>> {
        sqlx::query_as("SELECT state, outcome FROM webhook_deliveries WHERE delivery_id = $1")
            .bind(delivery_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.db_error())
    }

    /// One benchmark's median and minimum per run of `repository` on `fingerprint`, oldest
    /// first: (run, median ns, minimum ns, median interval).
    pub async fn benchmark_series(
        &self,
        repository: &RepositoryName,
        fingerprint: &Fingerprint,
        benchmark: &str,
    ) -> Result<Vec<SeriesPoint>> {
        let rows = sqlx::query(BENCHMARK_SERIES_SELECT)
            .bind(repository.as_str())
            .bind(fingerprint.as_str())
            .bind(benchmark)
            .fetch_all(&self.pool)
            .await
            .map_err(self.db_error())?;
        rows.iter()
            .map(|row| {
                let get_error = |e: sqlx::Error| Error::CorruptRow {
                    table: "measurements",
                    reason: e.to_string(),
                };
                Ok(SeriesPoint {
                    run: run_summary_from_row(row)?,
                    median: row.try_get("median_point").map_err(get_error)?,
                    median_lower: row.try_get("median_lower").map_err(get_error)?,
                    median_upper: row.try_get("median_upper").map_err(get_error)?,
                    min: row.try_get("min_point").map_err(get_error)?,
                })
            })
            .collect()
    }

    /// Every measurement of every run that is not a pull request's, for trends: (repository,
    /// fingerprint, benchmark, commit, recorded at ms, median, lower, upper), oldest run first.
    pub async fn trend_rows(&self) -> Result<Vec<TrendRow>> {
        let rows = sqlx::query(
            "SELECT repo.name, f.hash, b.name, r.commit_sha, r.recorded_at_ms, \
             m.median_point, m.median_lower, m.median_upper, m.unit \
             FROM measurements m JOIN runs r ON r.id = m.run_id \
             JOIN repositories repo ON repo.id = r.repository_id \
             JOIN fingerprints f ON f.id = r.fingerprint_id \
             JOIN benchmarks b ON b.id = m.benchmark_id \
             WHERE r.kind <> 'pr' ORDER BY r.recorded_at_ms, r.id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(self.db_error())?;
        let corrupt = |e: sqlx::Error| Error::CorruptRow {
            table: "measurements",
            reason: e.to_string(),
        };
        rows.iter()
            .map(|row| {
                Ok(TrendRow {
                    repository: row.try_get(0).map_err(corrupt)?,
                    fingerprint: row.try_get(1).map_err(corrupt)?,
                    benchmark: row.try_get(2).map_err(corrupt)?,
                    commit: row.try_get(3).map_err(corrupt)?,
                    recorded_at_ms: u64::try_from(row.try_get::<i64, _>(4).map_err(corrupt)?)
                        .unwrap_or(0),
                    median: row.try_get(5).map_err(corrupt)?,
                    lower: row.try_get(6).map_err(corrupt)?,
                    upper: row.try_get(7).map_err(corrupt)?,
                    unit: row.try_get(8).map_err(corrupt)?,
                })
            })
            .collect()
    }

    /// Every measurement (of `repository`, recorded at or after `since`), oldest run first, one
    /// row at a time into `each`: for exports. Streams: memory does not grow with the store.
    pub async fn for_each_export_row(
        &self,
        repository: Option<&RepositoryName>,
        since: Option<SystemTime>,
        mut each: impl FnMut(&ExportRow) -> std::io::Result<()>,
    ) -> Result<usize> {
        let since_ms = since.map_or(i64::MIN, |t| {
            t.duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        });
        let mut rows = sqlx::query(
            "SELECT r.id, repo.name, r.commit_sha, r.branch, r.kind, r.pr_number, r.attempt, \
             r.recorded_at_ms, f.hash, f.cpu_brand, f.logical_cores, f.memory_gib, f.os_name, \
             f.os_major_version, f.runner_image, f.rustc_version, f.host_triple, b.name, \
             m.throughput_kind, m.throughput_amount, m.mean_point, m.mean_lower, m.mean_upper, \
             m.median_point, m.median_lower, m.median_upper, m.min_point, m.n_samples, \
             m.unit, m.direction \
             FROM measurements m JOIN runs r ON r.id = m.run_id \
             JOIN repositories repo ON repo.id = r.repository_id \
             JOIN fingerprints f ON f.id = r.fingerprint_id \
             JOIN benchmarks b ON b.id = m.benchmark_id \
             WHERE ($1 IS NULL OR repo.name = $1) AND r.recorded_at_ms >= $2 \
             ORDER BY r.recorded_at_ms, r.id, b.name",
        )
        .bind(repository.map(RepositoryName::as_str))
        .bind(since_ms)
        .fetch(&self.pool);
        let db = self.db_error();
        let corrupt = |e: sqlx::Error| Error::CorruptRow {
            table: "measurements",
            reason: e.to_string(),
        };
        let mut count = 0;
        while let Some(row) = rows.try_next().await.map_err(&db)? {
            let export = ExportRow {
                run: row.try_get(0).map_err(corrupt)?,
                repository: row.try_get(1).map_err(corrupt)?,
                commit: row.try_get(2).map_err(corrupt)?,
                branch: row.try_get(3).map_err(corrupt)?,
                kind: row.try_get(4).map_err(corrupt)?,
                pr: row.try_get(5).map_err(corrupt)?,
                attempt: row.try_get(6).map_err(corrupt)?,
                recorded_at: from_ms(row.try_get(7).map_err(corrupt)?),
                fingerprint: row.try_get(8).map_err(corrupt)?,
                cpu_brand: row.try_get(9).map_err(corrupt)?,
                logical_cores: row.try_get(10).map_err(corrupt)?,
                memory_gib: row.try_get(11).map_err(corrupt)?,
                os: format!(
                    "{} {}",
                    row.try_get::<String, _>(12).map_err(corrupt)?,
                    row.try_get::<String, _>(13).map_err(corrupt)?
                ),
                runner_image: row.try_get(14).map_err(corrupt)?,
                rustc_version: row.try_get(15).map_err(corrupt)?,
                host_triple: row.try_get(16).map_err(corrupt)?,
                benchmark: row.try_get(17).map_err(corrupt)?,
                throughput_kind: row.try_get(18).map_err(corrupt)?,
                throughput_amount: row.try_get(19).map_err(corrupt)?,
                mean: [
                    row.try_get(20).map_err(corrupt)?,
                    row.try_get(21).map_err(corrupt)?,
                    row.try_get(22).map_err(corrupt)?,
                ],
                median: [
                    row.try_get(23).map_err(corrupt)?,
                    row.try_get(24).map_err(corrupt)?,
                    row.try_get(25).map_err(corrupt)?,
                ],
                min: row.try_get(26).map_err(corrupt)?,
                n_samples: row.try_get(27).map_err(corrupt)?,
                metric: match (
                    row.try_get::<Option<String>, _>(28).map_err(corrupt)?,
                    row.try_get::<Option<String>, _>(29).map_err(corrupt)?,
                ) {
                    (Some(unit), Some(direction)) => Some((unit, direction)),
                    _ => None,
                },
            };
            each(&export).map_err(|source| Error::ReadFile {
                path: PathBuf::from("<export>"),
                source,
            })?;
            count += 1;
        }
        Ok(count)
    }

    /// Each fingerprint's hashed components, by hash, as (name, value) for people.
    pub async fn fingerprint_components(&self) -> Result<HashMap<String, Vec<(String, String)>>> {
        let rows = sqlx::query(
            "SELECT hash, cpu_arch, cpu_brand, physical_cores, logical_cores, memory_gib, \
             os_name, os_major_version, runner_image, rustc_version FROM fingerprints",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(self.db_error())?;
        let corrupt = |e: sqlx::Error| Error::CorruptRow {
            table: "fingerprints",
            reason: e.to_string(),
        };
        rows.iter()
            .map(|row| {
                let text = |i: usize| row.try_get::<String, _>(i).map_err(corrupt);
                let count = |i: usize| row.try_get::<i64, _>(i).map_err(corrupt);
                let image: Option<String> = row.try_get(8).map_err(corrupt)?;
                let components = vec![
                    ("cpu_brand".to_owned(), text(2)?),
                    ("cpu_arch".to_owned(), text(1)?),
                    (
                        "cores".to_owned(),
                        format!("{} physical, {} logical", count(3)?, count(4)?),
                    ),
                    ("memory".to_owned(), format!("{} GiB", count(5)?)),
                    ("os".to_owned(), format!("{} {}", text(6)?, text(7)?)),
                    (
                        "runner_image".to_owned(),
                        image.unwrap_or_else(|| "—".to_owned()),
                    ),
                    ("rustc".to_owned(), text(9)?),
                ];
                Ok((text(0)?, components))
            })
            .collect()
    }

    /// The head commits a maintainer overrode the gate at, per repository.
    pub async fn overridden_commits(&self) -> Result<Vec<(String, String)>> {
        sqlx::query_as(
            "SELECT DISTINCT repo.name, o.head_sha FROM overrides o \
             JOIN repositories repo ON repo.id = o.repository_id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(self.db_error())
    }

    /// One run's summary, without its measurements.
    pub async fn run_summary(&self, id: RunId) -> Result<RunSummary> {
        let row = sqlx::query(RUN_SUMMARY_SELECT_ONE)
            .bind(id.get())
            .fetch_optional(&self.pool)
            .await
            .map_err(self.db_error())?
            .ok_or(Error::RunNotFound(id.get()))?;
        run_summary_from_row(&row)
    }

    /// One run with its machine and every measurement.
    pub async fn get_run(&self, id: RunId) -> Result<StoredRun> {
        let db = self.db_error();
        let row = sqlx::query(RUN_SELECT_ONE)
            .bind(id.get())
            .fetch_optional(&self.pool)
            .await
            .map_err(&db)?
            .ok_or(Error::RunNotFound(id.get()))?;
        let summary = run_summary_from_row(&row)?;
        let profile = profile_from_row(&row)?;
        // Unordered: sorting 10,000 rows with their blobs costs SQLite more than sorting here.
        let sql = format!(
            "SELECT {MEASUREMENT_COLUMNS} FROM measurements m \
             JOIN benchmarks b ON b.id = m.benchmark_id WHERE m.run_id = $1"
        );
        // Decoded as the rows stream in: the consumer then rarely waits on SQLite's worker
        // thread, which saves a wake-up per row (a third of the load time of a large run).
        let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.get())
            .fetch(&self.pool);
        let mut measurements = Vec::with_capacity(summary.n_benchmarks);
        while let Some(row) = rows.try_next().await.map_err(&db)? {
            measurements.push(measurement_from_row(&row)?);
        }
        drop(rows);
        measurements.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        Ok(StoredRun {
            summary,
            profile,
            measurements,
        })
    }
}

/// The columns and joins every run query starts with; `run_summary_from_row` reads them.
macro_rules! run_summary_select {
    () => {
        "SELECT r.id, repo.name AS repository, r.commit_sha, r.branch, r.kind, r.pr_number, \
         r.attempt, f.hash AS fingerprint, r.recorded_at_ms, r.n_benchmarks"
    };
}

/// The joins from a run to its repository and fingerprint.
macro_rules! run_joins {
    () => {
        " FROM runs r JOIN repositories repo ON repo.id = r.repository_id \
         JOIN fingerprints f ON f.id = r.fingerprint_id"
    };
}

const RUN_SUMMARY_SELECT_ALL: &str = concat!(run_summary_select!(), run_joins!(), " ORDER BY r.id");

const RUN_SUMMARY_SELECT_ON_FINGERPRINT: &str = concat!(
    run_summary_select!(),
    run_joins!(),
    " WHERE repo.name = $1 AND f.hash = $2 ORDER BY r.id"
);

const BENCHMARK_SERIES_SELECT: &str = concat!(
    run_summary_select!(),
    ", m.median_point, m.median_lower, m.median_upper, m.min_point",
    run_joins!(),
    " JOIN measurements m ON m.run_id = r.id JOIN benchmarks b ON b.id = m.benchmark_id \
     WHERE repo.name = $1 AND f.hash = $2 AND b.name = $3 ORDER BY r.id"
);

const RUN_SUMMARY_SELECT_ONE: &str =
    concat!(run_summary_select!(), run_joins!(), " WHERE r.id = $1");

const RUN_SELECT_ONE: &str = concat!(
    run_summary_select!(),
    ", f.cpu_arch, f.cpu_vendor, f.cpu_brand, f.physical_cores, f.logical_cores, f.memory_gib, \
     f.cpu_features, f.os_name, f.os_major_version, f.runner_image, f.runner_image_version, \
     f.rustc_version, f.host_triple, r.hostname, r.cpu_frequency_mhz, r.kernel_version, r.os_version",
    run_joins!(),
    " WHERE r.id = $1"
);

/// `sql` followed by the ids of `runs` as bound parameters and a closing parenthesis: for the
/// `... WHERE x IN (` queries over a chunk of runs.
fn in_runs(sql: impl Into<String>, runs: &[RunId]) -> QueryBuilder<Sqlite> {
    let mut query = QueryBuilder::<Sqlite>::new(sql);
    let mut ids = query.separated(", ");
    for id in runs {
        ids.push_bind(id.get());
    }
    query.push(")");
    query
}

/// A measurement ready to bind, with its integer columns converted once.
struct MeasurementRow<'a> {
    measurement: &'a Measurement,
    benchmark_id: i64,
    throughput_kind: Option<&'static str>,
    throughput_amount: Option<i64>,
    throughput_bytes: Option<i64>,
    n_samples: i64,
    min_point: f64,
}

impl<'a> MeasurementRow<'a> {
    fn new(measurement: &'a Measurement, benchmark_ids: &HashMap<String, i64>) -> Result<Self> {
        let benchmark_id =
            *benchmark_ids
                .get(measurement.id.as_str())
                .ok_or_else(|| Error::CorruptRow {
                    table: "benchmarks",
                    reason: format!("benchmark {:?} was not stored", measurement.id.as_str()),
                })?;
        let throughput = measurement.throughput;
        Ok(Self {
            measurement,
            benchmark_id,
            throughput_kind: throughput.map(|t| t.kind()),
            throughput_amount: throughput.map(|t| to_i64(t.amount())).transpose()?,
            throughput_bytes: throughput
                .and_then(|t| t.secondary_bytes())
                .map(to_i64)
                .transpose()?,
            n_samples: to_i64(measurement.samples.len() as u64)?,
            // The best sample: the fastest, or for a higher-is-better custom metric the highest.
            min_point: match &measurement.custom {
                Some(c) if c.direction == Direction::HigherIsBetter => measurement
                    .samples
                    .per_iteration()
                    .fold(f64::NEG_INFINITY, f64::max),
                _ => measurement
                    .samples
                    .per_iteration()
                    .fold(f64::INFINITY, f64::min),
            },
        })
    }
}

fn run_summary_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<RunSummary> {
    let corrupt = |reason: String| Error::CorruptRow {
        table: "runs",
        reason,
    };
    let get_error = |e: sqlx::Error| corrupt(e.to_string());
    let kind: String = row.try_get("kind").map_err(get_error)?;
    let pr_number: Option<i64> = row.try_get("pr_number").map_err(get_error)?;
    let attempt: i64 = row.try_get("attempt").map_err(get_error)?;
    let n_benchmarks: i64 = row.try_get("n_benchmarks").map_err(get_error)?;
    let recorded_at_ms: i64 = row.try_get("recorded_at_ms").map_err(get_error)?;
    Ok(RunSummary {
        id: RunId::from_row(row.try_get("id").map_err(get_error)?),
        meta: RunMeta {
            repository: RepositoryName::parse(
                &row.try_get::<String, _>("repository").map_err(get_error)?,
            )?,
            commit: CommitSha::parse(&row.try_get::<String, _>("commit_sha").map_err(get_error)?)?,
            branch: row.try_get("branch").map_err(get_error)?,
            kind: RunKind::from_str(&kind)?,
            pr_number: pr_number
                .map(|n| u64::try_from(n).map_err(|_| corrupt(format!("pr_number {n}"))))
                .transpose()?,
            attempt: u32::try_from(attempt).map_err(|_| corrupt(format!("attempt {attempt}")))?,
        },
        fingerprint: Fingerprint::parse(
            &row.try_get::<String, _>("fingerprint").map_err(get_error)?,
        )?,
        recorded_at: UNIX_EPOCH + Duration::from_millis(u64::try_from(recorded_at_ms).unwrap_or(0)),
        n_benchmarks: usize::try_from(n_benchmarks)
            .map_err(|_| corrupt(format!("n_benchmarks {n_benchmarks}")))?,
    })
}

fn profile_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<HardwareProfile> {
    let get_error = |e: sqlx::Error| Error::CorruptRow {
        table: "fingerprints",
        reason: e.to_string(),
    };
    let count = |name: &str| -> Result<i64> { row.try_get::<i64, _>(name).map_err(get_error) };
    let features: String = row.try_get("cpu_features").map_err(get_error)?;
    Ok(HardwareProfile {
        cpu_arch: row.try_get("cpu_arch").map_err(get_error)?,
        cpu_vendor: row.try_get("cpu_vendor").map_err(get_error)?,
        cpu_brand: row.try_get("cpu_brand").map_err(get_error)?,
        physical_cores: u32::try_from(count("physical_cores")?).unwrap_or(0),
        logical_cores: u32::try_from(count("logical_cores")?).unwrap_or(0),
        memory_gib: u64::try_from(count("memory_gib")?).unwrap_or(0),
        cpu_features: features
            .split(',')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect(),
        os_name: row.try_get("os_name").map_err(get_error)?,
        os_major_version: row.try_get("os_major_version").map_err(get_error)?,
        runner_image: row.try_get("runner_image").map_err(get_error)?,
        runner_image_version: row.try_get("runner_image_version").map_err(get_error)?,
        rustc_version: row.try_get("rustc_version").map_err(get_error)?,
        host_triple: row.try_get("host_triple").map_err(get_error)?,
        hostname: row.try_get("hostname").map_err(get_error)?,
        cpu_frequency_mhz: row
            .try_get::<Option<i64>, _>("cpu_frequency_mhz")
            .map_err(get_error)?
            .and_then(|mhz| u64::try_from(mhz).ok()),
        kernel_version: row.try_get("kernel_version").map_err(get_error)?,
        os_version: row.try_get("os_version").map_err(get_error)?,
    })
}

/// The columns `measurement_from_row` reads, in its positional order.
const MEASUREMENT_COLUMNS: &str = "b.name, m.throughput_kind, m.throughput_amount, m.throughput_bytes, \
     m.mean_point, m.mean_lower, m.mean_upper, m.median_point, m.median_lower, m.median_upper, \
     m.confidence_level, m.sampling_mode, m.sample_iters, m.sample_times, m.unit, m.direction";

/// A row of [`MEASUREMENT_COLUMNS`], read by position and borrowing its text and blobs.
fn measurement_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<Measurement> {
    let corrupt = |reason: String| Error::CorruptRow {
        table: "measurements",
        reason,
    };
    let get_error = |e: sqlx::Error| corrupt(e.to_string());
    let name: &str = row.try_get(0).map_err(get_error)?;
    let throughput_kind: Option<&str> = row.try_get(1).map_err(get_error)?;
    let throughput = match throughput_kind {
        None => None,
        Some(kind) => {
            let amount: i64 = row.try_get(2).map_err(get_error)?;
            let bytes: Option<i64> = row.try_get(3).map_err(get_error)?;
            let amount = u64::try_from(amount)
                .map_err(|_| corrupt(format!("{name}: throughput_amount {amount}")))?;
            let bytes = bytes.and_then(|b| u64::try_from(b).ok());
            Some(
                Throughput::from_parts(kind, amount, bytes)
                    .ok_or_else(|| corrupt(format!("{name}: throughput kind {kind:?}")))?,
            )
        }
    };
    let confidence_level: f64 = row.try_get(10).map_err(get_error)?;
    let estimate = |first: usize| -> Result<Estimate> {
        Ok(Estimate {
            point: row.try_get(first).map_err(get_error)?,
            lower: row.try_get(first + 1).map_err(get_error)?,
            upper: row.try_get(first + 2).map_err(get_error)?,
            confidence_level,
        })
    };
    let unit: Option<&str> = row.try_get(14).map_err(get_error)?;
    let direction: Option<&str> = row.try_get(15).map_err(get_error)?;
    let custom = match (unit, direction) {
        (None, None) => None,
        (Some(unit), Some(direction)) => Some(CustomMetric {
            unit: unit.to_owned(),
            direction: Direction::parse(direction)
                .ok_or_else(|| corrupt(format!("{name}: direction {direction:?}")))?,
        }),
        _ => return Err(corrupt(format!("{name}: a unit without a direction"))),
    };
    let iters = decode_f64s(row.try_get::<&[u8], _>(12).map_err(get_error)?)
        .ok_or_else(|| corrupt(format!("{name}: sample_iters is not an f64 array")))?;
    let times = decode_f64s(row.try_get::<&[u8], _>(13).map_err(get_error)?)
        .ok_or_else(|| corrupt(format!("{name}: sample_times is not an f64 array")))?;
    Ok(Measurement {
        id: BenchmarkId::parse(name)?,
        throughput,
        mean: estimate(4)?,
        median: estimate(7)?,
        sampling_mode: row.try_get(11).map_err(get_error)?,
        samples: Samples::new(iters, times)
            .map_err(|(field, reason)| corrupt(format!("{name}: {field} {reason}")))?,
        custom,
    })
}

/// The run's content: what the user supplied, less the time it was recorded. Two ingests of
/// the same results hash the same; any other difference does not.
fn content_hash(run: &NewRun) -> String {
    let mut hasher = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(run.meta.branch.as_deref().unwrap_or("").as_bytes());
    field(&run.meta.pr_number.unwrap_or(0).to_le_bytes());
    for m in &run.measurements {
        field(m.id.as_str().as_bytes());
        let throughput = m
            .throughput
            .map(|t| format!("{}:{}:{:?}", t.kind(), t.amount(), t.secondary_bytes()));
        field(throughput.unwrap_or_default().as_bytes());
        for estimate in [m.mean, m.median] {
            for value in [
                estimate.point,
                estimate.lower,
                estimate.upper,
                estimate.confidence_level,
            ] {
                field(&value.to_bits().to_le_bytes());
            }
        }
        field(m.sampling_mode.as_deref().unwrap_or("").as_bytes());
        field(&encode_f64s(m.samples.iters()));
        field(&encode_f64s(m.samples.times()));
        // Only custom metrics add fields, so Criterion runs hash as they always did.
        if let Some(custom) = &m.custom {
            field(custom.unit.as_bytes());
            field(custom.direction.as_str().as_bytes());
        }
    }
    to_hex(&hasher.finalize())
}

/// `runs.statistics`: per measurement, benchmark id (i64), median and minimum (f64), little-endian.
fn encode_run_statistics(rows: &[MeasurementRow<'_>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows.len() * 24);
    for row in rows {
        out.extend_from_slice(&row.benchmark_id.to_le_bytes());
        out.extend_from_slice(&row.measurement.median.point.to_le_bytes());
        out.extend_from_slice(&row.min_point.to_le_bytes());
    }
    out
}

fn decode_run_statistics(bytes: &[u8]) -> Option<Vec<(i64, f64, f64)>> {
    let entries = bytes.chunks_exact(24);
    if !entries.remainder().is_empty() {
        return None;
    }
    let word = |b: &[u8]| -> [u8; 8] {
        let mut array = [0u8; 8];
        array.copy_from_slice(b);
        array
    };
    Some(
        entries
            .map(|e| {
                (
                    i64::from_le_bytes(word(&e[..8])),
                    f64::from_le_bytes(word(&e[8..16])),
                    f64::from_le_bytes(word(&e[16..])),
                )
            })
            .collect(),
    )
}

fn encode_f64s(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn decode_f64s(bytes: &[u8]) -> Option<Vec<f64>> {
    let chunks = bytes.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return None;
    }
    Some(
        chunks
            .map(|chunk| {
                let mut array = [0u8; 8];
                array.copy_from_slice(chunk);
                f64::from_le_bytes(array)
            })
            .collect(),
    )
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn from_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

fn to_i64(value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|_| Error::InvalidInput {
        what: "integer",
        value: value.to_string(),
        reason: "too large to store (above 2^63 - 1)",
    })
}

fn epoch_ms(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
