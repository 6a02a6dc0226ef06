//! Writing one run inside a write transaction: its repository, machine and benchmark names
//! (each looked up once per transaction), the run's row with its packed statistics and gate
//! view, and its measurements, many rows to a statement.

use super::rows::*;
use super::runs::{KnownIds, Taken};
use super::*;
use rayon::prelude::*;

/// Declares functions generic over the engine with every bound the run writer's statements
/// need: sqlx states them per function, and one list keeps the writer's steps in step.
macro_rules! writer_step {
    ($(#[$meta:meta])* async fn $name:ident<$db:ident>($($args:tt)*) -> $ret:ty $body:block) => {
        $(#[$meta])*
        async fn $name<$db: Engine>($($args)*) -> $ret
        where
            for<'c> &'c mut $db::Connection: sqlx::Executor<'c, Database = $db>,
            $db::Arguments: sqlx::IntoArguments<$db>,
            for<'a> &'a str: sqlx::ColumnIndex<$db::Row>,
            for<'q> &'q str: sqlx::Encode<'q, $db> + sqlx::Type<$db>,
            for<'q> Option<&'q str>: sqlx::Encode<'q, $db>,
            for<'q> String: sqlx::Encode<'q, $db> + sqlx::Decode<'q, $db> + sqlx::Type<$db>,
            for<'q> Option<String>: sqlx::Encode<'q, $db>,
            for<'q> i64: sqlx::Encode<'q, $db> + sqlx::Decode<'q, $db> + sqlx::Type<$db>,
            for<'q> Option<i64>: sqlx::Encode<'q, $db>,
            for<'q> f64: sqlx::Encode<'q, $db> + sqlx::Type<$db>,
            for<'q> Vec<u8>: sqlx::Encode<'q, $db> + sqlx::Type<$db>,
            for<'q> Option<Vec<u8>>: sqlx::Encode<'q, $db>,
            (i64,): for<'r> sqlx::FromRow<'r, $db::Row>,
        $body
    };
}

/// A measurement's encoded sample arrays: iterations, times.
type SampleBlobs = (Vec<u8>, Vec<u8>);

impl Store {
    /// Writes `run` inside `tx`: nothing for the same results under its key, for different
    /// ones what `taken` says. `known` holds the ids earlier runs of the transaction
    /// found (repository, machine, benchmark names), so a run of the same ones skips their
    /// look-ups.
    pub(super) async fn write_run<DB: Engine>(
        &self,
        tx: &mut sqlx::Transaction<'static, DB>,
        run: &NewRun,
        taken: Taken,
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
        check_function_costs(run)?;
        let (content_hash, mut blobs) = encode_run(run);
        let fingerprint = run.profile.fingerprint();
        let meta = &run.meta;
        let pr_number = meta.pr_number.map(to_i64).transpose()?;

        let repository_id = repository_id(tx, meta.repository.as_str(), known)
            .await
            .map_err(&db)?;

        let profile = &run.profile;
        let memory_gib = to_i64(profile.memory_gib)?;
        let fingerprint_id = fingerprint_id(tx, fingerprint.as_str(), profile, memory_gib, known)
            .await
            .map_err(&db)?;

        // The next attempt is free by construction: only the given one can be taken.
        let (attempt, existing) = if taken == Taken::NextAttempt {
            let attempts = attempts_stored(tx, repository_id, fingerprint_id, meta)
                .await
                .map_err(&db)?;
            if let Some((same, _, _)) = attempts.iter().find(|(_, hash, _)| *hash == content_hash) {
                return Ok(IngestOutcome::Unchanged(RunId::from_row(*same)));
            }
            let highest = attempts.iter().map(|(_, _, a)| *a).max().unwrap_or(0);
            let next = u32::try_from(highest + 1).map_err(|_| Error::CorruptRow {
                table: "runs",
                reason: format!("attempt {highest} stored for {}", meta.commit),
            })?;
            (next, None)
        } else {
            let existing = existing_run(tx, repository_id, fingerprint_id, meta)
                .await
                .map_err(&db)?;
            (meta.attempt, existing)
        };
        let mut previous = None;
        if let Some((existing_id, existing_hash)) = existing {
            if existing_hash == content_hash {
                return Ok(IngestOutcome::Unchanged(RunId::from_row(existing_id)));
            }
            if taken != Taken::Replace {
                return Err(Error::RunConflict {
                    existing: existing_id,
                    repository: meta.repository.to_string(),
                    commit: meta.commit.to_string(),
                    kind: meta.kind.to_string(),
                    attempt,
                });
            }
            delete_run(tx, existing_id).await.map_err(&db)?;
            previous = Some(RunId::from_row(existing_id));
        }

        let names = known.benchmarks.entry(repository_id).or_default();
        ensure_names(tx, repository_id, run, names)
            .await
            .map_err(&db)?;
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
        .bind(i64::from(attempt))
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

        insert_measurements(tx, run_id, &rows, &mut blobs)
            .await
            .map_err(&db)?;
        let documents = run
            .function_costs
            .iter()
            .map(|(id, profile)| {
                let benchmark_id = *benchmark_ids.get(id.as_str()).ok_or_else(|| {
                    profile_error(id, "a profile of a benchmark the run does not measure")
                })?;
                let document = serde_json::to_string(&profile.to_document())
                    .map_err(|e| profile_error(id, &e.to_string()))?;
                Ok((benchmark_id, document))
            })
            .collect::<Result<Vec<_>>>()?;
        insert_function_costs(tx, run_id, documents)
            .await
            .map_err(&db)?;

        let id = RunId::from_row(run_id);
        Ok(match previous {
            Some(previous) => IngestOutcome::Replaced { id, previous },
            None => IngestOutcome::Created(id),
        })
    }
}

/// The CPU work of a run, before any statement: its content hash (one sequential pass) beside
/// its sample arrays' encoding (every measurement on every core). For a run of 1,000
/// benchmarks this was half the store's time, on one thread; a small run (an upload's hundred)
/// is done on this thread, where handing it to rayon costs more than it saves while other
/// writers keep the cores busy.
fn encode_run(run: &NewRun) -> (String, Vec<SampleBlobs>) {
    let encode = |m: &Measurement| {
        (
            samples::encode(m.samples.iters()),
            samples::encode(m.samples.times()),
        )
    };
    if run.measurements.len() >= PARALLEL_ENCODING_FROM {
        rayon::join(
            || content_hash(run),
            || run.measurements.par_iter().map(encode).collect::<Vec<_>>(),
        )
    } else {
        (
            content_hash(run),
            run.measurements.iter().map(encode).collect::<Vec<_>>(),
        )
    }
}

writer_step! {
    /// The id and content hash of the run stored under `meta`'s key, if there is one.
    async fn existing_run<DB>(
        tx: &mut sqlx::Transaction<'static, DB>,
        repository_id: i64,
        fingerprint_id: i64,
        meta: &RunMeta,
    ) -> sqlx::Result<Option<(i64, String)>> {
        let row = sqlx::query(
            "SELECT id, content_hash FROM runs WHERE repository_id = $1 AND commit_sha = $2 \
             AND fingerprint_id = $3 AND kind = $4 AND attempt = $5",
        )
        .bind(repository_id)
        .bind(meta.commit.as_str())
        .bind(fingerprint_id)
        .bind(meta.kind.as_str())
        .bind(i64::from(meta.attempt))
        .fetch_optional(&mut **tx)
        .await?;
        row.map(|row| Ok((row.try_get("id")?, row.try_get("content_hash")?)))
            .transpose()
    }
}

writer_step! {
    /// The id, content hash and attempt of every run stored under `meta`'s key but for its
    /// attempt.
    async fn attempts_stored<DB>(
        tx: &mut sqlx::Transaction<'static, DB>,
        repository_id: i64,
        fingerprint_id: i64,
        meta: &RunMeta,
    ) -> sqlx::Result<Vec<(i64, String, i64)>> {
        let rows = sqlx::query(
            "SELECT id, content_hash, attempt FROM runs WHERE repository_id = $1 \
             AND commit_sha = $2 AND fingerprint_id = $3 AND kind = $4",
        )
        .bind(repository_id)
        .bind(meta.commit.as_str())
        .bind(fingerprint_id)
        .bind(meta.kind.as_str())
        .fetch_all(&mut **tx)
        .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    row.try_get("id")?,
                    row.try_get("content_hash")?,
                    row.try_get("attempt")?,
                ))
            })
            .collect()
    }
}

writer_step! {
    /// A stored run and its measurements, deleted (to be replaced).
    async fn delete_run<DB>(tx: &mut sqlx::Transaction<'static, DB>, id: i64) -> sqlx::Result<()> {
        sqlx::query("DELETE FROM measurements WHERE run_id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
        sqlx::query("DELETE FROM runs WHERE id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }
}

writer_step! {
    /// The repository's id, inserted the first time it is seen.
    async fn repository_id<DB>(
        tx: &mut sqlx::Transaction<'static, DB>,
        name: &str,
        known: &mut KnownIds,
    ) -> sqlx::Result<i64> {
        Ok(match known.repositories.get(name) {
            Some(id) => *id,
            None => {
                sqlx::query(
                    "INSERT INTO repositories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                )
                .bind(name)
                .execute(&mut **tx)
                .await
                ?;
                let id: i64 = sqlx::query_scalar("SELECT id FROM repositories WHERE name = $1")
                    .bind(name)
                    .fetch_one(&mut **tx)
                    .await
                    ?;
                known
                    .repositories
                    .insert(name.to_owned(), id);
                id
            }
        })
    }
}

writer_step! {
    /// The machine's id, its profile inserted the first time its fingerprint is seen.
    async fn fingerprint_id<DB>(
        tx: &mut sqlx::Transaction<'static, DB>,
        fingerprint: &str,
        profile: &HardwareProfile,
        memory_gib: i64,
        known: &mut KnownIds,
    ) -> sqlx::Result<i64> {
        Ok(match known.fingerprints.get(fingerprint) {
            Some(id) => *id,
            None => {
                sqlx::query(
                    "INSERT INTO fingerprints (hash, cpu_arch, cpu_vendor, cpu_brand, physical_cores, logical_cores, \
                     memory_gib, cpu_features, os_name, os_major_version, runner_image, runner_image_version, \
                     rustc_version, host_triple) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (hash) DO NOTHING",
                )
                .bind(fingerprint)
                .bind(&profile.cpu_arch)
                .bind(&profile.cpu_vendor)
                .bind(&profile.cpu_brand)
                .bind(i64::from(profile.physical_cores))
                .bind(i64::from(profile.logical_cores))
                .bind(memory_gib)
                .bind(profile.cpu_features.join(","))
                .bind(&profile.os_name)
                .bind(&profile.os_major_version)
                .bind(&profile.runner_image)
                .bind(&profile.runner_image_version)
                .bind(&profile.rustc_version)
                .bind(&profile.host_triple)
                .execute(&mut **tx)
                .await
                ?;
                let id: i64 = sqlx::query_scalar("SELECT id FROM fingerprints WHERE hash = $1")
                    .bind(fingerprint)
                    .fetch_one(&mut **tx)
                    .await
                    ?;
                known
                    .fingerprints
                    .insert(fingerprint.to_owned(), id);
                id
            }
        })
    }
}

writer_step! {
    /// Every benchmark name of `run` in `names` (the repository's, by id). They are looked up
    /// again only when one is not known yet: the repository's stored names first, and only
    /// when some are missing, those inserted and all read again.
    async fn ensure_names<DB>(
        tx: &mut sqlx::Transaction<'static, DB>,
        repository_id: i64,
        run: &NewRun,
        names: &mut HashMap<String, i64>,
    ) -> sqlx::Result<()> {
        // The names are looked up again only when one is not known yet: the repository's
        // stored names first, and only when some are missing, those inserted and all read again.
        if !run
            .measurements
            .iter()
            .all(|m| names.contains_key(m.id.as_str()))
        {
            *names = stored_names(tx, repository_id).await?;
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
                    insert.build().execute(&mut **tx).await?;
                }
                // Read back rather than `RETURNING`: SQLite builds a table of returned rows
                // per statement, which cost more than this one read (measured, docs/speed.md).
                *names = stored_names(tx, repository_id).await?;
            }
        }
        Ok(())
    }
}

writer_step! {
    /// The run's measurements, many rows to a statement, each with its encoded samples.
    async fn insert_measurements<DB>(
        tx: &mut sqlx::Transaction<'static, DB>,
        run_id: i64,
        rows: &[MeasurementRow<'_>],
        blobs: &mut [SampleBlobs],
    ) -> sqlx::Result<()> {
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
            insert.build().execute(&mut **tx).await?;
        }
        Ok(())
    }
}

writer_step! {
    /// The run's profiles by function, each beside its count measurement (checked to be one
    /// by [`check_function_costs`]).
    async fn insert_function_costs<DB>(
        tx: &mut sqlx::Transaction<'static, DB>,
        run_id: i64,
        documents: Vec<(i64, String)>,
    ) -> sqlx::Result<()> {
        for (benchmark_id, document) in documents {
            sqlx::query(
                "INSERT INTO function_costs (measurement_id, document) \
                 SELECT id, $1 FROM measurements WHERE run_id = $2 AND benchmark_id = $3",
            )
            .bind(document)
            .bind(run_id)
            .bind(benchmark_id)
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }
}

/// Refuses a profile of a benchmark the run does not measure, naming it; nothing is stored.
fn check_function_costs(run: &NewRun) -> Result<()> {
    for id in run.function_costs.keys() {
        if !run.measurements.iter().any(|m| &m.id == id) {
            return Err(profile_error(
                id,
                "a profile of a benchmark the run does not measure",
            ));
        }
    }
    Ok(())
}

/// The error naming the profile of `id`, for `reason`.
fn profile_error(id: &BenchmarkId, reason: &str) -> Error {
    Error::InvalidValue {
        path: "run".into(),
        field: format!("function_costs[{:?}]", id.as_str()),
        reason: reason.to_owned(),
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
