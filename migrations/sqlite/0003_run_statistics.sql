-- Every measurement's gate statistics packed into one value per run, so a history of 30 runs of
-- 10,000 benchmarks is 30 rows, not 300,000: per measurement, little-endian, 24 bytes:
-- benchmark id (i64), median ns per iteration (f64), minimum ns per iteration (f64).
-- Runs stored before this migration keep NULL; readers fall back to the measurements table.
ALTER TABLE runs ADD COLUMN statistics BLOB;
