//! `benchgate explain`: where a benchmark's instructions went between two runs, by function,
//! from Callgrind's output files (docs/callgrind.md).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use benchgate_collector::callgrind::{self, Explained, FunctionChange, Profile};
use benchgate_collector::gungraun;
use benchgate_collector::{BenchmarkId, RunId, Store};
use benchgate_gate::decision::{BenchmarkResult, Decision, NoiseSource, Verdict};
use benchgate_gate::report::{CountProfile, ProfileRow, grouped, share, signed};
use serde_json::json;

use super::StoreArgs;

/// `benchgate explain`.
#[derive(clap::Args)]
pub struct Args {
    /// The base run: a Callgrind output file, or a directory holding one benchmark's
    /// `callgrind.*.out` files (gungraun's, under `target/gungraun/`).
    #[arg(long, value_name = "FILE|DIR", required_unless_present = "base_run")]
    base: Option<PathBuf>,
    /// The head run, the same way.
    #[arg(long, value_name = "FILE|DIR", required_unless_present = "head_run")]
    head: Option<PathBuf>,
    /// A stored run as the base instead: the profile `ingest` kept with its count of
    /// --benchmark (its 50 most expensive functions).
    #[arg(
        long,
        value_name = "RUN",
        conflicts_with = "base",
        requires = "benchmark"
    )]
    base_run: Option<String>,
    /// A stored run as the head, the same way.
    #[arg(
        long,
        value_name = "RUN",
        conflicts_with = "head",
        requires = "benchmark"
    )]
    head_run: Option<String>,
    /// The benchmark of the stored runs: its instruction count's id, or the id without its
    /// `/instructions`.
    #[arg(long, value_name = "ID")]
    benchmark: Option<String>,
    #[command(flatten)]
    store: StoreArgs,
    /// How many functions to show; the rest are summed as "everything else".
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// The Callgrind event (files only: a stored profile is of `Ir`).
    #[arg(long, default_value = callgrind::INSTRUCTIONS)]
    event: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Rows by function, or by crate (the first segment of each function's path; C, assembly
    /// and the C library as `(no Rust path)`; files only, whose every function is known).
    #[arg(long, value_enum, default_value_t = By::Function)]
    by: By,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum By {
    /// Each function.
    Function,
    /// Each crate, its functions' own costs summed.
    Crate,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    /// A table.
    Text,
    /// One JSON object: totals, rows and the rest.
    Json,
}

/// Prints the difference; 0, or an error naming the file or run at fault.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let count = args.benchmark.as_deref().map(|id| {
        if id.ends_with(&format!("/{}", gungraun::INSTRUCTIONS)) {
            id.to_owned()
        } else {
            format!("{id}/{}", gungraun::INSTRUCTIONS)
        }
    });
    let store = if args.base_run.is_some() || args.head_run.is_some() {
        Some(args.store.open_existing().await?)
    } else {
        None
    };
    let side = async |path: &Option<PathBuf>, run: &Option<String>, flag: &str| match (
        path, run, &store, &count,
    ) {
        (Some(path), _, _, _) => profile(path, &args.event).context(format!("--{flag}")),
        (None, Some(run), Some(store), Some(count)) => stored_profile(store, run, count)
            .await
            .context(format!("--{flag}-run")),
        _ => bail!("--{flag} or --{flag}-run is needed"),
    };
    let base = side(&args.base, &args.base_run, "base").await;
    let head = side(&args.head, &args.head_run, "head").await;
    if let Some(store) = store {
        store.close().await;
    }
    let (mut base, mut head) = (base?, head?);
    let label = match args.by {
        By::Function => "function",
        By::Crate => {
            // Only a profile that left nothing out knows every function's crate: files always,
            // a stored one when it kept all its functions.
            base = base
                .by_crate()
                .context("--base-run: a stored profile keeps its largest functions only, so its crates are not all known; --by crate reads Callgrind's files")?;
            head = head
                .by_crate()
                .context("--head-run: a stored profile keeps its largest functions only, so its crates are not all known; --by crate reads Callgrind's files")?;
            "crate"
        }
    };
    let explained = callgrind::explain(&base, &head, args.top);
    match args.format {
        Format::Text => print!("{}", text(&explained, label)),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&to_json(&explained, label))?
        ),
    }
    Ok(0)
}

/// The profile by function stored with run `run`'s `count`.
async fn stored_profile(store: &Store, run: &str, count: &str) -> anyhow::Result<Profile> {
    let id = RunId::parse(run).with_context(|| format!("{run:?} is not a run id"))?;
    let mut costs = store.function_costs(id).await?;
    let key = BenchmarkId::parse(count).context("--benchmark")?;
    costs.remove(&key).with_context(|| {
        format!(
            "run {id} holds no profile by function of `{count}` (ingested without gungraun's Callgrind files, or before benchgate kept them; `benchgate show {id}` lists its benchmarks)"
        )
    })
}

/// The run at `path`: one file, or a directory's `callgrind.*.out` files.
fn profile(path: &Path, event: &str) -> anyhow::Result<Profile> {
    let files = if path.is_dir() {
        let files = callgrind::output_files(path)?;
        if files.is_empty() {
            bail!("{}: no callgrind.*.out file in it", path.display());
        }
        files
    } else {
        vec![path.to_owned()]
    };
    Ok(Profile::read(&files, event)?)
}

fn text(explained: &Explained, label: &str) -> String {
    let whole = explained.change();
    let mut out = format!(
        "{}: {} -> {} ({}",
        explained.event,
        grouped(explained.base_total),
        grouped(explained.head_total),
        signed(whole)
    );
    if explained.base_total > 0 {
        let _ = write!(
            out,
            ", {:+.1}%",
            100.0 * whole as f64 / explained.base_total as f64
        );
    }
    out.push_str(")\n");
    if explained.rows.is_empty() {
        let _ = writeln!(out, "no {label}'s exclusive cost changed");
        return out;
    }
    let rows: Vec<[String; 5]> = explained
        .rows
        .iter()
        .chain(std::iter::once(&explained.rest))
        .map(|r| {
            [
                r.function.clone(),
                grouped(r.base),
                grouped(r.head),
                signed(r.change()),
                share(r.change(), whole),
            ]
        })
        .collect();
    let header = [label, "base", "head", "change", "share"];
    let widths: Vec<usize> = (0..5)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain(std::iter::once(header[i].len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for cells in std::iter::once(header.map(str::to_owned)).chain(rows) {
        let _ = writeln!(
            out,
            "{:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}  {:>w4$}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4]
        );
    }
    out
}

fn row_json(row: &FunctionChange, whole: i128, label: &str) -> serde_json::Value {
    json!({
        label: row.function,
        "base": row.base,
        "head": row.head,
        "change": row.change() as i64,
        "share": (whole != 0).then(|| row.change() as f64 / whole as f64),
    })
}

/// The JSON `explain --format json` prints (docs/callgrind.md).
/// `label` names the rows' key: `function`, or `crate` (`--by crate`).
pub fn to_json(explained: &Explained, label: &str) -> serde_json::Value {
    let whole = explained.change();
    json!({
        "event": explained.event,
        "base_total": explained.base_total,
        "head_total": explained.head_total,
        "change": whole as i64,
        "rows": explained.rows.iter().map(|r| row_json(r, whole, label)).collect::<Vec<_>>(),
        "rest": row_json(&explained.rest, whole, label),
    })
}

/// The most count regressions a report explains, the largest first; `benchgate explain`
/// shows any other.
const MAX_PROFILES: usize = 10;
/// The functions a report's profile lists.
pub const REPORT_ROWS: usize = 5;

/// Where each regressed instruction count of `decision` went, from the gungraun output of base
/// and head under `homes` (`ab --instructions`): the profiles, and a note for each count that
/// could not be explained (a missing, truncated or foreign file: the verdict stands as it is).
pub fn count_profiles(decision: &Decision, homes: [&Path; 2]) -> (Vec<CountProfile>, Vec<String>) {
    if regressed_counts(decision).is_empty() {
        return (Vec::new(), Vec::new());
    }
    let dirs = match homes.map(gungraun::benchmark_dirs) {
        [Ok(base), Ok(head)] => [base, head],
        [Err(e), _] | [_, Err(e)] => {
            return (
                Vec::new(),
                vec![format!("No profile of the count regressions: {e}.")],
            );
        }
    };
    let suffix = format!("/{}", gungraun::INSTRUCTIONS);
    profiles_of(decision, |side, count| {
        let name = count.strip_suffix(&suffix).unwrap_or(count);
        let dir = dirs[side]
            .get(name)
            .with_context(|| format!("{}: no gungraun output of {name}", homes[side].display()))?;
        let files = callgrind::output_files(dir)?;
        if files.is_empty() {
            bail!("{}: no callgrind.*.out file", dir.display());
        }
        Ok(Profile::read(&files, callgrind::INSTRUCTIONS)?)
    })
}

/// Where each regressed instruction count of `decision` went, from the profiles stored with
/// the baseline run and the head run (`gate`): `runs` names them, base then head, for the note
/// of a count one of them holds no profile of.
pub fn stored_count_profiles(
    decision: &Decision,
    stored: [&BTreeMap<BenchmarkId, Profile>; 2],
    runs: [&str; 2],
) -> (Vec<CountProfile>, Vec<String>) {
    profiles_of(decision, |side, count| {
        BenchmarkId::parse(count)
            .ok()
            .and_then(|id| stored[side].get(&id))
            .cloned()
            .with_context(|| {
                format!(
                    "{} holds instruction counts but no profile by function of it (ingested without gungraun's Callgrind files, or before benchgate kept them)",
                    runs[side]
                )
            })
    })
}

/// A report's profile of `benchmark`: the explained change's rows and everything else.
pub fn count_profile(benchmark: &str, explained: &Explained) -> CountProfile {
    let row = |r: &FunctionChange| ProfileRow {
        function: r.function.clone(),
        base: r.base,
        head: r.head,
    };
    CountProfile {
        benchmark: benchmark.to_owned(),
        event: explained.event.clone(),
        base_total: explained.base_total,
        head_total: explained.head_total,
        rows: explained.rows.iter().map(row).collect(),
        rest: row(&explained.rest),
    }
}

/// The instruction counts of `decision` that regressed, largest first: those a report
/// profiles.
pub fn regressed_counts(decision: &Decision) -> Vec<&BenchmarkResult> {
    let suffix = format!("/{}", gungraun::INSTRUCTIONS);
    let mut regressed: Vec<_> = decision
        .benchmarks
        .iter()
        .filter(|b| b.noise_source == Some(NoiseSource::Exact) && b.verdict == Verdict::Regressed)
        .filter(|b| b.id.ends_with(&suffix))
        .collect();
    regressed.sort_by(|a, b| b.ratio.unwrap_or(1.0).total_cmp(&a.ratio.unwrap_or(1.0)));
    regressed
}

/// The profiles of the largest count regressions, each side's read by `side(0 base | 1 head,
/// count id)`, and a note for each that could not be explained.
fn profiles_of(
    decision: &Decision,
    side: impl Fn(usize, &str) -> anyhow::Result<Profile>,
) -> (Vec<CountProfile>, Vec<String>) {
    let regressed = regressed_counts(decision);
    let mut notes = Vec::new();
    let mut profiles = Vec::new();
    for b in regressed.iter().take(MAX_PROFILES) {
        match (side(0, &b.id), side(1, &b.id)) {
            (Ok(base), Ok(head)) => profiles.push(count_profile(
                &b.id,
                &callgrind::explain(&base, &head, REPORT_ROWS),
            )),
            (Err(e), _) | (_, Err(e)) => notes.push(format!("No profile of `{}`: {e:#}.", b.id)),
        }
    }
    if regressed.len() > MAX_PROFILES {
        notes.push(format!(
            "{} more count regressions are not profiled here: `benchgate explain` shows any of them.",
            regressed.len() - MAX_PROFILES
        ));
    }
    (profiles, notes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use std::collections::HashMap;

    use benchgate_collector::{Estimate, Samples};
    use benchgate_gate::Policy;
    use benchgate_gate::decision::{Input, Mode, evaluate};

    use super::*;

    const SEAL: &str = "aead/seal/chacha20_poly1305_16_kib";

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("collector/tests/fixtures")
    }

    /// A gungraun home holding the seal's summary and `callgrind` as its Callgrind file.
    fn home(dir: &Path, callgrind: Option<&str>) -> PathBuf {
        let bench =
            dir.join("benchgate-sample-workloads/instructions/aead/seal.chacha20_poly1305_16_kib");
        std::fs::create_dir_all(&bench).unwrap();
        std::fs::copy(
            fixtures().join("gungraun/aead-seal-chacha20_poly1305_16_kib.summary.json"),
            bench.join("summary.json"),
        )
        .unwrap();
        if let Some(text) = callgrind {
            std::fs::write(
                bench.join("callgrind.seal.chacha20_poly1305_16_kib.out"),
                text,
            )
            .unwrap();
        }
        dir.to_owned()
    }

    /// The seal's counts against twice them: the count `regressed`.
    fn doubled_decision() -> Decision {
        let (_, base) = gungraun::read_file(
            &fixtures().join("gungraun/aead-seal-chacha20_poly1305_16_kib.summary.json"),
        )
        .unwrap();
        let head: Vec<_> = base
            .iter()
            .map(|m| {
                let mut m = m.clone();
                let value = m.median.point * 2.0;
                m.median = Estimate {
                    point: value,
                    lower: value,
                    upper: value,
                    confidence_level: 0.95,
                };
                m.mean = m.median;
                m.samples = Samples::single(value);
                m
            })
            .collect();
        let history = HashMap::new();
        evaluate(
            &Input {
                mode: Mode::SameJobAb,
                base_rounds: &[base],
                head_rounds: &[head],
                history: &history,
            },
            &Policy::default(),
        )
    }

    #[test]
    fn a_count_regression_is_profiled_and_a_bad_side_only_loses_its_profile() {
        let decision = doubled_decision();
        let count = format!("{SEAL}/instructions");
        assert!(
            decision
                .benchmarks
                .iter()
                .any(|b| b.id == count && b.verdict == Verdict::Regressed)
        );
        let read =
            |name: &str| std::fs::read_to_string(fixtures().join("callgrind").join(name)).unwrap();
        let (base, head) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let base = home(base.path(), Some(&read("seal-base.out")));
        let good = home(head.path(), Some(&read("seal-head-sealed-twice.out")));
        let (profiles, notes) = count_profiles(&decision, [&base, &good]);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(profiles.len(), 1);
        assert_eq!(profiles[0].benchmark, count);
        assert_eq!(profiles[0].rows.len(), REPORT_ROWS);
        assert_eq!(
            profiles[0].rows[0].function,
            "ring_core_0_17_14__chacha20_poly1305_seal_avx2"
        );
        // A truncated file on one side: no profile, a note naming the file, nothing else lost.
        let text = read("seal-head-sealed-twice.out");
        let cut = tempfile::tempdir().unwrap();
        let cut = home(cut.path(), Some(&text[..text.len() / 2]));
        let (profiles, notes) = count_profiles(&decision, [&base, &cut]);
        assert!(profiles.is_empty());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with(&format!("No profile of `{count}`: "))
                && notes[0].contains("callgrind.seal.chacha20_poly1305_16_kib.out")
                && notes[0].contains("truncated"),
            "{notes:?}"
        );
        // A side without Callgrind files, and a foreign file.
        let none = tempfile::tempdir().unwrap();
        let none = home(none.path(), None);
        let (_, notes) = count_profiles(&decision, [&base, &none]);
        assert!(notes[0].contains("no callgrind.*.out file"), "{notes:?}");
        let foreign = tempfile::tempdir().unwrap();
        let foreign = home(foreign.path(), Some("{\"version\": 7}\n"));
        let (_, notes) = count_profiles(&decision, [&foreign, &good]);
        assert!(
            notes[0].contains("not a Callgrind output file"),
            "{notes:?}"
        );
        // A home that is not there at all.
        let (profiles, notes) =
            count_profiles(&decision, [&base, Path::new("/nonexistent/gungraun")]);
        assert!(profiles.is_empty());
        assert!(
            notes[0].starts_with("No profile of the count regressions: "),
            "{notes:?}"
        );
    }
}
