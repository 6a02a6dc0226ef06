-- How each measurement's sample arrays are stored (collector/src/store/samples.rs): 0, every row
-- written before this migration, is little-endian f64s; 1 is a tag per array, then either the
-- f64s or the varints of their first or second differences when every value is an integer (as
-- Criterion's iteration counts and nanosecond totals are). Exact either way; 1 is about a
-- quarter of the bytes, and the samples are most of what a store writes per run.
-- Never edit this file once released; add a new numbered migration instead.
ALTER TABLE measurements ADD COLUMN sample_encoding BIGINT NOT NULL DEFAULT 0;
