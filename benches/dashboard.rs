//! Dashboard speed: `benchgate dashboard --out DIR` (the release binary, end to end: read the
//! store, detect change points, draw every chart, write every page) for a store of 400 runs of
//! 200 benchmarks, each with a step somewhere: a full build (`--full`), and the nightly's
//! incremental build after one new run on top of the 400, of the same machine (every series
//! gets a point, so every page is drawn) and of another machine (the 200 pages are left as they
//! are). Target (the speed issue): a full build within 1 s.
//!
//! Run: `cargo bench --bench dashboard`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

use std::path::Path;
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
    let new_run = |run: usize, profile: &HardwareProfile| {
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
        NewRun {
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
            function_costs: Default::default(),
        }
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open(&db).await.unwrap();
        for run in 0..RUNS {
            store.ingest(&new_run(run, &profile)).await.unwrap();
        }
        store.close().await;
    });
    let out = dir.path().join("site");
    // `benchgate dashboard`; what it said.
    let dashboard = |db: &Path, extra: &[&str]| -> String {
        let output = Command::new(env!("CARGO_BIN_EXE_benchgate"))
            .args([
                "dashboard",
                "--db",
                db.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .args(extra)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{said}");
        said
    };
    assert!(dashboard(&db, &["--full"]).contains("(1 machine drawn, 0 unchanged)"));
    let manifest = out.join(".benchgate-built.json");

    // One more run on top of the 400: of the same machine, or of a second machine (another
    // toolchain) that already has 20 runs of its own.
    let other = HardwareProfile::detect(
        &Default::default(),
        &RustcInfo::parse("rustc 1.96.0 (00000000a 2026-06-01)\nhost: x86_64-unknown-linux-gnu\n")
            .unwrap(),
    )
    .unwrap();
    let same_db = dir.path().join("same.db");
    let two_machines = dir.path().join("two-machines.db");
    let other_db = dir.path().join("other.db");
    let add = |from: &Path, to: &Path, runs: std::ops::Range<usize>, profile: &HardwareProfile| {
        std::fs::copy(from, to).unwrap();
        runtime.block_on(async {
            let store = Store::open(to).await.unwrap();
            for run in runs {
                store.ingest(&new_run(run, profile)).await.unwrap();
            }
            store.close().await;
        });
    };
    add(&db, &same_db, RUNS..RUNS + 1, &profile);
    add(&db, &two_machines, RUNS..RUNS + 20, &other);
    add(&two_machines, &other_db, RUNS + 20..RUNS + 21, &other);
    // The site as `before` left it: built whole, and what it was built from.
    let built_from = |before: &Path| -> Vec<u8> {
        dashboard(before, &["--full"]);
        std::fs::read(&manifest).unwrap()
    };

    let mut group = c.benchmark_group("dashboard_200_benchmarks_400_runs");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("benchgate_dashboard_end_to_end", |b| {
        b.iter(|| dashboard(&db, &["--full"]))
    });
    for (name, before, after, says) in [
        (
            "incremental_one_new_run_same_machine",
            &db,
            &same_db,
            "(1 machine drawn, 0 unchanged)",
        ),
        (
            "incremental_one_new_run_other_machine",
            &two_machines,
            &other_db,
            "(1 machine drawn, 1 unchanged)",
        ),
    ] {
        let built = built_from(before);
        assert!(dashboard(after, &[]).contains(says));
        group.bench_function(name, |b| {
            b.iter_batched(
                || std::fs::write(&manifest, &built).unwrap(),
                |()| dashboard(after, &[]),
                criterion::BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, dashboard);
criterion_main!(benches);
