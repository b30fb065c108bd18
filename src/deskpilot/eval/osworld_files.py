"""What format a file of an OSWorld task is: by its name, else by its content (the file store
keeps files under their URL, which often has no extension)."""

from __future__ import annotations

import zipfile
from pathlib import Path

ZIP_KINDS = (
    ("xl/workbook.xml", ".xlsx"),
    ("word/document.xml", ".docx"),
    ("ppt/presentation.xml", ".pptx"),
)
ODF_KINDS = {
    "application/vnd.oasis.opendocument.spreadsheet": ".ods",
    "application/vnd.oasis.opendocument.text": ".odt",
    "application/vnd.oasis.opendocument.presentation": ".odp",
}


def file_kind(path: Path) -> str:
    """A file's format as a suffix: by its name, else by its content (the store keeps files
    under their URL, which often has no extension)."""
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm", ".docx", ".pptx", ".ods", ".odt", ".odp", ".csv"):
        return suffix
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            for name, kind in ZIP_KINDS:
                if name in names:
                    return kind
            if "mimetype" in names:
                return ODF_KINDS.get(z.read("mimetype").decode(errors="replace").strip(), suffix)
    except (zipfile.BadZipFile, OSError):
        pass
    return suffix
