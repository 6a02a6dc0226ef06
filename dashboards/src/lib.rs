//! benchgate's dashboards: trend series, change-point detection, SVG charts and HTML pages.
//!
//! Empty for now: filled by the dashboards issue.
