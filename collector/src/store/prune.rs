//! Retention: pull-request runs past a cutoff, measurements of benchmarks a repository no
//! longer runs, and finished webhook deliveries, in one transaction that a dry run rolls back.

use super::rows::*;
use super::*;

/// What [`Store::prune`] removes, and what it never touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrunePlan {
    /// Everything recorded before this may go; nothing recorded at or after it is touched.
    pub cutoff: SystemTime,
    /// Pull-request runs recorded before the cutoff (never a baseline or history: the gate
    /// takes those from push, nightly and local runs only).
    pub pr_runs: bool,
    /// Measurements, before the cutoff, of benchmarks that no run of their repository since
    /// the cutoff measured, while the repository has runs since then (a dormant repository
    /// keeps everything). A run left without measurements goes too.
    pub gone_benchmarks: bool,
    /// Webhook deliveries worked on (done or failed) and received before the cutoff.
    pub deliveries: bool,
    /// Per repository and machine, this many newest non-PR runs recorded before the cutoff are
    /// kept whole: they are the baseline and history a run since the cutoff is gated against.
    pub keep_history: usize,
    /// Report what would go, and change nothing.
    pub dry_run: bool,
}

/// What [`Store::prune`] removed (or, in a dry run, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Pull-request runs deleted, with their measurements.
    pub pr_runs: u64,
    /// Their measurements.
    pub pr_measurements: u64,
    /// Benchmarks no longer measured, by name (`repository: id`), sorted.
    pub gone_benchmarks: Vec<String>,
    /// Their measurements deleted.
    pub gone_measurements: u64,
    /// Runs left with no measurement by that, deleted.
    pub emptied_runs: u64,
    /// Webhook deliveries deleted.
    pub deliveries: u64,
}

impl Store {
    /// Removes what `plan` names, in one write transaction; with `dry_run` the same work is
    /// done and rolled back, so the report of a dry run is exactly what a real run removes.
    pub async fn prune(&self, plan: &PrunePlan) -> Result<PruneReport> {
        let db = self.db_error();
        let cutoff = epoch_ms(plan.cutoff);
        let keep = to_i64(plan.keep_history as u64)?;
        with_pool!(self, pool => {
            let repositories: Vec<String> = sqlx::query_scalar("SELECT name FROM repositories")
                .fetch_all(pool)
                .await
                .map_err(&db)?;
            let names: Vec<&str> = repositories.iter().map(String::as_str).collect();
            let mut tx = Engine::begin_write(pool, &names).await.map_err(&db)?;
            let mut report = PruneReport::default();

            if plan.pr_runs {
                let (runs, measurements): (i64, i64) = sqlx::query_as(
                    "SELECT COUNT(*), CAST(COALESCE(SUM(n_benchmarks), 0) AS BIGINT) FROM runs \
                     WHERE kind = 'pr' AND recorded_at_ms < $1",
                )
                .bind(cutoff)
                .fetch_one(&mut *tx)
                .await
                .map_err(&db)?;
                sqlx::query(
                    "DELETE FROM measurements WHERE run_id IN \
                     (SELECT id FROM runs WHERE kind = 'pr' AND recorded_at_ms < $1)",
                )
                .bind(cutoff)
                .execute(&mut *tx)
                .await
                .map_err(&db)?;
                sqlx::query("DELETE FROM runs WHERE kind = 'pr' AND recorded_at_ms < $1")
                    .bind(cutoff)
                    .execute(&mut *tx)
                    .await
                    .map_err(&db)?;
                report.pr_runs = u64::try_from(runs).unwrap_or(0);
                report.pr_measurements = u64::try_from(measurements).unwrap_or(0);
            }

            if plan.gone_benchmarks {
                prune_gone(&mut tx, cutoff, keep, &mut report)
                    .await
                    .map_err(&db)?;
            }

            if plan.deliveries {
                let deleted = sqlx::query(
                    "DELETE FROM webhook_deliveries \
                     WHERE state IN ('done', 'failed') AND received_at_ms < $1",
                )
                .bind(cutoff)
                .execute(&mut *tx)
                .await
                .map_err(&db)?;
                report.deliveries = deleted.rows_affected();
            }

            if plan.dry_run {
                tx.rollback().await.map_err(&db)?;
            } else {
                tx.commit().await.map_err(&db)?;
            }
            Ok(report)
        })
    }
}

/// Measurements of the benchmarks a repository no longer runs (see
/// [`PrunePlan::gone_benchmarks`]), removed from the runs before the cutoff that are not kept
/// whole; a run left empty goes, and a benchmark no run measures any more is forgotten.
async fn prune_gone<DB: Engine>(
    tx: &mut sqlx::Transaction<'static, DB>,
    cutoff: i64,
    keep: i64,
    report: &mut PruneReport,
) -> sqlx::Result<()>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
    for<'q> Vec<u8>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<Vec<u8>>: sqlx::Encode<'q, DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
    (i64, String, String): for<'r> sqlx::FromRow<'r, DB::Row>,
    (i64, Option<Vec<u8>>): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    // Benchmarks of a repository with runs since the cutoff that none of them
    // measured.
    let gone: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT b.id, repo.name, b.name FROM benchmarks b \
         JOIN repositories repo ON repo.id = b.repository_id \
         WHERE EXISTS (SELECT 1 FROM runs r WHERE r.repository_id = b.repository_id \
                       AND r.recorded_at_ms >= $1) \
         AND NOT EXISTS (SELECT 1 FROM measurements m JOIN runs r ON r.id = m.run_id \
                         WHERE m.benchmark_id = b.id AND r.recorded_at_ms >= $1) \
         ORDER BY repo.name, b.name",
    )
    .bind(cutoff)
    .fetch_all(&mut **tx)
    .await?;
    // The runs a run since the cutoff may be gated against stay whole: the newest
    // `keep` non-PR runs before the cutoff on each repository and machine.
    let protected: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM (SELECT r.id, ROW_NUMBER() OVER (\
             PARTITION BY r.repository_id, r.fingerprint_id \
             ORDER BY r.recorded_at_ms DESC, r.id DESC) AS newest \
         FROM runs r WHERE r.kind <> 'pr' AND r.recorded_at_ms < $1) AS ranked \
         WHERE newest <= $2",
    )
    .bind(cutoff)
    .bind(keep)
    .fetch_all(&mut **tx)
    .await?;
    let protected: std::collections::HashSet<i64> = protected.into_iter().collect();
    let gone_ids: std::collections::HashSet<i64> = gone.iter().map(|(id, _, _)| *id).collect();
    // Every run before the cutoff holding a gone benchmark, not protected.
    let mut touched: Vec<(i64, Option<Vec<u8>>)> = Vec::new();
    for chunk in gone.chunks(500) {
        let mut query = QueryBuilder::new(
            "SELECT DISTINCT r.id, r.statistics FROM runs r \
             JOIN measurements m ON m.run_id = r.id WHERE m.benchmark_id IN (",
        );
        let mut ids = query.separated(", ");
        for (id, _, _) in chunk {
            ids.push_bind(*id);
        }
        query.push(")");
        let rows: Vec<(i64, Option<Vec<u8>>)> = query.build_query_as().fetch_all(&mut **tx).await?;
        touched.extend(rows.into_iter().filter(|(run, _)| !protected.contains(run)));
    }
    touched.sort_unstable_by_key(|(run, _)| *run);
    touched.dedup_by_key(|(run, _)| *run);
    for (run, statistics) in touched {
        strip_run(tx, run, statistics, &gone_ids, report).await?;
    }
    // A gone benchmark stays named while a protected run still measures it.
    for (id, repository, name) in &gone {
        let still: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM measurements WHERE benchmark_id = $1")
                .bind(*id)
                .fetch_one(&mut **tx)
                .await?;
        if still == 0 {
            sqlx::query("DELETE FROM benchmarks WHERE id = $1")
                .bind(*id)
                .execute(&mut **tx)
                .await?;
        }
        report.gone_benchmarks.push(format!("{repository}: {name}"));
    }
    Ok(())
}

/// One run's measurements of the gone benchmarks removed, with their packed statistics; the
/// run itself when nothing is left of it.
async fn strip_run<DB: Engine>(
    tx: &mut sqlx::Transaction<'static, DB>,
    run: i64,
    statistics: Option<Vec<u8>>,
    gone_ids: &std::collections::HashSet<i64>,
    report: &mut PruneReport,
) -> sqlx::Result<()>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
    for<'q> Vec<u8>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<Vec<u8>>: sqlx::Encode<'q, DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    let count = |run: i64| {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM measurements WHERE run_id = $1")
            .bind(run)
    };
    // Counted before and after: the engines' query results share no count of rows.
    let before = count(run).fetch_one(&mut **tx).await?;
    let mut delete = QueryBuilder::new("DELETE FROM measurements WHERE run_id = ");
    delete.push_bind(run);
    delete.push(" AND benchmark_id IN (");
    let mut ids = delete.separated(", ");
    for id in gone_ids {
        ids.push_bind(*id);
    }
    delete.push(")");
    delete.build().execute(&mut **tx).await?;
    let left = count(run).fetch_one(&mut **tx).await?;
    report.gone_measurements += u64::try_from(before - left).unwrap_or(0);
    if left == 0 {
        sqlx::query("DELETE FROM runs WHERE id = $1")
            .bind(run)
            .execute(&mut **tx)
            .await?;
        report.emptied_runs += 1;
        return Ok(());
    }
    // The packed statistics lose the gone benchmarks too, or the history
    // would name a benchmark that is not there.
    let statistics = statistics
        .as_deref()
        .and_then(decode_run_statistics)
        .map(|entries| {
            let kept: Vec<_> = entries
                .into_iter()
                .filter(|(benchmark, _, _)| !gone_ids.contains(benchmark))
                .collect();
            encode_statistics_entries(&kept)
        });
    // The gate's view is dropped: the gate reads the measurements left instead.
    sqlx::query(
        "UPDATE runs SET n_benchmarks = $2, statistics = $3, gate_view = NULL \
         WHERE id = $1",
    )
    .bind(run)
    .bind(left)
    .bind(statistics)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
