"""The console's asks in a real browser (issue #22 item 5): a confirmation for a session the
person is not watching shows in a page-wide banner and the tab title on whatever view is open,
says the act in words, starts its time to answer only once shown, and offers a yes for the
task; the grant it makes is listed on the session's view and revoked there; the session's view
highlights the element over its live preview, and its chips say the policy's decisions.

`deskpilot serve` runs as its own process on the shared sandbox; the model is a local server in
the compatible wire format; the page is Debian's Chromium under Playwright. Effects are checked
outside the console: zenity dialogs whose "Send" ends the process (exit 0: clicked).
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from playwright.async_api import Page

from tests.desktop.conftest import Apps
from tests.desktop.console_kit import (
    ConsoleProcess,
    Router,
)
from tests.desktop.helpers import find_id
from tests.e2e.wire import Decision, View

pytestmark = pytest.mark.asyncio(loop_scope="session")


class PressSend:
    """Read the bound window, press Send, then (with ``hold``) wait until released: the task
    and its grants last while it waits."""

    def __init__(self, hold: bool = False) -> None:
        self.release = threading.Event()
        if not hold:
            self.release.set()

    def __call__(self, view: View) -> Decision:
        if view.turns == 0:
            return Decision("Reading the dialog.", [("read_screen_ax", {})])
        if view.turns == 1:
            send = find_id(view.last_results[-1], "button", "Send")
            return Decision("Sending.", [("perform", {"elementID": send})])
        self.release.wait(90)
        return Decision(f"Outcome: {view.last_results[-1][:200]}")


async def dialog(apps: Apps, title: str) -> tuple[str, object]:
    window = await apps.spawn(
        [
            "zenity",
            "--question",
            f"--title={title}",
            "--text=Send the report to Bob?",
            "--ok-label=Send",
            "--cancel-label=Cancel",
        ],
        match=lambda w: w.title == title,
    )
    return window.stable_id, apps.procs[-1]


async def test_an_ask_nobody_is_watching_shows_everywhere_and_a_yes_for_the_task_is_revocable(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, router = served
    window, proc = await dialog(apps, "Report A")
    brain = PressSend(hold=True)
    key = router.add("asks-banner", brain)
    sid = console.start(f"{key}: deal with the dialog", target="desktop", window=window)["id"]
    # the page shows the session list, not the session: the banner and the title say it
    banner = page.locator("#asks-banner .asks-ask")
    await banner.wait_for(timeout=60000)
    assert 'Click "Send"' in await banner.locator(".asks-what").inner_text()
    assert (await page.title()).startswith("(1) ⚠ approval needed")
    card = console.wait_card(sid, lambda c: c["pending"] and c["pending"][0]["seen"], "seen")
    pending = card["pending"][0]
    assert pending["deadline"] > pending["seen"] and pending["offer"]
    await banner.locator("button.asks-task").click()  # allow this kind of effect for the task
    assert await asyncio.to_thread(proc.wait, 20) == 0  # type: ignore[attr-defined]
    await page.locator("#asks-banner").wait_for(state="hidden")
    assert not (await page.title()).startswith("(")
    grants = console.get(f"/api/sessions/{sid}/grants")
    assert len(grants) == 1 and grants[0]["source"] == "person"
    # the session's view lists the grant; Revoke ends it (recorded)
    streams: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if "/api/events" in r.url else None)
    await page.goto(f"{console.origin}/s/{sid}")
    item = page.locator("#asks-grants li")
    await item.wait_for()
    # from the page's one event stream (the chips' own): the server sends each item once
    assert len(streams) == 1, streams
    assert "send or submit in Report A" in await item.inner_text()
    await item.locator("button.asks-revoke").click()
    await item.wait_for(state="detached")
    assert console.get(f"/api/sessions/{sid}/grants") == []
    brain.release.set()
    end = console.wait_end(sid)
    kinds = [e["event"] for e in console.run_events(end["run_id"])]
    assert "grant.added" in kinds and "grant.revoked" in kinds
    # the chips say the decision in words
    decided = page.locator("#chips li[data-event='policy.decided'] .args")
    assert "approved by ConsoleApprover (a person), for the rest of the task" in " ".join(
        await decided.all_inner_texts()
    )


async def test_the_session_view_highlights_the_element_and_decline_runs_nothing(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, router = served
    window, proc = await dialog(apps, "Report B")
    key = router.add("asks-highlight", PressSend())
    sid = console.start(f"{key}: deal with the dialog", target="desktop", window=window)["id"]
    await page.goto(f"{console.origin}/s/{sid}")
    await page.locator("#asks-banner .asks-ask").wait_for(timeout=60000)
    target = page.locator(".asks-target")
    await target.wait_for(state="visible")
    box = await target.bounding_box()
    canvas = await page.locator("#preview").bounding_box()
    assert box is not None and canvas is not None
    # the box sits on the Send button of the frame (its centre inside the canvas both ways)
    inside = canvas["x"] <= box["x"] + box["width"] / 2 <= canvas["x"] + canvas["width"]
    inside &= canvas["y"] <= box["y"] + box["height"] / 2 <= canvas["y"] + canvas["height"]
    assert inside and box["width"] > 10, (box, canvas)
    await page.locator("#asks-banner button.asks-no").click()
    end = console.wait_end(sid)
    assert proc.poll() is None  # type: ignore[attr-defined]  # Send was never pressed
    proc.kill()  # type: ignore[attr-defined]
    answered = [
        e["data"] for e in console.run_events(end["run_id"]) if e["event"] == "confirm.answered"
    ]
    assert [a["approved"] for a in answered] == [False]
