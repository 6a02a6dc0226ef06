//! The domain types, from `benchgate-core`, and what only the store takes: a run to store.

use std::collections::BTreeMap;
use std::time::SystemTime;

pub use benchgate_core::domain::*;

use crate::callgrind::Profile;
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
    /// Where an instruction count's instructions went, by function (Callgrind's files, kept to
    /// their largest functions), keyed by the count measurement's id: each key is one of
    /// `measurements`. Not part of the run's content hash: the counts are.
    pub function_costs: BTreeMap<BenchmarkId, Profile>,
}
