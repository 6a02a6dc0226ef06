//! benchgate's gate: the decision engine (pure) and report rendering (pure): the markdown,
//! JSON and terminal reports and the texts GitHub shows (comment, check run, status). The
//! GitHub calls themselves are the binary's (`src/github/`).

pub mod budget;
pub mod counts;
pub mod decision;
mod error;
pub mod github_text;
pub mod glob;
pub mod noise;
pub mod policy;
pub mod report;
pub mod sequential;
pub mod stats;
pub mod verdict;

pub use error::{Error, Result};
pub use policy::Policy;
