//! The domain types, from `benchgate-core`, and what only the store takes: a run to store.

use std::time::SystemTime;

pub use benchgate_core::domain::*;

use crate::fingerprint::HardwareProfile;

/// A run to store: what was measured, on what machine, and its results.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// What was measured and why.
    pub meta: RunMeta,
    /// The machine.
    pub profile: HardwareProfile,
    /// When the results were recorded.
    pub recorded_at: SystemTime,
    /// One measurement per benchmark, ids unique.
    pub measurements: Vec<Measurement>,
}
