-- Drops the index of measurements by benchmark. Runs append their measurements in run order,
-- but a run of N benchmarks put one entry into each of N places in this index: on a store of
-- a few thousand runs, a 100-benchmark run dirtied about 100 of its pages, which SQLite wrote
-- to the WAL and again at the checkpoint (517 page writes per run against about 12 for the
-- rows themselves), half the time of an ingest. Every read by benchmark goes through
-- UNIQUE (run_id, benchmark_id) instead: a series probes it once per run; a benchmark's last
-- measurement (prune, and the foreign key check when a benchmark is deleted) scans that index,
-- a few megabytes for 400,000 measurements.
-- Never edit this file once released; add a new numbered migration instead.
DROP INDEX measurements_by_benchmark;
