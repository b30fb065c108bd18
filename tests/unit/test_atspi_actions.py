"""What a read asks of shown nodes' actions (desktop/atspi/actions.py): never a text leaf's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dbus_fast import Message, MessageType

from deskpilot.desktop.atspi.actions import ActionReader
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.consts import ROLE_NAMES
from deskpilot.desktop.atspi.model import AppTree, RawNode

pytestmark = pytest.mark.asyncio

Reply = Callable[[Message | None, Exception | None], None]


class AnsweringBus:
    """Answers every call at once as Chromium does: GetActions with two unnamed actions,
    GetName(0) with "clickAncestor"; records what was asked of which path."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def _call(self, msg: Message, callback: Reply) -> None:
        self.asked.append((msg.path or "", msg.member or ""))
        body: list[Any]
        if msg.member == "GetActions":
            body, signature = [[("", "", ""), ("", "", "")]], "a(sss)"
        else:
            body, signature = ["clickAncestor"], "s"
        callback(
            Message(
                message_type=MessageType.METHOD_RETURN,
                reply_serial=1,
                signature=signature,
                body=body,
            ),
            None,
        )


def node(path: str, role: str, children: int) -> RawNode:
    return RawNode(
        path,
        "/doc",
        -1,
        children,
        frozenset({"Accessible", "Action", "Component", "Text"}),
        "",
        ROLE_NAMES.index(role),
        "",
        0,
        children=[],
    )


async def test_a_text_leaf_is_not_asked_its_actions_its_element_is() -> None:
    stand_in = AnsweringBus()
    bus = AtspiBus(stand_in)  # type: ignore[arg-type]
    tree = AppTree(":1.5")
    for raw in (node("/span", "section", 1), node("/text", "static", 0)):
        tree.nodes[raw.path] = raw
    await ActionReader(bus).fill_actions(tree, ["/span", "/text"])
    assert {path for path, _member in stand_in.asked} == {"/span"}
    assert tree.nodes["/span"].actions == ("clickAncestor", "")
    assert tree.nodes["/text"].actions is None
