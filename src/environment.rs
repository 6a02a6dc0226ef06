//! What the binary learns from its surroundings: git, cargo, the compiler and environment
//! variables. Nothing else in benchgate reads them.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};
use benchgate_collector::{CommitSha, HardwareProfile, RepositoryName, RunnerImage, RustcInfo};

/// Runs a command and returns its trimmed standard output, or `None` if it failed.
fn output_of(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// An environment variable's value, `None` when unset or empty: the one way the binary reads
/// a variable outside `src/github/` (tokens, URLs, secrets that stand in for flags).
pub fn non_empty_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The checked-out commit (`git rev-parse HEAD`).
pub fn head_commit() -> anyhow::Result<CommitSha> {
    let Some(sha) = output_of("git", &["rev-parse", "HEAD"]) else {
        bail!(
            "--commit: not given and `git rev-parse HEAD` failed (not in a git checkout?); pass --commit SHA"
        );
    };
    CommitSha::parse(&sha).context("git rev-parse HEAD")
}

/// The repository: `$GITHUB_REPOSITORY`, else the `origin` remote's OWNER/NAME, else
/// `local/<directory>` for a checkout without a hosted remote.
pub fn repository() -> anyhow::Result<RepositoryName> {
    if let Some(name) = non_empty_var("GITHUB_REPOSITORY") {
        return RepositoryName::parse(&name).context("$GITHUB_REPOSITORY");
    }
    if let Some(url) = output_of("git", &["remote", "get-url", "origin"])
        && let Some(name) = repository_from_remote(&url)
    {
        return Ok(name);
    }
    let top = output_of("git", &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    let directory = top
        .as_deref()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .map(sanitize_name)
        .unwrap_or_else(|| "project".to_owned());
    RepositoryName::parse(&format!("local/{directory}"))
        .context("--repo: not given and no origin remote; pass --repo OWNER/NAME")
}

/// `https://github.com/o/r.git`, `git@github.com:o/r.git`, `ssh://git@host/o/r` → `o/r`.
fn repository_from_remote(url: &str) -> Option<RepositoryName> {
    let url = url.trim().trim_end_matches('/');
    let path = if let Some((_, rest)) = url.split_once("://") {
        rest.split_once('/')?.1
    } else if let Some((host, rest)) = url.split_once(':') {
        // scp-like `git@host:o/r`; a bare local path has no `host:` part.
        if host.contains('/') {
            return None;
        }
        rest
    } else {
        return None;
    };
    let path = path.trim_end_matches(".git");
    let mut parts = path.rsplit('/');
    let name = parts.next()?;
    let owner = parts.next()?;
    RepositoryName::parse(&format!("{owner}/{name}")).ok()
}

fn sanitize_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The branch: `$GITHUB_HEAD_REF` (pull requests), `$GITHUB_REF_NAME`, else the checked-out branch.
pub fn branch() -> Option<String> {
    non_empty_var("GITHUB_HEAD_REF")
        .or_else(|| non_empty_var("GITHUB_REF_NAME"))
        .or_else(|| {
            output_of("git", &["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD")
        })
}

/// `commit` and its first-parent ancestors, nearest first, at most `count` in all; empty when
/// git does not know the commit (a shallow clone, another repository).
pub fn first_parent_history(commit: &CommitSha, count: usize) -> Vec<CommitSha> {
    let count = count.to_string();
    output_of(
        "git",
        &[
            "rev-list",
            "--first-parent",
            "--max-count",
            &count,
            commit.as_str(),
        ],
    )
    .map(|text| {
        text.lines()
            .filter_map(|line| CommitSha::parse(line.trim()).ok())
            .collect()
    })
    .unwrap_or_default()
}

/// Whether the checkout is shallow (`git rev-parse --is-shallow-repository`): its first-parent
/// walks stop at the clone's depth.
pub fn is_shallow_repository() -> bool {
    output_of("git", &["rev-parse", "--is-shallow-repository"]).is_some_and(|o| o == "true")
}

/// Where Criterion writes: `$CRITERION_HOME`, else `<cargo target dir>/criterion`.
pub fn criterion_home() -> anyhow::Result<PathBuf> {
    if let Some(home) = non_empty_var("CRITERION_HOME") {
        return Ok(PathBuf::from(home));
    }
    Ok(target_directory().join("criterion"))
}

/// Where gungraun writes its summaries, as gungraun-runner finds it: `$GUNGRAUN_HOME`, else the
/// cargo target directory's `gungraun/`.
pub fn gungraun_home() -> PathBuf {
    match non_empty_var("GUNGRAUN_HOME") {
        Some(home) => PathBuf::from(home),
        None => target_directory().join("gungraun"),
    }
}

/// `$CARGO_TARGET_DIR`, else cargo's target directory for this workspace, else `target`.
pub fn target_directory() -> PathBuf {
    if let Some(target) = non_empty_var("CARGO_TARGET_DIR") {
        return PathBuf::from(target);
    }
    if let Some(metadata) = output_of(
        "cargo",
        &[
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ],
    ) && let Ok(value) = serde_json::from_str::<serde_json::Value>(&metadata)
        && let Some(target) = value.get("target_directory").and_then(|t| t.as_str())
    {
        return PathBuf::from(target);
    }
    PathBuf::from("target")
}

/// This machine's profile, with the runner image from `ImageOS`/`ImageVersion` and the compiler
/// from `$RUSTC` (else `rustc`).
pub fn detect_profile() -> anyhow::Result<HardwareProfile> {
    let runner = RunnerImage {
        os: non_empty_var("ImageOS"),
        version: non_empty_var("ImageVersion"),
    };
    let rustc = RustcInfo::query(&non_empty_var("RUSTC").unwrap_or_else(|| "rustc".to_owned()))?;
    Ok(HardwareProfile::detect(&runner, &rustc)?)
}

/// Whether to colour standard output: a terminal, and `NO_COLOR` unset or empty
/// (<https://no-color.org>).
pub fn colour_stdout() -> bool {
    use std::io::IsTerminal as _;
    std::io::stdout().is_terminal() && non_empty_var("NO_COLOR").is_none()
}

#[cfg(test)]
mod tests {
    use super::repository_from_remote;

    #[test]
    fn remotes_in_every_common_form_name_the_repository() {
        let cases = [
            (
                "https://github.com/rust-lang/regex.git",
                Some("rust-lang/regex"),
            ),
            (
                "https://github.com/rust-lang/regex",
                Some("rust-lang/regex"),
            ),
            (
                "git@github.com:BurntSushi/ripgrep.git",
                Some("BurntSushi/ripgrep"),
            ),
            (
                "ssh://git@ghe.example.com:2222/team/tool.git",
                Some("team/tool"),
            ),
            ("https://ghe.example.com/scm/team/tool/", Some("team/tool")),
            ("/tmp/clones/main", None),
            ("../main.git", None),
        ];
        for (url, expected) in cases {
            assert_eq!(
                repository_from_remote(url).as_ref().map(|r| r.as_str()),
                expected,
                "{url}"
            );
        }
    }
}
