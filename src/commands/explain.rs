//! `benchgate explain`: where a benchmark's instructions went between two runs, by function,
//! from Callgrind's output files (docs/callgrind.md).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use benchgate_collector::callgrind::{self, Explained, FunctionChange, Profile};
use serde_json::json;

/// `benchgate explain`.
#[derive(clap::Args)]
pub struct Args {
    /// The base run: a Callgrind output file, or a directory holding one benchmark's
    /// `callgrind.*.out` files (gungraun's, under `target/gungraun/`).
    #[arg(long, value_name = "FILE|DIR")]
    base: PathBuf,
    /// The head run, the same way.
    #[arg(long, value_name = "FILE|DIR")]
    head: PathBuf,
    /// How many functions to show; the rest are summed as "everything else".
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// The Callgrind event.
    #[arg(long, default_value = callgrind::INSTRUCTIONS)]
    event: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    /// A table.
    Text,
    /// One JSON object: totals, rows and the rest.
    Json,
}

/// Prints the difference; 0, or an error naming the file at fault.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let base = profile(&args.base, &args.event).context("--base")?;
    let head = profile(&args.head, &args.event).context("--head")?;
    let explained = callgrind::explain(&base, &head, args.top);
    match args.format {
        Format::Text => print!("{}", text(&explained)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&to_json(&explained))?),
    }
    Ok(0)
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

/// `1234567` as `1,234,567`.
pub fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A signed change, grouped: `+300,000`, `-5`.
pub fn signed(change: i128) -> String {
    let sign = if change < 0 { "-" } else { "+" };
    format!("{sign}{}", grouped(change.unsigned_abs() as u64))
}

/// A row's share of the whole change, or `-` when nothing changed in all.
fn share(row: &FunctionChange, whole: i128) -> String {
    if whole == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", 100.0 * row.change() as f64 / whole as f64)
    }
}

fn text(explained: &Explained) -> String {
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
        out.push_str("no function's exclusive cost changed\n");
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
                share(r, whole),
            ]
        })
        .collect();
    let header = ["function", "base", "head", "change", "share"];
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

fn row_json(row: &FunctionChange, whole: i128) -> serde_json::Value {
    json!({
        "function": row.function,
        "base": row.base,
        "head": row.head,
        "change": row.change() as i64,
        "share": (whole != 0).then(|| row.change() as f64 / whole as f64),
    })
}

/// The JSON `explain --format json` prints (docs/callgrind.md).
pub fn to_json(explained: &Explained) -> serde_json::Value {
    let whole = explained.change();
    json!({
        "event": explained.event,
        "base_total": explained.base_total,
        "head_total": explained.head_total,
        "change": whole as i64,
        "rows": explained.rows.iter().map(|r| row_json(r, whole)).collect::<Vec<_>>(),
        "rest": row_json(&explained.rest, whole),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_in_groups_of_three() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(signed(-5), "-5");
        assert_eq!(signed(300_000), "+300,000");
    }
}
