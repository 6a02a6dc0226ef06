//! What only the service keeps: upload tokens (their hashes) and GitHub webhook deliveries
//! (deduplicated by delivery id, worked on after the answer).

use super::rows::*;
use super::*;

impl Store {
    /// Stores an upload token's hash for `repository`; returns the token's id.
    pub async fn create_token(&self, repository: &RepositoryName, hash: &str) -> Result<i64> {
        with_pool!(self, pool => {
            let db = self.db_error();
            let mut tx = pool.begin().await.map_err(&db)?;
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
        })
    }

    /// The repository a live (not revoked) token hash belongs to.
    pub async fn token_repository(&self, hash: &str) -> Result<Option<RepositoryName>> {
        with_pool!(self, pool => {
            let name: Option<String> = sqlx::query_scalar(
                "SELECT repo.name FROM tokens t JOIN repositories repo ON repo.id = t.repository_id \
                 WHERE t.hash = $1 AND t.revoked_at_ms IS NULL",
            )
            .bind(hash)
            .fetch_optional(pool)
            .await
            .map_err(self.db_error())?;
            Ok(name.map(|n| RepositoryName::parse(&n)).transpose()?)
        })
    }

    /// Revokes token `id`; `false` if there is no such live token.
    pub async fn revoke_token(&self, id: i64) -> Result<bool> {
        with_pool!(self, pool => {
            let done = sqlx::query(
                "UPDATE tokens SET revoked_at_ms = $2 WHERE id = $1 AND revoked_at_ms IS NULL",
            )
            .bind(id)
            .bind(now_ms())
            .execute(pool)
            .await
            .map_err(self.db_error())?;
            Ok(done.rows_affected() == 1)
        })
    }

    /// Every token: (id, repository, created, revoked).
    pub async fn list_tokens(&self) -> Result<Vec<TokenRecord>> {
        with_pool!(self, pool => {
            let rows: Vec<(i64, String, i64, Option<i64>)> = sqlx::query_as(
                "SELECT t.id, repo.name, t.created_at_ms, t.revoked_at_ms FROM tokens t \
                 JOIN repositories repo ON repo.id = t.repository_id ORDER BY t.id",
            )
            .fetch_all(pool)
            .await
            .map_err(self.db_error())?;
            Ok(rows
                .into_iter()
                .map(|(id, repository, created, revoked)| TokenRecord {
                    id,
                    repository,
                    created_at: from_ms(created),
                    revoked_at: revoked.map(from_ms),
                })
                .collect())
        })
    }

    /// Records a webhook delivery as pending; `false` if this delivery id was seen before.
    pub async fn record_delivery(
        &self,
        delivery_id: &str,
        event: &str,
        payload: &[u8],
    ) -> Result<bool> {
        with_pool!(self, pool => {
            let done = sqlx::query(
                "INSERT INTO webhook_deliveries (delivery_id, event, payload, received_at_ms, state) \
                 VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT (delivery_id) DO NOTHING",
            )
            .bind(delivery_id)
            .bind(event)
            .bind(payload)
            .bind(now_ms())
            .execute(pool)
            .await
            .map_err(self.db_error())?;
            Ok(done.rows_affected() == 1)
        })
    }

    /// Deliveries not yet worked on and not claimed by a live worker (see
    /// [`Store::claim_delivery`]), oldest first.
    pub async fn pending_deliveries(&self) -> Result<Vec<Delivery>> {
        with_pool!(self, pool => {
            let rows: Vec<(String, String, Vec<u8>)> = sqlx::query_as(
                "SELECT delivery_id, event, payload FROM webhook_deliveries \
                 WHERE state = 'pending' AND (claimed_until_ms IS NULL OR claimed_until_ms < $1) \
             ORDER BY received_at_ms, delivery_id",
            )
            .bind(now_ms())
            .fetch_all(pool)
            .await
            .map_err(self.db_error())?;
            Ok(rows
                .into_iter()
                .map(|(id, event, payload)| Delivery { id, event, payload })
                .collect())
        })
    }

    /// Claims a pending delivery for this worker for `lease`: `true` when no other worker holds
    /// a live claim on it (then it is this worker's to work on and finish), `false` when it is
    /// finished or another worker's. One conditional UPDATE, so of several service instances
    /// on one store exactly one wins; a claim whose worker died lapses after `lease`.
    pub async fn claim_delivery(&self, delivery_id: &str, lease: Duration) -> Result<bool> {
        let now = now_ms();
        let until = now.saturating_add(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX));
        with_pool!(self, pool => {
            let done = sqlx::query(
                "UPDATE webhook_deliveries SET claimed_until_ms = $2 WHERE delivery_id = $1 \
                 AND state = 'pending' AND (claimed_until_ms IS NULL OR claimed_until_ms < $3)",
            )
            .bind(delivery_id)
            .bind(until)
            .bind(now)
            .execute(pool)
            .await
            .map_err(self.db_error())?;
            Ok(done.rows_affected() == 1)
        })
    }

    /// Marks a delivery worked on: `failed` when `ok` is false; `outcome` says what happened.
    pub async fn finish_delivery(&self, delivery_id: &str, ok: bool, outcome: &str) -> Result<()> {
        with_pool!(self, pool => {
            sqlx::query(
                "UPDATE webhook_deliveries SET state = $2, outcome = $3 WHERE delivery_id = $1",
            )
            .bind(delivery_id)
            .bind(if ok { "done" } else { "failed" })
            .bind(outcome)
            .execute(pool)
            .await
            .map_err(self.db_error())?;
            Ok(())
        })
    }

    /// A delivery's state and outcome.
    pub async fn delivery(&self, delivery_id: &str) -> Result<Option<DeliveryState>> {
        with_pool!(self, pool => {
            let row: Option<(String, Option<String>)> =
                sqlx::query_as("SELECT state, outcome FROM webhook_deliveries WHERE delivery_id = $1")
                    .bind(delivery_id)
                    .fetch_optional(pool)
                    .await
                    .map_err(self.db_error())?;
            Ok(row.map(|(state, outcome)| DeliveryState { state, outcome }))
        })
    }
}
