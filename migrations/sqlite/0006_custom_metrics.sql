-- Custom metrics (`benchgate ingest --metrics`): a measurement's unit and which way is better.
-- NULL for Criterion's measurements, whose values are nanoseconds per iteration, lower better.
-- Never edit this file once released; add a new numbered migration instead.

ALTER TABLE measurements ADD COLUMN unit TEXT;
ALTER TABLE measurements ADD COLUMN direction TEXT CHECK (direction IN ('lower', 'higher'));
