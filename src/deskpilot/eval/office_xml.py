"""What the office readers share: XML namespaces, the cell and paragraph a checker sees, and
safe reads of a zipped document's parts (a broken file is the agent's failure,
:class:`CheckFailed`)."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

from deskpilot.errors import CheckFailed

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "x": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
}


def q(tag: str) -> str:
    """``"table:table-cell"`` → ``"{urn:…table:1.0}table-cell"``."""
    prefix, local = tag.split(":")
    return f"{{{NS[prefix]}}}{local}"


@dataclass(frozen=True)
class Cell:
    value: float | str | None  # a number for numeric cells, else the shown text
    text: str
    formula: str
    bold: bool


@dataclass(frozen=True)
class Paragraph:
    text: str
    style: str  # display name: "Heading 1", "Text Body", "Normal"…
    runs: tuple[tuple[str, bool], ...]  # (text, bold)

    def is_bold(self, word: str) -> bool | None:
        """Whether every character of the first occurrence of ``word`` is bold (None: absent)."""
        at = self.text.find(word)
        if at < 0:
            return None
        flags: list[bool] = [b for text, b in self.runs for _ in text]
        return all(flags[at : at + len(word)])


def exists(path: Path) -> None:
    if not path.is_file():
        raise CheckFailed(f"{path.name} does not exist")


def parse_xml(data: bytes, what: str) -> ET.Element:
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise CheckFailed(f"{what} is not valid XML ({exc})") from exc


def zip_part(path: Path, name: str, required: bool = True) -> ET.Element | None:
    try:
        with zipfile.ZipFile(path) as zf:
            if name not in zf.namelist():
                if required:
                    raise CheckFailed(f"{path.name} has no {name}: not this kind of document")
                return None
            return parse_xml(zf.read(name), f"{path.name}:{name}")
    except zipfile.BadZipFile as exc:
        raise CheckFailed(f"{path.name} is not a zipped office document") from exc


def joined_runs(runs: list[tuple[str, bool]]) -> tuple[str, tuple[tuple[str, bool], ...]]:
    return "".join(t for t, _ in runs), tuple(runs)
