//! benchgate's gate: the decision engine (pure), report rendering (pure) and, later, the GitHub
//! publisher.

pub mod budget;
pub mod decision;
mod error;
pub mod policy;
pub mod publish;
pub mod report;
pub mod stats;

pub use error::{Error, Result};
pub use policy::Policy;
