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
    /// The environment variable holding the GitHub webhook secret.
    #[arg(long, default_value = "BENCHGATE_WEBHOOK_SECRET", value_name = "NAME")]
    webhook_secret_env: String,
    /// GitHub's API URL, for the work webhooks ask for [env GITHUB_API_URL]; the token is
    /// read from GITHUB_TOKEN.
    #[arg(long, value_name = "URL")]
    github_api_url: Option<String>,
}

/// Serves until SIGTERM or Ctrl-C.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let config = crate::serve::Config {
        body_limit: args.body_limit,
        webhook_secret: std::env::var(&args.webhook_secret_env)
            .ok()
            .filter(|s| !s.is_empty())
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
