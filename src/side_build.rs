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
use benchgate_gate::report::BuiltExecutable;
use sha2::Digest as _;

/// A `cargo bench ...` command split into what builds and what each executable is given.
pub struct CargoBench {
    /// `cargo bench <options>`, without the arguments after `--`.
    build: Vec<String>,
    /// The arguments after `--`, handed to every bench executable after `--bench`.
    bench_args: Vec<String>,
}

impl CargoBench {
    /// `Some` for a `cargo bench ...` command; other commands build as they run.
    pub fn parse(command: &[String]) -> Option<Self> {
        let is_cargo_bench = command.first().is_some_and(|c| c == "cargo")
            && command.get(1).is_some_and(|c| c == "bench");
        if !is_cargo_bench {
            return None;
        }
        let build: Vec<String> = command.iter().take_while(|a| *a != "--").cloned().collect();
        let bench_args = command.iter().skip(build.len() + 1).cloned().collect();
        Some(Self { build, bench_args })
    }
}

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
}

impl KeptExecutable {
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
    /// The worktree's crates that were compiled (their roots, relative to the worktree).
    pub package_dirs: Vec<PathBuf>,
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
/// and copies them into `keep_dir`. `what` names the side in errors.
pub fn build(
    worktree: &Path,
    bench: &CargoBench,
    target_dir: &Path,
    keep_dir: &Path,
    what: &str,
) -> anyhow::Result<SideExecutables> {
    touch_tree(worktree, SystemTime::now())
        .with_context(|| format!("{what}: cannot mark the worktree's sources as changed"))?;
    let (program, args) = bench
        .build
        .split_first()
        .context("no bench command given after --")?;
    let shown = format!("{} --no-run", bench.build.join(" "));
    let mut child = Command::new(program)
        .args(args)
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .current_dir(worktree)
        .env("CARGO_TARGET_DIR", target_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
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

    let worktree = std::path::absolute(worktree).context("cannot resolve the worktree")?;
    std::fs::create_dir_all(keep_dir)
        .with_context(|| format!("cannot create {}", keep_dir.display()))?;
    let mut package_dirs = Vec::new();
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
        let in_worktree = package_root
            .strip_prefix(&worktree)
            .ok()
            .map(Path::to_path_buf);
        let target = message.target.as_ref();
        if let Some(relative) = &in_worktree {
            if message.fresh {
                bail!(
                    "{what}: cargo reused an earlier build of {} ({}) instead of compiling this side's sources; remove {} and retry",
                    target.map(|t| t.name.as_str()).unwrap_or("?"),
                    package_root.display(),
                    target_dir.display()
                );
            }
            if !package_dirs.contains(relative) {
                package_dirs.push(relative.clone());
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
            },
        ));
    }
    executables.sort_by(|a, b| (a.0, &a.1.target).cmp(&(b.0, &b.1.target)));
    if executables.is_empty() {
        bail!("{what}: `{shown}` built no bench executable");
    }
    Ok(SideExecutables {
        executables: executables.into_iter().map(|(_, e)| e).collect(),
        package_dirs,
    })
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
/// after `--`, in the package's root, with cargo's package variables.
pub fn run(
    executables: &[KeptExecutable],
    bench: &CargoBench,
    filter: Option<&str>,
    criterion_home: &Path,
    target_dir: &Path,
    what: &str,
) -> anyhow::Result<()> {
    for executable in executables {
        let status = Command::new(&executable.path)
            .arg("--bench")
            .args(&bench.bench_args)
            .args(filter)
            .current_dir(&executable.package_root)
            .env("CRITERION_HOME", criterion_home)
            .env("CARGO_TARGET_DIR", target_dir)
            .env("CARGO_MANIFEST_DIR", &executable.package_root)
            .env("CARGO_PKG_NAME", &executable.package_name)
            .env("CARGO_PKG_VERSION", &executable.package_version)
            .stdin(Stdio::null())
            .stdout(std::io::stderr())
            .status()
            .with_context(|| format!("{what}: cannot run {}", executable.path.display()))?;
        if !status.success() {
            bail!(
                "{what}: {} ({}) failed with {status}",
                executable.target,
                executable.path.display()
            );
        }
    }
    Ok(())
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

    #[test]
    fn only_cargo_bench_commands_are_split() {
        let command: Vec<String> = ["cargo", "bench", "--bench", "zoo", "--", "--noplot", "x"]
            .map(String::from)
            .to_vec();
        let bench = CargoBench::parse(&command).unwrap();
        assert_eq!(bench.build, ["cargo", "bench", "--bench", "zoo"]);
        assert_eq!(bench.bench_args, ["--noplot", "x"]);
        let script = ["sh", "bench.sh"].map(String::from).to_vec();
        assert!(CargoBench::parse(&script).is_none());
    }
}
