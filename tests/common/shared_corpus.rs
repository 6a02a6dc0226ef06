//! `../shared/corpus` beside the repository, for the sweeps over every recording and history in
//! it; included by the test crates that sweep it (`#[path]`), so they find it the same way.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The shared corpus. Without it (a clone from GitHub) the sweep says on the terminal that it
/// was skipped and passes, unless `BENCHGATE_REQUIRE_CORPUS` is set, as `.ci/run` does.
pub fn shared_corpus(test: &str) -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or(manifest);
    let path = workspace.join("../shared/corpus");
    if path.is_dir() {
        return Some(path);
    }
    assert!(
        std::env::var_os("BENCHGATE_REQUIRE_CORPUS").is_none(),
        "BENCHGATE_REQUIRE_CORPUS is set, but there is no corpus at {}",
        path.display()
    );
    // Straight to the terminal: the test harness captures eprintln! of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: no corpus at {}; put the shared corpus there to run this sweep",
        path.display()
    );
    None
}
