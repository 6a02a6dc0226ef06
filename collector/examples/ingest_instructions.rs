//! The store's write in instructions, for callgrind (which counts the same whatever else the
//! machine is doing): ingests a generated run of 1,000 benchmarks × 100 samples (the ingest
//! bench's shape) five times, each into a fresh, migrated SQLite file. With `none` instead of
//! `ingest` it only opens and closes the five stores, so the difference over five is one ingest:
//!
//! ```sh
//! cargo build --release --example ingest_instructions -p benchgate-collector
//! valgrind --tool=callgrind target/release/examples/ingest_instructions ingest
//! valgrind --tool=callgrind target/release/examples/ingest_instructions none
//! ```
//!
//! Figures in `docs/speed.md` ("Fourth pass").

#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool: fail loudly

use std::time::SystemTime;

use benchgate_collector::{
    BenchmarkId, CommitSha, Estimate, HardwareProfile, Measurement, NewRun, RepositoryName,
    RunKind, RunMeta, Samples, Store,
};

fn main() {
    let ingest = match std::env::args().nth(1).as_deref() {
        Some("ingest") => true,
        Some("none") => false,
        _ => panic!("usage: ingest_instructions ingest|none"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let run = generated_run();
    for i in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let store = runtime
            .block_on(Store::open(&dir.path().join(format!("store-{i}.db"))))
            .unwrap();
        if ingest {
            runtime.block_on(store.ingest(&run)).unwrap();
        }
        runtime.block_on(store.close());
    }
}

/// 1,000 benchmarks of 100 linear samples, the same every time (xorshift).
fn generated_run() -> NewRun {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let measurements = (0..1000)
        .map(|i| {
            let per_iteration = 50.0 + 1e4 * noise();
            let iters: Vec<f64> = (1..=100).map(|k| f64::from(k) * 1000.0).collect();
            let times = iters
                .iter()
                .map(|n| (n * per_iteration * (1.0 + 0.05 * noise())).round())
                .collect();
            let estimate = |point: f64| Estimate {
                point,
                lower: point * 0.99,
                upper: point * 1.01,
                confidence_level: 0.95,
            };
            Measurement {
                id: BenchmarkId::parse(&format!(
                    "group_{:02}/fn {}/{}",
                    i / 50,
                    (i / 10) % 5,
                    (i % 10) * 128
                ))
                .unwrap(),
                throughput: None,
                mean: estimate(per_iteration * 1.02),
                median: estimate(per_iteration),
                sampling_mode: Some("Linear".into()),
                samples: Samples::new(iters, times).unwrap(),
                custom: None,
            }
        })
        .collect();
    NewRun {
        meta: RunMeta {
            repository: RepositoryName::parse("bench/ingest").unwrap(),
            commit: CommitSha::parse("0123456789abcdef0123456789abcdef01234567").unwrap(),
            branch: Some("main".into()),
            kind: RunKind::Push,
            pr_number: None,
            attempt: 1,
        },
        profile: HardwareProfile {
            cpu_arch: "x86_64".into(),
            cpu_vendor: "AuthenticAMD".into(),
            cpu_brand: "AMD EPYC".into(),
            physical_cores: 2,
            logical_cores: 2,
            memory_gib: 24,
            cpu_features: Vec::new(),
            os_name: "Debian".into(),
            os_major_version: "12".into(),
            runner_image: None,
            runner_image_version: None,
            rustc_version: "rustc 1.95.0".into(),
            host_triple: "x86_64-unknown-linux-gnu".into(),
            hostname: None,
            cpu_frequency_mhz: None,
            kernel_version: None,
            os_version: None,
        },
        recorded_at: SystemTime::now(),
        measurements,
        function_costs: Default::default(),
    }
}
