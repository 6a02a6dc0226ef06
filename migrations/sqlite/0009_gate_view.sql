-- What the gate reads of each of a run's measurements, packed into one value per run (JSON):
-- everything but the samples, and of the samples only the two best per-iteration values, which
-- is all the minimum statistic and its within-run interval need. A 10,000-benchmark run is then
-- one row to read, not 10,000 of 16 columns each. Runs stored before this migration, and runs
-- `prune` took benchmarks out of, keep NULL; readers fall back to the measurements table.
-- Never edit this file once released; add a new numbered migration instead.
ALTER TABLE runs ADD COLUMN gate_view BLOB;
