//! `benchgate serve`: the collector service's flags, read into its configuration.

use super::StoreArgs;
use crate::github::GitHubArgs;

/// `benchgate serve`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: StoreArgs,
    /// Where to listen (port 0 picks a free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: std::net::SocketAddr,
    /// The largest upload, in bytes, compressed or not.
    #[arg(long, default_value_t = crate::serve::DEFAULT_BODY_LIMIT)]
    body_limit: usize,
    /// Uploads handled at once; beyond them the service answers 503 with `Retry-After`, so its
    /// memory stays bounded (about this many times the body limit at worst).
    #[arg(long, default_value_t = crate::serve::DEFAULT_MAX_UPLOADS, value_parser = clap::value_parser!(u16).range(1..))]
    max_uploads: u16,
    /// How long a client may take to send a request's headers (a connection that sends
    /// nothing, or half its headers, is closed then).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10s")]
    header_timeout: std::time::Duration,
    /// How long a request's body may take to arrive (408 then).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "60s")]
    body_timeout: std::time::Duration,
    /// How long a request waits for another process's lock on the store (then 503 with
    /// `Retry-After`).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "30s")]
    store_timeout: std::time::Duration,
    /// The environment variable holding the GitHub webhook secret.
    #[arg(long, default_value = "BENCHGATE_WEBHOOK_SECRET", value_name = "NAME")]
    webhook_secret_env: String,
    /// GitHub's API URL, for the work webhooks ask for [env GITHUB_API_URL]; the token is
    /// read from GITHUB_TOKEN.
    #[arg(long, value_name = "URL")]
    github_api_url: Option<String>,
    /// How the log on stderr is written: `text` (a line per event, `key=value` fields) or
    /// `json` (an object per line, for a log pipeline).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "BENCHGATE_LOG_FORMAT")]
    log_format: LogFormat,
}

/// The service log's format.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line per event: time, level, message, `key=value` fields.
    Text,
    /// One JSON object per line: `timestamp`, `level`, `message`, the fields, and the
    /// request's `span` (`method`, `uri`, `version`) for request lines.
    Json,
}

/// Sends the service's events (tracing) to stderr: benchgate's and the request log at INFO
/// and above, the libraries' (sqlx's notices, hyper's) only at WARN and above.
fn init_log(format: LogFormat) {
    use tracing::level_filters::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::filter::Targets::new()
        .with_target(env!("CARGO_CRATE_NAME"), LevelFilter::INFO)
        .with_target("tower_http::trace", LevelFilter::INFO)
        .with_default(LevelFilter::WARN);
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false);
    // Only fails when a subscriber is already set (never, in the binary).
    let _ = match format {
        LogFormat::Text => builder.finish().with(filter).try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .finish()
            .with(filter)
            .try_init(),
    };
}

/// Serves until SIGTERM or Ctrl-C.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    init_log(args.log_format);
    let config = crate::serve::Config {
        body_limit: args.body_limit,
        max_uploads: usize::from(args.max_uploads),
        header_timeout: args.header_timeout,
        body_timeout: args.body_timeout,
        store_timeout: args.store_timeout,
        webhook_secret: crate::environment::non_empty_var(&args.webhook_secret_env)
            .map(String::into_bytes),
        github: GitHubArgs {
            api_url: args.github_api_url,
            ..GitHubArgs::default()
        },
    };
    crate::serve::serve(args.store.db, args.bind, config)
        .await
        .map(|()| 0)
}
