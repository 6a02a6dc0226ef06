//! What byte-identical executables on both sides mean. Cargo's dep-info lists exactly the files
//! each crate was compiled from: when every executable is identical although one of those files
//! differs in code, a side did not get its own build, and `ab` refuses. When none differs, the
//! change does not touch what the benchmarks build; if nothing else they could read at run time
//! changed either, measuring would compare the same program on the same inputs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::bail;
use benchgate_collector::CommitSha;

use super::Listed;
use crate::ab::side::{Side, git};
use crate::side_build;

/// What comparing the two sides' executables found.
#[derive(Debug, PartialEq, Eq)]
pub struct Builds {
    /// Targets whose executables are byte-identical on both sides.
    identical: Vec<String>,
    /// Every executable is identical (and both sides built the same targets).
    all_identical: bool,
    /// Nothing but files that are not read at run time changed between the commits, and both
    /// sides select the same benchmarks.
    nothing_else_changed: bool,
    /// Where only some executables are identical and nothing else changed: the ids of theirs
    /// that both sides select alike. The rounds leave them out; they pass, not measured.
    unmeasured: Vec<String>,
}

impl Builds {
    /// The sentence the report carries, if any executable is the same on both sides.
    pub fn note(&self) -> Option<String> {
        if self.all_identical {
            Some(
                "Same executables: the change does not touch what these benchmarks build."
                    .to_owned(),
            )
        } else if self.identical.is_empty() {
            None
        } else {
            let unmeasured = match self.unmeasured.len() {
                0 => String::new(),
                1 => " Its 1 benchmark passes, not measured.".to_owned(),
                n => format!(" Their {n} benchmarks pass, not measured."),
            };
            Some(format!(
                "Same executables for {}: the change does not touch what these benchmarks build.{unmeasured}",
                self.identical
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    }

    /// The benchmarks the rounds leave out, which pass unmeasured (see [`Builds::unmeasured`]'s
    /// field); empty where every executable is identical ([`Builds::skips_rounds`] says that).
    pub fn unmeasured(&self) -> &[String] {
        &self.unmeasured
    }

    /// Whether rounds would measure the same programs on the same inputs.
    pub fn skips_rounds(&self) -> bool {
        self.all_identical && self.nothing_else_changed
    }
}

/// Compares the two sides' executables; refuses identical executables from differing code
/// unless `allow_identical`.
pub fn compare(
    [base, head]: [&Side; 2],
    listed: &Listed,
    allow_identical: bool,
) -> anyhow::Result<Builds> {
    let (base_hashes, head_hashes) = (executables(base), executables(head));
    let identical: Vec<String> = base_hashes
        .intersection(&head_hashes)
        .map(|(target, _)| target.clone())
        .collect();
    let all_identical = base_hashes == head_hashes;
    if identical.is_empty() || base.commit == head.commit {
        return Ok(Builds {
            identical,
            all_identical,
            nothing_else_changed: all_identical && listed.same(),
            unmeasured: Vec::new(),
        });
    }
    let sources: BTreeSet<&PathBuf> = base.sources.iter().chain(&head.sources).collect();
    let changed = changed_files(&base.commit, &head.commit)?;
    // Only where every executable is identical can one side have missed its own build: where
    // some differ, each side's own sources were compiled.
    let code_changed = if all_identical {
        code_changes(&base.commit, &head.commit, &changed, &sources)
    } else {
        Vec::new()
    };
    if !code_changed.is_empty() {
        if !allow_identical {
            bail!(
                "base ({}) and head ({}) built byte-identical bench executables, but files they are compiled from differ in code ({}): one side did not get its own build, so the comparison would measure the same binary twice; refusing to go on (pass --allow-identical-builds if the change really compiles to the same code)",
                base.commit.short(),
                head.commit.short(),
                code_changed.join(", ")
            );
        }
        return Ok(Builds {
            identical,
            all_identical,
            nothing_else_changed: false,
            unmeasured: Vec::new(),
        });
    }
    let read_at_run_time: Vec<&String> = changed
        .iter()
        .filter(|path| !sources.contains(&PathBuf::from(path)))
        .filter(|path| could_be_read_at_run_time(Path::new(path)))
        .collect();
    if !read_at_run_time.is_empty() {
        eprintln!(
            "benchgate: {} the same, but files the benchmarks could read changed ({}): measuring",
            if all_identical {
                "the executables are"
            } else {
                "some executables are"
            },
            read_at_run_time
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let nothing_else_changed = read_at_run_time.is_empty();
    // A byte-identical executable is the same program: on the same inputs its benchmarks
    // measure the same code on both sides, whatever else the change touched.
    let unmeasured = if all_identical || !nothing_else_changed {
        Vec::new()
    } else {
        let ids_of = |side: usize, target: &str| {
            listed.by_target[side]
                .iter()
                .find(|(t, _)| t == target)
                .map(|(_, ids)| ids)
        };
        identical
            .iter()
            .filter_map(|target| match (ids_of(0, target), ids_of(1, target)) {
                (Some(base_ids), Some(head_ids)) if base_ids == head_ids => Some(base_ids.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    };
    Ok(Builds {
        identical,
        all_identical,
        nothing_else_changed: nothing_else_changed && listed.same(),
        unmeasured,
    })
}

/// Whether both sides built byte-identical executables of the same targets.
pub fn same_executables([base, head]: [&Side; 2]) -> bool {
    executables(base) == executables(head)
}

/// A side's executables: (target, SHA-256).
fn executables(side: &Side) -> BTreeSet<(String, String)> {
    side.executables
        .iter()
        .map(|e| (e.target.clone(), e.sha256.clone()))
        .collect()
}

/// The files that differ between two commits, relative to the repository's top.
fn changed_files(base: &CommitSha, head: &CommitSha) -> anyhow::Result<Vec<String>> {
    let changed = git(&[
        "diff",
        "--name-only",
        "--no-renames",
        base.as_str(),
        head.as_str(),
    ])?;
    Ok(changed.lines().map(str::to_owned).collect())
}

/// The `changed` files among `sources` whose code differs: Rust files beyond comments and
/// layout, any other file (`include_str!`) byte for byte.
fn code_changes(
    base: &CommitSha,
    head: &CommitSha,
    changed: &[String],
    sources: &BTreeSet<&PathBuf>,
) -> Vec<String> {
    let mut differ = Vec::new();
    for path in changed
        .iter()
        .filter(|p| sources.contains(&PathBuf::from(p)))
    {
        let version = |commit: &CommitSha| {
            git(&["show", &format!("{}:{path}", commit.as_str())]).unwrap_or_default()
        };
        let (old, new) = (version(base), version(head));
        let same = if path.ends_with(".rs") {
            side_build::code_only(&old) == side_build::code_only(&new)
        } else {
            old == new
        };
        if !same {
            differ.push(path.clone());
        }
    }
    differ
}

/// Whether a changed file outside what the executables were compiled from could change what
/// they measure: data they read at run time could. Rust sources of other targets, docs, CI
/// files, licences and tool settings cannot.
fn could_be_read_at_run_time(path: &Path) -> bool {
    if path.starts_with(".github") || path.starts_with(".gitlab") || path.starts_with(".circleci") {
        return false;
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let upper = name.to_ascii_uppercase();
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let inert_names = [
        ".gitignore",
        ".gitattributes",
        ".editorconfig",
        ".mailmap",
        "Cargo.toml",
        "Cargo.lock",
        "rustfmt.toml",
        ".rustfmt.toml",
        "clippy.toml",
        ".clippy.toml",
        "deny.toml",
        "rust-toolchain",
        "rust-toolchain.toml",
        "benchgate.toml",
    ];
    let inert_prefixes = [
        "LICENSE",
        "LICENCE",
        "COPYING",
        "CHANGELOG",
        "AUTHORS",
        "NOTICE",
        "README",
    ];
    // Not `txt`: benchmarks read text (unicode-segmentation's `benches/texts/*.txt`).
    let inert_extensions = ["rs", "md", "markdown", "rst", "adoc", "org"];
    !(inert_names.contains(&name)
        || inert_prefixes.iter().any(|p| upper.starts_with(p))
        || inert_extensions.contains(&extension.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_ci_files_and_other_sources_are_not_read_at_run_time() {
        for path in [
            "README.md",
            "docs/guide.md",
            ".github/workflows/ci.yml",
            "LICENSE-MIT",
            "benches/other.rs",
            "Cargo.toml",
            "CHANGELOG.md",
            "LICENSE.txt",
            "README.txt",
        ] {
            assert!(!could_be_read_at_run_time(Path::new(path)), "{path}");
        }
        for path in [
            "benches/data/input.json",
            "fixtures/big.bin",
            "config.yaml",
            "benches/texts/english.txt",
        ] {
            assert!(could_be_read_at_run_time(Path::new(path)), "{path}");
        }
    }
}
