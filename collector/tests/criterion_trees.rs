//! Reading real Criterion output: every tree in `../shared/corpus` (when it is there), exact
//! values from a few kept in `tests/fixtures/corpus`, and
//! the bad input that must fail whole with an error naming the file and field.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches fail loudly

#[path = "../../tests/common/shared_corpus.rs"]
mod shared_corpus;

use shared_corpus::shared_corpus;
use std::fs;
use std::path::{Path, PathBuf};

use benchgate_collector::criterion::read_tree;
use benchgate_collector::{Error, Throughput};

/// The real trees kept in the repository (trimmed copies from the shared corpus).
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus")
}

/// Every directory named `criterion` in the corpus: the roots Criterion writes to.
fn criterion_roots(dir: &Path, roots: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().unwrap() == "criterion" {
                roots.push(path);
            } else {
                criterion_roots(&path, roots);
            }
        }
    }
}

/// Counts `<results>/estimates.json` files below `dir`, independently of the reader.
fn count_results(dir: &Path, results: &str) -> usize {
    let mut count = 0;
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().unwrap() == results && path.join("estimates.json").is_file() {
                count += 1;
            }
            count += count_results(&path, results);
        }
    }
    count
}

#[test]
fn every_criterion_tree_in_the_corpus_reads_whole() {
    let Some(corpus) = shared_corpus("every_criterion_tree_in_the_corpus_reads_whole") else {
        return;
    };
    let mut roots = Vec::new();
    criterion_roots(&corpus, &mut roots);
    roots.sort();
    assert!(
        roots.len() >= 11,
        "expected the corpus's 11 criterion roots, found {roots:?}"
    );
    let mut total = 0;
    for root in &roots {
        let expected = count_results(root, "new");
        match read_tree(root, "new") {
            Ok(measurements) => {
                assert_eq!(measurements.len(), expected, "{}", root.display());
                for m in &measurements {
                    assert!(
                        m.samples.len() >= 10,
                        "{}: {} has {} samples",
                        root.display(),
                        m.id,
                        m.samples.len()
                    );
                    assert!(
                        m.median.lower <= m.median.upper && m.median.point > 0.0,
                        "{}",
                        m.id
                    );
                }
                total += measurements.len();
            }
            Err(Error::EmptyTree { .. }) => assert_eq!(
                expected,
                0,
                "{} has benchmarks but read none",
                root.display()
            ),
            Err(other) => panic!("{}: {other}", root.display()),
        }
    }
    // 3 + 9 + 5 + 30 + 9 + 18 + 12 + 30 + 22 + 2, from SOURCES.md and the older deduplicate snapshot.
    assert_eq!(total, 140);
}

#[test]
fn modern_tree_keeps_exact_nanoseconds_samples_and_throughput() {
    let root = corpus().join("Aida118__szse-binary-rs/target/criterion");
    let measurements = read_tree(&root, "new").unwrap();
    let ids: Vec<&str> = measurements.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "MsgHeader/parse",
            "TickTrade/parse",
            "TickTrade_batch/parse_10k"
        ]
    );
    assert_eq!(measurements[0].throughput, Some(Throughput::Elements(1)));
    assert_eq!(
        measurements[2].throughput,
        Some(Throughput::Elements(10000))
    );
    let parse = measurements
        .iter()
        .find(|m| m.id.as_str() == "TickTrade/parse")
        .unwrap();
    assert_eq!(parse.median.point, 33.204832721107366);
    assert_eq!(parse.mean.lower, 33.771019392878);
    assert_eq!(parse.median.confidence_level, 0.95);
    assert_eq!(parse.throughput, Some(Throughput::Bytes(66)));
    assert_eq!(parse.samples.len(), 100);
    assert_eq!(
        parse.samples.per_iteration().next().unwrap(),
        30.089186941903762
    );
    assert_eq!(parse.sampling_mode.as_deref(), Some("Linear"));
}

#[test]
fn legacy_tree_reads_capitalised_estimates_and_array_samples() {
    let root = corpus().join("laysakura__louds-rs/criterion");
    let measurements = read_tree(&root, "new").unwrap();
    let m = measurements
        .iter()
        .find(|m| m.id.as_str() == "[940c17e] Louds(N)::node_num_to_index() 10000 times/16384")
        .expect("ids keep brackets, parentheses, spaces and ::");
    assert_eq!(m.mean.point, 17000097.330423277);
    assert_eq!(m.median.upper, 17056975.584259257);
    assert_eq!(m.samples.iters()[..2], [6.0, 12.0]);
    assert_eq!(m.samples.times()[..2], [101872326.0, 202462177.0]);
    assert_eq!(m.sampling_mode, None);
    assert_eq!(m.throughput, None);
}

#[test]
fn identity_is_full_id_not_the_directory_name() {
    let ai = read_tree(&corpus().join("ai-2070__net/target/criterion"), "new").unwrap();
    let c1 = ai
        .iter()
        .find(|m| m.id.as_str() == "nrpc_qps/c1/32B")
        .expect("32B, not the directory's 32b");
    assert_eq!(c1.throughput, Some(Throughput::Elements(1)));
    assert_eq!(c1.median.point, 45447.31608516874);
    assert_eq!(c1.samples.len(), 20);

    let git_bench = read_tree(
        &corpus().join("fedemagnani__git-bench/target/criterion"),
        "new",
    )
    .unwrap();
    assert!(
        git_bench
            .iter()
            .any(|m| m.id.as_str() == "arithmetic::sum_10000")
    );
    assert!(git_bench.iter().all(|m| !m.id.as_str().contains("__")));
}

#[test]
fn a_repeated_full_id_takes_criterions_disambiguated_title() {
    let crypto = read_tree(
        &corpus().join("Scarjit__cryptoBench/target/criterion"),
        "new",
    )
    .unwrap();
    let ids: Vec<&str> = crypto
        .iter()
        .map(|m| m.id.as_str())
        .filter(|id| id.starts_with("aes_128_gcm-1MB"))
        .collect();
    assert_eq!(ids, ["aes_128_gcm-1MB", "aes_128_gcm-1MB #2"]);
}

#[test]
fn flat_sampling_without_slope_reads() {
    let merkle = read_tree(
        &corpus().join("dicethedev__MerkleForge/target/criterion"),
        "new",
    )
    .unwrap();
    let flat = merkle
        .iter()
        .find(|m| m.id.as_str() == "hash_throughput/Keccak-256/1048576")
        .unwrap();
    assert_eq!(flat.sampling_mode.as_deref(), Some("Flat"));
    assert_eq!(flat.throughput, Some(Throughput::Bytes(1048576)));
    assert_eq!(flat.median.point, 2746399.34375);
}

#[test]
fn a_saved_baseline_is_read_instead_of_new() {
    let root = corpus().join("garypen__deduplicate/target/criterion");
    let saved = read_tree(&root, "0.3.6").unwrap();
    assert_eq!(saved.len(), count_results(&root, "0.3.6"));
    assert_eq!(saved.len(), 18);
    let older = read_tree(&root, "0.3.2").unwrap();
    assert_eq!(older.len(), count_results(&root, "0.3.2"));
    assert!(
        older.len() < saved.len(),
        "0.3.2 was saved for fewer benchmarks"
    );
    assert!(
        matches!(read_tree(&root, "no-such-baseline"), Err(Error::EmptyTree { baseline, .. }) if baseline == "no-such-baseline")
    );
}

/// Copies one real benchmark directory into a fresh tree, for the bad-input cases.
fn scratch_tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let source = corpus().join("Aida118__szse-binary-rs/target/criterion");
    copy_dir(&source, dir.path());
    let results = dir.path().join("TickTrade/parse/new");
    (dir, results)
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut value: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    fs::write(path, serde_json::to_string(&value).unwrap()).unwrap();
}

#[test]
fn legacy_tree_without_benchmark_json_takes_its_id_from_the_directory() {
    let (dir, results) = scratch_tree();
    fs::remove_file(results.join("benchmark.json")).unwrap();
    let measurements = read_tree(dir.path(), "new").unwrap();
    let m = measurements
        .iter()
        .find(|m| m.id.as_str() == "TickTrade/parse")
        .unwrap();
    assert_eq!(m.throughput, None);
    assert_eq!(m.median.point, 33.204832721107366);
}

#[test]
fn truncated_file_names_the_file_and_says_truncated() {
    let (dir, results) = scratch_tree();
    let sample = results.join("sample.json");
    let text = fs::read_to_string(&sample).unwrap();
    fs::write(&sample, &text[..text.len() / 2]).unwrap();
    let error = read_tree(dir.path(), "new").unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, Error::InvalidJson { ref path, .. } if *path == sample),
        "{message}"
    );
    assert!(
        message.contains("truncated") && message.contains("sample.json"),
        "{message}"
    );
    assert!(
        message.contains("field `iters") || message.contains("field `times"),
        "{message}"
    );
}

#[test]
fn nan_estimate_written_as_null_names_the_field() {
    let (dir, results) = scratch_tree();
    edit_json(&results.join("estimates.json"), |v| {
        v["median"]["point_estimate"] = serde_json::Value::Null
    });
    let message = read_tree(dir.path(), "new").unwrap_err().to_string();
    assert!(
        message.contains("estimates.json") && message.contains("median.point_estimate"),
        "{message}"
    );
}

#[test]
fn negative_time_names_the_field() {
    let (dir, results) = scratch_tree();
    edit_json(&results.join("estimates.json"), |v| {
        v["mean"]["confidence_interval"]["lower_bound"] = (-1.5).into()
    });
    let error = read_tree(dir.path(), "new").unwrap_err();
    assert!(
        matches!(&error, Error::InvalidValue { field, .. } if field == "mean.confidence_interval.lower_bound"),
        "{error}"
    );
    let (dir, results) = scratch_tree();
    edit_json(&results.join("sample.json"), |v| {
        v["times"][7] = (-3.0).into()
    });
    let error = read_tree(dir.path(), "new").unwrap_err();
    assert!(
        matches!(&error, Error::InvalidValue { field, .. } if field == "times[7]"),
        "{error}"
    );
}

#[test]
fn sample_arrays_of_different_lengths_are_refused() {
    let (dir, results) = scratch_tree();
    edit_json(&results.join("sample.json"), |v| {
        v["times"].as_array_mut().unwrap().pop();
    });
    let message = read_tree(dir.path(), "new").unwrap_err().to_string();
    assert!(
        message.contains("sample.json") && message.contains("99 entries but iters has 100"),
        "{message}"
    );
}

#[test]
fn wrong_json_shape_names_the_field() {
    let (dir, results) = scratch_tree();
    edit_json(&results.join("benchmark.json"), |v| {
        v["throughput"] = serde_json::json!({"Furlongs": 3})
    });
    let message = read_tree(dir.path(), "new").unwrap_err().to_string();
    assert!(
        message.contains("benchmark.json") && message.contains("throughput"),
        "{message}"
    );
    let (dir, results) = scratch_tree();
    fs::write(results.join("estimates.json"), "[1, 2, 3]").unwrap();
    let message = read_tree(dir.path(), "new").unwrap_err().to_string();
    assert!(
        message.contains("estimates.json") && message.contains("expected struct"),
        "{message}"
    );
}

#[test]
fn missing_sample_file_is_named() {
    let (dir, results) = scratch_tree();
    fs::remove_file(results.join("sample.json")).unwrap();
    let error = read_tree(dir.path(), "new").unwrap_err();
    assert!(
        matches!(&error, Error::MissingFile { path, .. } if *path == results.join("sample.json")),
        "{error}"
    );
}

#[test]
fn missing_and_empty_directories_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        read_tree(&dir.path().join("nope"), "new"),
        Err(Error::MissingDirectory { .. })
    ));
    assert!(matches!(
        read_tree(dir.path(), "new"),
        Err(Error::EmptyTree { .. })
    ));
    let file = dir.path().join("file");
    fs::write(&file, "x").unwrap();
    assert!(matches!(
        read_tree(&file, "new"),
        Err(Error::NotADirectory { .. })
    ));
}

#[test]
fn ids_with_any_characters_survive() {
    let (dir, results) = scratch_tree();
    let odd = "Ünïcode λ/with spaces::and [brackets] (parens)/1024";
    edit_json(&results.join("benchmark.json"), |v| {
        v["full_id"] = odd.into()
    });
    let measurements = read_tree(dir.path(), "new").unwrap();
    assert!(measurements.iter().any(|m| m.id.as_str() == odd));
}

#[test]
fn benchmark_json_without_full_id_composes_it_from_its_parts() {
    let (dir, results) = scratch_tree();
    edit_json(&results.join("benchmark.json"), |v| {
        v.as_object_mut().unwrap().remove("full_id");
        v["value_str"] = "66 bytes".into();
    });
    let measurements = read_tree(dir.path(), "new").unwrap();
    assert!(
        measurements
            .iter()
            .any(|m| m.id.as_str() == "TickTrade/parse/66 bytes")
    );
    edit_json(&results.join("benchmark.json"), |v| {
        let object = v.as_object_mut().unwrap();
        for key in ["group_id", "function_id", "value_str"] {
            object.remove(key);
        }
    });
    let message = read_tree(dir.path(), "new").unwrap_err().to_string();
    assert!(
        message.contains("benchmark.json") && message.contains("full_id"),
        "{message}"
    );
}

#[test]
fn a_large_tree_with_two_bad_files_reports_the_first_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let source = corpus().join("Aida118__szse-binary-rs/target/criterion/TickTrade/parse/new");
    for i in 0..200 {
        let results = dir.path().join(format!("bench_{i:03}/new"));
        copy_dir(&source, &results);
        edit_json(&results.join("benchmark.json"), |v| {
            v["full_id"] = format!("bench/{i:03}").into()
        });
    }
    assert_eq!(read_tree(dir.path(), "new").unwrap().len(), 200);
    for i in [37, 180] {
        fs::write(
            dir.path().join(format!("bench_{i:03}/new/estimates.json")),
            "{\"mean\":",
        )
        .unwrap();
    }
    for _ in 0..5 {
        let error = read_tree(dir.path(), "new").unwrap_err();
        assert!(
            error.to_string().contains("bench_037/new/estimates.json"),
            "{error}"
        );
    }
}

#[test]
fn a_benchmark_named_like_a_results_directory_is_found_below_it() {
    // `Group/new/new/…`: a function called `new` in group `Group`. `Group/` holds a directory
    // named `new` with none of Criterion's files in it, so it is not a benchmark and the walk
    // goes on into it; `Group/new/` is the benchmark, with its own results in `new/`.
    let dir = tempfile::tempdir().unwrap();
    let source = corpus().join("Aida118__szse-binary-rs/target/criterion/TickTrade/parse/new");
    let results = dir.path().join("Group/new/new");
    copy_dir(&source, &results);
    edit_json(&results.join("benchmark.json"), |v| {
        v["full_id"] = "Group/new".into()
    });
    let sibling = dir.path().join("Group/other/new");
    copy_dir(&source, &sibling);
    edit_json(&sibling.join("benchmark.json"), |v| {
        v["full_id"] = "Group/other".into()
    });
    let ids: Vec<String> = read_tree(dir.path(), "new")
        .unwrap()
        .into_iter()
        .map(|m| m.id.as_str().to_owned())
        .collect();
    assert_eq!(ids, ["Group/new", "Group/other"]);

    // One of Criterion's files in `Group/new/` makes `Group` a benchmark with `Group/new/` as
    // its results: it is refused, naming the file it lacks, rather than walked past.
    fs::write(dir.path().join("Group/new/sample.json"), "{}").unwrap();
    let error = read_tree(dir.path(), "new").unwrap_err().to_string();
    assert!(error.contains("Group/new/estimates.json"), "{error}");
    assert!(error.contains("missing"), "{error}");
}

/// Sets when each benchmark directory's `new/sample.json` below `root` was written: the
/// `k`-th directory in path order at `at(k)`.
fn date_results(root: &Path, at: impl Fn(usize) -> std::time::SystemTime) -> usize {
    let mut samples = Vec::new();
    fn find(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                find(&path, out);
            } else if path.ends_with("new/sample.json") {
                out.push(path);
            }
        }
    }
    find(root, &mut samples);
    samples.sort();
    for (k, sample) in samples.iter().enumerate() {
        fs::File::options()
            .write(true)
            .open(sample)
            .unwrap()
            .set_modified(at(k))
            .unwrap();
    }
    samples.len()
}

/// A run's results lie at most a benchmark's time apart, however long the run; results an
/// hour or more older than the next newer ones are an earlier run's, left in the tree.
#[test]
fn results_an_hour_before_the_next_newer_are_an_earlier_runs() {
    use benchgate_collector::criterion::{RUN_GAP, left_behind, read_tree_dated};
    use std::time::{Duration, SystemTime};
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &corpus().join("dicethedev__MerkleForge/target/criterion"),
        dir.path(),
    );
    let now = SystemTime::now();
    let half_hour = Duration::from_secs(1800);
    // One long run: each benchmark half an hour after the one before.
    let n = date_results(dir.path(), |k| now - half_hour * k as u32);
    assert_eq!(n, 30);
    let dated = read_tree_dated(dir.path(), "new").unwrap();
    assert_eq!(left_behind(&dated, RUN_GAP), Vec::<usize>::new());
    // The last two in path order an hour and a minute before the one after them, and
    // a minute apart: an earlier run's.
    let last = n - 2;
    date_results(dir.path(), |k| {
        let start = now - half_hour * (last as u32 - 1);
        match k {
            k if k < last => now - half_hour * k as u32,
            k => start - Duration::from_secs(3660) - Duration::from_secs(60 * (k - last) as u64),
        }
    });
    let dated = read_tree_dated(dir.path(), "new").unwrap();
    let older = left_behind(&dated, RUN_GAP);
    assert_eq!(older.len(), 2, "{older:?}");
    let mut when: Vec<SystemTime> = older.iter().map(|&i| dated[i].1.unwrap()).collect();
    assert!(when[0] < when[1], "oldest first");
    when.sort();
    let newest_kept = dated
        .iter()
        .enumerate()
        .filter(|(i, _)| !older.contains(i))
        .map(|(_, (_, w))| w.unwrap())
        .min()
        .unwrap();
    assert!(newest_kept.duration_since(when[1]).unwrap() > RUN_GAP);
}
