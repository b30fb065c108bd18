"""The console, round 2, in a real browser: talking to a session while it runs and after it
ends, running it again, taking its desktop over, and what it costs.

`deskpilot serve` runs as its own process; the model is a local server in the compatible wire
format whose brain is picked by the goal; the page is Debian's Chromium under Playwright. The
effects are checked outside the console: processes on a session's display read from /proc,
its X server's socket, an input-probe app's own output, and what the model was sent over the
wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, Route

from deskpilot._wait import WaitTimeout, async_wait_for, wait_for
from tests.desktop.console_kit import (
    ConsoleProcess,
    Router,
    alive,
    on_display,
)
from tests.e2e.wire import Decision, ModelServer, View
from tests.wires import anthropic_message

pytestmark = pytest.mark.asyncio(loop_scope="session")

REPO = Path(__file__).resolve().parents[3]


#: whether the page shows the goal given (not "No such session (yet)"), as a page function
SHOWS_GOAL = "goal => document.getElementById('s-goal')?.textContent === goal"


async def session_page(page: Page, console: ConsoleProcess, sid: str) -> None:
    """Open a session's own view; wait until the page has the session (its goal shows)."""
    goal = console.card(sid)["goal"]
    await page.goto(f"{console.origin}/s/{sid}")
    await page.wait_for_function(SHOWS_GOAL, arg=goal)


def close(console: ConsoleProcess, *sids: str) -> None:
    for sid in sids:
        console.post(f"/api/sessions/{sid}/stop")


def requests_of(router: Router, key: str) -> list[View]:
    with router.lock:
        return list(router.views.get(key, []))


async def test_a_follow_up_changes_what_a_running_session_does(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    """The session keeps waiting until told otherwise; a message written in its box while it
    runs makes its next turn open the calculator (seen on its own display, from /proc)."""
    console, router = served

    def brain(view: View) -> Decision:
        told = any("open the calculator instead" in t for t in view.user_texts)
        if told and not any("Calculator" in r for r in view.results[-1:]):
            return Decision("As you asked.", [("open_app", {"bundleId": "Calculator"})])
        if told:
            return Decision("Opened the calculator, as you asked.")
        if view.turns > 200:
            return Decision("Nobody said anything.")
        return Decision("", [("wait", {"seconds": 0.2})])

    key = router.add("follow-up-steers", brain)
    card = console.start(f"{key}: wait until I say what to do", confirm="none")
    sid = card["id"]
    try:
        await session_page(page, console, sid)
        await page.wait_for_selector("#chips li[data-event='tool.call'] .tool:text-is('wait')")
        display = console.card(sid)["display"]
        assert not on_display(display, b"gnome-calculator")
        assert await page.locator("#talk-interrupt").is_visible()  # it runs: both buttons
        await page.fill("#talk-text", "Stop waiting: open the calculator instead.")
        await page.click("#talk-send")
        end = await asyncio.to_thread(console.wait_end, sid)
        assert end["state"] == "done", end
        assert end["answer"] == "Opened the calculator, as you asked."
        assert on_display(display, b"gnome-calculator")  # what it did changed
        # the model got the message as a user turn in the middle of the run
        views = requests_of(router, key)
        first = next(i for i, v in enumerate(views) if len(v.user_texts) > 1)
        assert first > 0 and views[first].turns == first  # mid-run, not a new conversation
        assert views[first].user_texts[-1] == (
            "Message from the user while you work: Stop waiting: open the calculator instead."
        )
        await page.wait_for_selector("#chips li[data-event='user.message']")
        events = console.run_events(end["run_id"])
        said = [e["data"]["text"] for e in events if e["event"] == "user.message"]
        assert said == [views[first].user_texts[-1]]
    finally:
        close(console, sid)


async def test_interrupt_stops_the_step_and_the_session_reads_the_message_at_once(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    console, router = served
    held = threading.Event()
    release = threading.Event()

    def brain(view: View) -> Decision:
        if any("The user interrupted you" in t for t in view.user_texts):
            return Decision(f"Interrupted; I read: {view.user_texts[-1]}")
        held.set()
        release.wait(90)  # a model taking its time: the interrupt must not wait for it
        return Decision("", [("wait", {"seconds": 30})])

    key = router.add("interrupt-me", brain)
    card = console.start(f"{key}: think for a long time", confirm="none")
    sid = card["id"]
    try:
        await session_page(page, console, sid)
        await asyncio.to_thread(held.wait, 90)
        display = console.card(sid)["display"]
        await page.fill("#talk-text", "Forget that; say hello.")
        await page.click("#talk-interrupt")
        end = await asyncio.to_thread(console.wait_end, sid)
        assert not release.is_set()  # the held model call was abandoned, not waited for
        assert end["state"] == "done", end
        assert end["answer"] == (
            "Interrupted; I read: The user interrupted you. Their message: Forget that; say hello."
        )
        assert len(end["runs"]) == 2  # the stopped run, then the same context carrying on
        first = console.run_events(end["runs"][0])
        assert [e["data"]["outcome"] for e in first if e["event"] == "run.finished"] == ["stopped"]
        assert end["display"] == display  # on the same desktop
    finally:
        release.set()
        close(console, sid)


async def test_a_continued_session_keeps_its_desktop_and_its_context_and_runs_again(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    """Open the calculator and finish; continue from the page: the same calculator process
    on the same X server is read, and the model sees its first goal, its answer and the new
    message. Run again starts the same goal and settings on a new desktop."""
    console, router = served

    def brain(view: View) -> Decision:
        if view.turns == 0:
            return Decision("", [("open_app", {"bundleId": "Calculator"})])
        if len(view.user_texts) == 1:
            return Decision("The calculator is open.")
        if not view.last_results:
            return Decision("", [("read_screen_ax", {})])
        return Decision(f"Read {len(view.last_results[-1])} characters of the calculator.")

    key = router.add("continue-on-the-same-desktop", brain)
    await page.goto(f"{console.origin}/")
    await page.fill("#new-session textarea[name=goal]", f"{key}: open the calculator")
    await page.select_option("#new-session select[name=confirm]", "none")
    await page.click("#run-settings summary")
    await page.fill("#new-session input[name=max_steps]", "7")
    await page.fill("#new-session input[name=timeout]", "300")
    await page.select_option("#new-session select[name=tool_protocol]", "text")
    await page.click("#new-session button[type=submit]")
    node = await page.wait_for_selector(f'.card:has(a.goal:text-is("{key}: open the calculator"))')
    assert node is not None
    sid = str(await node.get_attribute("data-session"))
    again_id = ""
    try:
        end = await asyncio.to_thread(console.wait_end, sid)
        assert end["state"] == "done" and end["kept"], end
        assert end["settings"]["max_steps"] == 7 and end["settings"]["tool_protocol"] == "text"
        display = end["display"]
        number = display.lstrip(":")
        calculator = on_display(display, b"gnome-calculator")
        assert len(calculator) == 1
        views_before = len(requests_of(router, key))
        await session_page(page, console, sid)
        # the page replays the session's events: its card is 'running' before it is 'done'
        await page.wait_for_function(
            "document.getElementById('talk-send').textContent === 'Continue'", timeout=15000
        )
        assert not await page.locator("#talk-interrupt").is_visible()
        await page.fill("#talk-text", "Now read what it shows.")
        await page.click("#talk-send")
        await asyncio.to_thread(
            console.wait_card,
            sid,
            lambda c: len(c["runs"]) == 2 and c["state"] == "done",
            "the continuation to end",
        )
        later = console.card(sid)
        assert later["answer"].startswith("Read "), later
        assert later["display"] == display
        assert alive(calculator) == calculator  # the same app, never closed nor reopened
        assert on_display(display, b"gnome-calculator") == calculator
        assert Path(f"/tmp/.X11-unix/X{number}").exists()  # the same X server
        views = requests_of(router, key)[views_before:]
        assert views and views[0].user_texts == [
            f"{key}: open the calculator",
            "Now read what it shows.",
        ]
        assert views[0].turns == 2 and views[0].mode == "text"  # its history, its settings
        assert any("Calculator" in r for r in views[0].results)  # the first run's results
        events = console.run_events(later["runs"][1])
        started = next(e["data"] for e in events if e["event"] == "run.started")
        assert started["goal"] == "Now read what it shows." and started["max_steps"] == 7
        # the card counts the steps as the audit log does, over both runs
        runs = {r["id"]: r for r in console.get("/api/runs?limit=50")}
        assert later["steps"] == sum(runs[r]["steps"] for r in later["runs"]) == 4

        # Run again: the same goal and settings, a new session on a desktop of its own
        await page.click("#s-again")
        await page.wait_for_function(
            "sid => location.pathname.startsWith('/s/') && !location.pathname.endsWith(sid)",
            arg=sid,
        )
        again_id = page.url.rsplit("/", 1)[1]
        fresh = await asyncio.to_thread(console.wait_end, again_id)
        assert fresh["goal"] == later["goal"] and fresh["settings"] == later["settings"]
        assert fresh["display"] != display and fresh["answer"] == "The calculator is open."
    finally:
        close(console, sid, *([again_id] if again_id else []))
    gone = console.card(sid)
    assert not gone["kept"] and gone["state"] == "done"  # closing keeps how it ended
    assert not on_display(display, b"gnome-calculator")
    assert not Path(f"/tmp/.X11-unix/X{number}").exists()


class Probe:
    """The input-probe app on one sandbox display (tests/desktop/input_probe.py)."""

    def __init__(self, display: str, title: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.desktop.input_probe", title],
            env={"PATH": "/usr/bin:/bin", "DISPLAY": display},
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        assert first.startswith("ready"), first
        self.display = display
        self.xid = int(first.split()[1])
        self.events: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.events.append(json.loads(line))

    def origin(self) -> tuple[int, int]:
        """Where its window's top-left corner is on the screen (the window manager placed it),
        read from the X server."""
        from Xlib import display

        d = display.Display(self.display)
        try:
            window = d.create_resource_object("window", self.xid)
            at = window.translate_coords(d.screen().root, 0, 0)
            return -int(at.x), -int(at.y)
        finally:
            d.close()

    def keys(self) -> str:
        return "".join(e["key"] for e in self.events if "key" in e)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self.reader.join(10)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


async def test_take_over_sends_input_to_its_own_sandbox_only_and_the_model_reads_the_note(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    console, router = served
    gates = {name: threading.Event() for name in ("a", "b")}
    entered = {name: threading.Event() for name in ("a", "b")}
    asked_after: dict[str, float] = {}

    def brain_for(name: str) -> Any:
        def brain(view: View) -> Decision:
            if view.turns == 0:
                return Decision("", [("wait", {"seconds": 0.1})])
            if view.turns == 1:
                entered[name].set()
                gates[name].wait(120)  # the model thinks while the person takes over
                return Decision("", [("list_windows", {})])
            asked_after.setdefault(name, time.time())
            notes = [t for t in view.user_texts if t.startswith("The user took over")]
            return Decision(f"Back in control. {notes[-1] if notes else 'No note.'}")

        return brain

    cards = {}
    for name in ("a", "b"):
        key = router.add(f"take-over-{name}", brain_for(name))
        cards[name] = console.start(f"{key}: wait for me", confirm="none")
    probes: dict[str, Probe] = {}
    try:
        for name in ("a", "b"):
            ready = await asyncio.to_thread(
                console.wait_card, cards[name]["id"], lambda c: bool(c["display"]), "a display"
            )
            cards[name] = ready
            probes[name] = Probe(ready["display"], f"probe {name}")
            await asyncio.to_thread(entered[name].wait, 90)
        a = cards["a"]["id"]
        await session_page(page, console, a)
        await page.wait_for_selector("#preview[data-seq]", timeout=30000)
        switch = page.locator("#takeover")
        assert await switch.get_attribute("aria-checked") == "false"
        await switch.click()
        await page.wait_for_selector("#takeover[aria-checked='true']")
        assert console.card(a)["state"] == "taken_over"
        gates["a"].set()  # its reply arrives while the person drives: its call must not run
        # a click inside the probe window (150, 100 in it) and typing, on the preview
        box = await page.locator("#preview").bounding_box()
        assert box is not None
        size = await page.evaluate("[preview.width, preview.height]")
        assert size == [1280, 800]  # the whole screen of its sandbox
        scale_x, scale_y = box["width"] / size[0], box["height"] / size[1]
        left, top = probes["a"].origin()
        await page.mouse.click(
            box["x"] + (left + 150.5) * scale_x, box["y"] + (top + 100.5) * scale_y
        )
        await page.keyboard.type("hi!")
        await asyncio.to_thread(
            wait_for, lambda: probes["a"].keys() == "hi!", timeout=30, what="the keys in probe a"
        )
        clicks = [e for e in probes["a"].events if "button" in e]
        assert clicks and clicks[0]["button"] == 1
        assert abs(clicks[0]["x"] - 150) <= 3 and abs(clicks[0]["y"] - 100) <= 3, clicks
        assert "a" not in asked_after  # the agent waits: no model turn while taken over
        await page.fill("#handback textarea[name=note]", "I typed hi for you.")
        handed = time.time()
        await page.click("#handback button[type=submit]")
        end_a = await asyncio.to_thread(console.wait_end, a)
        assert asked_after["a"] >= handed
        assert end_a["answer"].startswith("Back in control. The user took over the screen for ")
        assert "(1 click, 3 keys)" in end_a["answer"]
        assert end_a["answer"].endswith(
            "Their note: “I typed hi for you.”. The screen may have changed: look at it again "
            "before you act."
        )
        # the other session's sandbox got nothing
        gates["b"].set()
        end_b = await asyncio.to_thread(console.wait_end, cards["b"]["id"])
        assert end_b["answer"] == "Back in control. No note."
        assert probes["b"].events == []
        # the log marks the stretch (never what was typed), and the decided call did not run
        events = console.run_events(end_a["run_id"])
        kinds = [e["event"] for e in events]
        assert kinds.index("takeover.started") < kinds.index("takeover.ended")
        ended = next(e["data"] for e in events if e["event"] == "takeover.ended")
        assert (ended["clicks"], ended["keys"], ended["note"]) == (1, 3, "I typed hi for you.")
        assert "hi!" not in json.dumps([e["data"] for e in events])
        listed = [e["data"] for e in events if e["event"] == "tool.result"]
        assert listed[-1]["tool"] == "list_windows" and not listed[-1]["ok"]
        assert "took over the screen" in listed[-1]["summary"]
        await page.wait_for_selector("#chips li[data-event='takeover.ended']")
    finally:
        for gate in gates.values():
            gate.set()
        for probe in probes.values():
            probe.close()
        close(console, *(c["id"] for c in cards.values()))


def waiting_here(
    console: ConsoleProcess, router: Router, key: str
) -> tuple[dict[str, Any], threading.Event]:
    """A session on this desktop whose model call waits until the returned event is set."""
    release = threading.Event()

    def brain(view: View) -> Decision:
        release.wait(90)
        return Decision("Done.")

    router.add(key, brain)
    return console.start(f"{key}: wait", target="desktop", confirm="none"), release


async def test_take_over_of_this_desktop_needs_the_flag(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    console, router = served
    card, release = waiting_here(console, router, "take-over-here")
    try:
        await asyncio.to_thread(
            console.wait_card, card["id"], lambda c: c["state"] == "running", "it to run"
        )
        assert not console.card(card["id"])["takeover"]["allowed"]
        await session_page(page, console, card["id"])
        assert await page.locator("#takeover").is_disabled()
        assert "--takeover-here" in await page.locator("#takeover-help").inner_text()
        refused = console.post(f"/api/sessions/{card['id']}/takeover", {"on": True})
        assert refused.status_code == 409 and "--takeover-here" in refused.json()["error"]
        sent = console.post(
            f"/api/sessions/{card['id']}/input", {"events": [{"t": "text", "text": "x"}]}
        )
        assert sent.status_code == 409  # nothing reaches this desktop
    finally:
        release.set()
        close(console, card["id"])


async def test_a_script_that_arrives_late_still_hears_the_first_render_of_the_session(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    """The session view's modules (take over, talk, costs) render a session when the console
    tells them: takeover.js held back until the view shows the session (at most 2 s: a page
    that waits for all its scripts shows nothing before) still hears that first render, and
    switches Take over off for a session on this desktop (a slow script: a loaded machine, a
    slow link)."""
    console, router = served
    card, release = waiting_here(console, router, "late-script")

    async def shown() -> bool:
        return bool(await page.evaluate(SHOWS_GOAL, card["goal"]))

    async def hold(route: Route) -> None:
        with contextlib.suppress(WaitTimeout):
            await async_wait_for(shown, timeout=2, what="the session shown", interval=0.05)
        await route.continue_()

    try:
        await asyncio.to_thread(
            console.wait_card, card["id"], lambda c: c["state"] == "running", "it to run"
        )
        await page.route("**/static/takeover.js", hold)
        await session_page(page, console, card["id"])
        await page.wait_for_function("window.deskpilotTakeover !== undefined")
        assert await page.locator("#takeover").is_disabled()
        assert "--takeover-here" in await page.locator("#takeover-help").inner_text()
    finally:
        release.set()
        close(console, card["id"])


def price_of(tokens_in: int, out: int, cached: int) -> float:
    return ((tokens_in - cached) * 2.5 + cached * 0.25 + out * 10.0) / 1_000_000


async def test_costs_match_the_providers_usage_fields_and_the_raw_exchange_is_one_click_away(
    served: tuple[ConsoleProcess, Router], model: tuple[ModelServer, Router], page: Page
) -> None:
    console, router = served
    server, _ = model
    usages = [
        {
            "prompt_tokens": 1234,
            "completion_tokens": 56,
            "total_tokens": 1290,
            "prompt_tokens_details": {"cached_tokens": 200},
        },
        {"prompt_tokens": 2345, "completion_tokens": 78, "total_tokens": 2423},
    ]

    def brain(view: View) -> Decision:
        if view.turns == 0:
            return Decision("", [("wait", {"seconds": 0.1})], usage=usages[0])
        return Decision("Waited.", usage=usages[1])

    key = router.add("what-it-costs", brain)
    # the prices, set on the Prices page
    await page.click("header nav a:text-is('Prices')")
    await page.wait_for_selector("#view-prices:not([hidden]) #price-rows tr")
    row = page.locator("#price-rows tr").first
    await row.locator("input[name=model]").fill("compatible:test-model")
    await row.locator("input[name=input]").fill("2.5")
    await row.locator("input[name=output]").fill("10")
    await row.locator("input[name=cached_input]").fill("0.25")
    await page.click("#prices button[type=submit]")
    await page.wait_for_selector("#prices-saved:text('Saved 1 price')")
    saved = console.home / "config" / "prices.toml"
    assert "input = 2.5" in saved.read_text()

    card = console.start(f"{key}: wait a moment", confirm="none")
    sid = card["id"]
    try:
        end = await asyncio.to_thread(console.wait_end, sid)
        # what the stand-in model sent back, read from its own record of the wire
        expected = [
            price_of(
                u["prompt_tokens"],
                u["completion_tokens"],
                u.get("prompt_tokens_details", {}).get("cached_tokens", 0),
            )
            for u in usages
        ]
        assert end["tokens"] == {"input": 3579, "output": 134, "cached": 200, "cache_write": 0}
        assert end["cost"] == pytest.approx(sum(expected))
        steps = console.get(f"/api/sessions/{sid}/steps")["steps"]
        assert [s["usage"] for s in steps] == usages  # the usage fields, as sent
        assert [s["cost"] for s in steps] == pytest.approx(expected)
        await session_page(page, console, sid)
        chips = page.locator("#chips li.step .usage")
        await chips.nth(1).wait_for()
        shown = await chips.all_inner_texts()
        assert shown == [
            f"1,234 in · 56 out · 200 cached · ${expected[0]:.4f}",
            f"2,345 in · 78 out · ${expected[1]:.4f}",
        ]
        head = await page.locator("#s-cost").inner_text()
        assert f"3,579 in · 134 out · 200 cached · ${sum(expected):.4f}" in head
        meta = await page.evaluate(f"window.deskpilot.sessions.get('{sid}').cost")
        assert meta == pytest.approx(sum(expected))
        # the raw exchange of step 1, from the keyboard: Enter opens it, Escape closes it
        raw = page.locator("#chips li.step[data-exchange='1'] button.raw-open")
        await raw.focus()
        await page.keyboard.press("Enter")
        await page.wait_for_selector("#raw[open] #raw-response:not(:empty)")
        request = json.loads(await page.locator("#raw-request").inner_text())
        response = json.loads(await page.locator("#raw-response").inner_text())
        goal = f"{key}: wait a moment"
        sent = next(  # the stand-in's own record of what it received first for this goal
            r.body for r in server.requests if r.body["messages"][1].get("content") == goal
        )
        assert request["messages"] == sent["messages"] and request["tools"] == sent["tools"]
        assert response["usage"] == usages[0]
        await page.keyboard.press("Escape")
        await page.wait_for_selector("#raw:not([open])", state="attached")
        assert await page.evaluate("document.activeElement.classList.contains('raw-open')")
        # the audit log keeps the usage: the replay shows the run's cost
        await page.goto(f"{console.origin}/audit/{end['run_id']}")
        await page.wait_for_selector("#r-cost:not(:empty)")
        assert f"${sum(expected):.4f}" in await page.locator("#r-cost").inner_text()
    finally:
        close(console, sid)
        console.post("/api/prices", {"prices": {}})


async def test_a_native_session_runs_the_vendors_computer_tool_and_continues_on_its_desktop(
    served: tuple[ConsoleProcess, Router], page: Page, tmp_path: Path
) -> None:
    """Mode "native" from the form: the vendor's computer tool (a recorded Anthropic
    conversation), its screenshot taken on the session's sandbox; continuing it goes on in the
    same vendor conversation, with a fresh screenshot of the same desktop."""
    console, _ = served
    recording = tmp_path / "native.json"
    look = {"action": "screenshot"}
    usage = {"input_tokens": 10, "output_tokens": 2}
    replies = [
        anthropic_message(
            {"type": "tool_use", "id": "toolu_1", "name": "computer", "input": look}, usage=usage
        ),
        anthropic_message({"type": "text", "text": "Native: I saw the desktop."}, n=2, usage=usage),
        anthropic_message({"type": "text", "text": "Native again."}, n=3, usage=usage),
    ]
    recording.write_text(
        json.dumps({"format": "anthropic", "model": "claude-sonnet-4-5", "replies": replies})
    )
    await page.goto(f"{console.origin}/")
    goal = "native-mode: look at the screen"
    await page.fill("#new-session textarea[name=goal]", goal)
    await page.fill("#new-session input[name=model]", f"scripted:{recording}")
    await page.select_option("#new-session select[name=confirm]", "none")
    await page.click("#run-settings summary")
    await page.select_option("#new-session select[name=mode]", "native")
    await page.click("#new-session button[type=submit]")
    node = await page.wait_for_selector(f'.card:has(a.goal:text-is("{goal}"))')
    assert node is not None
    sid = str(await node.get_attribute("data-session"))
    try:
        end = await asyncio.to_thread(console.wait_end, sid)
        assert end["state"] == "done" and end["answer"] == "Native: I saw the desktop.", end
        events = console.run_events(end["run_id"])
        started = next(e["data"] for e in events if e["event"] == "run.started")
        assert started["mode"] == "native" and started["tool_protocol"] == "native"
        shots = [e for e in events if e["event"] == "tool.result" and e["images"]]
        assert shots and shots[0]["images"][0]["width"] > 0  # its sandbox's screen
        console.post(f"/api/sessions/{sid}/messages", {"text": "Look once more."})
        later = await asyncio.to_thread(
            console.wait_card,
            sid,
            lambda c: len(c["runs"]) == 2 and c["state"] == "done",
            "the native continuation",
        )
        assert later["answer"] == "Native again." and later["display"] == end["display"]
        again = console.run_events(later["runs"][1])
        goal2 = next(e["data"]["goal"] for e in again if e["event"] == "run.started")
        assert goal2 == "Look once more."
        # the third model call, as it crossed the wire: the same vendor conversation goes on
        raw = console.get(f"/api/sessions/{sid}/exchanges/3")
        messages = json.loads(raw["request"])["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
        assert messages[0]["content"][0] == {"type": "text", "text": goal}
        assert messages[1]["content"][0]["name"] == "computer"
        asked = messages[-1]["content"]
        assert asked[0] == {"type": "text", "text": "Look once more."}
        assert asked[1]["type"] == "image"  # a fresh screenshot of the same desktop
    finally:
        close(console, sid)
