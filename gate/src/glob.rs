//! `*`/`?` wildcard patterns over benchmark ids, for the policy's per-benchmark limits and
//! ignore list and for budgets. Hand-written rather than `globset`: ids are not paths (`*`
//! must span `/`), and this is one small loop with no dependency.

/// A `*`/`?` wildcard pattern over benchmark ids (`*` also spans `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob(Vec<char>);

impl Glob {
    /// Any text is a valid pattern.
    pub fn new(pattern: &str) -> Self {
        Self(pattern.chars().collect())
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        let (mut p, mut t) = (0, 0);
        let mut backtrack: Option<(usize, usize)> = None;
        while t < text.len() {
            match self.0.get(p) {
                Some('*') => {
                    backtrack = Some((p, t));
                    p += 1;
                }
                Some(&c) if c == '?' || c == text[t] => {
                    p += 1;
                    t += 1;
                }
                _ => match backtrack {
                    Some((star, matched)) => {
                        p = star + 1;
                        t = matched + 1;
                        backtrack = Some((star, matched + 1));
                    }
                    None => return false,
                },
            }
        }
        self.0[p..].iter().all(|&c| c == '*')
    }
}
