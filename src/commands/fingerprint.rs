//! `benchgate fingerprint`: this machine's hardware profile and its hash, and with `--db`, how
//! many stored runs share it.

use std::collections::BTreeMap;

use benchgate_collector::{Location, Store};

use super::Format;
use crate::{environment, render};

/// `benchgate fingerprint`.
#[derive(clap::Args)]
pub struct Args {
    /// Output format (`json` can be passed to `ingest --fingerprint`).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also say how many runs in this store were recorded on this machine, and on which other
    /// machines the rest were (a baseline is only taken from the same fingerprint).
    #[arg(long, visible_alias = "database-url", value_name = "PATH|URL", value_parser = super::parse_location)]
    db: Option<Location>,
}

/// Prints the profile.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let profile = environment::detect_profile()?;
    let fingerprint = profile.fingerprint().to_string();
    let stored = match &args.db {
        Some(db) => {
            let store = Store::connect_existing(db).await?;
            let runs = store.list_runs().await;
            store.close().await;
            let mut by_machine: BTreeMap<String, usize> = BTreeMap::new();
            for run in runs? {
                *by_machine.entry(run.fingerprint.to_string()).or_default() += 1;
            }
            Some(by_machine)
        }
        None => None,
    };
    let json = args.format == Format::Json;
    let mut text = render::profile(&profile, json)?;
    if let Some(by_machine) = stored {
        let here = by_machine.get(&fingerprint).copied().unwrap_or(0);
        let all: usize = by_machine.values().sum();
        if json {
            let mut value: serde_json::Value = serde_json::from_str(&text)?;
            value["stored_runs"] = serde_json::json!({
                "this_machine": here,
                "all": all,
                "by_fingerprint": by_machine,
            });
            text = serde_json::to_string_pretty(&value)? + "\n";
        } else {
            text.push_str(&format!("\nstored runs: {here} of {all} on this machine\n"));
            for (other, count) in by_machine.iter().filter(|(f, _)| **f != fingerprint) {
                text.push_str(&format!(
                    "  {count:>6} on {}\n",
                    &other[..other.len().min(12)]
                ));
            }
        }
    }
    print!("{text}");
    Ok(0)
}
