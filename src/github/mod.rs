//! The GitHub adapter: the REST client, where to publish, the comment and check run, the fork
//! artifact, and the maintainer's override. octocrab is used here and nowhere else.

pub mod api;
pub mod artifact;
pub mod overrides;
pub mod publish;
pub mod target;

pub use api::{ApiError, GitHub};
pub use target::{GitHubArgs, Target};
