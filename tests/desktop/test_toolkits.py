"""Every toolkit a sandbox can run is on the accessibility bus, and an app that cannot be says
so at once.

GTK 2 (its atk-bridge is a GTK module) and Java/Swing (the ATK wrapper is an assistive
technology) join only when named (deskpilot.desktop.toolkits): a GTK 2 demo and a small Swing
app are read and driven through the tools, and each effect is checked through the app itself
(its window list on the X server, its stdout). ``open_app`` on apps that cannot join (a toolkit
without AT-SPI; GTK 2 started without its bridge) fails well within its 60 s launch wait, with
the reason and what to install or set; the window stays open for screenshots.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.registry import open_resolved
from deskpilot.desktop.toolkits import atk_wrapper, gtk2_modules
from deskpilot.events import discard
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, id_of_line

pytestmark = pytest.mark.asyncio(loop_scope="session")

FIXTURES = Path(__file__).parents[1] / "fixtures" / "apps"
#: open_app waits this long for a launch; "at once" is well inside it
OPEN_APP_WAIT_S = 60.0


def x_titles(display: str) -> list[str]:
    """Titles of the top-level windows on the X server, read with xwininfo (not the tools)."""
    out = subprocess.run(
        ["xwininfo", "-root", "-tree", "-display", display],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split('"')[1] for line in out.splitlines() if line.count('"') >= 2]


needs_gtk2 = pytest.mark.skipif(
    shutil.which("gtk-demo") is None or gtk2_modules() != ["gail", "atk-bridge"],
    reason="GTK 2's demo and accessibility modules are not installed "
    "(apt install gtk2.0-examples libgail-common libatk-adaptor)",
)


@needs_gtk2
async def test_a_gtk2_app_is_read_and_driven(call: Call, apps: Apps, sandbox: Sandbox) -> None:
    assert sandbox.info is not None
    demo = await apps.spawn(["gtk-demo"], match=lambda w: w.title == "GTK+ Code Demos")
    read = await call("read_screen_ax", {"windowID": demo.stable_id})
    assert not read.is_error, read.text
    # the demo list is a GTK 2 tree view: every row with an ID to act on
    assert "row 4: Button Boxes @" in read.text, read.text
    row = id_of_line(read.text, "row 4: Button Boxes")
    done = await call("perform", {"action": "double_click", "elementID": row})
    assert not done.is_error, done.text

    async def opened() -> bool:
        return "Button Boxes" in x_titles(sandbox.info.display)  # type: ignore[union-attr]

    await async_wait_for(opened, timeout=20, what="the Button Boxes demo window")


needs_java = pytest.mark.skipif(
    shutil.which("java") is None or atk_wrapper() is None,
    reason="no Java runtime or no ATK wrapper (apt install openjdk-17-jre libatk-wrapper-java-jni)",
)


@needs_java
async def test_a_java_swing_app_is_read_and_driven(
    call: Call, apps: Apps, sandbox: Sandbox
) -> None:
    assert sandbox.info is not None
    log = Path(sandbox.info.runtime_dir) / "java.log"  # what Apps.spawn names its output
    log.unlink(missing_ok=True)
    probe = await apps.spawn(
        # java runs a one-file program from its source (JEP 330): the JRE is enough, no javac
        ["java", str(FIXTURES / "SwingProbe.java")],
        match=lambda w: w.title == "Swing Probe",
    )
    read = await call("read_screen_ax", {"windowID": probe.stable_id})
    assert not read.is_error, read.text
    button = find_id(read.text, "button", "Press me")
    box = find_id(read.text, "checkbox", "Remember me")
    assert not (await call("perform", {"action": "click", "elementID": button})).is_error
    assert not (await call("perform", {"action": "click", "elementID": box})).is_error

    async def printed() -> bool:
        text = log.read_text() if log.exists() else ""
        return "pressed" in text and "remember true" in text

    await async_wait_for(printed, timeout=20, what="the Swing app to print its changes")


DESKTOP_FILE = """[Desktop Entry]
Type=Application
Name={name}
Exec={exec}
"""


@pytest_asyncio.fixture(loop_scope="session")
async def fresh(
    desktop_settings: Settings, sandbox: Sandbox
) -> AsyncIterator[tuple[ToolContext, Path]]:
    """A tool context on a desktop of its own (its app catalogue read afresh), and the folder
    of the sandbox's own desktop files; the files written there are removed afterwards."""
    assert sandbox.info is not None
    folder = Path(sandbox.info.home) / ".local" / "share" / "applications"
    folder.mkdir(parents=True, exist_ok=True)
    before = set(folder.iterdir())
    settings = desktop_settings.with_overrides(confirm="none")
    desk = await open_resolved(settings)
    ctx = ToolContext(
        desktop=desk, settings=settings, audit=discard, session=Session(), approver=AllowAll()
    )
    yield ctx, folder
    await desk.close()
    for path in set(folder.iterdir()) - before:
        path.unlink()


CANNOT_JOIN = [
    pytest.param(
        "deskpilot-test-xaw",
        "xmessage -center 'no accessibility here'",
        ["built on Xaw", "no accessibility (AT-SPI) support", "computer_use_screenshot"],
        id="xaw-toolkit",
    ),
    pytest.param(
        "deskpilot-test-gtk2-bare",
        "env GTK2_MODULES= gtk-demo",
        ["GTK 2 app", "only as a module", "GTK2_MODULES=gail:atk-bridge"],
        marks=needs_gtk2,
        id="gtk2-without-bridge",
    ),
]


@pytest.mark.parametrize(("name", "command", "said"), CANNOT_JOIN)
async def test_open_app_on_an_app_without_accessibility_fails_at_once(
    fresh: tuple[ToolContext, Path],
    apps: Apps,
    sandbox: Sandbox,
    name: str,
    command: str,
    said: list[str],
) -> None:
    assert sandbox.info is not None
    ctx, folder = fresh
    (folder / f"{name}.desktop").write_text(DESKTOP_FILE.format(name=name, exec=command))
    start = time.monotonic()
    result = await computer_use_tools().call("open_app", {"bundleId": name}, ctx)
    took = time.monotonic() - start
    assert result.is_error, result.text
    assert result.text.startswith(f"open_app failed: {name} opened its window"), result.text
    assert "its controls cannot be read" in result.text
    for words in said:
        assert words in result.text, result.text
    # said at once: well inside the launch's wait for a tree that would never come
    assert took < OPEN_APP_WAIT_S / 2, f"{took:.1f} s"
    # the window is left open (a screenshot can still show it): the X server lists it
    named = re.search(r"opened its window \"(.+?)\" \(windowID (\d+)/(\d+)\)", result.text)
    assert named, result.text
    title, pid, xid = named.group(1), int(named.group(2)), int(named.group(3))
    window = next(w for w in await ctx.desktop.list_windows() if w.handle == xid)
    await apps.adopt(window)
    assert pid == window.pid != 0
    assert title in x_titles(sandbox.info.display)


async def test_open_app_on_an_app_that_exits_at_once_says_why_at_once(
    fresh: tuple[ToolContext, Path],
) -> None:
    # as a media player refusing to run as root does: a message, exit status 1, no window
    ctx, folder = fresh
    name = "deskpilot-test-refuses"
    command = "sh -c 'echo \"this player is not supposed to be run as root. Sorry.\" >&2; exit 1'"
    (folder / f"{name}.desktop").write_text(DESKTOP_FILE.format(name=name, exec=command))
    start = time.monotonic()
    result = await computer_use_tools().call("open_app", {"bundleId": name}, ctx)
    took = time.monotonic() - start
    assert result.is_error
    assert f"{name} exited with code 1 before showing a window" in result.text, result.text
    assert "not supposed to be run as root" in result.text
    assert took < OPEN_APP_WAIT_S / 2, f"{took:.1f} s"


@needs_gtk2
async def test_doctor_names_a_running_app_off_the_bus_and_why(
    apps: Apps, sandbox: Sandbox, desktop_settings: Settings
) -> None:
    """``deskpilot doctor`` on a desktop where a GTK 2 app runs without its bridge: the app,
    and what to set. That it is off the bus is checked with Debian's pyatspi."""
    assert sandbox.info is not None
    proc = sandbox.spawn(["gtk-demo"], env={"GTK2_MODULES": "", "GTK_MODULES": ""})
    apps.procs.append(proc)
    apps.pids.add(proc.pid)

    async def window() -> bool:
        return any(
            w.pid == proc.pid and w.title == "GTK+ Code Demos"
            for w in await apps.desktop.list_windows()
        )

    await async_wait_for(window, timeout=30, what="the GTK 2 demo's window")
    walk = subprocess.run(
        [
            "/usr/bin/python3",
            str(Path(__file__).parents[2] / "scripts" / "atspi_exposed.py"),
            "--pid",
            str(proc.pid),
        ],
        capture_output=True,
        text=True,
        env=sandbox.app_env(),
        timeout=60,
    )
    assert walk.returncode == 1 and "no accessible application" in walk.stderr
    env = {**desktop_settings.environ, "DESKPILOT_SANDBOX": sandbox.info.runtime_dir}
    done = subprocess.run(
        [sys.executable, "-m", "deskpilot", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    line = next((ln for ln in done.stdout.splitlines() if f"pid {proc.pid}" in ln), "")
    assert "'GTK+ Code Demos'" in line and "GTK 2" in line and "GTK2_MODULES" in line, done.stdout
    assert re.search(r"apps on the bus: \d+ of \d+ with windows", done.stdout), done.stdout
