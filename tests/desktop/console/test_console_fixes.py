"""The console's small things, each in a real browser: the Window field, pages opened without
a login, a login link used twice, finished sessions' thumbnails, keyboard access (chips as
buttons, named canvases, focus moved to new cards), and steps counted as the log counts them.
(The Markdown download's pictures: test_console.py's audit test.)
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page

from deskpilot.config import Settings
from tests.desktop.conftest import Apps
from tests.desktop.console_kit import (
    ConsoleProcess,
    Router,
    console_process,
    model_server,
)
from tests.e2e.wire import Decision, View

pytestmark = pytest.mark.asyncio(loop_scope="session")


#: the mean red level of a canvas's pixels (0: empty or black), as a page function
LIGHTNESS = """sel => { const c = document.querySelector(sel);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let sum = 0; for (let i = 0; i < d.length; i += 4) sum += d[i];
    return sum / (d.length / 4); }"""


async def lightness(page: Page, selector: str) -> float:
    """The mean red level of a canvas's pixels (0: empty or black)."""
    return float(await page.evaluate(LIGHTNESS, selector))


async def test_the_window_field_is_for_this_desktop_only_and_a_cleared_choice_is_said(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, router = served
    window = await apps.spawn(
        ["zenity", "--info", "--title=Pick me", "--text=A window of this desktop"],
        match=lambda w: w.title == "Pick me",
    )
    field = page.locator("#window-field")
    assert await field.is_hidden()  # a sandbox is the default: no window to choose
    await page.select_option("#new-session select[name=target]", "desktop")
    assert await field.is_visible()
    option = f'#new-session select[name=window] option[value="{window.stable_id}"]'
    await page.wait_for_selector(option, state="attached")
    await page.select_option("#new-session select[name=window]", window.stable_id)
    await page.select_option("#new-session select[name=target]", "sandbox")
    assert await field.is_hidden()  # `hidden` wins over the label's display rule
    note = await page.locator("#window-cleared").inner_text()
    assert "Pick me" in note and "was cleared" in note
    assert await page.locator("#new-session select[name=window]").input_value() == ""
    key = router.add("no-window-in-a-sandbox", lambda v: Decision("Nothing to do."))
    await page.fill("#new-session textarea[name=goal]", f"{key}: nothing")
    await page.click("#new-session button[type=submit]")
    card = await page.wait_for_selector(f'.card:has(a.goal:text-is("{key}: nothing"))')
    assert card is not None
    sid = str(await card.get_attribute("data-session"))
    started = console.card(sid)
    assert started["target"] == "sandbox" and started["window"] is None
    # and a script that sends one anyway is told why, not silently ignored
    refused = console.post(
        "/api/sessions", {"goal": "x", "target": "sandbox", "window": window.stable_id}
    )
    assert (
        refused.status_code == 400 and "only be chosen on this desktop" in refused.json()["error"]
    )
    console.wait_end(sid)
    console.post(f"/api/sessions/{sid}/stop")


async def test_a_page_opened_without_a_login_shows_the_login_page_and_comes_back(
    served: tuple[ConsoleProcess, Router], browser: Browser
) -> None:
    console, _ = served
    context = await browser.new_context()
    try:
        tab = await context.new_page()
        for path in ("/", "/s/abc123", "/audit", "/prices"):
            response = await tab.goto(f"{console.origin}{path}")
            assert response is not None and response.ok
            assert tab.url.endswith(f"/login?next={path}"), tab.url
            assert await tab.locator("h1").inner_text() == "deskpilot console — log in"
            assert "{" not in await tab.locator("body").inner_text()  # no raw JSON
        await tab.fill("#login-token", console.token)
        await tab.click("#login button[type=submit]")
        await tab.wait_for_url(f"{console.origin}/prices")
        await tab.wait_for_selector("#view-prices:not([hidden])")
        # without a login the API still answers JSON (scripts read it), never the login page
        anonymous = await browser.new_context()
        api = await anonymous.request.get(f"{console.origin}/api/sessions")
        assert api.status == 401 and "not logged in" in (await api.json())["error"]
        await anonymous.close()
    finally:
        await context.close()


async def test_a_login_link_used_twice_says_why(
    served: tuple[ConsoleProcess, Router], browser: Browser
) -> None:
    console, _ = served
    link = f"{console.origin}/login?token=" + console.login_url.rsplit("=", 1)[1]
    first = await browser.new_context()
    second = await browser.new_context()
    try:
        tab = await first.new_page()
        await tab.goto(link)
        await tab.wait_for_selector("#conn.live")  # the first use logged it in
        other = await second.new_page()
        response = await other.goto(link)
        assert response is not None and response.status == 401
        said = await other.locator("#login-why").inner_text()
        assert "already used" in said and "works once" in said
        assert "token=" not in other.url  # the spent token is out of the address bar
        response = await other.goto(f"{console.origin}/login?token=not-a-token-of-this-console")
        assert response is not None and response.status == 401
        assert "not one of this console's" in await other.locator("#login-why").inner_text()
    finally:
        await first.close()
        await second.close()


def free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_an_open_tab_after_a_restart_goes_to_the_login_page_saying_why(
    desktop_settings: Settings, browser: Browser, tmp_path: Path
) -> None:
    port = str(free_port())
    context = await browser.new_context()
    try:
        with model_server() as (server, _):
            with console_process(
                desktop_settings.environ, server.url, tmp_path / "one.log", "--port", port
            ) as console:
                tab = await context.new_page()
                await tab.goto(console.login_url)
                await tab.goto(f"{console.origin}/audit")
                await tab.wait_for_selector("#conn.live")
            with console_process(
                desktop_settings.environ, server.url, tmp_path / "two.log", "--port", port
            ) as again:
                await tab.wait_for_url(f"{again.origin}/login?why=expired&next=%2Faudit")
                said = await tab.locator("#login-why").inner_text()
                assert "was restarted" in said
                await tab.fill("#login-token", again.token)
                await tab.click("#login button[type=submit]")
                await tab.wait_for_url(f"{again.origin}/audit")
                await tab.wait_for_selector("#verify:not(:text('checking…'))")
    finally:
        await context.close()


async def test_finished_sessions_keep_their_thumbnails_when_the_list_redraws(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    console, router = served

    def brain(view: View) -> Decision:
        if view.turns == 0:
            return Decision("", [("open_app", {"bundleId": "Calculator"})])
        return Decision("Open.")

    key = router.add("thumbnail-stays", brain)
    card = console.start(f"{key}: open the calculator", confirm="none")
    sid = card["id"]
    thumb = f'canvas[data-thumb="{sid}"]'
    try:
        end = await asyncio.to_thread(console.wait_end, sid)
        assert end["state"] == "done"
        await page.wait_for_selector(f"{thumb}[data-seq]", timeout=60000)
        # the calculator's window drawn (a first thumbnail may come before it has painted)
        await page.wait_for_function(
            f"sel => ({LIGHTNESS})(sel) > 60", arg=thumb, timeout=60000, polling=200
        )
        before = await lightness(page, thumb)
        console.post(f"/api/sessions/{sid}/stop")  # its desktop closes too: nothing new comes
        await page.wait_for_selector(f'[data-session="{sid}"] button.stop', state="hidden")
        await page.click(f'[data-session="{sid}"] a.goal')
        await page.wait_for_selector("#view-session:not([hidden])")
        await page.click("header nav a:text-is('Sessions')")
        await page.wait_for_selector("#view-list:not([hidden])")
        assert await lightness(page, thumb) == pytest.approx(before, abs=1)  # still there
        await page.reload()
        await page.wait_for_selector(f"{thumb}[data-seq]", timeout=60000)
        assert await lightness(page, thumb) == pytest.approx(before, abs=1)  # and after a reload
    finally:
        console.post(f"/api/sessions/{sid}/stop")


async def test_keyboard_access_chips_are_buttons_canvases_are_named_focus_goes_to_new_cards(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    console, router = served

    def brain(view: View) -> Decision:
        if view.turns == 0:
            return Decision("", [("open_app", {"bundleId": "Calculator"})])
        return Decision(f"Told: {view.last_results[-1][:60] if view.last_results else ''}")

    key = router.add("keyboard-only", brain)
    # start from the keyboard: the new session's card takes the focus
    await page.focus("#new-session textarea[name=goal]")
    await page.keyboard.type(f"{key}: open the calculator")
    await page.select_option("#new-session select[name=confirm]", "all")
    await page.focus("#new-session button[type=submit]")
    await page.keyboard.press("Enter")
    await page.wait_for_function(
        "() => document.activeElement && document.activeElement.matches('.card a.goal')"
    )
    sid = await page.evaluate("document.activeElement.closest('.card').dataset.session")
    thumb = page.get_by_role("img", name="Live thumbnail of the session's window")
    assert await thumb.count() >= 1
    assert f"{key}: open the calculator" in str(
        await page.locator(f'canvas[data-thumb="{sid}"]').get_attribute("aria-label")
    )
    await page.keyboard.press("Enter")  # the focused goal link opens the session
    await page.wait_for_selector("#view-session:not([hidden])")
    # a confirmation card takes the focus (the card, never its Approve button)
    await page.wait_for_selector(".confirm", timeout=60000)
    await page.wait_for_function(
        "() => document.activeElement && document.activeElement.classList.contains('confirm')"
    )
    assert await page.evaluate("document.activeElement.getAttribute('role')") == "alertdialog"
    for _ in range(6):  # Tab from the card reaches its buttons
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.matches('.confirm button.approve')"):
            break
    else:
        raise AssertionError("Tab from the confirmation card never reached Approve")
    await page.keyboard.press("Enter")
    end = await asyncio.to_thread(console.wait_end, sid)
    assert end["state"] == "done"
    preview = page.get_by_role("img", name="Live preview of the session's window")
    assert await preview.count() == 1
    # a chip opens from the keyboard
    toggle = page.locator("#chips li[data-event='tool.call'] button.chip-toggle").first
    await toggle.wait_for()
    await toggle.focus()
    assert await toggle.get_attribute("aria-expanded") == "false"
    await page.keyboard.press("Enter")
    assert await toggle.get_attribute("aria-expanded") == "true"
    more = page.locator("#chips li[data-event='tool.call'] .more").first
    assert await more.is_visible() and "Calculator" in await more.inner_text()
    await page.keyboard.press("Space")
    assert await toggle.get_attribute("aria-expanded") == "false"
    assert await more.is_hidden()
    console.post(f"/api/sessions/{sid}/stop")


async def test_a_session_shows_as_many_steps_as_its_log(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    """Nine tool calls and an answer: ten model steps, on the card, the session view and the
    audit log alike (the card used to count the calls: 9 against 10)."""
    console, router = served

    def brain(view: View) -> Decision:
        if view.turns < 9:
            return Decision("", [("wait", {"seconds": 0.01})])
        return Decision("Waited nine times.")

    key = router.add("count-the-steps", brain)
    card = console.start(f"{key}: wait nine times", confirm="none")
    end = await asyncio.to_thread(console.wait_end, card["id"])
    try:
        assert end["steps"] == 10 and end["calls"] == 9, end
        run = next(r for r in console.get("/api/runs?limit=50") if r["id"] == end["run_id"])
        assert run["steps"] == 10
        meta = page.locator(f'[data-session="{card["id"]}"] .meta')
        await meta.wait_for()
        assert "10 steps" in await meta.inner_text()
        await page.goto(f"{console.origin}/audit")
        row = page.locator(f"#runs tr:has(a:text-is('{key}: wait nine times'))")
        assert (await row.locator("td").nth(4).inner_text()).strip() == "10"
        await page.goto(f"{console.origin}/audit/{end['run_id']}")
        await page.wait_for_selector("#r-steps .step.final")
        assert "10 steps" in await page.locator("#r-meta").inner_text()
    finally:
        console.post(f"/api/sessions/{card['id']}/stop")
