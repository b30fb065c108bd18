"""Fill an OSWorld file store with stand-in files, for measuring which task files *run* on a
machine that cannot reach the files' hosts (this one): a file of the right format per URL
(by the extension the task gives it), whose content comes from the URL, so that a task's
starting document and its gold file differ as the real ones do.

    python -m tests.eval.osworld_standins SUITE STORE

Stand-ins say nothing about scores a real agent would get: only that setup, postconfig and
checks run to a score. Real runs fill the store with the real files (docs/eval.md, "OSWorld tasks").
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path, PurePosixPath

from deskpilot.eval.suite import load_suite


def _walk(checks: list) -> list:  # type: ignore[type-arg]
    out = []
    for c in checks:
        inner = getattr(c, "of", None)
        out += _walk(inner if isinstance(inner, list) else [inner]) if inner is not None else [c]
    return out


def suffixes(suite_dir: Path) -> dict[str, str]:
    """URL → the extension the task gives its file."""
    found: dict[str, str] = {}
    for task in load_suite(suite_dir, skip_broken=True).tasks:
        for raw in [*task.setup, *task.postconfig]:
            src = str(raw.get("from", ""))
            if src.startswith("{store}/"):
                found[src[8:]] = PurePosixPath(str(raw["write"])).suffix.lower()
        for check in _walk(task.check):
            if getattr(check, "kind", "") != "osworld" or not check.expected:
                continue
            paths = check.expected.get("path")
            res = check.result.get("path") if check.result else None
            for i, p in enumerate(paths if isinstance(paths, list) else [paths]):
                if isinstance(p, str) and p.startswith("{store}/"):
                    r = res[i] if isinstance(res, list) and i < len(res) else res
                    found.setdefault(p[8:], PurePosixPath(str(r or "")).suffix.lower())
    return found


def make(path: Path, suffix: str, seed: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    word = "w" + hashlib.sha256(seed.encode()).hexdigest()[:8]
    if suffix in (".xlsx", ".xlsm"):
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        sheet.append(["Name", "Value"])  # type: ignore[union-attr]
        sheet.append([word, len(seed)])  # type: ignore[union-attr]
        book.save(str(path))
    elif suffix == ".docx":
        from docx import Document

        doc = Document()
        doc.add_paragraph(word)
        doc.add_table(rows=1, cols=1).cell(0, 0).text = word  # table metrics see content too
        doc.save(str(path))
    elif suffix == ".pptx":
        from pptx import Presentation

        prs = Presentation()
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = word  # type: ignore[union-attr]
        prs.save(str(path))
    elif suffix in (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp"):
        from PIL import Image

        colour = tuple(hashlib.sha256(seed.encode()).digest()[:3])
        fmt = {".jpg": "JPEG", ".jpeg": "JPEG"}.get(suffix, suffix[1:].upper())
        Image.new("RGB", (64, 48), colour).save(str(path), format=fmt)
    elif suffix in (".csv",):
        path.write_text(f"Name,Value\n{word},{len(seed)}\n")
    elif suffix in (".zip",):
        import zipfile

        with zipfile.ZipFile(path, "w") as z:
            z.writestr("a.txt", word)
    elif suffix in (".gz", ".tgz", ".xz"):
        import io
        import tarfile

        mode = "w:xz" if suffix == ".xz" else "w:gz"
        with tarfile.open(path, mode) as tar:
            data = word.encode()
            info = tarfile.TarInfo("a.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    else:
        path.write_text(word + "\n")


def main(argv: list[str]) -> int:
    suite, store = Path(argv[0]), Path(argv[1])
    made = 0
    for rel, suffix in sorted(suffixes(suite).items()):
        target = store / rel
        if not target.exists():
            make(target, suffix, rel)
            made += 1
    print(f"{made} stand-in file(s) made in {store}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
