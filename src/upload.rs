//! `benchgate upload`: send a run to `benchgate serve`, gzipped, retrying with backoff. Safe to
//! repeat: the service stores a run once under its key and answers 200 for the same run again.

use std::io::Write as _;
use std::time::Duration;

use anyhow::{Context as _, bail};
use benchgate_collector::NewRun;
use benchgate_collector::wire::RunDocument;
use http_body_util::Full;
use hyper::body::Bytes;

use crate::web::{self, HttpClient};

/// What the service said.
#[derive(Debug)]
pub struct Uploaded {
    /// The run's id on the service.
    pub id: i64,
    /// `created` or `unchanged`.
    pub status: String,
}

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

    let client: HttpClient<Full<Bytes>> = web::client()?;
    let mut attempt = 0;
    loop {
        let request = hyper::Request::post(uri.clone())
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .header("content-encoding", "gzip")
            .header(
                "user-agent",
                concat!("benchgate/", env!("CARGO_PKG_VERSION")),
            )
            .body(Full::new(body.clone()))?;
        let retry = |why: String| -> anyhow::Result<Duration> {
            match web::backoff(attempt) {
                Some(pause) => {
                    eprintln!("benchgate: upload to {endpoint}: {why}; retrying in {pause:?}");
                    Ok(pause)
                }
                None => bail!(
                    "upload to {endpoint}: {why}; gave up after {} attempts",
                    attempt + 1
                ),
            }
        };
        let response = match client.request(request).await {
            Ok(response) => response,
            Err(e) => {
                let pause = retry(format!("{e}"))?;
                attempt += 1;
                tokio::time::sleep(pause).await;
                continue;
            }
        };
        let (status, value) = web::json_of(response).await;
        if status.is_success() {
            return Ok(Uploaded {
                id: value["id"]
                    .as_i64()
                    .context("the service's answer has no run id")?,
                status: value["status"].as_str().unwrap_or("").to_owned(),
            });
        }
        if web::is_transient(status) {
            let pause = retry(format!("HTTP {}", status.as_u16()))?;
            attempt += 1;
            tokio::time::sleep(pause).await;
            continue;
        }
        bail!(
            "upload to {endpoint}: HTTP {}: {}",
            status.as_u16(),
            web::service_error(&value)
        );
    }
}
