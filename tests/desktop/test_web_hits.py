"""What is at a point of a web page is what a person hits there, also while Chromium guesses.

Chromium hit-tests in two steps: its first answer at a new point is a guess made in its own
copy of the tree, which the renderer's answer replaces when it comes. At a collapsed <select>
that guess is the select's last option, hidden in the select's box (measured: 10 of 18 first
answers); the renderer's answer, the select, comes 3–5 ms later on an idle machine, later
still on a loaded one (a coverage check once found "menu-item 'Huge'" at select.html's
select). The test takes the wait for it away (point_hits.HIT_GAP_S), as a renderer later than
the wait does: every answer at the select must still be the element the read gives an ID to
(the page reports where its controls are: a channel the hit-test does not use).
"""

from __future__ import annotations

import pytest

from deskpilot.desktop.atspi import point_hits
from deskpilot.desktop.base import WindowInfo
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from tests.desktop.conftest import Call
from tests.desktop.helpers import id_of_line
from tests.desktop.web import PageServer, open_page

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_collapsed_select_is_hit_not_its_hidden_option(
    call: Call,
    ctx: ToolContext,
    pages: PageServer,
    browser: WindowInfo,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = await open_page(call, pages, "select.html")
    operables = {e["label"]: e for e in (await pages.wait_for("operables"))["items"]}
    size = lookup(ctx.session, id_of_line(page, 'combobox = "Small"'))[1].key
    colour = lookup(ctx.session, id_of_line(page, "list @"))[1].key  # the Colour list box
    window = next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    snap = await ctx.desktop.snapshot(window, fresh=True)
    doc = next(n for n in snap.nodes() if n.role == "document-web" and "showing" in n.states)
    monkeypatch.setattr(point_hits, "HIT_GAP_S", 0.0)
    hits = []
    for _ in range(8):  # from one control to the other: each question is at a new point
        for label, key in (("size", size), ("colour", colour)):
            x, y = doc.bounds.x + operables[label]["x"], doc.bounds.y + operables[label]["y"]
            hit = await ctx.desktop.element_at(x, y, window)
            assert hit is not None, label
            if label == "size":
                hits.append(f"{hit.role} {hit.name!r}")
                assert hit.key == key, hits
            else:  # the list box's items are shown: one of them, or the list
                assert hit.key == key or hit.parent_key == key, f"{hit.role} {hit.name!r}"
