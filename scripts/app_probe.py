"""The app probe: how well deskpilot reads everyday apps, one line per app.

    .venv/bin/python scripts/app_probe.py                 # every app of the list installed here
    .venv/bin/python scripts/app_probe.py kcalc evince    # some of them (by name in the list)
    .venv/bin/python scripts/app_probe.py --markdown docs/apps-table.md --json out.json

It starts a sandbox desktop, opens each app of :data:`APPS` that is installed (``open_app``
for desktop files, the command line for the rest), reads its window through the tools
(``read_screen_ax``, as a model would) and walks the same window with Debian's pyatspi apart
from deskpilot (scripts/atspi_exposed.py), then reports per app:

* **on bus** — controls the app exposes as showing (interactive roles, editable text, an
  icon view's selectable icons, and nodes offering actions whose role is a control's);
* **with ID** — lines of the read carrying an element ID (a model can act on them);
* **read** — the read's size in characters;
* **text seen** — of the names and texts the app exposes on showing nodes, the share the read
  carries (a display's value, a terminal's screen, a page's text, labels);
* **twice** — lines of the read with an ID that repeat another's element: the same role and
  name at the same place (an element reached twice: through two parents, a list and its
  model's view, an embedded widget);
* **toolkit** and, for an app that cannot be read, why.

A toolkit that stops reaching the bus, text that stops reaching the read or a read that
balloons shows here the day it lands: the table with today's figures is in docs/apps.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from deskpilot._wait import async_wait_for
from deskpilot.ax.roles import INTERACTIVE, clean_name
from deskpilot.config import load_settings
from deskpilot.desktop.base import OpenedDesktop, WindowInfo
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext

HERE = Path(__file__).resolve().parent
EXPOSED = HERE / "atspi_exposed.py"
SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class App:
    """One app of the probe: its label, how it is opened, what it is."""

    label: str
    kind: str
    app_id: str = ""  # a desktop file id: opened with open_app
    argv: tuple[str, ...] = ()  # else this command ("{pdf}": a one-page PDF)
    program: str = ""  # the executable that says it is installed
    #: the main window's title (a part of it), for an app whose accessible splash screen
    #: stays up while it starts (GIMP)
    window: str = ""


#: Everyday apps by toolkit and kind: an editor and a viewer per toolkit, terminals,
#: calculators, a file manager, a document viewer, media players, image and vector editors,
#: a mail client and browsers.
APPS: tuple[App, ...] = (
    App("GNOME Calculator", "GTK 4 calculator", app_id="org.gnome.Calculator",
        program="gnome-calculator"),
    App("galculator", "GTK 3 calculator", app_id="galculator", program="galculator"),
    App("KCalc", "Qt 5 calculator", app_id="org.kde.kcalc", program="kcalc"),
    App("SpeedCrunch", "Qt 5 calculator", app_id="speedcrunch", program="speedcrunch"),
    App("Mousepad", "GTK 3 editor", app_id="org.xfce.mousepad", program="mousepad"),
    App("Text Editor", "GTK 4 editor", app_id="org.gnome.TextEditor",
        program="gnome-text-editor"),
    App("FeatherPad", "Qt 5 editor", app_id="featherpad", program="featherpad"),
    App("Xfce Terminal", "VTE terminal", argv=("xfce4-terminal", "--disable-server"),
        program="xfce4-terminal"),
    App("QTerminal", "Qt terminal", app_id="qterminal", program="qterminal"),
    App("Evince", "PDF viewer (GTK 3)", argv=("evince", "{pdf}"), program="evince"),
    App("Thunar", "file manager (GTK 3)", app_id="thunar", program="thunar"),
    App("GTK 3 icon view", "icon view (GTK 3 demo)", argv=("gtk3-demo", "--run=iconview"),
        program="gtk3-demo", window="Icon View"),
    App("System Monitor", "GTK 3 monitor", app_id="gnome-system-monitor",
        program="gnome-system-monitor"),
    App("GTK 3 widgets", "GTK 3 widget factory", app_id="gtk3-widget-factory",
        program="gtk3-widget-factory"),
    App("GTK 4 widgets", "GTK 4 widget factory", app_id="org.gtk.WidgetFactory4",
        program="gtk4-widget-factory"),
    App("GTK 2 demo", "GTK 2 demo", argv=("gtk-demo",), program="gtk-demo"),
    App("GIMP", "GTK 2 image editor", app_id="gimp", program="gimp",
        window="GNU Image Manipulation Program"),
    App("Inkscape", "GTK 3 vector editor", app_id="org.inkscape.Inkscape", program="inkscape"),
    App("Parole", "GTK 3 media player", app_id="org.xfce.Parole", program="parole"),
    App("SMPlayer", "Qt 5 media player", app_id="smplayer", program="smplayer"),
    App("VLC", "Qt 5 media player", app_id="vlc", program="vlc"),
    App("LibreOffice Writer", "VCL word processor", app_id="libreoffice-writer",
        program="libreoffice"),
    App("Thunderbird", "Gecko mail client", app_id="thunderbird", program="thunderbird"),
    App("Firefox", "Gecko browser", app_id="firefox-esr", program="firefox-esr"),
    App("Chromium", "Chromium browser", app_id="chromium", program="chromium"),
)  # fmt: skip

#: pyatspi role names (with spaces) of controls.
CONTROL_ROLES = {role.replace("-", " ") for role in INTERACTIVE} - {"scroll bar"}


@dataclass
class Row:
    label: str
    kind: str
    toolkit: str = ""
    on_bus: int = 0
    with_id: int = 0
    read_chars: int = 0
    text_exposed: int = 0
    text_seen: int = 0
    seconds: float = 0.0
    problem: str = ""
    missing: list[str] = field(default_factory=list)  # a few exposed texts the read lacks
    twice: int = 0  # lines with an ID repeating another's element (role, name and place)

    @property
    def seen_share(self) -> str:
        if not self.text_exposed:
            return "–"
        share = 100 * self.text_seen / self.text_exposed
        return f"{share:.0f}% ({self.text_seen}/{self.text_exposed})"


def installed(app: App) -> bool:
    return shutil.which(app.program or (app.argv[0] if app.argv else app.app_id)) is not None


#: the probe PDF's text
PDF_LINES = ["Quarterly report for Wombat Ltd", "Revenue rose by 17 percent", "Signed: A. Byron"]


def write_pdf(path: Path, lines: list[str] = PDF_LINES) -> None:
    """A one-page PDF showing ``lines`` (Helvetica, one per line); also the tests' fixture."""
    content = "BT /F1 14 Tf 72 720 Td 18 TL " + " ".join(f"({t}) Tj T*" for t in lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(out)


def _norm(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").split()).casefold()


def compare(row: Row, read: str, nodes: list[dict[str, Any]]) -> None:
    """Fill ``row``'s figures from the read and the exposed nodes."""
    # GTK 4 says "visible" only (no "showing" below its windows): then visible is shown
    uses_showing = any("showing" in n["states"] for n in nodes if n["depth"] > 0)

    def shows(n: dict[str, Any]) -> bool:
        return "visible" in n["states"] and ("showing" in n["states"] or not uses_showing)

    # GTK 3's icon view items say SHOWING on a hidden page too: an icon counts when its
    # parent shows (the nodes are in walk order, each after its parent)
    shown: list[dict[str, Any]] = []
    by_depth: dict[int, bool] = {}
    for n in nodes:
        parent_shows = by_depth.get(n["depth"] - 1, True)
        by_depth[n["depth"]] = shows(n) and (n["role"] != "icon" or parent_shows)
        if by_depth[n["depth"]]:
            shown.append(n)
    row.on_bus = sum(
        1 for n in shown
        if n["role"] in CONTROL_ROLES or ("editable" in n["states"] and n["role"] != "terminal")
        or (n["role"] == "icon" and "selectable" in n["states"])  # an icon view's item
    )  # fmt: skip
    lines = read.splitlines()
    row.with_id = sum(1 for ln in lines if re.search(r" @\S+$", ln))
    row.read_chars = len(read)
    body = _norm(read.replace("│ ", " ").replace("⏎", " "))
    wanted: list[str] = []
    for n in shown:
        for piece in (clean_name(n["name"]), *((n["text"] or "").splitlines()[-40:])):
            piece = _norm(piece or "")
            if len(piece) >= 2 and not piece.startswith(("gtk", "qt")) and piece not in wanted:
                wanted.append(piece)
    row.text_exposed = len(wanted)
    missing = [w for w in wanted if w[:40] not in body]
    row.text_seen = row.text_exposed - len(missing)
    row.missing = missing[:5]


class Probe:
    def __init__(
        self, sandbox: Sandbox, desk: OpenedDesktop, ctx: ToolContext, scratch: Path
    ) -> None:
        self.sandbox = sandbox
        self.desk = desk
        self.ctx = ctx
        self.tools = computer_use_tools()
        self.scratch = scratch

    async def call(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        result = await self.tools.call(name, args, self.ctx)
        return result.is_error, result.text

    async def open(self, app: App, timeout: float) -> WindowInfo:
        desk = self.desk
        if app.app_id:
            failed, text = await self.call("open_app", {"bundleId": app.app_id})
            if failed:
                raise RuntimeError(text.splitlines()[0] if text else "open_app failed")
            stable = re.search(r"Stable Window ID: (\S+)", text)
            assert stable is not None, text
            pid, handle = stable.group(1).split("/", 1)
            windows = await desk.list_windows()
            return next(w for w in windows if str(w.handle) == handle and str(w.pid) == pid)
        pdf = self.scratch / "report.pdf"
        write_pdf(pdf)
        argv = [a.replace("{pdf}", str(pdf)) for a in app.argv]
        before = {w.handle for w in await desk.list_windows()}
        self.sandbox.spawn(argv, log=f"probe-{Path(argv[0]).name}.log")

        async def window() -> WindowInfo | None:
            for w in await desk.list_windows():
                if w.handle not in before and w.title:
                    return w
            return None

        found = await async_wait_for(window, timeout=timeout, what=f"a window of {argv[0]}")
        await desk.wait_tree_ready(found, timeout)
        return found

    async def main_window(self, app: App, window: WindowInfo, timeout: float) -> WindowInfo:
        """The app's main window once its windows stop coming and going (a splash screen
        gives way to it): the largest of its process's windows, unchanged for 3 s."""
        desk = self.desk
        deadline = time.monotonic() + timeout
        last: set[Any] = set()
        steady_since = time.monotonic()
        best = window
        while time.monotonic() < deadline:
            mine = [
                w for w in await desk.list_windows()
                if w.pid == window.pid and w.title and app.window in w.title
            ]  # fmt: skip
            handles = {w.handle for w in mine}
            if handles != last:
                last, steady_since = handles, time.monotonic()
            elif time.monotonic() - steady_since >= 3.0 and mine:
                best = max(mine, key=lambda w: w.geometry.width * w.geometry.height)
                break
            await asyncio.sleep(0.5)  # a probe watching an app start, not a test
        if best.handle != window.handle:
            await desk.wait_tree_ready(best, 30.0)
        return best

    async def settle(self, window: WindowInfo) -> str:
        """Read until two reads in a row agree (an app still filling its window)."""
        last = ""
        for _ in range(8):
            failed, text = await self.call("read_screen_ax", {"windowID": window.stable_id})
            if failed:
                raise RuntimeError(text.splitlines()[0])
            if text == last:
                break
            last = text
            await asyncio.sleep(0.5)  # a probe, not a test: give a starting app its moment
        return last

    async def twice(self, window: WindowInfo, read: str) -> int:
        """Lines of the read with an ID whose element has the role, name and place of another
        line's: the same thing read twice."""
        places: dict[tuple[str, str, tuple[int, int, int, int]], int] = {}
        for eid in dict.fromkeys(re.findall(r" @(\S+)$", read, re.M)):
            record = self.ctx.session.elements.get(eid)
            if record is None or not record.name:
                continue
            live = await self.desk.inspect(record.key)
            b = live.bounds if live is not None else None
            if b is None or b.empty:
                continue
            place = (record.role, record.name, (b.x, b.y, b.width, b.height))
            places[place] = places.get(place, 0) + 1
        return sum(n - 1 for n in places.values())

    def exposed(self, window: WindowInfo) -> dict[str, Any]:
        done = subprocess.run(
            [SYSTEM_PYTHON, str(EXPOSED), "--pid", str(window.pid), "--title", window.title],
            capture_output=True, text=True, env=self.sandbox.app_env(), timeout=180,
        )  # fmt: skip
        if done.returncode != 0:
            return {"toolkit": "", "nodes": [], "error": done.stderr.strip()[-200:]}
        data: dict[str, Any] = json.loads(done.stdout)
        return data

    async def close(self, windows_before: set[Any]) -> None:
        desk = self.desk
        pids = {w.pid for w in await desk.list_windows() if w.handle not in windows_before}
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

        async def gone() -> bool:
            return not any(w.pid in pids for w in await desk.list_windows())

        with contextlib.suppress(Exception):
            await async_wait_for(gone, timeout=15, what="the app to close")

    async def run(self, app: App, timeout: float) -> Row:
        row = Row(app.label, app.kind)
        start = time.perf_counter()
        before = {w.handle for w in await self.desk.list_windows()}
        try:
            window = await self.main_window(app, await self.open(app, timeout), timeout)
            read = await self.settle(window)
            data = self.exposed(window)
            row.toolkit = data.get("toolkit", "")
            if data.get("error"):
                row.problem = f"not on the bus: {data['error']}"
            compare(row, read, data["nodes"])
            row.twice = await self.twice(window, read)
        except Exception as exc:  # a probe reports every failure and goes on
            row.problem = " ".join(str(exc).split())[:160] or type(exc).__name__
        finally:
            await self.close(before)
        row.seconds = time.perf_counter() - start
        return row


def markdown(rows: list[Row]) -> str:
    out = [
        "| app | kind | toolkit | controls on bus | with ID | read (chars) | text seen | twice "
        "| note |",
        "|---|---|---|---:|---:|---:|---|---:|---|",
    ]
    for r in rows:
        note = r.problem or (
            "missing: " + ", ".join(f"“{m[:30]}”" for m in r.missing[:3]) if r.missing else ""
        )
        out.append(
            f"| {r.label} | {r.kind} | {r.toolkit or '–'} | {r.on_bus} | {r.with_id} | "
            f"{r.read_chars} | {r.seen_share} | {r.twice} | {note.replace('|', '/')} |"
        )
    return "\n".join(out) + "\n"


async def probe(apps: list[App], timeout: float) -> list[Row]:
    rows: list[Row] = []
    with (
        tempfile.TemporaryDirectory(prefix="deskpilot-probe-") as tmp,
        Sandbox(width=1280, height=800) as sandbox,
    ):
        assert sandbox.info is not None
        env = sandbox.app_env()
        env["DESKPILOT_SANDBOX"] = sandbox.info.runtime_dir
        env["DESKPILOT_HOME"] = tmp
        settings = load_settings(env=env).with_overrides(confirm="none")
        desk = await open_resolved(settings)
        ctx = ToolContext(
            desktop=desk, settings=settings, audit=discard, session=Session(), approver=AllowAll()
        )
        runner = Probe(sandbox, desk, ctx, Path(tmp))
        try:
            for app in apps:
                print(f"probing {app.label} ({app.kind})…", file=sys.stderr, flush=True)
                rows.append(await runner.run(app, timeout))
                r = rows[-1]
                print(f"  {r.on_bus} on bus, {r.with_id} with ID, {r.read_chars} chars, text "
                      f"{r.seen_share}, {r.twice} twice {r.problem}", file=sys.stderr,
                      flush=True)  # fmt: skip
        finally:
            await desk.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Open everyday apps on a sandbox and report how deskpilot reads each.",
        epilog="Apps not installed are skipped and listed. The list: "
        + ", ".join(a.label for a in APPS),
    )
    parser.add_argument("apps", nargs="*", help="labels or desktop ids to probe (default: all)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per app to open")
    parser.add_argument("--markdown", type=Path, help="write the table here too")
    parser.add_argument("--json", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    wanted = {a.casefold() for a in args.apps}
    chosen = [
        a for a in APPS
        if not wanted or a.label.casefold() in wanted or a.app_id.casefold() in wanted
        or a.program.casefold() in wanted
    ]  # fmt: skip
    if wanted and not chosen:
        parser.error(f"none of {sorted(wanted)} is in the probe's list (see --help)")
    missing = [a.label for a in chosen if not installed(a)]
    present = [a for a in chosen if installed(a)]
    if missing:
        print(f"not installed, skipped: {', '.join(missing)}", file=sys.stderr)
    rows = asyncio.run(probe(present, args.timeout))
    table = markdown(rows)
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if any(r.problem for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
