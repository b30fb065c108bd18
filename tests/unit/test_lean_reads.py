"""Leaner reads (pure logic): the browser's controls as one line, sentences as one line,
ticking texts out of repeated diffs, app guidance once per window."""

from __future__ import annotations

import asyncio

from deskpilot.ax.diff import diff
from deskpilot.ax.render import Renderer
from deskpilot.ax.ticking import quiet, ticks
from deskpilot.config import Settings
from deskpilot.desktop.base import Node, Rect
from tests.unit.test_actionable import CLICK, node, static
from tests.unit.test_tools_fake import TOOLS, make

AREA = Rect(0, 0, 1000, 800)


def browser(*page: Node) -> Node:
    selected = frozenset({"showing", "visible", "enabled", "selected"})
    tabs = node(
        "page-tab-list",
        "",
        node("page-tab", "Inbox", states=selected),
        node("page-tab", "Other", at=(200, 0, 90, 20)),
    )
    address = node(
        "entry",
        "Address and search bar",
        text="example.org/inbox",
        states=frozenset({"showing", "visible", "enabled", "editable"}),
    )
    reload_ = node("push-button", "Reload", at=(0, 30, 20, 20))
    doc = node("document-web", "Inbox", *page, at=(0, 100, 1000, 700))
    doc.states = doc.states | {"showing"}
    return node("frame", "Inbox - Chromium", tabs, reload_, address, doc, at=(0, 0, 1000, 800))


def test_the_browsers_controls_read_as_one_line_unless_asked() -> None:
    root = browser(node("push-button", "Send", at=(10, 120, 60, 20)))
    lean = Renderer(AREA, 10000, chrome=False).render(root).text.splitlines()
    assert lean[0] == 'browser "Inbox" = "example.org/inbox" [2 tabs]'
    assert not any("Reload" in ln for ln in lean)
    assert lean[1].startswith('document "Inbox"') and 'button "Send" @' in lean[2]
    full = Renderer(AREA, 10000, chrome=True).render(root).text
    assert 'button "Reload" @' in full and "browser" not in full


def test_what_the_browser_pops_up_still_reads() -> None:
    root = browser(node("push-button", "Send", at=(10, 120, 60, 20)))
    root.children.append(node("dialog", "Leave site?", node("push-button", "Leave")))
    lean = Renderer(AREA, 10000, chrome=False).render(root).text
    assert 'dialog "Leave site?"' in lean and 'button "Leave" @' in lean


def test_a_sentence_split_by_inline_markup_reads_as_one_line() -> None:
    link = node("section", "", static("unread"), actions=CLICK, at=(60, 120, 50, 20))
    bold = node("section", "", static("now"), at=(140, 120, 30, 20))
    para = node(
        "paragraph",
        "",
        static("Show "),
        link,
        static(" ones "),
        bold,
        static("."),
        at=(10, 120, 400, 20),
    )
    lines = Renderer(AREA, 10000).render(browser(para)).text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("para"))
    assert lines[at].strip() == 'para "Show unread ones now."'
    assert lines[at + 1].strip().startswith('clickable "unread" @')
    assert not any(ln.strip() == 'text "Show"' for ln in lines)


def test_ticking_texts_leave_repeated_diffs() -> None:
    assert ticks('text "00:00:05.7"', 'text "00:00:09.1"')
    assert not ticks('text "Total: 5"', 'text "Total: five"')
    assert not ticks('textbox = "41" @2.x', 'textbox = "42" @2.x')  # an element's value is news
    first = {"a": 'para "The time is 00:00:01"', "b": 'button "Go" @1.b'}
    second = {"a": 'para "The time is 00:00:02"', "b": 'button "Go" [focused] @1.b'}
    third = {"a": 'para "The time is 00:00:03"', "b": 'button "Go" [focused] @1.b'}
    d, ticked = quiet(diff(first, second), set())
    assert len(d.changed) == 2 and ticked == {"a"}  # the first tick still shows
    d, ticked = quiet(diff(second, third), ticked)
    assert d.empty and d.ticking == 1 and ticked == {"a"}
    assert (
        d.summary() == "No visible effect: nothing in the window changed. (1 ticking text left out)"
    )


def test_app_guidance_comes_once_per_window_and_when_asked(settings: Settings) -> None:
    ctx, _desk, _ = make(settings)

    def read(**args: object) -> str:
        return asyncio.run(TOOLS.call("read_screen_ax", args, ctx)).text

    asyncio.run(TOOLS.call("open_app", {"bundleId": "Calculator"}, ctx))
    assert "<appGuidance>" in read()
    assert "<appGuidance>" not in read()
    assert "<appGuidance>" in read(guidance=True)


def test_a_table_reads_by_rows_with_the_cells_to_operate_under_them() -> None:
    link = node(
        "link",
        "Invoice 2",
        static("Invoice 2"),
        actions=("jump",),
        states=frozenset({"showing", "visible", "enabled", "focusable"}),
    )
    head = node("table-row", "", node("column-header", "Item"), node("column-header", "Price"))
    row = node("table-row", "", node("table-cell", "Invoice 2", link), node("table-cell", "$35"))
    table = node("table", "", head, row, at=(10, 120, 300, 60))
    text = Renderer(AREA, 10000).render(browser(table)).text
    assert 'header "Item | Price"' in text
    assert 'row "Invoice 2 | $35"' in text
    assert 'cell "Invoice 2" @' in text and 'cell "$35"' not in text


def test_a_frame_s_document_reads_once_inside_its_page() -> None:
    inner = node(
        "document-web",
        "Frame",
        node("push-button", "Open", at=(20, 300, 60, 20)),
        at=(10, 280, 400, 90),
    )
    inner.states = inner.states | {"showing"}
    frame = node("internal-frame", "Same-site frame", inner, at=(10, 280, 400, 90))
    lines = Renderer(AREA, 10000, chrome=False).render(browser(frame)).text.splitlines()
    assert sum(1 for ln in lines if ln.strip().startswith('document "Frame"')) == 1
    assert sum(1 for ln in lines if 'button "Open" @' in ln) == 1


def test_a_label_over_its_field_says_its_text_once() -> None:
    field = node(
        "entry",
        "Account number",
        text="ACC-1234",
        at=(120, 120, 100, 20),
        states=frozenset({"showing", "visible", "read-only", "focusable"}),
    )
    label = node("label", "Account number", static("Account number"), field, at=(10, 120, 300, 20))
    lines = Renderer(AREA, 10000, chrome=False).render(browser(label)).text.splitlines()
    at = next(i for i, ln in enumerate(lines) if "Account number" in ln)
    assert lines[at].strip() == 'text "Account number"'
    assert lines[at + 1].strip().startswith('textbox = "ACC-1234" [readonly] @')


def test_editable_areas_nameless_buttons_and_closed_selects() -> None:
    editable = frozenset({"showing", "visible", "enabled", "editable", "focusable"})
    area = node(
        "entry",
        "Biography",
        node("static", "Hello", states=editable),
        text="Hello",
        states=editable,
        at=(10, 120, 300, 40),
    )
    icon = node(
        "push-button",
        "",
        node("image", "", at=(10, 200, 24, 24)),
        hint="div.tool",
        at=(10, 200, 24, 24),
    )
    chosen = node("menu-item", "Small", states=frozenset({"showing", "visible", "selected"}))
    popup = node("menu", "", chosen)
    select = node(
        "combo-box",
        "Size",
        popup,
        at=(10, 260, 100, 20),
        states=frozenset({"showing", "visible", "enabled", "collapsed"}),
    )
    text = Renderer(AREA, 10000, chrome=False).render(browser(area, icon, select)).text
    assert 'textbox "Biography" = "Hello" @' in text and "static" not in text
    assert "button (div.tool) @" in text
    assert 'combobox "Size" = "Small" [collapsed] @' in text and "menuitem" not in text
