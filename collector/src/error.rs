//! The collector's one error type: every variant names the file, field, flag or run at fault.

use std::path::PathBuf;

/// Everything that can go wrong while reading benchmark output, fingerprinting or storing runs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A reading command was pointed at a store that does not exist.
    #[error("{}: no such store; run `benchgate ingest` first or pass --db", path.display())]
    NoStore {
        /// The store's path.
        path: PathBuf,
    },

    /// A directory that was named does not exist.
    #[error("{}: no such directory", path.display())]
    MissingDirectory {
        /// The directory that was asked for.
        path: PathBuf,
    },

    /// A path that should be a directory is something else.
    #[error("{}: not a directory", path.display())]
    NotADirectory {
        /// The path that was asked for.
        path: PathBuf,
    },

    /// A directory holds no Criterion benchmark for the requested baseline.
    #[error(
        "{}: no Criterion benchmarks found (looked for */{baseline}/estimates.json); run `cargo bench` first or pass the criterion directory (cargo criterion writes no such tree: pass its --message-format=json output with --cargo-criterion-json)",
        path.display()
    )]
    EmptyTree {
        /// The directory that was searched.
        path: PathBuf,
        /// The baseline directory name that was looked for (`new` unless `--baseline`).
        baseline: String,
    },

    /// A file a benchmark needs is not there.
    #[error("{}: missing file (every benchmark needs {needs})", path.display())]
    MissingFile {
        /// The file that should exist.
        path: PathBuf,
        /// What the benchmark directory must hold.
        needs: &'static str,
    },

    /// A file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// A file is not the JSON it claims to be (truncated, garbled or of the wrong shape).
    #[error("{}: field `{field}`: {message}", path.display())]
    InvalidJson {
        /// The file.
        path: PathBuf,
        /// The JSON path of the field at fault (`.` when the whole document is at fault).
        field: String,
        /// What was wrong.
        message: String,
    },

    /// A value parsed but makes no sense (a negative time, arrays of different lengths, ...).
    #[error("{}: field `{field}`: {reason}", path.display())]
    InvalidValue {
        /// The file (or stream) holding the value.
        path: PathBuf,
        /// The JSON path of the field at fault.
        field: String,
        /// What was wrong.
        reason: String,
    },

    /// A directory named for gungraun's output holds no summary.
    #[error(
        "{}: no gungraun summaries found (looked for **/summary.json); run the gungraun benches with `-- --save-summary=json` (or set GUNGRAUN_SAVE_SUMMARY=json) first",
        path.display()
    )]
    NoGungraunSummaries {
        /// The directory that was searched.
        path: PathBuf,
    },

    /// Two benchmarks in one run share an identity.
    #[error("duplicate benchmark id {id:?}: in {} and in {}", first.display(), second.display())]
    DuplicateBenchmark {
        /// The repeated `full_id`.
        id: String,
        /// Where it was seen first.
        first: PathBuf,
        /// Where it was seen again.
        second: PathBuf,
    },

    /// A line of `cargo criterion --message-format=json` output is not a JSON message.
    #[error("{}: line {line}: {message}", source_name.display())]
    MessageLine {
        /// The file (or `-` for standard input).
        source_name: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },

    /// A value given on the command line or in a run is malformed.
    #[error(transparent)]
    InvalidInput(#[from] benchgate_core::InvalidInput),

    /// A run with the same key but other content is already stored.
    #[error(
        "run {existing} already stores {repository}@{commit} ({kind}, attempt {attempt}) on this fingerprint with other results; pass --replace to overwrite it or --attempt N (or next) to add another attempt"
    )]
    RunConflict {
        /// The stored run's id.
        existing: i64,
        /// Repository of the key.
        repository: String,
        /// Commit of the key.
        commit: String,
        /// Kind of the key.
        kind: String,
        /// Attempt of the key.
        attempt: u32,
    },

    /// A run id that the store does not hold.
    #[error("run {0} not found in the store")]
    RunNotFound(i64),

    /// The store holds a row the collector cannot make sense of.
    #[error("store: corrupt row in {table}: {reason}")]
    CorruptRow {
        /// The table.
        table: &'static str,
        /// What was wrong.
        reason: String,
    },

    /// The database could not be opened, migrated, read or written.
    #[error("store {store}: {source}")]
    Database {
        /// The database file, or its URL without the password.
        store: String,
        /// The driver's error.
        source: sqlx::Error,
    },

    /// The store stayed locked by another writer past the busy timeout while this run waited
    /// to be written together with others (the writer that tried got the driver's error).
    #[error("store {store}: busy: {reason}")]
    Busy {
        /// The database file, or its URL without the password.
        store: String,
        /// What the writer was told.
        reason: String,
    },

    /// Migrations could not be applied.
    #[error("store {store}: migration failed: {source}")]
    Migration {
        /// The database file, or its URL without the password.
        store: String,
        /// The migrator's error.
        source: sqlx::migrate::MigrateError,
    },

    /// The machine could not be described.
    #[error("fingerprint: {0}")]
    Fingerprint(String),
}

/// The collector's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Whether the store was busy: locked by another writer past the busy timeout, or out of
    /// connections. Worth retrying later; nothing is wrong with the request.
    pub fn is_busy(&self) -> bool {
        match self {
            Error::Database { source, .. } => match source {
                // SQLite: SQLITE_BUSY, SQLITE_LOCKED. PostgreSQL: lock_not_available (the
                // lock timeout), serialization_failure, deadlock_detected, too_many_connections.
                sqlx::Error::Database(e) => matches!(
                    e.code().as_deref(),
                    Some("5" | "6" | "55P03" | "40001" | "40P01" | "53300")
                ),
                sqlx::Error::PoolTimedOut => true,
                _ => false,
            },
            Error::Busy { .. } => true,
            _ => false,
        }
    }
}

/// Reads the JSON file at `path` and parses it with `parse`: an error names the file, and the
/// field `parse` reports (field, reason).
pub(crate) fn parse_json_file<T>(
    path: &std::path::Path,
    parse: impl FnOnce(&serde_json::Value) -> std::result::Result<T, (String, String)>,
) -> Result<T> {
    let text = std::fs::read(path).map_err(|source| Error::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    let document: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| Error::InvalidJson {
            path: path.to_owned(),
            field: ".".to_owned(),
            message: e.to_string(),
        })?;
    parse(&document).map_err(|(field, reason)| Error::InvalidValue {
        path: path.to_owned(),
        field,
        reason,
    })
}
