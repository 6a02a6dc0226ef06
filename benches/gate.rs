//! Gate speed: `benchgate gate` for a head run of 10,000 benchmarks against a store holding
//! 1,000 runs: the baseline and 30 runs of its history (10,000 benchmarks each, 20 samples) on
//! the head's fingerprint and first-parent ancestry, and 968 runs of other repositories. Timed
//! end to end as CI runs it: the binary, from process start to the JSON report.
//!
//! Target: under 200 ms (DESIGN.md), within 150 ms in every run (the speed issue). Run:
//! `cargo bench --bench gate`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use benchgate_collector::{
    BenchmarkId, CommitSha, Estimate, HardwareProfile, Measurement, NewRun, RepositoryName,
    RunKind, RunMeta, RustcInfo, Samples, Store, Throughput,
};
use criterion::{Criterion, criterion_group, criterion_main};

const BENCHMARKS: usize = 10_000;
const HISTORY: usize = 30;
const FILLER_RUNS: usize = 968;

fn measurements(n: usize, run: usize, factor: f64) -> Vec<Measurement> {
    (0..n)
        .map(|i| {
            let ns = (100.0 + (i % 997) as f64 * 7.0)
                * factor
                * (1.0 + 0.002 * ((run * 31 + i) % 7) as f64);
            let estimate = Estimate {
                point: ns,
                lower: ns * 0.99,
                upper: ns * 1.01,
                confidence_level: 0.95,
            };
            let iters: Vec<f64> = (1..=20).map(|k| (k * 100) as f64).collect();
            let times: Vec<f64> = iters
                .iter()
                .enumerate()
                .map(|(k, n)| n * ns * (1.0 + 0.001 * k as f64))
                .collect();
            Measurement {
                id: BenchmarkId::parse(&format!("group_{:03}/bench_{i:05}", i / 100)).unwrap(),
                throughput: (i % 3 == 0).then_some(Throughput::Bytes(4096)),
                mean: estimate,
                median: estimate,
                sampling_mode: Some("Linear".into()),
                custom: None,
                samples: Samples::new(iters, times).unwrap(),
            }
        })
        .collect()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=b", "-c", "user.email=b@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn gate(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    let commits: Vec<CommitSha> = (0..=HISTORY + 1)
        .map(|i| {
            git(
                dir.path(),
                &["commit", "-q", "--allow-empty", "-m", &format!("c{i}")],
            );
            CommitSha::parse(&git(dir.path(), &["rev-parse", "HEAD"])).unwrap()
        })
        .collect();
    let db = dir.path().join("store.db");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let rustc =
        RustcInfo::parse("rustc 1.95.0 (59807616e 2026-04-14)\nhost: x86_64-unknown-linux-gnu\n")
            .unwrap();
    let profile = HardwareProfile::detect(&Default::default(), &rustc).unwrap();
    let head_id = runtime.block_on(async {
        let store = Store::open(&db).await.unwrap();
        let run = |repository: &str,
                   commit: CommitSha,
                   kind: RunKind,
                   measurements: Vec<Measurement>| NewRun {
            meta: RunMeta {
                repository: RepositoryName::parse(repository).unwrap(),
                commit,
                branch: Some("main".into()),
                kind,
                pr_number: None,
                attempt: 1,
            },
            profile: profile.clone(),
            recorded_at: SystemTime::now(),
            measurements,
            function_costs: Default::default(),
        };
        for (i, commit) in commits[..=HISTORY].iter().enumerate() {
            store
                .ingest(&run(
                    "acme/rocket",
                    commit.clone(),
                    RunKind::Push,
                    measurements(BENCHMARKS, i, 1.0),
                ))
                .await
                .unwrap();
        }
        for i in 0..FILLER_RUNS {
            let sha = CommitSha::parse(&format!("{i:040x}")).unwrap();
            store
                .ingest(&run(
                    &format!("other/repo{}", i % 10),
                    sha,
                    RunKind::Push,
                    measurements(100, i, 1.0),
                ))
                .await
                .unwrap();
        }
        let head = run(
            "acme/rocket",
            commits[HISTORY + 1].clone(),
            RunKind::Pr,
            measurements(BENCHMARKS, 99, 1.05),
        );
        let id = store.ingest(&head).await.unwrap().run_id();
        assert_eq!(store.list_runs().await.unwrap().len(), 1000);
        store.close().await;
        id
    });

    let head = head_id.to_string();
    let run_gate = || {
        let output = Command::new(env!("CARGO_BIN_EXE_benchgate"))
            .args([
                "gate",
                "--head",
                &head,
                "--db",
                db.to_str().unwrap(),
                "--format",
                "json",
            ])
            .current_dir(dir.path())
            .stderr(Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.code() == Some(0) || output.status.code() == Some(1));
        output.stdout
    };
    let summary: serde_json::Value = serde_json::from_slice(&run_gate()).unwrap();
    assert_eq!(summary["benchmarks"].as_array().unwrap().len(), BENCHMARKS);
    assert_eq!(
        summary["benchmarks"][0]["noise_source"], "history",
        "the history path is exercised"
    );

    let mut group = c.benchmark_group("gate_10000_benchmarks_1000_runs");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("benchgate_gate_end_to_end", |b| b.iter(|| run_gate().len()));
    group.finish();
}

criterion_group!(benches, gate);
criterion_main!(benches);
