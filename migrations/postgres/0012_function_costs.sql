-- Where an instruction count's instructions went: the count measurement's cost by function,
-- read from Callgrind's files at ingest and kept to its largest functions (a JSON document,
-- collector/src/callgrind.rs `ProfileDocument`). A run's stored profile lets a later pull
-- request's gate and the dashboard name the functions behind a change of the count without
-- Callgrind's files of the base. Deleted with its measurement.
-- Never edit this file once released; add a new numbered migration instead.
CREATE TABLE function_costs (
    measurement_id BIGINT PRIMARY KEY REFERENCES measurements (id) ON DELETE CASCADE,
    document TEXT NOT NULL
);
