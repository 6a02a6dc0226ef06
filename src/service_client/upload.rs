//! `benchgate upload`: send a run to `benchgate serve`, gzipped, retrying with backoff. Safe to
//! repeat: the service stores a run once under its key and answers 200 for the same run again.

use std::io::Write as _;

use anyhow::Context as _;
use benchgate_collector::NewRun;
use benchgate_collector::wire::RunDocument;
use benchgate_collector::wire::reads::RunCreatedJson;
use http_body_util::Full;
use hyper::body::Bytes;

use super::HttpClient;

/// What the service said: the run's id there and `created` or `unchanged`.
pub type Uploaded = RunCreatedJson;

/// Uploads `run` to the collector at `url` with `token`. A service older than its run
/// document's `function_costs` refuses the field by name: the run goes again without the
/// profiles, with a line saying so, rather than not at all. With `next_attempt` the service
/// stores it as the next attempt under its key (`?attempt=next`), whatever attempt it names.
pub async fn upload(
    url: &str,
    token: &str,
    run: &NewRun,
    next_attempt: bool,
) -> anyhow::Result<Uploaded> {
    match send_run(url, token, run, next_attempt).await {
        Err(error)
            if !run.function_costs.is_empty()
                && format!("{error:#}").contains("unknown field `function_costs`") =>
        {
            eprintln!(
                "benchgate: {url} does not take profiles by function (a benchgate serve older than this client): uploading the run without them"
            );
            let mut without = run.clone();
            without.function_costs.clear();
            send_run(url, token, &without, next_attempt).await
        }
        other => other,
    }
}

/// One upload of `run`, retried while the service is away.
async fn send_run(
    url: &str,
    token: &str,
    run: &NewRun,
    next_attempt: bool,
) -> anyhow::Result<Uploaded> {
    let endpoint = format!(
        "{}/api/v1/runs{}",
        url.trim_end_matches('/'),
        if next_attempt { "?attempt=next" } else { "" }
    );
    let uri: hyper::Uri = endpoint
        .parse()
        .with_context(|| format!("--collector {url}: not a URL"))?;
    let json = serde_json::to_vec(&RunDocument::from_run(run))?;
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&json)?;
    let body = Bytes::from(gzip.finish()?);

    let client: HttpClient<Full<Bytes>> = super::client()?;
    let what = format!("upload to {endpoint}");
    let answer = super::send(&client, &what, || {
        Ok(hyper::Request::post(uri.clone())
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .header("content-encoding", "gzip")
            .header("user-agent", super::USER_AGENT)
            .body(Full::new(body.clone()))?)
    })
    .await?;
    super::answer(&what, &answer)
}
