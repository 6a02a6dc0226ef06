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
/// The sample crate's CSV parsing, std's `parse` inlined into `parse_numbers`; and the same
/// moved into a function of its own that checks the digits before reading them.
const PARSED_INLINE: &str = "        .filter_map(|field| field.trim().parse::<u64>().ok())
        .sum()
}
";
const PARSED_APART: &str = "        .filter_map(|field| parse_field(field.trim()))
        .sum()
}

/// A field's number: its digits checked, then read.
#[inline(never)]
pub fn parse_field(field: &str) -> Option<u64> {
    if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    field
        .bytes()
        .try_fold(0u64, |n, b| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))
}
";
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
    let _load = loading_the_machine();
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
    let (first_row, share) = first_profile_row(&markdown, SEAL_COUNT);
    assert!(
        first_row.starts_with(&format!("| `{}` |", first["function"].as_str().unwrap())),
        "{first_row}"
    );
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

    // Work moved: a head that parses each CSV field in a function of its own, checking its
    // digits before reading them. The parsing leaves `parse_numbers` (std's `parse` was
    // inlined there) for the new `parse_field`: both are shown, with opposite signs, and the
    // rows and everything else add up to the net change.
    let code = std::fs::read_to_string(&lib).unwrap();
    assert!(code.contains(PARSED_INLINE), "{code}");
    std::fs::write(&lib, code.replace(PARSED_INLINE, PARSED_APART)).unwrap();
    git(&repo, &["commit", "-q", "-am", "D: fields parsed apart"]);
    let summary = ab(&repo, "main~1", "main", &md);
    let markdown = std::fs::read_to_string(&md).unwrap();
    let moved: Vec<&Value> = summary["profiles"]
        .as_array()
        .unwrap_or_else(|| panic!("{summary:#}"))
        .iter()
        .filter(|p| {
            p["benchmark"]
                .as_str()
                .unwrap()
                .starts_with("parse/csv_numbers/")
        })
        .collect();
    assert_eq!(moved.len(), 3, "every line length: {summary:#}");
    for profile in moved {
        let rows = profile["rows"].as_array().unwrap();
        let row = |name: &str| {
            rows.iter()
                .find(|r| r["function"] == name)
                .unwrap_or_else(|| panic!("no {name}: {profile:#}"))
        };
        let change = |r: &Value| r["head"].as_i64().unwrap() - r["base"].as_i64().unwrap();
        let new = row("benchgate_sample_workloads::parse_field");
        assert_eq!(new["base"], 0, "{profile:#}");
        assert!(change(new) > 0, "{profile:#}");
        let old = row("benchgate_sample_workloads::parse_numbers");
        assert!(change(old) < 0, "the parsing left it: {profile:#}");
        let net = profile["head_total"].as_i64().unwrap() - profile["base_total"].as_i64().unwrap();
        let sum: i64 = rows.iter().chain([&profile["rest"]]).map(change).sum();
        assert_eq!(sum, net, "{profile:#}");
        assert!(
            change(new) > net,
            "more moved into the new function than the count grew: {profile:#}"
        );
        let benchmark = profile["benchmark"].as_str().unwrap();
        assert!(
            markdown.contains(&format!(
                "<details><summary>Where the instructions went: <code>{benchmark}</code>"
            )),
            "{markdown}"
        );
    }
}

/// The first row of the folded "Where the instructions went" table of `count` in a report's
/// markdown, and its share of the change in percent.
pub fn first_profile_row<'a>(markdown: &'a str, count: &str) -> (&'a str, f64) {
    let section = markdown
        .split(&format!(
            "<details><summary>Where the instructions went: <code>{count}</code>"
        ))
        .nth(1)
        .unwrap_or_else(|| panic!("no profile of {count}: {markdown}"));
    let row = section
        .lines()
        .find(|l| l.starts_with("| `"))
        .unwrap_or_else(|| panic!("{section}"));
    let share = row
        .trim_end_matches(" |")
        .rsplit("| ")
        .next()
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap();
    (row, share)
}

/// `benchgate ingest --gungraun HOME` of acme/rocket at `commit` as a run of `kind`.
fn ingest_gungraun(dir: &Path, home: &Path, commit: &str, kind: &str) -> std::process::Output {
    benchgate(
        dir,
        &[
            "ingest",
            "--gungraun",
            home.to_str().unwrap(),
            "--repo",
            "acme/rocket",
            "--commit",
            commit,
            "--kind",
            kind,
        ],
    )
}

/// `benchgate explain --base BASE --head HEAD` with `extra` arguments, run in `dir`.
fn explain_files(dir: &Path, base: &Path, head: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "explain",
        "--base",
        base.to_str().unwrap(),
        "--head",
        head.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    benchgate(dir, &args)
}

/// `benchgate explain --format json` of the seal between the gungraun runs `ab` left for base
/// and head in its scratch directory.
fn explain_seal(repo: &Path) -> Value {
    let dir = |side: &str| {
        repo.join(format!("target/benchgate-ab/gungraun-{side}"))
            .join("benchgate-sample-workloads/instructions/aead/seal.chacha20_poly1305_16_kib")
    };
    let output = explain_files(repo, &dir("base"), &dir("head"), &["--format", "json"]);
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
        explain_files(dir.path(), base, head, &["--top", "3", "--format", format])
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
    // By crate: ring's C and assembly (no Rust path), ring's Rust, the benchmark's own crate.
    let output = explain_files(dir.path(), &base, &head, &["--by", "crate", "--top", "3"]);
    let by_crate = stdout(&output);
    let lines: Vec<&str> = by_crate.lines().collect();
    assert_eq!(
        lines[1..],
        [
            "crate                         base     head   change  share",
            "(no Rust path)              91,077  182,000  +90,923  99.9%",
            "ring                            78      156      +78   0.1%",
            "benchgate_sample_workloads      48       68      +20   0.0%",
            "everything else                 31       31       +0   0.0%",
        ],
        "{by_crate}"
    );
    // A file that is not there: named, with the system's reason said once.
    let output = explain(&dir.path().join("gone.out"), &head, "text");
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("--base: ") && err.contains("gone.out: cannot read: "),
        "{err}"
    );
    assert_eq!(err.matches("(os error 2)").count(), 1, "{err}");
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
    let ingest = |commit: &str| ingest_gungraun(d, &home, commit, "local");
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

/// A gungraun home of the fixtures' summaries, the seal's beside a Callgrind file of
/// `callgrind` (`collector/tests/fixtures/callgrind/`), its instruction count set to `count`.
fn seal_home(dir: &Path, callgrind: &str, count: u64) -> std::path::PathBuf {
    let home = gungraun_tree(dir);
    let seal =
        home.join("benchgate-sample-workloads/instructions/aead-seal-chacha20_poly1305_16_kib");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("collector/tests/fixtures/callgrind");
    std::fs::copy(
        fixtures.join(callgrind),
        seal.join("callgrind.seal.chacha20_poly1305_16_kib.out"),
    )
    .unwrap();
    edit_json(&seal.join("summary.json"), |v| {
        v["profiles"][0]["data"]["total"]["metrics"]["Ir"]["values"]["new"] = count.into();
    });
    home
}

#[test]
fn a_stored_baseline_says_where_a_count_regression_went_from_the_stored_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ingest = |home: &Path, commit: &str, kind: &str| {
        let output = ingest_gungraun(d, home, commit, kind);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        (stdout(&output).trim().to_owned(), stderr(&output))
    };
    // Real Callgrind files of the seal, before and after the code change that seals twice
    // (gungraun 0.20, Valgrind 3.19), each with the count gungraun summed from it.
    let base_home = seal_home(&d.join("base"), "seal-base.out", 91_234);
    let (_, said) = ingest(&base_home, &"a".repeat(40), "push");
    assert!(
        said.contains("read 15 instruction-count measurements")
            && said.contains("1 with a profile by function"),
        "{said}"
    );
    let head_home = seal_home(&d.join("head"), "seal-head-sealed-twice.out", 182_255);
    let (head, _) = ingest(&head_home, &"b".repeat(40), "pr");
    let gate = |head: &str| {
        let md = d.join(format!("gate-{head}.md"));
        let output = benchgate(
            d,
            &[
                "gate",
                "--head",
                head,
                "--base-commit",
                &"a".repeat(40),
                "--format",
                "json",
                "--out-md",
                md.to_str().unwrap(),
            ],
        );
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
        (summary, std::fs::read_to_string(md).unwrap())
    };
    let (summary, markdown) = gate(&head);
    let count = summary["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == SEAL_COUNT)
        .unwrap();
    assert_eq!(count["verdict"], "regressed", "{summary:#}");
    // The stored profiles explain it as the Callgrind files did: ring's sealing routine first,
    // with 99.8% of the change; the rows and the rest add up to it exactly.
    let profiles = summary["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 1, "{summary:#}");
    let profile = &profiles[0];
    assert_eq!(profile["benchmark"], SEAL_COUNT);
    assert_eq!(profile["base_total"], 91_234);
    assert_eq!(profile["head_total"], 182_255);
    assert_eq!(
        profile["rows"][0]["function"],
        "ring_core_0_17_14__chacha20_poly1305_seal_avx2"
    );
    assert_eq!(profile["rows"][0]["base"], 90_848);
    assert_eq!(profile["rows"][0]["head"], 181_696);
    let rows: i64 = profile["rows"]
        .as_array()
        .unwrap()
        .iter()
        .chain([&profile["rest"]])
        .map(|r| r["head"].as_i64().unwrap() - r["base"].as_i64().unwrap())
        .sum();
    assert_eq!(rows, 182_255 - 91_234);
    assert!(
        markdown.contains(&format!(
            "<details><summary>Where the instructions went: <code>{SEAL_COUNT}</code>"
        )),
        "{markdown}"
    );
    assert!(
        markdown.contains("| `ring_core_0_17_14__chacha20_poly1305_seal_avx2` | 90,848 | 181,696 | +90,848 | 99.8% |"),
        "{markdown}"
    );
    assert!(!markdown.contains("No profile"), "{markdown}");

    // `explain` of the two stored runs prints what it prints of the Callgrind files themselves:
    // the seal's 23 functions are all kept.
    let base_run = summary["base"]
        .as_str()
        .unwrap()
        .split("(run ")
        .nth(1)
        .unwrap()
        .trim_end_matches(')')
        .to_owned();
    let stored = benchgate(
        d,
        &[
            "explain",
            "--base-run",
            &base_run,
            "--head-run",
            &head,
            "--benchmark",
            "aead/seal/chacha20_poly1305_16_kib",
            "--top",
            "3",
        ],
    );
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("collector/tests/fixtures/callgrind");
    let files = explain_files(
        d,
        &fixtures.join("seal-base.out"),
        &fixtures.join("seal-head-sealed-twice.out"),
        &["--top", "3"],
    );
    assert_eq!(stored.status.code(), Some(0), "{}", stderr(&stored));
    assert_eq!(stdout(&stored), stdout(&files));
    assert!(
        stdout(&stored).contains(
            "ring_core_0_17_14__chacha20_poly1305_seal_avx2  90,848  181,696  +90,848  99.8%"
        ),
        "{}",
        stdout(&stored)
    );

    // The dashboard: the same change stored on the default branch (a nightly run) is shown on
    // the count's page, from the same stored profiles; no other page has the section.
    ingest(&head_home, &"d".repeat(40), "nightly");
    let site = d.join("site");
    let output = benchgate(d, &["dashboard", "--out", site.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut explained_pages = Vec::new();
    let mut stack = vec![site.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                let page = std::fs::read_to_string(&path).unwrap();
                if page.contains("Where the instructions went") {
                    explained_pages.push(page);
                }
            }
        }
    }
    assert_eq!(explained_pages.len(), 1, "one count changed");
    let page = &explained_pages[0];
    assert!(page.contains(&format!("<h1>{SEAL_COUNT}</h1>")), "{page}");
    assert!(page.contains("91,234 → 182,255 Ir (+91,021)"), "{page}");
    assert!(
        page.contains("<tr><td><code>ring_core_0_17_14__chacha20_poly1305_seal_avx2</code></td><td class=\"num\">90,848</td><td class=\"num\">181,696</td><td class=\"num worse\">+90,848</td><td class=\"num\">99.8%</td></tr>"),
        "{page}"
    );

    // A head whose Callgrind file was cut short: its counts are stored and gated all the
    // same, and the report says which run holds no profile, and why.
    let cut_home = seal_home(&d.join("cut"), "seal-head-sealed-twice.out", 182_255);
    let file = cut_home.join(
        "benchgate-sample-workloads/instructions/aead-seal-chacha20_poly1305_16_kib/callgrind.seal.chacha20_poly1305_16_kib.out",
    );
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, &text[..text.len() / 2]).unwrap();
    let (cut, said) = ingest(&cut_home, &"c".repeat(40), "pr");
    assert!(
        said.contains("0 with a profile by function")
            && said.contains("no profile of aead/seal/chacha20_poly1305_16_kib: ")
            && said.contains("callgrind.seal.chacha20_poly1305_16_kib.out"),
        "{said}"
    );
    let (summary, markdown) = gate(&cut);
    assert_eq!(
        summary["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["id"] == SEAL_COUNT)
            .unwrap()["verdict"],
        "regressed"
    );
    assert!(summary.get("profiles").is_none(), "{summary:#}");
    assert!(
        markdown.contains(&format!(
            "No profile of `{SEAL_COUNT}`: the head run {cut} holds instruction counts but no profile by function of it"
        )),
        "{markdown}"
    );
    assert!(
        markdown.contains("No profile: the stored runs hold these instruction counts without their profile by function."),
        "{markdown}"
    );
    assert_refused(
        &benchgate(
            d,
            &[
                "explain",
                "--base-run",
                &base_run,
                "--head-run",
                &cut,
                "--benchmark",
                "aead/seal/chacha20_poly1305_16_kib/instructions",
            ],
        ),
        &[
            "--head-run",
            &format!(
                "run {cut} holds no profile by function of `aead/seal/chacha20_poly1305_16_kib/instructions`"
            ),
        ],
    );
}

/// A `benchgate serve` from before `function_costs`: it refuses the field by name (422, as the
/// service refuses any unknown field) and stores anything else; the bodies it was sent.
fn older_service() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    use std::io::Read as _;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    let app = axum::Router::new().route(
        "/api/v1/runs",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                let mut json = Vec::new();
                flate2::read::GzDecoder::new(&body[..])
                    .read_to_end(&mut json)
                    .unwrap();
                let document: Value = serde_json::from_slice(&json).unwrap();
                let refused = document.get("function_costs").is_some();
                kept.lock().unwrap().push(document);
                if refused {
                    (
                        axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                        axum::Json(serde_json::json!({"error": {
                            "message": "unknown field `function_costs`, expected one of `schema_version`, `repository`, `commit`, `branch`, `kind`, `pr`, `attempt`, `recorded_at_ms`, `fingerprint`, `profile`, `measurements`",
                            "field": "."}})),
                    )
                } else {
                    (
                        axum::http::StatusCode::CREATED,
                        axum::Json(serde_json::json!({"id": 7, "status": "created"})),
                    )
                }
            }
        }),
    );
    let address = crate::support::fake_github::serve_in_thread(app);
    (format!("http://{address}"), seen)
}

#[test]
fn an_older_service_gets_the_run_without_its_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = seal_home(&d.join("base"), "seal-base.out", 91_234);
    let output = ingest_gungraun(d, &home, &"a".repeat(40), "push");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = stdout(&output).trim().to_owned();
    let (url, seen) = older_service();
    let output = benchgate(
        d,
        &["upload", &run, "--collector", &url, "--token", "secret"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("does not take profiles by function (a benchgate serve older than this client): uploading the run without them"),
        "{}",
        stderr(&output)
    );
    assert_eq!(stdout(&output).trim(), "7");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "once with the profiles, once without");
    assert!(
        seen[0]["function_costs"][SEAL_COUNT]["functions"][0][0]
            == "ring_core_0_17_14__chacha20_poly1305_seal_avx2"
    );
    assert!(seen[1].get("function_costs").is_none());
    assert_eq!(seen[1]["measurements"], seen[0]["measurements"]);
}
