//! The gate's one error type.

use std::path::PathBuf;

/// What can go wrong in the gate: only its input, since deciding itself cannot fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `benchgate.toml` is not valid; names the file and the key.
    #[error("{}: `{key}`: {message}", path.display())]
    Config {
        /// The configuration file.
        path: PathBuf,
        /// The key at fault (dotted path).
        key: String,
        /// What was wrong.
        message: String,
    },
    /// A `perf-summary.json` that is not one this version wrote; names the file and the field.
    #[error("{}: `{field}`: {message}", path.display())]
    Summary {
        /// The summary file.
        path: PathBuf,
        /// The field at fault (dotted path), or `.` for the whole file.
        field: String,
        /// What was wrong.
        message: String,
    },
}

/// The gate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
