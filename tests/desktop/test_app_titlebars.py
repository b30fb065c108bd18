"""Title-bar buttons drawn by the app (client-side decorations: a GTK 3 or GTK 4 header bar)
are on the accessibility bus, and act (issue 26 item 5 asked whether they were reachable).

GTK 3's header bar (the controls probe's) and GTK 4's (the widget factory's) expose Minimize,
Maximize and Close as named buttons: the read gives them IDs. The effect is checked on the X
server with xprop (the window's _NET_WM_STATE), a channel the tools do not use. These pass on
main as well: they guard what issue 26's trial found missing on another app.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from deskpilot.sandbox import Sandbox
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.probe_apps import start_probe

pytestmark = pytest.mark.asyncio(loop_scope="session")


def wm_state(sandbox: Sandbox, window: WindowInfo) -> str:
    assert sandbox.info is not None
    return subprocess.run(
        ["xprop", "-display", sandbox.info.display, "-id", str(window.handle), "_NET_WM_STATE"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


async def maximize_by_its_title_bar(call: Call, sandbox: Sandbox, window: WindowInfo) -> None:
    read = await call("read_screen_ax", {"windowID": window.stable_id})
    assert not read.is_error, read.text
    for name in ("Minimize", "Maximize", "Close"):
        find_id(read.text, "button", name)
    assert "MAXIMIZED" not in wm_state(sandbox, window)
    done = await call("perform", {"elementID": find_id(read.text, "button", "Maximize")})
    assert not done.is_error, done.text

    async def maximized() -> bool:
        return "_NET_WM_STATE_MAXIMIZED_VERT" in wm_state(sandbox, window)

    await async_wait_for(maximized, timeout=10, what="the window to be maximized")


async def test_a_gtk3_header_bars_window_buttons_have_ids_and_act(
    call: Call, apps: Apps, sandbox: Sandbox, tmp_path: Path
) -> None:
    probe = await start_probe(apps, tmp_path, "controls_probe.py", "Controls probe")
    await maximize_by_its_title_bar(call, sandbox, probe.window)


@pytest.mark.skipif(
    shutil.which("gtk4-widget-factory") is None,
    reason="gtk4-widget-factory is not installed (apt install gtk-4-examples)",
)
async def test_a_gtk4_header_bars_window_buttons_have_ids_and_act(
    call: Call, apps: Apps, sandbox: Sandbox
) -> None:
    factory = await apps.spawn(
        ["gtk4-widget-factory"], match=lambda w: w.title == "GTK Widget Factory"
    )
    await maximize_by_its_title_bar(call, sandbox, factory)
