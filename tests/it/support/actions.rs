//! A small runner for composite actions, for the Action's end-to-end test. It runs `action.yml`'s
//! steps the way GitHub's runner does: inputs (with their defaults) reach steps only through the
//! expressions `action.yml` writes; each `run:` step is a `bash --noprofile --norc -eo pipefail`
//! script in a clean environment holding the `GITHUB_*` and `RUNNER_*` variables, with fresh
//! `GITHUB_OUTPUT`, `GITHUB_ENV`, `GITHUB_PATH` and `GITHUB_STEP_SUMMARY` files that are read
//! back after it; `if:` conditions are evaluated; a failed step skips the rest; the action's
//! outputs are evaluated from its steps' outputs. `actions/cache` is played by a local directory
//! (restore by key, then by prefix; save after a successful job). Anything else it does not
//! understand (another `uses:`, an expression it cannot evaluate) fails the test rather than
//! being skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

/// One job: the checkout, the event and the `github` context the action runs under.
pub struct Job {
    /// `GITHUB_ACTION_PATH`: the action's own checkout.
    pub action_dir: PathBuf,
    /// `GITHUB_WORKSPACE`: the repository under test, checked out.
    pub workspace: PathBuf,
    /// `RUNNER_TEMP`, and where the step files are kept.
    pub temp: PathBuf,
    /// Where `actions/cache` keeps its entries (one directory per key).
    pub cache: PathBuf,
    /// `github.event_name`.
    pub event_name: String,
    /// The event payload, written to `GITHUB_EVENT_PATH`.
    pub event: Value,
    /// The rest of the `github` context: `token`, `repository`, `sha`, `ref`, `base_ref`,
    /// `head_ref`, `run_id`, `api_url`, ...
    pub github: BTreeMap<String, String>,
    /// The job's `env:`.
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failure(Option<i32>),
    Skipped,
}

#[derive(Debug)]
pub struct StepRun {
    pub name: String,
    pub outcome: Outcome,
    /// What the step printed (standard output, then standard error).
    pub log: String,
}

#[derive(Debug)]
pub struct ActionRun {
    pub steps: Vec<StepRun>,
    /// The action's outputs, as `outputs.<name>.value` evaluates after the steps.
    pub outputs: BTreeMap<String, String>,
    /// Every step's job summary, in order.
    pub summary: String,
}

impl ActionRun {
    pub fn succeeded(&self) -> bool {
        self.steps
            .iter()
            .all(|s| !matches!(s.outcome, Outcome::Failure(_)))
    }

    pub fn step(&self, name: &str) -> &StepRun {
        self.steps
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no step {name:?} in {:#?}", self.steps))
    }

    /// Every step's name, outcome and log, for assertion messages.
    pub fn logs(&self) -> String {
        self.steps
            .iter()
            .map(|s| format!("--- {} ({:?})\n{}", s.name, s.outcome, s.log))
            .collect()
    }
}

/// The step contexts an expression can read.
struct Contexts<'a> {
    inputs: &'a BTreeMap<String, String>,
    steps: &'a BTreeMap<String, BTreeMap<String, String>>,
    github: &'a BTreeMap<String, String>,
    runner: &'a BTreeMap<String, String>,
    env: &'a BTreeMap<String, String>,
    failed: bool,
}

impl Contexts<'_> {
    /// Evaluates one expression (the text inside `${{ }}`) to a string.
    fn evaluate(&self, expression: &str) -> String {
        let expression = expression.trim();
        for (operator, equal) in [("!=", false), ("==", true)] {
            if let Some((left, right)) = expression.split_once(operator) {
                let same = self
                    .evaluate(left)
                    .eq_ignore_ascii_case(&self.evaluate(right));
                return (same == equal).to_string();
            }
        }
        assert!(
            !expression.contains("&&")
                && !expression.contains("||")
                && !expression.starts_with('!'),
            "the runner does not evaluate {expression:?}"
        );
        match expression {
            "success()" => return (!self.failed).to_string(),
            "failure()" => return self.failed.to_string(),
            "always()" => return "true".into(),
            "true" | "false" => return expression.into(),
            _ => {}
        }
        if let Some(literal) = expression
            .strip_prefix('\'')
            .and_then(|e| e.strip_suffix('\''))
        {
            return literal.replace("''", "'");
        }
        let parts: Vec<&str> = expression.split('.').collect();
        let found = match parts.as_slice() {
            ["inputs", name] => self.inputs.get(*name),
            ["github", name] => self.github.get(*name),
            ["runner", name] => self.runner.get(*name),
            ["env", name] => self.env.get(*name),
            ["steps", id, "outputs", name] => self.steps.get(*id).and_then(|o| o.get(*name)),
            _ => panic!("the runner does not know the context {expression:?}"),
        };
        found.cloned().unwrap_or_default()
    }

    /// Replaces every `${{ expression }}` in `text`.
    fn expand(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..]
                .find("}}")
                .unwrap_or_else(|| panic!("an unclosed expression in {text:?}"));
            out.push_str(&self.evaluate(&rest[start + 3..start + end]));
            rest = &rest[start + end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// An `if:` condition, with or without `${{ }}`; steps without one run on success only.
    fn condition(&self, condition: Option<&str>) -> bool {
        let Some(condition) = condition else {
            return !self.failed;
        };
        let inner = condition
            .trim()
            .strip_prefix("${{")
            .and_then(|c| c.strip_suffix("}}"))
            .unwrap_or(condition);
        let status_function = ["success()", "failure()", "always()"]
            .iter()
            .any(|f| inner.contains(f));
        (status_function || !self.failed) && self.evaluate(inner) == "true"
    }
}

fn text(yaml: &Yaml) -> Option<String> {
    match yaml {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn map(yaml: &Yaml) -> Vec<(String, String)> {
    yaml.as_hash()
        .map(|hash| {
            hash.iter()
                .map(|(k, v)| (text(k).unwrap(), text(v).unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a `GITHUB_OUTPUT` or `GITHUB_ENV` file: `name=value` lines and `name<<DELIMITER` blocks.
pub fn read_key_values(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut values = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let block: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
            values.insert(name.to_owned(), block.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            values.insert(name.to_owned(), value.to_owned());
        } else if !line.trim().is_empty() {
            panic!("{}: not name=value: {line:?}", path.display());
        }
    }
    values
}

/// The runner's name for this machine's architecture.
pub fn runner_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "X64",
        "aarch64" => "ARM64",
        "x86" => "X86",
        "arm" => "ARM",
        other => panic!("no runner architecture for {other}"),
    }
}

/// Variables a hosted runner's environment has that the steps need here (the toolchain).
/// Not `CARGO_TARGET_DIR`: each job builds its workspace's crate into the workspace's own
/// target directory, as a runner does. Passed through, it made the tests that run the Action
/// at once share one target directory, and a job could measure another test's build of the
/// sample crate (seen with `CARGO_TARGET_DIR` set for `cargo test`: the push test's base run
/// measured a head's 64-fold seal).
const PASSED_THROUGH: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "TMPDIR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
];

impl Job {
    /// Runs the composite action in `action_dir/action.yml` with `with` as its inputs.
    pub fn run(&self, with: &[(&str, &str)]) -> ActionRun {
        let manifest = std::fs::read_to_string(self.action_dir.join("action.yml")).unwrap();
        let document = YamlLoader::load_from_str(&manifest).unwrap().remove(0);
        assert_eq!(
            document["runs"]["using"].as_str(),
            Some("composite"),
            "the runner runs composite actions"
        );

        let mut runner = BTreeMap::new();
        runner.insert("temp".to_owned(), self.temp.display().to_string());
        runner.insert("os".to_owned(), "Linux".to_owned());
        runner.insert("arch".to_owned(), runner_arch().to_owned());
        let no_steps = BTreeMap::new();
        let empty = BTreeMap::new();

        // Inputs: what `with:` gives, else the default (itself an expression over `github`).
        let declared = document["inputs"].as_hash().expect("action.yml has inputs");
        for (name, _) in with {
            assert!(
                declared.contains_key(&Yaml::String((*name).to_owned())),
                "`with: {name}` is not an input of action.yml"
            );
        }
        let mut inputs = BTreeMap::new();
        for (name, spec) in declared {
            let name = text(name).unwrap();
            let value = match with.iter().find(|(n, _)| *n == name) {
                Some((_, value)) => (*value).to_owned(),
                None => {
                    let default = text(&spec["default"]).unwrap_or_default();
                    Contexts {
                        inputs: &empty,
                        steps: &no_steps,
                        github: &self.github,
                        runner: &runner,
                        env: &self.env,
                        failed: false,
                    }
                    .expand(&default)
                }
            };
            inputs.insert(name, value);
        }

        std::fs::create_dir_all(&self.temp).unwrap();
        let event_path = self.temp.join("event.json");
        std::fs::write(&event_path, self.event.to_string()).unwrap();

        let mut steps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut job_env = self.env.clone();
        let mut extra_path: Vec<String> = Vec::new();
        let mut runs = Vec::new();
        let mut summary = String::new();
        let mut failed = false;
        let mut caches_to_save: Vec<(PathBuf, PathBuf)> = Vec::new();

        for (index, step) in document["runs"]["steps"]
            .as_vec()
            .expect("runs.steps is a list")
            .iter()
            .enumerate()
        {
            let name = step["name"]
                .as_str()
                .map_or_else(|| format!("step {index}"), str::to_owned);
            let contexts = Contexts {
                inputs: &inputs,
                steps: &steps,
                github: &self.github,
                runner: &runner,
                env: &job_env,
                failed,
            };
            if !contexts.condition(step["if"].as_str()) {
                runs.push(StepRun {
                    name,
                    outcome: Outcome::Skipped,
                    log: String::new(),
                });
                continue;
            }
            let working_directory = step["working-directory"].as_str().map_or_else(
                || self.workspace.clone(),
                |dir| self.workspace.join(contexts.expand(dir)),
            );
            let id = step["id"].as_str().map(str::to_owned);

            if let Some(uses) = step["uses"].as_str() {
                assert!(
                    uses.starts_with("actions/cache@"),
                    "the runner cannot run `uses: {uses}`"
                );
                let with: BTreeMap<String, String> = map(&step["with"])
                    .into_iter()
                    .map(|(k, v)| (k, contexts.expand(&v)))
                    .collect();
                let path = self.workspace.join(&with["path"]);
                let key = with["key"].clone();
                let exact = self.cache.join(&key);
                let restore_keys: Vec<String> = with
                    .get("restore-keys")
                    .map(|keys| keys.lines().map(|k| k.trim().to_owned()).collect())
                    .unwrap_or_default();
                let found = if exact.is_dir() {
                    Some(exact.clone())
                } else {
                    restore_keys.iter().find_map(|prefix| {
                        let mut matches: Vec<(std::time::SystemTime, PathBuf)> =
                            std::fs::read_dir(&self.cache)
                                .into_iter()
                                .flatten()
                                .map(|e| e.unwrap())
                                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                                .map(|e| (e.metadata().unwrap().modified().unwrap(), e.path()))
                                .collect();
                        matches.sort();
                        matches.pop().map(|(_, p)| p)
                    })
                };
                let log = match &found {
                    Some(entry) => {
                        super::copy_dir(entry, &path);
                        format!("restored {} from {}", path.display(), entry.display())
                    }
                    None => format!("no cache for {key}"),
                };
                let hit = found.as_ref() == Some(&exact);
                if !hit {
                    caches_to_save.push((path, exact));
                }
                if let Some(id) = id {
                    steps.insert(
                        id,
                        BTreeMap::from([("cache-hit".to_owned(), hit.to_string())]),
                    );
                }
                runs.push(StepRun {
                    name,
                    outcome: Outcome::Success,
                    log,
                });
                continue;
            }

            let script = contexts.expand(step["run"].as_str().expect("a step runs or uses"));
            assert_eq!(
                step["shell"].as_str(),
                Some("bash"),
                "composite run steps must name their shell"
            );
            let step_env: Vec<(String, String)> = map(&step["env"])
                .into_iter()
                .map(|(k, v)| (k, contexts.expand(&v)))
                .collect();
            let files = self.temp.join(format!("step-{index}"));
            std::fs::create_dir_all(&files).unwrap();
            let script_path = files.join("script.sh");
            std::fs::write(&script_path, &script).unwrap();
            let (output_file, env_file, path_file, summary_file) = (
                files.join("output"),
                files.join("env"),
                files.join("path"),
                files.join("summary"),
            );
            for file in [&output_file, &env_file, &path_file, &summary_file] {
                std::fs::write(file, "").unwrap();
            }

            let mut command = Command::new("bash");
            command
                .args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_path)
                .current_dir(&working_directory)
                .env_clear();
            for name in PASSED_THROUGH {
                if let Some(value) = std::env::var_os(name) {
                    command.env(name, value);
                }
            }
            let mut path = extra_path.clone();
            path.push(std::env::var("PATH").unwrap_or_default());
            let g = |key: &str| self.github.get(key).cloned().unwrap_or_default();
            command
                .env("PATH", path.join(":"))
                .env("CI", "true")
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_ACTION_PATH", &self.action_dir)
                .env("GITHUB_WORKSPACE", &self.workspace)
                .env("GITHUB_EVENT_NAME", &self.event_name)
                .env("GITHUB_EVENT_PATH", &event_path)
                .env("GITHUB_REPOSITORY", g("repository"))
                .env("GITHUB_SHA", g("sha"))
                .env("GITHUB_REF", g("ref"))
                .env("GITHUB_REF_NAME", g("ref_name"))
                .env("GITHUB_BASE_REF", g("base_ref"))
                .env("GITHUB_HEAD_REF", g("head_ref"))
                .env("GITHUB_RUN_ID", g("run_id"))
                .env("GITHUB_RUN_ATTEMPT", "1")
                .env("GITHUB_API_URL", g("api_url"))
                .env("GITHUB_SERVER_URL", "https://github.com")
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", runner_arch())
                .env("RUNNER_TEMP", &self.temp)
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_ENV", &env_file)
                .env("GITHUB_PATH", &path_file)
                .env("GITHUB_STEP_SUMMARY", &summary_file)
                .envs(&job_env)
                .envs(step_env);
            let output = command.output().unwrap();
            let log = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );

            if let Some(id) = id {
                steps.insert(id, read_key_values(&output_file));
            }
            job_env.extend(read_key_values(&env_file));
            let added = std::fs::read_to_string(&path_file).unwrap();
            for line in added.lines().rev().filter(|l| !l.trim().is_empty()) {
                extra_path.insert(0, line.trim().to_owned());
            }
            summary.push_str(&std::fs::read_to_string(&summary_file).unwrap());
            let outcome = if output.status.success() {
                Outcome::Success
            } else {
                failed = true;
                Outcome::Failure(output.status.code())
            };
            runs.push(StepRun { name, outcome, log });
        }

        // The post steps: actions/cache saves what it did not restore exactly, after success.
        if !failed {
            for (path, entry) in caches_to_save {
                if path.is_dir() {
                    super::copy_dir(&path, &entry);
                }
            }
        }

        let contexts = Contexts {
            inputs: &inputs,
            steps: &steps,
            github: &self.github,
            runner: &runner,
            env: &job_env,
            failed,
        };
        let outputs = map(&document["outputs"])
            .into_iter()
            .map(|(name, _)| {
                let value = document["outputs"][name.as_str()]["value"]
                    .as_str()
                    .unwrap_or_default();
                (name, contexts.expand(value))
            })
            .collect();
        ActionRun {
            steps: runs,
            outputs,
            summary,
        }
    }
}
