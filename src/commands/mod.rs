//! The subcommands, one file each: its clap arguments and a `run` returning the exit code
//! (0 ok, 1 a regression found). The arguments several commands share live here.

pub mod ab;
pub mod bisect;
pub mod compare;
pub mod dashboard;
pub mod explain;
pub mod export;
pub mod fingerprint;
pub mod gate;
pub mod import_history;
pub mod ingest;
pub mod nightly;
pub mod override_comment;
pub mod prune;
pub mod publish;
pub mod request_run;
pub mod runs;
pub mod serve;
pub mod show;
pub mod token;
pub mod upload;

use std::path::PathBuf;

use benchgate_collector::{Location, RunKind, Store};
use clap::{Subcommand, ValueEnum};

/// The default store: an embedded SQLite file in the current directory.
pub const DEFAULT_DB: &str = ".benchgate/benchgate.db";

/// The flags `ab`, `bisect` and `nightly` share: where runs are stored, for which repository,
/// where the compared commits build, and how many rounds a comparison may take.
#[derive(clap::Args)]
pub struct JobArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The repository, OWNER/NAME [default: as for ingest].
    #[arg(long)]
    pub repo: Option<String>,
    /// The cargo target directory the compared commits build into: dependencies built once,
    /// each commit's own crates always compiled afresh; one job at a time per directory
    /// [default: benchgate-ab/target or benchgate-bisect/target beside the Criterion output].
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// The most rounds adaptive A/B runs: for `ab` a comparison, for `bisect` and `nightly`
    /// one probe (from 2 rounds, each after the second of the undecided benchmarks only).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub max_rounds: u32,
}

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

pub(crate) fn parse_location(text: &str) -> Result<Location, String> {
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
    #[command(after_help = "Examples:
  cargo bench && benchgate ingest                  # target/criterion, this commit, kind local
  benchgate ingest --kind nightly --db postgres://bench@db/benchgate
  benchgate ingest --kind nightly -- cargo bench --workspace   # refused if two executables name one benchmark
Exit: 0 stored (prints the run id); 2 an error naming the file and field (nothing stored).")]
    Ingest(ingest::Args),
    /// List the stored runs.
    #[command(after_help = "Examples:
  benchgate runs --kind nightly --limit 20
  benchgate runs --format json | jq '.[-1].id'
Exit: 0; 2 an error.")]
    Runs(runs::Args),
    /// Print every measurement of a stored run.
    #[command(after_help = "Examples:
  benchgate show latest
  benchgate show 42 --format json
Exit: 0; 2 an error (no such run).")]
    Show(show::Args),
    /// Compare a head against a base and decide: pass, regressed or inconclusive.
    ///
    /// Each side is a Criterion output directory or a stored run id; several on a side are the
    /// rounds of a same-job A/B comparison, paired in the order given.
    #[command(after_help = "Examples:
  benchgate compare --base main-criterion/ --head target/criterion/
  benchgate compare --base 1 --head 2 --base 3 --head 4 --out-md perf-summary.md
Exit: 0 pass, inconclusive or no baseline (or anything under --warn-only); 1 a regression or a
missed budget; 2 an error.")]
    Compare(compare::Args),
    /// Where a benchmark's instructions went between two runs, by function or crate.
    ///
    /// Each side is a Callgrind output file, or the directory gungraun keeps a benchmark's
    /// `callgrind.*.out` files in (its parts and threads are summed), or a stored run's
    /// profile of --benchmark (`ingest` keeps each count's 50 most expensive functions).
    /// Functions are ranked by the change of their own (exclusive) instructions; the rows and
    /// "everything else" add up to the change of the total.
    #[command(after_help = "Examples:
  benchgate explain --base base/target/gungraun/app/instructions/aead/seal.x \\
                    --head target/gungraun/app/instructions/aead/seal.x
  benchgate explain --base a.out --head b.out --top 10 --format json
  benchgate explain --base a.out --head b.out --by crate
  benchgate explain --base-run 12 --head-run 14 --benchmark aead/seal/chacha20_16_kib --top 10
Exit: 0; 2 an error naming the file, line or run at fault.")]
    Explain(explain::Args),
    /// Judge a stored run against the stored baseline on the same machine.
    ///
    /// The baseline is the base commit's run on the head's fingerprint, else the nearest
    /// first-parent ancestor's within 20 commits, else the verdict is `no-baseline`. The
    /// baseline's history on the fingerprint gives the noise. With the bench command after
    /// `--`, the benchmarks left inconclusive run again on the head (up to --max-runs).
    #[command(after_help = "Examples:
  benchgate gate --head \"$(benchgate ingest --kind pr)\" --base-commit \"$BASE_SHA\" --publish
  benchgate gate --head 42 --collector https://bench.example.com --out-json perf-summary.json
  benchgate gate --head 42 --max-runs 3 --budget 10m -- cargo bench --workspace
Exit: 0 pass, inconclusive or no baseline (or anything under --warn-only); 1 a regression or a
missed budget; 2 an error.")]
    Gate(gate::Args),
    /// Same-job A/B: build base and head, run the bench command in turn (A B, B A, ...) on this
    /// machine, store every round, and decide with the rounds.
    #[command(after_help = "Examples:
  benchgate ab --base-ref origin/main --head-ref HEAD -- cargo bench --workspace
  benchgate ab --base-ref main~1 --head-ref main --max-rounds 6 --budget 10m -- cargo bench
Exit: 0 pass or inconclusive (or anything under --warn-only); 1 a regression or a missed budget;
2 an error (a build or bench command that failed, a bad ref).")]
    Ab(ab::Args),
    /// Find the commit that made a step: bisect the first-parent commits between a good and a
    /// bad one, each probe a same-job A/B comparison with adaptive rounds.
    #[command(after_help = "Examples:
  benchgate bisect --good v1.2.0 --bad main --bench parse/json -- cargo bench --bench parse
  benchgate bisect --good 3f2a1c9 --bad 9be04d2 --budget 30m --format json -- cargo bench
Exit: 0 bisected (a culprit, several commits, no culprit, or a range left inconclusive: the
report says which); 2 an error (a bad ref, a build or bench command that failed).")]
    Bisect(bisect::Args),
    /// After a nightly run: bisect each recent slowdown beyond its limit on this machine's
    /// trend (within --budget) and open or update one GitHub issue per step.
    #[command(after_help = "Examples:
  benchgate nightly --budget 30m -- cargo bench --workspace     # GITHUB_TOKEN set: issues
  benchgate nightly --dashboard-url https://acme.github.io/rocket -- cargo bench
Exit: 0 done (each step bisected, left for the next night when the budget ran out, or already
bisected); 2 an error, or a step that could not be bisected (the others still are).")]
    Nightly(nightly::Args),
    /// Show a perf-summary.json on GitHub: the sticky PR comment, the `benchgate` check run
    /// (or a commit status), the job summary and the step outputs.
    #[command(after_help = "Examples:
  benchgate publish --summary perf-summary.json            # in a workflow: GITHUB_* variables
  benchgate publish --summary perf-summary.json --to-artifact benchgate-artifact
  benchgate publish --from-artifact benchgate-artifact     # in a workflow_run workflow
Exit: 0 published (the check carries the verdict); 2 an error (nothing half-published is left
in progress: a started check is concluded as failed).")]
    Publish(publish::Args),
    /// Act on an `issue_comment` event: `/benchgate override <reason>` from a maintainer turns
    /// the pull request's check green for its current head commit.
    #[command(after_help = "Examples:
  benchgate override                                       # in an issue_comment workflow
  benchgate override --event-path event.json --repo acme/rocket
Exit: 0 whatever became of the comment (ignored, refused with a reply, or overridden); 2 an
error.")]
    Override(override_comment::Args),
    /// Act on a `/benchgate run` comment or a `benchgate-run` label on a pull request: if a
    /// writer asked, name the head and base to benchmark as step outputs (`run`, `pr`,
    /// `head-sha`, `base-sha`, `base-ref`, `requested-by`) for the workflow's next jobs.
    #[command(after_help = "Examples:
  benchgate request-run                                    # in perf-run.yml's first job
  benchgate request-run --event-path event.json --label perf
Exit: 0 whatever became of the request (the `run` output says); 2 an error.")]
    RequestRun(request_run::Args),
    /// Run the collector service: uploads over HTTP, queries, GitHub webhooks.
    #[command(after_help = "Examples:
  benchgate serve --db /var/lib/benchgate/benchgate.db --bind 0.0.0.0:8080
  BENCHGATE_DATABASE_URL=postgres://bench@db/benchgate benchgate serve --log-format json
Exit: 0 after SIGTERM or Ctrl-C (requests in flight finished); 2 an error at start.")]
    Serve(serve::Args),
    /// Manage the upload tokens of `benchgate serve`.
    #[command(
        subcommand,
        after_help = "Examples:\n  benchgate token create --repo acme/rocket    # prints the token once\n  benchgate token list\n  benchgate token revoke 3\nExit: 0; 2 an error."
    )]
    Token(token::TokenCommand),
    /// Send a run to `benchgate serve`: a stored run (id or `latest`) or a Criterion directory
    /// read as `ingest` reads it. Retries with backoff; safe to repeat.
    #[command(after_help = "Examples:
  benchgate upload latest --collector https://bench.example.com    # BENCHGATE_TOKEN set
  benchgate upload target/criterion --collector https://bench.example.com --kind pr
Exit: 0 stored (or already there); 2 an error (after the retries).")]
    Upload(upload::Args),
    /// Import a github-action-benchmark history (`data.js` or `data.json`) as stored runs,
    /// one per entry, so a project's past shows in the dashboards.
    #[command(after_help = "Examples:
  benchgate import-history gh-pages/dev/bench/data.js --repo acme/rocket
Exit: 0 imported (every run, in one transaction); 2 an error naming the entry and field
(nothing imported).")]
    ImportHistory(import_history::Args),
    /// Write the trend dashboard as a static site (for GitHub Pages): an index per repository
    /// and machine, a page per benchmark with its chart and change points.
    #[command(after_help = "Examples:
  benchgate dashboard --out site/ && open site/index.html
Exit: 0; 2 an error.")]
    Dashboard(dashboard::Args),
    /// Export every measurement as CSV: one row per measurement with its run, commit, machine,
    /// compiler and statistics (ns per iteration).
    #[command(after_help = "Examples:
  benchgate export --format csv --since 2026-01-01 > measurements.csv
  benchgate export --format jsonl --repo acme/rocket | jq -c 'select(.benchmark == \"parse/json\")'
Exit: 0; 2 an error.")]
    Export(export::Args),
    /// Print this machine's hardware profile and its fingerprint.
    #[command(after_help = "Examples:
  benchgate fingerprint
  benchgate fingerprint --format json > profile.json && benchgate ingest --fingerprint profile.json
  benchgate fingerprint --db .benchgate/benchgate.db       # and how many stored runs match
Exit: 0; 2 an error.")]
    Fingerprint(fingerprint::Args),
    /// Remove what a long-lived store no longer needs: pull-request runs, measurements of
    /// benchmarks no longer run, and finished webhook deliveries, older than --older-than.
    ///
    /// The baseline and history of every run since then stay whole; --dry-run reports exactly
    /// what would go.
    #[command(after_help = "Examples:
  benchgate prune --older-than 90d --dry-run
  benchgate prune --older-than 30d --only pr-runs,deliveries --format json
Exit: 0; 2 an error (nothing removed).")]
    Prune(prune::Args),
}

/// Runs a command; the result is the exit code (0 ok, 1 regression).
pub async fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Ingest(args) => ingest::run(args).await,
        Command::Runs(args) => runs::run(args).await,
        Command::Show(args) => show::run(args).await,
        Command::Compare(args) => compare::run(args).await,
        Command::Explain(args) => explain::run(args).await,
        Command::Gate(args) => gate::run(args).await,
        Command::Ab(args) => ab::run(args).await,
        Command::Bisect(args) => bisect::run(args).await,
        Command::Nightly(args) => nightly::run(args).await,
        Command::Publish(args) => publish::run(args).await,
        Command::Override(args) => override_comment::run(args).await,
        Command::RequestRun(args) => request_run::run(args).await,
        Command::Serve(args) => serve::run(args).await,
        Command::Token(command) => token::run(command).await,
        Command::Upload(args) => upload::run(args).await,
        Command::ImportHistory(args) => import_history::run(args).await,
        Command::Dashboard(args) => dashboard::run(args).await,
        Command::Export(args) => export::run(args).await,
        Command::Fingerprint(args) => fingerprint::run(args).await,
        Command::Prune(args) => prune::run(args).await,
    }
}

/// A `--repo OWNER/NAME` filter, parsed.
pub fn repo_filter(
    repo: Option<&str>,
) -> anyhow::Result<Option<benchgate_collector::RepositoryName>> {
    repo.map(benchgate_collector::RepositoryName::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--repo: {e}"))
}
