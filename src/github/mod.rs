//! The GitHub adapter: the REST client, where to publish, the comment and check run, the fork
//! artifact, the maintainer's override and run request. octocrab is used here and nowhere else.

pub mod api;
pub mod artifact;
pub mod comment;
pub mod job_files;
pub mod overrides;
pub mod publish;
pub mod run_request;
pub mod target;

pub use api::{ApiError, GitHub};

use benchgate_collector::RepositoryName;
pub use target::{GitHubArgs, Target};

/// A GitHub client for `repository` when `GITHUB_TOKEN` is set: `api_url`, else
/// `GITHUB_API_URL`, else api.github.com.
pub fn from_token(
    api_url: Option<&str>,
    repository: &RepositoryName,
) -> anyhow::Result<Option<GitHub>> {
    let Some(token) = crate::environment::non_empty_var("GITHUB_TOKEN") else {
        return Ok(None);
    };
    let api_url = api_url
        .map(str::to_owned)
        .or_else(|| crate::environment::non_empty_var("GITHUB_API_URL"))
        .unwrap_or_else(|| "https://api.github.com".to_owned());
    Ok(Some(GitHub::new(
        &api_url,
        &token,
        repository.as_str(),
        std::time::Duration::from_secs(120),
    )?))
}
