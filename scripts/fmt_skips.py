"""The ``# fmt: skip`` markers left, per file, each with the first line of what it guards.

    python3 scripts/fmt_skips.py                  # src, tests and bench
    python3 scripts/fmt_skips.py src/deskpilot/ax # some folders or files
    python3 scripts/fmt_skips.py -c               # counts only

The rule (issue 24): a marker stays only on a table that reads better laid out by hand: a word
list or vocabulary, a code table, rows of cases that ruff would split row by row. Anywhere
else (a call, a comprehension, a small dict) the marker goes and ruff lays the statement out;
where that layout is much worse, a local variable or a helper makes it fit instead.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MARK = "# fmt: skip"


def markers(path: Path) -> list[tuple[int, str]]:
    """(line, first line of the statement) for each marker in ``path``."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    starts = {n.end_lineno: n.lineno for n in ast.walk(ast.parse(text)) if isinstance(n, ast.stmt)}
    found = []
    for i, line in enumerate(lines, 1):
        if MARK in line:
            found.append((i, lines[starts.get(i, i) - 1].strip()))
    return found


def main(argv: list[str]) -> int:
    counts_only = "-c" in argv
    roots = [Path(a) for a in argv if a != "-c"] or [Path("src"), Path("tests"), Path("bench")]
    files = sorted(f for r in roots for f in ([r] if r.is_file() else r.rglob("*.py")))
    total = 0
    for f in files:
        found = markers(f)
        total += len(found)
        if found:
            print(f"{f}: {len(found)}")
            for line, first in [] if counts_only else found:
                print(f"  {line:5d}  {first[:90]}")
    print(f"{total} markers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
