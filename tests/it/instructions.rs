//! Instruction counts end to end: gungraun's benches of the sample workloads run under real
//! Valgrind by `benchgate ab --instructions`, once a side, with two CPU hogs on the machine's
//! cores. A head whose code does the AEAD seal's work twice is `regressed` on instructions;
//! a head that only adds a comment changes no count at all; the comment shows each count on its
//! wall-time twin's row.
//!
//! Needs Valgrind and gungraun-runner 0.20.0 (`.ci/run` installs both); without them the test
//! says so and passes, unless `BENCHGATE_REQUIRE_INSTRUCTIONS` is set, as `.ci/run` does.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use crate::support::*;
use serde_json::Value;

/// The gungraun-runner version the sample crate's `gungraun` dependency needs.
const GUNGRAUN: &str = "0.20.0";
const BEFORE: &str = "pub const SLOWED: &[(&str, usize)] = &[];";
const DOUBLED: &str =
    "pub const SLOWED: &[(&str, usize)] = &[(\"aead/seal/chacha20-poly1305\", 2)];";
const SEAL: &str = "aead/seal/chacha20-poly1305/16 KiB";
const SEAL_COUNT: &str = "aead/seal/chacha20_poly1305_16_kib/instructions";

/// Whether Valgrind and the matching gungraun-runner are installed; if not, says so.
pub fn tools_present(test: &str) -> bool {
    let version = |program: &str| {
        Command::new(program)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let valgrind = version("valgrind").is_some();
    let runner = version("gungraun-runner").is_some_and(|v| v.contains(GUNGRAUN));
    if valgrind && runner {
        return true;
    }
    let missing = format!(
        "{}{}",
        if valgrind {
            ""
        } else {
            "valgrind (apt-get install valgrind) "
        },
        if runner {
            String::new()
        } else {
            format!(
                "gungraun-runner {GUNGRAUN} (cargo install --locked gungraun-runner --version {GUNGRAUN})"
            )
        }
    );
    assert!(
        std::env::var_os("BENCHGATE_REQUIRE_INSTRUCTIONS").is_none(),
        "BENCHGATE_REQUIRE_INSTRUCTIONS is set, but these are missing: {missing}"
    );
    let _ = writeln!(std::io::stderr(), "skipped {test}: missing {missing}");
    false
}

fn ab(repo: &Path, base: &str, head: &str, out_md: &Path) -> Value {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("instructions-target");
    let output = benchgate(
        repo,
        &[
            "ab",
            "--base-ref",
            base,
            "--head-ref",
            head,
            "--rounds",
            "1",
            "--repo",
            "acme/rocket",
            "--format",
            "json",
            "--out-md",
            out_md.to_str().unwrap(),
            "--target-dir",
            target.to_str().unwrap(),
            "--instructions",
            "cargo bench --locked --offline --bench instructions",
            "--",
            "cargo",
            "bench",
            "--locked",
            "--offline",
            "--bench",
            "sample_workloads",
            "--",
            "--noplot",
            "^aead/seal/",
        ],
    );
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        stderr(&output)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn counts(summary: &Value) -> Vec<&Value> {
    summary["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["unit"] == "instructions")
        .collect()
}

#[test]
fn doubled_seal_work_is_regressed_on_instructions_with_two_cpu_hogs_running() {
    if !tools_present("doubled_seal_work_is_regressed_on_instructions") {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("rocket");
    sample_workloads_crate(&repo);
    // Prune the copied lock file to the crate's own dependencies, offline, before committing.
    let metadata = Command::new("cargo")
        // Only this platform's packages: the others (`crunchy` for SPIR-V, …) need not be
        // downloaded on a fresh machine.
        .args([
            "metadata",
            "--offline",
            "--format-version",
            "1",
            "--filter-platform",
        ])
        .arg(format!("{}-unknown-linux-gnu", std::env::consts::ARCH))
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(
        metadata.status.success(),
        "{}",
        String::from_utf8_lossy(&metadata.stderr)
    );
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "A"]);
    let lib = repo.join("src/lib.rs");
    let code = std::fs::read_to_string(&lib).unwrap();
    assert!(code.contains(BEFORE));
    std::fs::write(&lib, code.replace(BEFORE, DOUBLED)).unwrap();
    git(&repo, &["commit", "-q", "-am", "B: seal twice"]);
    std::fs::write(
        &lib,
        format!(
            "{}// Sealed twice on purpose.\n",
            code.replace(BEFORE, DOUBLED)
        ),
    )
    .unwrap();
    git(&repo, &["commit", "-q", "-am", "C: a comment"]);

    let _hogs = [CpuHog::start(), CpuHog::start()];
    let md = root.path().join("perf-summary.md");
    let summary = ab(&repo, "main~2", "main~1", &md);
    assert_eq!(summary["verdict"], "regressed", "{summary:#}");
    let counts_ab = counts(&summary);
    assert_eq!(
        counts_ab.len(),
        9,
        "gungraun's nine benchmarks: {summary:#}"
    );
    for count in &counts_ab {
        let ratio = count["ratio"].as_f64().unwrap();
        assert_eq!(count["rounds"], 1, "{count:#}");
        if count["id"] == SEAL_COUNT {
            assert_eq!(count["verdict"], "regressed", "{count:#}");
            assert!((1.95..2.05).contains(&ratio), "twice the work: {ratio}");
        } else {
            // Other code moved a little with the build (measured: at most +0.06%).
            assert_eq!(count["verdict"], "pass", "{count:#}");
            assert!((ratio - 1.0).abs() < 0.005, "{count:#}");
        }
    }
    // The other events are stored, not judged by default.
    assert_eq!(summary["unjudged"].as_array().unwrap().len(), 36);
    // The comment: the seal's wall-time row carries its instruction verdict.
    let markdown = std::fs::read_to_string(&md).unwrap();
    let row = markdown
        .lines()
        .find(|l| l.starts_with(&format!("| `{SEAL}` |")))
        .unwrap_or_else(|| panic!("{markdown}"));
    assert!(row.ends_with("higher (worse): regressed |"), "{row}");
    // Where they went, from the Callgrind files gungraun left for each side: ring's sealing
    // routine, with (nearly) the whole change, and totals that are the counts gated on.
    let explained = explain_seal(&repo);
    let seal_ratio = counts_ab.iter().find(|c| c["id"] == SEAL_COUNT).unwrap()["ratio"]
        .as_f64()
        .unwrap();
    let totals =
        explained["head_total"].as_f64().unwrap() / explained["base_total"].as_f64().unwrap();
    assert!(
        (totals - seal_ratio).abs() < 1e-9,
        "{totals} against {seal_ratio}"
    );
    let first = &explained["rows"][0];
    assert!(
        first["function"]
            .as_str()
            .unwrap()
            .contains("chacha20_poly1305_seal"),
        "{explained:#}"
    );
    assert!(first["share"].as_f64().unwrap() >= 0.8, "{explained:#}");
    assert_rows_add_up(&explained);
    // The comment carries the same under the regressions, folded, and perf-summary.json too.
    let profile = &summary["profiles"][0];
    assert_eq!(profile["benchmark"], SEAL_COUNT, "{summary:#}");
    assert_eq!(profile["base_total"], explained["base_total"]);
    assert_eq!(profile["rows"][0]["function"], first["function"]);
    assert_eq!(summary["profiles"].as_array().unwrap().len(), 1);
    let section = markdown
        .split(&format!(
            "<details><summary>Where the instructions went: <code>{SEAL_COUNT}</code>"
        ))
        .nth(1)
        .unwrap_or_else(|| panic!("{markdown}"));
    let first_row = section
        .lines()
        .find(|l| l.starts_with("| `"))
        .unwrap_or_else(|| panic!("{section}"));
    assert!(
        first_row.starts_with(&format!("| `{}` |", first["function"].as_str().unwrap())),
        "{first_row}"
    );
    let share: f64 = first_row
        .trim_end_matches(" |")
        .rsplit("| ")
        .next()
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap();
    assert!(share >= 80.0, "{first_row}");

    // A comment only: every count is exactly the same.
    let summary = ab(&repo, "main~1", "main", &md);
    let counts_aa = counts(&summary);
    assert_eq!(counts_aa.len(), 9);
    for count in counts_aa {
        assert_eq!(count["ratio"].as_f64(), Some(1.0), "{count:#}");
        assert_eq!(count["verdict"], "pass", "{count:#}");
    }
    let explained = explain_seal(&repo);
    assert_eq!(explained["change"], 0, "{explained:#}");
    assert!(summary.get("profiles").is_none(), "{summary:#}");
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(
        !markdown.contains("Where the instructions went"),
        "{markdown}"
    );
    assert_eq!(
        explained["rows"].as_array().unwrap().len(),
        0,
        "{explained:#}"
    );
}

/// `benchgate explain --format json` of the seal between the gungraun runs `ab` left for base
/// and head in its scratch directory.
fn explain_seal(repo: &Path) -> Value {
    let dir = |side: &str| {
        repo.join(format!("target/benchgate-ab/gungraun-{side}"))
            .join("benchgate-sample-workloads/instructions/aead/seal.chacha20_poly1305_16_kib")
    };
    let (base, head) = (dir("base"), dir("head"));
    let output = benchgate(
        repo,
        &[
            "explain",
            "--base",
            base.to_str().unwrap(),
            "--head",
            head.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The rows and "everything else" add up to the change of the totals.
fn assert_rows_add_up(explained: &Value) {
    let change = |row: &Value| row["change"].as_i64().unwrap();
    let rows: i64 = explained["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(change)
        .sum();
    assert_eq!(
        rows + change(&explained["rest"]),
        change(explained),
        "{explained:#}"
    );
    assert_eq!(
        change(explained),
        explained["head_total"].as_i64().unwrap() - explained["base_total"].as_i64().unwrap()
    );
}

#[test]
fn explain_names_the_function_behind_a_count_change_and_refuses_a_cut_file() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("collector/tests/fixtures/callgrind");
    let dir = tempfile::tempdir().unwrap();
    let base = fixtures.join("seal-base.out");
    let head = fixtures.join("seal-head-sealed-twice.out");
    let explain = |base: &Path, head: &Path, format: &str| {
        benchgate(
            dir.path(),
            &[
                "explain",
                "--base",
                base.to_str().unwrap(),
                "--head",
                head.to_str().unwrap(),
                "--top",
                "3",
                "--format",
                format,
            ],
        )
    };
    let text = stdout(&explain(&base, &head, "text"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "Ir: 91,234 -> 182,255 (+91,021, +99.8%)",
        "{text}"
    );
    assert!(lines[1].starts_with("function"), "{text}");
    assert!(
        lines[2].starts_with("ring_core_0_17_14__chacha20_poly1305_seal_avx2")
            && lines[2].ends_with("90,848  181,696  +90,848  99.8%"),
        "{text}"
    );
    assert!(lines[5].starts_with("everything else"), "{text}");
    assert_eq!(lines.len(), 6, "three rows and the rest: {text}");
    let explained = json(&explain(&base, &head, "json"));
    assert_eq!(explained["rows"].as_array().unwrap().len(), 3);
    assert_rows_add_up(&explained);
    // A file cut short: refused, naming it; nothing printed as if it were whole.
    let text = std::fs::read_to_string(&head).unwrap();
    let cut = dir.path().join("cut.out");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let output = explain(&base, &cut, "text");
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).is_empty());
    let err = stderr(&output);
    assert!(
        err.contains("--head") && err.contains("cut.out") && err.contains("truncated"),
        "{err}"
    );
}

/// The real summaries kept as fixtures, in a gungraun-like directory tree.
fn gungraun_tree(dir: &Path) -> std::path::PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("collector/tests/fixtures/gungraun");
    let home = dir.join("gungraun");
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        let bench = name.strip_suffix(".summary.json").unwrap();
        let target = home
            .join("benchgate-sample-workloads/instructions")
            .join(bench);
        std::fs::create_dir_all(&target).unwrap();
        std::fs::copy(&path, target.join("summary.json")).unwrap();
    }
    home
}

#[test]
fn ingest_stores_gungraun_counts_and_refuses_a_damaged_summary_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = gungraun_tree(d);
    let ingest = |commit: &str| {
        benchgate(
            d,
            &[
                "ingest",
                "--gungraun",
                home.to_str().unwrap(),
                "--repo",
                "acme/rocket",
                "--commit",
                commit,
            ],
        )
    };
    let output = ingest(&"a".repeat(40));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("read 15 instruction-count measurements"));
    let run = stdout(&output).trim().to_owned();
    let shown = json(&benchgate(d, &["show", &run, "--format", "json"]));
    let seal = shown["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == SEAL_COUNT)
        .unwrap_or_else(|| panic!("{shown:#}"));
    assert_eq!(
        seal["metric"],
        serde_json::json!({"unit": "instructions", "direction": "lower"})
    );
    assert_eq!(seal["median"]["point"], 91234.0);
    // Exported and charted as their own series.
    let csv = stdout(&benchgate(d, &["export", "--format", "csv"]));
    let row = csv
        .lines()
        .find(|l| l.contains(&format!(",{SEAL_COUNT},")))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(row.contains(",instructions,91234,"), "{row}");
    let site = d.join("site");
    let output = benchgate(d, &["dashboard", "--out", site.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let machine = std::fs::read_dir(site.join("acme/rocket"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let index = std::fs::read_to_string(machine.join("index.html")).unwrap();
    assert!(index.contains(SEAL_COUNT), "{index}");

    // Another schema version, and a count that is not a number: refused, nothing stored.
    let summary =
        home.join("benchgate-sample-workloads/instructions/parse-csv_numbers-_16/summary.json");
    edit_json(&summary, |v| v["version"] = "6".into());
    assert_refused(
        &ingest(&"b".repeat(40)),
        &["parse-csv_numbers-_16/summary.json", "`version`", "\"6\""],
    );
    edit_json(&summary, |v| {
        v["version"] = "7".into();
        v["profiles"][0]["data"]["total"]["metrics"]["Ir"]["values"]["new"] = "lots".into();
    });
    assert_refused(
        &ingest(&"b".repeat(40)),
        &["`profiles[0].data.total.metrics.Ir.values.new`", "\"lots\""],
    );
    let runs = json(&benchgate(d, &["runs", "--format", "json"]));
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs:#}");
}
