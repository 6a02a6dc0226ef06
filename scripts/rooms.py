#!/usr/bin/env python3
"""How the rooms measure against #47's rules: functions over 120 lines and files over 700
lines of non-test code in the product's crates, and import circles between files.

Usage: python3 scripts/rooms.py   (from the repository's root; exits 1 when a rule is broken)

A rough reader of Rust, not a parser: a function runs from its `fn` line to the first line
that closes it at the same indentation; a file's non-test code ends at its first top-level
`#[cfg(test)]`; a file uses another when its code (doc comments aside) names it through
`crate::` or `super::`. A module and its own submodules may share through `super::`.
"""
import os
import re
import sys

ROOTS = ["src", "core/src", "collector/src", "gate/src", "dashboards/src"]
MAX_FN, MAX_FILE = 120, 700


def module_of(root, path):
    parts = os.path.relpath(path, root)[:-3].split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def code(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("#[cfg(test)]"):
            return lines[:i]
    return lines


long_fns, long_files, circles = [], [], []
for root in ROOTS:
    files = {}
    for directory, _, names in os.walk(root):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(directory, name)
                files[module_of(root, path)] = path
    uses = {m: set() for m in files}
    for module, path in files.items():
        lines = code(path)
        if len(lines) > MAX_FILE:
            long_files.append((len(lines), path))
        i = 0
        while i < len(lines):
            m = re.match(r"^(\s*)(pub(\([a-z]+\))? )?(async )?(const )?fn (\w+)", lines[i])
            if m and not lines[i].rstrip().endswith(";"):
                indent, j = m.group(1), i
                while j < len(lines) and lines[j].rstrip() != indent + "}":
                    j += 1
                if j - i + 1 > MAX_FN:
                    long_fns.append((j - i + 1, path, m.group(6)))
                i = j
            i += 1
        text = "\n".join(l for l in lines if not l.lstrip().startswith("//"))
        for prefix, base in (("crate::", ()), ("super::", module[:-1] if not path.endswith(("mod.rs", "lib.rs", "main.rs")) else module[:-1])):
            for ref in re.findall(re.escape(prefix) + r"((?:[a-z_]+::)*[a-z_]+)", text):
                parts = list(base) + ref.split("::")
                for n in range(len(parts), 0, -1):
                    target = tuple(parts[:n])
                    if target in files and target != module:
                        uses[module].add(target)
                        break
    related = lambda a, b: a[: len(b)] == b or b[: len(a)] == a
    for a in uses:
        stack = [(a, [a])]
        while stack:
            node, path = stack.pop()
            for nxt in uses[node]:
                if nxt == a and len(path) > 1 and not all(related(x, a) for x in path):
                    circle = " -> ".join("/".join(p) or "lib" for p in path + [a])
                    circles.append(f"{root}: {circle}")
                elif nxt not in path and len(path) < 6:
                    stack.append((nxt, path + [nxt]))

for n, path, name in sorted(long_fns, reverse=True):
    print(f"function over {MAX_FN} lines: {n:4} {path} {name}")
for n, path in sorted(long_files, reverse=True):
    print(f"file over {MAX_FILE} non-test lines: {n:4} {path}")
for circle in sorted(set(circles)):
    print(f"import circle: {circle}")
print(f"{len(long_fns)} long functions, {len(long_files)} long files, {len(set(circles))} circles")
sys.exit(1 if long_fns or long_files or circles else 0)
