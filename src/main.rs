//! The `benchgate` binary: parses arguments, wires the parts, and maps the outcome to an exit
//! code (0 ok, 1 regression found, 2 error). Environment variables and `process::exit` live here.

mod ab;
mod artifact;
mod compare;
mod dashboard;
mod environment;
mod export;
mod gate_command;
mod github;
mod import;
mod override_command;
mod publish;
mod remote;
mod render;
mod serve;
mod side_build;
mod upload;
mod web;

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{Context, bail};
use benchgate_collector::{
    CommitSha, HardwareProfile, IngestOutcome, NewRun, RepositoryName, RunId, RunKind, RunMeta,
    Store, cargo_criterion, criterion,
};
use clap::{Parser, Subcommand, ValueEnum};

/// The default store: an embedded SQLite file in the current directory.
const DEFAULT_DB: &str = ".benchgate/benchgate.db";

/// Continuous benchmarking for Rust: store Criterion runs, gate regressions, publish the verdict.
#[derive(Parser)]
#[command(name = "benchgate", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read a Criterion output tree (or cargo-criterion JSON messages) and store it as one run.
    Ingest(IngestArgs),
    /// List the stored runs.
    Runs {
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print every measurement of a stored run.
    Show {
        /// The run id, as printed by `ingest` or listed by `runs`, or `latest`.
        run: String,
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Compare a head against a base and decide: pass, regressed or inconclusive.
    ///
    /// Each side is a Criterion output directory or a stored run id; several on a side are the
    /// rounds of a same-job A/B comparison, paired in the order given.
    Compare {
        /// The base side (repeat for rounds).
        #[arg(long = "base", required = true, value_name = "DIR|RUN")]
        base: Vec<String>,
        /// The head side (repeat for rounds, paired with --base in order).
        #[arg(long = "head", required = true, value_name = "DIR|RUN")]
        head: Vec<String>,
        /// The SQLite store, for run ids.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// Results directory read inside each Criterion benchmark.
        #[arg(long, default_value = criterion::DEFAULT_BASELINE)]
        baseline: String,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Judge a stored run against the stored baseline on the same machine.
    ///
    /// The baseline is the base commit's run on the head's fingerprint, else the nearest
    /// first-parent ancestor's within 20 commits, else the verdict is `no-baseline`. The
    /// baseline's history on the fingerprint gives the noise.
    Gate {
        /// The head run's id.
        #[arg(long, value_name = "RUN")]
        head: String,
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// The pull request's base commit [default: the head commit's ancestors].
        #[arg(long, value_name = "SHA")]
        base_commit: Option<String>,
        /// Take every run (the head, the baseline, its history) from this `benchgate serve`
        /// instead of the local store; --head is then the service's run id.
        #[arg(long, value_name = "URL")]
        collector: Option<String>,
        /// The repository on the collector, OWNER/NAME [default: as for ingest].
        #[arg(long, requires = "collector")]
        repo: Option<String>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Same-job A/B: build base and head, run the bench command alternately (A B A B ...) on
    /// this machine, store every round, and decide with the rounds.
    Ab {
        /// The base ref (branch, tag or SHA).
        #[arg(long, value_name = "REF")]
        base_ref: String,
        /// The head ref.
        #[arg(long, value_name = "REF")]
        head_ref: String,
        /// Rounds; each runs base once, then head once.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
        rounds: u32,
        /// The SQLite store every round is ingested into.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// The kind the rounds are stored as.
        #[arg(long, value_enum, default_value_t = KindArg::Local)]
        kind: KindArg,
        /// The repository, OWNER/NAME [default: as for ingest].
        #[arg(long)]
        repo: Option<String>,
        /// The cargo target directory both sides of a `cargo bench` build into (dependencies
        /// built once; each side's own crates always compiled afresh). One `ab` at a time per
        /// directory [default: benchgate-ab/target beside the Criterion output].
        #[arg(long, value_name = "DIR")]
        target_dir: Option<PathBuf>,
        /// Go on when base and head build byte-identical executables although their code
        /// differs (a change that compiles to the same machine code).
        #[arg(long)]
        allow_identical_builds: bool,
        #[command(flatten)]
        report: ReportArgs,
        /// The bench command, run in each checkout, e.g. `cargo bench`.
        #[arg(last = true, required = true, value_name = "BENCH COMMAND")]
        command: Vec<String>,
    },
    /// Show a perf-summary.json on GitHub: the sticky PR comment, the `benchgate` check run
    /// (or a commit status), the job summary and the step outputs.
    Publish {
        /// The perf-summary.json to publish.
        #[arg(long, value_name = "FILE", required_unless_present = "from_artifact")]
        summary: Option<PathBuf>,
        /// Fork pull requests, step 1 (no token needed): save the summary and the event's pull
        /// request into DIR, to upload as an artifact, instead of publishing.
        #[arg(
            long,
            value_name = "DIR",
            requires = "summary",
            conflicts_with = "from_artifact"
        )]
        to_artifact: Option<PathBuf>,
        /// Fork pull requests, step 2 (in a `workflow_run` workflow): check the downloaded
        /// artifact in DIR against GitHub, then publish it with this workflow's token.
        #[arg(long, value_name = "DIR", conflicts_with = "summary")]
        from_artifact: Option<PathBuf>,
        /// The repository, OWNER/NAME [env GITHUB_REPOSITORY].
        #[arg(long)]
        repo: Option<String>,
        /// The store, where maintainers' overrides are kept.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// A regression concludes the check `neutral` instead of `failure`.
        #[arg(long)]
        warn_only: bool,
        #[command(flatten)]
        github: publish::GitHubArgs,
    },
    /// Act on an `issue_comment` event: `/benchgate override <reason>` from a maintainer turns
    /// the pull request's check green for its current head commit.
    Override {
        /// The repository, OWNER/NAME [default: the event's].
        #[arg(long)]
        repo: Option<String>,
        /// The store the override is recorded in.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        #[command(flatten)]
        github: publish::GitHubArgs,
    },
    /// Run the collector service: uploads over HTTP, queries, GitHub webhooks.
    Serve {
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// Where to listen (port 0 picks a free port; the address is printed).
        #[arg(long, default_value = "127.0.0.1:8080")]
        bind: std::net::SocketAddr,
        /// The largest upload, in bytes, compressed or not.
        #[arg(long, default_value_t = serve::DEFAULT_BODY_LIMIT)]
        body_limit: usize,
        /// The environment variable holding the GitHub webhook secret.
        #[arg(long, default_value = "BENCHGATE_WEBHOOK_SECRET", value_name = "NAME")]
        webhook_secret_env: String,
        /// GitHub's API URL, for the work webhooks ask for [env GITHUB_API_URL]; the token is
        /// read from GITHUB_TOKEN.
        #[arg(long, value_name = "URL")]
        github_api_url: Option<String>,
    },
    /// Manage the upload tokens of `benchgate serve`.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Send a run to `benchgate serve`: a stored run (id or `latest`) or a Criterion directory
    /// read as `ingest` reads it. Retries with backoff; safe to repeat.
    Upload {
        /// The service, e.g. https://bench.example.com.
        #[arg(long, value_name = "URL")]
        collector: String,
        /// The repository's upload token [env BENCHGATE_TOKEN].
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
        #[command(flatten)]
        run: IngestArgs,
    },
    /// Import a github-action-benchmark history (`data.js` or `data.json`) as stored runs,
    /// one per entry, so a project's past shows in the dashboards.
    ImportHistory {
        /// The `data.js` (from the `gh-pages` branch, e.g. `dev/bench/data.js`) or `data.json`.
        path: PathBuf,
        /// The repository, OWNER/NAME.
        #[arg(long)]
        repo: String,
        /// The branch the history was measured on.
        #[arg(long, default_value = "main")]
        branch: String,
        /// The machine's profile from `benchgate fingerprint --format json` [default: an
        /// `imported` profile of its own, so imported runs are never compared with new ones].
        #[arg(long, value_name = "FILE")]
        fingerprint: Option<PathBuf>,
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
    },
    /// Write the trend dashboard as a static site (for GitHub Pages): an index per repository
    /// and machine, a page per benchmark with its chart and change points.
    Dashboard {
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// The directory to write the site into.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The policy whose time budgets on medians are drawn on the charts [default:
        /// benchgate.toml when present].
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Export every measurement as CSV: one row per measurement with its run, commit, machine,
    /// compiler and statistics (ns per iteration).
    Export {
        /// The export format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
        format: ExportFormat,
        /// Only this repository, OWNER/NAME.
        #[arg(long)]
        repo: Option<String>,
        /// Only runs recorded on or after this date (2026-01-31) or time (RFC 3339).
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// Write here instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
    },
    /// Print this machine's hardware profile and its fingerprint.
    Fingerprint {
        /// Output format (`json` can be passed to `ingest --fingerprint`).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token for a repository; it is printed once and only its hash is stored.
    Create {
        /// The repository, OWNER/NAME.
        #[arg(long)]
        repo: String,
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
    },
    /// Revoke a token by its id (from `token list`).
    Revoke {
        /// The token's id.
        id: i64,
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
    },
    /// List tokens (ids, repositories, dates; never the tokens).
    List {
        /// The SQLite store.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
    },
}

#[derive(clap::Args)]
struct IngestArgs {
    /// The Criterion output directory [default: the cargo target directory's `criterion/`].
    path: Option<PathBuf>,
    /// The SQLite store.
    #[arg(long, default_value = DEFAULT_DB)]
    db: PathBuf,
    /// The repository, OWNER/NAME [default: $GITHUB_REPOSITORY, else the `origin` remote, else
    /// local/<directory>].
    #[arg(long)]
    repo: Option<String>,
    /// The full 40-hex commit SHA measured [default: `git rev-parse HEAD`].
    #[arg(long)]
    commit: Option<String>,
    /// The branch measured [default: $GITHUB_HEAD_REF, $GITHUB_REF_NAME, else the checked-out
    /// branch].
    #[arg(long)]
    branch: Option<String>,
    /// Why the run was made.
    #[arg(long, value_enum, default_value_t = KindArg::Local)]
    kind: KindArg,
    /// The pull request number, for `--kind pr`.
    #[arg(long)]
    pr: Option<u64>,
    /// The attempt under the same (repository, commit, fingerprint, kind); CI re-runs count up.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    attempt: u32,
    /// Read this saved baseline (`--save-baseline NAME`) instead of the latest results (`new`).
    #[arg(long, default_value = criterion::DEFAULT_BASELINE)]
    baseline: String,
    /// Read `cargo criterion --message-format=json` output from FILE, or `-` for standard input.
    #[arg(long, value_name = "FILE|-", conflicts_with = "path")]
    cargo_criterion_json: Option<PathBuf>,
    /// The machine's profile from `benchgate fingerprint --format json` [default: this machine].
    #[arg(long, value_name = "FILE")]
    fingerprint: Option<PathBuf>,
    /// Overwrite a stored run with the same key but different results.
    #[arg(long)]
    replace: bool,
    /// Custom metrics to store beside Criterion's, from a JSON file in Bencher's metric format
    /// (`{"bench": {"measure": {"value", "lower_value", "upper_value" | "samples", "unit",
    /// "direction"}}}`); repeatable. Without Criterion output, the run holds the metrics alone.
    #[arg(long, value_name = "FILE")]
    metrics: Vec<PathBuf>,
}

/// Options shared by the commands that decide.
#[derive(clap::Args)]
struct ReportArgs {
    /// The policy file [default: benchgate.toml when present].
    #[arg(long)]
    config: Option<PathBuf>,
    /// What to print.
    #[arg(long, value_enum, default_value_t = compare::ReportFormat::Text)]
    format: compare::ReportFormat,
    /// Also write perf-summary.md here.
    #[arg(long, value_name = "FILE")]
    out_md: Option<PathBuf>,
    /// Also write perf-summary.json here.
    #[arg(long, value_name = "FILE")]
    out_json: Option<PathBuf>,
    /// Report regressions but exit 0.
    #[arg(long)]
    warn_only: bool,
    /// Also publish to GitHub (as `benchgate publish`): a check run `in_progress` from the
    /// start, then the verdict, the sticky comment, the job summary and the step outputs.
    #[arg(long)]
    publish: bool,
    #[command(flatten)]
    github: publish::GitHubArgs,
}

impl ReportArgs {
    fn outputs(&self) -> compare::Outputs {
        compare::Outputs {
            format: self.format,
            out_md: self.out_md.clone(),
            out_json: self.out_json.clone().or_else(|| {
                // Publishing reads the summary back, and `report-path` points at it.
                self.publish.then(|| PathBuf::from("perf-summary.json"))
            }),
            warn_only: self.warn_only,
        }
    }
}

/// Runs a deciding command; with `--publish`, its check run is `in_progress` while it runs and
/// carries the verdict (or the error: a gate that could not decide never passes silently).
async fn decide_and_publish(
    report: &ReportArgs,
    repository: Option<&str>,
    db: &Path,
    head_commit: Option<&str>,
    decide: impl std::future::Future<Output = anyhow::Result<u8>>,
) -> anyhow::Result<u8> {
    if !report.publish {
        return decide.await;
    }
    let target = publish::Target::resolve(&report.github, repository, head_commit)?;
    target.github_client()?;
    let started = publish::start_check(&target).await?;
    let code = match decide.await {
        Ok(code) => code,
        Err(error) => {
            publish::fail_check(&target, started, &format!("{error:#}")).await;
            return Err(error);
        }
    };
    let outputs = report.outputs();
    let summary = outputs
        .out_json
        .as_deref()
        .unwrap_or(Path::new("perf-summary.json"));
    publish::publish(
        summary,
        repository,
        &report.github,
        db,
        report.warn_only,
        Some(started),
    )
    .await?;
    Ok(code)
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    Csv,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum KindArg {
    Local,
    Push,
    Pr,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("benchgate: error: cannot start the async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("benchgate: error: {}", one_line(&format!("{error:#}")));
            ExitCode::from(2)
        }
    }
}

/// Whether an error is a closed standard output (`| head`), anywhere in its chain.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || cause.to_string().contains("Broken pipe")
    })
}

/// Errors are one line, whatever a lower layer put in them.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs a command; the result is the exit code (0 ok, 1 regression).
async fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Ingest(args) => ingest(args).await.map(|()| 0),
        Command::Ab {
            base_ref,
            head_ref,
            rounds,
            db,
            kind,
            repo,
            target_dir,
            allow_identical_builds,
            report,
            command,
        } => {
            let args = ab::AbArgs {
                target_dir: target_dir.as_deref(),
                allow_identical_builds,
                base_ref: &base_ref,
                head_ref: &head_ref,
                rounds: rounds as usize,
                command: &command,
                db: &db,
                kind: kind.into(),
                repo: repo.as_deref(),
                config: report.config.as_deref(),
            };
            decide_and_publish(
                &report,
                repo.as_deref(),
                &db,
                None,
                ab::ab(&args, &report.outputs()),
            )
            .await
        }
        Command::Gate {
            head,
            db,
            base_commit,
            collector,
            repo,
            report,
        } => {
            let collector = match collector {
                Some(url) => {
                    let repository = match &repo {
                        Some(name) => RepositoryName::parse(name).context("--repo")?,
                        None => environment::repository()?,
                    };
                    Some((url, repository))
                }
                None => None,
            };
            decide_and_publish(
                &report,
                None,
                &db,
                None,
                gate_command::gate(
                    &head,
                    &db,
                    collector
                        .as_ref()
                        .map(|(url, repo)| (url.as_str(), repo.clone())),
                    base_commit.as_deref(),
                    report.config.as_deref(),
                    &report.outputs(),
                ),
            )
            .await
        }
        Command::Compare {
            base,
            head,
            db,
            baseline,
            report,
        } => {
            decide_and_publish(
                &report,
                None,
                &db,
                None,
                compare::compare(
                    &base,
                    &head,
                    &db,
                    &baseline,
                    report.config.as_deref(),
                    &report.outputs(),
                ),
            )
            .await
        }
        Command::Publish {
            summary,
            to_artifact,
            from_artifact,
            repo,
            db,
            warn_only,
            github,
        } => {
            match (summary, to_artifact, from_artifact) {
                (Some(summary), Some(dir), _) => artifact::write(&summary, &dir, &github)?,
                (_, _, Some(dir)) => {
                    publish::publish_from_artifact(&dir, repo.as_deref(), &github, &db, warn_only)
                        .await?
                }
                (Some(summary), None, None) => {
                    publish::publish(&summary, repo.as_deref(), &github, &db, warn_only, None)
                        .await?
                }
                (None, _, None) => bail!("pass --summary FILE or --from-artifact DIR"),
            }
            Ok(0)
        }
        Command::Serve {
            db,
            bind,
            body_limit,
            webhook_secret_env,
            github_api_url,
        } => {
            let config = serve::Config {
                body_limit,
                webhook_secret: std::env::var(&webhook_secret_env)
                    .ok()
                    .filter(|s| !s.is_empty())
                    .map(String::into_bytes),
                github: publish::GitHubArgs {
                    api_url: github_api_url,
                    ..publish::GitHubArgs::default()
                },
            };
            serve::serve(db, bind, config).await.map(|()| 0)
        }
        Command::Token(command) => token(command).await.map(|()| 0),
        Command::Export {
            format: ExportFormat::Csv,
            repo,
            since,
            out,
            db,
        } => {
            let repository = repo
                .as_deref()
                .map(RepositoryName::parse)
                .transpose()
                .context("--repo")?;
            let since = since.as_deref().map(export::parse_since).transpose()?;
            let rows = match &out {
                Some(path) => {
                    let file = std::fs::File::create(path)
                        .with_context(|| format!("--out {}: cannot create", path.display()))?;
                    let mut writer = std::io::BufWriter::new(file);
                    let rows = export::export(&db, repository.as_ref(), since, &mut writer).await?;
                    std::io::Write::flush(&mut writer)?;
                    rows
                }
                None => {
                    let stdout = std::io::stdout();
                    let mut writer = std::io::BufWriter::new(stdout.lock());
                    let written = export::export(&db, repository.as_ref(), since, &mut writer)
                        .await
                        .and_then(|rows| Ok(std::io::Write::flush(&mut writer).map(|()| rows)?));
                    match written {
                        Ok(rows) => rows,
                        // `benchgate export | head`: the reader had enough; not an error.
                        Err(e) if is_broken_pipe(&e) => return Ok(0),
                        Err(e) => return Err(e),
                    }
                }
            };
            eprintln!("benchgate: exported {rows} measurements");
            Ok(0)
        }
        Command::Dashboard { db, out, config } => {
            let policy = compare::load_policy(config.as_deref())?;
            let pages = dashboard::write(&db, &out, &policy.budgets).await?;
            eprintln!(
                "benchgate: wrote {pages} pages to {}; open {}",
                out.display(),
                out.join("index.html").display()
            );
            Ok(0)
        }
        Command::ImportHistory {
            path,
            repo,
            branch,
            fingerprint,
            db,
        } => {
            let repository = RepositoryName::parse(&repo).context("--repo")?;
            let profile = match &fingerprint {
                Some(file) => read_profile_file(file)?,
                None => import::imported_profile(),
            };
            let runs = import::runs(&path, &repository, &branch, &profile)?;
            let store = Store::open(&db).await?;
            let mut created = 0;
            let mut outcome = Ok(());
            for run in &runs {
                match store.ingest(run, false).await {
                    Ok(IngestOutcome::Created(_)) => created += 1,
                    Ok(_) => {}
                    Err(e) => {
                        outcome = Err(anyhow::Error::from(e).context(format!(
                            "{}: the entry of commit {}",
                            path.display(),
                            run.meta.commit
                        )));
                        break;
                    }
                }
            }
            store.close().await;
            outcome?;
            eprintln!(
                "benchgate: imported {} runs of {repository} from {} ({created} new), fingerprint {}",
                runs.len(),
                path.display(),
                profile.fingerprint().short()
            );
            Ok(0)
        }
        Command::Upload {
            collector,
            token,
            run,
        } => {
            let token = token
                .or_else(|| {
                    std::env::var("BENCHGATE_TOKEN")
                        .ok()
                        .filter(|t| !t.is_empty())
                })
                .context("no token: pass --token or set BENCHGATE_TOKEN")?;
            let new_run = match stored_run_ref(&run) {
                Some(reference) => {
                    let store = open_existing_store(&run.db).await?;
                    let id = match reference {
                        Some(id) => id,
                        None => store
                            .list_runs()
                            .await?
                            .last()
                            .map(|r| r.id)
                            .context("latest: the store has no runs")?,
                    };
                    let stored = store.get_run(id).await;
                    store.close().await;
                    let stored = stored?;
                    NewRun {
                        meta: stored.summary.meta,
                        profile: stored.profile,
                        recorded_at: stored.summary.recorded_at,
                        measurements: stored.measurements,
                    }
                }
                None => read_new_run(&run)?,
            };
            let uploaded = upload::upload(&collector, &token, &new_run).await?;
            eprintln!(
                "benchgate: uploaded {} benchmarks of {}@{}: {} as run {} on {collector}",
                new_run.measurements.len(),
                new_run.meta.repository,
                new_run.meta.commit.short(),
                uploaded.status,
                uploaded.id
            );
            println!("{}", uploaded.id);
            Ok(0)
        }
        Command::Override { repo, db, github } => {
            let event_path = github
                .event_path
                .clone()
                .or_else(|| std::env::var_os("GITHUB_EVENT_PATH").map(PathBuf::from))
                .context("no event: pass --event-path or set GITHUB_EVENT_PATH")?;
            let outcome =
                override_command::handle(&event_path, repo.as_deref(), &github, &db).await?;
            match outcome {
                override_command::Outcome::Ignored(why) => eprintln!("benchgate: ignored: {why}"),
                override_command::Outcome::Refused(why) => eprintln!("benchgate: refused: {why}"),
                override_command::Outcome::Overridden { head_sha } => {
                    eprintln!("benchgate: overridden: the check on {head_sha} is now success")
                }
            }
            Ok(0)
        }
        Command::Runs { db, format } => {
            let store = open_existing_store(&db).await?;
            let runs = store.list_runs().await?;
            store.close().await;
            print!("{}", render::runs(&runs, format == Format::Json)?);
            Ok(0)
        }
        Command::Show { run, db, format } => {
            let store = open_existing_store(&db).await?;
            let stored = match run.as_str() {
                "latest" => match store.list_runs().await?.last() {
                    Some(latest) => store.get_run(latest.id).await,
                    None => bail!(
                        "{}: no runs stored yet; add one with `benchgate ingest`",
                        db.display()
                    ),
                },
                id => store.get_run(RunId::parse(id)?).await,
            };
            store.close().await;
            print!("{}", render::run(&stored?, format == Format::Json)?);
            Ok(0)
        }
        Command::Fingerprint { format } => {
            let profile = environment::detect_profile()?;
            print!("{}", render::profile(&profile, format == Format::Json)?);
            Ok(0)
        }
    }
}

/// The run `ingest` (or `upload`) reads: everything checked, nothing stored yet.
fn read_new_run(args: &IngestArgs) -> anyhow::Result<NewRun> {
    let commit = match &args.commit {
        Some(sha) => CommitSha::parse(sha).context("--commit")?,
        None => environment::head_commit()?,
    };
    let repository = match &args.repo {
        Some(name) => RepositoryName::parse(name).context("--repo")?,
        None => environment::repository()?,
    };
    if args.pr == Some(0) {
        bail!("--pr: a pull request number is positive");
    }
    let branch = args.branch.clone().or_else(environment::branch);

    let measurements = match &args.cargo_criterion_json {
        Some(source) if source.as_os_str() == "-" => {
            cargo_criterion::read_messages(std::io::stdin().lock(), Path::new("-"))?
        }
        Some(source) => {
            let file = std::fs::File::open(source)
                .with_context(|| format!("{}: cannot open", source.display()))?;
            cargo_criterion::read_messages(BufReader::new(file), source)?
        }
        None => {
            let root = match &args.path {
                Some(path) => path.clone(),
                None => environment::criterion_home()?,
            };
            match criterion::read_tree(&root, &args.baseline) {
                // With custom metrics and no directory named, Criterion output is optional.
                Err(
                    benchgate_collector::Error::MissingDirectory { .. }
                    | benchgate_collector::Error::EmptyTree { .. },
                ) if !args.metrics.is_empty() && args.path.is_none() => Vec::new(),
                other => other?,
            }
        }
    };
    let mut measurements = measurements;
    for file in &args.metrics {
        for metric in benchgate_collector::metrics::read_file(file)? {
            if measurements.iter().any(|m| m.id == metric.id) {
                bail!(
                    "{}: benchmark {:?} is measured twice (in Criterion's output or another metrics file)",
                    file.display(),
                    metric.id.as_str()
                );
            }
            measurements.push(metric);
        }
    }
    measurements.sort_by(|a, b| a.id.cmp(&b.id));

    let profile = match &args.fingerprint {
        Some(path) => read_profile_file(path)?,
        None => environment::detect_profile()?,
    };

    Ok(NewRun {
        meta: RunMeta {
            repository,
            commit,
            branch,
            kind: args.kind.into(),
            pr_number: args.pr,
            attempt: args.attempt,
        },
        profile,
        recorded_at: SystemTime::now(),
        measurements,
    })
}

async fn ingest(args: IngestArgs) -> anyhow::Result<()> {
    // Everything is read and checked before the store is opened: bad input leaves it untouched.
    let run = read_new_run(&args)?;
    let store = Store::open(&args.db).await?;
    let outcome = store.ingest(&run, args.replace).await;
    store.close().await;
    let outcome = outcome?;
    let what = match outcome {
        IngestOutcome::Created(_) => "stored".to_owned(),
        IngestOutcome::Unchanged(_) => "already stored, unchanged:".to_owned(),
        IngestOutcome::Replaced { previous, .. } => format!("replaced run {previous} with"),
    };
    eprintln!(
        "benchgate: {what} run {} — {} benchmarks of {}@{} ({}, fingerprint {}) in {}",
        outcome.run_id(),
        run.measurements.len(),
        run.meta.repository,
        run.meta.commit.short(),
        run.meta.kind,
        run.profile.fingerprint().short(),
        args.db.display()
    );
    println!("{}", outcome.run_id());
    Ok(())
}

/// `upload`'s argument as a stored run: `Some(Some(id))`, `Some(None)` for `latest`, `None`
/// for a Criterion directory (or nothing: the default tree).
fn stored_run_ref(args: &IngestArgs) -> Option<Option<RunId>> {
    let path = args.path.as_ref()?;
    if path.is_dir() {
        return None;
    }
    match path.to_str()? {
        "latest" => Some(None),
        text => RunId::parse(text).ok().map(Some),
    }
}

/// `benchgate token ...`.
async fn token(command: TokenCommand) -> anyhow::Result<()> {
    match command {
        TokenCommand::Create { repo, db } => {
            let repository = RepositoryName::parse(&repo).context("--repo")?;
            let mut secret = [0u8; 32];
            getrandom::fill(&mut secret).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
            let token: String = std::iter::once("bgt_".to_owned())
                .chain(secret.iter().map(|b| format!("{b:02x}")))
                .collect();
            let store = Store::open(&db).await?;
            let id = store
                .create_token(&repository, &serve::token_hash(&token))
                .await;
            store.close().await;
            eprintln!(
                "benchgate: token {} for {repository}; it is shown once, only its hash is kept",
                id?
            );
            println!("{token}");
        }
        TokenCommand::Revoke { id, db } => {
            let store = open_existing_store(&db).await?;
            let revoked = store.revoke_token(id).await;
            store.close().await;
            if !revoked? {
                bail!("token {id}: no such live token (see `benchgate token list`)");
            }
            eprintln!("benchgate: token {id} revoked");
        }
        TokenCommand::List { db } => {
            let store = open_existing_store(&db).await?;
            let tokens = store.list_tokens().await;
            store.close().await;
            for (id, repository, created, revoked) in tokens? {
                println!(
                    "{id}\t{repository}\tcreated {}\t{}",
                    humantime::format_rfc3339_seconds(created),
                    revoked.map_or("live".to_owned(), |t| format!(
                        "revoked {}",
                        humantime::format_rfc3339_seconds(t)
                    ))
                );
            }
        }
    }
    Ok(())
}

/// Reads a profile written by `benchgate fingerprint --format json`, checking its hash.
fn read_profile_file(path: &Path) -> anyhow::Result<HardwareProfile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let file: render::ProfileFile = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a `benchgate fingerprint --format json` file",
            path.display()
        )
    })?;
    let computed = file.profile.fingerprint();
    if computed.as_str() != file.fingerprint {
        bail!(
            "{}: field `fingerprint` is {} but the profile hashes to {computed}; the file was edited or comes from another benchgate version",
            path.display(),
            file.fingerprint
        );
    }
    Ok(file.profile)
}

/// Opens a store that must already exist (reading commands never create one).
pub(crate) async fn open_existing_store(db: &Path) -> anyhow::Result<Store> {
    if !db.is_file() {
        bail!(
            "{}: no such store; run `benchgate ingest` first or pass --db",
            db.display()
        );
    }
    Ok(Store::open(db).await?)
}
