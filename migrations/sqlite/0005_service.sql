-- The service: upload tokens (only their SHA-256 is kept) and GitHub webhook deliveries.
CREATE TABLE tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    hash TEXT NOT NULL UNIQUE,
    created_at_ms INTEGER NOT NULL,
    revoked_at_ms INTEGER
);

-- One row per delivery (X-GitHub-Delivery, the same on a redelivery): stored before the
-- answer, worked on afterwards, so a restart finishes what was pending.
CREATE TABLE webhook_deliveries (
    delivery_id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    payload BLOB NOT NULL,
    received_at_ms INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
    outcome TEXT
);
