"""The wlroots backend end to end, driven only through ``deskpilot tool`` (one process per
call, as a user's shell or an MCP client would) on a headless sway sandbox: apps opened, read,
typed into, clicked, captured, a form filled and submitted, a blocked app refused. Effects are
checked outside deskpilot: the apps' own output and exit codes, sway's tree, a web server's
log, the PNG file. The scenarios are shared with the GNOME module
(:mod:`tests.wayland.tool_scenarios`)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from deskpilot._wait import wait_for
from deskpilot.desktop.wayland.sway import SwayIpc, SwayWindow
from deskpilot.sandbox import Sandbox
from tests.wayland import tool_scenarios as sc
from tests.wayland.conftest import require

pytestmark = [pytest.mark.sandbox, pytest.mark.app]

#: kept for modules that import them from here
Env = sc.Env
tool = sc.tool


@pytest.fixture(scope="module")
def sway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sandbox, Env]]:
    require("sway")
    with Sandbox(kind="sway", width=1280, height=800) as sb:
        assert sb.info is not None
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        env.update(sb.info.client_env())
        env["DESKPILOT_HOME"] = str(tmp_path_factory.mktemp("dphome"))
        yield sb, env


def _views(sb: Sandbox) -> list[SwayWindow]:
    async def go() -> list[SwayWindow]:
        assert sb.info is not None
        ipc = await SwayIpc.connect(sb.info.extra_env["SWAYSOCK"])
        try:
            return await ipc.windows()
        finally:
            await ipc.close()

    return asyncio.run(go())


def _mapped(sb: Sandbox) -> sc.Mapped:
    """An app's window is up when sway's tree has it."""
    return lambda pid: any(v.pid == pid for v in _views(sb))


def test_backend_is_chosen_and_windows_listed(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway
    proc = sb.spawn(["zenity", "--info", "--title=listed here", "--text=x"])
    wait_for(lambda: _mapped(sb)(proc.pid), timeout=30, what="the window")
    done = tool(env, "list_windows")
    assert done.returncode == 0, done.stderr
    con = next(v.con_id for v in _views(sb) if v.pid == proc.pid)
    assert f"{proc.pid}/{con}" in done.stdout and "listed here" in done.stdout
    proc.kill()
    proc.wait(timeout=10)


def test_calculator_sum_read_back(sway: tuple[Sandbox, Env]) -> None:
    _sb, env = sway
    sc.calculator_sum(env)


def test_window_screenshot_shows_the_window(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway
    image = sc.screenshot(env)
    calc = next(v for v in _views(sb) if v.app_id == "org.gnome.Calculator")
    assert image.size == (calc.rect.width, calc.rect.height)
    assert len(image.getcolors(maxcolors=1 << 20) or []) > 20


def test_gtk_form_filled_and_submitted(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway
    sc.gtk_form(sb, env, _mapped(sb))


def test_blocked_app_refused(sway: tuple[Sandbox, Env]) -> None:
    _sb, env = sway
    sc.blocked_app_refused(env)


def test_a_session_deskpilot_did_not_start_is_found(sway: tuple[Sandbox, Env]) -> None:
    """As an MCP client starts a server: no WAYLAND_DISPLAY, SWAYSOCK, DISPLAY or session bus,
    only the runtime dir where the session lives (a user's is /run/user/UID, the default)."""
    sb, env = sway
    sc.found_by_itself(sb, env, "sway", "wlroots", "Calculator")


def test_the_same_through_mcp(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway
    sc.through_mcp(sb, env, _mapped(sb))


def test_the_same_through_run_with_a_stand_in_model(
    sway: tuple[Sandbox, Env], tmp_path: Path
) -> None:
    _sb, env = sway
    sc.through_run(env, tmp_path)


def test_a_file_chosen_in_a_gtk_file_chooser(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway

    def window_id(pid: int) -> str:
        con = next(v.con_id for v in _views(sb) if v.pid == pid)
        return f"{pid}/{con}"

    sc.file_chosen(sb, env, _mapped(sb), window_id)


def test_a_local_pages_button_clicked_in_the_agent_browser(sway: tuple[Sandbox, Env]) -> None:
    """Chromium on Wayland (ozone): the page's button, clicked through deskpilot, is seen by
    the page's own server and renames the page, as sway's tree shows."""
    sb, env = sway
    sc.page_button_clicked(env)
    wait_for(
        lambda: any("after the click" in v.title for v in _views(sb)),
        timeout=30,
        what="the page's new title in sway's tree",
    )
