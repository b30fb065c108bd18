"""The demo opens its sessions through the door too: what it reads after a run is logged."""

from __future__ import annotations

import pytest

from deskpilot.audit import AuditLog
from deskpilot.config import Settings
from deskpilot.demo import afterwards
from deskpilot.session import Session
from tests.desktop.conftest import Apps

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_the_demo_reads_through_the_door(apps: Apps, desktop_settings: Settings) -> None:
    window = await apps.open("org.gnome.Calculator")
    settings = desktop_settings.with_overrides(session="door-demo")
    session = Session.load(settings.state_dir, settings.session)
    session.track(window.stable_id)
    session.save()
    shot = settings.state_dir / "door-demo.png"
    assert await afterwards(settings, shot) == ""  # a fresh calculator's display is empty
    assert shot.read_bytes().startswith(b"\x89PNG")
    with AuditLog(settings.audit_db) as log:
        (run,) = [r for r in log.list_runs() if r.goal == "demo: the calculator afterwards"]
        events = log.run_events(run.id, images=False)
    calls = [(e.data["tool"], e.data["surface"]) for e in events if e.kind == "tool.call"]
    assert calls == [("read_screen_ax", "demo"), ("computer_use_screenshot", "demo")]
    assert all(e.data["ok"] for e in events if e.kind == "tool.result")
