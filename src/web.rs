//! The HTTP client `upload` and `gate --collector` share: hyper over rustls (or plain http),
//! JSON answers, and one retry rule (lost connections, 5xx and 429, with backoff).

use std::time::Duration;

use anyhow::Context as _;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
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

/// The status and the JSON body (`null` if there is none).
pub async fn json_of(response: hyper::Response<Incoming>) -> (hyper::StatusCode, Value) {
    let status = response.status();
    let value = response
        .into_body()
        .collect()
        .await
        .ok()
        .and_then(|b| serde_json::from_slice(&b.to_bytes()).ok())
        .unwrap_or(Value::Null);
    (status, value)
}

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
