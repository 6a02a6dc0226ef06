//! Ingest over HTTP: `benchgate serve` (the release binary, on a loopback port) receiving runs of
//! 100 benchmarks × 100 samples as `POST /api/v1/runs`, one new run per request (a new commit
//! each time), each on a fresh connection, on each store engine: a fresh SQLite file, and a fresh
//! PostgreSQL database when a server answers (see `collector/tests/support/postgres.rs`).
//! Reports the latency per upload, one client at a time, and the throughput of one instance
//! (`<engine>_8_clients`: eight clients uploading at once; the time per upload, whose inverse
//! the bench prints as uploads per second).
//!
//! The floor of each engine (`<engine>_in_process`): the same document, built the same way,
//! parsed from its JSON and stored with `Store::ingest` into a fresh store of the engine, in
//! process. The bench prints each upload's ratio to it: the cost of HTTP, the service's checks
//! and its connection handling over the work every ingest does.
//!
//! Run: `cargo bench --bench upload`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

mod common;

// The integration tests' support, for `Server`; the bench uses nothing else of it.
#[allow(dead_code)]
#[path = "../tests/it/support/mod.rs"]
mod support;

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use benchgate_collector::wire::RunDocument;
use benchgate_collector::{
    BenchmarkId, CommitSha, Estimate, HardwareProfile, Measurement, NewRun, RepositoryName,
    RunKind, RunMeta, RustcInfo, Samples, Throughput,
};
use criterion::{Criterion, criterion_group, criterion_main};

fn run(commit: u64, profile: &HardwareProfile) -> NewRun {
    let measurements = (0..100)
        .map(|i| {
            let ns = 100.0 + i as f64 * 13.0;
            let estimate = Estimate {
                point: ns,
                lower: ns * 0.99,
                upper: ns * 1.01,
                confidence_level: 0.95,
            };
            let iters: Vec<f64> = (1..=100).map(|k| (k * 10) as f64).collect();
            // Whole nanoseconds, as Criterion writes its totals (every one of the corpus's
            // 10,900 recorded samples is).
            let times = iters
                .iter()
                .enumerate()
                .map(|(k, n)| (n * ns * (1.0 + 0.0007 * k as f64)).round())
                .collect();
            Measurement {
                id: BenchmarkId::parse(&format!("codec/encode/{i:03}")).unwrap(),
                throughput: (i % 2 == 0).then_some(Throughput::Bytes(16_384)),
                mean: estimate,
                median: estimate,
                sampling_mode: Some("Linear".into()),
                custom: None,
                samples: Samples::new(iters, times).unwrap(),
            }
        })
        .collect();
    NewRun {
        meta: RunMeta {
            repository: RepositoryName::parse("acme/rocket").unwrap(),
            commit: CommitSha::parse(&format!("{commit:040x}")).unwrap(),
            branch: Some("main".into()),
            kind: RunKind::Push,
            pr_number: None,
            attempt: 1,
        },
        profile: profile.clone(),
        recorded_at: SystemTime::now(),
        measurements,
        function_costs: Default::default(),
    }
}

/// Clients uploading at once in the throughput measurement (`<engine>_8_clients`): what one
/// instance stores per second when CI jobs upload together.
const CLIENTS: u64 = 8;

fn upload(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("service.db");
    let postgres = support::postgres::FreshDatabase::create("upload_bench");
    let mut group = c.benchmark_group("http_ingest_100_benchmarks_x_100_samples");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(10));
    let mut engines = vec![("sqlite", sqlite.to_str().unwrap().to_owned())];
    if let Some(postgres) = &postgres {
        engines.push(("postgres", postgres.url.clone()));
    }
    let in_process_dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut names = Vec::new();
    for (engine, db) in &engines {
        let uploader = Uploader::start(db);
        group.bench_function(*engine, |b| b.iter(|| uploader.send()));
        group.bench_function(format!("{engine}_{CLIENTS}_clients"), |b| {
            b.iter_custom(|n| uploader.send_concurrently(n, CLIENTS))
        });
        let floor_db = if *engine == "sqlite" {
            in_process_dir
                .path()
                .join("in-process.db")
                .display()
                .to_string()
        } else {
            db.clone()
        };
        let mut store = in_process(&runtime, &floor_db);
        let floor = format!("{engine}_in_process");
        group.bench_function(&floor, |b| b.iter(&mut store));
        names.push((*engine, floor));
    }
    group.finish();
    for (engine, floor) in &names {
        ratio("http_ingest_100_benchmarks_x_100_samples", engine, floor);
        let concurrent = format!("{engine}_{CLIENTS}_clients");
        match common::median("http_ingest_100_benchmarks_x_100_samples", &concurrent) {
            Some(ns) => println!("{concurrent}: {:.0} uploads/s (median)", 1e9 / ns),
            None => println!("no estimates for {concurrent}"),
        }
    }
}

/// A function that stores the next run in process, as the server does after the request:
/// the document built and serialised as the client does, parsed back, stored.
fn in_process<'a>(runtime: &'a tokio::runtime::Runtime, db: &str) -> impl FnMut() + 'a {
    let location = benchgate_collector::Location::parse(db);
    let store = runtime
        .block_on(benchgate_collector::Store::connect(&location))
        .unwrap();
    let rustc =
        RustcInfo::parse("rustc 1.95.0 (59807616e 2026-04-14)\nhost: x86_64-unknown-linux-gnu\n")
            .unwrap();
    let profile = HardwareProfile::detect(&Default::default(), &rustc).unwrap();
    // Commits of their own, so the floor never meets the uploads' runs.
    let mut commit = 1u64 << 40;
    move || {
        commit += 1;
        let body = serde_json::to_vec(&RunDocument::from_run(&run(commit, &profile))).unwrap();
        let run = RunDocument::from_json(&body).unwrap().into_run().unwrap();
        let outcome = runtime.block_on(store.ingest(&run)).unwrap();
        assert!(matches!(
            outcome,
            benchgate_collector::IngestOutcome::Created(_)
        ));
    }
}

/// Prints `name`'s median over `floor`'s, from the estimates Criterion just wrote.
fn ratio(group: &str, name: &str, floor: &str) {
    match (common::median(group, name), common::median(group, floor)) {
        (Some(m), Some(f)) => println!("{group}/{name}: {:.2}x the {floor} (medians)", m / f),
        _ => println!("no estimates for {group}/{name} or {floor}: no ratio"),
    }
}

/// A server on the store `db` with a token, uploading runs under commits of its own.
struct Uploader {
    server: support::server::Server,
    bearer: String,
    profile: HardwareProfile,
    commit: AtomicU64,
}

impl Uploader {
    fn start(db: &str) -> Self {
        let benchgate = env!("CARGO_BIN_EXE_benchgate");
        let token = Command::new(benchgate)
            .args(["token", "create", "--repo", "acme/rocket", "--db", db])
            .output()
            .unwrap();
        let token = String::from_utf8(token.stdout).unwrap().trim().to_owned();
        let server = support::server::Server::start(db, &[], None);
        let rustc = RustcInfo::parse(
            "rustc 1.95.0 (59807616e 2026-04-14)\nhost: x86_64-unknown-linux-gnu\n",
        )
        .unwrap();
        let profile = HardwareProfile::detect(&Default::default(), &rustc).unwrap();
        let size = serde_json::to_vec(&RunDocument::from_run(&run(0, &profile)))
            .unwrap()
            .len();
        eprintln!("one run document: {size} bytes");
        Uploader {
            server,
            bearer: format!("Bearer {token}"),
            profile,
            commit: AtomicU64::new(0),
        }
    }

    fn post(&self, body: &[u8]) {
        let headers = [
            ("authorization", self.bearer.as_str()),
            ("content-type", "application/json"),
        ];
        let (status, answer) = self.server.request("POST", "/api/v1/runs", &headers, body);
        assert_eq!(status, 201, "{answer}");
    }

    /// Builds the next run's document, as a client does, and uploads it.
    fn send(&self) {
        let commit = self.commit.fetch_add(1, Ordering::Relaxed) + 1;
        self.post(
            &serde_json::to_vec(&RunDocument::from_run(&run(commit, &self.profile))).unwrap(),
        );
    }

    /// Uploads `n` new runs from `clients` clients at once and returns the time they took. The
    /// documents are one serialised run with its commit rewritten per upload, so the clients
    /// (on the same two cores) cost little beside the server.
    fn send_concurrently(&self, n: u64, clients: u64) -> Duration {
        let marker = u64::MAX;
        let template =
            serde_json::to_vec(&RunDocument::from_run(&run(marker, &self.profile))).unwrap();
        let hex = format!("{marker:040x}");
        let at = template
            .windows(40)
            .position(|w| w == hex.as_bytes())
            .unwrap();
        let next = AtomicU64::new(0);
        let start = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..clients {
                scope.spawn(|| {
                    let mut body = template.clone();
                    while next.fetch_add(1, Ordering::Relaxed) < n {
                        let commit = self.commit.fetch_add(1, Ordering::Relaxed) + 1;
                        body[at..at + 40].copy_from_slice(format!("{commit:040x}").as_bytes());
                        self.post(&body);
                    }
                });
            }
        });
        start.elapsed()
    }
}

criterion_group!(benches, upload);
criterion_main!(benches);
