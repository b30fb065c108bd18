"""A browser tab's name without the memory use Chromium (156) writes into it
(deskpilot.desktop.atspi.tab_names): the read of a window and an element's inspection name a tab
by its page's title, keep what else the name says, and leave every other role's name alone."""

from __future__ import annotations

import pytest

from deskpilot.desktop.atspi.consts import ROLE_NAMES, S_SHOWING, S_VISIBLE
from deskpilot.desktop.atspi.model import AppTree, RawNode
from deskpilot.desktop.atspi.nodes import WindowTree, build_nodes
from deskpilot.desktop.atspi.tab_names import plain_name
from deskpilot.desktop.base import AppIdentity, Rect, WindowInfo


@pytest.mark.parametrize(
    ("role", "name", "plain"),
    [
        ("page-tab", "Agent browser - Memory usage - 21.8 MB", "Agent browser"),
        ("page-tab", "Shop - High memory usage - 1.2 GB", "Shop"),
        ("page-tab", "Shop - Memory usage - 512 kB", "Shop"),
        ("page-tab", "Shop - 1,234 B freed up", "Shop"),
        # what else Chromium says of the tab stays: it is the tab's state, not a measurement
        ("page-tab", "Song - Audio playing - Memory usage - 40 MB", "Song - Audio playing"),
        ("page-tab", "Shop - Inactive tab", "Shop - Inactive tab"),
        ("page-tab", "Shop - Network error", "Shop - Network error"),
        # the window's name: a high memory use, then the browser's own name
        ("frame", "Shop - High memory usage - 900 MB - Chromium", "Shop - Chromium"),
        # a title that only speaks of memory is a title
        ("page-tab", "Memory usage - 21.8 MB", "Memory usage - 21.8 MB"),
        ("page-tab", "Memory usage explained - Wiki", "Memory usage explained - Wiki"),
        # not a tab: a page's own text is never touched
        ("push-button", "Shop - Memory usage - 21.8 MB", "Shop - Memory usage - 21.8 MB"),
        ("heading", "Stats - 3 MB freed up", "Stats - 3 MB freed up"),
    ],
)
def test_a_tab_is_named_by_its_title(role: str, name: str, plain: str) -> None:
    assert plain_name(role, name) == plain


def raw(path: str, parent: str | None, role: str, name: str, kids: list[str]) -> RawNode:
    node = RawNode(
        path, parent, 0, len(kids), frozenset(), name, ROLE_NAMES.index(role), "",
        S_SHOWING | S_VISIBLE, children=kids, extents=(0, 0, 100, 30),
    )  # fmt: skip
    return node


def test_the_read_of_a_browser_window_names_its_tabs_by_their_titles() -> None:
    app = AppTree(bus=":1.7")
    app.nodes = {
        "/f": raw("/f", None, "frame", "Shop - High memory usage - 900 MB - Chromium", ["/l"]),
        "/l": raw("/l", "/f", "page-tab-list", "", ["/t", "/u"]),
        "/t": raw("/t", "/l", "page-tab", "Shop - Memory usage - 21.8 MB", []),
        "/u": raw("/u", "/l", "page-tab", "Song - Audio playing - Memory usage - 4 MB", []),
    }
    window = WindowInfo(
        handle=5,
        pid=1,
        title="Shop - Chromium",
        app=AppIdentity("Chromium", "chromium"),
        geometry=Rect(0, 0, 800, 600),
    )
    root = build_nodes(WindowTree(app, "/f", (0, 0)), window)
    assert [(n.role, n.name) for n in root.walk()] == [
        ("frame", "Shop - Chromium"),
        ("page-tab-list", ""),
        ("page-tab", "Shop"),
        ("page-tab", "Song - Audio playing"),
    ]
