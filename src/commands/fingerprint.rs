//! `benchgate fingerprint`: this machine's hardware profile and its hash.

use super::Format;
use crate::{environment, render};

/// `benchgate fingerprint`.
#[derive(clap::Args)]
pub struct Args {
    /// Output format (`json` can be passed to `ingest --fingerprint`).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Prints the profile.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let profile = environment::detect_profile()?;
    print!(
        "{}",
        render::profile(&profile, args.format == Format::Json)?
    );
    Ok(0)
}
