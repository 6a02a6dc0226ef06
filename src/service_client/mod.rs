//! The client of `benchgate serve`: one HTTP client (hyper over rustls, or plain http), JSON
//! answers, and one retry policy ([`send`]: lost connections, 5xx and 429, with backoff), used
//! by `upload` ([`upload`]) and by `gate --collector` ([`reads`]).

pub mod reads;
pub mod upload;

use std::time::Duration;

use anyhow::{Context as _, bail};
use http_body_util::BodyExt as _;
use hyper::body::{Bytes, Incoming};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// The client type, generic over the request body.
pub type HttpClient<B> = Client<hyper_rustls::HttpsConnector<HttpConnector>, B>;

/// A client for http and https URLs, trusting the system's roots.
pub fn client<B>() -> anyhow::Result<HttpClient<B>>
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_native_roots()
        .context("cannot load the system's TLS roots")?
        .https_or_http()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

/// The status and the whole body (empty if it could not be read).
async fn body_of(response: hyper::Response<Incoming>) -> (hyper::StatusCode, Bytes) {
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    (status, body)
}

/// A success's body as `T`, or an error naming the call and the field at fault.
pub fn answer<T: serde::de::DeserializeOwned>(what: &str, body: &[u8]) -> anyhow::Result<T> {
    benchgate_collector::wire::reads::from_json(body).map_err(|e| {
        anyhow::anyhow!("{what}: the service's answer is not what benchgate expects: {e}")
    })
}

/// Sends the request `make` builds, again after a pause while the connection is lost or the
/// answer is a 5xx or a 429; returns a success's body. `what` names the call
/// in the log line of each retry and in the error (`upload to URL`, `GET URL`).
pub async fn send<B>(
    client: &HttpClient<B>,
    what: &str,
    make: impl Fn() -> anyhow::Result<hyper::Request<B>>,
) -> anyhow::Result<Bytes>
where
    B: hyper::body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut attempt = 0;
    loop {
        let failure = match client.request(make()?).await {
            Ok(response) => {
                let (status, body) = body_of(response).await;
                if status.is_success() {
                    return Ok(body);
                }
                if !is_transient(status) {
                    let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    bail!(
                        "{what}: HTTP {}: {}",
                        status.as_u16(),
                        service_error(&value)
                    );
                }
                format!("HTTP {}", status.as_u16())
            }
            Err(e) => e.to_string(),
        };
        let Some(pause) = backoff(attempt) else {
            bail!("{what}: {failure}; gave up after {} attempts", attempt + 1);
        };
        eprintln!("benchgate: {what}: {failure}; retrying in {pause:?}");
        attempt += 1;
        tokio::time::sleep(pause).await;
    }
}

/// The user agent of every request.
pub const USER_AGENT: &str = concat!("benchgate/", env!("CARGO_PKG_VERSION"));

/// Whether an answer is worth trying again: a server error or a rate limit.
pub fn is_transient(status: hyper::StatusCode) -> bool {
    status.is_server_error() || status == hyper::StatusCode::TOO_MANY_REQUESTS
}

/// The pause before attempt `attempt + 1` (counting from 0), or `None` when out of attempts.
pub fn backoff(attempt: usize) -> Option<Duration> {
    [
        Duration::from_millis(500),
        Duration::from_secs(1),
        Duration::from_secs(2),
        Duration::from_secs(4),
    ]
    .get(attempt)
    .copied()
}

/// The service's error message and the field or header it names, for one line.
pub fn service_error(value: &Value) -> String {
    let error = &value["error"];
    let at = ["field", "header", "query"]
        .iter()
        .find_map(|k| error[*k].as_str().map(|v| format!(" (`{v}`)")))
        .unwrap_or_default();
    format!("{}{at}", error["message"].as_str().unwrap_or("no message"))
}
