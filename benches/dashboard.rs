//! Dashboard speed: `benchgate dashboard --out DIR` (the release binary, end to end: read the
//! store, detect change points, draw every chart, write every page) for a store of 400 runs of
//! 200 benchmarks, each with a step somewhere. Target (the dashboards issue): under 5 s.
//!
//! Run: `cargo bench --bench dashboard`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use benchgate_collector::{
    BenchmarkId, CommitSha, Estimate, HardwareProfile, Measurement, NewRun, RepositoryName,
    RunKind, RunMeta, RustcInfo, Samples, Store,
};
use criterion::{Criterion, criterion_group, criterion_main};

const RUNS: usize = 400;
const BENCHMARKS: usize = 200;

fn dashboard(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.db");
    let rustc =
        RustcInfo::parse("rustc 1.95.0 (59807616e 2026-04-14)\nhost: x86_64-unknown-linux-gnu\n")
            .unwrap();
    let profile = HardwareProfile::detect(&Default::default(), &rustc).unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Store::open(&db).await.unwrap();
        for run in 0..RUNS {
            let measurements = (0..BENCHMARKS)
                .map(|b| {
                    let step = if run > 50 + b % 300 { 1.2 } else { 1.0 };
                    let wobble = 1.0 + 0.02 * (((run * 7 + b * 13) % 11) as f64 / 10.0 - 0.5);
                    let ns = (200.0 + b as f64 * 37.0) * step * wobble;
                    let estimate = Estimate {
                        point: ns,
                        lower: ns * 0.98,
                        upper: ns * 1.02,
                        confidence_level: 0.95,
                    };
                    Measurement {
                        id: BenchmarkId::parse(&format!("suite_{}/bench_{b:03}", b / 20)).unwrap(),
                        throughput: None,
                        mean: estimate,
                        median: estimate,
                        sampling_mode: None,
                        custom: None,
                        samples: Samples::new(vec![1.0], vec![ns]).unwrap(),
                    }
                })
                .collect();
            let new_run = NewRun {
                meta: RunMeta {
                    repository: RepositoryName::parse("acme/rocket").unwrap(),
                    commit: CommitSha::parse(&format!("{run:040x}")).unwrap(),
                    branch: Some("main".into()),
                    kind: RunKind::Push,
                    pr_number: None,
                    attempt: 1,
                },
                profile: profile.clone(),
                recorded_at: UNIX_EPOCH + Duration::from_secs(1_700_000_000 + run as u64 * 86_400),
                measurements,
            };
            store.ingest(&new_run).await.unwrap();
        }
        store.close().await;
    });
    let out = dir.path().join("site");
    let run = || {
        let output = Command::new(env!("CARGO_BIN_EXE_benchgate"))
            .args([
                "dashboard",
                "--db",
                db.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    run();
    let pages = std::fs::read_dir(out.join("acme/rocket"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let html = std::fs::read_dir(pages.join("b"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("html".as_ref()))
        .count();
    assert_eq!(html, BENCHMARKS);

    let mut group = c.benchmark_group("dashboard_200_benchmarks_400_runs");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("benchgate_dashboard_end_to_end", |b| b.iter(run));
    group.finish();
}

criterion_group!(benches, dashboard);
criterion_main!(benches);
