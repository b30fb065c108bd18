"""What apps expose reaches the read (pure logic; the same on real apps: tests/desktop/
test_app_kinds.py): a terminal's screen from its end, a viewer's page from its top, a display
that is a named empty container, a wrapper's line with its part's states, and a browser
engine's documents folded only in a browser's window."""

from __future__ import annotations

from deskpilot.ax.diff import diff
from deskpilot.ax.render import Renderer
from deskpilot.ax.surface import SURFACE_LINES
from deskpilot.desktop.base import Node, Rect
from deskpilot.desktop.toolkits import is_web_browser
from tests.unit.test_actionable import SHOWN, node

AREA = Rect(0, 0, 1000, 800)
FOCUSABLE = SHOWN | {"focusable"}


def window(*kids: Node) -> Node:
    return node("frame", "Window", *kids, at=(0, 0, 1000, 800))


def terminal(text: str, scrolled: float = 0.0) -> Node:
    term = node("terminal", "Terminal", text=text, states=FOCUSABLE, at=(0, 20, 900, 700))
    bar = node("scroll-bar", "", states=SHOWN | {"vertical"}, at=(900, 20, 20, 700))
    bar.value = f"{scrolled:g}"
    return window(node("scroll-pane", "", term, bar, at=(0, 20, 920, 700)))


def test_a_terminals_screen_reads_line_by_line_from_its_end() -> None:
    screen = "\n".join(f"out{i}" for i in range(100)) + "\n$ \n\n\n"
    text = Renderer(AREA, 20000).render(terminal(screen)).text
    lines = text.splitlines()
    term = next(i for i, ln in enumerate(lines) if ln.strip().startswith('terminal "Terminal"'))
    assert "@" in lines[term]  # it takes the focus: typed into by ID
    shown = [ln.strip()[2:] for ln in lines if ln.strip().startswith("│")]
    # the last lines (the prompt last), the earlier ones counted with how to read them
    assert shown[-1] == "$" and shown[-2] == "out99" and len(shown) == SURFACE_LINES
    more = lines[term + 1].strip()
    assert more.startswith(f"… {101 - SURFACE_LINES} earlier lines (read_screen_ax @")
    zoom_id = more.split("read_screen_ax ")[1].split(" ")[0].lstrip("@")
    assert zoom_id == lines[term].rsplit("@", 1)[1]
    assert "scrollback" not in text  # its scroll bar is at the top: nothing above


def test_a_zoomed_terminal_shows_every_line_and_a_scrollback_is_named() -> None:
    root = terminal("\n".join(f"out{i}" for i in range(100)), scrolled=38)
    full = Renderer(AREA, 20000).render(root)
    assert "scroll up to read it" in full.text
    term = root.children[0].children[0]
    zoomed = Renderer(AREA, 200000, zoom=True).render(term).text
    assert zoomed.count("│ out") == 100 and "earlier lines" not in zoomed


def test_new_terminal_output_is_what_the_change_summary_names() -> None:
    root = terminal("$ ls\na b\n$ ")
    before = Renderer(AREA, 20000).render(root)
    root.children[0].children[0].text = "$ ls\na b\n$ echo hi\nhi\n$ "
    after = Renderer(AREA, 20000).render(root)
    added = diff(before.lines, after.lines).added
    assert [a.strip() for a in added] == ["│ $ echo hi", "│ hi"], added


def test_a_viewers_page_reads_from_its_top() -> None:
    body = "\n".join(f"para {i}" for i in range(80))
    page = node("page", "", text=body, states=FOCUSABLE, at=(10, 50, 600, 700))
    doc = node("document-frame", "Document View", page, at=(0, 40, 700, 760))
    lines = Renderer(AREA, 20000).render(window(doc)).text.splitlines()
    shown = [ln.strip()[2:] for ln in lines if ln.strip().startswith("│")]
    assert shown[0] == "para 0" and len(shown) == SURFACE_LINES
    assert lines[-1].strip().startswith(f"… {80 - SURFACE_LINES} more lines (read_screen_ax @")


def test_a_named_empty_container_reads_as_the_value_it_shows() -> None:
    display = node("frame", "84", states=FOCUSABLE, at=(10, 30, 300, 40))
    empty_list = node("list", "Results", at=(10, 80, 300, 40))
    group = node(
        "panel", "Keys", node("push-button", "7", at=(10, 130, 40, 40)), at=(10, 130, 300, 200)
    )
    text = Renderer(AREA, 10000).render(window(display, empty_list, group)).text
    assert 'text "84"' in text.splitlines()
    assert "Results" not in text  # an empty list is empty, not a value


def test_a_list_item_around_a_disabled_button_reads_as_that_button_disabled() -> None:
    button = node("push-button", "Continue", states=frozenset({"showing", "visible"}))
    item = node("list-item", "Continue", button)
    tab = node(
        "page-tab",
        "Inbox",
        node("link", "Inbox"),
        states=SHOWN | {"selected"},
        at=(200, 10, 80, 20),
    )
    text = Renderer(AREA, 10000).render(window(node("list", "", item), tab)).text
    line = next(ln.strip() for ln in text.splitlines() if "Continue" in ln)
    assert line.startswith('button "Continue" [disabled] @'), text
    assert 'tab "Inbox" [active] @' in text  # a tab stays a tab, still the active one


def _web(name: str, *kids: Node) -> Node:
    doc = node("document-web", name, *kids, at=(0, 100, 1000, 700))
    doc.states = doc.states | {"showing"}
    return doc


def test_a_browser_engine_app_reads_its_own_controls() -> None:
    new = node("push-button", "New Message", at=(10, 60, 90, 20))
    spaces = node("tool-bar", "Spaces Toolbar", node("push-button", "Mail", at=(0, 100, 30, 30)))
    search = node("entry", "Search", text="", states=SHOWN | {"editable"}, at=(300, 10, 200, 20))
    # a mail client: the message pane's web document inside the app's own document
    own = node(
        "panel",
        "about:3pane",
        new,
        _web("Message", node("push-button", "Reply")),
        at=(40, 40, 960, 760),
    )
    # its account form's "Email address" field is not an address bar
    email = node(
        "entry",
        "Email address",
        text="ada@example.org",
        states=SHOWN | {"editable"},
        at=(300, 40, 200, 20),
    )
    form = node("form", "", email, at=(300, 40, 200, 40))
    mail = (
        Renderer(AREA, 10000, chrome=False, browser=False)
        .render(window(spaces, node("tool-bar", "", search), form, own))
        .text
    )
    assert 'button "New Message" @' in mail and 'button "Mail" @' in mail
    assert "browser" not in mail.split("\n", 1)[0]
    # an Electron app: one web document, no address bar
    app = window(
        node("push-button", "Minimize", at=(900, 0, 20, 20)),
        _web("Notes", node("push-button", "Add note")),
    )
    electron = Renderer(AREA, 10000, chrome=False, browser=False).render(app).text
    assert 'button "Minimize" @' in electron and 'button "Add note" @' in electron
    assert not electron.startswith("browser")


def test_a_browser_is_told_by_its_program() -> None:
    assert is_web_browser("chromium") and is_web_browser("firefox-esr")
    assert is_web_browser("", "org.mozilla.firefox")
    assert not is_web_browser("thunderbird", "thunderbird") and not is_web_browser("code")


def test_a_tabs_nameless_close_button_is_its_own_control() -> None:
    label = node("label", "Report.txt", actions=(), at=(200, 10, 60, 20))
    close = node("push-button", "", at=(265, 10, 16, 16))
    tab = node(
        "page-tab", "Report.txt", label, close, states=SHOWN | {"selected"}, at=(200, 10, 90, 20)
    )
    out = Renderer(AREA, 10000).render(window(node("page-tab-list", "", tab))).text
    lines = [ln.strip() for ln in out.splitlines()]
    tab_line = next(ln for ln in lines if ln.startswith('tab "Report.txt"'))
    button_line = next(ln for ln in lines if ln.startswith("button"))
    # two IDs: the tab selects, the button closes; the tab's ID is the tab's own
    assert tab_line.rsplit("@", 1)[1] != button_line.rsplit("@", 1)[1], out
    rendered = Renderer(AREA, 10000).render(window(node("page-tab-list", "", tab)))
    assert rendered.ids[tab_line.rsplit("@", 1)[1]].role == "page-tab"


def test_a_nameless_item_around_one_named_swatch_reads_once() -> None:
    swatches = [
        node(
            "list-item",
            "",
            node("drawing-area", colour, states=FOCUSABLE, at=(10 + 20 * i, 700, 16, 16)),
            at=(10 + 20 * i, 700, 18, 18),
        )
        for i, colour in enumerate(["Black", "White", "Red (#FF0000)"])
    ]
    rendered = Renderer(AREA, 10000).render(window(node("list-box", "", *swatches)))
    lines = [ln.strip() for ln in rendered.text.splitlines()]
    assert sum("Black" in ln for ln in lines) == 1, rendered.text
    black = next(ln for ln in lines if "Black" in ln)
    assert black.startswith('listitem "Black" @')
    # acting on the line acts on the swatch itself
    assert rendered.ids[black.rsplit("@", 1)[1]].role == "drawing-area"
    assert not any(ln.startswith("listitem @") for ln in lines)


def test_a_gtk4_list_row_around_its_tree_expander_reads_once_as_the_row() -> None:
    """GTK 4's list view: a nameless list item around a focusable tree expander (whose only
    actions expand and collapse) around the label. One line, named by the label, whose ID is
    the row's: acting on the expander by its action selected nothing."""
    expander_actions = ("listitem.toggle-expand", "listitem.collapse", "listitem.expand")
    rows = [
        node(
            "list-item",
            "",
            node(
                "panel",
                title,
                node("label", title, actions=()),
                states=FOCUSABLE,
                actions=expander_actions,
                at=(10, 40 + 36 * i, 190, 36),
            ),
            states=FOCUSABLE,
            actions=(),
            at=(10, 40 + 36 * i, 197, 36),
        )
        for i, title in enumerate(["GTK Demo", "Application Class"])
    ]
    rendered = Renderer(AREA, 10000).render(window(node("list", "Demo list", *rows)))
    lines = [ln.strip() for ln in rendered.text.splitlines()]
    line = next(ln for ln in lines if "Application Class" in ln)
    assert sum("Application Class" in ln for ln in lines) == 1, rendered.text
    assert line.startswith('listitem "Application Class" @'), rendered.text
    assert rendered.ids[line.rsplit("@", 1)[1]].role == "list-item"


def test_a_toolbars_separators_are_no_controls_but_a_splitter_is() -> None:
    """LibreOffice's toolbar separators take the focus: each read as 'separator @ID' (12 lines
    in Writer's window), an ID for a click that does nothing. A separator with a value is a
    splitter (ARIA's focusable separator): a control, with its ID."""
    splitter = node("separator", "", states=FOCUSABLE, at=(300, 10, 4, 400))
    splitter.value = "40"
    bar = node(
        "tool-bar",
        "Standard",
        node("push-button", "New", at=(10, 10, 20, 20)),
        node("separator", "", states=FOCUSABLE, at=(32, 10, 4, 20)),
        node("push-button", "Open", at=(40, 10, 20, 20)),
        at=(0, 10, 200, 20),
    )
    rendered = Renderer(AREA, 10000).render(window(bar, splitter))
    lines = [ln.strip() for ln in rendered.text.splitlines()]
    assert not any(ln.startswith("separator @") for ln in lines), rendered.text
    assert any(ln.startswith('separator = "40" @') for ln in lines), rendered.text
    assert [ln.split(" @")[0] for ln in lines if ln.startswith("button")] == [
        'button "New"',
        'button "Open"',
    ]


def test_a_named_toolbar_around_one_nameless_button_reads_as_that_button() -> None:
    """LibreOffice's sidebar: each deck's button is a nameless toggle alone in a focusable
    toolbar named after the deck. One line, the toggle named by its toolbar (it read as a
    toolbar line over a nameless toggle, two IDs). A toolbar with more in it keeps its lines."""

    def deck(name: str, x: int) -> Node:
        toggle = node("toggle-button", "", states=FOCUSABLE, actions=("click",), at=(x, 10, 20, 20))
        return node("tool-bar", name, toggle, states=FOCUSABLE, actions=(), at=(x, 10, 22, 22))

    find = node(
        "tool-bar",
        "Find",
        node("push-button", "", states=FOCUSABLE, at=(300, 10, 20, 20)),
        node("label", "Search", at=(330, 10, 40, 20)),
        states=FOCUSABLE,
        actions=(),
        at=(300, 10, 100, 22),
    )
    rendered = Renderer(AREA, 10000).render(window(deck("Styles", 900), deck("Gallery", 930), find))
    lines = [ln.strip() for ln in rendered.text.splitlines()]
    styles = next(ln for ln in lines if "Styles" in ln)
    assert styles.startswith('toggle "Styles" @'), rendered.text
    assert rendered.ids[styles.rsplit("@", 1)[1]].role == "toggle-button"
    assert not any(ln.startswith("toolbar") and "Styles" in ln for ln in lines), rendered.text
    assert any(ln.startswith('toolbar "Find" @') for ln in lines), rendered.text
