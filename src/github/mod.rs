//! The GitHub adapter: the REST client, where to publish, the comment and check run, the fork
//! artifact, the maintainer's override and run request. octocrab is used here and nowhere else.

pub mod api;
pub mod artifact;
pub mod overrides;
pub mod publish;
pub mod run_request;
pub mod target;

pub use api::{ApiError, GitHub};
pub use target::{GitHubArgs, Target};
