"""Issue 21 items 6 and 3 on GTK apps: an element click is a person's click where that is the
truthful way (GTK's action shows a button pressed for 250 ms before it clicks), the action where
a pointer would hit something else, and a tree row's click does what a person's does or says
what it did. The probes (tests/fixtures/apps/) write what happened to them to a file: a channel
the tools never use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.probe_apps import start_probe
from tests.desktop.test_actions_meant import probe as actions_probe
from tests.desktop.test_actions_meant import read

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_gtk_button_in_sight_is_clicked_by_the_pointer(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    p = await actions_probe(apps, tmp_path)
    text = await read(call, p.window.stable_id)
    done = await call("perform", {"elementID": find_id(text, "button", "Over")})
    assert not done.is_error, done.text
    await p.wait_for("clicked Over")
    # a pointer's release clicked it (no 250 ms shown pressed first), once
    assert "Over clicked by pointer" in p.lines(), p.lines()
    assert p.lines().count("clicked Over") == 1 and "clicked Under" not in p.lines()


async def test_a_forced_click_on_a_covered_button_is_its_action_not_the_cover(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    """Forced past the cover check, a click on the button drawn under another still reaches
    it (its action): a pointer there would press the one on top."""
    p = await actions_probe(apps, tmp_path)
    text = await read(call, p.window.stable_id)
    done = await call("perform", {"elementID": find_id(text, "button", "Under"), "force": True})
    assert not done.is_error, done.text
    await p.wait_for("clicked Under")
    assert "Under clicked by action" in p.lines(), p.lines()
    assert "clicked Over" not in p.lines()


async def test_a_gtk4_tree_row_clicked_by_its_id_is_selected_not_expanded(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    """The row's expander (a GtkTreeExpander, read as the row's focusable part) offers only
    expand and collapse: clicked by its ID it is clicked as a person clicks the row (selected),
    not expanded by its first action."""
    p = await start_probe(apps, tmp_path, "tree4_probe.py", "Tree probe")
    text = await read(call, p.window.stable_id)
    lines = text.splitlines()
    fruit = next(i for i, line in enumerate(lines) if 'listitem "Fruit"' in line)
    expander = lines[fruit + 1].rsplit("@", 1)[1]
    assert "[" in lines[fruit + 1] and "collapsed" in lines[fruit + 1], text
    done = await call("perform", {"elementID": expander})
    assert not done.is_error, done.text
    await p.wait_for("selected Fruit")
    assert "expanded Fruit" not in p.lines(), p.lines()
