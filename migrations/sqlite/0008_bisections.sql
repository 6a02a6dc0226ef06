-- What `benchgate bisect` found for a step of one benchmark between two commits on one machine:
-- the outcome, the commits that caused it, the GitHub issue opened for it, and the whole report.
-- One row per step (a rerun replaces it), so the nightly bisects each step once and the
-- dashboard marks each change point with its culprit.
-- Never edit this file once released; add a new numbered migration instead.
CREATE TABLE bisections (
    id INTEGER PRIMARY KEY,
    repository_id INTEGER NOT NULL REFERENCES repositories (id),
    fingerprint TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    good_sha TEXT NOT NULL,
    bad_sha TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('culprit', 'several', 'no-culprit', 'inconclusive')),
    culprits TEXT NOT NULL,
    issue_number INTEGER,
    report TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    UNIQUE (repository_id, fingerprint, benchmark, good_sha, bad_sha)
);
