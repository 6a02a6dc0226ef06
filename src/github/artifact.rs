//! Fork pull requests: their token is read-only, so the benchmarks run in an unprivileged
//! `pull_request` workflow that saves its verdict as an artifact (`publish --to-artifact DIR`),
//! and a `workflow_run` workflow publishes it with the base repository's token
//! (`publish --from-artifact DIR`). The artifact is untrusted data: sizes are capped, files must
//! be plain files, the summary is schema-checked, and the pull request and head commit it claims
//! are checked against GitHub before anything is posted.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use benchgate_collector::CommitSha;
use benchgate_gate::report::read_summary;
use serde::{Deserialize, Serialize};

use super::target::{GitHubArgs, Target};

/// The artifact's description of what it is for.
pub const META_FILE: &str = "benchgate-artifact.json";
/// The verdict, as `compare`, `gate` or `ab` wrote it.
pub const SUMMARY_FILE: &str = "perf-summary.json";
/// The largest summary accepted (a 10,000-benchmark summary is about 4 MiB).
pub const SUMMARY_CAP: u64 = 16 * 1024 * 1024;
/// The largest description accepted.
pub const META_CAP: u64 = 64 * 1024;

/// What the artifact claims.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    schema_version: u32,
    pr: u64,
    head_sha: String,
}

/// `publish --to-artifact DIR`: the summary and the pull request it belongs to, from the event;
/// the job summary and step outputs (`verdict`, ...) as `publish` writes them.
pub fn write(summary: &Path, dir: &Path, args: &GitHubArgs) -> anyhow::Result<()> {
    let text = read_capped(summary, SUMMARY_CAP)?;
    let read = read_summary(summary, &text)?;
    let target = Target::resolve(args, None, None)?;
    let (Some(pr), Some(head_sha)) = (target.pr(), target.sha()) else {
        bail!(
            "--to-artifact: no pull request in the event: run it in a pull_request workflow or pass --pr and --sha"
        );
    };
    std::fs::create_dir_all(dir).with_context(|| format!("--to-artifact {}", dir.display()))?;
    let meta = Meta {
        schema_version: 1,
        pr,
        head_sha: head_sha.to_owned(),
    };
    std::fs::write(dir.join(SUMMARY_FILE), text)
        .with_context(|| format!("--to-artifact {}", dir.display()))?;
    std::fs::write(
        dir.join(META_FILE),
        serde_json::to_string_pretty(&meta)? + "\n",
    )
    .with_context(|| format!("--to-artifact {}", dir.display()))?;
    // The job that made the verdict shows it too: its summary and step outputs.
    super::job_files::write_job_files(&target, &read, summary)
}

/// A checked artifact: the summary's path, the pull request and its head commit.
#[derive(Debug)]
pub struct Checked {
    /// The summary file inside the artifact.
    pub summary: PathBuf,
    /// The pull request, as GitHub confirmed it.
    pub pr: u64,
    /// Its head commit, as GitHub confirmed it.
    pub head_sha: String,
}

/// Checks the artifact in `dir` before anything is published from it: plain files within their
/// caps, a valid summary, and a pull request whose head on GitHub (and in the `workflow_run`
/// event, when there is one, and `expected_sha`, when given) is the commit the artifact claims.
pub async fn check(
    dir: &Path,
    target: &Target,
    expected_sha: Option<&str>,
) -> anyhow::Result<Checked> {
    if let Some(event) = target.workflow_run_event()
        && event != "pull_request"
    {
        bail!(
            "the workflow run was triggered by `{event}`, not `pull_request`: only a pull request's artifact is published (nothing was published)"
        );
    }
    only_our_files(dir)?;
    let meta_path = dir.join(META_FILE);
    let meta_text = read_capped(&meta_path, META_CAP)?;
    let deserializer = &mut serde_json::Deserializer::from_str(&meta_text);
    let meta: Meta = serde_path_to_error::deserialize(deserializer)
        .map_err(|e| anyhow::anyhow!("{}: `{}`: {}", meta_path.display(), e.path(), e.inner()))?;
    if meta.schema_version != 1 {
        bail!(
            "{}: `schema_version`: {} is not supported",
            meta_path.display(),
            meta.schema_version
        );
    }
    if meta.pr == 0 {
        bail!(
            "{}: `pr`: must be a pull request number",
            meta_path.display()
        );
    }
    let claimed = CommitSha::parse(&meta.head_sha)
        .with_context(|| format!("{}: `head_sha`", meta_path.display()))?;
    let summary_path = dir.join(SUMMARY_FILE);
    let summary = read_summary(&summary_path, &read_capped(&summary_path, SUMMARY_CAP)?)?;
    if let Some(head) = summary.context.head_commit.as_deref()
        && head != claimed.as_str()
    {
        bail!(
            "{}: `head_commit` {head} is not the artifact's head_sha {claimed}",
            summary_path.display()
        );
    }
    if let Some(event_sha) = target.workflow_run_head_sha()
        && event_sha != claimed.as_str()
    {
        bail!(
            "{}: head_sha {claimed} is not the workflow run's head commit {event_sha}",
            meta_path.display()
        );
    }
    if let Some(expected) = expected_sha
        && expected != claimed.as_str()
    {
        bail!(
            "{}: head_sha {claimed} is not the commit the run was requested for, {expected}; nothing was published",
            meta_path.display()
        );
    }
    let github = target.github_client()?;
    let actual = github
        .pull_head_sha(meta.pr)
        .await
        .with_context(|| format!("{}: pull request #{}", meta_path.display(), meta.pr))?;
    if actual != claimed.as_str() {
        bail!(
            "{}: claims pull request #{} at {claimed}, but its head on GitHub is {actual} (pushed since); nothing was published",
            meta_path.display(),
            meta.pr
        );
    }
    Ok(Checked {
        summary: summary_path,
        pr: meta.pr,
        head_sha: actual,
    })
}

/// The artifact directory holds exactly the files `--to-artifact` writes, as plain files: no
/// link (to the directory itself, or to `/etc/passwd` inside it), FIFO, subdirectory or extra
/// file.
fn only_our_files(dir: &Path) -> anyhow::Result<()> {
    let metadata = std::fs::symlink_metadata(dir)
        .with_context(|| format!("{}: cannot read the artifact", dir.display()))?;
    if !metadata.file_type().is_dir() {
        bail!(
            "{}: not a directory (a link to one is refused too)",
            dir.display()
        );
    }
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("{}: cannot list", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("{}: cannot stat", path.display()))?;
        let name = entry.file_name();
        let ours = name == META_FILE || name == SUMMARY_FILE;
        if !ours {
            bail!(
                "{}: not a file of benchgate's artifact (it holds only {META_FILE} and {SUMMARY_FILE}); nothing was published",
                path.display()
            );
        }
        if !kind.is_file() {
            bail!(
                "{}: not a plain file (links, FIFOs and directories are refused in an artifact)",
                path.display()
            );
        }
    }
    Ok(())
}

/// A plain file (not a link, not a directory) of at most `cap` bytes, as text.
fn read_capped(path: &Path, cap: u64) -> anyhow::Result<String> {
    let metadata = std::fs::symlink_metadata(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    if !metadata.file_type().is_file() {
        bail!(
            "{}: not a plain file (links are refused in an artifact)",
            path.display()
        );
    }
    if metadata.len() > cap {
        bail!(
            "{}: {} bytes, over the {cap}-byte cap",
            path.display(),
            metadata.len()
        );
    }
    std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read as UTF-8", path.display()))
}
