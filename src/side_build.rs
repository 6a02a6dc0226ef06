//! Builds one commit's bench executables in its own worktree and runs them, so that each side
//! of a comparison measures the code of its own sources. Shared by `ab` and anything else that
//! builds several commits into one cargo target directory.
//!
//! Why this is needed: two worktrees sharing one `CARGO_TARGET_DIR` share their compiled
//! dependencies (good), but a workspace crate's unit hash does not depend on its path, and
//! cargo's freshness check compares the mtimes of the sources named in the *last* build's
//! dep-info with that build's outputs. A worktree checked out before the other side was built
//! looks older than those outputs, so cargo reuses the other side's binary. Here each side's
//! files are touched just before its build (cargo must rebuild every crate of the worktree; the
//! registry's crates stay built), every crate of the worktree is checked to have been compiled
//! afresh, and the executables are copied aside, hashed, and run from there.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use anyhow::{Context as _, bail};
use benchgate_gate::report::{BuiltExecutable, list_and};
use sha2::Digest as _;

use crate::bench_command::{self, CargoBench};

/// One bench executable built from a side's sources, kept aside for the rounds.
#[derive(Debug, Clone)]
pub struct KeptExecutable {
    /// `package/target`.
    pub target: String,
    /// The copy the rounds run.
    pub path: PathBuf,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// The package's root in the worktree: cargo runs benches there.
    package_root: PathBuf,
    package_name: String,
    package_version: String,
    /// Takes the A/B plan's Criterion timing options (see `ab::plan`): a Criterion harness
    /// that accepted them before the first round.
    pub timed: bool,
}

impl KeptExecutable {
    /// The executable as `cargo bench` would run it: in the package's root, with cargo's
    /// package variables, writing Criterion's output under `criterion_home`.
    fn command(&self, args: &[String], criterion_home: &Path, target_dir: &Path) -> Command {
        let mut command = Command::new(&self.path);
        command
            .args(args)
            .current_dir(&self.package_root)
            .env("CRITERION_HOME", criterion_home)
            .env("CARGO_TARGET_DIR", target_dir)
            .env("CARGO_MANIFEST_DIR", &self.package_root)
            .env("CARGO_PKG_NAME", &self.package_name)
            .env("CARGO_PKG_VERSION", &self.package_version)
            .stdin(Stdio::null());
        command
    }

    /// The report's record of this executable.
    pub fn record(&self) -> BuiltExecutable {
        BuiltExecutable {
            target: self.target.clone(),
            path: self.path.display().to_string(),
            sha256: self.sha256.clone(),
        }
    }
}

/// What one side's build produced.
pub struct SideExecutables {
    /// The bench executables, in the order cargo would run them.
    pub executables: Vec<KeptExecutable>,
    /// The worktree's files the compiler read for them (their dep-info), relative to the
    /// worktree: sources, and files pulled in with `include_str!` and the like.
    pub sources: std::collections::BTreeSet<PathBuf>,
}

/// One line of `cargo --message-format=json`, the fields read here.
#[derive(serde::Deserialize)]
struct CargoMessage {
    reason: String,
    #[serde(default)]
    package_id: String,
    #[serde(default)]
    manifest_path: Option<PathBuf>,
    #[serde(default)]
    target: Option<CargoTarget>,
    #[serde(default)]
    profile: Option<CargoProfile>,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    filenames: Vec<PathBuf>,
    #[serde(default)]
    fresh: bool,
}

#[derive(serde::Deserialize)]
struct CargoTarget {
    name: String,
    kind: Vec<String>,
}

#[derive(serde::Deserialize)]
struct CargoProfile {
    test: bool,
}

/// Sets the mtime of every file in `dir` (not `.git`) to now, so cargo sees them as changed.
pub fn touch_tree(dir: &Path, now: SystemTime) -> anyhow::Result<usize> {
    let mut touched = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .with_context(|| format!("cannot stat {}", path.display()))?;
            if entry.file_name() == ".git" {
                continue;
            }
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                let file = std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .or_else(|_| std::fs::File::open(&path))
                    .with_context(|| format!("cannot open {}", path.display()))?;
                file.set_modified(now)
                    .with_context(|| format!("cannot set the mtime of {}", path.display()))?;
                touched += 1;
            }
        }
    }
    Ok(touched)
}

/// The package's name and version from a cargo package id (`path+file:///dir#name@1.0.0` or
/// `path+file:///dir/name#1.0.0`).
fn name_and_version(package_id: &str) -> (String, String) {
    let (source, fragment) = package_id.rsplit_once('#').unwrap_or(("", package_id));
    match fragment.split_once('@') {
        Some((name, version)) => (name.to_owned(), version.to_owned()),
        None => {
            let name = source.rsplit('/').next().unwrap_or_default();
            (name.to_owned(), fragment.to_owned())
        }
    }
}

fn sha256_hex(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Builds `bench`'s executables from the sources in `worktree` into the shared `target_dir`,
/// running it in `dir` (the worktree's counterpart of the current directory), and copies them
/// into `keep_dir`. `what` names the side in errors.
pub fn build(
    worktree: &Path,
    dir: &Path,
    bench: &CargoBench,
    target_dir: &Path,
    keep_dir: &Path,
    what: &str,
) -> anyhow::Result<SideExecutables> {
    touch_tree(worktree, SystemTime::now())
        .with_context(|| format!("{what}: cannot mark the worktree's sources as changed"))?;
    let messages = compiled(bench, dir, Some(target_dir), what)?;
    let shown = format!("{} --no-run", bench.build.join(" "));

    let worktree = std::path::absolute(worktree).context("cannot resolve the worktree")?;
    std::fs::create_dir_all(keep_dir)
        .with_context(|| format!("cannot create {}", keep_dir.display()))?;
    let workspace_root = workspace_root(dir, bench, what)?;
    let mut sources = std::collections::BTreeSet::new();
    let mut executables = Vec::new();
    for message in messages {
        let Some(package_root) = message
            .manifest_path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
        else {
            continue;
        };
        let target = message.target.as_ref();
        if package_root.starts_with(&worktree) {
            if message.fresh {
                bail!(
                    "{what}: cargo reused an earlier build of {} ({}) instead of compiling this side's sources; remove {} and retry",
                    target.map(|t| t.name.as_str()).unwrap_or("?"),
                    package_root.display(),
                    target_dir.display()
                );
            }
            for file in dep_info_sources(&message.filenames, &workspace_root, what)? {
                if let Ok(relative) = file.strip_prefix(&worktree) {
                    sources.insert(relative.to_path_buf());
                }
            }
        }
        let (Some(executable), Some(target)) = (message.executable, target) else {
            continue;
        };
        if !message.profile.is_some_and(|p| p.test) {
            continue; // a binary built for CARGO_BIN_EXE_*, not a bench harness
        }
        let (package_name, package_version) = name_and_version(&message.package_id);
        let file_name = executable
            .file_name()
            .with_context(|| format!("{what}: cargo named no file: {}", executable.display()))?;
        let kept = keep_dir.join(file_name);
        std::fs::copy(&executable, &kept).with_context(|| {
            format!(
                "{what}: cannot keep {} at {}",
                executable.display(),
                kept.display()
            )
        })?;
        let kind = target.kind.first().map(String::as_str).unwrap_or("bench");
        executables.push((
            kind_order(kind),
            KeptExecutable {
                target: format!("{package_name}/{}", target.name),
                sha256: sha256_hex(&kept)?,
                path: kept,
                package_root,
                package_name,
                package_version,
                timed: false,
            },
        ));
    }
    executables.sort_by(|a, b| (a.0, &a.1.target).cmp(&(b.0, &b.1.target)));
    if executables.is_empty() {
        bail!("{what}: `{shown}` built no bench executable");
    }
    Ok(SideExecutables {
        executables: executables.into_iter().map(|(_, e)| e).collect(),
        sources,
    })
}

/// Runs `bench`'s build with `--no-run` in `dir` (into `target_dir`, else cargo's own) and
/// returns the artifacts cargo reports, compiled or fresh.
fn compiled(
    bench: &CargoBench,
    dir: &Path,
    target_dir: Option<&Path>,
    what: &str,
) -> anyhow::Result<Vec<CargoMessage>> {
    let (program, args) = bench
        .build
        .split_first()
        .context("no bench command given after --")?;
    let shown = format!("{} --no-run", bench.build.join(" "));
    let mut command = Command::new(program);
    command
        .args(args)
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if let Some(target_dir) = target_dir {
        command.env("CARGO_TARGET_DIR", target_dir);
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("{what}: cannot run `{shown}`"))?;
    let mut messages = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.with_context(|| format!("{what}: cannot read `{shown}`'s output"))?;
            if !line.starts_with('{') {
                continue;
            }
            let message: CargoMessage = serde_json::from_str(&line).with_context(|| {
                format!("{what}: `{shown}` printed a message that is not cargo's: {line}")
            })?;
            if message.reason == "compiler-artifact" {
                messages.push(message);
            }
        }
    }
    let status = child
        .wait()
        .with_context(|| format!("{what}: cannot wait for `{shown}`"))?;
    if !status.success() {
        bail!("{what}: `{shown}` failed with {status}");
    }
    Ok(messages)
}

/// `bench`'s executables as cargo builds them in the current directory, where they are: for
/// listing what a command run here measures (`gate`'s check before it re-runs the head).
pub fn in_place(bench: &CargoBench, what: &str) -> anyhow::Result<Vec<KeptExecutable>> {
    let mut executables = Vec::new();
    for message in compiled(bench, Path::new("."), None, what)? {
        let (Some(path), Some(target), Some(package_root)) = (
            message.executable,
            message.target,
            message.manifest_path.as_deref().and_then(Path::parent),
        ) else {
            continue;
        };
        if !message.profile.is_some_and(|p| p.test) {
            continue;
        }
        let (package_name, package_version) = name_and_version(&message.package_id);
        executables.push(KeptExecutable {
            target: format!("{package_name}/{}", target.name),
            sha256: String::new(),
            path,
            package_root: package_root.to_path_buf(),
            package_name,
            package_version,
            timed: false,
        });
    }
    executables.sort_by(|a, b| a.target.cmp(&b.target));
    Ok(executables)
}

/// The root of the cargo workspace the bench command builds when run in `dir`: rustc runs
/// there, so the workspace's own files are named relative to it in dep-info.
pub fn workspace_root(dir: &Path, bench: &CargoBench, what: &str) -> anyhow::Result<PathBuf> {
    let mut command = Command::new("cargo");
    command.args(["locate-project", "--workspace", "--message-format", "plain"]);
    let manifest = bench
        .build
        .iter()
        .position(|a| a == "--manifest-path")
        .and_then(|i| bench.build.get(i + 1))
        .cloned()
        .or_else(|| {
            bench
                .build
                .iter()
                .find_map(|a| a.strip_prefix("--manifest-path=").map(str::to_owned))
        });
    if let Some(manifest) = manifest {
        command.args(["--manifest-path", &manifest]);
    }
    let output = command
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("{what}: cannot run `cargo locate-project`"))?;
    if !output.status.success() {
        bail!(
            "{what}: `cargo locate-project --workspace` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let manifest = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    Ok(manifest
        .parent()
        .map_or_else(|| dir.to_path_buf(), Path::to_path_buf))
}

/// The files named in the dep-info (`deps/NAME-HASH.d`) of a compiled artifact whose outputs are
/// `filenames`, absolute (relative names are the workspace's, under `workspace_root`).
fn dep_info_sources(
    filenames: &[PathBuf],
    workspace_root: &Path,
    what: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    let Some(dep_info) = filenames.iter().find_map(|file| {
        let stem = file.file_stem()?.to_str()?;
        let dir = file.parent()?;
        [stem, stem.strip_prefix("lib").unwrap_or(stem)]
            .into_iter()
            .map(|stem| dir.join(format!("{stem}.d")))
            .find(|path| path.is_file())
    }) else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(&dep_info).with_context(|| {
        format!(
            "{what}: cannot read cargo's dep-info {}",
            dep_info.display()
        )
    })?;
    Ok(parse_dep_info(&text)
        .into_iter()
        .map(|path| workspace_root.join(path))
        .collect())
}

/// The prerequisites of every rule in a make-style dep-info file, `\ ` unescaped to a space.
fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((_, prerequisites)) = line.split_once(": ") else {
            continue;
        };
        let mut current = String::new();
        let mut chars = prerequisites.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        files.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                c => current.push(c),
            }
        }
        if !current.is_empty() {
            files.push(PathBuf::from(current));
        }
    }
    files.sort();
    files.dedup();
    files
}

/// Cargo runs a package's library harness first, then binaries, then benches.
fn kind_order(kind: &str) -> u8 {
    match kind {
        "lib" | "rlib" | "proc-macro" => 0,
        "bin" => 1,
        _ => 2,
    }
}

/// Runs the kept executables the way `cargo bench` would run them: `--bench` and the arguments
/// after `--` (with `only`, an exact-id filter in place of the user's), in the package's root,
/// with cargo's package variables.
pub fn run(
    executables: &[KeptExecutable],
    bench: &CargoBench,
    (only, timing): (Option<&[String]>, &[String]),
    criterion_home: &Path,
    target_dir: &Path,
    what: &str,
) -> anyhow::Result<()> {
    for executable in executables {
        let timing = if executable.timed { timing } else { &[] };
        // A narrowed round of thousands of ids runs each executable once per part of the filter.
        for args in bench.executable_args_each(only, timing) {
            let mut command = executable.command(&args, criterion_home, target_dir);
            let (status, stderr_tail) = run_teeing_stderr(&mut command)
                .with_context(|| format!("{what}: cannot run {}", executable.path.display()))?;
            if !status.success() {
                return Err(CommandFailed {
                    what: what.to_owned(),
                    command: format!("{} ({})", executable.target, executable.path.display()),
                    status,
                    stderr_tail,
                }
                .into());
            }
        }
    }
    Ok(())
}

/// What `executable --help` prints, when it runs and succeeds: Criterion's help names its
/// options and the bench's own configured defaults.
pub fn help_text(
    executable: &KeptExecutable,
    criterion_home: &Path,
    target_dir: &Path,
) -> Option<String> {
    let output = executable
        .command(&["--help".to_owned()], criterion_home, target_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Whether `executable`, whose `--help` failed, is a Criterion harness all the same: Criterion
/// 0.5 builds clap without its `help` feature, so its `--help` is refused ("unexpected
/// argument found") unless another crate of the build turns the feature on. Its `--list`,
/// with an option only Criterion takes, names its benchmarks
/// ([`crate::bench_command::listed_ids`]); a libtest harness refuses the option.
pub fn lists_as_criterion(
    executable: &KeptExecutable,
    criterion_home: &Path,
    target_dir: &Path,
) -> bool {
    let args = ["--bench", "--noplot", "--list"].map(str::to_owned);
    executable
        .command(&args, criterion_home, target_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|output| {
            output.status.success()
                && !crate::bench_command::listed_ids(&String::from_utf8_lossy(&output.stdout))
                    .is_empty()
        })
}

/// Whether `executable` accepts `extra` options with the command's own (Criterion's `--list`
/// parses them and measures nothing).
pub fn accepts(
    executable: &KeptExecutable,
    bench: &CargoBench,
    extra: &[String],
    criterion_home: &Path,
    target_dir: &Path,
) -> bool {
    let mut args = bench.user_args(extra);
    args.push("--list".to_owned());
    executable
        .command(&args, criterion_home, target_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Leaves out of `executables` the libtest harnesses without a benchmark that refuse the
/// command's options: a library's or binary's unit tests, which `cargo bench` builds in bench
/// mode unless its `[lib]` or `[[bin]]` says `bench = false`. Given Criterion's options
/// (`--noplot`), libtest stops with "Unrecognized option", as plain `cargo bench` does on them;
/// with nothing to measure, they are left out of the rounds. Returns a line per executable
/// left out, saying why. An executable that refuses the options and has benchmarks, or is not
/// libtest, is kept: the check before the first round names its complaint.
pub fn leave_out_benchless_libtest(
    executables: &mut Vec<KeptExecutable>,
    bench: &CargoBench,
    criterion_home: &Path,
    target_dir: &Path,
) -> Vec<String> {
    let args = bench.list_args();
    let mut left_out = Vec::new();
    executables.retain(|executable| {
        let output = |args: &[String]| {
            executable
                .command(args, criterion_home, target_dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .ok()
        };
        let Some(with_options) = output(&args) else {
            return true;
        };
        if with_options.status.success() {
            return true;
        }
        let Some(alone) = output(&["--bench".to_owned(), "--list".to_owned()]) else {
            return true;
        };
        let listed = String::from_utf8_lossy(&alone.stdout);
        let Some(tests) = alone
            .status
            .success()
            .then(|| libtest_tests_without_benchmarks(&listed))
            .flatten()
        else {
            return true;
        };
        let complaint = failure_reason(&last_lines(&with_options.stderr, STDERR_TAIL))
            .map(|reason| format!(" ({})", reason.trim_start_matches("error: ")))
            .unwrap_or_default();
        left_out.push(format!(
            "left out {}, a libtest harness with {tests} {} and no benchmark, which refuses the command's options{complaint} as plain `cargo bench` does: `bench = false` in its `[lib]` or `[[bin]]` section of Cargo.toml leaves it out of `cargo bench` too",
            executable.target,
            if tests == 1 { "test" } else { "tests" },
        ));
        false
    });
    left_out
}

/// The tests of a libtest `--list` that ends "N tests, 0 benchmarks"; `None` for any other
/// listing.
fn libtest_tests_without_benchmarks(listed: &str) -> Option<usize> {
    let last = listed.lines().rev().find(|l| !l.trim().is_empty())?;
    let (tests, benchmarks) = last.trim().split_once(", ")?;
    if !matches!(benchmarks, "0 benchmarks" | "0 benchmark") {
        return None;
    }
    let (count, word) = tests.split_once(' ')?;
    matches!(word, "tests" | "test")
        .then(|| count.parse().ok())
        .flatten()
}

/// The benchmark ids the executables select with `only` (else with the user's filter), from
/// Criterion's `--list`: seconds, where a command Criterion refuses would otherwise fail after
/// a whole round. An executable that lists nothing (a libtest harness of a library) adds none.
pub fn list(
    executables: &[KeptExecutable],
    bench: &CargoBench,
    only: Option<&[String]>,
    criterion_home: &Path,
    target_dir: &Path,
) -> anyhow::Result<Vec<String>> {
    Ok(
        list_each(executables, bench, only, criterion_home, target_dir)?
            .into_iter()
            .flatten()
            .collect(),
    )
}

/// [`list`], each executable's ids apart, in the executables' order.
pub fn list_each(
    executables: &[KeptExecutable],
    bench: &CargoBench,
    only: Option<&[String]>,
    criterion_home: &Path,
    target_dir: &Path,
) -> anyhow::Result<Vec<Vec<String>>> {
    let each = bench.list_args_each(only);
    let mut ids = Vec::new();
    for executable in executables {
        let mut listed = Vec::new();
        for args in &each {
            let output = executable
                .command(args, criterion_home, target_dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .with_context(|| format!("cannot run {}", executable.path.display()))?;
            if !output.status.success() {
                return Err(CommandFailed {
                    what: format!("listing the benchmarks of {}", executable.target),
                    command: format!("{} {}", executable.path.display(), args.join(" ")),
                    status: output.status,
                    stderr_tail: last_lines(&output.stderr, STDERR_TAIL),
                }
                .into());
            }
            listed.extend(bench_command::listed_ids(&String::from_utf8_lossy(
                &output.stdout,
            )));
        }
        ids.push(listed);
    }
    Ok(ids)
}

/// Where a `cargo bench` command run in this checkout has two or more executables that name
/// one benchmark, why (as [`shared_ids`] says it). Builds with `--no-run` (the bench command
/// has built it, so this takes seconds) and lists each executable's ids. A command that cannot
/// be built or listed is not refused for that: a note says the check was not made.
pub fn ids_shared_in_place(bench: &CargoBench, checking: &str) -> Option<String> {
    let listed = || -> anyhow::Result<Vec<(String, Vec<String>)>> {
        let executables = in_place(bench, checking)?;
        let home = std::env::temp_dir().join(format!("benchgate-list-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home)
            .with_context(|| format!("cannot create {}", home.display()))?;
        let home = std::path::absolute(&home).context("cannot resolve the listing's directory")?;
        let each = list_each(
            &executables,
            bench,
            None,
            &home,
            &crate::environment::target_directory(),
        );
        let _ = std::fs::remove_dir_all(&home);
        Ok(executables
            .iter()
            .map(|e| e.target.clone())
            .zip(each?)
            .collect())
    };
    match listed() {
        Ok(by_target) => shared_ids(&by_target),
        Err(error) => {
            eprintln!(
                "benchgate: note: {checking}: {error:#}; whether two executables name one benchmark goes unchecked"
            );
            None
        }
    }
}

/// Why the executables cannot all be measured, where two or more of them name one benchmark:
/// Criterion keeps one result per id (`target/criterion/<id>/new`), so the executable that runs
/// last overwrites the others' results, and a change to theirs goes unseen. `by_target` is each
/// executable's target and the ids it lists.
pub fn shared_ids(by_target: &[(String, Vec<String>)]) -> Option<String> {
    let mut owners: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for (target, ids) in by_target {
        let mut seen = std::collections::HashSet::new();
        for id in ids {
            if seen.insert(id.as_str()) {
                owners.entry(id.as_str()).or_default().push(target.as_str());
            }
        }
    }
    let shared: Vec<(&str, Vec<&str>)> = owners
        .into_iter()
        .filter(|(_, targets)| targets.len() > 1)
        .collect();
    let ((id, targets), rest) = shared.split_first()?;
    let others = match rest.len() {
        0 => String::new(),
        1 => format!(" (and `{}`)", rest[0].0),
        n => format!(" (and {n} more, `{}` among them)", rest[0].0),
    };
    Some(format!(
        "the bench executables {} each name the benchmark `{id}`{others}; Criterion keeps one result per id (in target/criterion/{id}/new), so the one that runs last overwrites the others' and a change to theirs would go unseen. Give each a name of its own (a benchmark group named after its crate, say), or bench one package at a time (`cargo bench -p NAME`)",
        list_and(targets),
    ))
}

/// How many of a failed command's last lines of standard error are kept: as many as a report
/// carries.
const STDERR_TAIL: usize = benchgate_gate::report::MAX_STDERR_TAIL;

/// A bench executable or command that exited unsuccessfully, with the last lines it wrote to
/// standard error (they say why: a panic, Criterion's refusal of an argument).
#[derive(Debug, Clone)]
pub struct CommandFailed {
    /// What benchgate was doing (`round 3/8: head (1a2b3c4d5e6f)`).
    pub what: String,
    /// The command or executable that failed.
    pub command: String,
    /// How it ended.
    pub status: std::process::ExitStatus,
    /// Its last lines of standard error.
    pub stderr_tail: Vec<String>,
}

impl std::fmt::Display for CommandFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: `{}` failed with {}",
            self.what, self.command, self.status
        )?;
        if let Some(reason) = failure_reason(&self.stderr_tail) {
            write!(f, ": {reason}")?;
        }
        Ok(())
    }
}

/// Why a command stopped, from its last lines of standard error: a Rust panic's location and
/// message where it panicked (with `RUST_BACKTRACE` set, as CI often has it, a backtrace and a
/// note follow the message), else its last line that is not part of a backtrace.
pub fn failure_reason(tail: &[String]) -> Option<String> {
    if let Some(i) = tail.iter().rposition(|l| l.contains(PANICKED_AT)) {
        let line = tail[i].trim();
        let at = line.find(PANICKED_AT).map_or(line, |start| &line[start..]);
        // Rust 1.73 and later: `thread 'main' panicked at src/file.rs:1:2:`, the message on the
        // lines after it; before, `panicked at 'message', src/file.rs:1:2`.
        let message = tail.get(i + 1).map(|l| l.trim()).filter(|l| !l.is_empty());
        return Some(match message {
            Some(message) if at.ends_with(':') => format!("{at} {message}"),
            _ => at.to_owned(),
        });
    }
    tail.iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !is_backtrace_line(l))
        .map(str::to_owned)
}

const PANICKED_AT: &str = "panicked at";

/// A line of a Rust backtrace or its notes: `stack backtrace:`, a frame (`  3: main`, `at
/// src/main.rs:2:5`), `note: run with RUST_BACKTRACE=1 ...`.
fn is_backtrace_line(line: &str) -> bool {
    let frame = line
        .split_once(": ")
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    line == "stack backtrace:"
        || frame
        || line.starts_with("at ")
        || (line.starts_with("note: ") && line.contains("RUST_BACKTRACE"))
}

impl std::error::Error for CommandFailed {}

/// A command's last `n` lines of standard error, with a panic's first two lines kept in place of
/// the oldest where a long backtrace pushed them out ([`failure_reason`] reads them).
fn last_lines(bytes: &[u8], n: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut tail = Tail::new(n);
    for line in text.lines() {
        tail.push(line.trim_end().to_owned());
    }
    tail.lines()
}

/// The last lines of a stream, and the first two lines of its last panic.
struct Tail {
    n: usize,
    lines: std::collections::VecDeque<String>,
    panic: Vec<String>,
    /// How many of the last panic's lines are still to come into `panic`.
    panic_to_come: usize,
}

impl Tail {
    fn new(n: usize) -> Self {
        Self {
            n,
            lines: std::collections::VecDeque::with_capacity(n),
            panic: Vec::new(),
            panic_to_come: 0,
        }
    }

    fn push(&mut self, line: String) {
        if line.contains(PANICKED_AT) {
            self.panic.clear();
            self.panic_to_come = 2;
        }
        if self.panic_to_come > 0 {
            self.panic.push(line.clone());
            self.panic_to_come -= 1;
        }
        if self.lines.len() == self.n {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    fn lines(self) -> Vec<String> {
        let mut lines: Vec<String> = self.lines.into();
        let kept = self.panic.first().is_some_and(|p| lines.contains(p));
        if !kept && !self.panic.is_empty() {
            let room = self.n.saturating_sub(self.panic.len());
            let mut out = self.panic;
            out.extend(lines.split_off(lines.len().saturating_sub(room)));
            lines = out;
        }
        lines
    }
}

/// Runs `command` with its standard output on ours (standard error: the report owns stdout)
/// and its standard error copied to ours line by line, keeping the last [`STDERR_TAIL`] lines.
pub fn run_teeing_stderr(
    command: &mut Command,
) -> std::io::Result<(std::process::ExitStatus, Vec<String>)> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut tail = Tail::new(STDERR_TAIL);
    if let Some(stderr) = child.stderr.take() {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            {
                use std::io::Write as _;
                let mut ours = std::io::stderr().lock();
                let _ = ours.write_all(&line);
            }
            tail.push(String::from_utf8_lossy(&line).trim_end().to_owned());
        }
    }
    let status = child.wait()?;
    Ok((status, tail.lines()))
}

/// Rust source with comments removed and whitespace outside literals dropped: two files with
/// the same code and different comments or layout give the same text.
pub fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut depth = 0usize;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            'r' if matches!(next, Some('"' | '#'))
                && !chars[..i]
                    .last()
                    .is_some_and(|p| p.is_alphanumeric() || *p == '_') =>
            {
                // A raw string r"..." or r#"..."#: copied as it is.
                let start = i;
                let mut j = i + 1;
                let mut hashes = 0;
                while chars.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if chars.get(j) != Some(&'"') {
                    out.push(c);
                    i += 1;
                    continue;
                }
                j += 1;
                while j < chars.len() {
                    if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.extend(&chars[start..j.min(chars.len())]);
                i = j;
            }
            '"' => {
                let start = i;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.extend(&chars[start..i.min(chars.len())]);
            }
            '\'' => {
                // A character literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
                let end = if next == Some('\\') {
                    (i + 3..chars.len()).find(|&j| chars[j] == '\'')
                } else if chars.get(i + 2) == Some(&'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                let end = end.map_or(i + 1, |e| e + 1);
                out.extend(&chars[i..end]);
                i = end;
            }
            c if c.is_whitespace() => i += 1,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn targets(each: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        each.iter()
            .map(|(t, ids)| (t.to_string(), ids.iter().map(|i| i.to_string()).collect()))
            .collect()
    }

    #[test]
    fn ids_two_executables_name_are_named_with_both_executables() {
        let apart = targets(&[("a/a", &["parse", "a_only"]), ("b/b", &["b_only"])]);
        assert_eq!(shared_ids(&apart), None);
        let one = targets(&[("a/a", &["parse", "x"]), ("b/b", &["parse"])]);
        let why = shared_ids(&one).unwrap();
        assert!(
            why.starts_with("the bench executables a/a and b/b each name the benchmark `parse`; Criterion keeps one result per id (in target/criterion/parse/new)"),
            "{why}"
        );
        let three = targets(&[
            ("a/a", &["parse", "new", "x"]),
            ("b/b", &["parse", "new", "y"]),
            ("c/c", &["parse", "z", "y"]),
        ]);
        // The first in the order of the ids; `parse` is everyone's.
        let why = shared_ids(&three).unwrap();
        assert!(
            why.starts_with("the bench executables a/a and b/b each name the benchmark `new` (and 2 more, `parse` among them);"),
            "{why}"
        );
    }

    #[test]
    fn only_a_libtest_listing_without_benchmarks_counts_its_tests() {
        // libtest's `--bench --list` of a library's unit tests (Rust 1.95).
        let tests = "word::tests::test_end_of_ayah_cat: test\nword::tests::test_syriac_abbr_mark: test\n\n6 tests, 0 benchmarks\n";
        assert_eq!(libtest_tests_without_benchmarks(tests), Some(6));
        assert_eq!(
            libtest_tests_without_benchmarks("it: test\n\n1 test, 0 benchmarks\n"),
            Some(1)
        );
        // `#[bench]` functions are benchmarks: kept, so the check names its complaint.
        assert_eq!(
            libtest_tests_without_benchmarks("parse: bench\n\n0 tests, 1 benchmark\n"),
            None
        );
        // Criterion's listing is not libtest's.
        assert_eq!(
            libtest_tests_without_benchmarks("small/sum: benchmark\nsmall/sort: benchmark\n"),
            None
        );
        assert_eq!(libtest_tests_without_benchmarks(""), None);
    }

    /// What a bench that panics prints to standard error with `RUST_BACKTRACE=1` (Rust 1.95),
    /// its backtrace `frames` deep.
    fn panic_stderr(frames: usize) -> String {
        let mut text = String::from(
            "Gnuplot not found, using plotters backend\n\n\
             thread 'main' (32199) panicked at benches/word_bounds.rs:30:72:\n\
             called `Result::unwrap()` on an `Err` value: Os { code: 2, kind: NotFound, message: \"No such file or directory\" }\n\
             stack backtrace:\n",
        );
        for i in 0..frames {
            text.push_str(&format!("   {i}: core::result::unwrap_failed\n"));
        }
        text.push_str("note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n");
        text
    }

    #[test]
    fn a_panic_is_the_reason_a_command_failed_even_under_a_backtrace() {
        let reason = "panicked at benches/word_bounds.rs:30:72: called `Result::unwrap()` on an `Err` value: Os { code: 2, kind: NotFound, message: \"No such file or directory\" }";
        for frames in [3, STDERR_TAIL, 3 * STDERR_TAIL] {
            let tail = last_lines(panic_stderr(frames).as_bytes(), STDERR_TAIL);
            assert!(tail.len() <= STDERR_TAIL, "{tail:?}");
            assert_eq!(failure_reason(&tail).as_deref(), Some(reason), "{tail:?}");
            // The newest lines are kept after it.
            assert!(
                tail.last().unwrap().starts_with("note: Some details"),
                "{tail:?}"
            );
        }
        // Before Rust 1.73 the message was on the panic's line.
        let old = ["thread 'main' panicked at 'no input', benches/a.rs:3:9".to_owned()];
        assert_eq!(
            failure_reason(&old).as_deref(),
            Some("panicked at 'no input', benches/a.rs:3:9")
        );
        // Without a panic: the last line that is not a backtrace's.
        let refused = [
            "error: unexpected argument '--nope' found".to_owned(),
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
                .to_owned(),
            "".to_owned(),
        ];
        assert_eq!(
            failure_reason(&refused).as_deref(),
            Some("error: unexpected argument '--nope' found")
        );
    }

    #[test]
    fn comments_and_layout_are_not_code() {
        let a = "fn f(x: &'a str) -> char { // one\n    /* two /* nested */ */ 'x' }\n";
        let b = "/// docs\nfn f(x: &'a str) -> char {\n\n 'x'\n}";
        assert_eq!(code_only(a), code_only(b));
        assert_eq!(code_only(a), "fnf(x:&'astr)->char{'x'}");
    }

    #[test]
    fn a_change_of_code_or_of_a_literal_is_code() {
        assert_ne!(
            code_only("let n = 1000; // n"),
            code_only("let n = 1300; // n")
        );
        assert_ne!(
            code_only(r#"let s = "a // b";"#),
            code_only(r#"let s = "a // c";"#)
        );
        assert_ne!(
            code_only(r##"let s = r#"x "/* y"#;"##),
            code_only(r##"let s = r#"x "/* z"#;"##)
        );
        assert_eq!(code_only("let c = '\\''; // q"), "letc='\\'';");
        assert_eq!(code_only("let s = \"a\\\"b\"; // x"), "lets=\"a\\\"b\";");
    }

    #[test]
    fn dep_info_names_every_prerequisite_once() {
        let text = "/t/release/deps/zoo-1.d: src/lib.rs src/a\\ b.rs /abs/core/src/lib.rs\n\nsrc/lib.rs:\nsrc/a\\ b.rs:\n\n# env-dep:CARGO_PKG_NAME=zoo\n";
        assert_eq!(
            parse_dep_info(text),
            ["/abs/core/src/lib.rs", "src/a b.rs", "src/lib.rs"].map(PathBuf::from)
        );
    }

    #[test]
    fn package_ids_of_both_shapes_give_name_and_version() {
        assert_eq!(
            name_and_version("path+file:///tmp/r/crates/zoo-core#0.2.0"),
            ("zoo-core".to_owned(), "0.2.0".to_owned())
        );
        assert_eq!(
            name_and_version("path+file:///tmp/r/dir#zoo@0.1.0"),
            ("zoo".to_owned(), "0.1.0".to_owned())
        );
    }
}
