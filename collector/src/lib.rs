//! benchgate's collector: reads Criterion output (directory trees and `cargo criterion` JSON
//! messages) and gungraun's instruction counts, fingerprints the machine, and stores runs in
//! SQLite or PostgreSQL. The domain types are `benchgate-core`'s, re-exported here.

pub mod callgrind;
pub mod cargo_criterion;
pub mod criterion;
pub mod domain;
mod error;
pub mod fingerprint;
pub mod gungraun;
pub mod history;
pub mod metrics;
pub mod store;
pub mod wire;

pub use domain::{
    BenchmarkId, CommitSha, CustomMetric, Direction, Estimate, Measurement, NewRun, RepositoryName,
    RunId, RunKind, RunMeta, Samples, Throughput, merge_measurements,
};
pub use error::{Error, Result};
pub use fingerprint::{Fingerprint, HardwareProfile, RunnerImage, RustcInfo};
pub use store::{
    Bisection, Delivery, DeliveryState, ExportRow, GateOverride, IngestOutcome, Location,
    OverriddenCommit, PrunePlan, PruneReport, RunSummary, SeriesPoint, Store, StoredRun,
    StoredStatistic, TokenRecord, TrendRow,
};
