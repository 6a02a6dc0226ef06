//! Runs: ingest (idempotent, whole or not at all, `replace` in one transaction), listing,
//! the attempt counter, and reading a run back whole.

use std::collections::BTreeMap;

use super::rows::*;
use super::*;
use crate::callgrind::Profile;

impl Store {
    /// Stores `run` whole, in one transaction. The same results under the same key again are
    /// `Unchanged`; different results under that key are an error (`RunConflict`).
    pub async fn ingest(&self, run: &NewRun) -> Result<IngestOutcome> {
        self.store_run(run, Taken::Conflict).await
    }

    /// Stores `run` as the next attempt under its (repository, commit, fingerprint, kind),
    /// whatever attempt it names: `Unchanged` where an attempt stored there already holds these
    /// very results (the same upload again), else `Created` under the attempt after the
    /// highest (a nightly run of a commit measured the night before, a re-run workflow). In
    /// the writer's transaction, so two such runs cannot take one attempt.
    pub async fn ingest_next_attempt(&self, run: &NewRun) -> Result<IngestOutcome> {
        self.store_run(run, Taken::NextAttempt).await
    }

    /// Stores `run`, swapping out different results stored under its key in the same
    /// transaction (run ids are never reused).
    pub async fn replace(&self, run: &NewRun) -> Result<IngestOutcome> {
        self.store_run(run, Taken::Replace).await
    }

    /// Stores every run in one transaction, all or none: the first that cannot be stored (a
    /// different run under the same key) leaves the store as it was. Outcomes in order.
    pub async fn ingest_all(&self, runs: &[NewRun]) -> Result<Vec<IngestOutcome>> {
        self.store_runs(runs, Taken::Conflict).await
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
    async fn store_run(&self, run: &NewRun, taken: Taken) -> Result<IngestOutcome> {
        let queue = &*self.writes;
        if let Ok(_leader) = queue.leader.try_lock() {
            let waiting = queue.take();
            return self.write_batch((run, taken), waiting).await;
        }
        let (reply, mut answer) = tokio::sync::oneshot::channel();
        let ticket = queue.push(run.clone(), taken, reply);
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
                self.write_batch((run, taken), waiting).await
            }
        }
    }

    /// Writes `own` and then the `waiting` runs, in the order they came, in one transaction;
    /// answers each waiting run after the commit and returns `own`'s outcome. When the
    /// transaction itself fails, the error is returned; the waiting runs are answered busy if the store was busy (they waited
    /// for the same lock), else not at all, so that each caller writes its own run again.
    async fn write_batch(
        &self,
        own: (&NewRun, Taken),
        waiting: Vec<Waiting>,
    ) -> Result<IngestOutcome> {
        let runs: Vec<(&NewRun, Taken)> = std::iter::once(own)
            .chain(waiting.iter().map(|w| (&w.run, w.taken)))
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
    async fn write_together(
        &self,
        runs: &[(&NewRun, Taken)],
    ) -> Result<Vec<Result<IngestOutcome>>> {
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
            for (run, taken) in runs {
                if alone {
                    outcomes.push(self.write_run(&mut tx, run, *taken, &mut known).await);
                    continue;
                }
                sqlx::query("SAVEPOINT benchgate_run").execute(&mut *tx).await.map_err(&db)?;
                let outcome = self.write_run(&mut tx, run, *taken, &mut known).await;
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
    async fn store_runs(&self, runs: &[NewRun], taken: Taken) -> Result<Vec<IngestOutcome>> {
        let db = self.db_error();
        let repositories: Vec<&str> = runs.iter().map(|r| r.meta.repository.as_str()).collect();
        with_pool!(self, pool => {
            let mut tx = Engine::begin_write(pool, &repositories).await.map_err(&db)?;
            let mut outcomes = Vec::with_capacity(runs.len());
            let mut known = KnownIds::default();
            for run in runs {
                // On an error the transaction is dropped, which rolls it back.
                outcomes.push(self.write_run(&mut tx, run, taken, &mut known).await?);
            }
            tx.commit().await.map_err(&db)?;
            Ok(outcomes)
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

impl Store {
    /// One run's profiles by function (instruction counts ingested with Callgrind's files),
    /// by the count measurement's id; empty when it has none. A stored document that does not
    /// read back is a corrupt row, named.
    pub async fn function_costs(&self, id: RunId) -> Result<BTreeMap<BenchmarkId, Profile>> {
        with_pool!(self, pool => {
            let rows = sqlx::query(
                "SELECT b.name, f.document FROM function_costs f \
                 JOIN measurements m ON m.id = f.measurement_id \
                 JOIN benchmarks b ON b.id = m.benchmark_id WHERE m.run_id = $1",
            )
            .bind(id.get())
            .fetch_all(pool)
            .await
            .map_err(self.db_error())?;
            let mut profiles = BTreeMap::new();
            for row in rows {
                let name: String = row.try_get("name").map_err(self.db_error())?;
                let document: String = row.try_get("document").map_err(self.db_error())?;
                let corrupt = |reason: String| Error::CorruptRow {
                    table: "function_costs",
                    reason: format!("run {id}, benchmark {name:?}: {reason}"),
                };
                let document = serde_json::from_str(&document).map_err(|e| corrupt(e.to_string()))?;
                let profile = Profile::from_document(document).map_err(corrupt)?;
                let id = BenchmarkId::parse(&name).map_err(|e| corrupt(e.to_string()))?;
                profiles.insert(id, profile);
            }
            Ok(profiles)
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
        taken: Taken,
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
                taken,
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
    taken: Taken,
    reply: tokio::sync::oneshot::Sender<Result<IngestOutcome>>,
}

/// What a write does when its run's key (repository, commit, fingerprint, kind, attempt)
/// already holds other results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Taken {
    /// [`Error::RunConflict`].
    Conflict,
    /// The stored run is swapped out.
    Replace,
    /// The run goes under the next attempt instead (see [`Store::ingest_next_attempt`]).
    NextAttempt,
}

/// Ids one write transaction has found, by name: its later runs skip looking them up again.
/// Dropped with the transaction, and cleared when a run's savepoint is rolled back.
#[derive(Default)]
pub(super) struct KnownIds {
    pub(super) repositories: HashMap<String, i64>,
    pub(super) fingerprints: HashMap<String, i64>,
    /// Each repository's benchmark ids by name.
    pub(super) benchmarks: HashMap<i64, HashMap<String, i64>>,
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
