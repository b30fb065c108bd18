"""The console (``deskpilot serve``) with the GNOME backend named: a background session on a
headless mutter sandbox of its own, shown live — its card's thumbnail and the session view's
preview — in the console's page, read by the test in Chromium (Playwright). The preview's
pixels come from the GNOME pixel watch (desktop/wayland/gnome_preview.py: the monitor's
ScreenCast stream, the window named by its AT-SPI frame); the model is a local server."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright

from deskpilot import _procfs
from tests.desktop.console_kit import CHROMIUM, console_process, model_server
from tests.desktop.test_console import Hold, open_session_page, start_from_form
from tests.wayland.conftest import require

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.sandbox, pytest.mark.app,
              pytest.mark.browser, pytest.mark.process]  # fmt: skip


@pytest_asyncio.fixture(loop_scope="session", scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        await chromium.close()


async def test_a_sandbox_session_on_gnome_is_previewed_live(
    browser: Browser, tmp_path: Path
) -> None:
    require("gnome")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESKPILOT_")}
    env.update({"DESKPILOT_HOME": str(tmp_path / "home"), "DESKPILOT_BACKEND": "gnome"})
    with (
        model_server() as (server, router),
        console_process(env, server.url, tmp_path / "serve.log") as console,
    ):
        context = await browser.new_context()
        login = await context.request.post(f"{console.origin}/api/login",
                                           data={"token": console.token})  # fmt: skip
        assert login.ok, await login.text()
        page = await context.new_page()
        await page.goto(f"{console.origin}/")
        await page.wait_for_selector("#conn.live")
        hold = Hold()
        key = router.add("watch-me-on-gnome", hold)
        try:
            sid = await start_from_form(page, f"{key}: open the calculator", target="sandbox")
            await asyncio.to_thread(hold.entered.wait, 90)
            # the card names the window by its AT-SPI frame (the preview's own reader)
            console.wait_card(sid, lambda c: c["title"] == "Calculator",
                              "the card to name the window")  # fmt: skip
            # the session's desktop is a mutter the console started (read from /proc)
            family = _procfs.descendants([console.proc.pid])
            assert any(_procfs.read(f"/proc/{pid}/comm").strip() == b"mutter" for pid in family)
            await page.wait_for_selector(f'canvas[data-thumb="{sid}"][data-seq]', timeout=30000)
            await open_session_page(page, console, sid)
            await page.wait_for_selector("#preview[data-seq]", timeout=30000)
            size = await page.evaluate("[document.getElementById('preview').width, "
                                       "document.getElementById('preview').height]")  # fmt: skip
            # GNOME tells nobody where a Wayland window is: the preview is the sandbox's screen
            assert size == [1280, 800], size
            # the calculator's light pixels on mutter's black background: a GTK 4 calculator
            # (360x490) is ~17% of the screen; an empty or black canvas has none
            light = await page.evaluate(
                """() => { const c = document.getElementById('preview');
                           const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                           let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] > 150) n++;
                           return n / (d.length / 4); }"""
            )  # fmt: skip
            assert light > 0.05, light
        finally:
            hold.release.set()
        console.wait_end(sid)
        await context.close()
