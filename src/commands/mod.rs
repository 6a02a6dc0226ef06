//! The subcommands, one file each: its clap arguments and a `run` returning the exit code
//! (0 ok, 1 a regression found). The arguments several commands share live here.

pub mod ab;
pub mod compare;
pub mod dashboard;
pub mod decide;
pub mod export;
pub mod fingerprint;
pub mod gate;
pub mod import_history;
pub mod ingest;
pub mod override_comment;
pub mod prune;
pub mod publish;
pub mod runs;
pub mod serve;
pub mod show;
pub mod token;
pub mod upload;

use benchgate_collector::{Location, RunKind, Store};
use clap::{Subcommand, ValueEnum};

/// The default store: an embedded SQLite file in the current directory.
pub const DEFAULT_DB: &str = ".benchgate/benchgate.db";

/// `--db`, for every command that reads or writes the store.
#[derive(clap::Args)]
pub struct StoreArgs {
    /// The store: a SQLite file (created when missing), or a PostgreSQL database as
    /// `postgres://user[:password]@host[:port]/database`.
    #[arg(
        long,
        visible_alias = "database-url",
        value_name = "PATH|URL",
        env = "BENCHGATE_DATABASE_URL",
        default_value = DEFAULT_DB,
        value_parser = parse_location,
    )]
    pub db: Location,
}

fn parse_location(text: &str) -> Result<Location, String> {
    if text.is_empty() {
        return Err("empty: name a SQLite file or a postgres:// URL".to_owned());
    }
    Ok(Location::parse(text))
}

impl StoreArgs {
    /// Opens the store, which must already exist (reading commands never create one).
    pub async fn open_existing(&self) -> anyhow::Result<Store> {
        Ok(Store::connect_existing(&self.db).await?)
    }
}

/// Text for people or JSON for programs.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text.
    Text,
    /// JSON.
    Json,
}

/// Why a run was made.
#[derive(Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// On a developer's machine.
    Local,
    /// A push to a branch.
    Push,
    /// A pull request.
    Pr,
    /// A scheduled run.
    Nightly,
}

impl From<KindArg> for RunKind {
    fn from(kind: KindArg) -> Self {
        match kind {
            KindArg::Local => RunKind::Local,
            KindArg::Push => RunKind::Push,
            KindArg::Pr => RunKind::Pr,
            KindArg::Nightly => RunKind::Nightly,
        }
    }
}

/// Every subcommand.
#[derive(Subcommand)]
pub enum Command {
    /// Read a Criterion output tree (or cargo-criterion JSON messages) and store it as one run.
    Ingest(ingest::Args),
    /// List the stored runs.
    Runs(runs::Args),
    /// Print every measurement of a stored run.
    Show(show::Args),
    /// Compare a head against a base and decide: pass, regressed or inconclusive.
    ///
    /// Each side is a Criterion output directory or a stored run id; several on a side are the
    /// rounds of a same-job A/B comparison, paired in the order given.
    Compare(compare::Args),
    /// Judge a stored run against the stored baseline on the same machine.
    ///
    /// The baseline is the base commit's run on the head's fingerprint, else the nearest
    /// first-parent ancestor's within 20 commits, else the verdict is `no-baseline`. The
    /// baseline's history on the fingerprint gives the noise.
    Gate(gate::Args),
    /// Same-job A/B: build base and head, run the bench command alternately (A B A B ...) on
    /// this machine, store every round, and decide with the rounds.
    Ab(ab::Args),
    /// Show a perf-summary.json on GitHub: the sticky PR comment, the `benchgate` check run
    /// (or a commit status), the job summary and the step outputs.
    Publish(publish::Args),
    /// Act on an `issue_comment` event: `/benchgate override <reason>` from a maintainer turns
    /// the pull request's check green for its current head commit.
    Override(override_comment::Args),
    /// Run the collector service: uploads over HTTP, queries, GitHub webhooks.
    Serve(serve::Args),
    /// Manage the upload tokens of `benchgate serve`.
    #[command(subcommand)]
    Token(token::TokenCommand),
    /// Send a run to `benchgate serve`: a stored run (id or `latest`) or a Criterion directory
    /// read as `ingest` reads it. Retries with backoff; safe to repeat.
    Upload(upload::Args),
    /// Import a github-action-benchmark history (`data.js` or `data.json`) as stored runs,
    /// one per entry, so a project's past shows in the dashboards.
    ImportHistory(import_history::Args),
    /// Write the trend dashboard as a static site (for GitHub Pages): an index per repository
    /// and machine, a page per benchmark with its chart and change points.
    Dashboard(dashboard::Args),
    /// Export every measurement as CSV: one row per measurement with its run, commit, machine,
    /// compiler and statistics (ns per iteration).
    Export(export::Args),
    /// Print this machine's hardware profile and its fingerprint.
    Fingerprint(fingerprint::Args),
    /// Remove what a long-lived store no longer needs: pull-request runs, measurements of
    /// benchmarks no longer run, and finished webhook deliveries, older than --older-than.
    ///
    /// The baseline and history of every run since then stay whole; --dry-run reports exactly
    /// what would go.
    Prune(prune::Args),
}

/// Runs a command; the result is the exit code (0 ok, 1 regression).
pub async fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Ingest(args) => ingest::run(args).await,
        Command::Runs(args) => runs::run(args).await,
        Command::Show(args) => show::run(args).await,
        Command::Compare(args) => compare::run(args).await,
        Command::Gate(args) => gate::run(args).await,
        Command::Ab(args) => ab::run(args).await,
        Command::Publish(args) => publish::run(args).await,
        Command::Override(args) => override_comment::run(args).await,
        Command::Serve(args) => serve::run(args).await,
        Command::Token(command) => token::run(command).await,
        Command::Upload(args) => upload::run(args).await,
        Command::ImportHistory(args) => import_history::run(args).await,
        Command::Dashboard(args) => dashboard::run(args).await,
        Command::Export(args) => export::run(args).await,
        Command::Fingerprint(args) => fingerprint::run(args),
        Command::Prune(args) => prune::run(args).await,
    }
}
