//! `benchgate export --format csv|jsonl`: one row (or JSON object) per measurement, for
//! spreadsheets and longitudinal analysis. Times are ns per iteration; the header names every
//! column, and JSON Lines uses the same names as keys.

use std::io::Write;
use std::time::SystemTime;

use anyhow::Context as _;
use benchgate_collector::{ExportRow, Location, RepositoryName, Store};

/// The columns, in order, and whether each holds a number (JSON Lines writes those as numbers,
/// or `null` when empty).
pub const COLUMNS: [(&str, bool); 30] = [
    ("run", true),
    ("repository", false),
    ("commit", false),
    ("branch", false),
    ("kind", false),
    ("pr", true),
    ("attempt", true),
    ("recorded_at", false),
    ("fingerprint", false),
    ("cpu_brand", false),
    ("logical_cores", true),
    ("memory_gib", true),
    ("os", false),
    ("runner_image", false),
    ("rustc_version", false),
    ("host_triple", false),
    ("benchmark", false),
    ("throughput_kind", false),
    ("throughput_per_iteration", true),
    ("unit", false),
    ("mean", true),
    ("mean_lower", true),
    ("mean_upper", true),
    ("median", true),
    ("median_lower", true),
    ("median_upper", true),
    ("min", true),
    ("n_samples", true),
    ("median_throughput_per_s", true),
    ("better", false),
];

/// A machine's field, empty where its profile does not know it (an imported history's machine:
/// "unknown", `unknown unknown` for the OS), so an analysis reads no made-up value.
fn known(value: &str) -> String {
    if value.split(' ').all(|word| word == "unknown") {
        String::new()
    } else {
        value.to_owned()
    }
}

/// A count of cores or GiB, empty for an imported machine's 0 (no machine has none).
fn known_count(value: i64) -> String {
    if value > 0 {
        value.to_string()
    } else {
        String::new()
    }
}

/// One measurement's cells, in [`COLUMNS`]' order.
fn record(row: &ExportRow) -> [String; 30] {
    let number = |v: f64| format!("{v}");
    let throughput = row
        .throughput_amount
        .filter(|_| row.median[0] > 0.0)
        .map(|amount| number(amount as f64 / (row.median[0] * 1e-9)))
        .unwrap_or_default();
    [
        row.run.to_string(),
        row.repository.clone(),
        row.commit.clone(),
        row.branch.clone().unwrap_or_default(),
        row.kind.clone(),
        row.pr.map(|p| p.to_string()).unwrap_or_default(),
        row.attempt.to_string(),
        humantime::format_rfc3339_millis(row.recorded_at).to_string(),
        row.fingerprint.clone(),
        row.cpu_brand.clone(),
        known_count(row.logical_cores),
        known_count(row.memory_gib),
        known(&row.os),
        row.runner_image.clone().unwrap_or_default(),
        known(&row.rustc_version),
        known(&row.host_triple),
        row.benchmark.clone(),
        row.throughput_kind.clone().unwrap_or_default(),
        row.throughput_amount
            .map(|a| a.to_string())
            .unwrap_or_default(),
        row.metric
            .as_ref()
            .map_or_else(|| "ns".to_owned(), |(unit, _)| unit.clone()),
        number(row.mean[0]),
        number(row.mean[1]),
        number(row.mean[2]),
        number(row.median[0]),
        number(row.median[1]),
        number(row.median[2]),
        row.min.map(number).unwrap_or_default(),
        row.n_samples.to_string(),
        throughput,
        row.metric
            .as_ref()
            .map_or_else(|| "lower".to_owned(), |(_, direction)| direction.clone()),
    ]
}

/// Parses `--since`: a date (`2026-01-31`, midnight UTC) or an RFC 3339 time.
pub fn parse_since(text: &str) -> anyhow::Result<SystemTime> {
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_owned()
    };
    humantime::parse_rfc3339_weak(full.trim_end_matches('Z')).with_context(|| {
        format!("--since {text:?}: expected a date (2026-01-31) or an RFC 3339 time")
    })
}

/// One measurement as a JSON object with [`COLUMNS`]' names as keys, in order.
fn json_record(row: &ExportRow) -> serde_json::Value {
    let object = COLUMNS
        .iter()
        .zip(record(row))
        .map(|((key, numeric), cell)| {
            let value = if cell.is_empty() {
                serde_json::Value::Null
            } else if *numeric {
                cell.parse::<f64>()
                    .ok()
                    .and_then(|n| {
                        if n.fract() == 0.0 && n.abs() < 9e15 {
                            Some(serde_json::Value::from(n as i64))
                        } else {
                            serde_json::Number::from_f64(n).map(serde_json::Value::Number)
                        }
                    })
                    .unwrap_or(serde_json::Value::Null)
            } else {
                serde_json::Value::String(cell)
            };
            ((*key).to_owned(), value)
        })
        .collect();
    serde_json::Value::Object(object)
}

/// Writes the export for `repository` (all if `None`) since `since` to `out`; returns the rows.
pub async fn export(
    db: &Location,
    repository: Option<&RepositoryName>,
    since: Option<SystemTime>,
    format: ExportFormat,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let store = Store::connect_existing(db).await?;
    if format == ExportFormat::Jsonl {
        let rows = store
            .for_each_export_row(repository, since, |row| {
                writeln!(out, "{}", json_record(row))
            })
            .await;
        store.close().await;
        return Ok(rows?);
    }
    // The csv crate quotes a field only where RFC 4180 needs it (a comma, a quote, a line break).
    let mut writer = csv::Writer::from_writer(out);
    let as_io = |e: csv::Error| match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => std::io::Error::other(format!("{other:?}")),
    };
    writer
        .write_record(COLUMNS.map(|(name, _)| name))
        .map_err(as_io)?;
    let rows = store
        .for_each_export_row(repository, since, |row| {
            writer.write_record(record(row)).map_err(as_io)
        })
        .await;
    store.close().await;
    let rows = rows?;
    writer.flush()?;
    Ok(rows)
}

/// The export formats.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// JSON Lines: one object per measurement, keyed like the CSV's columns, numbers as numbers
    /// and empty cells as `null`.
    Jsonl,
}

/// `benchgate export`.
#[derive(clap::Args)]
pub struct Args {
    /// The export format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    format: ExportFormat,
    /// Only this repository, OWNER/NAME.
    #[arg(long)]
    repo: Option<String>,
    /// Only runs recorded on or after this date (2026-01-31) or time (RFC 3339).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Write here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
    #[command(flatten)]
    store: super::StoreArgs,
}

/// Writes the CSV to `--out` or standard output; a closed pipe (`| head`) ends quietly.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let db = &args.store.db;
    let repository = args
        .repo
        .as_deref()
        .map(RepositoryName::parse)
        .transpose()
        .context("--repo")?;
    let since = args.since.as_deref().map(parse_since).transpose()?;
    let rows = match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("--out {}: cannot create", path.display()))?;
            let mut writer = std::io::BufWriter::new(file);
            let rows = export(db, repository.as_ref(), since, args.format, &mut writer).await?;
            writer.flush()?;
            rows
        }
        None => {
            let stdout = std::io::stdout();
            let mut writer = std::io::BufWriter::new(stdout.lock());
            let written = export(db, repository.as_ref(), since, args.format, &mut writer)
                .await
                .and_then(|rows| Ok(writer.flush().map(|()| rows)?));
            match written {
                Ok(rows) => rows,
                // `benchgate export | head`: the reader had enough; not an error.
                Err(e) if is_broken_pipe(&e) => return Ok(0),
                Err(e) => return Err(e),
            }
        }
    };
    eprintln!("benchgate: exported {rows} measurements");
    Ok(0)
}

/// Whether an error is a closed standard output (`| head`), anywhere in its chain.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || cause.to_string().contains("Broken pipe")
    })
}
