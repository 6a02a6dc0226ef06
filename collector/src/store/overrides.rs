//! Maintainers' overrides: recorded once per head commit, read back by the publisher and the
//! dashboard.

use super::rows::*;
use super::*;

impl Store {
    /// Records a maintainer's override; `false` if this comment's override was already stored.
    pub async fn record_override(&self, record: &GateOverride) -> Result<bool> {
        with_pool!(self, pool => {
            let db = self.db_error();
            let mut tx = pool.begin().await.map_err(&db)?;
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
        })
    }

    /// The newest override of `repository`'s pull request `pr_number` at `head_sha`, if any.
    pub async fn override_for(
        &self,
        repository: &RepositoryName,
        pr_number: u64,
        head_sha: &CommitSha,
    ) -> Result<Option<GateOverride>> {
        with_pool!(self, pool => {
            let row: Option<(String, String, i64, i64)> = sqlx::query_as(
                "SELECT o.login, o.reason, o.comment_id, o.created_at_ms FROM overrides o \
                 JOIN repositories repo ON repo.id = o.repository_id \
                 WHERE repo.name = $1 AND o.pr_number = $2 AND o.head_sha = $3 ORDER BY o.id DESC LIMIT 1",
            )
            .bind(repository.as_str())
            .bind(to_i64(pr_number)?)
            .bind(head_sha.as_str())
            .fetch_optional(pool)
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
        })
    }

    /// The head commits a maintainer overrode the gate at, per repository.
    pub async fn overridden_commits(&self) -> Result<Vec<OverriddenCommit>> {
        with_pool!(self, pool => {
            let rows: Vec<(String, String)> = sqlx::query_as(
                "SELECT DISTINCT repo.name, o.head_sha FROM overrides o \
                 JOIN repositories repo ON repo.id = o.repository_id",
            )
            .fetch_all(pool)
            .await
            .map_err(self.db_error())?;
            Ok(rows
                .into_iter()
                .map(|(repository, head_sha)| OverriddenCommit {
                    repository,
                    head_sha,
                })
                .collect())
        })
    }
}
