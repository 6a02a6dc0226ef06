//! Both sides of an A/B build with the same dependency versions. A committed `Cargo.lock` is
//! each side's own; libraries often keep it out of git, and then each worktree would resolve
//! its dependencies afresh: the user's working tree's lockfile (or one generated once) is copied
//! into both, and the report says which.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use sha2::Digest as _;

use crate::ab::side::{Side, git};
use crate::bench_command::CargoBench;

/// Makes both sides' worktrees hold the lockfile they build with; returns the report's
/// sentence, or `None` for a command that is not cargo's and a repository without a
/// `Cargo.toml` at the top.
pub fn align(sides: &[Side], bench: Option<&CargoBench>) -> anyhow::Result<Option<String>> {
    let [base, head] = sides else {
        bail!("internal: a comparison has two sides");
    };
    let Some(relative) = lockfile_path(&base.worktree.path, &base.worktree.dir, bench)? else {
        return Ok(None);
    };
    let shown = relative.display().to_string();
    let committed = |side: &Side| {
        git(&[
            "cat-file",
            "-e",
            &format!("{}:{}", side.commit.as_str(), shown),
        ])
        .is_ok()
    };
    let (in_base, in_head) = (committed(base), committed(head));
    if in_base && in_head {
        return Ok(Some(format!(
            "Dependencies: each side built with its own committed `{shown}`."
        )));
    }
    let (source, what) = if in_base || in_head {
        let from = if in_base { base } else { head };
        (
            from.worktree.path.join(&relative),
            format!(
                "`{shown}` is committed on the {} side only; both sides built with it",
                from.name
            ),
        )
    } else {
        let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
        let working = top.join(&relative);
        if working.is_file() {
            (
                working,
                format!("`{shown}` is not committed; both sides built with the working tree's"),
            )
        } else {
            generate(&base.worktree.path, &relative)?;
            (
                base.worktree.path.join(&relative),
                format!(
                    "`{shown}` is not committed and the working tree has none; one was generated once (`cargo generate-lockfile`) and both sides built with it"
                ),
            )
        }
    };
    let bytes = std::fs::read(&source)
        .with_context(|| format!("cannot read the lockfile {}", source.display()))?;
    for side in sides {
        let into = side.worktree.path.join(&relative);
        if into != source {
            std::fs::write(&into, &bytes)
                .with_context(|| format!("cannot copy the lockfile to {}", into.display()))?;
        }
    }
    let digest: String = sha2::Sha256::digest(&bytes)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(Some(format!("Dependencies: {what} (SHA-256 {digest}).")))
}

/// Where the workspace's `Cargo.lock` lives, relative to the worktree's top: beside the
/// workspace root's manifest, as cargo finds it from `dir` (with the bench command's
/// `--manifest-path`, if any).
fn lockfile_path(
    worktree: &Path,
    dir: &Path,
    bench: Option<&CargoBench>,
) -> anyhow::Result<Option<PathBuf>> {
    let Some(bench) = bench else {
        let relative = dir.strip_prefix(worktree).unwrap_or(Path::new(""));
        return Ok(dir
            .join("Cargo.toml")
            .is_file()
            .then(|| relative.join("Cargo.lock")));
    };
    let root = crate::side_build::workspace_root(dir, bench, "finding the workspace")?;
    let relative = root.strip_prefix(worktree).unwrap_or(Path::new(""));
    Ok(Some(relative.join("Cargo.lock")))
}

/// `cargo generate-lockfile` in the base's worktree.
fn generate(worktree: &Path, relative: &Path) -> anyhow::Result<()> {
    let dir = relative
        .parent()
        .map_or_else(|| worktree.to_path_buf(), |p| worktree.join(p));
    let status = Command::new("cargo")
        .arg("generate-lockfile")
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .context("cannot run `cargo generate-lockfile`")?;
    if !status.success() {
        bail!(
            "`cargo generate-lockfile` in {} failed with {status}",
            dir.display()
        );
    }
    Ok(())
}
