//! benchgate's dashboards: change-point detection, SVG charts and HTML pages. Pure: no I/O
//! beyond what the caller hands in.

pub mod changepoint;
pub mod chart;
pub mod site;
