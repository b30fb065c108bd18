"""Desktop files read without configparser: the same apps as configparser read them."""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest

from deskpilot.desktop.apps import desktop_entry


def by_configparser(text: str) -> dict[str, str] | None:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return dict(parser["Desktop Entry"]) if parser.has_section("Desktop Entry") else None


SAMPLE = """# a comment
[Desktop Entry]
Type=Application
Name=Calculator
Name[fr]=Calculatrice
Exec=gnome-calculator %U
Keywords=calculation;arithmetic;
Terminal = false

[Desktop Action new]
Name=New Window
Exec=gnome-calculator --new
"""


def test_a_desktop_file_s_entry_group() -> None:
    entry = desktop_entry(SAMPLE)
    assert entry == by_configparser(SAMPLE)
    assert entry is not None and entry["Exec"] == "gnome-calculator %U"
    assert entry["Name[fr]"] == "Calculatrice" and entry["Terminal"] == "false"
    assert desktop_entry("[Other]\nName=x\n") is None


FILES = sorted(Path("/usr/share/applications").glob("*.desktop"))


@pytest.mark.skipif(not FILES, reason="no desktop files on this machine")
def test_every_desktop_file_here_reads_as_configparser_reads_it() -> None:
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        try:
            expected = by_configparser(text)
        except configparser.Error:
            continue  # configparser refused it (the catalogue skipped such files before)
        assert desktop_entry(text) == expected, path
