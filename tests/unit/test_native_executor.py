"""The native executor and its tools on a FakeDesktop: pixels go through the ToolSet's policy."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from PIL import Image

from deskpilot.config import Settings
from deskpilot.desktop.base import LiveElement, WindowInfo
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import Event
from deskpilot.native.actions import (
    Action,
    Click,
    CursorPosition,
    KeyPress,
    Move,
    Screenshot,
    TypeText,
    Wait,
    Zoom,
)
from deskpilot.native.executor import NativeExecutor
from deskpilot.policy import AllowAll, ApprovalRequest, Approver, CallbackApprover, DenyAll
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

CALC, EDITOR, VAULT = FAKE_APPS


@dataclass
class RecordingDesktop(FakeDesktop):
    """A FakeDesktop that also notes which points had their element looked up."""

    looked_at: list[tuple[int, int]] = field(default_factory=list)

    async def element_at(
        self, x: int, y: int, window: WindowInfo | None = None
    ) -> LiveElement | None:
        self.looked_at.append((x, y))
        return await super().element_at(x, y, window)


def make(
    settings: Settings, desktop: FakeDesktop, approver: Approver | None = None
) -> tuple[NativeExecutor, list[Event]]:
    events: list[Event] = []
    ctx = ToolContext(
        desktop=desktop, settings=settings, approver=approver or AllowAll(), audit=events.append
    )
    return NativeExecutor(ToolSet(), ctx), events


async def centres(desktop: FakeDesktop, xid: int) -> dict[str, tuple[int, int]]:
    window = next(w for w in await desktop.list_windows() if w.handle == xid)
    snap = await desktop.snapshot(window)
    return {n.name: n.bounds.center for n in snap.nodes() if n.bounds is not None}


def clicks(desktop: FakeDesktop) -> list[str]:
    return [line for line in desktop.log if line.startswith("pointer_click")]


@pytest.mark.asyncio
async def test_a_batch_of_clicks_computes_on_the_calculator_and_is_audited(
    settings: Settings,
) -> None:
    desktop = FakeDesktop()
    calc = desktop.add_window(CALC)
    ex, events = make(settings, desktop)
    at = await centres(desktop, calc.handle)
    batch: Sequence[Action] = [Click(*at[k]) for k in ("7", "×", "6", "=")]
    outcome = await ex.run(batch, call_id="call_1")
    assert outcome.ok and desktop.display_text(calc.handle) == "42"
    calls = [e.data["call_id"] for e in events if e.kind == "tool.call"]
    assert calls == ["call_1.1", "call_1.2", "call_1.3", "call_1.4", "call_1.shot"]
    shot = [e for e in events if e.kind == "tool.result" and e.images]
    assert len(shot) == 1 and shot[0].data["call_id"] == "call_1.shot"
    assert outcome.screenshot is not None and outcome.screenshot.width == desktop.width


@pytest.mark.asyncio
async def test_window_targets_take_window_relative_pixels(settings: Settings) -> None:
    desktop = FakeDesktop()
    calc = desktop.add_window(CALC)
    ex, _ = make(settings, desktop)
    x, y = (await centres(desktop, calc.handle))["9"]
    rel = (x - calc.geometry.x, y - calc.geometry.y)
    outcome = await ex.run([Click(*rel)], window=calc.stable_id)
    assert outcome.ok and desktop.display_text(calc.handle) == "9"
    assert outcome.screenshot is not None
    assert (outcome.screenshot.width, outcome.screenshot.height) == (400, 500)
    bad = await ex.run([Click(400, 10), Click(*rel)], window=calc.stable_id)
    assert not bad.ok and len(bad.steps) == 1
    assert "outside the window" in bad.report() and "Not run: the 1 action(s)" in bad.report()
    assert desktop.display_text(calc.handle) == "9"


@pytest.mark.asyncio
async def test_a_click_on_a_blocked_app_is_refused_before_anything_is_read(
    settings: Settings,
) -> None:
    desktop = RecordingDesktop()
    desktop.add_window(CALC)
    vault = desktop.add_window(VAULT)
    asked: list[ApprovalRequest] = []
    ex, _ = make(
        settings, desktop, CallbackApprover(lambda r: asked.append(r) or True, person=True)
    )
    outcome = await ex.run([Click(*vault.geometry.center), TypeText("hunter2")])
    assert not outcome.ok and len(outcome.steps) == 1
    assert "KeePassXC is on the blocked apps list" in outcome.steps[0].result.text
    assert clicks(desktop) == [] and desktop.typed == []
    assert desktop.looked_at == [] and asked == []


@pytest.mark.asyncio
async def test_typing_while_a_blocked_app_has_focus_is_refused(settings: Settings) -> None:
    desktop = FakeDesktop()
    desktop.add_window(VAULT)
    ex, _ = make(settings, desktop)
    for action in (TypeText("secret"), KeyPress(("Control_L", "c"))):
        outcome = await ex.run([action], screenshot=False)
        assert "blocked apps list" in outcome.steps[0].result.text
    assert desktop.typed == [] and not any(line.startswith("key_") for line in desktop.log)


@pytest.mark.asyncio
async def test_screen_captures_black_out_blocked_windows(settings: Settings) -> None:
    desktop = FakeDesktop()
    vault = desktop.add_window(VAULT)
    ex, _ = make(settings, desktop)
    shot = await ex.capture()
    img = Image.open(io.BytesIO(shot.data))
    assert img.getpixel(vault.geometry.center) == (0, 0, 0)
    assert img.getpixel((5, 5)) == (255, 255, 255)
    refused = await ex.run([Screenshot()], window=vault.stable_id, screenshot=False)
    assert "blocked apps list" in refused.steps[0].result.text


@pytest.mark.asyncio
async def test_pressing_send_needs_a_yes_and_a_no_does_nothing(settings: Settings) -> None:
    desktop = RecordingDesktop()
    editor = desktop.add_window(EDITOR)
    send = (await centres(desktop, editor.handle))["Send"]
    ex, events = make(settings, desktop, DenyAll())
    outcome = await ex.run([Click(*send)], screenshot=False)
    assert "Declined" in outcome.steps[0].result.text and clicks(desktop) == []
    asked = next(e for e in events if e.kind == "confirm.asked")
    assert 'activates "Send"' in asked.data["reason"]

    yes: list[ApprovalRequest] = []
    ex, _ = make(settings, desktop, CallbackApprover(lambda r: yes.append(r) or True, person=True))
    outcome = await ex.run([Click(*send), Move(5, 5)], screenshot=False)
    assert outcome.ok and len(clicks(desktop)) == 1
    assert [r.tool for r in yes] == ["computer"]  # the move needed no yes


@pytest.mark.asyncio
async def test_a_consequential_shortcut_needs_a_yes(settings: Settings) -> None:
    desktop = FakeDesktop()
    desktop.add_window(EDITOR)
    ex, _ = make(settings, desktop, DenyAll())
    outcome = await ex.run([KeyPress(("Control_L", "Return"))], screenshot=False)
    assert "Declined" in outcome.steps[0].result.text
    assert "shortcut ctrl+return" in outcome.steps[0].result.text


@pytest.mark.asyncio
async def test_looking_never_needs_a_yes_even_when_everything_asks(settings: Settings) -> None:
    desktop = FakeDesktop()
    calc = desktop.add_window(CALC)
    ex, _ = make(settings.with_overrides(confirm="all"), desktop, DenyAll())
    await desktop.pointer_move(calc.geometry.x + 7, calc.geometry.y + 9)
    looked = await ex.run(
        [Wait(0), CursorPosition(), Zoom(10, 20, 110, 70), Screenshot()], window=calc.stable_id
    )
    assert looked.ok
    assert looked.steps[1].result.text == "X=7,Y=9"
    zoom = looked.steps[2].result.images[0]
    assert (zoom.width, zoom.height) == (100, 50)
    assert looked.screenshot is looked.steps[3].result.images[0]  # the batch's own screenshot
    acted = await ex.run([Click(5, 5)], window=calc.stable_id, screenshot=False)
    assert "Declined" in acted.steps[0].result.text


@pytest.mark.asyncio
async def test_an_unknown_window_is_reported(settings: Settings) -> None:
    ex, _ = make(settings, FakeDesktop())
    outcome = await ex.run([Click(1, 1)], window="1/2", screenshot=False)
    assert "Window 1/2 not found" in outcome.steps[0].result.text


def test_the_callers_toolset_is_not_changed(settings: Settings) -> None:
    mine = ToolSet()
    ex, _ = make(settings, FakeDesktop())
    assert NativeExecutor(mine, ex.ctx).toolset.names() == [
        "computer",
        "computer_view",
        "computer_call",
    ]
    assert mine.names() == []
