//! `benchgate upload`: a stored run, or a Criterion directory read as `ingest` reads it, sent to
//! `benchgate serve`.

use anyhow::Context as _;
use benchgate_collector::{NewRun, RunId};

use super::ingest::{self, read_new_run};

/// `benchgate upload`.
#[derive(clap::Args)]
pub struct Args {
    /// The service, e.g. https://bench.example.com.
    #[arg(long, value_name = "URL")]
    collector: String,
    /// The repository's upload token [env BENCHGATE_TOKEN].
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    #[command(flatten)]
    run: ingest::Args,
}

/// Uploads the run; prints the service's run id.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let Args {
        collector,
        token,
        run,
    } = args;
    let token = token
        .or_else(|| crate::environment::non_empty_var("BENCHGATE_TOKEN"))
        .context("no token: pass --token or set BENCHGATE_TOKEN")?;
    let new_run = match stored_run_ref(&run) {
        Some(_) if !run.command.is_empty() => anyhow::bail!(
            "a bench command after `--` is checked before a Criterion tree is read; a stored run was read as it was ingested"
        ),
        Some(reference) => {
            let store = run.store.open_existing().await?;
            let id = match reference {
                Some(id) => id,
                None => store
                    .latest_run()
                    .await?
                    .map(|r| r.id)
                    .context("latest: the store has no runs")?,
            };
            let stored = store.get_run(id).await;
            let function_costs = store.function_costs(id).await;
            store.close().await;
            let stored = stored?;
            NewRun {
                meta: stored.summary.meta,
                profile: stored.profile,
                recorded_at: stored.summary.recorded_at,
                measurements: stored.measurements,
                function_costs: function_costs?,
            }
        }
        None => read_new_run(&run)?,
    };
    let next_attempt = run.attempt == ingest::Attempt::Next;
    let uploaded =
        crate::service_client::upload::upload(&collector, &token, &new_run, next_attempt).await?;
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

/// `upload`'s argument as a stored run: `Some(Some(id))`, `Some(None)` for `latest`, `None`
/// for a Criterion directory (or nothing: the default tree).
fn stored_run_ref(args: &ingest::Args) -> Option<Option<RunId>> {
    let path = args.path.as_ref()?;
    if path.is_dir() {
        return None;
    }
    match path.to_str()? {
        "latest" => Some(None),
        text => RunId::parse(text).ok().map(Some),
    }
}
