//! Ingest over HTTP: `benchgate serve` (the release binary, on a loopback port) receiving runs of
//! 100 benchmarks × 100 samples as `POST /api/v1/runs`, one new run per request (a new commit
//! each time), each on a fresh connection, on each store engine: a fresh SQLite file, and a fresh
//! PostgreSQL database when a server answers (see `collector/tests/support/postgres.rs`).
//! Reports the latency per upload; uploads per second is its inverse (one client at a time).
//!
//! Run: `cargo bench --bench upload`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

// The integration tests' support, for `Server`; the bench uses nothing else of it.
#[allow(dead_code)]
#[path = "../tests/it/support/mod.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, SystemTime};

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
            let times = iters
                .iter()
                .enumerate()
                .map(|(k, n)| n * ns * (1.0 + 0.0007 * k as f64))
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
    }
}

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
    for (engine, db) in engines {
        let mut send = uploader(&db);
        group.bench_function(engine, |b| b.iter(&mut send));
    }
    group.finish();
}

/// A server on the store `db` with a token, and a function that uploads the next run to it.
fn uploader(db: &str) -> impl FnMut() {
    let benchgate = env!("CARGO_BIN_EXE_benchgate");
    let token = Command::new(benchgate)
        .args(["token", "create", "--repo", "acme/rocket", "--db", db])
        .output()
        .unwrap();
    let token = String::from_utf8(token.stdout).unwrap().trim().to_owned();
    let server = support::server::Server::start(db, &[], None);
    let rustc =
        RustcInfo::parse("rustc 1.95.0 (59807616e 2026-04-14)\nhost: x86_64-unknown-linux-gnu\n")
            .unwrap();
    let profile = HardwareProfile::detect(&Default::default(), &rustc).unwrap();
    let size = serde_json::to_vec(&RunDocument::from_run(&run(0, &profile)))
        .unwrap()
        .len();
    eprintln!("one run document: {size} bytes");
    let mut commit = 0u64;
    move || {
        commit += 1;
        let body = serde_json::to_vec(&RunDocument::from_run(&run(commit, &profile))).unwrap();
        let bearer = format!("Bearer {token}");
        let headers = [
            ("authorization", bearer.as_str()),
            ("content-type", "application/json"),
        ];
        let (status, answer) = server.request("POST", "/api/v1/runs", &headers, &body);
        assert_eq!(status, 201, "{answer}");
    }
}

criterion_group!(benches, upload);
criterion_main!(benches);
