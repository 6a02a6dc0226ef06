//! The user's `cargo bench` command, read as cargo and Criterion read it: what builds, what
//! every bench executable is given, and the user's own benchmark filter, which benchgate's
//! exact-id filter replaces when later rounds narrow to the undecided benchmarks.
//!
//! Criterion takes one positional filter; a second one is an error (`Found argument ... which
//! wasn't expected` in 0.4, `unexpected argument` in 0.8). Telling the filter from an option's
//! value needs the options that take one, listed below for Criterion 0.3 to 0.8 and cargo.

use anyhow::bail;

/// Criterion's long options that take a value (0.3 to 0.8), and libtest's, which a bench
/// executable without Criterion gets.
const CRITERION_VALUE_OPTIONS: &[&str] = &[
    "color",
    "colour",
    "save-baseline",
    "baseline",
    "baseline-lenient",
    "load-baseline",
    "format",
    "profile-time",
    "sample-size",
    "warm-up-time",
    "measurement-time",
    "nresamples",
    "noise-threshold",
    "confidence-level",
    "significance-level",
    "plotting-backend",
    "output-format",
    "logfile",
    "test-threads",
    "skip",
    "shuffle-seed",
];

/// Criterion's short options that take a value: `-c` colour, `-s` save-baseline, `-b` baseline.
const CRITERION_VALUE_SHORTS: &[char] = &['c', 's', 'b', 'Z'];

/// `cargo bench`'s options that take a value (`--bench NAME` too: alone, cargo only lists).
const CARGO_VALUE_OPTIONS: &[&str] = &[
    "package",
    "exclude",
    "bin",
    "example",
    "test",
    "bench",
    "features",
    "jobs",
    "profile",
    "target",
    "target-dir",
    "manifest-path",
    "lockfile-path",
    "message-format",
    "color",
    "config",
    "artifact-dir",
];

const CARGO_VALUE_SHORTS: &[char] = &['p', 'F', 'j', 'Z'];

/// Options that make Criterion not measure: a bench command carrying one cannot be compared.
const NOT_MEASURING: &[&str] = &["list", "test", "profile-time", "load-baseline"];

/// Options that compare against a saved Criterion baseline, which a round's fresh output
/// directory does not have: dropped, and said so.
const SAVED_BASELINE: &[&str] = &["baseline", "baseline-lenient"];

/// A `cargo bench ...` command split into what builds and what each executable is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoBench {
    /// `cargo bench <options>`, without a benchmark name and without the arguments after `--`.
    pub build: Vec<String>,
    /// The arguments after `--` (and cargo's positional benchmark name) with the user's filter,
    /// `--exact` and saved-baseline comparisons taken out.
    options: Vec<String>,
    /// The user's benchmark filter: cargo's positional `BENCHNAME` or Criterion's `FILTER`.
    filter: Option<String>,
    /// `--exact`: the filter is a benchmark id, not a regular expression.
    exact: bool,
    /// What was dropped from the command, in the words printed.
    pub dropped: Vec<String>,
}

impl CargoBench {
    /// `Ok(None)` for a command that is not `cargo bench` (it builds as it runs); an error for a
    /// `cargo bench` command benchgate cannot run as rounds.
    pub fn parse(command: &[String]) -> anyhow::Result<Option<Self>> {
        let is_cargo_bench = command.first().is_some_and(|c| c == "cargo")
            && command.get(1).is_some_and(|c| c == "bench");
        if !is_cargo_bench {
            return Ok(None);
        }
        let cargo_part = command.iter().take_while(|a| *a != "--").count();
        let mut build = vec!["cargo".to_owned(), "bench".to_owned()];
        // Cargo hands its positional benchmark name to every executable before the rest.
        let mut executable_words = Vec::new();
        for word in split_words(
            &command[2..cargo_part],
            CARGO_VALUE_OPTIONS,
            CARGO_VALUE_SHORTS,
        ) {
            match word {
                Word::Positional(name) => executable_words.push(name),
                Word::Option(parts) => build.extend(parts),
            }
        }
        executable_words.extend(command.iter().skip(cargo_part + 1).cloned());
        let mut bench = Self {
            build,
            options: Vec::new(),
            filter: None,
            exact: false,
            dropped: Vec::new(),
        };
        let mut filters = Vec::new();
        for word in split_words(
            &executable_words,
            CRITERION_VALUE_OPTIONS,
            CRITERION_VALUE_SHORTS,
        ) {
            match word {
                Word::Positional(filter) => filters.push(filter),
                Word::Option(parts) => bench.take_option(parts)?,
            }
        }
        if filters.len() > 1 {
            bail!(
                "the bench command gives Criterion {} benchmark filters ({}); Criterion takes one",
                filters.len(),
                filters.join(", ")
            );
        }
        bench.filter = filters.pop();
        Ok(Some(bench))
    }

    fn take_option(&mut self, parts: Vec<String>) -> anyhow::Result<()> {
        let name = option_name(&parts[0]);
        if NOT_MEASURING.contains(&name) {
            bail!(
                "the bench command passes `{}`, with which Criterion does not measure; leave it out",
                parts.join(" ")
            );
        }
        if name == "exact" {
            self.exact = true;
        } else if SAVED_BASELINE.contains(&name) {
            self.dropped.push(parts.join(" "));
        } else {
            self.options.extend(parts);
        }
        Ok(())
    }

    /// The user's filter as given, if any.
    pub fn user_filter(&self) -> Option<&str> {
        self.filter.as_deref()
    }

    /// The value the user gave Criterion's long option `name` (`--name V` or `--name=V`).
    pub fn option_value(&self, name: &str) -> Option<&str> {
        let flag = format!("--{name}");
        let mut words = self.options.iter();
        while let Some(word) = words.next() {
            if *word == flag {
                return words.next().map(String::as_str);
            }
            if let Some(value) = word.strip_prefix(&flag).and_then(|r| r.strip_prefix('=')) {
                return Some(value);
            }
        }
        None
    }

    /// Whether the user gave Criterion's long option `name`, with or without a value.
    pub fn has_option(&self, name: &str) -> bool {
        let flag = format!("--{name}");
        self.options
            .iter()
            .any(|w| *w == flag || w.starts_with(&format!("{flag}=")))
    }

    /// [`Self::executable_args_each`] of a few ids, without `extra` options.
    #[cfg(test)]
    pub fn executable_args(&self, only: Option<&[String]>) -> Vec<String> {
        self.executable_args_with(only, &[])
    }

    /// [`Self::executable_args_each`] of a few ids: one filter.
    #[cfg(test)]
    pub fn executable_args_with(&self, only: Option<&[String]>, extra: &[String]) -> Vec<String> {
        let mut each = self.executable_args_each(only, extra);
        assert_eq!(each.len(), 1, "a test's few ids are one filter");
        each.remove(0)
    }

    /// What every bench executable is given, once per element: [`Self::user_args`], or with
    /// `only` the same with an exact-id filter in place of the user's (the ids a later round
    /// re-runs are among those the user's filter selected), in as many parts as
    /// [`exact_filters`] makes: the executable is run once with each, and together they select
    /// `only`.
    pub fn executable_args_each(
        &self,
        only: Option<&[String]>,
        extra: &[String],
    ) -> Vec<Vec<String>> {
        match only {
            Some(ids) => {
                let args = self.options_args(extra);
                exact_filters(ids)
                    .into_iter()
                    .map(|filter| {
                        let mut each = args.clone();
                        each.push(filter);
                        each
                    })
                    .collect()
            }
            None => vec![self.user_args(extra)],
        }
    }

    /// What the user's command gives every executable: `--bench`, the options, `extra` options
    /// (an A/B plan's timing) after the user's, in place of the user's options of the same names
    /// (Criterion's clap refuses an option given twice), and the user's filter.
    pub fn user_args(&self, extra: &[String]) -> Vec<String> {
        let mut args = self.options_args(extra);
        if self.exact {
            args.push("--exact".to_owned());
        }
        args.extend(self.filter.iter().cloned());
        args
    }

    /// [`Self::user_args`] without the user's filter.
    fn options_args(&self, extra: &[String]) -> Vec<String> {
        let replaced: Vec<&str> = extra
            .iter()
            .filter(|w| w.starts_with("--"))
            .map(|w| option_name(w))
            .collect();
        let mut args = vec!["--bench".to_owned()];
        for word in split_words(
            &self.options,
            CRITERION_VALUE_OPTIONS,
            CRITERION_VALUE_SHORTS,
        ) {
            match word {
                Word::Option(parts) if replaced.contains(&option_name(&parts[0])) => {}
                Word::Option(parts) => args.extend(parts),
                Word::Positional(word) => args.push(word),
            }
        }
        args.extend(extra.iter().cloned());
        args
    }

    /// What the user's own command gives every executable, with `--list`.
    pub fn list_args(&self) -> Vec<String> {
        let mut args = self.user_args(&[]);
        args.push("--list".to_owned());
        args
    }

    /// [`Self::executable_args_each`] for Criterion's `--list`: the options that conflict with
    /// it left out.
    pub fn list_args_each(&self, only: Option<&[String]>) -> Vec<Vec<String>> {
        let mut each = self.executable_args_each(only, &[]);
        for args in &mut each {
            args.push("--list".to_owned());
        }
        each
    }
}

/// One word of a command line: an option with its value, if any, or a positional argument.
enum Word {
    Option(Vec<String>),
    Positional(String),
}

fn option_name(word: &str) -> &str {
    let name = word.trim_start_matches('-');
    name.split_once('=').map_or(name, |(name, _)| name)
}

/// Splits `words` into options (with the value the next word holds, for the options listed
/// in `long`/`short`) and positional arguments.
fn split_words(words: &[String], long: &[&str], short: &[char]) -> Vec<Word> {
    let mut out = Vec::new();
    let mut iter = words.iter();
    while let Some(word) = iter.next() {
        let word = word.as_str();
        let takes_next = if let Some(rest) = word.strip_prefix("--") {
            !rest.contains('=') && long.contains(&rest)
        } else if let Some(rest) = word.strip_prefix('-').filter(|r| !r.is_empty()) {
            let mut chars = rest.chars();
            chars.next().is_some_and(|c| short.contains(&c)) && chars.next().is_none()
        } else {
            out.push(Word::Positional(word.to_owned()));
            continue;
        };
        let mut parts = vec![word.to_owned()];
        if takes_next && let Some(value) = iter.next() {
            parts.push(value.clone());
        }
        out.push(Word::Option(parts));
    }
    out
}

/// The longest exact-id filter one run is given. Linux refuses to start a program with any one
/// argument over 128 KiB (`MAX_ARG_STRLEN`: "Argument list too long"), which a filter of every
/// id in a suite of a thousand long-named benchmarks is; Windows takes 32 K characters for the
/// whole command line. A filter this long is also a small regular expression for Criterion to
/// compile.
pub const MAX_FILTER_BYTES: usize = 16 * 1024;

/// Criterion filters that together match exactly these benchmark ids, each at most
/// [`MAX_FILTER_BYTES`] long (an id longer than that alone is a filter of its own), in the ids'
/// order: one filter for all of them, unless they are many.
///
/// Criterion matches its filter against a benchmark's whole id, but lists (and benchgate
/// stores) a second benchmark of the same id as `id #2`: for an id ending in ` #N` the filter
/// also matches the id without it, which runs both (cryptoBench's `aes_128_gcm-1MB #2`). It
/// lists an id over 100 bytes cut short (`...`): such a title matches every id it is the start
/// of.
pub fn exact_filters(ids: &[String]) -> Vec<String> {
    // `^(?:` and `)$`, and a `|` between ids.
    const FRAME: usize = 6;
    let mut filters = Vec::new();
    let mut part: Vec<String> = Vec::new();
    let mut length = FRAME;
    for id in ids {
        let escaped = match (cut_short(id), made_unique(id)) {
            (Some(head), _) => format!("{}.*", escape(head)),
            (None, Some(stem)) => format!("{}|{}", escape(id), escape(stem)),
            (None, None) => escape(id),
        };
        if !part.is_empty() && length + 1 + escaped.len() > MAX_FILTER_BYTES {
            filters.push(format!("^(?:{})$", part.join("|")));
            part.clear();
            length = FRAME;
        }
        length += escaped.len() + usize::from(!part.is_empty());
        part.push(escaped);
    }
    filters.push(format!("^(?:{})$", part.join("|")));
    filters
}

/// The longest title Criterion lists for a benchmark (0.3 to 0.8: `MAX_TITLE_LEN`); a longer id
/// is listed cut to this many bytes with `...` after it (and ` #2` after that, should two cut
/// titles be the same).
const CRITERION_TITLE_MAX: usize = 100;

/// The start of the id a title Criterion cut short ([`CRITERION_TITLE_MAX`]) keeps, or `None`
/// for a whole id.
fn cut_short(title: &str) -> Option<&str> {
    let title = made_unique(title).unwrap_or(title);
    title
        .strip_suffix("...")
        .filter(|head| head.len() + 4 > CRITERION_TITLE_MAX && head.len() <= CRITERION_TITLE_MAX)
}

/// The id Criterion found twice in one run, of a title it made unique (`aes-1MB #2`).
fn made_unique(title: &str) -> Option<&str> {
    let (stem, n) = title.rsplit_once(" #")?;
    (!stem.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

/// An id with the characters a regular expression reads escaped. (Criterion's filter is a
/// `regex` crate expression; benchgate does not otherwise need the crate.)
fn escape(id: &str) -> String {
    id.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// The benchmark ids in the output of Criterion's `--list` (`id: bench` in 0.3 and 0.4,
/// `id: benchmark` from 0.5) or libtest's (`name: bench`); other lines are the bench's own.
pub fn listed_ids(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| {
            line.strip_suffix(": benchmark")
                .or_else(|| line.strip_suffix(": bench"))
        })
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> CargoBench {
        CargoBench::parse(&words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>())
            .unwrap()
            .unwrap()
    }

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| (*id).to_owned()).collect()
    }

    #[test]
    fn the_users_filter_is_replaced_by_the_exact_ids_not_added_to() {
        let bench = parse(&[
            "cargo",
            "bench",
            "--bench",
            "benchmarks",
            "--",
            "--noplot",
            "small_input/(encode|decode)$",
        ]);
        assert_eq!(bench.build, ["cargo", "bench", "--bench", "benchmarks"]);
        assert_eq!(
            bench.executable_args(None),
            ["--bench", "--noplot", "small_input/(encode|decode)$"]
        );
        assert_eq!(
            bench.executable_args(Some(&ids(&["small_input/encode/3"]))),
            ["--bench", "--noplot", r"^(?:small_input/encode/3)$"]
        );
    }

    #[test]
    fn option_values_are_not_filters() {
        let bench = parse(&[
            "cargo",
            "bench",
            "--",
            "--save-baseline",
            "x",
            "--sample-size",
            "10",
            "--measurement-time=3",
            "-s",
            "y",
            "--output-format",
            "bencher",
            "-n",
            "parse",
        ]);
        assert_eq!(bench.user_filter(), Some("parse"));
        assert_eq!(
            bench.executable_args(Some(&ids(&["a"]))),
            [
                "--bench",
                "--save-baseline",
                "x",
                "--sample-size",
                "10",
                "--measurement-time=3",
                "-s",
                "y",
                "--output-format",
                "bencher",
                "-n",
                "^(?:a)$"
            ]
        );
        assert_eq!(bench.option_value("sample-size"), Some("10"));
        assert_eq!(bench.option_value("measurement-time"), Some("3"));
        assert_eq!(bench.option_value("warm-up-time"), None);
        assert!(!bench.has_option("noplot"));
        let no_filter = parse(&["cargo", "bench", "--", "--warm-up-time", "1", "--noplot"]);
        assert_eq!(no_filter.user_filter(), None);
        assert_eq!(no_filter.option_value("warm-up-time"), Some("1"));
        assert!(no_filter.has_option("noplot"));
        assert_eq!(
            no_filter
                .executable_args_with(Some(&ids(&["a"])), &["--sample-size".into(), "20".into()]),
            [
                "--bench",
                "--warm-up-time",
                "1",
                "--noplot",
                "--sample-size",
                "20",
                "^(?:a)$"
            ]
        );
        // A plan's timing takes the place of the user's, in either spelling.
        let timed = parse(&[
            "cargo",
            "bench",
            "--",
            "--warm-up-time",
            "0.5",
            "--measurement-time=1.5",
            "--sample-size",
            "30",
        ]);
        let plan: Vec<String> = ["--warm-up-time", "0.2", "--measurement-time", "0.6"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            timed.executable_args_with(None, &plan),
            [
                "--bench",
                "--sample-size",
                "30",
                "--warm-up-time",
                "0.2",
                "--measurement-time",
                "0.6"
            ]
        );
    }

    #[test]
    fn cargos_benchmark_name_is_the_executables_filter() {
        let bench = parse(&[
            "cargo", "bench", "-p", "zoo", "--locked", "push", "--", "--noplot",
        ]);
        assert_eq!(bench.build, ["cargo", "bench", "-p", "zoo", "--locked"]);
        assert_eq!(bench.executable_args(None), ["--bench", "--noplot", "push"]);
        assert_eq!(
            bench.executable_args(Some(&ids(&["push"]))),
            ["--bench", "--noplot", "^(?:push)$"]
        );
    }

    #[test]
    fn exact_goes_with_the_users_filter_and_saved_baselines_are_dropped() {
        let bench = parse(&[
            "cargo",
            "bench",
            "--",
            "--exact",
            "group/one",
            "--baseline",
            "main",
        ]);
        assert_eq!(bench.dropped, ["--baseline main"]);
        assert_eq!(
            bench.executable_args(None),
            ["--bench", "--exact", "group/one"]
        );
        assert_eq!(
            bench.executable_args(Some(&ids(&["group/one"]))),
            ["--bench", r"^(?:group/one)$"]
        );
    }

    #[test]
    fn commands_that_do_not_measure_or_filter_twice_are_refused() {
        for words in [
            &["cargo", "bench", "--", "--profile-time", "5"][..],
            &["cargo", "bench", "--", "--list"],
            &["cargo", "bench", "--", "--test"],
            &["cargo", "bench", "a", "--", "b"],
        ] {
            let command: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
            assert!(CargoBench::parse(&command).is_err(), "{words:?}");
        }
        let script = ["sh", "bench.sh"].map(String::from).to_vec();
        assert!(CargoBench::parse(&script).unwrap().is_none());
    }

    #[test]
    fn ids_are_read_from_every_criterion_versions_list() {
        let out = "setting up\nsmall_input/encode/3: bench\nparse: benchmark\nx: test\n";
        assert_eq!(listed_ids(out), ["small_input/encode/3", "parse"]);
        assert_eq!(
            exact_filters(&ids(&["a.b/c d", "x-y"])),
            [r"^(?:a\.b/c d|x\-y)$"]
        );
    }

    #[test]
    fn a_title_criterion_cut_short_is_told_from_an_id_that_ends_in_dots() {
        let head = "x".repeat(100);
        assert_eq!(cut_short(&format!("{head}...")), Some(head.as_str()));
        assert_eq!(cut_short(&format!("{head}... #2")), Some(head.as_str()));
        // Cut at a character boundary: 99 bytes, where a two-byte character would not fit.
        assert!(cut_short(&format!("{}...", "x".repeat(99))).is_some());
        assert_eq!(cut_short("loading..."), None);
        assert_eq!(cut_short(&format!("{head}x...")), None);
        assert_eq!(cut_short(&format!("{head}... #")), None);
        assert_eq!(cut_short(&head), None);
        assert_eq!(
            exact_filters(&ids(&[&format!("a.{}...", "x".repeat(98)), "b"])),
            [format!(r"^(?:a\.{}.*|b)$", "x".repeat(98))]
        );
    }

    #[test]
    fn a_title_made_unique_is_filtered_by_the_id_criterion_matches_too() {
        assert_eq!(
            exact_filters(&ids(&["aes-1MB #2", "issue #", "x"])),
            [r"^(?:aes\-1MB \#2|aes\-1MB|issue \#|x)$"]
        );
    }

    #[test]
    fn thousands_of_long_ids_are_parts_of_a_filter_short_enough_to_pass() {
        // 1,200 ids of 127 characters: 156 KB in one filter, past Linux's 128 KiB a program
        // argument, which `ab` on such a suite failed to start with.
        let long: Vec<String> = (0..1200)
            .map(|i| format!("a_group_whose_benchmarks_carry_long_parameterised_names/input_of_a_shape_described_at_length_so_that_the_id_is_long_(case {i:04})"))
            .collect();
        let whole: usize = long.iter().map(|id| id.len() + 3).sum();
        assert!(whole > 128 * 1024, "{whole}");
        let filters = exact_filters(&long);
        let lengths: Vec<usize> = filters.iter().map(String::len).collect();
        assert_eq!(filters.len(), 10, "{lengths:?}");
        // Full parts, but for the last.
        assert!(
            lengths[..9]
                .iter()
                .all(|&n| n <= MAX_FILTER_BYTES && n > MAX_FILTER_BYTES - 131),
            "{lengths:?}"
        );
        // Each id in exactly one part, in order, escaped as one filter would have it.
        let mut parts = Vec::new();
        for filter in &filters {
            let inner = filter
                .strip_prefix("^(?:")
                .unwrap()
                .strip_suffix(")$")
                .unwrap();
            parts.extend(inner.split('|').map(str::to_owned));
        }
        assert_eq!(parts.len(), 1200);
        assert_eq!(
            parts[7],
            r"a_group_whose_benchmarks_carry_long_parameterised_names/input_of_a_shape_described_at_length_so_that_the_id_is_long_\(case 0007\)"
        );
        assert!(
            parts
                .iter()
                .zip(&long)
                .all(|(part, id)| part.replace('\\', "") == *id)
        );
        // An id longer than a part is a part of its own.
        let huge = "x".repeat(MAX_FILTER_BYTES + 10);
        let filters = exact_filters(&ids(&["a", &huge, "b"]));
        assert_eq!(
            filters,
            [
                r"^(?:a)$".to_owned(),
                format!("^(?:{huge})$"),
                r"^(?:b)$".to_owned()
            ]
        );
        // Each is run: a bench command's arguments once per part.
        let bench = CargoBench::parse(&ids(&["cargo", "bench", "--", "--noplot"]))
            .unwrap()
            .unwrap();
        let each = bench.executable_args_each(Some(&long), &[]);
        assert_eq!(each.len(), 10);
        assert!(
            each.iter()
                .all(|args| args[..2] == ["--bench", "--noplot"] && args.len() == 3)
        );
    }
}
