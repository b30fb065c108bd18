"""The snapshot benchmark's pieces: OSWorld's filter and TSV, the widget definition, and one
real run on gnome-calculator (every JSON field present, coverage and sizes computed).
Timings are never asserted."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from bench import osworld
from bench.measure import widget_indices
from bench.snapshot import FIELDS, main

from deskpilot.desktop.base import AppIdentity, Rect, WindowInfo


def node(
    role: str, name: str = "", states: str = "", extents: Any = (10, 10, 40, 20), **extra: Any
) -> dict[str, Any]:
    return {
        "role": role,
        "name": name,
        "states": states.split(),
        "extents": list(extents) if extents is not None else None,
        "parent": -1,
        "path": f"/{role}/{name}",
        **extra,
    }


def test_osworld_filter_keeps_what_its_judge_node_keeps() -> None:
    shown = "showing visible enabled"
    nodes = [
        node("push button", "OK", shown),
        node("push button", "GTK4", "visible enabled"),  # no SHOWING (GTK 4.8): dropped
        node("push button", "", shown),  # no name, no text: dropped
        node("entry", "", shown, text='say "hi"'),  # text instead of a name: kept
        node("page tab", "Tab", shown),  # not one of OSWorld's tags: dropped
        node("panel", "Panel", shown),  # a container: dropped
        node("check box", "Off screen", shown, extents=(-2147483648, -2147483648, 20, 20)),
        node("label", "Disabled", "showing visible"),  # none of enabled/editable/…: dropped
        node("link", "Deep", shown, osworld=False),  # beyond OSWorld's depth/width limits
    ]
    kept = osworld.filter_nodes(nodes)
    assert [n["name"] for n in kept] == ["OK", ""]
    tsv = osworld.linearize(kept).splitlines()
    assert tsv[0] == osworld.HEADER
    assert tsv[1] == 'push-button\tOK\t""\t\t\t(10, 10)\t(40, 20)'
    assert tsv[2] == 'entry\t\t"say ""hi"""\t\t\t(10, 10)\t(40, 20)'


def test_widgets_follow_the_issue_definition() -> None:
    window = WindowInfo(1, 1, "w", AppIdentity("a", "a"), Rect(100, 100, 400, 300))
    screen = Rect(0, 0, 1280, 800)
    gtk3 = {
        "toolkit": "GTK",
        "toolkit_version": "3.24.38",
        "nodes": [
            node("frame", "w", "showing visible", extents=(100, 100, 400, 300)),
            node("push button", "OK", "showing visible"),
            node("label", "Editable", "showing visible editable"),
            node(
                "table cell",
                "Scrolled away",
                "showing visible",
                extents=(-2147483648, -2147483648, 50, 20),
            ),
            node("push button", "Hidden", "visible"),
            node("push button", "Empty", "showing visible", extents=(10, 10, 0, 0)),
            node("panel", "Not a widget", "showing visible"),
        ],
    }
    assert widget_indices(gtk3, window, screen) == [1, 2]
    gtk4 = {
        "toolkit": "GTK",
        "toolkit_version": "4.8.3",
        "nodes": [
            node("frame", "w", "showing visible", extents=(0, 0, 400, 300)),
            node("push button", "7", "visible"),  # window-relative extents, VISIBLE only
            node("push button", "Not visible", ""),
        ],
    }
    assert widget_indices(gtk4, window, screen) == [1]
    # Chromium: a collapsed drop-down's selected option says SHOWING inside its closed popup
    # menu; a person sees it as the drop-down's value, not as an item
    web = {
        "toolkit": "Chromium",
        "toolkit_version": "156",
        "nodes": [
            node("frame", "w", "showing visible", extents=(100, 100, 400, 300)),
            node("combo box", "Country", "showing visible", parent=0),
            node("menu", "", "enabled", parent=1),
            node("menu item", "France", "showing visible", parent=2),
            node("push button", "Go", "showing visible", parent=0),
        ],
    }
    assert widget_indices(web, window, screen) == [1, 4]


@pytest.mark.sandbox
@pytest.mark.app
@pytest.mark.skipif(
    not (shutil.which("gnome-calculator") and os.access("/usr/bin/python3", os.X_OK)),
    reason="needs gnome-calculator and Debian's python3 with python3-pyatspi",
)
def test_benchmark_runs_on_gnome_calculator(tmp_path: Path) -> None:
    out, details = tmp_path / "snapshot.json", tmp_path / "details.json"
    code = main(
        [
            "--apps",
            "gnome-calculator",
            "--cold-runs",
            "1",
            "--warm-runs",
            "2",
            "--baseline-runs",
            "1",
            "--out",
            str(out),
            "--details",
            str(details),
        ]
    )
    assert code == 0
    results = json.loads(out.read_text())
    assert list(results) == ["gnome-calculator"]
    row = results["gnome-calculator"]
    assert tuple(row) == FIELDS
    assert row["nodes"] > 20
    for key in ("cold_ms", "warm_ms", "baseline_ms", "speedup_cold", "speedup_warm"):
        assert row[key] > 0
    # the calculator's keypad: GTK 4 widgets are VISIBLE but never SHOWING
    assert row["widgets"] >= 20
    assert 0 <= row["covered"] <= row["widgets"]
    assert 0 <= row["baseline_covered"] <= row["widgets"]
    assert row["coverage"] == round(row["covered"] / row["widgets"], 4)
    assert row["baseline_coverage"] == round(row["baseline_covered"] / row["widgets"], 4)
    assert row["chars"] > 0 and row["baseline_chars"] >= len(osworld.HEADER)
    if row["covered"]:
        assert row["chars_per_widget"] == round(row["chars"] / row["covered"], 1)
    if row["baseline_covered"]:
        assert row["baseline_chars_per_widget"] == round(
            row["baseline_chars"] / row["baseline_covered"], 1
        )
    else:
        assert row["baseline_chars_per_widget"] is None and row["size_ratio"] is None
    app = json.loads(details.read_text())["apps"]["gnome-calculator"]
    assert app["text"].count("@") >= row["covered"]
    assert app["baseline_text"].splitlines()[0] == osworld.HEADER
    assert len(app["missing"]) == row["widgets"] - row["covered"]
