//! What `benchgate bisect` found for a step: recorded once per step (a rerun replaces it), read
//! back by the nightly (to bisect each step once) and the dashboard (to mark the culprit).

use super::rows::*;
use super::*;

/// One bisected step of one benchmark on one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bisection {
    /// The repository.
    pub repository: RepositoryName,
    /// The machine the step was seen and bisected on.
    pub fingerprint: String,
    /// The benchmark that took the step.
    pub benchmark: String,
    /// The last commit at the old level.
    pub good: CommitSha,
    /// The first commit at the new level.
    pub bad: CommitSha,
    /// `culprit`, `several`, `no-culprit` or `inconclusive`.
    pub outcome: String,
    /// The commits that made the step, oldest first.
    pub culprits: Vec<CommitSha>,
    /// The GitHub issue opened for it.
    pub issue_number: Option<u64>,
    /// The bisect report (JSON).
    pub report: String,
}

impl Store {
    /// Records a bisection, replacing an earlier one of the same step.
    pub async fn record_bisection(&self, bisection: &Bisection) -> Result<()> {
        let culprits: Vec<&str> = bisection.culprits.iter().map(CommitSha::as_str).collect();
        let issue = bisection.issue_number.map(to_i64).transpose()?;
        with_pool!(self, pool => {
            let db = self.db_error();
            let mut tx = pool.begin().await.map_err(&db)?;
            sqlx::query("INSERT INTO repositories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
                .bind(bisection.repository.as_str())
                .execute(&mut *tx)
                .await
                .map_err(&db)?;
            sqlx::query(
                "INSERT INTO bisections (repository_id, fingerprint, benchmark, good_sha, bad_sha, \
                 outcome, culprits, issue_number, report, created_at_ms) \
                 SELECT id, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM repositories WHERE name = $1 \
                 ON CONFLICT (repository_id, fingerprint, benchmark, good_sha, bad_sha) DO UPDATE SET \
                 outcome = excluded.outcome, culprits = excluded.culprits, \
                 issue_number = COALESCE(excluded.issue_number, bisections.issue_number), \
                 report = excluded.report, created_at_ms = excluded.created_at_ms",
            )
            .bind(bisection.repository.as_str())
            .bind(&bisection.fingerprint)
            .bind(&bisection.benchmark)
            .bind(bisection.good.as_str())
            .bind(bisection.bad.as_str())
            .bind(&bisection.outcome)
            .bind(culprits.join(" "))
            .bind(issue)
            .bind(&bisection.report)
            .bind(epoch_ms(SystemTime::now()))
            .execute(&mut *tx)
            .await
            .map_err(&db)?;
            tx.commit().await.map_err(&db)?;
            Ok(())
        })
    }

    /// Every recorded bisection, oldest first.
    pub async fn bisections(&self) -> Result<Vec<Bisection>> {
        type Row = (
            String,
            String,
            String,
            String,
            String,
            String,
            String,
            Option<i64>,
            String,
        );
        let rows: Vec<Row> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT repo.name, b.fingerprint, b.benchmark, b.good_sha, b.bad_sha, b.outcome, \
                 b.culprits, b.issue_number, b.report FROM bisections b \
                 JOIN repositories repo ON repo.id = b.repository_id ORDER BY b.id",
            )
            .fetch_all(pool)
            .await
            .map_err(self.db_error())?
        });
        rows.into_iter()
            .map(
                |(
                    repository,
                    fingerprint,
                    benchmark,
                    good,
                    bad,
                    outcome,
                    culprits,
                    issue,
                    report,
                )| {
                    Ok(Bisection {
                        repository: RepositoryName::parse(&repository)?,
                        fingerprint,
                        benchmark,
                        good: CommitSha::parse(&good)?,
                        bad: CommitSha::parse(&bad)?,
                        outcome,
                        culprits: culprits
                            .split_whitespace()
                            .map(CommitSha::parse)
                            .collect::<benchgate_core::Result<_>>()?,
                        issue_number: issue.and_then(|n| u64::try_from(n).ok()),
                        report,
                    })
                },
            )
            .collect()
    }
}
