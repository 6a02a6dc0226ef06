//! Callgrind's output files, read for where a benchmark's instructions went: each function's
//! exclusive (self) and inclusive cost of one event (`Ir`, instructions), summed over the files
//! of one run (gungraun writes one per part or thread), and the difference between two runs by
//! function (docs/callgrind.md).
//!
//! The format is Valgrind's "Callgrind Format Specification", version 1: a header of
//! `key: value` lines (`events:` names the counters, `positions:` the subpositions a cost line
//! starts with), then `fn=` (the function the following cost lines belong to), `cfn=` (the
//! function a following `calls=` line calls), `calls=COUNT TARGET` followed by exactly one cost
//! line, the call's inclusive cost, and cost lines: subpositions (absolute, `+N`/`-N` relative
//! or `*` the same) and then the counters, those missing at the end being zero. Names may be
//! compressed: `(7) name` defines id 7 and a later `(7)` alone refers to it, functions and
//! files each in their own space. `ob=`, `fl=`, `fi=`, `fe=`, `cob=`, `cfi=`, `cfl=`, `jump=`
//! and `jcnd=` lines say where code is, not what it cost, and are passed over. A complete file
//! ends with `totals:` (older Callgrinds write `summary:` in the header): the functions'
//! exclusive costs must sum to it, so a truncated file is refused, not read short.
//!
//! Inclusive cost is a function's own plus what its calls to *other* functions cost: a call to
//! itself is already in its own lines. Mutual recursion (f calls g calls f) counts the inner f
//! in g's call as well, as `callgrind_annotate --inclusive=yes` does; the ranking uses the
//! exclusive costs, which are exact.
//!
//! Paths in a file are never opened: a fork's artifact is read as text, not followed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Callgrind's instruction event.
pub const INSTRUCTIONS: &str = "Ir";

/// One function's cost of the event, over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// In the function's own code.
    pub exclusive: u64,
    /// Its own and its calls' to other functions.
    pub inclusive: u64,
}

/// A run's cost of one event by function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// The event (`Ir`).
    pub event: String,
    /// The run's total, the sum of every function's exclusive cost.
    pub total: u64,
    /// Each function (demangled, hash left out) and its cost.
    pub functions: BTreeMap<String, Cost>,
    /// How many functions were left out of `functions` (a stored profile keeps the largest:
    /// [`Profile::keep_largest`]); their cost is still in `total`. A function a profile does
    /// not list is known to cost nothing only when this is 0.
    pub omitted: usize,
}

impl Profile {
    /// No cost yet, of `event`.
    pub fn empty(event: &str) -> Self {
        Self {
            event: event.to_owned(),
            ..Self::default()
        }
    }

    /// The profile with only its `keep` functions of largest exclusive cost (ties by name),
    /// the others counted in `omitted`: what a store keeps of a run. The total is unchanged.
    pub fn keep_largest(&self, keep: usize) -> Self {
        let mut ranked: Vec<(&String, &Cost)> = self.functions.iter().collect();
        ranked.sort_by(|a, b| b.1.exclusive.cmp(&a.1.exclusive).then_with(|| a.0.cmp(b.0)));
        let left_out = ranked.len().saturating_sub(keep);
        Self {
            event: self.event.clone(),
            total: self.total,
            functions: ranked
                .into_iter()
                .take(keep)
                .map(|(name, cost)| (name.clone(), *cost))
                .collect(),
            omitted: self.omitted + left_out,
        }
    }

    /// Whether `function`'s exclusive cost is known: listed, or nothing was left out.
    fn knows(&self, function: &str) -> bool {
        self.omitted == 0 || self.functions.contains_key(function)
    }

    /// Reads `paths` (one run's parts or threads) and sums their cost of `event`.
    pub fn read(paths: &[PathBuf], event: &str) -> Result<Self> {
        let mut profile = Self::empty(event);
        for path in paths {
            let text = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
                path: path.clone(),
                source,
            })?;
            profile.add(&text, path)?;
        }
        Ok(profile)
    }

    /// Adds one file's costs (`text`, read from `path`).
    pub fn add(&mut self, text: &str, path: &Path) -> Result<()> {
        let file = parse(text, &self.event, path)?;
        self.total += file.total;
        for (name, cost) in file.functions {
            let sum = self.functions.entry(name).or_default();
            sum.exclusive += cost.exclusive;
            sum.inclusive += cost.inclusive;
        }
        Ok(())
    }
}

/// A malformed line's error.
fn bad(path: &Path, line: usize, reason: impl Into<String>) -> Error {
    Error::InvalidValue {
        path: path.to_owned(),
        field: format!("line {line}"),
        reason: reason.into(),
    }
}

/// The name a `fn=`/`cfn=` value stands for, with compressed names resolved and defined.
fn resolve(
    value: &str,
    names: &mut HashMap<String, String>,
    path: &Path,
    line: usize,
) -> Result<String> {
    let value = value.trim();
    // A compressed name's id is a number: `(below main)` is Valgrind's name for what runs
    // before `main`, written as it is.
    let Some((id, name)) = value
        .strip_prefix('(')
        .and_then(|rest| rest.split_once(')'))
        .filter(|(id, _)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
    else {
        return Ok(value.to_owned());
    };
    let name = name.trim();
    if name.is_empty() {
        names.get(id).cloned().ok_or_else(|| {
            bad(
                path,
                line,
                format!("`({id})` refers to a name never defined"),
            )
        })
    } else {
        names.insert(id.to_owned(), name.to_owned());
        Ok(name.to_owned())
    }
}

/// A function's name for reading: demangled (legacy and v0) without the hash; Callgrind's own
/// demangling already did that for most.
fn readable(name: &str) -> String {
    match rustc_demangle::try_demangle(name) {
        Ok(demangled) => format!("{demangled:#}"),
        Err(_) => name.to_owned(),
    }
}

/// One file's costs.
fn parse(text: &str, event: &str, path: &Path) -> Result<Profile> {
    let mut index = None;
    let mut positions = 1;
    let mut names: HashMap<String, String> = HashMap::new();
    let mut current: Option<String> = None;
    let mut callee: Option<String> = None;
    // Set by `calls=`: the next cost line is that call's inclusive cost.
    let mut call_pending = false;
    let mut totals = None;
    let mut functions: BTreeMap<String, Cost> = BTreeMap::new();
    let mut first_line = true;
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = raw.trim_end();
        if line.is_empty() || line.starts_with('#') {
            if first_line && line.starts_with('#') && !line.contains("callgrind") {
                // Not fatal: the header decides.
            }
            first_line = false;
            continue;
        }
        first_line = false;
        let first = line.as_bytes()[0];
        if first.is_ascii_digit() || first == b'+' || first == b'-' || first == b'*' {
            let index = index.ok_or_else(|| bad(path, line_no, "a cost line before `events:`"))?;
            let mut fields = line.split_ascii_whitespace();
            for _ in 0..positions {
                let position = fields
                    .next()
                    .ok_or_else(|| bad(path, line_no, "a cost line without its positions"))?;
                let valid = position == "*"
                    || position
                        .trim_start_matches(['+', '-'])
                        .strip_prefix("0x")
                        .map_or_else(
                            || {
                                position
                                    .trim_start_matches(['+', '-'])
                                    .bytes()
                                    .all(|b| b.is_ascii_digit())
                            },
                            |hex| hex.bytes().all(|b| b.is_ascii_hexdigit()),
                        );
                if !valid {
                    return Err(bad(
                        path,
                        line_no,
                        format!("`{position}` is not a position"),
                    ));
                }
            }
            let mut value = 0u64;
            for (i, counter) in fields.enumerate() {
                let count: u64 = counter
                    .parse()
                    .map_err(|_| bad(path, line_no, format!("`{counter}` is not a count")))?;
                if i == index {
                    value = count;
                }
            }
            let function = current
                .as_ref()
                .ok_or_else(|| bad(path, line_no, "a cost line outside any `fn=`"))?;
            let cost = functions.entry(function.clone()).or_default();
            if call_pending {
                call_pending = false;
                let target = callee
                    .as_ref()
                    .ok_or_else(|| bad(path, line_no, "`calls=` without a `cfn=`"))?;
                if target != function {
                    cost.inclusive += value;
                }
            } else {
                cost.exclusive += value;
                cost.inclusive += value;
            }
            continue;
        }
        if call_pending {
            return Err(bad(
                path,
                line_no,
                "`calls=` must be followed by its cost line",
            ));
        }
        if let Some((key, value)) = line.split_once('=') {
            match key {
                "fn" => {
                    current = Some(readable(&resolve(value, &mut names, path, line_no)?));
                    callee = None;
                }
                "cfn" => callee = Some(readable(&resolve(value, &mut names, path, line_no)?)),
                "calls" => call_pending = true,
                "ob" | "fl" | "fi" | "fe" | "cob" | "cfi" | "cfl" | "jump" | "jcnd" => {}
                _ => return Err(bad(path, line_no, format!("unknown line `{key}=`"))),
            }
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            match key.trim() {
                "events" => {
                    let events: Vec<&str> = value.split_ascii_whitespace().collect();
                    index = Some(events.iter().position(|e| *e == event).ok_or_else(|| {
                        bad(
                            path,
                            line_no,
                            format!("no `{event}` among the events ({})", events.join(" ")),
                        )
                    })?);
                }
                "positions" => positions = value.split_ascii_whitespace().count().max(1),
                "totals" | "summary" => {
                    let index =
                        index.ok_or_else(|| bad(path, line_no, "totals before `events:`"))?;
                    let counters: Vec<&str> = value.split_ascii_whitespace().collect();
                    let total = match counters.get(index) {
                        Some(count) => count
                            .parse::<u64>()
                            .map_err(|_| bad(path, line_no, format!("`{count}` is not a count")))?,
                        None => 0,
                    };
                    totals = Some(total);
                }
                _ => {}
            }
            continue;
        }
        return Err(bad(
            path,
            line_no,
            format!("`{line}` is not a Callgrind line"),
        ));
    }
    if call_pending {
        return Err(bad(
            path,
            text.lines().count(),
            "the file ends after `calls=`: truncated",
        ));
    }
    if index.is_none() {
        return Err(Error::InvalidValue {
            path: path.to_owned(),
            field: "events".into(),
            reason: "no `events:` header: not a Callgrind output file".into(),
        });
    }
    let sum: u64 = functions.values().map(|c| c.exclusive).sum();
    let total = totals.ok_or_else(|| Error::InvalidValue {
        path: path.to_owned(),
        field: "totals".into(),
        reason: "no `totals:` line: the file is truncated".into(),
    })?;
    if sum != total {
        return Err(Error::InvalidValue {
            path: path.to_owned(),
            field: "totals".into(),
            reason: format!(
                "the functions' costs sum to {sum}, `totals:` says {total}: truncated or damaged"
            ),
        });
    }
    Ok(Profile {
        event: event.to_owned(),
        total,
        functions,
        omitted: 0,
    })
}

/// What [`crate_of`] calls a function without a Rust path: C, assembly, the loader and the
/// C library (`memcpy`, `ring_core_0_17_14__chacha20_poly1305_seal_avx2`, `(below main)`).
pub const NO_CRATE: &str = "(no Rust path)";

/// The crate a function's code belongs to: the first segment of its path (`core` for
/// `core::ptr::drop_in_place<alloc::vec::Vec<u8>>`), of the type for a trait method
/// (`alloc` for `<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop`), else [`NO_CRATE`].
pub fn crate_of(function: &str) -> &str {
    let path = function.trim_start_matches(['<', '&', '*']);
    let path = ["mut ", "const ", "dyn "]
        .iter()
        .fold(path, |p, prefix| p.strip_prefix(prefix).unwrap_or(p));
    let end = path
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(path.len());
    if end > 0 && path[end..].starts_with("::") {
        &path[..end]
    } else {
        NO_CRATE
    }
}

impl Profile {
    /// The same costs summed by crate ([`crate_of`]): each crate's exclusive cost is its
    /// functions' sum, its inclusive cost the largest of theirs (a crate's functions call each
    /// other: their inclusive costs overlap). `None` for a profile that left functions out,
    /// whose crates are not all known.
    pub fn by_crate(&self) -> Option<Self> {
        if self.omitted > 0 {
            return None;
        }
        let mut crates: BTreeMap<String, Cost> = BTreeMap::new();
        for (name, cost) in &self.functions {
            let entry = crates.entry(crate_of(name).to_owned()).or_default();
            entry.exclusive += cost.exclusive;
            entry.inclusive = entry.inclusive.max(cost.inclusive);
        }
        Some(Self {
            event: self.event.clone(),
            total: self.total,
            functions: crates,
            omitted: 0,
        })
    }
}

/// How many functions a stored profile keeps: those of largest exclusive cost. Enough to name
/// where a change went; the rest of a run's cost stays in its total.
pub const STORED_FUNCTIONS: usize = 50;
/// The most functions a profile document may list (a wire document is checked against it).
const MAX_DOCUMENT_FUNCTIONS: usize = 1_000;
/// The longest function name a profile document may hold, in bytes.
const MAX_NAME_BYTES: usize = 1_000;

/// A profile as JSON: a store's `profiles.document`, a run document's `profiles` (docs/schema.md).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileDocument {
    /// The event (`Ir`).
    pub event: String,
    /// The run's total of the event.
    pub total: u64,
    /// How many functions are left out; their cost is in `total`.
    pub omitted: usize,
    /// `[name, exclusive, inclusive]`, largest exclusive cost first.
    pub functions: Vec<(String, u64, u64)>,
}

impl Profile {
    /// The profile as its document, largest exclusive cost first.
    pub fn to_document(&self) -> ProfileDocument {
        let mut functions: Vec<(String, u64, u64)> = self
            .functions
            .iter()
            .map(|(name, cost)| (name.clone(), cost.exclusive, cost.inclusive))
            .collect();
        functions.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        ProfileDocument {
            event: self.event.clone(),
            total: self.total,
            omitted: self.omitted,
            functions,
        }
    }

    /// A document read back, checked: an event, names that are names (unique, no control
    /// characters, at most 1,000 bytes), at most 1,000 functions, and exclusive costs that fit
    /// the total (equal it when nothing was left out). The error names the field at fault.
    pub fn from_document(document: ProfileDocument) -> std::result::Result<Self, String> {
        if document.event.is_empty() || document.event.chars().any(char::is_control) {
            return Err("event: not an event name".into());
        }
        if document.functions.len() > MAX_DOCUMENT_FUNCTIONS {
            return Err(format!(
                "functions: {} functions, at most {MAX_DOCUMENT_FUNCTIONS}",
                document.functions.len()
            ));
        }
        let mut functions = BTreeMap::new();
        let mut sum: u128 = 0;
        for (i, (name, exclusive, inclusive)) in document.functions.into_iter().enumerate() {
            if name.is_empty() || name.len() > MAX_NAME_BYTES || name.chars().any(char::is_control)
            {
                return Err(format!(
                    "functions[{i}][0]: not a function name (empty, control characters or over {MAX_NAME_BYTES} bytes)"
                ));
            }
            sum += u128::from(exclusive);
            if functions
                .insert(
                    name,
                    Cost {
                        exclusive,
                        inclusive,
                    },
                )
                .is_some()
            {
                return Err(format!("functions[{i}][0]: the function is listed twice"));
            }
        }
        let total = u128::from(document.total);
        if sum > total || (document.omitted == 0 && sum != total) {
            return Err(format!(
                "total: {} but the functions' exclusive costs sum to {sum}{}",
                document.total,
                if document.omitted == 0 {
                    " and none is left out"
                } else {
                    ""
                }
            ));
        }
        Ok(Self {
            event: document.event,
            total: document.total,
            functions,
            omitted: document.omitted,
        })
    }
}

/// One function's exclusive cost on each side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionChange {
    /// The function (or "everything else").
    pub function: String,
    /// Its exclusive cost in the base run.
    pub base: u64,
    /// And in the head run.
    pub head: u64,
}

impl FunctionChange {
    /// Head minus base.
    pub fn change(&self) -> i128 {
        i128::from(self.head) - i128::from(self.base)
    }
}

/// Where a change went: the functions whose exclusive cost changed most, and everything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    /// The event (`Ir`).
    pub event: String,
    /// The base run's total.
    pub base_total: u64,
    /// The head run's total.
    pub head_total: u64,
    /// Largest change first (by size, either way); only functions that changed.
    pub rows: Vec<FunctionChange>,
    /// Every other function together: the rows and this sum exactly to the totals' change.
    pub rest: FunctionChange,
}

impl Explained {
    /// Head's total minus base's.
    pub fn change(&self) -> i128 {
        i128::from(self.head_total) - i128::from(self.base_total)
    }
}

/// The `top` functions whose exclusive cost changed most from `base` to `head`. A function
/// one side left out (a stored profile keeps the largest) is summed into everything else,
/// never shown with a guessed cost.
pub fn explain(base: &Profile, head: &Profile, top: usize) -> Explained {
    let mut changes: Vec<FunctionChange> = base
        .functions
        .keys()
        .chain(head.functions.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|name| base.knows(name) && head.knows(name))
        .map(|name| FunctionChange {
            function: name.clone(),
            base: base.functions.get(name).map_or(0, |c| c.exclusive),
            head: head.functions.get(name).map_or(0, |c| c.exclusive),
        })
        .filter(|c| c.base != c.head)
        .collect();
    changes.sort_by(|a, b| {
        b.change()
            .abs()
            .cmp(&a.change().abs())
            .then_with(|| a.function.cmp(&b.function))
    });
    let rows: Vec<FunctionChange> = changes.into_iter().take(top).collect();
    let shown_base: u64 = rows.iter().map(|r| r.base).sum();
    let shown_head: u64 = rows.iter().map(|r| r.head).sum();
    Explained {
        event: head.event.clone(),
        base_total: base.total,
        head_total: head.total,
        rest: FunctionChange {
            function: "everything else".into(),
            base: base.total - shown_base,
            head: head.total - shown_head,
        },
        rows,
    }
}

/// The Callgrind output files of one run under `dir` (gungraun's `callgrind.*.out`, its parts
/// and threads; not its `.old` files of the run before), sorted.
pub fn output_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::ReadFile {
        path: dir.to_owned(),
        source,
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::ReadFile {
            path: dir.to_owned(),
            source,
        })?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("callgrind.") && name.ends_with(".out") {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    /// The rows and everything else sum exactly to the change of the totals.
    fn assert_adds_up(explained: &Explained) {
        let rows: i128 = explained.rows.iter().map(FunctionChange::change).sum();
        assert_eq!(
            rows + explained.rest.change(),
            explained.change(),
            "{explained:#?}"
        );
    }

    const FILE: &str = "\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  bench
part: 1

desc: I1 cache:
positions: line
events: Ir Dr

fl=(1) src/lib.rs
fn=(1) main
16 20 2
cfl=(1)
cfn=(2) seal
calls=1 30
16 400 10
cfn=(3) _ZN4core3ptr13drop_in_place17h0123456789abcdefE
calls=2 40
+1 30
fn=(2)
30 100
+1 200 7
cfn=(2)
calls=3 30
* 250
-1 100
fn=(3)
40 30
fn=(below main)
0 5
cfn=(1)
calls=1 16
0 450

totals: 455 19
";

    #[test]
    fn costs_by_function_with_compressed_names_calls_and_recursion() {
        let mut profile = Profile::empty(INSTRUCTIONS);
        profile.add(FILE, Path::new("callgrind.bench.out")).unwrap();
        assert_eq!(profile.total, 455);
        assert_eq!(
            profile.functions["main"],
            Cost {
                exclusive: 20,
                inclusive: 20 + 400 + 30
            }
        );
        // `seal` calls itself: that call is in its own lines already.
        assert_eq!(
            profile.functions["seal"],
            Cost {
                exclusive: 400,
                inclusive: 400
            }
        );
        // The legacy-mangled name is demangled, its hash left out.
        assert_eq!(
            profile.functions["core::ptr::drop_in_place"],
            Cost {
                exclusive: 30,
                inclusive: 30
            }
        );
        // Valgrind's `(below main)` is a name, not a compressed one.
        assert_eq!(
            profile.functions["(below main)"],
            Cost {
                exclusive: 5,
                inclusive: 455
            }
        );
        // A second part of the same run adds up.
        profile
            .add(FILE, Path::new("callgrind.bench.2.out"))
            .unwrap();
        assert_eq!(profile.total, 910);
        assert_eq!(profile.functions["seal"].exclusive, 800);
    }

    #[test]
    fn truncated_damaged_and_foreign_files_are_refused_with_the_place_named() {
        let path = Path::new("callgrind.x.out");
        let truncated = &FILE[..=FILE.find("\nfn=(3)").unwrap()];
        let error = parse(truncated, INSTRUCTIONS, path)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("no `totals:` line: the file is truncated"),
            "{error}"
        );
        let cut_after_call = &FILE[..FILE.find("* 250").unwrap()];
        let error = parse(cut_after_call, INSTRUCTIONS, path)
            .unwrap_err()
            .to_string();
        assert!(error.contains("truncated"), "{error}");
        let short = FILE.replace("totals: 455 19", "totals: 700 19");
        let error = parse(&short, INSTRUCTIONS, path).unwrap_err().to_string();
        assert!(error.contains("sum to 455, `totals:` says 700"), "{error}");
        let error = parse("{\"not\": \"callgrind\"}\n", INSTRUCTIONS, path)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(
                "callgrind.x.out: field `events`: no `events:` header: not a Callgrind output file"
            ),
            "{error}"
        );
        let error = parse(&FILE.replace("fn=(2)\n", "fn=(9)\n"), INSTRUCTIONS, path)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`(9)` refers to a name never defined"),
            "{error}"
        );
        let error = parse(FILE, "Bc", path).unwrap_err().to_string();
        assert!(
            error.contains("no `Bc` among the events (Ir Dr)"),
            "{error}"
        );
    }

    #[test]
    fn gungrauns_files_read_to_the_count_its_summary_gives() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let read = |name: &str| {
            Profile::read(&[fixtures.join("callgrind").join(name)], INSTRUCTIONS).unwrap()
        };
        let base = read("seal-base.out");
        let (_, counted) = crate::gungraun::read_file(
            &fixtures.join("gungraun/aead-seal-chacha20_poly1305_16_kib.summary.json"),
        )
        .unwrap();
        let instructions = counted
            .iter()
            .find(|m| m.id.as_str().ends_with("/instructions"))
            .unwrap();
        assert_eq!(base.total as f64, instructions.median.point);
        // Sealed twice: ring's sealing routine does the whole change, twice its work.
        let head = read("seal-head-sealed-twice.out");
        let explained = explain(&base, &head, 5);
        assert_eq!(explained.change(), 182_255 - 91_234);
        let first = &explained.rows[0];
        assert_eq!(
            first.function,
            "ring_core_0_17_14__chacha20_poly1305_seal_avx2"
        );
        assert_eq!(first.head, 2 * first.base);
        assert!(
            first.change() * 100 >= explained.change() * 99,
            "{explained:#?}"
        );
        assert_adds_up(&explained);
        // The benchmark's own function calls the seal: inclusive holds it, exclusive does not.
        let own = &base.functions["benchgate_sample_workloads::seal"];
        assert!(own.inclusive > first.base && own.exclusive < 100, "{own:?}");
    }

    #[test]
    fn the_rows_and_everything_else_sum_to_the_change() {
        let mut base = Profile::empty(INSTRUCTIONS);
        base.add(FILE, Path::new("base")).unwrap();
        // The head's `seal` does 300 more, `main` 5 fewer, a new `helper` 40.
        let head_text = FILE
            .replace("+1 200 7", "+1 500 7")
            .replace("16 20 2", "16 15 2")
            .replace("fn=(3)\n40 30\n", "fn=(3)\n40 30\nfn=(4) helper\n50 40\n")
            .replace("totals: 455 19", "totals: 790 19");
        let mut head = Profile::empty(INSTRUCTIONS);
        head.add(&head_text, Path::new("head")).unwrap();
        let explained = explain(&base, &head, 2);
        assert_eq!(explained.change(), 335);
        let names: Vec<&str> = explained.rows.iter().map(|r| r.function.as_str()).collect();
        assert_eq!(names, ["seal", "helper"]);
        assert_eq!(explained.rows[0].change(), 300);
        assert_eq!(explained.rest.change(), -5);
        assert_adds_up(&explained);
    }

    #[test]
    fn a_kept_profile_explains_with_what_it_knows_and_round_trips_as_a_document() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/callgrind");
        let read = |name: &str| Profile::read(&[fixtures.join(name)], INSTRUCTIONS).unwrap();
        let (base, head) = (read("seal-base.out"), read("seal-head-sealed-twice.out"));
        let whole = explain(&base, &head, 5);
        // Kept to its three largest functions, each side still explains the seal first and
        // adds up; functions one side left out are in everything else, not in a row.
        let (kept_base, kept_head) = (base.keep_largest(3), head.keep_largest(3));
        assert_eq!(kept_base.functions.len(), 3);
        assert_eq!(kept_base.omitted, base.functions.len() - 3);
        assert_eq!(kept_base.total, base.total);
        let kept = explain(&kept_base, &kept_head, 5);
        assert_eq!(kept.rows[0], whole.rows[0]);
        assert_eq!(kept.change(), whole.change());
        assert_adds_up(&kept);
        for row in &kept.rows {
            assert!(
                kept_base.functions.contains_key(&row.function)
                    && kept_head.functions.contains_key(&row.function),
                "{row:?} was left out on a side"
            );
        }
        // Against a whole profile, a function the kept side does not list is still unknown.
        let mixed = explain(&kept_base, &head, 50);
        assert_adds_up(&mixed);
        assert!(
            mixed
                .rows
                .iter()
                .all(|r| kept_base.functions.contains_key(&r.function))
        );

        let document = kept_base.to_document();
        assert_eq!(document.functions[0].0, whole.rows[0].function);
        let json = serde_json::to_string(&document).unwrap();
        let back: ProfileDocument = serde_json::from_str(&json).unwrap();
        assert_eq!(Profile::from_document(back).unwrap(), kept_base);
        assert_eq!(Profile::from_document(base.to_document()).unwrap(), base);

        // Damaged documents name the field.
        let mut over = base.to_document();
        over.functions[0].1 += 1;
        let error = Profile::from_document(over).unwrap_err();
        assert!(error.starts_with("total: 91234 but"), "{error}");
        let mut twice = kept_base.to_document();
        twice.functions[1].0 = twice.functions[0].0.clone();
        assert_eq!(
            Profile::from_document(twice).unwrap_err(),
            "functions[1][0]: the function is listed twice"
        );
        let mut control = kept_base.to_document();
        control.functions[2].0 = "a\u{1b}[31m".into();
        assert!(
            Profile::from_document(control)
                .unwrap_err()
                .starts_with("functions[2][0]: not a function name")
        );
    }

    #[test]
    fn functions_group_by_the_crate_their_path_starts_with() {
        for (function, expected) in [
            ("core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "core"),
            (
                "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop",
                "alloc",
            ),
            (
                "<&mut std::io::stdio::Stdout as std::io::Write>::flush",
                "std",
            ),
            (
                "benchgate_sample_workloads::seal",
                "benchgate_sample_workloads",
            ),
            ("ring_core_0_17_14__chacha20_poly1305_seal_avx2", NO_CRATE),
            ("(below main)", NO_CRATE),
            ("<T as core::fmt::Debug>::fmt", NO_CRATE),
        ] {
            assert_eq!(crate_of(function), expected, "{function}");
        }
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/callgrind");
        let read = |name: &str| Profile::read(&[fixtures.join(name)], INSTRUCTIONS).unwrap();
        let (base, head) = (read("seal-base.out"), read("seal-head-sealed-twice.out"));
        let (base, head) = (base.by_crate().unwrap(), head.by_crate().unwrap());
        let explained = explain(&base, &head, 3);
        assert_adds_up(&explained);
        let names: Vec<&str> = explained.rows.iter().map(|r| r.function.as_str()).collect();
        // ring's C and assembly first, then ring's Rust, then the benchmark's own crate.
        assert_eq!(names, [NO_CRATE, "ring", "benchgate_sample_workloads"]);
        // The sealing routine and poly_hash_ad_internal: ring's C and assembly.
        assert_eq!(explained.rows[0].change(), 90_848 + 75);
        assert!(base.keep_largest(3).by_crate().is_none());
    }
}
