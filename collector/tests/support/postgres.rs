//! A fresh PostgreSQL database per test, on the server `BENCHGATE_TEST_POSTGRES` names
//! (default `postgres://postgres@127.0.0.1:5432/postgres`, trust auth), dropped at the end.
//! Shared by the collector's store tests and the service's tests (`#[path]`-included there).
//!
//! Without a server, a test says so in one line and passes, unless `BENCHGATE_REQUIRE_POSTGRES`
//! is set (`.ci/run` sets it), so a fresh clone without PostgreSQL still runs `cargo test`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sqlx::Connection as _;

/// The server's maintenance database, where test databases are created and dropped.
fn admin_url() -> String {
    std::env::var("BENCHGATE_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// Runs `work` on a runtime of its own on another thread: callable from sync tests, from
/// inside a tokio test and from `Drop`.
fn on_own_runtime<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(work)
    })
    .join()
    .expect("the PostgreSQL helper thread")
}

async fn admin() -> Result<sqlx::PgConnection, String> {
    let url = admin_url();
    match tokio::time::timeout(Duration::from_secs(5), sqlx::PgConnection::connect(&url)).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(e)) => Err(format!("{url}: {e}")),
        Err(_) => Err(format!("{url}: no answer in 5 s")),
    }
}

/// A database created for one test and dropped (with its connections) when this drops.
pub struct FreshDatabase {
    /// `postgres://…/benchgate_test_…`, for `--db` or `Location::parse`.
    pub url: String,
    name: String,
}

impl FreshDatabase {
    /// A new empty database, or `None` when no server answers and none is required.
    pub fn create(test: &str) -> Option<Self> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "benchgate_test_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            test.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                .take(30)
                .collect::<String>()
                .to_ascii_lowercase()
        );
        let created = {
            let name = name.clone();
            on_own_runtime(async move {
                let mut admin = admin().await?;
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
                    .execute(&mut admin)
                    .await
                    .map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
                admin.close().await.map_err(|e| e.to_string())
            })
        };
        match created {
            Ok(()) => {}
            Err(why) if std::env::var_os("BENCHGATE_REQUIRE_POSTGRES").is_some() => {
                panic!("BENCHGATE_REQUIRE_POSTGRES is set, but PostgreSQL is not usable: {why}")
            }
            Err(why) => {
                eprintln!("skipped on PostgreSQL ({test}): {why}");
                return None;
            }
        }
        let admin = admin_url();
        let base = admin
            .rsplit_once('/')
            .map_or(admin.as_str(), |(base, _)| base);
        Some(Self {
            url: format!("{base}/{name}"),
            name,
        })
    }

    /// A connection to this database, for a test's own checks of what was stored.
    #[allow(dead_code)] // the service tests check through the service
    pub async fn connect(&self) -> sqlx::PgConnection {
        sqlx::PgConnection::connect(&self.url)
            .await
            .expect("connect to the test database")
    }
}

impl Drop for FreshDatabase {
    fn drop(&mut self) {
        let name = self.name.clone();
        let _ = on_own_runtime(async move {
            let mut admin = admin().await?;
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
            )))
            .execute(&mut admin)
            .await
            .map_err(|e| e.to_string())?;
            admin.close().await.map_err(|e| e.to_string())
        });
    }
}
