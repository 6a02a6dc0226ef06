-- The minimum per-iteration time of each measurement (min over samples of times[i] / iters[i]),
-- the gate's default statistic, kept beside the median so history queries need no sample blobs.
-- Rows stored before this migration keep NULL and are left out of history.
ALTER TABLE measurements ADD COLUMN min_point REAL;
