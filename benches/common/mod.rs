//! What the benches share: the medians Criterion just wrote, to print ratios to a floor.

use std::path::{Path, PathBuf};

/// The median of `group/name` from the estimates Criterion just wrote (`$CRITERION_HOME`, else
/// `target/criterion`); `None` if it has none.
pub fn median(group: &str, name: &str) -> Option<f64> {
    let home = std::env::var_os("CRITERION_HOME").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/criterion"),
        PathBuf::from,
    );
    let path = home.join(group).join(name).join("new/estimates.json");
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    value["median"]["point_estimate"].as_f64()
}
