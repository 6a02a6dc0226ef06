//! Ingest speed: a Criterion tree of 1,000 benchmarks with 100 samples each, generated in the
//! shape Criterion 0.5+ writes. Four measurements, to be compared as ratios of medians:
//! - `floor`: the fastest way to read and parse what the reader needs, on every core as the
//!   reader works: each benchmark's three JSON files read and parsed into plain structs of the
//!   fields benchgate keeps (no walk, no validation, no conversion);
//! - `floor_with_walk`: the floor plus the least walk that finds the benchmark directories
//!   from the root (printed beside it, so the reader's share splits into the walk and the rest);
//! - `read_tree`: benchgate's reader (walk, parse, validate);
//! - `store`: the store's share alone, the run already read stored in one SQLite transaction
//!   into a fresh, migrated file (`Store::ingest`: content hash, sample encoding, the rows);
//! - `read_tree_and_store`: the reader plus that transaction, as `benchgate ingest` does both;
//! - `command`: `benchgate ingest` itself, as CI runs it: the process, its git and `rustc -vV`
//!   queries and hardware profile, the read, and the run stored into an existing, migrated store
//!   (a copy of an empty one per run, made before the clock starts). With
//!   `BENCHGATE_BENCH_BIN=PATH` it times that build of benchgate instead (before and after).
//!
//! Target (the speed issue): `read_tree_and_store` within 1.3× the floor. The bench prints
//! both ratios to the floor after the run (from Criterion's own estimates); with
//! `BENCHGATE_BENCH_METRICS=FILE` it also writes them to FILE as custom metrics, for
//! `benchgate ingest --metrics` (benchgate's own CI gates them: `perf-self.yml`).
//! Run: `cargo bench --bench ingest`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches fail loudly

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

mod common;

use benchgate_collector::criterion::read_tree;
use benchgate_collector::{
    CommitSha, HardwareProfile, NewRun, RepositoryName, RunKind, RunMeta, RustcInfo, Store,
};
use criterion::{Criterion, criterion_group, criterion_main};

const N_BENCHMARKS: usize = 1000;
const N_SAMPLES: usize = 100;

/// A deterministic pseudo-random stream (xorshift), so every run generates the same tree.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn estimate(point: f64, spread: f64) -> serde_json::Value {
    serde_json::json!({
        "confidence_interval": {"confidence_level": 0.95, "lower_bound": point - spread, "upper_bound": point + spread},
        "point_estimate": point,
        "standard_error": spread / 1.96,
    })
}

/// Writes `<root>/<group>/<function>/<value>/new/{benchmark,estimates,sample,tukey}.json` and a
/// `base/` copy, as Criterion does; returns the benchmark directories.
fn generate_tree(root: &Path) -> Vec<PathBuf> {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let mut dirs = Vec::with_capacity(N_BENCHMARKS);
    for i in 0..N_BENCHMARKS {
        let (group, function, value) = (
            format!("group_{:02}", i / 50),
            format!("fn {}", (i / 10) % 5),
            (i % 10) * 128,
        );
        let full_id = format!("{group}/{function}/{value}");
        let directory_name = format!("{group}/{}/{value}", function.replace(' ', "_"));
        let dir = root.join(&directory_name);
        let per_iteration = 50.0 + 1e4 * noise.next();
        let iters: Vec<f64> = (1..=N_SAMPLES).map(|k| (k * 1000) as f64).collect();
        let times: Vec<f64> = iters
            .iter()
            .map(|n| (n * per_iteration * (1.0 + 0.05 * noise.next())).round())
            .collect();
        let throughput = if i % 3 == 0 {
            serde_json::json!({"Bytes": value + 64})
        } else {
            serde_json::Value::Null
        };
        let benchmark = serde_json::json!({
            "group_id": group, "function_id": function, "value_str": value.to_string(), "throughput": throughput,
            "full_id": full_id, "directory_name": directory_name, "title": full_id,
        });
        let estimates = serde_json::json!({
            "mean": estimate(per_iteration * 1.02, per_iteration * 0.01),
            "median": estimate(per_iteration, per_iteration * 0.01),
            "median_abs_dev": estimate(per_iteration * 0.02, per_iteration * 0.005),
            "slope": estimate(per_iteration * 1.01, per_iteration * 0.01),
            "std_dev": estimate(per_iteration * 0.03, per_iteration * 0.01),
        });
        let sample = serde_json::json!({"sampling_mode": "Linear", "iters": iters, "times": times});
        let tukey = serde_json::json!([
            per_iteration * 0.8,
            per_iteration * 0.9,
            per_iteration * 1.1,
            per_iteration * 1.2
        ]);
        for results in ["new", "base"] {
            let out = dir.join(results);
            fs::create_dir_all(&out).unwrap();
            fs::write(out.join("benchmark.json"), benchmark.to_string()).unwrap();
            fs::write(out.join("estimates.json"), estimates.to_string()).unwrap();
            fs::write(out.join("sample.json"), sample.to_string()).unwrap();
            fs::write(out.join("tukey.json"), tukey.to_string()).unwrap();
        }
        dirs.push(dir);
    }
    dirs
}

fn new_run(root: &Path, profile: &HardwareProfile) -> NewRun {
    NewRun {
        meta: RunMeta {
            repository: RepositoryName::parse("bench/ingest").unwrap(),
            commit: CommitSha::parse("0123456789abcdef0123456789abcdef01234567").unwrap(),
            branch: Some("main".into()),
            kind: RunKind::Push,
            pr_number: None,
            attempt: 1,
        },
        profile: profile.clone(),
        recorded_at: SystemTime::now(),
        measurements: read_tree(root, "new").unwrap(),
        function_costs: Default::default(),
    }
}

fn ingest(c: &mut Criterion) {
    let tree = tempfile::tempdir().unwrap();
    let dirs = generate_tree(tree.path());
    let root = tree.path().to_owned();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let rustc = RustcInfo::query("rustc").unwrap();
    let profile = HardwareProfile::detect(&Default::default(), &rustc).unwrap();
    assert_eq!(read_tree(&root, "new").unwrap().len(), N_BENCHMARKS);

    let mut group = c.benchmark_group("ingest_1000x100");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("floor", |b| b.iter(|| floor(&dirs)));
    assert_eq!(floor_with_walk(&root), floor(&dirs));
    group.bench_function("floor_with_walk", |b| b.iter(|| floor_with_walk(&root)));
    group.bench_function("read_tree", |b| {
        b.iter(|| read_tree(&root, "new").unwrap().len())
    });
    // The same run each time, read once: the store's share without the reader's.
    let pre_read = new_run(&root, &profile);
    group.bench_function("store", |b| {
        b.iter_custom(|iterations| {
            time_ingests(&runtime, iterations, |store| {
                runtime.block_on(store.ingest(&pre_read)).unwrap()
            })
        })
    });
    group.bench_function("read_tree_and_store", |b| {
        b.iter_custom(|iterations| {
            time_ingests(&runtime, iterations, |store| {
                let run = new_run(&root, &profile);
                runtime.block_on(store.ingest(&run)).unwrap()
            })
        })
    });
    group.finish();
    command(c, &runtime, &root);
    let measured = ratios(
        "ingest_1000x100",
        "floor",
        &["read_tree", "read_tree_and_store"],
    );
    // Printed, not gated: the reader's share over the target's floor split into the walk and
    // the rest.
    ratios("ingest_1000x100", "floor", &["floor_with_walk"]);
    ratios(
        "ingest_1000x100",
        "floor_with_walk",
        &["read_tree", "read_tree_and_store"],
    );
    write_metrics("ingest_1000x100", "floor", &measured);
}

/// The time `timed` takes, summed over `iterations` fresh, migrated SQLite stores (opened
/// before the clock starts, closed after it stops).
fn time_ingests(
    runtime: &tokio::runtime::Runtime,
    iterations: u64,
    mut timed: impl FnMut(&Store) -> benchgate_collector::IngestOutcome,
) -> Duration {
    let mut total = Duration::ZERO;
    for i in 0..iterations {
        let db_dir = tempfile::tempdir().unwrap();
        let store = runtime
            .block_on(Store::open(&db_dir.path().join(format!("bench-{i}.db"))))
            .unwrap();
        let start = Instant::now();
        let outcome = timed(&store);
        total += start.elapsed();
        std::hint::black_box(outcome);
        runtime.block_on(store.close());
    }
    total
}

/// `benchgate ingest ROOT` as a process, each run a new commit into a copy of an empty,
/// migrated store.
fn command(c: &mut Criterion, runtime: &tokio::runtime::Runtime, root: &Path) {
    let scratch = tempfile::tempdir().unwrap();
    let empty = scratch.path().join("empty.db");
    runtime.block_on(async {
        Store::open(&empty).await.unwrap().close().await;
    });
    let benchgate = std::env::var_os("BENCHGATE_BENCH_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_benchgate")),
        PathBuf::from,
    );
    let mut commits = 0u64;
    let mut ingest = |db: &Path| {
        commits += 1;
        let output = Command::new(&benchgate)
            .arg("ingest")
            .arg(root)
            .args([
                "--commit",
                &format!("{commits:040x}"),
                "--repo",
                "bench/ingest",
            ])
            .arg("--db")
            .arg(db)
            .current_dir(scratch.path())
            .stderr(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", benchgate.display());
        output.stdout
    };
    let db = scratch.path().join("store.db");
    fresh_copy(&empty, &db);
    assert_eq!(String::from_utf8(ingest(&db)).unwrap().trim(), "1");

    let mut group = c.benchmark_group("ingest_1000x100");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("command", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                fresh_copy(&empty, &db);
                let start = Instant::now();
                std::hint::black_box(ingest(&db));
                total += start.elapsed();
            }
            total
        })
    });
    group.finish();
}

/// `empty` copied to `db`, whose write-ahead log and shared memory of the last run go first.
fn fresh_copy(empty: &Path, db: &Path) {
    for suffix in ["-wal", "-shm"] {
        let mut side = db.as_os_str().to_owned();
        side.push(suffix);
        match fs::remove_file(&side) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("{}: {e}", Path::new(&side).display()),
        }
    }
    fs::copy(empty, db).unwrap();
}

/// What the reader keeps of each file, and nothing else.
#[derive(serde::Deserialize)]
struct FloorBenchmark {
    #[allow(dead_code)] // parsed, as the reader parses it
    full_id: String,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)] // parsed, as the reader parses it
struct FloorEstimate {
    point_estimate: f64,
    confidence_interval: FloorInterval,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)] // parsed, as the reader parses it
struct FloorInterval {
    confidence_level: f64,
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)] // parsed, as the reader parses it
struct FloorEstimates {
    mean: FloorEstimate,
    median: FloorEstimate,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)] // parsed, as the reader parses it
struct FloorSample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

/// The floor: every benchmark's three files read and parsed into the structs above, on every
/// core (rayon), as `read_tree` reads on every core.
fn floor(dirs: &[PathBuf]) -> usize {
    use rayon::prelude::*;
    dirs.par_iter().map(|dir| read_benchmark(dir)).sum()
}

/// One benchmark directory's three files read and parsed, as the floor does it; its sample
/// count.
fn read_benchmark(dir: &Path) -> usize {
    let read = |file: &str| fs::read(dir.join("new").join(file)).unwrap();
    let benchmark: FloorBenchmark = serde_json::from_slice(&read("benchmark.json")).unwrap();
    let estimates: FloorEstimates = serde_json::from_slice(&read("estimates.json")).unwrap();
    let sample: FloorSample = serde_json::from_slice(&read("sample.json")).unwrap();
    std::hint::black_box((benchmark, estimates));
    sample.times.len()
}

/// The floor with the walk: what a reader given only the root must do on top of [`floor`],
/// find the benchmark directories. Every directory is listed on every core (rayon); an entry's
/// kind comes from the listing itself (no `stat`), and a directory holding `new/` is read and
/// parsed as [`floor`] reads one ([`read_benchmark`]), without looking further into it. Printed beside the target's
/// floor so that the reader's share over it is split into the walk and the rest.
fn floor_with_walk(root: &Path) -> usize {
    fn visit(dir: &Path) -> usize {
        use rayon::prelude::*;
        let subdirs: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap()
            .filter_map(|entry| {
                let entry = entry.unwrap();
                entry.file_type().unwrap().is_dir().then(|| entry.path())
            })
            .collect();
        if subdirs
            .iter()
            .any(|d| d.file_name().is_some_and(|n| n == "new"))
        {
            return read_benchmark(dir);
        }
        subdirs.par_iter().map(|d| visit(d)).sum()
    }
    visit(root)
}

/// Prints each of `others`' median over `floor`'s, from the estimates Criterion just wrote
/// (`$CRITERION_HOME`, else `target/criterion`), and returns them; says so if it cannot find
/// them.
fn ratios<'a>(group: &str, floor: &str, others: &[&'a str]) -> Vec<(&'a str, f64)> {
    let median = |name: &str| common::median(group, name);
    let Some(base) = median(floor) else {
        println!("no estimates for {group}/{floor}: no ratios");
        return Vec::new();
    };
    let mut measured = Vec::new();
    for other in others {
        match median(other) {
            Some(m) => {
                println!("{group}/{other}: {:.2}x the {floor} (medians)", m / base);
                measured.push((*other, m / base));
            }
            None => println!("no estimates for {group}/{other}"),
        }
    }
    measured
}

/// With `BENCHGATE_BENCH_METRICS=FILE`, adds each ratio to FILE as a custom metric in Bencher's
/// JSON (`{group}/{name}_to_{floor}`, lower is better), keeping what other benches wrote there:
/// `benchgate ingest --metrics FILE` then stores and gates the ratios beside Criterion's times
/// (`.github/workflows/perf-self.yml`). A ratio is the same on a faster or a slower runner, so
/// it compares across the runners of a shared pool better than a time does.
fn write_metrics(group: &str, floor: &str, measured: &[(&str, f64)]) {
    let Some(path) = std::env::var_os("BENCHGATE_BENCH_METRICS").map(PathBuf::from) else {
        return;
    };
    let mut metrics: serde_json::Map<String, serde_json::Value> = fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    let entry = metrics
        .entry(group.to_owned())
        .or_insert_with(|| serde_json::json!({}));
    for (name, ratio) in measured {
        entry[format!("{name}_to_{floor}")] = serde_json::json!({
            "value": ratio,
            "unit": "x",
            "direction": "lower",
        });
    }
    fs::write(&path, serde_json::to_vec_pretty(&metrics).unwrap()).unwrap();
    println!("ratios written to {}", path.display());
}

criterion_group!(benches, ingest);
criterion_main!(benches);
