"""Reach on the web, the wider class: fields of every kind, choices, components and frames.

Beyond the issue's fixtures (test_web_reach.py), the controls unseen web task suites are made
of: read-only and disabled fields, a ``contenteditable`` with and without a role, a date input,
a ``<select>`` and its popup, a list box, a custom ARIA list box, ``<details>``, buttons that are
only an SVG icon (named by its ``<title>``, or by nothing), a web component's shadow DOM,
same-site and cross-site iframes, a menu bar whose menus and submenus are children of the bar,
links that open a new tab or a new window, and the policy for points (a point on a Send-like
button asks; a point over a blocked app's window is refused). Each is driven only through the
tools; each effect is reported by the page to the test server.
"""

from __future__ import annotations

import dataclasses

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.policy import ApprovalRequest, CallbackApprover
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import id_of_line
from tests.desktop.web import PageServer, color_center, open_page

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def ok(call: Call, name: str, args: dict[str, object]) -> str:
    done = await call(name, args)
    assert not done.is_error, done.text
    return done.text


def line_of(text: str, element_id: str) -> str:
    return next(ln.strip() for ln in text.splitlines() if ln.endswith(f"@{element_id}"))


async def test_read_only_disabled_editable_and_date_fields(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "profile.html")
    account = id_of_line(page, 'textbox = "ACC-1234"')
    assert line_of(page, account) == f'textbox = "ACC-1234" [readonly] @{account}'
    assert 'textbox = "Kept by the bank" [readonly]' in page  # a read-only textarea's text
    assert 'textbox = "2019" [disabled]' in page and 'button "Save" [disabled]' in page
    assert "Account number Account number" not in page  # a label over its field: said once
    refused = await call("perform", {"action": "fill", "elementID": account, "text": "X"})
    assert refused.is_error and "read-only" in refused.text and "not disabled" in refused.text
    await ok(call, "perform", {"elementID": account})  # read-only, not disabled: it focuses
    await pages.wait_for("focus", on="account")

    nick = id_of_line(page, 'textbox = ""')
    await ok(call, "perform", {"action": "fill", "elementID": nick, "text": "Kit"})
    bio = id_of_line(page, 'textbox "Biography" = "Hello"')  # contenteditable, role=textbox
    assert "static" not in page  # an editable area's text runs are its value, not lines
    await ok(call, "perform", {"action": "fill", "elementID": bio, "text": "New bio"})
    # a contenteditable without a role: a click puts the caret in it (an action would leave
    # the focus in the biography, and the keys would go there)
    memo = id_of_line(page, 'para = "Draft memo"')
    steps = [
        {"elementID": memo},
        {"action": "shortcut", "shortcut": "ctrl+a"},
        {"action": "type", "text": "Call the bank"},
    ]
    await ok(call, "perform_sequence", {"steps": steps})
    month = id_of_line(page, 'spinbutton "Month')  # a date input: its parts, typed in order
    date = [{"elementID": month}, {"action": "type", "text": "12252026"}]
    await ok(call, "perform_sequence", {"steps": date})
    await ok(call, "perform", {"elementID": id_of_line(page, 'button "Check"')})
    check = await pages.wait_for("check")
    assert check == {
        **check,
        "account": "ACC-1234",
        "nick": "Kit",
        "bio": "New bio",
        "memo": "Call the bank",
        "born": "2026-12-25",
    }
    assert not pages.of("input", on="account")


async def test_fill_rich_text_editors_and_composers(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    """A contenteditable with no role and paragraphs in it (how many rich-text editors are
    built): fill replaces the area's text, through the area or through a paragraph that is
    all of it; a paragraph beside other text is refused and nothing changes. A composer with a
    textbox role and paragraphs (chat and mail) is filled and read back across them."""
    page = await open_page(call, pages, "editor.html")
    assert 'para = "Once upon a time"' in page  # named by its own text: said once
    first = id_of_line(page, 'para = "Once upon a time"')
    refused = await call("perform", {"action": "fill", "elementID": first, "text": "X"})
    assert refused.is_error and "one part of an editable area" in refused.text, refused.text
    assert "Once upon a time" in refused.text and "The end" in refused.text
    story = id_of_line(page, 'section "Once upon a time The end"')  # each text once
    done = await ok(
        call, "perform", {"action": "fill", "elementID": story, "text": "Chapter one\nIt was dark"}
    )
    assert "replacing 'Once upon a time\\nThe end'" in done, done
    empty = id_of_line(page, "para @")  # the empty editor's one paragraph: all of its text
    await ok(call, "perform", {"action": "fill", "elementID": empty, "text": "Hello there"})
    # a composer with a textbox role holds paragraphs: its text is read across them
    message = id_of_line(page, 'textbox "Message"')
    done = await ok(
        call, "perform", {"action": "fill", "elementID": message, "text": "Hello Ann\nBye"}
    )
    assert "replacing 'Hi Bob,\\nSee you'" in done and "\ufffc" not in done, done
    plain = id_of_line(page, 'section = "Plain text here"')
    await ok(call, "perform", {"action": "fill", "elementID": plain, "text": "New plain"})
    await ok(call, "perform", {"elementID": id_of_line(page, 'button "Check"')})
    check = await pages.wait_for("check")
    lines = [ln for ln in check["story"].splitlines() if ln.strip()]  # <p>s: a blank line apart
    assert lines == ["Chapter one", "It was dark"], check
    assert check["empty"] == "Hello there" and check["plain"] == "New plain", check
    assert [ln for ln in check["compose"].splitlines() if ln.strip()] == ["Hello Ann", "Bye"]
    # the refused fill typed nothing: the story's first input event is the fill of the area
    assert pages.of("input", on="story")[0]["value"] != "X"


async def test_a_select_its_popup_a_list_box_and_details(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "select.html")
    size = id_of_line(page, 'combobox = "Small" [collapsed]')
    assert 'menuitem "Small"' not in page  # closed: its value is on its line
    await ok(call, "perform", {"elementID": size})
    page = (await call("read_screen_ax")).text
    items = [ln.strip().split('"')[1] for ln in page.splitlines() if "menuitem" in ln]
    assert items == ["Small", "Medium", "Large", "Huge"], page
    # the popup is drawn over the page: its items are not "covered" by what lies beneath
    await ok(call, "perform", {"elementID": id_of_line(page, 'menuitem "Large"')})
    assert (await pages.wait_for("change", on="size"))["value"] == "Large"

    page = (await call("read_screen_ax")).text
    assert 'combobox = "Large"' in page
    await ok(call, "perform", {"elementID": id_of_line(page, 'listitem "Blue"')})
    assert (await pages.wait_for("change", on="colour"))["value"] == "Blue"
    await ok(call, "perform", {"elementID": id_of_line(page, 'listitem "Express"')})
    await pages.wait_for("ship", value="Express")
    await ok(call, "perform", {"elementID": id_of_line(page, 'toggle "More options" [collapsed]')})
    await pages.wait_for("details", open=True)
    page = (await call("read_screen_ax")).text
    await ok(call, "perform", {"elementID": id_of_line(page, 'checkbox "Gift wrap"')})
    await pages.wait_for("gift", checked=True)


async def test_icon_buttons_shadow_dom_and_frames(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "components.html")
    page = page.split("<appGuidance>")[0]
    for line in ('button "Bold"', "button (div.tool)", 'button "Pin to top"', 'image "Star"'):
        await ok(call, "perform", {"elementID": id_of_line(page, line)})
    await pages.wait_for("tool", which="star")
    assert sorted(e["which"] for e in pages.of("tool")) == ["bold", "pin", "star", "trash"]

    coupon = id_of_line(page.split('text "Coupon"')[1], "textbox")  # inside a shadow root
    await ok(call, "perform", {"action": "fill", "elementID": coupon, "text": "SAVE10"})
    await ok(call, "perform", {"elementID": id_of_line(page, 'button "Apply coupon"')})
    await pages.wait_for("coupon", value="SAVE10")

    assert page.count('document "Frame"') == 2, page  # each frame once, inside its page
    same, other = page.split('window "Same-site frame"')[1].split('window "Other-site frame"')
    for frame, where in ((same, "same"), (other, "other")):
        await ok(call, "perform", {"elementID": id_of_line(frame, 'clickable "Open the inbox"')})
        await pages.wait_for("frame-click", **{"from": where})
        field = id_of_line(frame, "textbox")
        await ok(call, "perform", {"action": "fill", "elementID": field, "text": f"{where} bills"})
        await pages.wait_for("frame-input", value=f"{where} bills")


async def test_menus_in_a_menu_bar_and_new_tabs_and_windows(
    call: Call, ctx: ToolContext, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "menubar.html")
    assert "Cut" not in page  # closed: not on screen
    await ok(call, "perform", {"elementID": id_of_line(page, 'menuitem "Edit" [collapsed]')})
    page = (await call("read_screen_ax")).text
    # the menu and its submenu are children of the bar and of the menu: showing, so listed
    for item in ("Cut", "Copy", "Paste as text", "Paste as link"):
        assert f'menuitem "{item}" @' in page, page
    await ok(call, "perform", {"elementID": id_of_line(page, 'menuitem "Paste as link"')})
    await pages.wait_for("command", name="Paste as link")

    window = ctx.session.target
    page = (await call("read_screen_ax")).text
    opened = await ok(call, "perform", {"elementID": id_of_line(page, "in a new tab")})
    assert "[2 tabs]" in opened and ctx.session.target == window  # the same window, new tab
    page = (await call("read_screen_ax")).text
    assert 'browser "Span links"' in page  # the read is of the tab that shows
    await ok(call, "perform", {"elementID": id_of_line(page, 'clickable "starred"')})
    await pages.wait_for("pick", what="starred")
    await ok(call, "perform", {"action": "shortcut", "shortcut": "ctrl+w"})

    page = (await call("read_screen_ax")).text
    before = {w.handle for w in await ctx.desktop.list_windows()}
    opened = await ok(call, "perform", {"elementID": id_of_line(page, "in a new window")})
    if "A new window opened" in opened:
        assert ctx.session.target != window, opened  # followed: the popup is the target
        popup = {}
    else:  # the page's script opened it after the click's result was written (a slow machine)

        async def appeared() -> str | None:
            new = [w for w in await ctx.desktop.list_windows() if w.handle not in before]
            return new[0].stable_id if new else None

        popup = {"windowID": await async_wait_for(appeared, timeout=15, what="the popup")}
    page = (await call("read_screen_ax", popup)).text
    await ok(call, "perform", {"elementID": id_of_line(page, 'clickable "unread ones"'), **popup})
    hit = await pages.wait_for("pick", what="unread")
    assert hit["page"] == "/spans.html"  # the popup's page, acted on in the popup window


async def test_points_follow_the_policy(
    call: Call,
    ctx: ToolContext,
    apps: Apps,
    desktop: DesktopFacade,
    pages: PageServer,
    browser: WindowInfo,
) -> None:
    await open_page(call, pages, "compose.html")
    shot = await call("computer_use_screenshot")
    send = color_center(shot.images[0].data, (20, 140, 60))
    draft = color_center(shot.images[0].data, (140, 20, 140))
    asked: list[ApprovalRequest] = []
    answers = [False, True]
    person = CallbackApprover(lambda r: asked.append(r) or answers.pop(0), person=True)
    careful = dataclasses.replace(
        ctx, settings=ctx.settings.with_overrides(confirm="consequential"), approver=person
    )
    tools = computer_use_tools()
    point = {"x": send[0], "y": send[1]}
    declined = await tools.call("perform", point, careful)
    assert declined.is_error and len(asked) == 1 and '"Send"' in asked[0].reason
    hovered = await tools.call("perform", {"action": "hover", **point}, careful)
    assert not hovered.is_error and len(asked) == 1  # moving over it presses nothing
    done = await tools.call("perform", {"x": draft[0], "y": draft[1]}, careful)
    assert not done.is_error and len(asked) == 1  # "Save draft" needs no yes
    await pages.wait_for("draft")
    assert not pages.of("send")  # declined: nothing reached the page
    assert not (await tools.call("perform", point, careful)).is_error  # the second answer: yes
    await pages.wait_for("send")

    # a blocked app's window over the browser: a point there is refused, nothing pressed
    target = ctx.session.target
    vault = await apps.spawn(
        ["zenity", "--info", "--title=Vault", "--text=Secrets"], match=lambda w: w.title == "Vault"
    )
    blocking = dataclasses.replace(
        ctx, settings=ctx.settings.with_overrides(blocklist_add=("zenity",))
    )
    own = next(w for w in await desktop.list_windows() if w.stable_id == target)
    cx, cy = vault.geometry.center
    assert own.geometry.contains(cx, cy)
    await desktop.pointer_move(3, 3)
    inside = {"x": cx - own.geometry.x, "y": cy - own.geometry.y, "windowID": target}
    refused = await tools.call("perform", inside, blocking)
    assert refused.is_error and "blocked" in refused.text, refused.text
    assert await desktop.pointer_position() == (3, 3)  # no input reached the screen
    assert any(w.handle == vault.handle for w in await desktop.list_windows())
