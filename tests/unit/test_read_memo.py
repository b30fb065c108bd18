"""The kept reads and renderings: handed out again only while nothing could have changed them."""

from __future__ import annotations

from dataclasses import replace

from deskpilot.ax.render_memo import RenderMemo
from deskpilot.desktop.base import AppIdentity, Node, Rect, WindowInfo
from deskpilot.desktop.skills.read_memo import KEPT_WINDOWS, ReadMemo

APP = AppIdentity("Calculator", "calc", ("calc",), "calc")
WINDOW = WindowInfo(0x400001, 42, "Calculator", APP, Rect(10, 10, 300, 200))


def tree(name: str = "7") -> Node:
    root = Node(
        key=(":1.2", "/frame"), role="frame", name="Calculator", bounds=Rect(10, 10, 300, 200)
    )
    button = Node(
        key=(":1.2", "/b7"), role="push-button", name=name, bounds=Rect(20, 20, 40, 30),
        parent_key=root.key, states=frozenset({"showing", "visible", "enabled"}),
    )  # fmt: skip
    root.children.append(button)
    return root


def test_a_read_is_given_again_only_while_events_place_popups_and_input_hold() -> None:
    memo = ReadMemo()
    root = tree()
    memo.keep(WINDOW, 5, (), 1.0, root)
    assert memo.get(WINDOW, 5, (), 1.0) is root
    assert memo.get(WINDOW, 5, (), 1.0) is root  # as often as nothing changes
    for window, events, popups, input_at in [
        (WINDOW, 6, (), 1.0),  # an event came (of any app)
        (replace(WINDOW, geometry=Rect(11, 10, 300, 200)), 5, (), 1.0),  # moved
        (replace(WINDOW, geometry=Rect(10, 10, 301, 200)), 5, (), 1.0),  # resized
        (WINDOW, 5, (Rect(50, 50, 100, 100),), 1.0),  # a popup over it
        (WINDOW, 5, (), 2.0),  # input was sent
    ]:
        memo.keep(WINDOW, 5, (), 1.0, root)
        assert memo.get(window, events, popups, input_at) is None
        assert memo.get(WINDOW, 5, (), 1.0) is None  # a miss lets the kept read go


def test_reads_are_kept_per_window_and_the_oldest_go_first() -> None:
    memo = ReadMemo()
    windows = [replace(WINDOW, handle=WINDOW.handle + i) for i in range(KEPT_WINDOWS + 1)]
    roots = [tree(str(i)) for i in range(len(windows))]
    for w, r in zip(windows, roots, strict=True):
        memo.keep(w, 1, (), 0.0, r)
    assert memo.get(windows[0], 1, (), 0.0) is None
    assert memo.get(windows[-1], 1, (), 0.0) is roots[-1]
    memo.drop(windows[-1].handle)
    assert memo.get(windows[-1], 1, (), 0.0) is None


def test_a_rendering_is_reused_only_for_an_unchanged_read_of_the_same_nodes() -> None:
    memo = RenderMemo()
    area = WINDOW.geometry
    opts = {"area": area, "budget": 12000, "chrome": False, "browser": False, "header": "h"}
    root = tree()
    first = memo.render("1", root, unchanged=False, **opts)  # type: ignore[arg-type]
    assert '"7"' in first.text
    first.lines.clear()  # a caller's copy: the kept rendering is not touched
    first.ids.clear()
    again = memo.render("1", root, unchanged=True, **opts)  # type: ignore[arg-type]
    assert again.text == first.text and again.lines and again.ids
    # nodes changed in place (a backend that hands out its live tree) without the read
    # saying unchanged: rendered again
    root.children[0].name = "8"
    assert '"8"' in memo.render("1", root, unchanged=False, **opts).text  # type: ignore[arg-type]
    # other options: rendered again (here the nodes changed behind its back, to show it)
    root.children[0].name = "5"
    other = memo.render("1", root, unchanged=True, **{**opts, "budget": 9000})  # type: ignore[arg-type]
    assert '"5"' in other.text
    # other nodes: rendered again
    fresh = tree("9")
    assert '"9"' in memo.render("1", fresh, unchanged=True, **opts).text  # type: ignore[arg-type]
    # and the same ones with the same options, said unchanged: the kept text
    fresh.children[0].name = "1"
    assert '"9"' in memo.render("1", fresh, unchanged=True, **opts).text  # type: ignore[arg-type]
