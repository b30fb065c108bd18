"""The GNOME backend end to end on a headless mutter sandbox, driven only through
``deskpilot tool``, ``deskpilot mcp`` and ``deskpilot run`` with native Wayland apps
(``auto`` picks ``gnome``): a calculator sum, a window screenshot checked by its pixels, a GTK
form, a GTK file chooser, a local page's button in the agent browser, a blocked app refused;
an X11 app of the same session still reachable with ``--backend x11`` on Xwayland. The
scenarios are shared with the sway module (:mod:`tests.wayland.tool_scenarios`); effects are
checked outside deskpilot (apps' output, a web server's log, AT-SPI read by the test)."""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from deskpilot._wait import wait_for
from deskpilot.sandbox import Sandbox
from tests.wayland import tool_scenarios as sc
from tests.wayland.conftest import frames_by_pid, require, texts_of, window_extents

pytestmark = [pytest.mark.sandbox, pytest.mark.app]


@pytest.fixture(scope="module")
def gnome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sandbox, sc.Env]]:
    require("gnome")
    with Sandbox(kind="gnome", width=1280, height=800) as sb:
        assert sb.info is not None
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        env.update(sb.info.client_env())
        env["DESKPILOT_HOME"] = str(tmp_path_factory.mktemp("dphome"))
        yield sb, env


def _mapped(sb: Sandbox) -> sc.Mapped:
    """An app's window is up when its frame is on the accessibility bus (read by the test)."""
    assert sb.info is not None
    bus = sb.info.session_bus
    return lambda pid: bool(frames_by_pid(bus).get(pid))


def test_backend_is_chosen_and_windows_listed(gnome: tuple[Sandbox, sc.Env]) -> None:
    sb, env = gnome
    report = sc.ok(sc.doctor(env))
    assert "auto picks: gnome" in report and "ok capture: 1280x800" in report, report
    proc = sb.spawn(["zenity", "--info", "--title=listed here", "--text=x"])
    wait_for(lambda: _mapped(sb)(proc.pid), timeout=30, what="the window")
    listed = sc.ok(sc.tool(env, "list_windows"))
    assert re.search(rf"Stable Window ID: {proc.pid}/\d+", listed) and "listed here" in listed
    proc.kill()
    proc.wait(timeout=10)


def test_calculator_sum_and_a_screenshot_that_shows_it(gnome: tuple[Sandbox, sc.Env]) -> None:
    sb, env = gnome
    assert sb.info is not None
    wid = sc.calculator_sum(env)
    image = sc.screenshot(env, wid)
    pid = int(wid.split("/")[0])
    # the window's own size, as its frame says (GTK 4: the opaque body; GTK 4 names the
    # frame's role "window")
    frame = window_extents(sb.info.session_bus, pid, "window", "Calculator")
    assert image.size == frame[2:]
    # the "=" key (GTK 4: its label fills the button) is the orange suggested action where
    # AT-SPI says it is: the pixels are the calculator's, aligned with its tree
    x, y, w, h = window_extents(sb.info.session_bus, pid, "label", "=")
    assert h > 40, (x, y, w, h)  # the key, not the "=" of the history line
    r, g, b = image.getpixel((x + w // 2, y + h // 4))  # type: ignore[misc]
    assert r > 200 and 60 < g < 180 and b < 90, (r, g, b)
    assert len(image.getcolors(maxcolors=1 << 20) or []) > 20


def test_pointer_click_lands_in_the_active_windows_coordinates(
    gnome: tuple[Sandbox, sc.Env],
) -> None:
    """A click at window coordinates (no element) presses the button AT-SPI puts there: GTK 3's
    coordinates include its shadow, and the answer is zenity's exit code."""
    sb, env = gnome
    assert sb.info is not None
    proc = sb.spawn(["zenity", "--question", "--title=point here", "--text=yes?"])
    wait_for(lambda: _mapped(sb)(proc.pid), timeout=30, what="the question")
    x, y, w, h = wait_for(
        lambda: _try(lambda: window_extents(sb.info.session_bus, proc.pid, "push button", "Yes")),  # type: ignore[union-attr]
        timeout=20,
        what="the Yes button",
    )
    click = {
        "action": "click",
        "x": x + w // 2,
        "y": y + h // 2,
        "windowID": f"{proc.pid}/point here",
    }
    done = sc.ok(sc.tool(env, "perform", json.dumps(click)))
    assert 'on button "Yes"' in done, done
    assert proc.wait(timeout=20) == 0  # "Yes"; "No" would be 1


def _try(fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except LookupError:
        return None


def test_a_qt_app_that_draws_its_own_title_bar_is_pointed_at_right(
    gnome: tuple[Sandbox, sc.Env],
) -> None:
    """Qt 5 on Wayland draws its own title bar and borders (Mutter decorates no Wayland client),
    and counts its coordinates from the content inside them: a click at the "Find" button's
    place (AT-SPI read by the test) focuses the search field, and what is typed next lands
    there — both texts read back over AT-SPI by the test."""
    sb, env = gnome
    assert sb.info is not None
    bus = sb.info.session_bus
    opened = sc.ok(sc.tool(env, "open_app", '{"bundleId": "FeatherPad"}'))
    found = re.search(r"Stable Window ID: (\d+/\d+)", opened)
    assert found, opened
    wid = found.group(1)
    pid = int(wid.split("/")[0])
    sc.ok(
        sc.tool(
            env, "perform", json.dumps({"action": "type", "text": "hello gnome", "windowID": wid})
        )
    )
    wait_for(lambda: "hello gnome" in texts_of(bus, pid), timeout=20, what="the typed text")
    x, y, w, h = window_extents(bus, pid, "push button", "Find", coords=0)
    click = {"action": "click", "x": x + w // 2, "y": y + h // 2, "windowID": wid}
    sc.ok(sc.tool(env, "perform", json.dumps(click)))
    sc.ok(
        sc.tool(env, "perform", json.dumps({"action": "type", "text": "needle", "windowID": wid}))
    )
    wait_for(lambda: "needle" in texts_of(bus, pid), timeout=20, what="the search text")
    assert "hello gnome" in texts_of(bus, pid)  # the editor kept its text: "needle" went apart
    os.kill(pid, signal.SIGKILL)  # unsaved: quitting would ask
    wait_for(lambda: not _mapped(sb)(pid), timeout=20, what="FeatherPad to be gone")


def test_gtk_form_filled_and_submitted(gnome: tuple[Sandbox, sc.Env]) -> None:
    sb, env = gnome
    sc.gtk_form(sb, env, _mapped(sb))


def test_blocked_app_refused(gnome: tuple[Sandbox, sc.Env]) -> None:
    _sb, env = gnome
    sc.blocked_app_refused(env)


def test_a_file_chosen_in_a_gtk_file_chooser(gnome: tuple[Sandbox, sc.Env]) -> None:
    sb, env = gnome

    def window_id(pid: int) -> str:
        listed = sc.ok(sc.tool(env, "list_windows"))
        m = re.search(rf"Stable Window ID: ({pid}/\d+)", listed)
        assert m, listed
        return m.group(1)

    sc.file_chosen(sb, env, _mapped(sb), window_id)


def test_a_local_pages_button_clicked_in_the_agent_browser(
    gnome: tuple[Sandbox, sc.Env],
) -> None:
    _sb, env = gnome
    sc.page_button_clicked(env)


def test_the_same_through_mcp(gnome: tuple[Sandbox, sc.Env]) -> None:
    sb, env = gnome
    sc.through_mcp(sb, env, _mapped(sb))


def test_the_same_through_run_with_a_stand_in_model(
    gnome: tuple[Sandbox, sc.Env], tmp_path: Path
) -> None:
    _sb, env = gnome
    sc.through_run(env, tmp_path)


def test_an_x11_app_on_xwayland_is_reached_by_both_backends(
    gnome: tuple[Sandbox, sc.Env],
) -> None:
    """An X11 app in the GNOME session: the x11 backend reads it on Xwayland; the gnome backend
    (the default) places it where its frame says — an X11 window knows its place — and a click
    at its Yes button's place answers the question (zenity's exit code)."""
    sb, env = gnome
    assert sb.info is not None
    bus = sb.info.session_bus
    proc = sb.spawn(
        ["zenity", "--question", "--title=on Xwayland", "--text=x"], env={"GDK_BACKEND": "x11"}
    )
    x11 = {**env, "DESKPILOT_BACKEND": "x11"}
    wid = f"{proc.pid}/on Xwayland"
    try:

        def listed() -> bool:
            return "on Xwayland" in sc.tool(x11, "list_windows").stdout

        wait_for(listed, timeout=60, what="the X11 window in the x11 backend's list")
        read = sc.ok(sc.tool(x11, "read_screen_ax", json.dumps({"windowID": wid})))
        assert 'button "Yes"' in read, read
        fx, fy, _w, _h = window_extents(bus, proc.pid, "dialog", "on Xwayland", coords=0)
        assert (fx, fy) != (0, 0)  # on the screen, where Xwayland's window is
        bx, by, bw, bh = window_extents(bus, proc.pid, "push button", "Yes", coords=0)
        click = {"action": "click", "x": bx - fx + bw // 2, "y": by - fy + bh // 2, "windowID": wid}
        done = sc.ok(sc.tool(env, "perform", json.dumps(click)))
        assert 'on button "Yes"' in done, done
        assert proc.wait(timeout=20) == 0  # "Yes"; "No" would be 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_a_session_deskpilot_did_not_start_is_found(gnome: tuple[Sandbox, sc.Env]) -> None:
    sb, env = gnome
    proc = sb.spawn(["zenity", "--info", "--title=found here", "--text=x"])
    try:
        wait_for(lambda: _mapped(sb)(proc.pid), timeout=30, what="the window")
        sc.found_by_itself(sb, env, "gnome", "gnome", "found here")
    finally:
        proc.kill()
        proc.wait(timeout=10)
