//! `benchgate token`: the service's per-repository upload tokens.

use anyhow::{Context as _, bail};
use benchgate_collector::{RepositoryName, Store};
use clap::Subcommand;

use super::StoreArgs;

/// `benchgate token ...`.
#[derive(Subcommand)]
pub enum TokenCommand {
    /// Create a token for a repository; it is printed once and only its hash is stored.
    Create {
        /// The repository, OWNER/NAME.
        #[arg(long)]
        repo: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Revoke a token by its id (from `token list`).
    Revoke {
        /// The token's id.
        id: i64,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List tokens (ids, repositories, dates; never the tokens).
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Creates, revokes or lists tokens.
pub async fn run(command: TokenCommand) -> anyhow::Result<u8> {
    match command {
        TokenCommand::Create { repo, store } => {
            let repository = RepositoryName::parse(&repo).context("--repo")?;
            let mut secret = [0u8; 32];
            getrandom::fill(&mut secret).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
            let token: String = std::iter::once("bgt_".to_owned())
                .chain(secret.iter().map(|b| format!("{b:02x}")))
                .collect();
            let store = Store::connect(&store.db).await?;
            let id = store
                .create_token(&repository, &crate::serve::token_hash(&token))
                .await;
            store.close().await;
            eprintln!(
                "benchgate: token {} for {repository}; it is shown once, only its hash is kept",
                id?
            );
            println!("{token}");
        }
        TokenCommand::Revoke { id, store } => {
            let store = store.open_existing().await?;
            let revoked = store.revoke_token(id).await;
            store.close().await;
            if !revoked? {
                bail!("token {id}: no such live token (see `benchgate token list`)");
            }
            eprintln!("benchgate: token {id} revoked");
        }
        TokenCommand::List { store } => {
            let store = store.open_existing().await?;
            let tokens = store.list_tokens().await;
            store.close().await;
            for token in tokens? {
                println!(
                    "{}\t{}\tcreated {}\t{}",
                    token.id,
                    token.repository,
                    humantime::format_rfc3339_seconds(token.created_at),
                    token.revoked_at.map_or("live".to_owned(), |t| format!(
                        "revoked {}",
                        humantime::format_rfc3339_seconds(t)
                    ))
                );
            }
        }
    }
    Ok(0)
}
