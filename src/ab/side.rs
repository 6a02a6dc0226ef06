//! One side of a same-job A/B comparison: a git worktree of its commit and the executables
//! built from it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use benchgate_collector::CommitSha;
use benchgate_gate::report::SideBuild;

use crate::bench_command::CargoBench;
use crate::side_build::{self, KeptExecutable};

/// `git ARGS` in the current directory: its standard output, trimmed, or an error with git's
/// message.
pub(crate) fn git(args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("git")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("cannot run git")?;
    if !output.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// How many of the files a side's checkout lacks [`uncommitted_hint`] names.
const NAMED_UNCOMMITTED: usize = 3;

/// Where a side's bench command failed (a [`crate::side_build::CommandFailed`] in `error`'s
/// chain): a hint that the sides run in checkouts of their commits, which lack the files of
/// the working tree git does not track (untracked or ignored; cargo's target directories,
/// benchgate's store and the directories under `ours` left out), naming a few. A bench that reads a data file the repository
/// ignores finds it missing there and panics (unicode-segmentation's benches read
/// `benches/texts/*.txt`; its `.gitignore` has `*.txt`). `None` when nothing is untracked
/// here, or the failure was not a command's.
pub(crate) fn uncommitted_hint(error: &anyhow::Error, ours: &[&Path]) -> Option<String> {
    error
        .chain()
        .any(|e| e.is::<crate::side_build::CommandFailed>())
        .then_some(())?;
    // Paths relative to the current directory, and only under it: where the command runs.
    let listed = git(&[
        "ls-files",
        "--others",
        "--directory",
        "--no-empty-directory",
    ])
    .ok()?;
    let files: Vec<&str> = listed
        .lines()
        .filter(|path| {
            let path = Path::new(path.trim_end_matches('/'));
            let holds_ours = std::path::absolute(path)
                .is_ok_and(|path| ours.iter().any(|dir| dir.starts_with(&path)));
            !holds_ours && !path.join("CACHEDIR.TAG").is_file() && !path.starts_with(".benchgate")
        })
        .collect();
    if files.is_empty() {
        return None;
    }
    let mut named = files[..files.len().min(NAMED_UNCOMMITTED)].join(", ");
    if files.len() > NAMED_UNCOMMITTED {
        named.push_str(&format!(" and {} more", files.len() - NAMED_UNCOMMITTED));
    }
    Some(format!(
        "each side ran in a checkout of its commit, which holds only committed files; here git tracks none of {named}: if the benchmarks read any of them, commit them (`git add -f` for an ignored one)"
    ))
}

/// A detached worktree, removed again when dropped.
pub(crate) struct Worktree {
    /// Its top.
    pub(crate) path: PathBuf,
    /// Where its commands run: the directory of the worktree that the current directory is of
    /// the repository (`git rev-parse --show-prefix`). A bench suite kept in a subdirectory
    /// with a workspace of its own (`cd benches && cargo bench`) builds there, as it does for
    /// the user.
    pub(crate) dir: PathBuf,
}

impl Worktree {
    pub(crate) fn add(path: PathBuf, commit: &CommitSha) -> anyhow::Result<Self> {
        let prefix = git(&["rev-parse", "--show-prefix"])?;
        if path.exists() {
            let _ = git(&["worktree", "remove", "--force", &path.to_string_lossy()]);
            let _ = std::fs::remove_dir_all(&path);
        }
        git(&[
            "worktree",
            "add",
            "--detach",
            "--force",
            &path.to_string_lossy(),
            commit.as_str(),
        ])
        .with_context(|| {
            format!(
                "cannot check out {} in a worktree at {}",
                commit.short(),
                path.display()
            )
        })?;
        let dir = path.join(&prefix);
        if !dir.is_dir() {
            bail!(
                "{} has no directory {prefix}, where this command runs: run it from a directory the commit has",
                commit.short()
            );
        }
        Ok(Self { path, dir })
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = git(&[
            "worktree",
            "remove",
            "--force",
            &self.path.to_string_lossy(),
        ]);
    }
}

/// One side of the comparison: its commit, worktree, and (for `cargo bench`) the executables
/// built from its sources.
pub(crate) struct Side {
    pub(crate) name: String,
    pub(crate) commit: CommitSha,
    pub(crate) worktree: Worktree,
    pub(crate) executables: Vec<KeptExecutable>,
    /// The worktree's files its executables were compiled from (cargo's dep-info).
    pub(crate) sources: std::collections::BTreeSet<PathBuf>,
    /// The branch its runs are stored under, when its ref names one.
    pub(crate) branch: Option<String>,
}

impl Side {
    pub(crate) fn record(&self) -> SideBuild {
        SideBuild {
            side: self.name.clone(),
            commit: self.commit.to_string(),
            executables: self
                .executables
                .iter()
                .map(KeptExecutable::record)
                .collect(),
        }
    }
}

/// Builds `side`'s bench executables in its worktree and keeps them in `bin`, with the worktree
/// files they were compiled from. Libtest harnesses without a benchmark that refuse the
/// command's options are left out (see [`side_build::leave_out_benchless_libtest`]); returns
/// a line for each, printed here.
pub fn build_side(
    side: &mut Side,
    bench: &CargoBench,
    target_dir: &Path,
    bin: &Path,
) -> anyhow::Result<Vec<String>> {
    eprintln!(
        "benchgate: building {} ({})",
        side.name,
        side.commit.short()
    );
    let built = side_build::build(
        &side.worktree.path,
        &side.worktree.dir,
        bench,
        target_dir,
        bin,
        &format!("building {}", side.name),
    )?;
    for executable in &built.executables {
        eprintln!(
            "benchgate: {} {} sha256 {}",
            side.name,
            executable.target,
            &executable.sha256[..16]
        );
    }
    side.executables = built.executables;
    side.sources = built.sources;
    let left_out = side_build::leave_out_benchless_libtest(
        &mut side.executables,
        bench,
        &bin.join("criterion-list"),
        target_dir,
    );
    for line in &left_out {
        eprintln!("benchgate: {}: {line}", side.name);
    }
    Ok(left_out)
}
