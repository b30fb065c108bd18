"""The door's judgement of keys on a FakeDesktop: the quick look at the focus (no tree read)
for text typed into a field and Enter in a document being edited; the tree for the rest.

Real apps: tests/desktop/test_effects_real.py and the safety suite.
"""

from __future__ import annotations

import asyncio
from typing import Any

from deskpilot.config import Settings
from deskpilot.desktop.base import Snapshot, WindowInfo
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import discard
from deskpilot.policy import Risk, judging
from deskpilot.policy.reach import Keys, Reach
from deskpilot.tools.context import ToolContext


class Counting(FakeDesktop):
    """A FakeDesktop that counts tree reads."""

    reads = 0

    async def snapshot(self, window: WindowInfo, **kw: Any) -> Snapshot:
        self.reads += 1
        return await super().snapshot(window, **kw)


def editor(settings: Settings, states: set[str]) -> tuple[ToolContext, WindowInfo]:
    desktop = Counting()
    window = desktop.add_window(FAKE_APPS[1], "Notes")  # a text area and a Send button
    area = next(n for n in desktop.windows[0].root.walk() if n.role == "text")
    area.states = frozenset(states)
    desktop.focus = area.key
    ctx = ToolContext(desktop, settings.with_overrides(confirm="consequential"), audit=discard)
    return ctx, window


def judge(ctx: ToolContext, keys: Keys) -> tuple[Risk, str] | None:
    found = asyncio.run(judging.judge(judging.Scene(ctx.desktop), ctx.rules, Reach(keys=[keys])))
    return (Risk.CONSEQUENTIAL, found.finding.reason) if found is not None else None


def test_text_and_enter_in_a_document_being_edited_need_no_tree(settings: Settings) -> None:
    ctx, window = editor(settings, {"editable", "multi-line", "focused"})
    assert judge(ctx, Keys(text="Dear Bob,\nsee you.", window=window)) is None
    assert judge(ctx, Keys(("Return",), window=window)) is None
    assert ctx.desktop.reads == 0  # type: ignore[attr-defined]


def test_the_tree_is_read_when_the_focus_is_not_known_for_sure(settings: Settings) -> None:
    ctx, window = editor(settings, {"editable", "multi-line"})  # no "focused" state
    judge(ctx, Keys(("Return",), window=window))
    assert ctx.desktop.reads == 1  # type: ignore[attr-defined]


def test_ctrl_enter_and_tabs_are_judged_with_the_tree(settings: Settings) -> None:
    ctx, window = editor(settings, {"editable", "multi-line", "focused"})
    found = judge(ctx, Keys(("Control_L", "Return"), window=window))
    assert found is not None and "Send" in found[1]  # the editor's Send button is next to it
    judge(ctx, Keys(text="a\tb\n", window=window))
    assert ctx.desktop.reads == 2  # type: ignore[attr-defined]


def test_a_chat_box_is_judged_with_the_tree(settings: Settings) -> None:
    ctx, window = editor(settings, {"editable", "multi-line", "focused"})
    area = next(n for n in ctx.desktop.windows[0].root.walk() if n.role == "text")  # type: ignore[attr-defined]
    area.name = "Type a message"
    found = judge(ctx, Keys(text="my PIN is 4921\n", window=window))
    assert found is not None and found[0] is Risk.CONSEQUENTIAL and "sends it" in found[1]
