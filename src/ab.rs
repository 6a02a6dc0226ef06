//! `benchgate ab`: same-job A/B on this machine. Checks out base and head in git worktrees,
//! builds both, runs the bench command alternately (A B A B ..., never A A B B) with a fresh
//! Criterion output directory per run, stores every round, and decides with the rounds as the
//! unit of replication.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use anyhow::{Context as _, bail};
use benchgate_collector::{
    CommitSha, HardwareProfile, Measurement, NewRun, RepositoryName, RunKind, RunMeta, Store,
    criterion,
};
use benchgate_gate::decision::{Input, Mode, evaluate};
use benchgate_gate::report::Context;

use crate::compare::{Outputs, load_policy, report};
use crate::environment;

/// What `ab` needs to know.
pub struct AbArgs<'a> {
    /// The base ref (branch, tag or SHA).
    pub base_ref: &'a str,
    /// The head ref.
    pub head_ref: &'a str,
    /// Rounds: each runs base once and head once.
    pub rounds: usize,
    /// The bench command, run in each worktree.
    pub command: &'a [String],
    /// The store every round is ingested into.
    pub db: &'a Path,
    /// The kind the rounds are stored as.
    pub kind: RunKind,
    /// The repository, when not inferred.
    pub repo: Option<&'a str>,
    /// The policy file.
    pub config: Option<&'a Path>,
}

/// A detached worktree, removed again when dropped.
struct Worktree {
    path: PathBuf,
}

impl Worktree {
    fn add(path: PathBuf, commit: &CommitSha) -> anyhow::Result<Self> {
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
        Ok(Self { path })
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

fn git(args: &[&str]) -> anyhow::Result<String> {
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

fn resolve(flag: &str, reference: &str) -> anyhow::Result<CommitSha> {
    let sha = git(&["rev-parse", "--verify", &format!("{reference}^{{commit}}")])
        .with_context(|| format!("{flag} {reference}: not a commit in this repository"))?;
    Ok(CommitSha::parse(&sha)?)
}

/// The bench command's build step: `cargo bench ...` gets `--no-run`; other commands build as
/// they run.
fn build_command(command: &[String]) -> Option<Vec<String>> {
    let is_cargo_bench = command.first().is_some_and(|c| c == "cargo")
        && command.get(1).is_some_and(|c| c == "bench");
    if !is_cargo_bench {
        return None;
    }
    let mut build: Vec<String> = command.iter().take_while(|a| *a != "--").cloned().collect();
    build.push("--no-run".to_owned());
    Some(build)
}

fn run_in(
    worktree: &Path,
    command: &[String],
    criterion_home: &Path,
    target_dir: &Path,
    what: &str,
) -> anyhow::Result<()> {
    let (program, args) = command
        .split_first()
        .context("no bench command given after --")?;
    let status = Command::new(program)
        .args(args)
        .current_dir(worktree)
        .env("CRITERION_HOME", criterion_home)
        .env("CARGO_TARGET_DIR", target_dir)
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .with_context(|| format!("{what}: cannot run `{}`", command.join(" ")))?;
    if !status.success() {
        bail!("{what}: `{}` failed with {status}", command.join(" "));
    }
    Ok(())
}

/// `benchgate ab`: returns the exit code (0 pass, inconclusive or no baseline; 1 regression).
pub async fn ab(args: &AbArgs<'_>, outputs: &Outputs) -> anyhow::Result<u8> {
    if args.rounds == 0 {
        bail!("--rounds: at least 1 (3 or more recommended on shared machines)");
    }
    if args.command.is_empty() {
        bail!("no bench command: give it after --, e.g. `benchgate ab ... -- cargo bench`");
    }
    let policy = load_policy(args.config)?;
    let base_commit = resolve("--base-ref", args.base_ref)?;
    let head_commit = resolve("--head-ref", args.head_ref)?;
    let repository = match args.repo {
        Some(name) => RepositoryName::parse(name).context("--repo")?,
        None => environment::repository()?,
    };
    let profile = environment::detect_profile()?;
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    let scratch = environment::criterion_home()?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| top.join("target"))
        .join("benchgate-ab");
    // Absolute: the bench command runs inside the worktrees.
    let scratch = std::path::absolute(&scratch).context("cannot resolve the scratch directory")?;
    let target_dir = scratch.join("target");
    let sides = [("base", &base_commit), ("head", &head_commit)];
    let worktrees = sides
        .iter()
        .map(|(name, commit)| Worktree::add(scratch.join(name), commit))
        .collect::<anyhow::Result<Vec<_>>>()?;

    if let Some(build) = build_command(args.command) {
        for ((name, commit), worktree) in sides.iter().zip(&worktrees) {
            eprintln!("benchgate: building {name} ({})", commit.short());
            run_in(
                &worktree.path,
                &build,
                &scratch.join("build"),
                &target_dir,
                &format!("building {name}"),
            )?;
        }
    }

    let store = Store::open(args.db).await?;
    let result = run_rounds(
        args,
        &store,
        &sides,
        &worktrees,
        &scratch,
        &target_dir,
        &repository,
        &profile,
    )
    .await;
    store.close().await;
    let (base_rounds, head_rounds) = result?;

    let context = Context {
        base: format!("{} ({})", args.base_ref, base_commit.short()),
        head: format!("{} ({})", args.head_ref, head_commit.short()),
        base_commit: Some(base_commit.to_string()),
        head_commit: Some(head_commit.to_string()),
        fingerprint: Some(profile.fingerprint().to_string()),
    };
    let history = Default::default();
    let decision = evaluate(
        &Input {
            mode: Mode::SameJobAb,
            base_rounds: &base_rounds,
            head_rounds: &head_rounds,
            history: &history,
        },
        &policy,
    );
    drop(worktrees);
    report(&decision, &context, &policy, outputs)
}

/// Runs the rounds A B A B ..., storing each; returns the base and head rounds.
#[allow(clippy::too_many_arguments)]
async fn run_rounds(
    args: &AbArgs<'_>,
    store: &Store,
    sides: &[(&str, &CommitSha); 2],
    worktrees: &[Worktree],
    scratch: &Path,
    target_dir: &Path,
    repository: &RepositoryName,
    profile: &HardwareProfile,
) -> anyhow::Result<(Vec<Vec<Measurement>>, Vec<Vec<Measurement>>)> {
    let fingerprint = profile.fingerprint();
    let mut rounds: [Vec<Vec<Measurement>>; 2] = [Vec::new(), Vec::new()];
    for round in 0..args.rounds {
        for (side, ((name, commit), worktree)) in sides.iter().zip(worktrees).enumerate() {
            let what = format!(
                "round {}/{}: {name} ({})",
                round + 1,
                args.rounds,
                commit.short()
            );
            eprintln!("benchgate: {what}");
            let criterion_home = scratch.join(format!("criterion-{name}-{}", round + 1));
            let _ = std::fs::remove_dir_all(&criterion_home);
            run_in(
                &worktree.path,
                args.command,
                &criterion_home,
                target_dir,
                &what,
            )?;
            let measurements = criterion::read_tree(&criterion_home, criterion::DEFAULT_BASELINE)
                .with_context(|| what.clone())?;
            let attempt = store
                .last_attempt(repository, commit, &fingerprint, args.kind)
                .await?
                + 1;
            let run = NewRun {
                meta: RunMeta {
                    repository: repository.clone(),
                    commit: (*commit).clone(),
                    branch: None,
                    kind: args.kind,
                    pr_number: None,
                    attempt,
                },
                profile: profile.clone(),
                recorded_at: SystemTime::now(),
                measurements,
            };
            store
                .ingest(&run, false)
                .await
                .with_context(|| format!("{what}: storing the run"))?;
            rounds[side].push(run.measurements);
        }
    }
    let [base, head] = rounds;
    Ok((base, head))
}
