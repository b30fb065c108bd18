"""The wlroots backend end to end, driven only through ``deskpilot tool`` (one process per
call, as a user's shell or an MCP client would) on a headless sway sandbox: apps opened, read,
typed into, clicked, captured, a form filled and submitted, a blocked app refused. Effects are
checked outside deskpilot: the apps' own output and exit codes, sway's tree, the PNG file."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from deskpilot._wait import wait_for
from deskpilot.desktop.wayland.sway import SwayIpc, SwayWindow
from deskpilot.sandbox import Sandbox
from tests.desktop.helpers import find_id
from tests.wayland.conftest import require

pytestmark = [pytest.mark.sandbox, pytest.mark.app]

Env = dict[str, str]


@pytest.fixture(scope="module")
def sway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sandbox, Env]]:
    require("sway")
    with Sandbox(kind="sway", width=1280, height=800) as sb:
        assert sb.info is not None
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        env.update(sb.info.client_env())
        env["DESKPILOT_HOME"] = str(tmp_path_factory.mktemp("dphome"))
        yield sb, env


def tool(env: Env, name: str, args: str = "{}") -> subprocess.CompletedProcess[str]:
    """One ``deskpilot tool`` call (images are saved in DESKPILOT_HOME, its working dir)."""
    return subprocess.run([sys.executable, "-m", "deskpilot", "tool", name, args], env=env,
                          cwd=env["DESKPILOT_HOME"], capture_output=True, text=True,
                          timeout=180, check=False)  # fmt: skip


def _views(sb: Sandbox) -> list[SwayWindow]:
    async def go() -> list[SwayWindow]:
        assert sb.info is not None
        ipc = await SwayIpc.connect(sb.info.extra_env["SWAYSOCK"])
        try:
            return await ipc.windows()
        finally:
            await ipc.close()

    return asyncio.run(go())


def test_backend_is_chosen_and_windows_listed(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway
    proc = sb.spawn(["zenity", "--info", "--title=listed here", "--text=x"])
    wait_for(lambda: any(v.pid == proc.pid for v in _views(sb)), timeout=30, what="the window")
    done = tool(env, "list_windows")
    assert done.returncode == 0, done.stderr
    con = next(v.con_id for v in _views(sb) if v.pid == proc.pid)
    assert f"{proc.pid}/{con}" in done.stdout and "listed here" in done.stdout
    proc.kill()
    proc.wait(timeout=10)


def test_calculator_sum_read_back(sway: tuple[Sandbox, Env]) -> None:
    _sb, env = sway
    opened = tool(env, "open_app", '{"bundleId": "Calculator"}')
    assert opened.returncode == 0, opened.stdout + opened.stderr
    assert re.search(r"Stable Window ID: \d+/\d+", opened.stdout)
    typed = tool(env, "perform", '{"action": "type", "text": "12+7"}')
    assert typed.returncode == 0, typed.stdout + typed.stderr
    entered = tool(env, "perform", '{"action": "shortcut", "shortcut": "enter"}')
    assert entered.returncode == 0, entered.stdout + entered.stderr
    read = tool(env, "read_screen_ax")
    assert read.returncode == 0 and re.search(r'textbox = "19"', read.stdout), read.stdout


def test_window_screenshot_shows_the_window(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway
    shot = tool(env, "computer_use_screenshot")
    assert shot.returncode == 0, shot.stdout + shot.stderr
    path = re.search(r"\[image saved: (\S+\.png)\]", shot.stdout)
    assert path, shot.stdout
    image = Image.open(Path(env["DESKPILOT_HOME"], path.group(1)))
    calc = next(v for v in _views(sb) if v.app_id == "org.gnome.Calculator")
    assert image.size == (calc.rect.width, calc.rect.height)
    assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 20


def test_gtk_form_filled_and_submitted(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway
    assert sb.info is not None
    form = sb.spawn(["zenity", "--forms", "--title=Signup", "--add-entry=Name",
                     "--add-entry=City"], log="form.log")  # fmt: skip
    wait_for(lambda: any(v.pid == form.pid for v in _views(sb)), timeout=30, what="the form")
    wid = f"{form.pid}/Signup"
    read = tool(env, "read_screen_ax", f'{{"windowID": "{wid}"}}')
    assert read.returncode == 0, read.stdout + read.stderr
    # the entries follow their labels: text "Name", textbox …, text "City", textbox …
    fields = re.findall(r'text "(Name|City)"\s+textbox[^@\n]*@(\S+)', read.stdout)
    ok = re.search(r'button "OK".*?@(\S+)', read.stdout)
    assert len(fields) == 2 and ok, read.stdout
    ids = dict(fields)
    steps = (
        f'{{"windowID": "{wid}", "steps": ['
        f'{{"action": "fill", "elementID": "{ids["Name"]}", "text": "Ada Lovelace"}}, '
        f'{{"action": "fill", "elementID": "{ids["City"]}", "text": "Zürich"}}, '
        f'{{"action": "click", "elementID": "{ok.group(1)}"}}]}}'
    )
    done = tool(env, "perform_sequence", steps)
    assert done.returncode == 0, done.stdout + done.stderr
    assert form.wait(timeout=30) == 0
    assert Path(sb.info.runtime_dir, "form.log").read_text().strip().endswith("Ada Lovelace|Zürich")


def test_blocked_app_refused(sway: tuple[Sandbox, Env]) -> None:
    _sb, env = sway
    refused = tool(env, "open_app", '{"bundleId": "KeePassXC"}')
    assert refused.returncode == 1
    assert "KeePassXC is on the blocked apps list" in refused.stdout + refused.stderr


def test_a_session_deskpilot_did_not_start_is_found(sway: tuple[Sandbox, Env]) -> None:
    """As an MCP client starts a server: no WAYLAND_DISPLAY, SWAYSOCK, DISPLAY or session bus,
    only the runtime dir where the session lives (a user's is /run/user/UID, the default)."""
    sb, env = sway
    assert sb.info is not None
    home = env["DESKPILOT_HOME"]
    bare = {"PATH": env["PATH"], "HOME": home, "DESKPILOT_HOME": home,
            "XDG_RUNTIME_DIR": sb.info.runtime_dir}  # fmt: skip
    doctor = subprocess.run([sys.executable, "-m", "deskpilot", "doctor"], env=bare,
                            capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "(found in the runtime dir)" in doctor.stdout and "compositor: sway" in doctor.stdout
    assert "auto picks: wlroots" in doctor.stdout and "ok capture: 1280x800" in doctor.stdout
    listed = tool(bare, "list_windows")
    assert listed.returncode == 0 and "Calculator" in listed.stdout, listed.stdout + listed.stderr


def _text(result: object) -> str:
    return "\n".join(getattr(c, "text", "") for c in getattr(result, "content", []))


def test_the_same_through_mcp(sway: tuple[Sandbox, Env]) -> None:
    """The official MCP client over stdio, with the environment the sandbox exports."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    sb, env = sway
    proc = sb.spawn(["zenity", "--question", "--title=seen over MCP", "--text=ok?"])
    wait_for(lambda: any(v.pid == proc.pid for v in _views(sb)), timeout=30, what="the window")
    wid = f"{proc.pid}/seen over MCP"
    server = StdioServerParameters(command=sys.executable, args=["-m", "deskpilot", "mcp"],
                                   env=env)  # fmt: skip

    async def go() -> tuple[str, str, bool]:
        log = Path(env["DESKPILOT_HOME"], "mcp-server.log")
        with log.open("w") as err, anyio.fail_after(240):
            async with (
                stdio_client(server, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listing = await session.call_tool("list_windows", {})
                read_ = await session.call_tool("read_screen_ax", {"windowID": wid})
                refused = await session.call_tool("open_app", {"bundleId": "KeePassXC"})
        return _text(listing), _text(read_), bool(refused.is_error)

    listing, tree, refused = anyio.run(go)
    assert "seen over MCP" in listing and 'button "Yes"' in tree and refused
    proc.kill()
    proc.wait(timeout=10)


def test_the_same_through_run_with_a_stand_in_model(
    sway: tuple[Sandbox, Env], tmp_path: Path
) -> None:
    """``deskpilot run`` with a scripted model: it opens the Calculator, types a sum and reads
    the result; the display is then read over AT-SPI by the test itself."""
    import json

    sb, env = sway
    assert sb.info is not None
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({"format": "neutral", "replies": [
        {"tool_calls": [{"name": "open_app", "args": {"bundleId": "Calculator"}}]},
        {"tool_calls": [{"name": "perform", "args": {"action": "shortcut",
                                                     "shortcut": "escape"}}]},
        {"tool_calls": [{"name": "perform", "args": {"action": "type", "text": "6*7"}}]},
        {"tool_calls": [{"name": "perform", "args": {"action": "shortcut",
                                                     "shortcut": "enter"}}]},
        {"tool_calls": [{"name": "read_screen_ax", "args": {}}]},
        "The result is 42.",
    ]}))  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "deskpilot", "run", "--model", f"scripted:{replies}",
         "--events", "jsonl", "--max-steps", "10", "compute 6*7 in the calculator"],
        env=env, cwd=env["DESKPILOT_HOME"], capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    results = [json.dumps(e.get("data")) for e in events if e["kind"] == "tool.result"]
    assert len(results) == 5 and not any('"is_error": true' in r for r in results), results
    assert 'textbox = \\"42\\"' in results[-1], results[-1]  # what the model read back
    assert events[-1]["kind"] == "run.finished"


def test_a_file_chosen_in_a_gtk_file_chooser(sway: tuple[Sandbox, Env]) -> None:
    sb, env = sway
    assert sb.info is not None
    folder = Path(sb.info.home, "files")
    folder.mkdir(exist_ok=True)
    for i in range(1, 9):
        (folder / f"file{i}.txt").write_text(f"{i}\n")
    if sb.user is not None:  # the app runs as the sandbox's user
        sb.user.own(str(folder))
    chooser = sb.spawn(["zenity", "--file-selection", f"--filename={folder}/"], log="chosen.log")
    wait_for(lambda: any(v.pid == chooser.pid for v in _views(sb)), timeout=30,
             what="the file chooser")  # fmt: skip
    con = next(v.con_id for v in _views(sb) if v.pid == chooser.pid)
    wid = f"{chooser.pid}/{con}"

    def row() -> str | None:
        read = tool(env, "read_screen_ax", f'{{"windowID": "{wid}"}}')
        m = re.search(r"^\s*row \d+[^:]*: file5\.txt \|.* @(\S+)$", read.stdout, re.M)
        return m.group(1) if m else None

    eid = wait_for(row, timeout=120, what="file5.txt's row")
    clicked = tool(env, "perform", f'{{"elementID": "{eid}", "windowID": "{wid}"}}')
    assert clicked.returncode == 0, clicked.stdout + clicked.stderr
    assert "selected" in clicked.stdout, clicked.stdout
    assert chooser.poll() is None  # selecting never confirms (issue #21): the chooser is open
    read = tool(env, "read_screen_ax", f'{{"windowID": "{wid}"}}')
    ok = tool(env, "perform", json.dumps({"elementID": find_id(read.stdout, "button", "OK"),
                                          "windowID": wid}))  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert chooser.wait(timeout=30) == 0
    answer = Path(sb.info.runtime_dir, "chosen.log").read_text().splitlines()  # + GTK warnings
    assert f"{folder}/file5.txt" in answer


def test_a_local_pages_button_clicked_in_the_agent_browser(
    sway: tuple[Sandbox, Env], tmp_path: Path
) -> None:
    """Chromium on Wayland (ozone): the page's button, clicked through deskpilot, renames the
    page; the new title is read from sway's tree."""
    sb, env = sway
    assert sb.info is not None
    page = Path(sb.info.home, "page.html")  # where the browser (the sandbox's user) can read
    page.write_text(
        "<!doctype html><title>before</title><h1>Agent page</h1>"
        "<button onclick=\"document.title='after the click'\">Press me</button>"
    )
    opened = tool(env, "open_urls", json.dumps({"urls": [page.as_uri()]}))
    assert opened.returncode == 0, opened.stdout + opened.stderr

    def button() -> str | None:
        read = tool(env, "read_screen_ax")
        m = re.search(r'button "Press me".*?@(\S+)', read.stdout)
        return m.group(1) if m else None

    eid = wait_for(button, timeout=60, what="the page's button")
    clicked = tool(env, "perform", json.dumps({"elementID": eid}))
    assert clicked.returncode == 0, clicked.stdout + clicked.stderr
    wait_for(lambda: any("after the click" in v.title for v in _views(sb)), timeout=30,
             what="the page's new title in sway's tree")  # fmt: skip
