//! The counted events (Callgrind's, through gungraun): exact counts, judged by
//! `[instructions]` in `benchgate.toml` rather than as wall time.

/// A Callgrind event benchgate stores: gungraun's metric name and benchgate's name for it (also
/// the measurement's unit).
pub const EVENTS: &[(&str, &str)] = &[
    ("Ir", INSTRUCTIONS),
    ("L1hits", "L1 hits"),
    ("LLhits", "LL hits"),
    ("RamHits", "RAM hits"),
    ("EstimatedCycles", "estimated cycles"),
];

/// The unit (and measure name) of instruction counts.
pub const INSTRUCTIONS: &str = "instructions";

/// Whether a custom metric's unit is one of the counted events.
pub fn is_count_unit(unit: &str) -> bool {
    EVENTS.iter().any(|(_, name)| *name == unit)
}
