//! The store on a real SQLite file: exact round trips, idempotent ingest, conflicts, replace,
//! and all-or-nothing transactions.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches fail loudly

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use benchgate_collector::criterion::read_tree;
use benchgate_collector::{
    CommitSha, Error, HardwareProfile, IngestOutcome, Measurement, NewRun, RepositoryName, RunKind,
    RunMeta, RustcInfo, Store, StoredStatistic, Throughput,
};
use sqlx::Connection;

fn corpus(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/corpus")
        .join(relative)
}

fn profile() -> HardwareProfile {
    let rustc =
        RustcInfo::parse("rustc 1.95.0 (59807616e 2026-04-14)\nhost: x86_64-unknown-linux-gnu\n")
            .unwrap();
    HardwareProfile::detect(&Default::default(), &rustc).unwrap()
}

fn new_run(measurements: Vec<Measurement>) -> NewRun {
    NewRun {
        meta: RunMeta {
            repository: RepositoryName::parse("dicethedev/MerkleForge").unwrap(),
            commit: CommitSha::parse("b288db9ef7427c7003a02530c22b46a385a3c251").unwrap(),
            branch: Some("main".into()),
            kind: RunKind::Push,
            pr_number: None,
            attempt: 1,
        },
        profile: profile(),
        recorded_at: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        measurements,
    }
}

fn merkle_forge() -> Vec<Measurement> {
    read_tree(&corpus("dicethedev__MerkleForge/target/criterion"), "new").unwrap()
}

async fn count(db: &Path, table: &str) -> i64 {
    let mut connection = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let sql = format!("SELECT COUNT(*) FROM {table}");
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(&mut connection)
        .await
        .unwrap();
    connection.close().await.unwrap();
    n
}

#[tokio::test]
async fn a_run_comes_back_exactly_as_it_went_in() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nested/dir/benchgate.db");
    let store = Store::open(&db).await.unwrap();
    let run = new_run(merkle_forge());
    let id = match store.ingest(&run).await.unwrap() {
        IngestOutcome::Created(id) => id,
        other => panic!("expected a new run, got {other:?}"),
    };
    let stored = store.get_run(id).await.unwrap();
    assert_eq!(
        stored.measurements, run.measurements,
        "every estimate and sample, bit for bit"
    );
    assert_eq!(stored.profile, run.profile);
    assert_eq!(stored.summary.fingerprint, run.profile.fingerprint());
    assert_eq!(stored.summary.n_benchmarks, 30);
    assert_eq!(stored.summary.recorded_at, run.recorded_at);
    assert_eq!(stored.summary.meta.kind, RunKind::Push);
    assert_eq!(stored.summary.meta.branch.as_deref(), Some("main"));
    let runs = store.list_runs().await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0], stored.summary);
    store.close().await;
    assert_eq!(count(&db, "measurements").await, 30);
}

#[tokio::test]
async fn the_database_is_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("benchgate.db");
    Store::open(&db).await.unwrap().close().await;
    let mut connection = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn ingesting_the_same_run_twice_stores_nothing_new() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("benchgate.db");
    let store = Store::open(&db).await.unwrap();
    let run = new_run(merkle_forge());
    let first = store.ingest(&run).await.unwrap();
    let mut later = run.clone();
    later.recorded_at += Duration::from_secs(60);
    let second = store.ingest(&later).await.unwrap();
    assert_eq!(second, IngestOutcome::Unchanged(first.run_id()));
    store.close().await;
    assert_eq!(count(&db, "runs").await, 1);
    assert_eq!(count(&db, "measurements").await, 30);
    assert_eq!(count(&db, "benchmarks").await, 30);
}

#[tokio::test]
async fn a_different_run_under_the_same_key_conflicts_unless_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("benchgate.db");
    let store = Store::open(&db).await.unwrap();
    let run = new_run(merkle_forge());
    let first = store.ingest(&run).await.unwrap().run_id();

    let mut different = run.clone();
    different.measurements.truncate(10);
    different.measurements[0].median.point *= 1.2;
    let error = store.ingest(&different).await.unwrap_err();
    assert!(
        matches!(error, Error::RunConflict { existing, .. } if existing == first.get()),
        "{error}"
    );
    assert!(error.to_string().contains("--replace"));
    assert_eq!(
        store.get_run(first).await.unwrap().measurements,
        run.measurements,
        "untouched by the conflict"
    );

    let outcome = store.replace(&different).await.unwrap();
    let IngestOutcome::Replaced { id, previous } = outcome else {
        panic!("expected a replacement, got {outcome:?}")
    };
    assert_eq!(previous, first);
    assert_ne!(id, first, "run ids are never reused");
    assert_eq!(
        store.get_run(id).await.unwrap().measurements,
        different.measurements
    );
    assert!(matches!(
        store.get_run(first).await,
        Err(Error::RunNotFound(_))
    ));

    let mut second_attempt = run.clone();
    second_attempt.meta.attempt = 2;
    assert!(matches!(
        store.ingest(&second_attempt).await.unwrap(),
        IngestOutcome::Created(_)
    ));
    store.close().await;
    assert_eq!(count(&db, "runs").await, 2);
    assert_eq!(count(&db, "measurements").await, 10 + 30);
}

#[tokio::test]
async fn a_failure_midway_leaves_no_half_written_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("benchgate.db");
    let store = Store::open(&db).await.unwrap();
    let mut run = new_run(merkle_forge());
    // The last measurement cannot be stored (an amount beyond SQLite's integers), so the run
    // row and the 29 measurements before it must roll back too.
    run.measurements.last_mut().unwrap().throughput = Some(Throughput::Bytes(u64::MAX));
    let error = store.ingest(&run).await.unwrap_err();
    assert!(error.to_string().contains("too large"), "{error}");
    assert!(store.list_runs().await.unwrap().is_empty());
    store.close().await;
    assert_eq!(count(&db, "runs").await, 0);
    assert_eq!(count(&db, "measurements").await, 0);
}

#[tokio::test]
async fn runs_of_several_repositories_and_trees_keep_their_own_benchmarks() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("benchgate.db")).await.unwrap();
    let merkle = store
        .ingest(&new_run(merkle_forge()))
        .await
        .unwrap()
        .run_id();
    let mut louds = new_run(read_tree(&corpus("laysakura__louds-rs/criterion"), "new").unwrap());
    louds.meta.repository = RepositoryName::parse("laysakura/louds-rs").unwrap();
    let louds_id = store.ingest(&louds).await.unwrap().run_id();
    assert_ne!(merkle, louds_id);
    let stored = store.get_run(louds_id).await.unwrap();
    assert_eq!(stored.measurements.len(), 30);
    assert!(
        stored.measurements[0]
            .id
            .as_str()
            .starts_with("[940c17e] Louds")
    );
    assert_eq!(
        stored.summary.meta.repository.as_str(),
        "laysakura/louds-rs"
    );
}

#[tokio::test]
async fn the_minimum_and_median_are_kept_as_columns_for_history() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("benchgate.db")).await.unwrap();
    let run = new_run(merkle_forge());
    let id = store.ingest(&run).await.unwrap().run_id();
    let minimums = store
        .statistic_series(&[id], StoredStatistic::Min)
        .await
        .unwrap();
    let medians = store
        .statistic_series(&[id], StoredStatistic::Median)
        .await
        .unwrap();
    assert_eq!((minimums.len(), medians.len()), (30, 30));
    for m in &run.measurements {
        let expected_min = m.samples.per_iteration().fold(f64::INFINITY, f64::min);
        assert_eq!(minimums[m.id.as_str()], [expected_min], "{}", m.id);
        assert_eq!(medians[m.id.as_str()], [m.median.point], "{}", m.id);
        assert!(expected_min < m.median.point);
    }
    // Runs stored before runs.statistics existed are read from the measurements, identically.
    store.close().await;
    let db = dir.path().join("benchgate.db");
    let mut connection = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query("UPDATE runs SET statistics = NULL")
        .execute(&mut connection)
        .await
        .unwrap();
    connection.close().await.unwrap();
    let store = Store::open(&db).await.unwrap();
    assert_eq!(
        store
            .statistic_series(&[id], StoredStatistic::Min)
            .await
            .unwrap(),
        minimums
    );
}

#[tokio::test]
async fn statistic_series_follow_the_order_of_the_runs_given() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("benchgate.db")).await.unwrap();
    let mut ids = Vec::new();
    for (attempt, factor) in [(1, 1.0), (2, 2.0), (3, 3.0)] {
        let mut run = new_run(merkle_forge());
        run.meta.attempt = attempt;
        for m in &mut run.measurements {
            m.median.point *= factor;
        }
        ids.push(store.ingest(&run).await.unwrap().run_id());
    }
    let reversed: Vec<_> = ids.iter().rev().copied().collect();
    let series = store
        .statistic_series(&reversed, StoredStatistic::Median)
        .await
        .unwrap();
    let first = merkle_forge()[0].median.point;
    assert_eq!(
        series[merkle_forge()[0].id.as_str()],
        [3.0 * first, 2.0 * first, first]
    );
}
