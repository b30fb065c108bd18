"""The acceptance scenarios of a Wayland backend, driven only through deskpilot's surfaces
(``deskpilot tool``, ``deskpilot mcp``, ``deskpilot run``), shared by the backends' test
modules. Each checks its effect outside deskpilot: an app's own output and exit code, a local
web server's log, the pixels of a PNG at a place the test reads itself. What differs per
backend is passed in: how a test sees that an app's window is up (``mapped``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from PIL import Image

from deskpilot._wait import wait_for
from deskpilot.sandbox import Sandbox
from tests.desktop.helpers import find_id

Env = dict[str, str]
#: whether the app with this pid has its window up (seen by the test, not by deskpilot)
Mapped = Callable[[int], bool]


def tool(env: Env, name: str, args: str = "{}") -> subprocess.CompletedProcess[str]:
    """One ``deskpilot tool`` call (images are saved in DESKPILOT_HOME, its working dir)."""
    return subprocess.run(
        [sys.executable, "-m", "deskpilot", "tool", name, args],
        env=env,
        cwd=env["DESKPILOT_HOME"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def doctor(env: Env) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deskpilot", "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def calculator_sum(env: Env) -> str:
    """Open the Calculator, type 12+7, Enter; the display read back says 19. The window's
    stable ID."""
    opened = ok(tool(env, "open_app", '{"bundleId": "Calculator"}'))
    wid = re.search(r"Stable Window ID: (\d+/\d+)", opened)
    assert wid, opened
    ok(tool(env, "perform", '{"action": "type", "text": "12+7"}'))
    ok(tool(env, "perform", '{"action": "shortcut", "shortcut": "enter"}'))
    read = ok(tool(env, "read_screen_ax"))
    assert re.search(r'textbox = "19"', read), read
    return wid.group(1)


def screenshot(env: Env, window_id: str | None = None) -> Image.Image:
    """``computer_use_screenshot`` (of the target window, or the one named) as an image; its
    reported dimensions are the PNG's."""
    args = json.dumps({"windowID": window_id} if window_id else {})
    shot = ok(tool(env, "computer_use_screenshot", args))
    size = re.search(r"dimensions: (\d+)x(\d+)", shot)
    path = re.search(r"\[image saved: (\S+\.png)\]", shot)
    assert size and path, shot
    image = Image.open(Path(env["DESKPILOT_HOME"], path.group(1))).convert("RGB")
    assert image.size == (int(size.group(1)), int(size.group(2)))
    return image


def gtk_form(sb: Sandbox, env: Env, mapped: Mapped) -> None:
    """zenity's form: two entries filled (one with non-ASCII text) and OK clicked in one
    perform_sequence; zenity's own output holds both."""
    assert sb.info is not None
    form = sb.spawn(
        ["zenity", "--forms", "--title=Signup", "--add-entry=Name", "--add-entry=City"],
        log="form.log",
    )
    wait_for(lambda: mapped(form.pid), timeout=30, what="the form")
    wid = f"{form.pid}/Signup"
    read = ok(tool(env, "read_screen_ax", f'{{"windowID": "{wid}"}}'))
    # the entries follow their labels: text "Name", textbox …, text "City", textbox …
    fields = re.findall(r'text "(Name|City)"\s+textbox[^@\n]*@(\S+)', read)
    button = re.search(r'button "OK".*?@(\S+)', read)
    assert len(fields) == 2 and button, read
    ids = dict(fields)
    steps = {
        "windowID": wid,
        "steps": [
            {"action": "fill", "elementID": ids["Name"], "text": "Ada Lovelace"},
            {"action": "fill", "elementID": ids["City"], "text": "Zürich"},
            {"action": "click", "elementID": button.group(1)},
        ],
    }
    ok(tool(env, "perform_sequence", json.dumps(steps)))
    assert form.wait(timeout=30) == 0
    assert Path(sb.info.runtime_dir, "form.log").read_text().strip().endswith("Ada Lovelace|Zürich")


def blocked_app_refused(env: Env) -> None:
    refused = tool(env, "open_app", '{"bundleId": "KeePassXC"}')
    assert refused.returncode == 1
    assert "KeePassXC is on the blocked apps list" in refused.stdout + refused.stderr


def file_chosen(sb: Sandbox, env: Env, mapped: Mapped, window_id: Callable[[int], str]) -> None:
    """A GTK file chooser: file5.txt's row clicked (selected, the chooser stays open), OK
    clicked; zenity prints the path chosen."""
    assert sb.info is not None
    folder = Path(sb.info.home, "files")
    folder.mkdir(exist_ok=True)
    for i in range(1, 9):
        (folder / f"file{i}.txt").write_text(f"{i}\n")
    if sb.user is not None:  # the app runs as the sandbox's user
        sb.user.own(str(folder))
    chooser = sb.spawn(["zenity", "--file-selection", f"--filename={folder}/"], log="chosen.log")
    wait_for(lambda: mapped(chooser.pid), timeout=30, what="the file chooser")
    wid = window_id(chooser.pid)

    def row() -> str | None:
        read = tool(env, "read_screen_ax", f'{{"windowID": "{wid}"}}')
        m = re.search(r"^\s*row \d+[^:]*: file5\.txt \|.* @(\S+)$", read.stdout, re.M)
        return m.group(1) if m else None

    eid = wait_for(row, timeout=120, what="file5.txt's row")
    clicked = ok(tool(env, "perform", f'{{"elementID": "{eid}", "windowID": "{wid}"}}'))
    assert "selected" in clicked, clicked
    assert chooser.poll() is None  # selecting never confirms (issue #21): the chooser is open
    read = ok(tool(env, "read_screen_ax", f'{{"windowID": "{wid}"}}'))
    ok(
        tool(
            env,
            "perform",
            json.dumps({"elementID": find_id(read, "button", "OK"), "windowID": wid}),
        )
    )
    assert chooser.wait(timeout=30) == 0
    answer = Path(sb.info.runtime_dir, "chosen.log").read_text().splitlines()  # + GTK warnings
    assert f"{folder}/file5.txt" in answer


@contextmanager
def page_server(page: str) -> Iterator[tuple[str, list[str]]]:
    """A local web server for one page (``/``); yields its URL and the paths asked of it."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = page.encode() if self.path == "/" else b""
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", asked
    finally:
        server.shutdown()
        server.server_close()


def page_button_clicked(env: Env) -> None:
    """A local page's button, clicked through deskpilot in the agent browser, asks the page's
    server for /clicked: the server saw the click."""
    page = (
        "<!doctype html><title>before</title><h1>Agent page</h1>"
        "<button onclick=\"document.title='after the click';"
        "new Image().src='/clicked'\">Press me</button>"
    )
    with page_server(page) as (url, asked):
        ok(tool(env, "open_urls", json.dumps({"urls": [url]})))

        def button() -> str | None:
            read = tool(env, "read_screen_ax")
            m = re.search(r'button "Press me".*?@(\S+)', read.stdout)
            return m.group(1) if m else None

        eid = wait_for(button, timeout=60, what="the page's button")
        assert "/clicked" not in asked
        ok(tool(env, "perform", json.dumps({"elementID": eid})))
        wait_for(lambda: "/clicked" in asked, timeout=30, what="the click at the page's server")


def _text(result: object) -> str:
    return "\n".join(getattr(c, "text", "") for c in getattr(result, "content", []))


def through_mcp(sb: Sandbox, env: Env, mapped: Mapped) -> None:
    """The official MCP client over stdio: windows listed, a dialog read, a blocked app
    refused."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    proc = sb.spawn(["zenity", "--question", "--title=seen over MCP", "--text=ok?"])
    wait_for(lambda: mapped(proc.pid), timeout=30, what="the window")
    wid = f"{proc.pid}/seen over MCP"
    server = StdioServerParameters(command=sys.executable, args=["-m", "deskpilot", "mcp"], env=env)

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

    try:
        listing, tree, refused = anyio.run(go)
        assert "seen over MCP" in listing and 'button "Yes"' in tree and refused
    finally:
        proc.kill()
        proc.wait(timeout=10)


def through_run(env: Env, tmp_path: Path) -> None:
    """``deskpilot run`` with a scripted model: it opens the Calculator, types a sum and reads
    the result; what the model read back holds it."""
    replies = tmp_path / "replies.json"
    script = [
        {"tool_calls": [{"name": "open_app", "args": {"bundleId": "Calculator"}}]},
        {"tool_calls": [{"name": "perform", "args": {"action": "shortcut", "shortcut": "escape"}}]},
        {"tool_calls": [{"name": "perform", "args": {"action": "type", "text": "6*7"}}]},
        {"tool_calls": [{"name": "perform", "args": {"action": "shortcut", "shortcut": "enter"}}]},
        {"tool_calls": [{"name": "read_screen_ax", "args": {}}]},
        "The result is 42.",
    ]
    replies.write_text(json.dumps({"format": "neutral", "replies": script}))
    argv = [sys.executable, "-m", "deskpilot", "run", "--model", f"scripted:{replies}"]
    argv += ["--events", "jsonl", "--max-steps", "10", "compute 6*7 in the calculator"]
    done = subprocess.run(
        argv,
        env=env,
        cwd=env["DESKPILOT_HOME"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    results = [json.dumps(e.get("data")) for e in events if e["kind"] == "tool.result"]
    assert len(results) == 5 and not any('"is_error": true' in r for r in results), results
    assert 'textbox = \\"42\\"' in results[-1], results[-1]  # what the model read back
    assert events[-1]["kind"] == "run.finished"


def found_by_itself(sb: Sandbox, env: Env, compositor: str, backend: str, title: str) -> None:
    """As an MCP client starts a server: no WAYLAND_DISPLAY, DISPLAY or session bus, only the
    runtime dir where the session lives (a user's is /run/user/UID, the default); doctor finds
    the session and the backend, and a tool lists the window titled ``title``."""
    assert sb.info is not None
    home = env["DESKPILOT_HOME"]
    bare = {
        "PATH": env["PATH"],
        "HOME": home,
        "DESKPILOT_HOME": home,
        "XDG_RUNTIME_DIR": sb.info.runtime_dir,
    }
    report = ok(doctor(bare))
    assert "(found in the runtime dir)" in report and f"compositor: {compositor}" in report
    assert f"auto picks: {backend}" in report and "ok capture: 1280x800" in report, report
    listed = ok(tool(bare, "list_windows"))
    assert title in listed, listed
