#!/usr/bin/env python3
"""Every reference to a .md file in the repository resolves to a file in it, and README.md stays short.

Checked: Markdown links `[text](path.md#anchor)` in .md files (relative to the linking file), and
mentions of `docs/<page>.md` or `README.md` anywhere in tracked files (relative to the repository
root). The founding contract, which lives outside the repository (FOUNDING below), must not be cited.
Usage: check_references.py REPO_ROOT
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(sys.argv[1]).resolve()
files = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard"],
                       check=True, capture_output=True, text=True).stdout.split()
link = re.compile(r"\]\(([^)#\s]+\.md)(#[^)\s]*)?\)")
mention = re.compile(r"(?<![\w/.-])((?:docs/[\w.-]+|README)\.md)")
FOUNDING = "DESIGN" + ".md"  # spelled apart, so this file does not cite it either
problems = []
for name in files:
    path = root / name
    if not path.is_file() or path.suffix in {".gz", ".json", ".png"}:
        continue
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        continue
    for number, line in enumerate(text.splitlines(), 1):
        if FOUNDING in line:
            problems.append(f"{name}:{number}: cites {FOUNDING}, which is not in the repository")
        targets = []
        if path.suffix == ".md":
            targets += [(path.parent / m.group(1)) for m in link.finditer(line) if "://" not in m.group(1)]
        targets += [(root / m.group(1)) for m in mention.finditer(line)]
        for target in targets:
            if not target.resolve().is_file():
                problems.append(f"{name}:{number}: {target.relative_to(root) if target.is_relative_to(root) else target} does not exist")
readme = (root / "README.md").stat().st_size
if readme > 10000:
    problems.append(f"README.md: {readme} bytes; it holds at most 10,000 (move detail to docs/)")
for p in problems:
    print(p)
print(f"{len(files)} files checked, {len(problems)} broken references")
sys.exit(1 if problems else 0)
