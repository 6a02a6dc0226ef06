//! The sample workloads' one knob: which benchmarks do their work more than once per iteration.
//! The workloads themselves are in `benches/sample_workloads.rs`.
//!
//! A slowdown is a change of code, as in a real pull request: edit [`SLOWED`] (the Action's
//! end-to-end test does), and the build that benchmarks it is a different program.

/// Benchmarks whose id contains the first string do their work the second number of times per
/// iteration. Empty: every benchmark does its work once.
pub const SLOWED: &[(&str, usize)] = &[];

/// How many times the benchmark `id` does its work per iteration.
pub fn repeats(id: &str) -> usize {
    SLOWED
        .iter()
        .find(|(name, _)| id.contains(name))
        .map_or(1, |(_, times)| *times)
}
