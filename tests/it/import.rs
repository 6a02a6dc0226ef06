//! `benchgate import-history` on real histories: github-action-benchmark's `data.js` (rune's)
//! and git-bench's `data.json` (RFC 3339 dates, Criterion's `[low, high]` intervals).

use crate::support::*;
use serde_json::Value;

const DATA: &str = "rune-rs__rune/dev/bench/data.js";

#[test]
fn a_github_action_benchmark_history_becomes_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = corpus(DATA);
    let args = [
        "import-history",
        data.to_str().unwrap(),
        "--repo",
        "rune-rs/rune",
    ];
    let output = benchgate(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("imported 411 runs of rune-rs/rune"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("(411 new)"));
    // Again: nothing new.
    assert!(stderr(&benchgate(dir.path(), &args)).contains("(0 new)"));

    let runs: Value =
        serde_json::from_slice(&benchgate(dir.path(), &["runs", "--format", "json"]).stdout)
            .unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 411);
    // The one commit measured twice is stored as attempts 1 and 2.
    let twice: Vec<&Value> = runs
        .iter()
        .filter(|r| r["commit"] == "4fc03953d5891b7df03ccfcd96c592224e662592")
        .collect();
    assert_eq!(
        twice
            .iter()
            .map(|r| r["attempt"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![1, 2]
    );
    let last = runs.last().unwrap();
    assert_eq!(last["commit"], "54fe7cb8eaa3603932a09f678af9d07f39a8d796");
    assert_eq!(last["recorded_at"], "2026-07-30T02:16:16Z");
    assert_eq!(last["branch"], "main");
    let shown: Value = serde_json::from_slice(
        &benchgate(dir.path(), &["show", "latest", "--format", "json"]).stdout,
    )
    .unwrap();
    let measurements = shown["measurements"].as_array().unwrap();
    assert_eq!(measurements.len(), 15);
    let rhai = measurements
        .iter()
        .find(|m| m["id"] == "primes/rhai")
        .unwrap();
    assert_eq!(rhai["median"]["point"], 12310175.0);
    assert_eq!(rhai["median"]["lower"], 12310175.0 - 123815.0);
    assert_eq!(rhai["median"]["upper"], 12310175.0 + 123815.0);

    // The text listing: the newest 20, oldest first, saying so; --all and --limit N.
    let listed = benchgate(dir.path(), &["runs"]);
    let text = stdout(&listed);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 21, "{text}");
    assert!(lines[0].contains(" ATTEMPT "), "{}", lines[0]);
    assert!(lines[20].contains("54fe7cb8eaa3"), "{text}");
    assert!(
        stderr(&listed).contains("the newest 20 of 411 runs; --all lists every one"),
        "{}",
        stderr(&listed)
    );
    let every = stdout(&benchgate(dir.path(), &["runs", "--all"]));
    assert_eq!(every.lines().count(), 412);
    let attempts: Vec<&str> = every
        .lines()
        .filter(|l| l.contains("4fc03953d589"))
        .map(|l| l.split_whitespace().nth(5).unwrap())
        .collect();
    assert_eq!(attempts, vec!["1", "2"], "{every}");
    assert_eq!(
        stdout(&benchgate(dir.path(), &["runs", "--limit", "5"]))
            .lines()
            .count(),
        6
    );
    // `show latest --repo`: that repository's newest run, or a clear refusal.
    let shown = stdout(&benchgate(
        dir.path(),
        &["show", "latest", "--repo", "rune-rs/rune"],
    ));
    assert!(
        shown.starts_with("run 411: rune-rs/rune@54fe7cb8eaa3"),
        "{shown}"
    );
    assert_refused(
        &benchgate(dir.path(), &["show", "latest", "--repo", "acme/rocket"]),
        &["no runs of acme/rocket stored"],
    );
}

#[test]
fn a_git_bench_history_keeps_its_dates_and_criterion_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let data = corpus("fedemagnani__git-bench/dev/bench/data.json");
    let args = [
        "import-history",
        data.to_str().unwrap(),
        "--repo",
        "fedemagnani/git-bench",
    ];
    let output = benchgate(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("(18 new)"), "{}", stderr(&output));
    let runs: Value =
        serde_json::from_slice(&benchgate(dir.path(), &["runs", "--format", "json"]).stdout)
            .unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 18);
    // "date": "2025-12-25T01:04:38.601003Z" and "2026-01-05T20:09:20.552557155Z".
    assert_eq!(runs[0]["recorded_at"], "2025-12-25T01:04:38Z");
    assert_eq!(runs[17]["recorded_at"], "2026-01-05T20:09:20Z");
    assert_eq!(
        runs[17]["commit"],
        "052b3a6f414b08cf18e7978e4acbeaf1a1d79194"
    );
    let shown: Value = serde_json::from_slice(
        &benchgate(dir.path(), &["show", "latest", "--format", "json"]).stdout,
    )
    .unwrap();
    let product = shown["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "arithmetic::product_10")
        .unwrap();
    // "value": 4.6662, "unit": "ns", "range": "[4.6594 ns, 4.6759 ns]".
    assert_eq!(product["median"]["point"], 4.6662);
    assert_eq!(product["median"]["lower"], 4.6594);
    assert_eq!(product["median"]["upper"], 4.6759);
}

#[test]
fn a_bad_history_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("data.json");
    let entry = |unit: &str| {
        format!(
            r#"{{"entries": {{"Benchmark": [{{"commit": {{"id": "{}"}}, "date": 1, "benches": [{{"name": "a", "value": 3, "unit": "{unit}"}}]}}]}}}}"#,
            "a".repeat(40)
        )
    };
    std::fs::write(&bad, entry("widgets")).unwrap();
    let args = ["import-history", "data.json", "--repo", "acme/rocket"];
    assert_refused(
        &benchgate(dir.path(), &args),
        &[
            "data.json",
            "`entries.Benchmark[0].benches[0].unit`",
            "\"widgets\" is neither a time unit",
            "customBiggerIsBetter",
        ],
    );
    assert!(!dir.path().join(".benchgate").exists(), "nothing stored");
    let dated = entry("ms").replace(r#""date": 1"#, r#""date": "yesterday""#);
    std::fs::write(&bad, dated).unwrap();
    assert_refused(
        &benchgate(dir.path(), &args),
        &[
            "data.json",
            "`entries.Benchmark[0].date`",
            "\"yesterday\" is neither milliseconds since the epoch nor an RFC 3339 time",
        ],
    );
    assert!(!dir.path().join(".benchgate").exists(), "nothing stored");
    let absurd = entry("s").replace(r#""value": 3"#, r#""value": 1e300"#);
    std::fs::write(&bad, absurd).unwrap();
    assert_refused(
        &benchgate(dir.path(), &args),
        &[
            "`entries.Benchmark[0].benches[0].value`",
            "more than an hour per iteration",
        ],
    );
    assert!(!dir.path().join(".benchgate").exists(), "nothing stored");
    std::fs::write(&bad, entry("ms")).unwrap();
    let output = benchgate(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown: Value = serde_json::from_slice(
        &benchgate(dir.path(), &["show", "latest", "--format", "json"]).stdout,
    )
    .unwrap();
    assert_eq!(
        shown["measurements"][0]["median"]["point"], 3e6,
        "ms are read as ns"
    );
}

/// The last entry's benchmarks of an imported history, as `show latest` prints them.
fn latest_measurements(dir: &std::path::Path) -> Vec<Value> {
    let shown: Value =
        serde_json::from_slice(&benchgate(dir, &["show", "latest", "--format", "json"]).stdout)
            .unwrap();
    shown["measurements"].as_array().unwrap().clone()
}

fn import(dir: &std::path::Path, relative: &str, repo: &str) -> std::process::Output {
    import_with(dir, relative, repo, &[])
}

/// [`import`] with more options.
fn import_with(
    dir: &std::path::Path,
    relative: &str,
    repo: &str,
    options: &[&str],
) -> std::process::Output {
    let data = corpus(relative);
    let mut args = vec!["import-history", data.to_str().unwrap(), "--repo", repo];
    args.extend_from_slice(options);
    benchgate(dir, &args)
}

/// `import` of a mountpoint-s3 history that succeeds: its stderr.
fn imported_mountpoint(dir: &std::path::Path, relative: &str) -> String {
    let output = import(dir, relative, "awslabs/mountpoint-s3");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{relative}: {err}");
    err
}

#[test]
fn custom_tools_import_with_their_units_and_direction() {
    // mountpoint-s3 keeps three histories, each of one suite: throughput in MiB/s
    // (customBiggerIsBetter), peak memory in MiB and latency in milliseconds and seconds
    // (customSmallerIsBetter). Imported into one store, as a user would, each suite is a
    // machine of its own, as it would be were the three suites in one file.
    let commit = "58817cab2fc3020a422d8aa14049a86b296f4498";
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "awslabs__mountpoint-s3/dev/bench/data.js",
            "Throughput Benchmark (S3 Standard)",
            "sequential_read,sequential_write_four_threads",
            Some("MiB/s"),
            "higher",
            4878.96748046875,
        ),
        (
            "awslabs__mountpoint-s3/dev/bench/peak_mem_usage/data.js",
            "Throughput Benchmark - Peak Memory Usage (S3 Standard)",
            "mix_1r4w",
            Some("MiB"),
            "lower",
            3239.32421875,
        ),
        (
            "awslabs__mountpoint-s3/dev/latency_bench/data.js",
            "Latency Benchmark (S3 Standard)",
            "readdir_100",
            None,
            "lower",
            0.047e9,
        ),
    ];
    for (file, suite, id, unit, direction, value) in files {
        let err = imported_mountpoint(dir.path(), file);
        assert!(err.contains("(8 new)"), "{err}");
        assert!(err.contains(&format!("(imported suite {suite})")), "{err}");
        // This file's newest entry, alone on its suite's machine.
        let short = err.split("fingerprint ").nth(1).unwrap()[..12].to_owned();
        let runs = json(&benchgate(
            dir.path(),
            &["runs", "--all", "--format", "json"],
        ));
        let newest = runs
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["fingerprint"].as_str().unwrap().starts_with(&short))
            .max_by_key(|r| r["recorded_at"].as_str().unwrap().to_owned())
            .unwrap();
        assert_eq!(newest["commit"], commit);
        let shown = benchgate(
            dir.path(),
            &["show", &newest["id"].to_string(), "--format", "json"],
        );
        let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
        let measurements = shown["measurements"].as_array().unwrap();
        let m = measurements
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("{file}: no {id}"));
        assert_eq!(m["median"]["point"], value, "{file}");
        match unit {
            Some(unit) => {
                assert!(
                    measurements.iter().all(|m| m["metric"]
                        == serde_json::json!({"unit": unit, "direction": direction})),
                    "{file}: {measurements:?}"
                )
            }
            None => assert!(
                measurements
                    .iter()
                    .all(|m| m.get("metric").is_none_or(Value::is_null)),
                "times only: {measurements:?}"
            ),
        }
    }
    // Again: nothing new, each file onto its own machine.
    for (file, ..) in files {
        let err = imported_mountpoint(dir.path(), file);
        assert!(err.contains("(0 new)"), "{err}");
    }
    let runs = json(&benchgate(
        dir.path(),
        &["runs", "--all", "--format", "json"],
    ));
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 24);
    let machines: std::collections::BTreeSet<&str> = runs
        .iter()
        .filter(|r| r["commit"] == commit)
        .map(|r| r["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(machines.len(), 3, "{runs:?}");
    let out = dir.path().join("site");
    let output = benchgate(dir.path(), &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let root = std::fs::read_to_string(out.join("index.html")).unwrap();
    for (_, suite, ..) in files {
        assert!(
            root.contains(&format!("· imported suite {suite} · newest run 2026-08-22")),
            "{suite}: {root}"
        );
    }
    // `seq_read_skip_17m` is a rate on one machine and a size on another: each machine's index
    // and page read it in its own unit.
    let index_of = |suite: &str| {
        let machines = out.join("awslabs/mountpoint-s3");
        std::fs::read_dir(&machines)
            .unwrap()
            .map(|entry| std::fs::read_to_string(entry.unwrap().path().join("index.html")).unwrap())
            .find(|html| html.contains(&format!("</code>: imported suite {suite}</")))
            .unwrap_or_else(|| panic!("no index of {suite}"))
    };
    let cell = |html: &str| {
        let at = html
            .find(">seq_read_skip_17m</a></td><td class=\"num\">")
            .unwrap();
        let rest = &html[at..];
        let start = rest.find("\"num\">").unwrap() + 6;
        rest[start..start + rest[start..].find('<').unwrap()].to_owned()
    };
    assert_eq!(
        cell(&index_of("Throughput Benchmark (S3 Standard)")),
        "1,254 MiB/s"
    );
    assert_eq!(
        cell(&index_of(
            "Throughput Benchmark - Peak Memory Usage (S3 Standard)"
        )),
        "2,156 MiB"
    );
    // Each index names the other machines by their suites, not by a diff of profile fields.
    let throughput = index_of("Throughput Benchmark (S3 Standard)");
    assert!(
        throughput.contains(
            "<span class=\"muted\">imported suite Latency Benchmark (S3 Standard)</span>"
        ),
        "{throughput}"
    );
    assert!(!throughput.contains("cpu_brand"), "{throughput}");
}

/// The profile every single-suite history was imported on before each suite was a machine of
/// its own, as `benchgate fingerprint --format json` writes it.
const EARLIER_IMPORTED_PROFILE: &str = r#"{
  "fingerprint": "f03fcfd25dd7d01f607087e6625c05e3706fd5ffe3244deb5eb4e991591030c2",
  "profile": {
    "cpu_arch": "unknown", "cpu_vendor": "unknown",
    "cpu_brand": "imported from github-action-benchmark",
    "physical_cores": 0, "logical_cores": 0, "memory_gib": 0, "cpu_features": [],
    "os_name": "unknown", "os_major_version": "unknown",
    "runner_image": null, "runner_image_version": null,
    "rustc_version": "unknown", "host_triple": "unknown", "hostname": null,
    "cpu_frequency_mhz": null, "kernel_version": null, "os_version": null
  }
}"#;

#[test]
fn a_history_an_earlier_import_stored_is_added_to_where_it_is() {
    // A store where an earlier benchgate put mountpoint-s3's throughput history on its one
    // `imported` profile, its newest 3 entries not yet imported.
    let dir = tempfile::tempdir().unwrap();
    let data = corpus("awslabs__mountpoint-s3/dev/bench/data.js");
    let text = std::fs::read_to_string(&data).unwrap();
    let start = text.find('{').unwrap();
    let mut history: Value =
        serde_json::from_str(text[start..].trim_end().trim_end_matches(';')).unwrap();
    let entries = history["entries"]["Throughput Benchmark (S3 Standard)"]
        .as_array_mut()
        .unwrap();
    entries.truncate(entries.len() - 3);
    let older = dir.path().join("older.json");
    std::fs::write(&older, history.to_string()).unwrap();
    let profile = dir.path().join("imported.json");
    std::fs::write(&profile, EARLIER_IMPORTED_PROFILE).unwrap();
    let earlier = [
        "import-history",
        older.to_str().unwrap(),
        "--repo",
        "awslabs/mountpoint-s3",
        "--fingerprint",
        profile.to_str().unwrap(),
    ];
    let output = benchgate(dir.path(), &earlier);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    // Imported again, whole: the 3 newest added on the same machine, not a second one.
    let err = imported_mountpoint(dir.path(), "awslabs__mountpoint-s3/dev/bench/data.js");
    assert!(
        err.contains("(3 new), fingerprint f03fcfd25dd7 (imported from github-action-benchmark, where an earlier import stored this history)"),
        "{err}"
    );
    // Another history of the same repository is a machine of its own beside it.
    let err = imported_mountpoint(
        dir.path(),
        "awslabs__mountpoint-s3/dev/latency_bench/data.js",
    );
    assert!(
        err.contains("(8 new)") && err.contains("(imported suite Latency Benchmark (S3 Standard))"),
        "{err}"
    );
    let runs = json(&benchgate(
        dir.path(),
        &["runs", "--all", "--format", "json"],
    ));
    let mut per_machine: std::collections::BTreeMap<&str, usize> = Default::default();
    for run in runs.as_array().unwrap() {
        *per_machine
            .entry(run["fingerprint"].as_str().unwrap())
            .or_default() += 1;
    }
    assert_eq!(per_machine.len(), 2, "{per_machine:?}");
    assert_eq!(
        per_machine.get("f03fcfd25dd7d01f607087e6625c05e3706fd5ffe3244deb5eb4e991591030c2"),
        Some(&8)
    );
}

/// The root page of the site `dashboard` writes from the store in `dir`.
fn site_root(dir: &std::path::Path) -> String {
    let out = dir.join("site");
    let output = benchgate(dir, &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::fs::read_to_string(out.join("index.html")).unwrap()
}

#[test]
fn each_suite_of_a_history_is_a_machine_of_its_own() {
    // mountpoint-s3's throughput (MiB/s) and peak memory (MiB) suites, written into one
    // file as github-action-benchmark writes several suites: both measure
    // `seq_read_skip_17m`, so each suite is a machine (a matrix's), 8 commits each.
    let dir = tempfile::tempdir().unwrap();
    let history = |relative: &str| -> Value {
        let text = std::fs::read_to_string(corpus(relative)).unwrap();
        serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
    };
    let mut one = history("awslabs__mountpoint-s3/dev/bench/data.js");
    let memory = history("awslabs__mountpoint-s3/dev/bench/peak_mem_usage/data.js");
    for (suite, entries) in memory["entries"].as_object().unwrap() {
        one["entries"][suite] = entries.clone();
    }
    assert_eq!(one["entries"].as_object().unwrap().len(), 2);
    let data = dir.path().join("data.js");
    std::fs::write(&data, format!("window.BENCHMARK_DATA = {one}\n")).unwrap();
    let output = benchgate(
        dir.path(),
        &[
            "import-history",
            data.to_str().unwrap(),
            "--repo",
            "awslabs/mountpoint-s3",
        ],
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("imported 16 runs"), "{err}");
    assert!(err.contains("one machine per suite"), "{err}");
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 16);
    assert!(runs.iter().all(|r| r["attempt"] == 1));
    let machines: std::collections::BTreeSet<&str> = runs
        .iter()
        .map(|r| r["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(machines.len(), 2, "{machines:?}");
    for fingerprint in &machines {
        assert!(err.contains(&fingerprint[..12]), "{err}");
    }
    // `show` names the machine by its suite, not as "0 cores, unknown", and the ids carry
    // no prefix.
    let shown = stdout(&benchgate(dir.path(), &["show", "latest"]));
    assert!(shown.contains("(imported suite "), "{shown}");
    assert!(!shown.contains("0 cores"), "{shown}");
    assert!(shown.contains("\nseq_read_skip_17m "), "{shown}");
    // The site's root lists both machines.
    let root = site_root(dir.path());
    for suite in [
        "Throughput Benchmark (S3 Standard)",
        "Throughput Benchmark - Peak Memory Usage (S3 Standard)",
    ] {
        assert!(
            root.contains(&format!(" · imported suite {suite} · newest run ")),
            "{suite}: {root}"
        );
    }
}

#[test]
fn suites_of_different_benchmarks_at_the_same_commits_are_one_machine() {
    // hyper: `pipeline` (1 benchmark) and `end_to_end` (14) measured the same 12 commits:
    // one job's two bench targets, as tokio's four suites are.
    let dir = tempfile::tempdir().unwrap();
    let output = import(
        dir.path(),
        "hyperium__hyper/dev/bench/data.js",
        "hyperium/hyper",
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("imported 12 runs"), "{err}");
    assert!(
        err.contains("its 2 suites measure different benchmarks at the same commits, as one job's bench targets do, so they are one machine and each id starts with its suite (--suites machines for a machine each)"),
        "{err}"
    );
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 12);
    assert!(runs.iter().all(|r| r["n_benchmarks"] == 15), "{runs:?}");
    let measurements = latest_measurements(dir.path());
    assert!(
        measurements
            .iter()
            .any(|m| m["id"] == "pipeline/hello_world_16"),
        "{measurements:?}"
    );

    // Asked for, each suite is a machine: two, twelve runs each, ids without a prefix.
    let dir = tempfile::tempdir().unwrap();
    let output = import_with(
        dir.path(),
        "hyperium__hyper/dev/bench/data.js",
        "hyperium/hyper",
        &["--suites", "machines"],
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("imported 24 runs"), "{err}");
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    let mut per_machine: std::collections::BTreeMap<&str, Vec<u64>> = Default::default();
    for run in runs.as_array().unwrap() {
        per_machine
            .entry(run["fingerprint"].as_str().unwrap())
            .or_default()
            .push(run["n_benchmarks"].as_u64().unwrap());
    }
    let mut sizes: Vec<(usize, u64)> = per_machine.values().map(|n| (n.len(), n[0])).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, vec![(12, 1), (12, 14)]);
    let root = site_root(dir.path());
    assert!(
        root.contains("14 benchmarks · imported suite end_to_end · newest run 2026-08-"),
        "{root}"
    );
}

/// pytest-benchmark's history (safetensors, through github-action-benchmark's `pytest` tool):
/// rates in `iter/sec`, higher is better, one bare value a run (its `range` is a standard
/// deviation of the time, in seconds, not of the rate).
#[test]
fn a_pytest_history_is_rates_with_no_spread_made_up() {
    let dir = tempfile::tempdir().unwrap();
    let output = import(
        dir.path(),
        "huggingface__safetensors/dev/bench/data.js",
        "huggingface/safetensors",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("imported 60 runs"),
        "{}",
        stderr(&output)
    );
    let flax = latest_measurements(dir.path())
        .into_iter()
        .find(|m| m["id"] == "benches/test_flax.py::test_flax_flax_load")
        .unwrap();
    assert_eq!(flax["median"]["point"], 5.014317757567063);
    assert_eq!(flax["metric"]["unit"], "iter/sec");
    assert_eq!(flax["metric"]["direction"], "higher");
    // One value a run has no interval to show: not "±0.0%".
    let shown = stdout(&benchgate(dir.path(), &["show", "latest"]));
    let row = shown
        .lines()
        .find(|l| l.starts_with("benches/test_flax.py::test_flax_flax_load "))
        .unwrap_or_else(|| panic!("{shown}"));
    let cells: Vec<&str> = row.split("  ").filter(|c| !c.trim().is_empty()).collect();
    assert_eq!(
        cells.iter().map(|c| c.trim()).collect::<Vec<_>>(),
        vec![
            "benches/test_flax.py::test_flax_flax_load",
            "5.014 iter/sec",
            "5.014 iter/sec",
            "-",
            "1"
        ],
        "{shown}"
    );
    assert!(!shown.contains('±'), "{shown}");
}

#[test]
fn with_suites_as_prefixes_a_history_is_one_run_per_commit() {
    let dir = tempfile::tempdir().unwrap();
    let data = corpus("hyperium__hyper/dev/bench/data.js");
    let prefixed = [
        "import-history",
        data.to_str().unwrap(),
        "--repo",
        "hyperium/hyper",
        "--suites",
        "prefix",
    ];
    let output = benchgate(dir.path(), &prefixed);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("imported 12 runs"),
        "{}",
        stderr(&output)
    );
    let runs = json(&benchgate(dir.path(), &["runs", "--format", "json"]));
    assert_eq!(runs.as_array().unwrap().len(), 12);
    let measurements = latest_measurements(dir.path());
    assert_eq!(measurements.len(), 15);
    let hello = measurements
        .iter()
        .find(|m| m["id"] == "pipeline/hello_world_16")
        .unwrap();
    assert_eq!(hello["median"]["point"], 68228.0);
    assert!(
        measurements
            .iter()
            .any(|m| m["id"] == "end_to_end/http1_consecutive_x1_both_100kb")
    );
    // One machine named by --fingerprint cannot be two suites' machines: said, nothing stored.
    let profile = dir.path().join("profile.json");
    let output = benchgate(dir.path(), &["fingerprint", "--format", "json"]);
    std::fs::write(&profile, &output.stdout).unwrap();
    let other = tempfile::tempdir().unwrap();
    let output = import_with(
        other.path(),
        "hyperium__hyper/dev/bench/data.js",
        "hyperium/hyper",
        &[
            "--suites",
            "machines",
            "--fingerprint",
            profile.to_str().unwrap(),
        ],
    );
    assert_refused(&output, &["data.js", "2 suites", "--suites prefix"]);
    assert!(!other.path().join(".benchgate/benchgate.db").exists());
}

#[test]
fn an_entry_that_cannot_be_stored_leaves_nothing_imported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let history = |entries: &[(&str, u64, f64)]| {
        let entries: Vec<Value> = entries
            .iter()
            .map(|(commit, date, value)| {
                serde_json::json!({"commit": {"id": commit.repeat(40)}, "date": date, "tool": "cargo",
                    "benches": [{"name": "a", "value": value, "unit": "ns/iter"}]})
            })
            .collect();
        std::fs::write(
            d.join("data.json"),
            serde_json::json!({"entries": {"Benchmark": entries}}).to_string(),
        )
        .unwrap();
    };
    let args = ["import-history", "data.json", "--repo", "acme/rocket"];
    history(&[("b", 2, 10.0)]);
    assert_eq!(benchgate(d, &args).status.code(), Some(0));
    // A new commit, then commit b again with another value: b's run conflicts, and the new
    // commit before it is not stored either.
    history(&[("a", 1, 5.0), ("b", 2, 11.0)]);
    assert_refused(
        &benchgate(d, &args),
        &["data.json", "nothing was imported", "--replace"],
    );
    let runs = json(&benchgate(d, &["runs", "--format", "json"]));
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs:#}");
}

#[test]
fn the_sites_root_lists_repositories_as_github_does_whatever_their_case() {
    let dir = tempfile::tempdir().unwrap();
    for repo in ["Serial-ATA/lofty-rs", "antiguru/flatcontainer", "zeta/z"] {
        let output = import(
            dir.path(),
            "antiguru__flatcontainer/dev/bench/data.js",
            repo,
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    let out = dir.path().join("site");
    let output = benchgate(dir.path(), &["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let root = std::fs::read_to_string(out.join("index.html")).unwrap();
    let at = |name: &str| {
        root.find(&format!(">{name}<"))
            .unwrap_or_else(|| panic!("{name}: {root}"))
    };
    assert!(
        at("antiguru/flatcontainer") < at("Serial-ATA/lofty-rs"),
        "{root}"
    );
    assert!(at("Serial-ATA/lofty-rs") < at("zeta/z"), "{root}");
}
