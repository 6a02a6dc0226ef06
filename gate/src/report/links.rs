//! Where a report's readers can click: the commits on GitHub, the dashboard, and each
//! benchmark's trend page and chart (the pages `benchgate dashboard` writes and `benchgate
//! serve` serves, at the paths [`benchmark_path`] names).

/// The addresses a report links to; each is optional (`Links::default()` links nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// The repository's web address, e.g. `https://github.com/acme/rocket`: commits link to
    /// `{repository}/commit/{sha}`.
    pub repository: Option<String>,
    /// The dashboard's root, e.g. `https://acme.github.io/rocket` or a `benchgate serve` URL.
    pub dashboard: Option<String>,
    /// The repository's name as the dashboard files it (`owner/name`).
    pub repository_name: Option<String>,
    /// Whether to show each regressed benchmark's trend chart as an image in the report.
    pub trend_images: bool,
}

impl Links {
    /// A commit, as a markdown link when the repository is known, else as code.
    pub fn commit(&self, sha: &str) -> String {
        if !is_sha(sha) {
            return format!("`{sha}`");
        }
        // A SHA is ASCII hex, so cutting it at a byte index is safe.
        let short = &sha[..7];
        match &self.repository {
            Some(repository) => format!(
                "[`{short}`]({}/commit/{sha})",
                repository.trim_end_matches('/')
            ),
            None => format!("`{short}`"),
        }
    }

    /// The dashboard page of the repository on `fingerprint`.
    pub fn machine_page(&self, fingerprint: &str) -> Option<String> {
        Some(
            format!(
                "{}/{}",
                self.dashboard.as_deref()?.trim_end_matches('/'),
                machine_path(self.repository_name.as_deref()?, fingerprint)
            ) + "/index.html",
        )
    }

    /// A benchmark's trend page (`.html`) or chart (`.svg`) on `fingerprint`.
    pub fn benchmark(&self, fingerprint: &str, id: &str, extension: &str) -> Option<String> {
        Some(format!(
            "{}/{}",
            self.dashboard.as_deref()?.trim_end_matches('/'),
            benchmark_path(self.repository_name.as_deref()?, fingerprint, id, extension)
        ))
    }
}

fn is_sha(text: &str) -> bool {
    (7..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A repository's directory on one machine in the dashboard: `owner/name/{fingerprint[..12]}`.
pub fn machine_path(repository: &str, fingerprint: &str) -> String {
    format!("{repository}/{}", &fingerprint[..fingerprint.len().min(12)])
}

/// A benchmark's file in the dashboard: `{machine_path}/b/{slug}.{extension}`.
pub fn benchmark_path(repository: &str, fingerprint: &str, id: &str, extension: &str) -> String {
    format!(
        "{}/b/{}.{extension}",
        machine_path(repository, fingerprint),
        slug(id)
    )
}

/// A stable file name for a benchmark id: readable characters kept, a hash against collisions.
pub fn slug(id: &str) -> String {
    let readable: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{readable}-{:08x}", hash as u32)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn slugs_are_stable_and_distinct() {
        assert_eq!(slug("parse/json"), slug("parse/json"));
        assert_ne!(slug("parse/json"), slug("parse_json"));
        assert!(slug("a b/c").starts_with("a_b_c-"));
    }

    #[test]
    fn links_need_what_they_point_into() {
        let links = Links {
            repository: Some("https://github.com/acme/rocket/".into()),
            dashboard: Some("https://acme.github.io/rocket/".into()),
            repository_name: Some("acme/rocket".into()),
            trend_images: false,
        };
        let sha = "2".repeat(40);
        assert_eq!(
            links.commit(&sha),
            format!("[`2222222`](https://github.com/acme/rocket/commit/{sha})")
        );
        assert_eq!(
            links.commit("runs 2, 4"),
            "`runs 2, 4`",
            "not a commit: no link"
        );
        assert_eq!(
            links
                .benchmark("dd48e16126adffff", "parse/json", "svg")
                .unwrap(),
            format!(
                "https://acme.github.io/rocket/acme/rocket/dd48e16126ad/b/{}.svg",
                slug("parse/json")
            )
        );
        assert_eq!(Links::default().benchmark("dd48", "x", "html"), None);
        assert_eq!(Links::default().commit(&sha), "`2222222`");
    }
}
