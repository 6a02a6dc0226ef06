//! The store on both engines, a real SQLite file and a real PostgreSQL database: exact round
//! trips, idempotent ingest (also from many tasks at once), conflicts, replace, all-or-nothing
//! transactions, and webhook deliveries claimed once.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches fail loudly

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use benchgate_collector::criterion::read_tree;
use benchgate_collector::{
    BenchmarkId, CommitSha, Error, Estimate, HardwareProfile, IngestOutcome, Location, Measurement,
    NewRun, PrunePlan, PruneReport, RepositoryName, RunKind, RunMeta, RustcInfo, Samples, Store,
    StoredStatistic, Throughput,
};
use sqlx::Connection;

#[path = "support/postgres.rs"]
mod postgres;
use postgres::FreshDatabase;

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
        function_costs: Default::default(),
    }
}

fn merkle_forge() -> Vec<Measurement> {
    read_tree(&corpus("dicethedev__MerkleForge/target/criterion"), "new").unwrap()
}

/// A store on one engine for one test: a temporary SQLite file or a fresh PostgreSQL database.
enum TestStore {
    Sqlite(#[allow(dead_code)] tempfile::TempDir, PathBuf),
    Postgres(FreshDatabase),
}

impl TestStore {
    fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("nested/dir/benchgate.db");
        TestStore::Sqlite(dir, db)
    }

    fn postgres(test: &str) -> Option<Self> {
        FreshDatabase::create(test).map(TestStore::Postgres)
    }

    fn location(&self) -> Location {
        match self {
            TestStore::Sqlite(_, db) => Location::Sqlite(db.clone()),
            TestStore::Postgres(fresh) => Location::parse(&fresh.url),
        }
    }

    async fn open(&self) -> Store {
        Store::connect(&self.location()).await.unwrap()
    }

    /// Runs one statement on the database itself, beside the store.
    async fn execute(&self, sql: &str) {
        let sql = sqlx::AssertSqlSafe(sql.to_owned());
        match self {
            TestStore::Sqlite(_, db) => {
                let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
                    .await
                    .unwrap();
                sqlx::query(sql).execute(&mut c).await.unwrap();
                c.close().await.unwrap();
            }
            TestStore::Postgres(fresh) => {
                let mut c = fresh.connect().await;
                sqlx::query(sql).execute(&mut c).await.unwrap();
                c.close().await.unwrap();
            }
        }
    }

    /// The rows of `table`, counted by the database itself.
    async fn count(&self, table: &str) -> i64 {
        self.scalar(&format!("SELECT COUNT(*) FROM {table}")).await
    }

    /// The one integer `sql` selects, asked of the database itself.
    async fn scalar(&self, sql: &str) -> i64 {
        let sql = sqlx::AssertSqlSafe(sql.to_owned());
        match self {
            TestStore::Sqlite(_, db) => {
                let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
                    .await
                    .unwrap();
                let n = sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap();
                c.close().await.unwrap();
                n
            }
            TestStore::Postgres(fresh) => {
                let mut c = fresh.connect().await;
                let n = sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap();
                c.close().await.unwrap();
                n
            }
        }
    }

    /// `bytes` as a literal of the engine's blob type.
    fn blob_literal(&self, bytes: &[u8]) -> String {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        match self {
            TestStore::Sqlite(..) => format!("X'{hex}'"),
            TestStore::Postgres(_) => format!("'\\x{hex}'::bytea"),
        }
    }

    /// The SQL function giving a blob's length in bytes.
    fn length_function(&self) -> &'static str {
        match self {
            TestStore::Sqlite(..) => "length",
            TestStore::Postgres(_) => "octet_length",
        }
    }
}

/// `async fn $name(t: &TestStore)` run on each engine: `$name::sqlite` and `$name::postgres`.
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn sqlite() {
                    super::$name(&super::TestStore::sqlite()).await;
                }

                #[tokio::test]
                async fn postgres() {
                    if let Some(t) = super::TestStore::postgres(stringify!($name)) {
                        super::$name(&t).await;
                    }
                }
            }
        )*
    };
}

on_both_engines!(
    a_run_comes_back_exactly_as_it_went_in,
    samples_are_stored_in_a_quarter_of_the_bytes_and_older_rows_read_as_written,
    ingesting_the_same_run_twice_stores_nothing_new,
    a_different_run_under_the_same_key_conflicts_unless_replaced,
    a_run_stored_as_the_next_attempt_follows_the_highest_and_is_idempotent,
    a_failure_midway_leaves_no_half_written_run,
    runs_ingested_at_once_keep_their_own_outcomes,
    runs_of_several_repositories_and_trees_keep_their_own_benchmarks,
    a_later_run_adds_its_new_benchmarks_and_shares_the_kept_ones,
    the_minimum_and_median_are_kept_as_columns_for_history,
    statistic_series_follow_the_order_of_the_runs_given,
    the_gate_view_keeps_every_field_and_the_two_best_samples,
    many_tasks_ingesting_the_same_runs_store_each_once,
    a_delivery_is_claimed_by_one_worker_until_its_claim_lapses,
    prune_removes_old_pr_runs_gone_benchmarks_and_deliveries_and_keeps_the_history,
    a_bisection_is_kept_once_per_step_and_keeps_its_issue,
    a_counts_profile_by_function_is_kept_with_its_measurement,
);

async fn a_run_comes_back_exactly_as_it_went_in(t: &TestStore) {
    let store = t.open().await;
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
    assert_eq!(t.count("measurements").await, 30);
}

async fn samples_are_stored_in_a_quarter_of_the_bytes_and_older_rows_read_as_written(
    t: &TestStore,
) {
    let store = t.open().await;
    let run = new_run(merkle_forge());
    let id = store.ingest(&run).await.unwrap().run_id();
    store.close().await;
    assert_eq!(
        t.scalar("SELECT COUNT(*) FROM measurements WHERE sample_encoding = 1")
            .await,
        30
    );
    let length = t.length_function();
    let stored = t
        .scalar(&format!(
            "SELECT SUM({length}(sample_iters) + {length}(sample_times)) FROM measurements"
        ))
        .await;
    let as_f64s: usize = run
        .measurements
        .iter()
        .map(|m| 8 * (m.samples.iters().len() + m.samples.times().len()))
        .sum();
    // Real Criterion samples: the linear iteration counts take a byte each, the nanosecond
    // totals three or four.
    assert!(
        (stored as f64) < 0.3 * as_f64s as f64,
        "{stored} bytes stored for {as_f64s} bytes of f64s"
    );

    // A row written before the encoding (little-endian f64s, sample_encoding 0) reads as written.
    let legacy = &run.measurements[7];
    let f64s =
        |values: &[f64]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    t.execute(&format!(
        "UPDATE measurements SET sample_encoding = 0, sample_iters = {}, sample_times = {} \
         WHERE benchmark_id = (SELECT id FROM benchmarks WHERE name = '{}')",
        t.blob_literal(&f64s(legacy.samples.iters())),
        t.blob_literal(&f64s(legacy.samples.times())),
        legacy.id.as_str().replace('\'', "''"),
    ))
    .await;
    assert_eq!(
        t.scalar("SELECT COUNT(*) FROM measurements WHERE sample_encoding = 0")
            .await,
        1
    );
    let store = t.open().await;
    let stored = store.get_run(id).await.unwrap();
    assert_eq!(
        stored.measurements, run.measurements,
        "every sample, bit for bit, in either encoding"
    );

    // A blob that is not what its encoding says is refused, naming the benchmark and field.
    t.execute(&format!(
        "UPDATE measurements SET sample_times = {} \
         WHERE benchmark_id = (SELECT id FROM benchmarks WHERE name = '{}')",
        t.blob_literal(&[1, 2, 3]),
        legacy.id.as_str().replace('\'', "''"),
    ))
    .await;
    let error = store.get_run(id).await.unwrap_err().to_string();
    assert!(
        error.contains(legacy.id.as_str())
            && error.contains("sample_times is not an array of sample encoding 0"),
        "{error}"
    );
    store.close().await;
}

/// A run of 100 benchmarks × 10 samples under commit `commit`.
fn hundred_benchmarks(commit: u64) -> NewRun {
    let measurements = (0..100)
        .map(|i| {
            let ns = 100.0 + f64::from(i) * 13.0;
            let estimate = Estimate {
                point: ns,
                lower: ns * 0.99,
                upper: ns * 1.01,
                confidence_level: 0.95,
            };
            let iters: Vec<f64> = (1..=10).map(|k| f64::from(k) * 10.0).collect();
            let times = iters.iter().map(|n| (n * ns).round()).collect();
            Measurement {
                id: BenchmarkId::parse(&format!("codec/encode/{i:03}")).unwrap(),
                throughput: None,
                mean: estimate,
                median: estimate,
                sampling_mode: Some("Linear".into()),
                custom: None,
                samples: Samples::new(iters, times).unwrap(),
            }
        })
        .collect();
    let mut run = new_run(measurements);
    run.meta.commit = CommitSha::parse(&format!("{commit:040x}")).unwrap();
    run
}

/// The pages one more run of 100 benchmarks writes to SQLite's WAL (each written again at the
/// checkpoint): the store's `stored` runs are checkpointed first, so the WAL holds only the new
/// run's frames.
async fn pages_one_more_run_writes(db: &Path, stored: u64) -> i64 {
    let store = Store::open(db).await.unwrap();
    let runs: Vec<NewRun> = (1..=stored).map(hundred_benchmarks).collect();
    for chunk in runs.chunks(100) {
        store.ingest_all(chunk).await.unwrap();
    }
    let mut connection = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let (busy, _, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(busy, 0, "the checkpoint was blocked");
    store.ingest(&hundred_benchmarks(stored + 1)).await.unwrap();
    let (_, frames, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    connection.close().await.unwrap();
    store.close().await;
    frames
}

/// A run's measurements are appended together: storing one writes about as many pages into a
/// store of 400 runs as into a store of 4. An index of measurements by benchmark made a run of
/// N benchmarks touch N leaves of it, one per benchmark, once the store had a few hundred runs
/// (migrations/sqlite/0011).
#[tokio::test]
async fn a_run_writes_as_many_pages_to_a_large_store_as_to_a_small_one() {
    let dir = tempfile::tempdir().unwrap();
    let small = pages_one_more_run_writes(&dir.path().join("small.db"), 4).await;
    let large = pages_one_more_run_writes(&dir.path().join("large.db"), 400).await;
    assert!(
        (3..=30).contains(&small),
        "a run into a small store wrote {small} pages"
    );
    assert!(
        large <= small + 6,
        "a run into a store of 400 runs wrote {large} pages, against {small} into a store of 4"
    );
}

/// A connection of its own holding the SQLite store's write lock, as another process's writer
/// would, until it rolls back.
async fn lock_from_another_connection(db: &Path) -> sqlx::SqliteConnection {
    let mut holder = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut holder)
        .await
        .unwrap();
    holder
}

/// Runs queued behind a writer that finds the store locked by another process past the busy
/// timeout are answered busy with it: they waited for the same lock. Written again one at a
/// time, six runs would take six timeouts.
#[tokio::test]
async fn runs_queued_behind_a_locked_store_are_answered_busy_together() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("benchgate.db");
    let timeout = Duration::from_secs(1);
    let store = Store::open_with(&db, timeout).await.unwrap();
    let mut holder = lock_from_another_connection(&db).await;

    let started = std::time::Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for commit in 1..=6 {
        let store = store.clone();
        tasks.spawn(async move { store.ingest(&hundred_benchmarks(commit)).await });
    }
    let errors: Vec<Error> = tasks
        .join_all()
        .await
        .into_iter()
        .map(|outcome| outcome.unwrap_err())
        .collect();
    let took = started.elapsed();
    assert!(errors.iter().all(Error::is_busy), "{errors:?}");
    let with_a_batch = errors
        .iter()
        .filter(|e| matches!(e, Error::Busy { .. }))
        .count();
    assert!(with_a_batch >= 3, "{errors:?}");
    assert!(
        errors.iter().any(|e| e.to_string().contains("busy: ")),
        "{errors:?}"
    );
    assert!(took < timeout * 4, "six queued runs took {took:?}");

    sqlx::query("ROLLBACK").execute(&mut holder).await.unwrap();
    assert_eq!(store.list_runs().await.unwrap().len(), 0);
    let outcome = store.ingest(&hundred_benchmarks(1)).await.unwrap();
    assert!(matches!(outcome, IngestOutcome::Created(_)), "{outcome:?}");
    store.close().await;
}

/// A run whose caller goes away while it waits in the queue is not stored by the next write:
/// a request given up before its write began leaves nothing, as without the queue.
#[tokio::test]
async fn a_queued_run_whose_caller_went_away_is_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("benchgate.db");
    let store = Store::open_with(&db, Duration::from_secs(30))
        .await
        .unwrap();
    let mut holder = lock_from_another_connection(&db).await;

    // The first writer waits for the lock; the second queues behind it and is given up.
    let writer = tokio::spawn({
        let store = store.clone();
        async move { store.ingest(&hundred_benchmarks(1)).await }
    });
    tokio::task::yield_now().await;
    let given_up = tokio::spawn({
        let store = store.clone();
        async move { store.ingest(&hundred_benchmarks(2)).await }
    });
    tokio::task::yield_now().await;
    given_up.abort();
    assert!(given_up.await.unwrap_err().is_cancelled());

    sqlx::query("ROLLBACK").execute(&mut holder).await.unwrap();
    assert!(matches!(
        writer.await.unwrap().unwrap(),
        IngestOutcome::Created(_)
    ));
    store.ingest(&hundred_benchmarks(3)).await.unwrap();
    let commits: Vec<String> = store
        .list_runs()
        .await
        .unwrap()
        .iter()
        .map(|r| r.meta.commit.to_string())
        .collect();
    assert_eq!(commits, [format!("{:040x}", 1), format!("{:040x}", 3)]);
    store.close().await;
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

async fn ingesting_the_same_run_twice_stores_nothing_new(t: &TestStore) {
    let store = t.open().await;
    let run = new_run(merkle_forge());
    let first = store.ingest(&run).await.unwrap();
    let mut later = run.clone();
    later.recorded_at += Duration::from_secs(60);
    let second = store.ingest(&later).await.unwrap();
    assert_eq!(second, IngestOutcome::Unchanged(first.run_id()));
    store.close().await;
    assert_eq!(t.count("runs").await, 1);
    assert_eq!(t.count("measurements").await, 30);
    assert_eq!(t.count("benchmarks").await, 30);
}

async fn a_different_run_under_the_same_key_conflicts_unless_replaced(t: &TestStore) {
    let store = t.open().await;
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
    assert_eq!(t.count("runs").await, 2);
    assert_eq!(t.count("measurements").await, 10 + 30);
}

/// A nightly run of a commit measured the night before (or a re-run workflow) is stored as the
/// next attempt, whatever attempt it names; the same results again are the run already stored.
async fn a_run_stored_as_the_next_attempt_follows_the_highest_and_is_idempotent(t: &TestStore) {
    let store = t.open().await;
    let first = new_run(merkle_forge());
    let one = store.ingest_next_attempt(&first).await.unwrap();
    assert!(matches!(one, IngestOutcome::Created(_)), "{one:?}");

    let night = |factor: f64| {
        let mut run = first.clone();
        run.measurements[0].median.point *= factor;
        run
    };
    let second = night(1.1);
    let two = store.ingest_next_attempt(&second).await.unwrap();
    assert!(matches!(two, IngestOutcome::Created(_)), "{two:?}");
    // Attempt 5 taken by hand: the next is 6, not 3.
    let mut fifth = night(1.2);
    fifth.meta.attempt = 5;
    store.ingest(&fifth).await.unwrap();
    let third = night(1.3);
    let six = store.ingest_next_attempt(&third).await.unwrap();
    // The same results again, naming attempt 1 or any other: unchanged, wherever they are.
    assert_eq!(
        store.ingest_next_attempt(&second).await.unwrap(),
        IngestOutcome::Unchanged(two.run_id())
    );
    assert_eq!(
        store.ingest_next_attempt(&first).await.unwrap(),
        IngestOutcome::Unchanged(one.run_id())
    );
    // Another kind of run of the same commit is a key of its own: attempt 1.
    let mut pr = night(1.4);
    pr.meta.kind = RunKind::Pr;
    store.ingest_next_attempt(&pr).await.unwrap();

    let mut attempts: Vec<(i64, RunKind, u32)> = store
        .list_runs()
        .await
        .unwrap()
        .iter()
        .map(|r| (r.id.get(), r.meta.kind, r.meta.attempt))
        .collect();
    attempts.sort_by_key(|(id, _, _)| *id);
    let kind = first.meta.kind;
    assert_eq!(
        attempts,
        [
            (one.run_id().get(), kind, 1),
            (two.run_id().get(), kind, 2),
            (two.run_id().get() + 1, kind, 5),
            (six.run_id().get(), kind, 6),
            (six.run_id().get() + 1, RunKind::Pr, 1),
        ]
    );
    assert_eq!(
        store.get_run(six.run_id()).await.unwrap().measurements,
        third.measurements
    );
    store.close().await;
}

async fn a_failure_midway_leaves_no_half_written_run(t: &TestStore) {
    let store = t.open().await;
    let mut run = new_run(merkle_forge());
    // The last measurement cannot be stored (an amount beyond the store's integers), so the run
    // row and the 29 measurements before it must roll back too.
    run.measurements.last_mut().unwrap().throughput = Some(Throughput::Bytes(u64::MAX));
    let error = store.ingest(&run).await.unwrap_err();
    assert!(error.to_string().contains("too large"), "{error}");
    assert!(store.list_runs().await.unwrap().is_empty());
    store.close().await;
    assert_eq!(t.count("runs").await, 0);
    assert_eq!(t.count("measurements").await, 0);
}

/// Runs ingested at once are written together (one transaction, a savepoint each): a run that
/// conflicts and a run that fails midway get their own errors and leave nothing, and every
/// other run is stored whole with its own outcome.
async fn runs_ingested_at_once_keep_their_own_outcomes(t: &TestStore) {
    let store = t.open().await;
    let stored = new_run(merkle_forge());
    store.ingest(&stored).await.unwrap();
    let mut runs: Vec<NewRun> = (2..=11)
        .map(|attempt| {
            let mut run = new_run(merkle_forge());
            run.meta.attempt = attempt;
            run
        })
        .collect();
    let mut conflicting = stored.clone();
    conflicting.measurements[0].mean.point *= 1.5;
    runs.insert(3, conflicting);
    let mut failing = new_run(merkle_forge());
    failing.meta.attempt = 12;
    failing.measurements.last_mut().unwrap().throughput = Some(Throughput::Bytes(u64::MAX));
    runs.insert(7, failing);

    let mut tasks = tokio::task::JoinSet::new();
    for run in runs {
        let store = store.clone();
        tasks.spawn(async move { (run.meta.attempt, store.ingest(&run).await) });
    }
    let mut outcomes = tasks.join_all().await;
    outcomes.sort_by_key(|(attempt, outcome)| (*attempt, outcome.is_ok()));
    assert_eq!(outcomes.len(), 12);
    let (attempt, conflict) = &outcomes[0];
    assert_eq!(*attempt, 1);
    assert!(
        matches!(conflict, Err(Error::RunConflict { attempt: 1, .. })),
        "{conflict:?}"
    );
    for (attempt, outcome) in &outcomes[1..11] {
        assert!(
            matches!(outcome, Ok(IngestOutcome::Created(_))),
            "attempt {attempt}: {outcome:?}"
        );
    }
    let (attempt, failed) = &outcomes[11];
    assert_eq!(*attempt, 12);
    let error = failed.as_ref().unwrap_err().to_string();
    assert!(error.contains("too large"), "{error}");

    let attempts: Vec<u32> = store
        .list_runs()
        .await
        .unwrap()
        .iter()
        .map(|r| r.meta.attempt)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(attempts, (1..=11).collect::<Vec<_>>());
    // The stored run kept its results: the conflicting one changed nothing.
    let first = store.list_runs().await.unwrap()[0].id;
    let back = store.get_run(first).await.unwrap();
    let mut expected = stored.measurements.clone();
    expected.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(back.measurements, expected);

    // A new repository whose first run fails in the batch: what it stored is rolled back, and
    // the runs after it store the repository and its benchmarks again.
    let fresh = RepositoryName::parse("acme/fresh").unwrap();
    let mut leader = new_run(merkle_forge());
    leader.meta.attempt = 20;
    let mut batch = vec![leader];
    for attempt in [3, 1, 2] {
        let mut run = new_run(merkle_forge());
        run.meta.repository = fresh.clone();
        run.meta.attempt = attempt;
        batch.push(run);
    }
    batch[1].measurements.last_mut().unwrap().throughput = Some(Throughput::Bytes(u64::MAX));
    // One at a time, each let run until it waits (the first writing, the others queued behind
    // it in this order), so the failing run is written before the others of its repository.
    let mut tasks = tokio::task::JoinSet::new();
    for (k, run) in batch.into_iter().enumerate() {
        let store = store.clone();
        tasks.spawn(async move { (k, store.ingest(&run).await) });
        tokio::task::yield_now().await;
    }
    let mut outcomes = tasks.join_all().await;
    outcomes.sort_by_key(|(k, _)| *k);
    let error = outcomes[1].1.as_ref().unwrap_err().to_string();
    assert!(error.contains("too large"), "{error}");
    for k in [0, 2, 3] {
        assert!(
            matches!(outcomes[k].1, Ok(IngestOutcome::Created(_))),
            "{:?}",
            outcomes[k].1
        );
    }
    let fresh_runs: Vec<_> = store
        .list_runs()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.meta.repository == fresh)
        .collect();
    assert_eq!(fresh_runs.len(), 2);
    for run in &fresh_runs {
        assert_eq!(store.get_run(run.id).await.unwrap().measurements.len(), 30);
    }

    store.close().await;
    assert_eq!(t.count("runs").await, 14);
    assert_eq!(t.count("measurements").await, 14 * 30);
    assert_eq!(t.count("repositories").await, 2);
}

/// A run's names are looked up first and only the missing ones inserted, in statements of 100
/// rows: 150 new names (two statements) beside 50 kept ones.
async fn a_later_run_adds_its_new_benchmarks_and_shares_the_kept_ones(t: &TestStore) {
    let store = t.open().await;
    store.ingest(&hundred_benchmarks(1)).await.unwrap();
    let mut later = hundred_benchmarks(2);
    let template = later.measurements[0].clone();
    later.measurements.truncate(50);
    for i in 0..150 {
        let mut added = template.clone();
        added.id = BenchmarkId::parse(&format!("codec/decode/{i:03}")).unwrap();
        added.median.point = 1000.0 + f64::from(i);
        later.measurements.push(added);
    }
    later.measurements.sort_by(|a, b| a.id.cmp(&b.id));
    let id = store.ingest(&later).await.unwrap().run_id();
    let stored = store.get_run(id).await.unwrap();
    assert_eq!(stored.measurements, later.measurements);
    store.close().await;
    assert_eq!(t.count("benchmarks").await, 250);
    assert_eq!(
        t.scalar(
            "SELECT COUNT(*) FROM measurements m JOIN benchmarks b ON b.id = m.benchmark_id \
             WHERE b.name = 'codec/encode/049'"
        )
        .await,
        2,
        "a kept benchmark is one benchmark in both runs"
    );
    assert_eq!(
        t.scalar("SELECT COUNT(DISTINCT benchmark_id) FROM measurements")
            .await,
        250
    );
}

async fn runs_of_several_repositories_and_trees_keep_their_own_benchmarks(t: &TestStore) {
    let store = t.open().await;
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

async fn the_minimum_and_median_are_kept_as_columns_for_history(t: &TestStore) {
    let store = t.open().await;
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
    t.execute("UPDATE runs SET statistics = NULL").await;
    let store = t.open().await;
    assert_eq!(
        store
            .statistic_series(&[id], StoredStatistic::Min)
            .await
            .unwrap(),
        minimums
    );
}

async fn the_gate_view_keeps_every_field_and_the_two_best_samples(t: &TestStore) {
    use benchgate_collector::{CustomMetric, Direction, Estimate, Samples};
    let store = t.open().await;
    let mut measurements = merkle_forge();
    // A higher-is-better custom metric (its best samples are its highest) and a single count.
    let custom = |id: &str, direction: Direction, values: Vec<f64>| Measurement {
        id: benchgate_collector::BenchmarkId::parse(id).unwrap(),
        throughput: None,
        mean: Estimate {
            point: values[0],
            lower: values[0],
            upper: values[0],
            confidence_level: 0.95,
        },
        median: Estimate {
            point: values[0],
            lower: values[0],
            upper: values[0],
            confidence_level: 0.95,
        },
        sampling_mode: None,
        samples: Samples::new(vec![1.0; values.len()], values).unwrap(),
        custom: Some(CustomMetric {
            unit: if direction == Direction::HigherIsBetter {
                "ops/s".into()
            } else {
                "instructions".into()
            },
            direction,
        }),
    };
    measurements.push(custom(
        "metrics/throughput",
        Direction::HigherIsBetter,
        vec![5.0, 9.0, 7.0, 8.5],
    ));
    measurements.push(custom(
        "metrics/instructions",
        Direction::LowerIsBetter,
        vec![1234.0],
    ));
    let id = store
        .ingest(&new_run(measurements.clone()))
        .await
        .unwrap()
        .run_id();
    let view = store.gate_view(id).await.unwrap().unwrap();
    let stored = store.get_run(id).await.unwrap().measurements;
    assert_eq!(view.len(), 32);
    for (seen, whole) in view.iter().zip(&stored) {
        assert_eq!(seen.id, whole.id);
        assert_eq!(
            (
                &seen.throughput,
                &seen.mean,
                &seen.median,
                &seen.sampling_mode,
                &seen.custom
            ),
            (
                &whole.throughput,
                &whole.mean,
                &whole.median,
                &whole.sampling_mode,
                &whole.custom
            ),
            "{}",
            whole.id
        );
        let mut best: Vec<f64> = whole.samples.per_iteration().collect();
        best.sort_by(f64::total_cmp);
        if whole.custom.as_ref().map(|c| c.direction) == Some(Direction::HigherIsBetter) {
            best.reverse();
        }
        let expected = if best.len() == 1 {
            vec![best[0], best[0]]
        } else {
            best[..2].to_vec()
        };
        assert_eq!(
            seen.samples.per_iteration().collect::<Vec<_>>(),
            expected,
            "{}: the two best, bit for bit",
            whole.id
        );
    }
    let by_id = |name: &str| view.iter().find(|m| m.id.as_str() == name).unwrap();
    assert_eq!(by_id("metrics/throughput").samples.times(), [9.0, 8.5]);
    assert_eq!(
        by_id("metrics/instructions").samples.times(),
        [1234.0, 1234.0]
    );
    // The dashboard's trend reads the same values from the views as from the measurements,
    // in the same order, for a run with a view beside one without.
    let mut second = new_run(measurements.clone());
    second.meta.attempt = 2;
    let second = store.ingest(&second).await.unwrap().run_id();
    let from_views = store.trend_rows().await.unwrap();
    assert_eq!(from_views.len(), 64);
    let row = |rows: &[benchgate_collector::store::TrendRow], name: &str| {
        rows.iter().find(|r| r.benchmark == name).unwrap().clone()
    };
    let throughput = row(&from_views, "metrics/throughput");
    assert_eq!(
        (throughput.min, throughput.median),
        (9.0, 5.0),
        "its highest"
    );
    assert_eq!(throughput.unit.as_deref(), Some("ops/s"));
    assert_eq!(row(&from_views, "metrics/instructions").min, 1234.0);
    assert_eq!(row(&from_views, &stored[0].id.to_string()).unit, None);
    // A run stored before the view existed has none: the gate reads its measurements.
    store.close().await;
    t.execute(&format!(
        "UPDATE runs SET gate_view = NULL WHERE id = {}",
        second.get()
    ))
    .await;
    let store = t.open().await;
    assert_eq!(store.trend_rows().await.unwrap(), from_views);
    store.close().await;
    t.execute("UPDATE runs SET gate_view = NULL").await;
    let store = t.open().await;
    assert_eq!(store.trend_rows().await.unwrap(), from_views);
    assert!(store.gate_view(id).await.unwrap().is_none());
    assert!(matches!(
        store
            .gate_view(benchgate_collector::RunId::parse(&(second.get() + 1).to_string()).unwrap())
            .await,
        Err(benchgate_collector::Error::RunNotFound(_))
    ));
    store.close().await;
}

async fn statistic_series_follow_the_order_of_the_runs_given(t: &TestStore) {
    let store = t.open().await;
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

async fn many_tasks_ingesting_the_same_runs_store_each_once(t: &TestStore) {
    // Four stores on one database, as four service instances would be, each ingesting the
    // same five runs from four tasks at once: the database, not one process, keeps them once.
    let runs: Vec<NewRun> = (1..=5)
        .map(|attempt| {
            let mut run = new_run(merkle_forge());
            run.meta.attempt = attempt;
            run
        })
        .collect();
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(t.open().await);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for store in &stores {
        for _ in 0..4 {
            let store = store.clone();
            let runs = runs.clone();
            tasks.spawn(async move {
                let mut outcomes = Vec::new();
                for run in &runs {
                    outcomes.push(store.ingest(run).await.unwrap());
                }
                outcomes
            });
        }
    }
    let outcomes: Vec<IngestOutcome> = tasks.join_all().await.into_iter().flatten().collect();
    let created = outcomes
        .iter()
        .filter(|o| matches!(o, IngestOutcome::Created(_)))
        .count();
    assert_eq!(outcomes.len(), 5 * 16);
    assert_eq!(
        created, 5,
        "each run created once, found unchanged 15 times"
    );
    for store in stores {
        store.close().await;
    }
    assert_eq!(t.count("runs").await, 5);
    assert_eq!(t.count("measurements").await, 5 * 30);
    assert_eq!(t.count("benchmarks").await, 30);
}

async fn a_delivery_is_claimed_by_one_worker_until_its_claim_lapses(t: &TestStore) {
    let first = t.open().await;
    let second = t.open().await;
    assert!(first.record_delivery("d-1", "ping", b"{}").await.unwrap());
    assert!(!second.record_delivery("d-1", "ping", b"{}").await.unwrap());
    let lease = Duration::from_secs(600);
    assert!(first.claim_delivery("d-1", lease).await.unwrap());
    assert!(!second.claim_delivery("d-1", lease).await.unwrap());
    assert!(
        second.pending_deliveries().await.unwrap().is_empty(),
        "a claimed delivery is not offered to other workers"
    );
    // A worker that died holding a claim: it lapses, and another worker takes the delivery.
    t.execute("UPDATE webhook_deliveries SET claimed_until_ms = 1")
        .await;
    assert_eq!(second.pending_deliveries().await.unwrap()[0].id, "d-1");
    assert!(second.claim_delivery("d-1", lease).await.unwrap());
    second.finish_delivery("d-1", true, "done").await.unwrap();
    assert!(
        !first.claim_delivery("d-1", lease).await.unwrap(),
        "finished"
    );
    assert_eq!(first.delivery("d-1").await.unwrap().unwrap().state, "done");

    // Many workers racing for many deliveries: each delivery is won exactly once.
    for i in 0..20 {
        first
            .record_delivery(&format!("race-{i}"), "ping", b"{}")
            .await
            .unwrap();
    }
    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..6 {
        let store = if worker % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        tasks.spawn(async move {
            let mut won = Vec::new();
            for i in 0..20 {
                let id = format!("race-{i}");
                if store.claim_delivery(&id, lease).await.unwrap() {
                    won.push(id);
                }
            }
            won
        });
    }
    let mut won: Vec<String> = tasks.join_all().await.into_iter().flatten().collect();
    won.sort();
    let mut expected: Vec<String> = (0..20).map(|i| format!("race-{i}")).collect();
    expected.sort();
    assert_eq!(won, expected);
    first.close().await;
    second.close().await;
}

async fn prune_removes_old_pr_runs_gone_benchmarks_and_deliveries_and_keeps_the_history(
    t: &TestStore,
) {
    let store = t.open().await;
    let day = Duration::from_secs(86_400);
    let now = std::time::SystemTime::now();
    let all = merkle_forge();
    // The suite dropped its first five benchmarks: the recent runs no longer measure them.
    let gone: Vec<String> = all[..5].iter().map(|m| m.id.to_string()).collect();
    let kept = all[5..].to_vec();
    let run_at = |kind: RunKind, attempt: u32, days_ago: u32, measurements: Vec<Measurement>| {
        let mut run = new_run(measurements);
        run.meta.kind = kind;
        run.meta.attempt = attempt;
        if kind == RunKind::Pr {
            run.meta.pr_number = Some(7);
        }
        run.recorded_at = now - day * days_ago;
        run
    };
    let mut ids = std::collections::HashMap::new();
    for (name, run) in [
        (
            "old push 5",
            run_at(RunKind::Push, 5, 200, all[..5].to_vec()),
        ),
        ("old push 1", run_at(RunKind::Push, 1, 199, all.clone())),
        ("old push 2", run_at(RunKind::Push, 2, 198, all.clone())),
        ("old push 3", run_at(RunKind::Push, 3, 197, all.clone())),
        ("old push 4", run_at(RunKind::Push, 4, 196, all.clone())),
        ("old pr 1", run_at(RunKind::Pr, 1, 198, all.clone())),
        ("old pr 2", run_at(RunKind::Pr, 2, 197, all.clone())),
        ("new pr", run_at(RunKind::Pr, 3, 1, kept.clone())),
        ("new push", run_at(RunKind::Push, 6, 1, kept.clone())),
    ] {
        ids.insert(name, store.ingest(&run).await.unwrap().run_id());
    }
    for id in ["old done", "old pending", "new done"] {
        store.record_delivery(id, "ping", b"{}").await.unwrap();
    }
    store.finish_delivery("old done", true, "ok").await.unwrap();
    store.finish_delivery("new done", true, "ok").await.unwrap();
    t.execute(
        "UPDATE webhook_deliveries SET received_at_ms = 1000 WHERE delivery_id <> 'new done'",
    )
    .await;
    let (runs, measurements) = (t.count("runs").await, t.count("measurements").await);
    assert_eq!((runs, measurements), (9, 5 + 4 * 30 + 2 * 30 + 2 * 25));

    let mut plan = PrunePlan {
        cutoff: now - day * 100,
        pr_runs: true,
        gone_benchmarks: true,
        deliveries: true,
        keep_history: 2,
        dry_run: true,
    };
    let dry = store.prune(&plan).await.unwrap();
    let mut gone_named: Vec<String> = gone
        .iter()
        .map(|id| format!("dicethedev/MerkleForge: {id}"))
        .collect();
    gone_named.sort();
    let expected = PruneReport {
        pr_runs: 2,
        pr_measurements: 60,
        gone_benchmarks: gone_named,
        // Old pushes 1, 2 and 5; pushes 3 and 4 are the newest two before the cutoff.
        gone_measurements: 15,
        emptied_runs: 1,
        deliveries: 1,
    };
    assert_eq!(dry, expected);
    assert_eq!(
        (t.count("runs").await, t.count("measurements").await),
        (runs, measurements),
        "a dry run changes nothing"
    );
    assert_eq!(t.count("webhook_deliveries").await, 3);

    plan.dry_run = false;
    assert_eq!(store.prune(&plan).await.unwrap(), expected);
    assert_eq!(t.count("runs").await, 9 - 2 - 1);
    assert_eq!(t.count("measurements").await, measurements - 60 - 15);
    assert_eq!(t.count("webhook_deliveries").await, 2);
    let listed: Vec<_> = store
        .list_runs()
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    for name in ["old push 5", "old pr 1", "old pr 2"] {
        assert!(!listed.contains(&ids[name]), "{name} removed");
    }
    for name in ["old push 1", "old push 2"] {
        let run = store.get_run(ids[name]).await.unwrap();
        assert_eq!(run.summary.n_benchmarks, 25, "{name}");
        assert_eq!(
            run.measurements, kept,
            "{name}: the others untouched, bit for bit"
        );
    }
    for name in ["old push 3", "old push 4", "new pr", "new push"] {
        let run = store.get_run(ids[name]).await.unwrap();
        let expected = if name.starts_with("new") { &kept } else { &all };
        assert_eq!(&run.measurements, expected, "{name} kept whole");
    }
    // The gate's view of a run that lost measurements is dropped (the gate then reads what is
    // left); an untouched run keeps its own.
    for name in ["old push 1", "old push 2"] {
        assert!(
            store.gate_view(ids[name]).await.unwrap().is_none(),
            "{name}"
        );
    }
    let view = store.gate_view(ids["new push"]).await.unwrap().unwrap();
    assert_eq!(view.len(), 25);
    // The packed history no longer names a removed measurement, and still reads.
    let history = store
        .statistic_series(
            &[ids["old push 1"], ids["old push 3"], ids["new push"]],
            StoredStatistic::Median,
        )
        .await
        .unwrap();
    assert_eq!(
        history[gone[0].as_str()],
        [all[0].median.point],
        "only push 3's"
    );
    assert_eq!(history[kept[0].id.as_str()].len(), 3);
    // Pruning again finds nothing more.
    let again = store.prune(&plan).await.unwrap();
    assert_eq!(
        (again.pr_runs, again.gone_measurements, again.deliveries),
        (0, 0, 0)
    );
    store.close().await;
}

async fn a_bisection_is_kept_once_per_step_and_keeps_its_issue(t: &TestStore) {
    use benchgate_collector::{Bisection, CommitSha, RepositoryName};
    let store = t.open().await;
    let sha = |c: char| CommitSha::parse(&c.to_string().repeat(40)).unwrap();
    let mut bisection = Bisection {
        repository: RepositoryName::parse("acme/rocket").unwrap(),
        fingerprint: "f".repeat(64),
        benchmark: "parse/json".into(),
        good: sha('a'),
        bad: sha('d'),
        outcome: "several".into(),
        culprits: vec![sha('b'), sha('c')],
        issue_number: Some(7),
        report: "{}".into(),
    };
    store.record_bisection(&bisection).await.unwrap();
    assert_eq!(store.bisections().await.unwrap(), [bisection.clone()]);

    // A rerun of the same step replaces it, and keeps the issue it does not name.
    bisection.outcome = "culprit".into();
    bisection.culprits = vec![sha('c')];
    bisection.issue_number = None;
    store.record_bisection(&bisection).await.unwrap();
    let stored = store.bisections().await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].outcome, "culprit");
    assert_eq!(stored[0].culprits, [sha('c')]);
    assert_eq!(stored[0].issue_number, Some(7));

    // Another step of the same benchmark is its own row.
    bisection.good = sha('d');
    bisection.bad = sha('e');
    store.record_bisection(&bisection).await.unwrap();
    assert_eq!(store.bisections().await.unwrap().len(), 2);
    store.close().await;
}

/// A run's profiles by function come back as stored, kept to their largest functions; a profile
/// of a benchmark the run does not measure is refused whole; replacing or deleting the run takes
/// its profiles with it.
async fn a_counts_profile_by_function_is_kept_with_its_measurement(t: &TestStore) {
    use benchgate_collector::callgrind::{INSTRUCTIONS, Profile};
    let store = t.open().await;
    let seal = Profile::read(
        &[Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/callgrind/seal-base.out")],
        INSTRUCTIONS,
    )
    .unwrap()
    .keep_largest(5);
    let mut run = new_run(merkle_forge());
    let counted = run.measurements[3].id.clone();
    run.function_costs.insert(counted.clone(), seal.clone());
    let id = store.ingest(&run).await.unwrap().run_id();
    let stored = store.function_costs(id).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[&counted], seal);
    assert_eq!(stored[&counted].omitted, 18, "23 functions, 5 kept");
    assert_eq!(stored[&counted].total, 91_234);

    // Not one of the run's measurements: refused, nothing stored.
    let mut stray = new_run(merkle_forge());
    stray.meta.attempt = 2;
    stray.function_costs.insert(
        benchgate_collector::BenchmarkId::parse("no/such/instructions").unwrap(),
        seal.clone(),
    );
    let error = store.ingest(&stray).await.unwrap_err().to_string();
    assert_eq!(
        error,
        "run: field `function_costs[\"no/such/instructions\"]`: a profile of a benchmark the run does not measure"
    );
    assert_eq!(store.list_runs().await.unwrap().len(), 1);

    // Replaced: the new run's profiles only.
    let mut different = run.clone();
    different.measurements[3].median.point *= 2.0;
    different.function_costs.clear();
    let replaced = store.replace(&different).await.unwrap().run_id();
    assert!(store.function_costs(replaced).await.unwrap().is_empty());
    store.close().await;
    assert_eq!(t.count("function_costs").await, 0);
}

/// The run document carries the profiles whole, and names the field of a bad one.
#[test]
fn a_run_document_carries_profiles_by_function_and_names_a_bad_one() {
    use benchgate_collector::callgrind::{INSTRUCTIONS, Profile};
    use benchgate_collector::wire::RunDocument;
    let seal = Profile::read(
        &[Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/callgrind/seal-base.out")],
        INSTRUCTIONS,
    )
    .unwrap()
    .keep_largest(50);
    let mut run = new_run(merkle_forge());
    let counted = run.measurements[3].id.clone();
    run.function_costs.insert(counted.clone(), seal.clone());
    let json = serde_json::to_value(RunDocument::from_run(&run)).unwrap();
    let key = counted.as_str();
    assert_eq!(
        json["function_costs"][key]["functions"][0],
        serde_json::json!([
            "ring_core_0_17_14__chacha20_poly1305_seal_avx2",
            90_848,
            90_923
        ])
    );
    let back = RunDocument::from_json(json.to_string().as_bytes())
        .unwrap()
        .into_run()
        .unwrap();
    assert_eq!(back.function_costs, run.function_costs);
    // Without profiles the field is absent: a document older services accept.
    let plain = serde_json::to_value(RunDocument::from_run(&new_run(merkle_forge()))).unwrap();
    assert!(plain.get("function_costs").is_none());

    let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut bad = json.clone();
        edit(&mut bad);
        RunDocument::from_json(bad.to_string().as_bytes())
            .unwrap()
            .into_run()
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(&|v| v["function_costs"][key]["total"] = 5.into()),
        format!(
            "`function_costs[{key:?}].total`: 5 but the functions' exclusive costs sum to 91234 and none is left out"
        )
    );
    assert_eq!(
        refused(&|v| {
            let profile = v["function_costs"][key].take();
            v["function_costs"] = serde_json::json!({ "elsewhere/instructions": profile });
        }),
        "`function_costs[\"elsewhere/instructions\"]`: a profile of a benchmark the run does not measure"
    );
}
