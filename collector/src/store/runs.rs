//! Runs: ingest (idempotent, whole or not at all, `replace` in one transaction), listing,
//! the attempt counter, and reading a run back whole.

use super::rows::*;
use super::*;
use rayon::prelude::*;

impl Store {
    /// Stores `run` whole, in one transaction. The same results under the same key again are
    /// `Unchanged`; different results under that key are an error (`RunConflict`).
    pub async fn ingest(&self, run: &NewRun) -> Result<IngestOutcome> {
        self.store_run(run, false).await
    }

    /// Stores `run`, swapping out different results stored under its key in the same
    /// transaction (run ids are never reused).
    pub async fn replace(&self, run: &NewRun) -> Result<IngestOutcome> {
        self.store_run(run, true).await
    }

    /// Stores every run in one transaction, all or none: the first that cannot be stored (a
    /// different run under the same key) leaves the store as it was. Outcomes in order.
    pub async fn ingest_all(&self, runs: &[NewRun]) -> Result<Vec<IngestOutcome>> {
        self.store_runs(runs, false).await
    }

    /// Stores a run in one transaction. The same run under the same key again stores nothing;
    /// a different run under the same key is [`Error::RunConflict`] unless `replace`, which
    /// swaps it atomically.
    ///
    /// Group commit: runs arriving while another write is under way wait in the store's queue,
    /// and the next writer stores all of them in one transaction, each in a savepoint of its
    /// own (a run that fails leaves the others stored). Each caller still gets its own outcome
    /// after the commit that holds its run. A run whose writer was dropped (its task cancelled)
    /// or whose batch failed as a whole is written again by its own caller.
    async fn store_run(&self, run: &NewRun, replace: bool) -> Result<IngestOutcome> {
        let queue = &*self.writes;
        if let Ok(_leader) = queue.leader.try_lock() {
            let waiting = queue.take();
            return self.write_batch((run, replace), waiting).await;
        }
        let (reply, mut answer) = tokio::sync::oneshot::channel();
        let ticket = queue.push(run.clone(), replace, reply);
        // Dropped (the caller went away) while still queued, the run leaves the queue.
        let _queued = Queued { queue, ticket };
        let _leader = queue.leader.lock().await;
        match answer.try_recv() {
            Ok(outcome) => outcome,
            // Still queued (this caller writes the queue now), or the writer that took it was
            // dropped or its batch failed: written here, with whatever else is waiting.
            Err(_) => {
                let mut waiting = queue.take();
                waiting.retain(|w| w.ticket != ticket);
                self.write_batch((run, replace), waiting).await
            }
        }
    }

    /// Writes `own` and then the `waiting` runs, in the order they came, in one transaction;
    /// answers each waiting run after the commit and returns `own`'s outcome. When the
    /// transaction itself fails, the error is returned; the waiting runs are answered busy if the store was busy (they waited
    /// for the same lock), else not at all, so that each caller writes its own run again.
    async fn write_batch(
        &self,
        own: (&NewRun, bool),
        waiting: Vec<Waiting>,
    ) -> Result<IngestOutcome> {
        let runs: Vec<(&NewRun, bool)> = std::iter::once(own)
            .chain(waiting.iter().map(|w| (&w.run, w.replace)))
            .collect();
        let written = self.write_together(&runs).await;
        drop(runs);
        let mut outcomes = match written {
            Ok(outcomes) => outcomes.into_iter(),
            Err(error) => {
                if error.is_busy() {
                    for w in waiting {
                        let _ = w.reply.send(Err(Error::Busy {
                            store: self.shown.clone(),
                            reason: error.to_string(),
                        }));
                    }
                }
                return Err(error);
            }
        };
        let own = outcomes.next().unwrap_or_else(|| {
            Err(Error::CorruptRow {
                table: "runs",
                reason: "a batch of runs has no outcome for its writer's own run".to_owned(),
            })
        });
        for (w, outcome) in waiting.into_iter().zip(outcomes) {
            // The caller may have gone (its request was dropped): nothing to tell it.
            let _ = w.reply.send(outcome);
        }
        own
    }

    /// Writes `runs` in one transaction, each in a savepoint of its own that is rolled back if
    /// that run fails; their outcomes in order. A lone run is written without a savepoint, and
    /// on its error nothing is committed.
    async fn write_together(&self, runs: &[(&NewRun, bool)]) -> Result<Vec<Result<IngestOutcome>>> {
        let db = self.db_error();
        let repositories: Vec<&str> = runs
            .iter()
            .map(|(r, _)| r.meta.repository.as_str())
            .collect();
        let alone = runs.len() == 1;
        let mut outcomes: Vec<Result<IngestOutcome>> = Vec::with_capacity(runs.len());
        let mut known = KnownIds::default();
        with_pool!(self, pool => {
            let mut tx = Engine::begin_write(pool, &repositories).await.map_err(&db)?;
            for (run, replace) in runs {
                if alone {
                    outcomes.push(self.write_run(&mut tx, run, *replace, &mut known).await);
                    continue;
                }
                sqlx::query("SAVEPOINT benchgate_run").execute(&mut *tx).await.map_err(&db)?;
                let outcome = self.write_run(&mut tx, run, *replace, &mut known).await;
                if outcome.is_err() {
                    sqlx::query("ROLLBACK TO SAVEPOINT benchgate_run")
                        .execute(&mut *tx)
                        .await
                        .map_err(&db)?;
                    // What the failed run stored is gone, and so may be ids it learnt.
                    known = KnownIds::default();
                }
                sqlx::query("RELEASE SAVEPOINT benchgate_run").execute(&mut *tx).await.map_err(&db)?;
                outcomes.push(outcome);
            }
            // A lone run that failed may be half written: nothing of it is committed.
            if !(alone && outcomes.iter().any(Result::is_err)) {
                tx.commit().await.map_err(&db)?;
            }
        });
        Ok(outcomes)
    }

    /// Stores `runs` in one write transaction, which holds the engine's write lock for their
    /// repositories (see [`Engine::begin_write`]): concurrent ingests of one run queue, and the
    /// second finds the first's run stored.
    async fn store_runs(&self, runs: &[NewRun], replace: bool) -> Result<Vec<IngestOutcome>> {
        let db = self.db_error();
        let repositories: Vec<&str> = runs.iter().map(|r| r.meta.repository.as_str()).collect();
        with_pool!(self, pool => {
            let mut tx = Engine::begin_write(pool, &repositories).await.map_err(&db)?;
            let mut outcomes = Vec::with_capacity(runs.len());
            let mut known = KnownIds::default();
            for run in runs {
                // On an error the transaction is dropped, which rolls it back.
                outcomes.push(self.write_run(&mut tx, run, replace, &mut known).await?);
            }
            tx.commit().await.map_err(&db)?;
            Ok(outcomes)
        })
    }

    /// Writes `run` inside `tx`: nothing for the same results under its key, an error for
    /// different ones unless `replace`. `known` holds the ids earlier runs of the transaction
    /// found (repository, machine, benchmark names), so a run of the same ones skips their
    /// look-ups.
    async fn write_run<DB: Engine>(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: &NewRun,
        replace: bool,
        known: &mut KnownIds,
    ) -> Result<IngestOutcome>
    where
        for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
        DB::Arguments: sqlx::IntoArguments<DB>,
        for<'a> &'a str: sqlx::ColumnIndex<DB::Row>,
        for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
        for<'q> Option<&'q str>: sqlx::Encode<'q, DB>,
        for<'q> String: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
        for<'q> Option<String>: sqlx::Encode<'q, DB>,
        for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
        for<'q> Option<i64>: sqlx::Encode<'q, DB>,
        for<'q> f64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
        for<'q> Vec<u8>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
        for<'q> Option<Vec<u8>>: sqlx::Encode<'q, DB>,
        (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
    {
        let db = self.db_error();
        // The CPU work of a run, before any statement: its content hash (one sequential pass)
        // beside its sample arrays' encoding (every measurement on every core). For a run of
        // 1,000 benchmarks this was half the store's time, on one thread; a small run (an
        // upload's hundred) is done on this thread, where handing it to rayon costs more than
        // it saves while other writers keep the cores busy.
        let encode = |m: &Measurement| {
            (
                samples::encode(m.samples.iters()),
                samples::encode(m.samples.times()),
            )
        };
        let (content_hash, mut blobs) = if run.measurements.len() >= PARALLEL_ENCODING_FROM {
            rayon::join(
                || content_hash(run),
                || run.measurements.par_iter().map(encode).collect::<Vec<_>>(),
            )
        } else {
            (
                content_hash(run),
                run.measurements.iter().map(encode).collect::<Vec<_>>(),
            )
        };
        let fingerprint = run.profile.fingerprint();
        let meta = &run.meta;
        let pr_number = meta.pr_number.map(to_i64).transpose()?;

        let repository_id = match known.repositories.get(meta.repository.as_str()) {
            Some(id) => *id,
            None => {
                sqlx::query(
                    "INSERT INTO repositories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                )
                .bind(meta.repository.as_str())
                .execute(&mut **tx)
                .await
                .map_err(&db)?;
                let id: i64 = sqlx::query_scalar("SELECT id FROM repositories WHERE name = $1")
                    .bind(meta.repository.as_str())
                    .fetch_one(&mut **tx)
                    .await
                    .map_err(&db)?;
                known
                    .repositories
                    .insert(meta.repository.as_str().to_owned(), id);
                id
            }
        };

        let profile = &run.profile;
        let fingerprint_id = match known.fingerprints.get(fingerprint.as_str()) {
            Some(id) => *id,
            None => {
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
                .execute(&mut **tx)
                .await
                .map_err(&db)?;
                let id: i64 = sqlx::query_scalar("SELECT id FROM fingerprints WHERE hash = $1")
                    .bind(fingerprint.as_str())
                    .fetch_one(&mut **tx)
                    .await
                    .map_err(&db)?;
                known
                    .fingerprints
                    .insert(fingerprint.as_str().to_owned(), id);
                id
            }
        };

        let existing = sqlx::query(
            "SELECT id, content_hash FROM runs WHERE repository_id = $1 AND commit_sha = $2 \
             AND fingerprint_id = $3 AND kind = $4 AND attempt = $5",
        )
        .bind(repository_id)
        .bind(meta.commit.as_str())
        .bind(fingerprint_id)
        .bind(meta.kind.as_str())
        .bind(i64::from(meta.attempt))
        .fetch_optional(&mut **tx)
        .await
        .map_err(&db)?;
        let mut previous = None;
        if let Some(row) = existing {
            let existing_id: i64 = row.try_get("id").map_err(&db)?;
            let existing_hash: String = row.try_get("content_hash").map_err(&db)?;
            if existing_hash == content_hash {
                return Ok(IngestOutcome::Unchanged(RunId::from_row(existing_id)));
            }
            if !replace {
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
                .execute(&mut **tx)
                .await
                .map_err(&db)?;
            sqlx::query("DELETE FROM runs WHERE id = $1")
                .bind(existing_id)
                .execute(&mut **tx)
                .await
                .map_err(&db)?;
            previous = Some(RunId::from_row(existing_id));
        }

        // The names are looked up again only when one is not known yet: the repository's
        // stored names first, and only when some are missing, those inserted and all read again.
        let names = known.benchmarks.entry(repository_id).or_default();
        if !run
            .measurements
            .iter()
            .all(|m| names.contains_key(m.id.as_str()))
        {
            *names = stored_names(tx, repository_id).await.map_err(&db)?;
            let mut missing: Vec<&str> = run
                .measurements
                .iter()
                .map(|m| m.id.as_str())
                .filter(|name| !names.contains_key(*name))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            if !missing.is_empty() {
                for chunk in missing.chunks(BENCHMARK_ROWS_PER_INSERT) {
                    let mut insert =
                        QueryBuilder::<DB>::new("INSERT INTO benchmarks (repository_id, name) ");
                    insert.push_values(chunk, |mut row, name| {
                        row.push_bind(repository_id).push_bind(*name);
                    });
                    insert.push(" ON CONFLICT (repository_id, name) DO NOTHING");
                    insert.build().execute(&mut **tx).await.map_err(&db)?;
                }
                // Read back rather than `RETURNING`: SQLite builds a table of returned rows
                // per statement, which cost more than this one read (measured, docs/speed.md).
                *names = stored_names(tx, repository_id).await.map_err(&db)?;
            }
        }
        let benchmark_ids = &*names;

        let rows = run
            .measurements
            .iter()
            .map(|m| MeasurementRow::new(m, benchmark_ids))
            .collect::<Result<Vec<_>>>()?;

        // The run's row goes in once, with its packed statistics and gate view (they need the
        // benchmarks' ids, not the run's).
        let run_id: i64 = sqlx::query_scalar(
            "INSERT INTO runs (repository_id, commit_sha, fingerprint_id, kind, attempt, branch, pr_number, \
             recorded_at_ms, content_hash, n_benchmarks, hostname, cpu_frequency_mhz, kernel_version, os_version, \
             statistics, gate_view) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id",
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
        .bind(encode_run_statistics(&rows))
        .bind(encode_gate_view(&rows))
        .fetch_one(&mut **tx)
        .await
        .map_err(&db)?;

        for (chunk, blobs) in rows
            .chunks(MEASUREMENT_ROWS_PER_INSERT)
            .zip(blobs.chunks_mut(MEASUREMENT_ROWS_PER_INSERT))
        {
            let mut insert = QueryBuilder::<DB>::new(
                "INSERT INTO measurements (run_id, benchmark_id, throughput_kind, throughput_amount, throughput_bytes, \
                 mean_point, mean_lower, mean_upper, median_point, median_lower, median_upper, confidence_level, \
                 sampling_mode, n_samples, sample_iters, sample_times, sample_encoding, min_point, unit, direction) ",
            );
            insert.push_values(chunk.iter().zip(blobs), |mut row, (m, (iters, times))| {
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
                    .push_bind(std::mem::take(iters))
                    .push_bind(std::mem::take(times))
                    .push_bind(samples::ENCODING)
                    .push_bind(m.min_point)
                    .push_bind(m.measurement.custom.as_ref().map(|c| c.unit.as_str()))
                    .push_bind(m.measurement.custom.as_ref().map(|c| c.direction.as_str()));
            });
            insert.build().execute(&mut **tx).await.map_err(&db)?;
        }

        let id = RunId::from_row(run_id);
        Ok(match previous {
            Some(previous) => IngestOutcome::Replaced { id, previous },
            None => IngestOutcome::Created(id),
        })
    }

    /// A run's measurements as the gate reads them (`runs.gate_view`): every field but the
    /// samples, of which each keeps only its two best per iteration. Enough for the minimum
    /// statistic, its within-run interval and the median; not for other quantiles or budgets,
    /// which need [`Store::get_run`]. `None` for a run without the view (stored before it
    /// existed, or pruned since).
    pub async fn gate_view(&self, id: RunId) -> Result<Option<Vec<Measurement>>> {
        with_pool!(self, pool => {
            let view: Option<Option<Vec<u8>>> =
                sqlx::query_scalar("SELECT gate_view FROM runs WHERE id = $1")
                    .bind(id.get())
                    .fetch_optional(pool)
                    .await
                    .map_err(self.db_error())?;
            let view = view.ok_or(Error::RunNotFound(id.get()))?;
            Ok(view.as_deref().and_then(decode_gate_view).map(|mut measurements| {
                measurements.sort_unstable_by(|a, b| a.id.cmp(&b.id));
                measurements
            }))
        })
    }

    /// Every stored run, oldest first.
    pub async fn list_runs(&self) -> Result<Vec<RunSummary>> {
        with_pool!(self, pool => {
            let rows = sqlx::query(RUN_SUMMARY_SELECT_ALL)
                .fetch_all(pool)
                .await
                .map_err(self.db_error())?;
            rows.iter().map(run_summary_from_row).collect()
        })
    }

    /// The newest run: the latest recorded, the highest id among runs recorded at the same
    /// time (an imported history's runs have ids in import order, not in time order).
    pub async fn latest_run(&self) -> Result<Option<RunSummary>> {
        Ok(self
            .list_runs()
            .await?
            .into_iter()
            .max_by_key(|r| (r.recorded_at, r.id.get())))
    }

    /// Every run of `repository` on the machine `fingerprint`, oldest first.
    pub async fn runs_on_fingerprint(
        &self,
        repository: &RepositoryName,
        fingerprint: &Fingerprint,
    ) -> Result<Vec<RunSummary>> {
        with_pool!(self, pool => {
            let rows = sqlx::query(RUN_SUMMARY_SELECT_ON_FINGERPRINT)
                .bind(repository.as_str())
                .bind(fingerprint.as_str())
                .fetch_all(pool)
                .await
                .map_err(self.db_error())?;
            rows.iter().map(run_summary_from_row).collect()
        })
    }

    /// The highest attempt stored under (repository, commit, fingerprint, kind), 0 if none.
    pub async fn last_attempt(
        &self,
        repository: &RepositoryName,
        commit: &CommitSha,
        fingerprint: &Fingerprint,
        kind: RunKind,
    ) -> Result<u32> {
        with_pool!(self, pool => {
            let attempt: Option<i64> = sqlx::query_scalar(
                "SELECT MAX(r.attempt) FROM runs r JOIN repositories repo ON repo.id = r.repository_id \
                 JOIN fingerprints f ON f.id = r.fingerprint_id \
                 WHERE repo.name = $1 AND r.commit_sha = $2 AND f.hash = $3 AND r.kind = $4",
            )
            .bind(repository.as_str())
            .bind(commit.as_str())
            .bind(fingerprint.as_str())
            .bind(kind.as_str())
            .fetch_one(pool)
            .await
            .map_err(self.db_error())?;
            Ok(attempt.and_then(|a| u32::try_from(a).ok()).unwrap_or(0))
        })
    }

    /// One run's summary, without its measurements.
    pub async fn run_summary(&self, id: RunId) -> Result<RunSummary> {
        with_pool!(self, pool => {
            let row = sqlx::query(RUN_SUMMARY_SELECT_ONE)
                .bind(id.get())
                .fetch_optional(pool)
                .await
                .map_err(self.db_error())?
                .ok_or(Error::RunNotFound(id.get()))?;
            run_summary_from_row(&row)
        })
    }

    /// One run with its machine and every measurement.
    pub async fn get_run(&self, id: RunId) -> Result<StoredRun> {
        with_pool!(self, pool => {
            let db = self.db_error();
            let row = sqlx::query(RUN_SELECT_ONE)
                .bind(id.get())
                .fetch_optional(pool)
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
                .fetch(pool);
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
        })
    }
}

/// Runs waiting for the next writer (group commit), and the turn of being that writer.
#[derive(Default)]
pub(super) struct WriteQueue {
    waiting: std::sync::Mutex<Vec<Waiting>>,
    tickets: std::sync::atomic::AtomicU64,
    /// Held by the one caller writing: the others queue behind it in order.
    leader: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for WriteQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteQueue").finish_non_exhaustive()
    }
}

impl WriteQueue {
    /// Queues `run`; returns its ticket.
    fn push(
        &self,
        run: NewRun,
        replace: bool,
        reply: tokio::sync::oneshot::Sender<Result<IngestOutcome>>,
    ) -> u64 {
        let ticket = self
            .tickets
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Waiting {
                ticket,
                run,
                replace,
                reply,
            });
        ticket
    }

    /// Takes the run of `ticket` out of the queue, if it is still there.
    fn withdraw(&self, ticket: u64) {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|w| w.ticket != ticket);
    }

    fn take(&self) -> Vec<Waiting> {
        std::mem::take(
            &mut *self
                .waiting
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// A run waiting to be written, and where its outcome goes.
struct Waiting {
    ticket: u64,
    run: NewRun,
    replace: bool,
    reply: tokio::sync::oneshot::Sender<Result<IngestOutcome>>,
}

/// Ids one write transaction has found, by name: its later runs skip looking them up again.
/// Dropped with the transaction, and cleared when a run's savepoint is rolled back.
#[derive(Default)]
struct KnownIds {
    repositories: HashMap<String, i64>,
    fingerprints: HashMap<String, i64>,
    /// Each repository's benchmark ids by name.
    benchmarks: HashMap<i64, HashMap<String, i64>>,
}

/// A queued run's place: when its caller's future is dropped before a writer took the run,
/// the run is withdrawn, so a request given up is not stored later by someone else's write.
struct Queued<'a> {
    queue: &'a WriteQueue,
    ticket: u64,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.queue.withdraw(self.ticket);
    }
}

/// A repository's stored benchmark names and their ids.
async fn stored_names<DB: Engine>(
    tx: &mut sqlx::Transaction<'static, DB>,
    repository_id: i64,
) -> std::result::Result<HashMap<String, i64>, sqlx::Error>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'a> &'a str: sqlx::ColumnIndex<DB::Row>,
    for<'q> String: sqlx::Decode<'q, DB> + sqlx::Type<DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
{
    sqlx::query("SELECT id, name FROM benchmarks WHERE repository_id = $1")
        .bind(repository_id)
        .fetch_all(&mut **tx)
        .await?
        .into_iter()
        .map(|row| Ok((row.try_get("name")?, row.try_get("id")?)))
        .collect()
}
