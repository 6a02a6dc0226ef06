-- Maintainers' overrides of the gate: one per `/benchgate override` comment (its id is the key,
-- so a redelivered event stores nothing new). An override applies to one head commit of one
-- pull request; a new push is gated afresh.
CREATE TABLE overrides (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    pr_number INTEGER NOT NULL,
    head_sha TEXT NOT NULL,
    login TEXT NOT NULL,
    reason TEXT NOT NULL,
    comment_id INTEGER NOT NULL UNIQUE,
    created_at_ms INTEGER NOT NULL
);

CREATE INDEX overrides_by_head ON overrides (repository_id, pr_number, head_sha);
