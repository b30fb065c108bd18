"""Step frames: with ``step_frames`` on, every call that took no picture leaves a screened frame
of the session's window in the audit log (a real AuditLog, read back and verified)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image as PILImage
from PIL import ImageStat

from deskpilot.audit import AuditLog
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.fake import FAKE_APPS, FakeDesktop
from deskpilot.errors import ConfigError
from deskpilot.events import Event
from deskpilot.runtime import open_session
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.frames import FRAME_BOX

TOOLS = computer_use_tools()
CALCULATOR, EDITOR, VAULT = FAKE_APPS[0], FAKE_APPS[1], FAKE_APPS[2]


def session(
    settings: Settings, tmp_path: Path, *, frames: bool = True
) -> tuple[ToolContext, FakeDesktop, AuditLog]:
    log = AuditLog(tmp_path / "audit.db")
    desk = FakeDesktop()
    ctx = ToolContext(
        desktop=desk,
        settings=settings,
        audit=log,
        session=Session(),
        run_id="run1",
        step_frames=frames,
    )
    return ctx, desk, log


def call(ctx: ToolContext, name: str, args: dict[str, Any] | None = None) -> Any:
    return asyncio.run(TOOLS.call(name, args or {}, ctx))


def frames_of(log: AuditLog) -> list[Event]:
    return [e for e in log.run_events("run1") if e.kind == "tool.frame"]


def pixels(event: Event) -> PILImage.Image:
    (image,) = event.images
    assert image.mime == "image/jpeg"
    img = PILImage.open(io.BytesIO(image.data)).convert("RGB")
    assert (img.width, img.height) == (image.width, image.height)
    assert img.width <= FRAME_BOX[0] and img.height <= FRAME_BOX[1]
    return img


def test_every_step_without_a_picture_gets_one_frame_after_its_result(
    settings: Settings, tmp_path: Path
) -> None:
    ctx, desk, log = session(settings, tmp_path)
    call(ctx, "list_windows")  # no window yet: the whole screen
    call(ctx, "open_app", {"bundleId": "Calculator"})
    call(ctx, "read_screen_ax")
    shot = call(ctx, "computer_use_screenshot")  # has its own picture: no frame
    assert shot.images
    call(ctx, "read_screen_ax", {"windowID": "9/9"})  # a failed step has its frame too
    events = log.run_events("run1")
    kinds = [e.kind for e in events]
    results = [i for i, k in enumerate(kinds) if k == "tool.result"]
    assert len(results) == 5
    for n, i in enumerate(results):
        result = events[i]
        if result.data["tool"] == "computer_use_screenshot":
            assert kinds[i + 1 : i + 2] != ["tool.frame"]
            continue
        frame = events[i + 1]
        assert frame.kind == "tool.frame", (n, kinds)
        assert frame.data["call_id"] == result.data["call_id"]
        assert frame.data["tool"] == result.data["tool"]
        pixels(frame)
    first, *rest = frames_of(log)
    assert first.data["window"] is None  # the screen: no window to show yet
    assert {f.data["window"] for f in rest} == {desk.windows[0].info.stable_id}
    report = log.verify()
    assert report.ok, report.problems


def test_a_blocked_window_is_never_captured_and_blacked_out_where_it_overlaps(
    settings: Settings, tmp_path: Path
) -> None:
    ctx, desk, log = session(settings, tmp_path)
    call(ctx, "open_app", {"bundleId": "Calculator"})
    calc = desk.windows[0].info
    vault = desk.add_window(VAULT)  # active, overlapping the calculator from x=140
    assert vault.geometry.intersects(calc.geometry)
    call(ctx, "wait", {"seconds": 0.01})  # the tracked target: the calculator
    ctx.session.target = None
    ctx.session.history.clear()
    call(ctx, "wait", {"seconds": 0.01})  # no target: the active window, the blocked one
    on_calc, on_vault = frames_of(log)[-2:]
    img = pixels(on_calc)
    scale = img.width / calc.geometry.width
    covered = (vault.geometry.x - calc.geometry.x) * scale  # the vault covers it from here

    def mean(x0: float, x1: float) -> float:
        strip = img.crop((int(x0), 0, int(x1), img.height)).convert("L")
        return float(ImageStat.Stat(strip).mean[0])

    assert mean(covered + 2, img.width) < 10  # blacked out (JPEG: almost 0)
    assert mean(0, covered - 2) > 150  # the calculator's own part shows
    assert on_vault.data["blocked"] is True and on_vault.data["window"] == vault.stable_id
    black = pixels(on_vault)
    assert max(hi for _lo, hi in black.getextrema()) < 10
    assert "Password" not in str([e.data for e in log.run_events("run1")])
    assert log.verify().ok


def test_no_frames_unless_asked(settings: Settings, tmp_path: Path) -> None:
    ctx, _desk, log = session(settings, tmp_path, frames=False)
    call(ctx, "open_app", {"bundleId": "Editor"})
    call(ctx, "read_screen_ax")
    assert frames_of(log) == []
    assert [e.kind for e in log.run_events("run1")].count("tool.result") == 2


def test_other_surfaces_record_frames_when_the_setting_is_on(home: Path) -> None:
    env = {"HOME": str(home), "DESKPILOT_HOME": str(home)}
    assert load_settings(env=env).step_frames is False
    with pytest.raises(ConfigError, match="step_frames must be true or false"):
        load_settings(env={**env, "DESKPILOT_STEP_FRAMES": "sometimes"})
    settings = load_settings(env={**env, "DESKPILOT_STEP_FRAMES": "1"})

    async def go() -> None:
        async with open_session(settings, surface="cli", desktop=FakeDesktop()) as ctx:
            assert ctx.step_frames
            await TOOLS.call("list_windows", {}, ctx)

    asyncio.run(go())
    with AuditLog(settings.audit_db) as log:
        (run,) = log.list_runs()
        kinds = [e.kind for e in log.run_events(run.id)]
    assert kinds.count("tool.frame") == kinds.count("tool.result") == 1
