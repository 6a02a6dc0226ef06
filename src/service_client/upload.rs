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

/// Uploads `run` to the collector at `url` with `token`.
pub async fn upload(url: &str, token: &str, run: &NewRun) -> anyhow::Result<Uploaded> {
    let endpoint = format!("{}/api/v1/runs", url.trim_end_matches('/'));
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
