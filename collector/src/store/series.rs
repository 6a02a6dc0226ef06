//! Reads across runs: a benchmark's series, the statistic history the gate calibrates with,
//! the dashboard's trend rows, the CSV export's rows, and the fingerprints' components.

use super::rows::*;
use super::*;

impl Store {
    /// A per-iteration statistic of each benchmark over `runs`: per benchmark id, its values in
    /// the order of `runs` (runs without the benchmark or the statistic are skipped).
    pub async fn statistic_series(
        &self,
        runs: &[RunId],
        statistic: StoredStatistic,
    ) -> Result<HashMap<String, Vec<f64>>> {
        with_pool!(self, pool => {
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
                        .fetch_all(pool)
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
                    .fetch_all(pool)
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
                    .fetch_all(pool)
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
        })
    }

    /// One benchmark's median and minimum per run of `repository` on `fingerprint`, oldest
    /// first: (run, median ns, minimum ns, median interval).
    pub async fn benchmark_series(
        &self,
        repository: &RepositoryName,
        fingerprint: &Fingerprint,
        benchmark: &str,
    ) -> Result<Vec<SeriesPoint>> {
        with_pool!(self, pool => {
            let rows = sqlx::query(BENCHMARK_SERIES_SELECT)
                .bind(repository.as_str())
                .bind(fingerprint.as_str())
                .bind(benchmark)
                .fetch_all(pool)
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
        })
    }

    /// The profile by function stored with `benchmark`'s count in the newest trend run (neither
    /// a pull request's nor a bisect probe's) of `commit` on the machine `fingerprint`, if one
    /// was stored: what a dashboard page shows where a count changed.
    pub async fn function_costs_at(
        &self,
        repository: &str,
        fingerprint: &str,
        benchmark: &str,
        commit: &str,
    ) -> Result<Option<crate::callgrind::Profile>> {
        with_pool!(self, pool => {
            let document: Option<String> = sqlx::query_scalar(
                "SELECT fc.document FROM function_costs fc \
                 JOIN measurements m ON m.id = fc.measurement_id \
                 JOIN benchmarks b ON b.id = m.benchmark_id \
                 JOIN runs r ON r.id = m.run_id \
                 JOIN repositories repo ON repo.id = r.repository_id \
                 JOIN fingerprints f ON f.id = r.fingerprint_id \
                 WHERE repo.name = $1 AND f.hash = $2 AND b.name = $3 AND r.commit_sha = $4 \
                 AND r.kind <> 'pr' AND (r.branch IS NULL OR r.branch <> $5) \
                 ORDER BY r.id DESC LIMIT 1",
            )
            .bind(repository)
            .bind(fingerprint)
            .bind(benchmark)
            .bind(commit)
            .bind(BISECT_BRANCH)
            .fetch_optional(pool)
            .await
            .map_err(self.db_error())?;
            document
                .map(|document| {
                    let corrupt = |reason: String| Error::CorruptRow {
                        table: "function_costs",
                        reason: format!("{benchmark:?} at {commit}: {reason}"),
                    };
                    let document =
                        serde_json::from_str(&document).map_err(|e| corrupt(e.to_string()))?;
                    crate::callgrind::Profile::from_document(document).map_err(corrupt)
                })
                .transpose()
        })
    }

    /// Every measurement of every run that is neither a pull request's nor a bisect probe's
    /// ([`BISECT_BRANCH`]), for trends: (repository,
    /// fingerprint, benchmark, commit, recorded at ms, median, lower, upper), oldest run first.
    pub async fn trend_rows(&self) -> Result<Vec<TrendRow>> {
        with_pool!(self, pool => {
            // Each run's packed gate view holds every value a trend shows: one row per run
            // instead of a row per measurement, which sqlx copies value by value (most of the
            // dashboard's load time). Runs without a usable view (stored before it, or trimmed
            // by prune) are read from the measurements, their benchmarks' names once each.
            type RunRow = (i64, String, String, String, i64, Option<Vec<u8>>);
            let runs: Vec<RunRow> = sqlx::query_as(
                "SELECT r.id, repo.name, f.hash, r.commit_sha, r.recorded_at_ms, r.gate_view \
                 FROM runs r JOIN repositories repo ON repo.id = r.repository_id \
                 JOIN fingerprints f ON f.id = r.fingerprint_id \
                 WHERE r.kind <> 'pr' AND (r.branch IS NULL OR r.branch <> $1) \
                 ORDER BY r.recorded_at_ms, r.id",
            )
            .bind(BISECT_BRANCH)
            .fetch_all(pool)
            .await
            .map_err(self.db_error())?;
            let mut per_run: Vec<Vec<TrendValues>> = Vec::with_capacity(runs.len());
            let mut unpacked: Vec<RunId> = Vec::new();
            let mut position: HashMap<i64, usize> = HashMap::new();
            for (at, run) in runs.iter().enumerate() {
                match run.5.as_deref().and_then(decode_trend_view) {
                    Some(values) => per_run.push(values),
                    None => {
                        per_run.push(Vec::new());
                        unpacked.push(RunId::from_row(run.0));
                        position.insert(run.0, at);
                    }
                }
            }
            if !unpacked.is_empty() {
                let names: HashMap<i64, String> =
                    sqlx::query_as("SELECT id, name FROM benchmarks")
                        .fetch_all(pool)
                        .await
                        .map_err(self.db_error())?
                        .into_iter()
                        .collect();
                type Values = (
                    i64,
                    i64,
                    f64,
                    f64,
                    f64,
                    Option<f64>,
                    Option<String>,
                    Option<String>,
                    Option<String>,
                    Option<i64>,
                );
                for chunk in unpacked.chunks(500) {
                    let measurements: Vec<Values> = in_runs(
                        "SELECT m.run_id, m.benchmark_id, m.median_point, m.median_lower, \
                         m.median_upper, m.min_point, m.unit, m.direction, m.throughput_kind, \
                         m.throughput_amount FROM measurements m WHERE m.run_id IN (",
                        chunk,
                    )
                    .push(" ORDER BY m.run_id, m.id")
                    .build_query_as()
                    .fetch_all(pool)
                    .await
                    .map_err(self.db_error())?;
                    for (run, benchmark, median, lower, upper, min, unit, direction, kind, amount) in
                        measurements
                    {
                        let Some(&at) = position.get(&run) else {
                            continue;
                        };
                        let name = names.get(&benchmark).ok_or_else(|| Error::CorruptRow {
                            table: "measurements",
                            reason: format!("benchmark {benchmark} has no name"),
                        })?;
                        // Runs stored before the minimum was kept have none: their median.
                        per_run[at].push((
                            name.clone(),
                            median,
                            lower,
                            upper,
                            min.unwrap_or(median),
                            unit,
                            direction.as_deref() == Some("higher"),
                            kind.zip(amount.and_then(|a| u64::try_from(a).ok())),
                        ));
                    }
                }
            }
            let mut out = Vec::with_capacity(per_run.iter().map(Vec::len).sum());
            for ((_, repository, fingerprint, commit, recorded_at_ms, _), values) in
                runs.iter().zip(per_run)
            {
                for (benchmark, median, lower, upper, min, unit, higher_is_better, throughput) in
                    values
                {
                    out.push(TrendRow {
                        repository: repository.clone(),
                        fingerprint: fingerprint.clone(),
                        benchmark,
                        commit: commit.clone(),
                        recorded_at_ms: u64::try_from(*recorded_at_ms).unwrap_or(0),
                        median,
                        lower,
                        upper,
                        min,
                        unit,
                        higher_is_better,
                        throughput,
                    });
                }
            }
            Ok(out)
        })
    }

    /// Every measurement (of `repository`, recorded at or after `since`), oldest run first, one
    /// row at a time into `each`: for exports. Streams: memory does not grow with the store.
    pub async fn for_each_export_row(
        &self,
        repository: Option<&RepositoryName>,
        since: Option<SystemTime>,
        mut each: impl FnMut(&ExportRow) -> std::io::Result<()>,
    ) -> Result<usize> {
        with_pool!(self, pool => {
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
            .fetch(pool);
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
        })
    }

    /// Each fingerprint's hashed components, by hash, as (name, value) for people.
    pub async fn fingerprint_components(&self) -> Result<HashMap<String, Vec<(String, String)>>> {
        with_pool!(self, pool => {
            let rows = sqlx::query(
                "SELECT hash, cpu_arch, cpu_brand, physical_cores, logical_cores, memory_gib, \
                 os_name, os_major_version, runner_image, rustc_version FROM fingerprints",
            )
            .fetch_all(pool)
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
        })
    }
}
