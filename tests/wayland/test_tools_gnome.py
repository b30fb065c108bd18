"""A headless GNOME (mutter) sandbox driven only through ``deskpilot tool``: until the GNOME
backend's window list exists (docs/backends.md), ``auto`` picks the X11 backend on mutter's
Xwayland, and apps run there as X11 clients (mutter is their window manager; its Xwayland asks
for the cookie the sandbox exports). Checked outside deskpilot: zenity's output, the PNG."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from deskpilot._wait import wait_for
from deskpilot.sandbox import Sandbox
from tests.wayland.conftest import frames_by_pid, require
from tests.wayland.test_tools_sway import Env, tool

pytestmark = [pytest.mark.sandbox, pytest.mark.app]


@pytest.fixture(scope="module")
def gnome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sandbox, Env]]:
    require("gnome")
    with Sandbox(kind="gnome", width=1280, height=800) as sb:
        assert sb.info is not None
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        env.update(sb.info.client_env())
        env["DESKPILOT_HOME"] = str(tmp_path_factory.mktemp("dphome"))
        yield sb, env


def test_calculator_sum_and_a_screenshot_that_shows_it(gnome: tuple[Sandbox, Env]) -> None:
    _sb, env = gnome
    assert "auto picks: x11" in tool_doctor(env)
    opened = tool(env, "open_app", '{"bundleId": "Calculator"}')
    assert opened.returncode == 0, opened.stdout + opened.stderr
    for args in (
        '{"action": "type", "text": "12+7"}',
        '{"action": "shortcut", "shortcut": "enter"}',
    ):
        done = tool(env, "perform", args)
        assert done.returncode == 0, done.stdout + done.stderr
    read = tool(env, "read_screen_ax")
    assert re.search(r'textbox = "19"', read.stdout), read.stdout
    shot = tool(env, "computer_use_screenshot")
    size = re.search(r"dimensions: (\d+)x(\d+)", shot.stdout)
    path = re.search(r"\[image saved: (\S+\.png)\]", shot.stdout)
    assert shot.returncode == 0 and size and path, shot.stdout
    image = Image.open(Path(env["DESKPILOT_HOME"], path.group(1)))
    assert image.size == (int(size.group(1)), int(size.group(2)))
    assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 20


def test_form_submitted_and_blocked_app_refused(gnome: tuple[Sandbox, Env]) -> None:
    sb, env = gnome
    assert sb.info is not None
    form = sb.spawn(["zenity", "--forms", "--title=Signup", "--add-entry=Name"],
                    env={"GDK_BACKEND": "x11"}, log="gform.log")  # fmt: skip
    wait_for(lambda: frames_by_pid(sb.info.session_bus).get(form.pid), timeout=60,  # type: ignore[union-attr]
             what="the form")  # fmt: skip
    wid = f"{form.pid}/Signup"

    def fields() -> tuple[re.Match[str], re.Match[str]] | None:
        # the frame is on the bus before Xwayland's window has its title: read until it has
        read = tool(env, "read_screen_ax", f'{{"windowID": "{wid}"}}')
        field = re.search(r'text "Name"\s+textbox[^@\n]*@(\S+)', read.stdout)
        ok = re.search(r'button "OK".*?@(\S+)', read.stdout)
        return (field, ok) if field and ok else None

    field, ok = wait_for(fields, timeout=30, what="the form's window with its field and OK")
    steps = (f'{{"windowID": "{wid}", "steps": [{{"action": "fill", "elementID": '
             f'"{field.group(1)}", "text": "Grace"}}, {{"action": "click", "elementID": '
             f'"{ok.group(1)}"}}]}}')  # fmt: skip
    done = tool(env, "perform_sequence", steps)
    assert done.returncode == 0, done.stdout + done.stderr
    assert form.wait(timeout=30) == 0
    assert "Grace" in Path(sb.info.runtime_dir, "gform.log").read_text().splitlines()
    refused = tool(env, "open_app", '{"bundleId": "KeePassXC"}')
    assert refused.returncode == 1 and "blocked apps list" in refused.stdout + refused.stderr


def tool_doctor(env: Env) -> str:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "deskpilot", "doctor"], env=env,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    return done.stdout
