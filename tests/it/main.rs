//! The binary's integration tests, one module per area, in one test binary so the support
//! code compiles once (ripgrep's `tests/` layout). Each module's first lines say what it covers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

mod support;

mod ab;
mod accuracy;
mod action;
mod bisect;
mod budgets;
mod cli;
mod compare;
mod dashboard;
mod export;
mod gate;
mod import;
mod instructions;
mod metrics;
mod publish;
mod run_request;
mod serve;
