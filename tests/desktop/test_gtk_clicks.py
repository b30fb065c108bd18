"""Issue 21 items 6 and 3 on GTK apps: an element click is a person's click where that is the
truthful way (GTK's action shows a button pressed for 250 ms before it clicks), the action where
a pointer would hit something else, and a tree row's click does what a person's does or says
what it did. The probes (tests/fixtures/apps/) write what happened to them to a file: a channel
the tools never use."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.skills.raw_input import CLICK_GAP_S
from deskpilot.sandbox import Sandbox
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, id_of_line
from tests.desktop.probe_apps import APPS, SYSTEM_PYTHON, start_probe
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
    # pressed and released at once: no fixed pause between them (GTK needs none)
    held = next(int(line.split()[2]) for line in p.lines() if line.startswith("Over held "))
    assert held < CLICK_GAP_S * 1000, p.lines()


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


async def test_a_gtk4_tree_row_under_another_window_says_it_expanded_it(
    call: Call,
    ctx: ToolContext,
    apps: Apps,
    tmp_path: Path,
    sandbox: Sandbox,
    desktop: DesktopFacade,
) -> None:
    """Where no pointer can reach the row (another window lies over it), the expander's own
    action runs, and the result says what it did: it expanded the row, it did not select it."""
    p = await start_probe(apps, tmp_path, "tree4_probe.py", "Tree probe")
    text = await read(call, p.window.stable_id)
    lines = text.splitlines()
    fruit = next(i for i, line in enumerate(lines) if 'listitem "Fruit"' in line)
    expander = lines[fruit + 1].rsplit("@", 1)[1]
    key = ctx.session.elements[expander].key
    x, y = await desktop.element_point(p.window, key)
    other = await apps.spawn(
        [SYSTEM_PYTHON, str(APPS / "actions_probe.py"), str(tmp_path / "other.log")],
        match=lambda w: w.title == "Actions probe",
    )
    # the other window moved over the row's point (the window manager places it)
    subprocess.run(
        ["xdotool", "windowmove", str(other.handle), str(x - 100), str(y - 100)],
        env=sandbox.app_env(),
        check=True,
        timeout=10,
    )

    async def covered() -> bool:
        hit = await desktop.window_at(x, y)
        return hit is not None and hit.handle == other.handle

    await async_wait_for(covered, timeout=10, what="the other window over the row")
    done = await call("perform", {"elementID": expander, "windowID": p.window.stable_id})
    assert not done.is_error, done.text
    await p.wait_for("expanded Fruit")
    assert "expanded the row" in done.text and "selected" not in p.log.read_text(), done.text


async def test_a_button_under_a_box_laid_over_it_is_refused_not_its_neighbour_pressed(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    """A GtkOverlay lays a box holding a button over another button's centre: the box is no
    control, the button in it is what a person's click there presses. A click on the button
    underneath is refused, saying what covers it, and nothing is pressed."""
    p = await start_probe(apps, tmp_path, "overlay_probe.py", "Overlay probe")
    text = await read(call, p.window.stable_id)
    done = await call("perform", {"elementID": find_id(text, "button", "Base")})
    assert done.is_error and "covered by" in done.text and "Floating" in done.text, done.text
    floating = await call("perform", {"elementID": find_id(text, "button", "Floating")})
    assert not floating.is_error, floating.text
    await p.wait_for("clicked Floating by pointer")
    assert not any("clicked Base" in line for line in p.lines()), p.lines()


async def test_a_button_clicked_while_a_menu_is_open_is_clicked_not_lost_to_the_menu(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    """With the app's context menu open (a popup no window list shows, holding the pointer),
    a pointer click outside the menu only closes it: the button named is clicked by its
    action instead, and it is clicked."""
    p = await actions_probe(apps, tmp_path)
    text = await read(call, p.window.stable_id)
    menu = await call(
        "perform", {"action": "right_click", "elementID": id_of_line(text, '"Notes"')}
    )
    assert not menu.is_error and "A menu" in menu.text, menu.text
    done = await call(
        "perform", {"elementID": find_id(text, "button", "Over"), "windowID": p.window.stable_id}
    )
    assert not done.is_error, done.text
    await p.wait_for("clicked Over")
    assert "Over clicked by action" in p.lines(), p.lines()


async def test_a_combo_item_popped_up_over_the_buttons_below_is_chosen(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    """A combo box's list pops up in a surface of its own, over the buttons the tree lays
    after the combo: an item there is not covered by them (the cover check looks no higher
    than the popup), and clicking it chooses it without pressing a button."""
    p = await start_probe(apps, tmp_path, "combo_probe.py", "Combo probe")
    text = await read(call, p.window.stable_id)
    opened = await call("perform", {"elementID": find_id(text, "combobox")})
    assert not opened.is_error and "menu" in opened.text, opened.text
    listed = await read(call, p.window.stable_id)
    for item in ("Basic", "Team"):  # over the buttons' row, and below it
        done = await call("perform", {"elementID": find_id(listed, "menuitem", item)})
        assert not done.is_error, done.text
        await p.wait_for(f"chose {item}")
        if item == "Basic":
            reopened = await call("perform", {"elementID": find_id(text, "combobox")})
            assert not reopened.is_error, reopened.text
            listed = await read(call, p.window.stable_id)
    assert not any(line.startswith("clicked") for line in p.lines()), p.lines()


async def test_a_point_another_dialog_covers_is_clicked_in_the_session_window_and_named_so(
    call: Call, apps: Apps, desktop: DesktopFacade
) -> None:
    """A click at a point of a dialog that another dialog covers (two sessions' dialogs, one
    over the other) presses the dialog's own OK there — it exits, the one over it does not —
    and the result names that OK, not the covering one's (each has its own label)."""
    opened = {}
    for name in ("Under", "Over"):
        window = await apps.spawn(
            ["zenity", "--entry", f"--title=Cover {name}", f"--ok-label={name} OK"],
            match=lambda w, n=name: w.title == f"Cover {n}",  # type: ignore[misc]
        )
        opened[name] = (window, apps.procs[-1])
    (under, under_proc), (over, over_proc) = opened["Under"], opened["Over"]
    snap = await desktop.snapshot(under)
    ok = next(n for n in snap.nodes() if n.role == "push-button" and n.name == "Under OK")
    assert ok.bounds is not None
    x, y = ok.bounds.center
    on_top = await desktop.window_at(x, y)
    assert on_top is not None and on_top.handle == over.handle  # the premise: it is covered
    point = {"x": x - under.geometry.x, "y": y - under.geometry.y}
    done = await call("perform", {"windowID": under.stable_id, **point})
    assert not done.is_error, done.text
    assert 'on button "Under OK"' in done.text, done.text
    assert await asyncio.to_thread(under_proc.wait, 10) == 0
    assert over_proc.poll() is None  # the dialog over it was not clicked
