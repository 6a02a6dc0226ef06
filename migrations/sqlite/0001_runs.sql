-- benchgate store, version 1: repositories, fingerprints, runs, benchmarks, measurements.
-- SQLite dialect for the DDL; the queries in collector/src/store.rs are portable, and a PostgreSQL
-- backend will get its own migrations directory with the same tables.
-- Never edit this file once released; add a new numbered migration instead.

CREATE TABLE repositories (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- One row per distinct hardware fingerprint, with every hashed component beside the hash.
CREATE TABLE fingerprints (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    cpu_arch TEXT NOT NULL,
    cpu_vendor TEXT NOT NULL,
    cpu_brand TEXT NOT NULL,
    physical_cores INTEGER NOT NULL,
    logical_cores INTEGER NOT NULL,
    memory_gib INTEGER NOT NULL,
    cpu_features TEXT NOT NULL,
    os_name TEXT NOT NULL,
    os_major_version TEXT NOT NULL,
    runner_image TEXT,
    runner_image_version TEXT,
    rustc_version TEXT NOT NULL,
    host_triple TEXT NOT NULL
);

-- A run is keyed by (repository, commit, fingerprint, kind, attempt). The machine details that
-- are recorded but not hashed (hostname, frequency, kernel) belong to the run. Run ids are never
-- reused, not even after `--replace` deletes a run (AUTOINCREMENT; IDENTITY on PostgreSQL).
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    commit_sha TEXT NOT NULL,
    fingerprint_id INTEGER NOT NULL REFERENCES fingerprints (id),
    kind TEXT NOT NULL CHECK (kind IN ('local', 'push', 'pr', 'nightly')),
    attempt INTEGER NOT NULL CHECK (attempt >= 1),
    branch TEXT,
    pr_number INTEGER,
    recorded_at_ms INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    n_benchmarks INTEGER NOT NULL,
    hostname TEXT,
    cpu_frequency_mhz INTEGER,
    kernel_version TEXT,
    os_version TEXT,
    UNIQUE (repository_id, commit_sha, fingerprint_id, kind, attempt)
);

CREATE INDEX runs_by_commit ON runs (repository_id, commit_sha);

CREATE TABLE benchmarks (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    name TEXT NOT NULL,
    UNIQUE (repository_id, name)
);

-- Times in nanoseconds per iteration (f64, never rounded). Samples are little-endian f64
-- arrays: sample i ran sample_iters[i] iterations in sample_times[i] ns.
CREATE TABLE measurements (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks (id),
    throughput_kind TEXT,
    throughput_amount INTEGER,
    throughput_bytes INTEGER,
    mean_point REAL NOT NULL,
    mean_lower REAL NOT NULL,
    mean_upper REAL NOT NULL,
    median_point REAL NOT NULL,
    median_lower REAL NOT NULL,
    median_upper REAL NOT NULL,
    confidence_level REAL NOT NULL,
    sampling_mode TEXT,
    n_samples INTEGER NOT NULL,
    sample_iters BLOB NOT NULL,
    sample_times BLOB NOT NULL,
    UNIQUE (run_id, benchmark_id)
);

CREATE INDEX measurements_by_benchmark ON measurements (benchmark_id);
