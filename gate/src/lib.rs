//! benchgate's gate: the decision engine, report rendering and the GitHub publisher.
//!
//! Empty for now: the decision engine, `compare`/`gate`/`ab` and the reports arrive with the
//! gate issue, the GitHub publisher and override flow with the GitHub issue. Nothing here
//! pretends to decide anything yet.
