"""The demo opens its sessions through the door too: its run and what it reads afterwards are
in the audit log (``surface="demo"``), and the door's refusals — a blocked app, a declined
approval — reach it like any surface.

The demo's run is :func:`deskpilot.cli.run_cmd.run_goal` (what ``make demo`` calls) with a
model behind a local server in the real wire format; effects are seen outside the tools (a
zenity dialog's process: still running means its Send never fired).
"""

from __future__ import annotations

import io
import subprocess

import pytest
from rich.console import Console

from deskpilot.agent.providers import get_provider
from deskpilot.audit import AuditLog
from deskpilot.cli.run_cmd import run_goal
from deskpilot.config import Settings
from deskpilot.demo import afterwards
from deskpilot.events import Event
from deskpilot.session import Session
from tests.desktop.conftest import Apps
from tests.desktop.helpers import find_id
from tests.e2e.wire import Decision, ModelServer, View

pytestmark = pytest.mark.asyncio(loop_scope="session")


def logged(settings: Settings, goal: str) -> list[Event]:
    """The events of the newest run with this goal (each demo session is a run)."""
    with AuditLog(settings.audit_db) as log:
        run = next(r for r in log.list_runs() if r.goal == goal)
        return log.run_events(run.id, images=False)


async def test_the_demo_reads_through_the_door(apps: Apps, desktop_settings: Settings) -> None:
    window = await apps.open("org.gnome.Calculator")
    settings = desktop_settings.with_overrides(session="door-demo")
    session = Session.load(settings.state_dir, settings.session)
    session.track(window.stable_id)
    session.save()
    shot = settings.state_dir / "door-demo.png"
    assert await afterwards(settings, shot) == ""  # a fresh calculator's display is empty
    assert shot.read_bytes().startswith(b"\x89PNG")
    events = logged(settings, "demo: the calculator afterwards")
    calls = [(e.data["tool"], e.data["surface"]) for e in events if e.kind == "tool.call"]
    assert calls == [("read_screen_ax", "demo"), ("computer_use_screenshot", "demo")]
    assert all(e.data["ok"] for e in events if e.kind == "tool.result")

    # aimed at a blocked app, the demo's reads are refused by the door (and logged so)
    vault = await apps.spawn(["keepassxc"], match=lambda w: "KeePassXC" in w.title)
    session.track(vault.stable_id)
    session.save()
    assert await afterwards(settings, settings.state_dir / "vault.png") == "?"
    events = logged(settings, "demo: the calculator afterwards")
    assert {e.data["surface"] for e in events if e.kind == "tool.call"} == {"demo"}
    results = [(e.data["ok"], e.data.get("refused")) for e in events if e.kind == "tool.result"]
    assert results == [(False, "blocked"), (False, "blocked")]
    assert not (settings.state_dir / "vault.png").exists()  # no picture of the vault


async def test_the_demos_run_is_logged_and_refused_by_the_door(
    apps: Apps, desktop_settings: Settings
) -> None:
    vault = await apps.spawn(["keepassxc"], match=lambda w: "KeePassXC" in w.title)
    dialog = await apps.spawn(
        [
            "zenity",
            "--question",
            "--title=Report",
            "--text=Send the report?",
            "--ok-label=Send",
            "--cancel-label=Keep",
        ],
        match=lambda w: w.title == "Report",
    )
    proc: subprocess.Popen[bytes] = apps.procs[-1]

    def brain(view: View) -> Decision:
        if view.turns == 0:
            return Decision("", [("read_screen_ax", {"windowID": vault.stable_id})])
        if view.turns == 1:
            return Decision("", [("read_screen_ax", {"windowID": dialog.stable_id})])
        if view.turns == 2:
            send = find_id(view.last_results[0], "button", "Send")
            return Decision("", [("perform", {"elementID": send, "windowID": dialog.stable_id})])
        return Decision("It was not sent.")

    settings = desktop_settings.with_overrides(confirm="consequential", api_keys={"openai": "k"})
    goal = "demo door: read what the report dialog asks"  # names no act: grants nothing (#22)
    console = Console(file=io.StringIO(), width=120)
    with ModelServer("openai", brain) as server:
        provider = get_provider("openai:stand-in", settings, base_url=server.url)
        result = await run_goal(settings, provider, goal, console=console, surface="demo")
    assert result.answer == "It was not sent.", result.answer
    assert proc.poll() is None  # the dialog is still open: Send never fired
    events = logged(settings, goal)
    assert {e.data["surface"] for e in events if e.kind == "tool.call"} == {"demo"}
    results = [e.data for e in events if e.kind == "tool.result"]
    assert [(r["tool"], r["ok"], r.get("refused")) for r in results] == [
        ("read_screen_ax", False, "blocked"),
        ("read_screen_ax", True, None),
        ("perform", False, "declined"),
    ]
    assert "no terminal to ask" in results[-1]["text"]
    (answered,) = [e.data for e in events if e.kind == "confirm.answered"]
    assert answered["approved"] is False
