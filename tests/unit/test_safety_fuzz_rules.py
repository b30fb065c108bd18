"""Safety suite — property fuzzing of the rule library's import files.

``deskpilot rules import`` reads files a person got from elsewhere: deskpilot's own export, a
Stylus export, a Violentmonkey backup. Each is built from a real one (``tests/fixtures/pages``
and a real export) with random parts replaced, dropped or added, and must either import or
fail with deskpilot's own typed error naming the problem — and a failed import writes nothing.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskpilot.errors import DeskpilotError
from deskpilot.pages.import_plan import apply_plan
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import parse_patterns
from deskpilot.pages.transfer import export_library, plan_import
from tests.safety_figures import Figures, has_traceback
from tests.unit.test_safety_fuzz import Counter, fuzz, mutated, typed

pytestmark = pytest.mark.safety

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pages"


def _deskpilot_export(tmp_path: Path) -> dict[str, Any]:
    with Library(tmp_path / "source.sqlite3") as lib:
        f = lib.create_folder(
            "Work", label="WRK", include=parse_patterns(["https://*.t/*"], "include")
        )
        g = lib.create_group(f.id, "Wiki", exclude=parse_patterns(["regex:.*/edit"], "exclude"))
        lib.create_rule(g.id, "Wide", css="main{max-width:none}", frames="all")
        lib.create_rule(g.id, "Toc", js="document.title += '!';", run_at="document-start")
        return export_library(lib)


def _backup(script_meta: dict[str, Any], sources: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in sources.items():
            z.writestr(f"{name}.user.js", text)
        z.writestr("violentmonkey", json.dumps(script_meta))
    return buf.getvalue()


META_LINES = st.lists(
    st.sampled_from(
        [
            "// @name x",
            "// @match *://a.com/*",
            "// @match",
            "// @include /a(/",
            "// @include *",
            "// @exclude-match bad",
            "// @exclude *x*",
            "// @run-at nope",
            "// @run-at document-start",
            "// @noframes",
            "// @grant GM_x",
            "// @name",
        ]
    ),
    max_size=6,
)


def test_rule_import_files_import_or_name_the_problem(figures: Figures, tmp_path: Path) -> None:
    count = Counter()
    own = _deskpilot_export(tmp_path)
    stylus = json.loads((FIXTURES / "stylus-export.json").read_text())
    with zipfile.ZipFile(FIXTURES / "violentmonkey-backup.zip") as z:
        vm_meta = json.loads(z.read("violentmonkey"))
        vm_sources = {
            n[: -len(".user.js")]: z.read(n).decode()
            for n in z.namelist()
            if n.endswith(".user.js")
        }
    lib = Library(tmp_path / "target.sqlite3")
    file = tmp_path / "import.bin"

    def check(blob: bytes, source: str) -> None:
        count()
        file.write_bytes(blob)
        revision = lib.revision
        try:
            made = apply_plan(lib, plan_import(file, source))
        except DeskpilotError as exc:
            assert typed(exc) and not has_traceback(str(exc)), exc
            assert lib.revision == revision and lib.tree() == []  # nothing written
            return
        for folder in made:  # the library stays empty for the next example
            lib.delete(folder.id)

    @fuzz(figures)
    @given(mutated(own), mutated(stylus), mutated(vm_meta), META_LINES, st.text(max_size=12))
    def run(desk: Any, styles: Any, meta: Any, lines: list[str], body: str) -> None:
        check(json.dumps(desk).encode(), "deskpilot")
        check(json.dumps(styles).encode(), "stylus")
        script = "// ==UserScript==\n" + "\n".join(lines) + "\n// ==/UserScript==\n" + body
        check(_backup(meta, {**vm_sources, "Fuzzed": script}), "violentmonkey")

    try:
        run()
    finally:
        lib.close()
    figures.fuzzed("rule import files (deskpilot, Stylus, Violentmonkey)", examples=count.n)
