"""The console (``deskpilot serve``) with a Wayland backend named: a background session on a
sandbox of that kind of its own, shown live — its card's thumbnail and the session view's
preview — in the console's page, read by the test in Chromium (Playwright); the model is a
local server. The preview's pixels come from the backend's pixel watch: sway's
(desktop/wayland/wlr_preview.py: the window's damage and screencopy) or GNOME's
(desktop/wayland/gnome_preview.py: the monitor's ScreenCast stream, the window named by its
AT-SPI frame)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from deskpilot import _procfs
from tests.desktop.console.test_console import open_and_hold, open_session_page
from tests.desktop.console_kit import chromium, console_process, logged_in, model_server
from tests.wayland.conftest import require

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.sandbox,
    pytest.mark.app,
    pytest.mark.browser,
    pytest.mark.process,
]

#: The canvas's share of light pixels (red above 150) and its mean red level.
LIGHT = """() => { const c = document.getElementById('preview');
                   const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                   let n = 0, sum = 0;
                   for (let i = 0; i < d.length; i += 4) { sum += d[i]; if (d[i] > 150) n++; }
                   return [n / (d.length / 4), sum / (d.length / 4)]; }"""


@dataclass(frozen=True)
class Kind:
    sandbox: str  # what tests.wayland.conftest.require checks
    backend: str
    compositor: bytes  # the sandbox's compositor process, as /proc names it
    size_ok: Callable[[list[int]], bool]
    light_ok: Callable[[float, float], bool]


KINDS = {
    # sway tells where the window is: the preview is the window
    "sway": Kind(
        "sway",
        "wlroots",
        b"sway",
        lambda s: 200 < s[0] <= 1280 and 200 < s[1] <= 800,
        lambda _share, mean: mean > 60,  # the calculator's pixels, not an empty canvas
    ),
    # GNOME tells nobody where a Wayland window is: the preview is the sandbox's screen; the
    # calculator's light pixels on mutter's black background (a GTK 4 calculator, 360x490, is
    # ~17% of the screen; an empty or black canvas has none)
    "gnome": Kind(
        "gnome", "gnome", b"mutter", lambda s: s == [1280, 800], lambda share, _mean: share > 0.05
    ),
}


@pytest_asyncio.fixture(loop_scope="session", scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as browser:
        yield browser


@pytest.mark.parametrize("name", sorted(KINDS))
async def test_a_sandbox_session_is_previewed_live(
    name: str, browser: Browser, tmp_path: Path
) -> None:
    kind = KINDS[name]
    require(kind.sandbox)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESKPILOT_")}
    env.update({"DESKPILOT_HOME": str(tmp_path / "home"), "DESKPILOT_BACKEND": kind.backend})
    with (
        model_server() as (server, router),
        console_process(env, server.url, tmp_path / "serve.log") as console,
    ):
        page = await logged_in(browser, console)
        sid, hold = await open_and_hold(page, router, f"watch-me-on-{name}", "sandbox")
        try:
            # the card names the window (on GNOME by its AT-SPI frame: the preview's reader)
            console.wait_card(
                sid, lambda c: c["title"] == "Calculator", "the card to name the window"
            )
            # the session's desktop is a compositor the console started (read from /proc)
            family = _procfs.descendants([console.proc.pid])
            comms = {_procfs.read(f"/proc/{pid}/comm").strip() for pid in family}
            assert kind.compositor in comms, comms
            await page.wait_for_selector(f'canvas[data-thumb="{sid}"][data-seq]', timeout=30000)
            await open_session_page(page, console, sid)
            await page.wait_for_selector("#preview[data-seq]", timeout=30000)
            size = await page.evaluate(
                "[document.getElementById('preview').width, "
                "document.getElementById('preview').height]"
            )
            assert kind.size_ok(size), size
            share, mean = await page.evaluate(LIGHT)
            assert kind.light_ok(share, mean), (share, mean)
        finally:
            hold.release.set()
        console.wait_end(sid)
        await page.context.close()
