"""The console in a real browser: chips, confirmation cards, reload, Stop, side-by-side sessions.

`deskpilot serve` runs as its own process on the shared sandbox (its "this desktop"); the model
is a local server in the compatible wire format, its brain chosen by the goal; the page is
Debian's Chromium under Playwright. Effects are checked outside the console: a zenity dialog
whose "Send" button ends its process (exit code 0: clicked; still running: nothing was done),
PIDs and X sockets read from /proc and /tmp, and what the model was sent over the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import subprocess
import threading
import types
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image as PILImage
from playwright.async_api import Page, async_playwright

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, async_wait_for, wait_for
from deskpilot.audit import AuditLog
from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.events import Event
from deskpilot.sandbox.info import read_info
from tests.desktop.conftest import Apps
from tests.desktop.console_kit import (
    CHROMIUM,
    ConsoleProcess,
    Router,
    alive,
    console_process,
    model_server,
    processes_with,
    texts_of,
)
from tests.desktop.helpers import find_id, mcp_text, window_id_from
from tests.e2e.brains import calculator_for, display
from tests.e2e.test_mcp_http import http_session
from tests.e2e.wire import Brain, Decision, View

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def send_dialog(
    apps: Apps, title: str = "Send report"
) -> tuple[WindowInfo, subprocess.Popen[bytes]]:
    window = await apps.spawn(
        [
            "zenity",
            "--question",
            f"--title={title}",
            "--text=Send the quarterly report to Bob?",
            "--ok-label=Send",
            "--cancel-label=Cancel",
        ],
        match=lambda w: w.title == title,
    )
    return window, apps.procs[-1]


async def exited(proc: subprocess.Popen[bytes], timeout: float = 20) -> int:
    return await asyncio.to_thread(proc.wait, timeout)


def press_send(view: View) -> Decision:
    """Read the bound window, press Send; after a refusal press Cancel; then report."""
    if view.turns == 0:
        return Decision("Reading the dialog.", [("read_screen_ax", {})])
    if view.turns == 1:
        send = find_id(view.last_results[-1], "button", "Send")
        return Decision("Sending.", [("perform", {"elementID": send})])
    if view.turns == 2 and "Declined" in view.last_results[-1]:
        tree = next(t for t in view.results if "push button" in t or "button" in t)
        cancel = find_id(tree, "button", "Cancel")
        return Decision("Not allowed: cancelling.", [("perform", {"elementID": cancel})])
    return Decision(f"Outcome: {view.last_results[-1][:300]}")


async def open_session_page(page: Page, console: ConsoleProcess, session_id: str) -> None:
    await page.click(f'[data-session="{session_id}"] a.goal')
    await page.wait_for_selector("#s-goal:not(:empty)")


async def start_from_form(page: Page, goal: str, *, target: str, window: str | None = None) -> str:
    await page.fill("#new-session textarea[name=goal]", goal)
    await page.select_option("#new-session select[name=target]", target)
    if window is not None:
        await page.wait_for_selector(
            f'#new-session select[name=window] option[value="{window}"]', state="attached"
        )
        await page.select_option("#new-session select[name=window]", window)
    await page.click("#new-session button[type=submit]")
    card = await page.wait_for_selector(f'.card:has(a.goal:text-is("{goal}"))')
    assert card is not None
    session_id = await card.get_attribute("data-session")
    assert session_id
    return session_id


async def test_chips_stream_in_and_approve_runs_the_action(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, router = served
    window, proc = await send_dialog(apps)
    key = router.add("approve-the-send", press_send)
    sid = await start_from_form(
        page, f"{key}: deal with the dialog", target="desktop", window=window.stable_id
    )
    await open_session_page(page, console, sid)
    card = await page.wait_for_selector(".confirm", timeout=60000)
    assert card is not None
    assert "Allow perform?" in await card.inner_text()
    assert 'activates "Send"' in await card.inner_text()
    chips = page.locator("#chips li.chip[data-event='tool.call']")
    assert await chips.first.locator(".tool").inner_text() == "read_screen_ax"
    await page.click(".confirm button.approve")
    assert await exited(proc) == 0  # the click happened: zenity answered "Send"
    end = console.wait_end(sid)
    assert end["state"] == "done" and end["label"] == "Done"
    await page.wait_for_selector("#s-answer-box:not([hidden])")
    tools = await page.locator("#chips li[data-event='tool.call'] .tool").all_inner_texts()
    assert tools == ["read_screen_ax", "perform"]
    # each chip says when its event happened, when the server published it and when it showed
    times = await chips.evaluate_all(
        "els => els.map(e => [e.dataset.ts, e.dataset.at, e.dataset.shownAt].map(Number))"
    )
    for happened, published, shown in times:
        assert happened <= published <= shown / 1000 + 1, (happened, published, shown)
    result = page.locator("#chips li[data-event='tool.call'][data-ok='yes'] .result")
    await result.nth(1).wait_for()
    answered = [
        e["data"] for e in console.run_events(end["run_id"]) if e["event"] == "confirm.answered"
    ]
    assert [a["approved"] for a in answered] == [True]
    second = console.post(
        f"/api/sessions/{sid}/confirmations/{answered[0]['call_id']}", {"approved": False}
    )
    assert second.status_code == 409  # the first answer won


async def test_deny_runs_nothing_and_the_model_reads_the_refusal(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, router = served
    window, proc = await send_dialog(apps, "Send report 2")
    key = router.add("deny-the-send", press_send)
    sid = await start_from_form(
        page, f"{key}: deal with the dialog", target="desktop", window=window.stable_id
    )
    await open_session_page(page, console, sid)
    await page.wait_for_selector(".confirm", timeout=60000)
    assert proc.poll() is None
    await page.click(".confirm button.deny")
    assert await exited(proc) == 1  # the model, told it was refused, pressed Cancel instead
    end = console.wait_end(sid)
    sent = texts_of(router, key)
    assert any("refused perform in the console" in t for t in sent), sent
    # the door's refusal, in the audit log as the console's
    events = console.run_events(end["run_id"])
    assert {e["data"]["surface"] for e in events if e["event"] == "tool.call"} == {"console"}
    refused = [e["data"] for e in events if e["event"] == "tool.result" and not e["data"]["ok"]]
    assert [(r["tool"], r.get("refused")) for r in refused] == [("perform", "declined")]


async def test_no_answer_in_time_declines_and_a_reload_keeps_the_session(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, router = served
    window, proc = await send_dialog(apps, "Send report 3")
    key = router.add("nobody-answers", press_send)
    card = console.start(
        f"{key}: deal with the dialog", target="desktop", window=window.stable_id, confirm_timeout=8
    )
    await page.goto(f"{console.origin}/s/{card['id']}")
    await page.wait_for_selector(".confirm", timeout=60000)
    before = await page.locator("#chips li.chip").count()
    await page.reload()
    await page.wait_for_selector(".confirm")  # still pending after the reload
    assert await page.locator("#chips li.chip").count() == before  # replayed once, no gaps
    seqs = await page.locator("#chips li.chip").evaluate_all("els => els.map(e => e.dataset.seq)")
    assert len(seqs) == len(set(seqs))
    await page.wait_for_selector(".confirm", state="detached", timeout=30000)  # timed out
    assert await exited(proc) == 1  # declined → the model cancelled; Send never ran
    sent = texts_of(router, key)
    assert any("within 8 seconds" in t for t in sent), sent


class Hold:
    """A brain step that blocks the model call until released (a slow model)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, view: View) -> Decision:
        """Open the calculator, then hang in the next model call."""
        if view.turns == 0:
            return Decision("", [("open_app", {"bundleId": "Calculator"})])
        self.entered.set()
        self.release.wait(90)
        return Decision("Released.")


async def open_and_hold(page: Page, router: Router, key: str, target: str) -> tuple[str, Hold]:
    """A session started from the form whose model opens the calculator and then waits in its
    next call (until ``hold.release``): its id and its hold, once it waits."""
    hold = Hold()
    router.add(key, hold)
    try:
        sid = await start_from_form(page, f"{key}: open the calculator", target=target)
        await asyncio.to_thread(hold.entered.wait, 90)
    except BaseException:
        hold.release.set()
        raise
    return sid, hold


def runtime_dir_of(pid: int) -> str:
    """The XDG_RUNTIME_DIR in ``pid``'s environment: a sandbox's own, private folder."""
    for entry in _procfs.read(f"/proc/{pid}/environ").split(b"\0"):
        if entry.startswith(b"XDG_RUNTIME_DIR="):
            return entry.split(b"=", 1)[1].decode()
    raise AssertionError(f"no XDG_RUNTIME_DIR in the environment of {pid}")


async def test_stop_ends_the_sandbox_session_and_all_its_processes(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    console, router = served
    sid, hold = await open_and_hold(page, router, "stop-me-in-a-sandbox", "sandbox")
    try:
        card = console.card(sid)
        marker = f"DISPLAY={card['display']}".encode()
        pids = processes_with(marker)
        calculator = [
            p for p in alive(pids) if b"gnome-calculator" in _procfs.read(f"/proc/{p}/cmdline")
        ]
        assert calculator, pids
        # once stopped, this sandbox by what no other shares: its private runtime dir and its X
        # server's pid. A sandbox started since (the proof's, a parallel worker's) may have its
        # display number: under -n 2 a live process with DISPLAY=:N was found after the stop
        # (not identified), and its X socket can be the new server's
        runtime = runtime_dir_of(calculator[0])
        info = read_info(runtime)
        assert info is not None, runtime
        server = info.pids["xvfb"]
        assert alive({server}) == {server}
        await page.click(f'[data-session="{sid}"] button.stop')
        end = console.wait_end(sid, timeout=60)
        assert not hold.release.is_set()  # the model call was abandoned, not waited for
        assert end["state"] == "stopped" and end["label"] == "Stopped"
        await page.wait_for_selector(f'[data-session="{sid}"][data-state="stopped"]')
        assert alive(pids) == set()
        assert alive(processes_with(f"XDG_RUNTIME_DIR={runtime}".encode())) == set()
        assert alive({server}) == set()  # the sandbox's X server is gone
        assert not Path(runtime).exists()
    finally:
        hold.release.set()


async def test_stop_on_this_desktop_ends_what_the_session_launched_only(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps, desktop: DesktopFacade
) -> None:
    console, router = served
    bystander, bystander_proc = await send_dialog(apps, "Not the session's")
    before = {w.pid for w in await desktop.list_windows()}
    sid, hold = await open_and_hold(page, router, "stop-me-here", "desktop")
    try:

        async def launched() -> set[int] | None:
            new = {
                w.pid for w in await desktop.list_windows() if w.app.app_id.endswith("Calculator")
            }
            return (new - before) or None

        pids = await async_wait_for(launched, timeout=30, what="the session's calculator")
        await page.click(f'[data-session="{sid}"] button.stop')
        end = console.wait_end(sid, timeout=60)
        assert end["state"] == "stopped"
        assert alive(pids) == set()
        assert bystander_proc.poll() is None  # the user's own window is left alone
        assert bystander.handle in {w.handle for w in await desktop.list_windows()}
    finally:
        hold.release.set()


async def test_two_sandbox_sessions_run_side_by_side_without_mixing(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    console, router = served
    a = router.add("side-a", calculator_for("12*7"))
    b = router.add("side-b", calculator_for("6*7"))
    first = console.start(f"{a}: 12*7 in the calculator", confirm="none")
    second = console.start(f"{b}: 6*7 in the calculator", confirm="none")
    one, two = console.wait_end(first["id"]), console.wait_end(second["id"])
    assert one["state"] == two["state"] == "done", (one, two)
    assert one["answer"] == "12*7 = 84" and two["answer"] == "6*7 = 42"
    assert one["display"] != two["display"]
    chips: dict[str, list[str]] = {}
    for card in (one, two):
        await page.goto(f"{console.origin}/s/{card['id']}")
        await page.wait_for_selector("#s-answer-box:not([hidden])")
        chips[card["id"]] = await page.locator("#chips li.chip").all_inner_texts()
    assert any("12*7" in c for c in chips[one["id"]])
    assert not any("6*7" in c.replace("12*7", "") for c in chips[one["id"]])
    assert any("6*7" in c for c in chips[two["id"]])
    assert not any("12*7" in c for c in chips[two["id"]])
    # what each model was sent: its own calculator, its own window, never the other's
    reads = {key: texts_of(router, key) for key in (a, b)}
    assert display(reads[a]) == "84" and display(reads[b]) == "42"
    assert not any('"42"' in t for t in reads[a]) and not any('"84"' in t for t in reads[b])
    windows = {
        key: {window_id_from(t) for t in reads[key] if "Stable Window ID" in t} for key in (a, b)
    }
    assert windows[a] and windows[b] and not windows[a] & windows[b]


async def test_two_sessions_on_one_display_type_and_click_at_once_without_mixing(
    served: tuple[ConsoleProcess, Router], desktop: DesktopFacade, apps: Apps, tmp_path: Path
) -> None:
    """Two sessions on this desktop, each bound to its own entry dialog, type a long text and
    click their dialog's OK at a point, both at the same moment (the model's replies are held
    until both ask). Each dialog writes what its entry holds to its own file when OK is
    clicked: each must hold its own text, whole and unmixed."""
    console, router = served
    texts = {"ta": "alpha bravo charlie " * 6, "tb": "XRAY YANKEE ZULU 0123 " * 6}
    dialogs: dict[str, tuple[WindowInfo, subprocess.Popen[bytes], Path, tuple[int, int]]] = {}
    for name in texts:
        out = tmp_path / f"{name}.txt"
        window = await apps.spawn(
            [
                "sh",
                "-c",
                f'exec zenity --entry --title="Typist {name}" --text=Line: > "$0"',
                str(out),
            ],
            match=lambda w, n=name: w.title == f"Typist {n}",  # type: ignore[misc]
        )
        snap = await desktop.snapshot(window)
        ok = next(n for n in snap.nodes() if n.role == "push-button" and n.name == "OK")
        assert ok.bounds is not None
        cx, cy = ok.bounds.center
        point = (cx - window.geometry.x, cy - window.geometry.y)
        dialogs[name] = (window, apps.procs[-1], out, point)
    a, b = (dialogs[n][0].geometry for n in texts)
    assert a.intersects(b)  # one over the other: a click in the wrong turn hits the other
    together = threading.Barrier(2, timeout=120)

    def typist(name: str) -> Brain:
        point = dialogs[name][3]

        def brain(view: View) -> Decision:
            if view.turns == 0:
                return Decision("", [("read_screen_ax", {})])
            if view.turns == 1:
                together.wait()
                return Decision("", [("perform", {"action": "type", "text": texts[name]})])
            if view.turns == 2:
                together.wait()
                return Decision(
                    "", [("perform", {"action": "click", "x": point[0], "y": point[1]})]
                )
            return Decision("typed and clicked")

        return brain

    cards = {}
    for name, (window, *_rest) in dialogs.items():
        key = router.add(f"typist-{name}", typist(name))
        cards[name] = console.start(
            f"{key}: type the line", target="desktop", window=window.stable_id, confirm="none"
        )

    def transcripts() -> str:
        return "\n".join(
            f"--- {name}: {step}"
            for name, card in cards.items()
            for step in steps_of(console, card)
        )

    procs = {name: dialogs[name][1] for name in dialogs}
    try:
        seen = await asyncio.to_thread(clicked_or_ended, console, cards, procs, together)
    except WaitTimeout as exc:
        together.abort()
        raise AssertionError(f"{exc}:\n{transcripts()}") from None
    for name, (_window, proc, out, _point) in dialogs.items():
        assert proc.poll() == 0, f"{name}'s OK was not clicked ({seen[name]}):\n{transcripts()}"
        assert out.read_text().rstrip("\n") == texts[name], (name, transcripts())
    for card in cards.values():
        assert console.wait_end(card["id"])["state"] == "done", transcripts()


def clicked_or_ended(
    console: ConsoleProcess,
    cards: dict[str, dict[str, Any]],
    procs: dict[str, subprocess.Popen[bytes]],
    together: threading.Barrier,
    timeout: float = 120,
) -> dict[str, str]:
    """Wait until each dialog exited (its OK was clicked) or its session ended; what was seen
    for each ("exited" or the session's state). A session that ended with its dialog open
    breaks the barrier at once (the other brain is not left waiting for it), and its dialog
    is given CLOSE_GRACE_S to exit (the click that closes it is reported before the end)."""
    seen: dict[str, str] = {}

    def settled() -> bool:
        for name, proc in procs.items():
            if name in seen:
                continue
            if proc.poll() is not None:
                seen[name] = f"exited {proc.returncode}"
                continue
            state = str(console.card(cards[name]["id"])["state"])
            if state in ("done", "needs_attention", "stopped"):
                together.abort()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(CLOSE_GRACE_S)
                seen[name] = f"its session ended {state}" + (
                    "" if proc.poll() is None else f", then it exited {proc.returncode}"
                )
        return len(seen) == len(procs)

    wait_for(settled, timeout=timeout, what="each dialog to exit or its session to end")
    return seen


#: How long a dialog may take to exit after the session that clicked its OK ended.
CLOSE_GRACE_S = 5.0


def steps_of(console: ConsoleProcess, card: dict[str, Any]) -> list[str]:
    """A session's steps as its run recorded them: each tool call and result, in order."""
    run_id = console.card(card["id"]).get("run_id")
    if not run_id:
        return ["(no run yet)"]
    lines = []
    for e in console.run_events(run_id):
        data = e.get("data", {})
        if e["event"] == "tool.call":
            lines.append(f"call {data.get('tool')} {json.dumps(data.get('args'))[:200]}")
        elif e["event"] == "tool.result":
            lines.append(f"result ok={data.get('ok')} {str(data.get('text'))[:400]}")
        elif e["event"] in ("policy.decided", "run.finished"):
            lines.append(f"{e['event']} {json.dumps(data)[:200]}")
    return lines


async def test_a_window_opened_by_one_session_takes_no_keys_another_is_typing(
    served: tuple[ConsoleProcess, Router], apps: Apps, tmp_path: Path
) -> None:
    """One session types a long line into its dialog while another session on the same
    display opens an app, at the same moment: the new window takes the focus when it maps,
    so it must not map in the middle of the typing (the launch takes its turn). The dialog's
    file must hold the whole line."""
    console, router = served
    out = tmp_path / "long.txt"
    window = await apps.spawn(
        ["sh", "-c", 'exec zenity --entry --title="Typist long" --text=Line: > "$0"', str(out)],
        match=lambda w: w.title == "Typist long",
    )
    proc = apps.procs[-1]
    line = "the quick brown fox jumps over the lazy dog " * 80
    together = threading.Barrier(2, timeout=120)

    def typist(view: View) -> Decision:
        if view.turns == 0:
            together.wait()
            return Decision("", [("perform", {"action": "type", "text": line})])
        if view.turns == 1:
            return Decision("", [("perform", {"action": "shortcut", "shortcut": "enter"})])
        return Decision("typed")

    def opener(view: View) -> Decision:
        if view.turns == 0:
            together.wait()
            return Decision("", [("open_app", {"bundleId": "Calculator"})])
        return Decision("opened")

    typing = router.add("typist-long", typist)
    opening = router.add("opener-now", opener)
    first = console.start(
        f"{typing}: type", target="desktop", window=window.stable_id, confirm="none"
    )
    second = console.start(f"{opening}: open", target="desktop", confirm="none")
    assert await exited(proc, 120) == 0, texts_of(router, typing)
    assert out.read_text().rstrip("\n") == line, texts_of(router, typing)
    for card in (first, second):
        await asyncio.to_thread(console.wait_end, card["id"])
    for w in await apps.desktop.list_windows():
        if w.app.name == "Calculator":
            await apps.adopt(w)


async def test_cards_show_live_thumbnails_and_the_session_view_a_live_preview(
    served: tuple[ConsoleProcess, Router], page: Page
) -> None:
    console, router = served
    sid, hold = await open_and_hold(page, router, "watch-me", "sandbox")
    try:
        console.wait_card(sid, lambda c: c["title"] == "Calculator", "the card to name the window")
        thumb = f'canvas[data-thumb="{sid}"][data-seq]'
        await page.wait_for_selector(thumb, timeout=30000)
        assert "Calculator" in await page.locator(f'[data-session="{sid}"] .meta').inner_text()
        await open_session_page(page, console, sid)
        await page.wait_for_selector("#preview[data-seq]", timeout=30000)
        size = await page.evaluate(
            "[document.getElementById('preview').width, document.getElementById('preview').height]"
        )
        assert 200 < size[0] <= 1280 and 200 < size[1] <= 800, size  # the window, not the screen
        light = await page.evaluate(
            """() => { const c = document.getElementById('preview');
                       const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                       let sum = 0; for (let i = 0; i < d.length; i += 4) sum += d[i];
                       return sum / (d.length / 4); }"""
        )
        assert light > 60  # the calculator's pixels, not an empty canvas
        frames = await page.evaluate(
            "window.deskpilotFrames.log.filter(f => f.k !== 'thumb').length"
        )
        assert frames >= 1
    finally:
        hold.release.set()
    console.wait_end(sid)


async def test_text_from_the_screen_shows_as_text(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, router = served
    title = '<img src=x onerror="alert(1)"><b>Bold</b> & <script>alert(2)</script>'
    window, _ = await send_dialog(apps, title)
    key = router.add(
        "html-in-titles",
        lambda v: (
            Decision("Listing.", [("list_windows", {})])
            if v.turns == 0
            else Decision(f"Seen: {title}")
        ),
    )
    sid = await start_from_form(
        page, f"{key}: list the windows <i>now</i>", target="desktop", window=window.stable_id
    )
    console.wait_card(sid, lambda c: c["title"] == title, "the card to show the HTML title", 60)
    card = page.locator(f'[data-session="{sid}"]')
    await page.wait_for_function(
        "([sid, t]) => document.querySelector(`[data-session='${sid}'] .meta`)"
        ".textContent.includes(t)",
        arg=[sid, title],
    )
    assert await card.locator("img, b, script, i").count() == 0
    assert "<i>now</i>" in await card.locator(".goal").inner_text()
    console.wait_end(sid)
    await open_session_page(page, console, sid)
    await page.wait_for_selector("#s-answer-box:not([hidden])")
    assert title in await page.locator("#s-answer").inner_text()
    await page.locator("#chips li[data-event='tool.call']").first.click()
    shown = await page.locator("#chips li[data-event='tool.call'] .more").inner_text()
    assert title in shown
    assert (
        await page.locator("#view-session img, #view-session b, #view-session script").count() == 0
    )


async def test_an_mcp_client_shows_as_a_session_and_is_approved_from_the_page(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, _ = served
    window, proc = await send_dialog(apps, "Send over MCP")
    endpoint = types.SimpleNamespace(url=f"{console.origin}/mcp", token=console.token)
    async with http_session(endpoint) as mcp:  # type: ignore[arg-type]
        read = await mcp.call_tool("read_screen_ax", {"windowID": window.stable_id})
        send = find_id(mcp_text(read), "button", "Send")
        card = await page.wait_for_selector(".card:has(.meta:text-matches('MCP client'))")
        assert card is not None
        sid = await card.get_attribute("data-session")
        assert sid is not None
        assert "read_screen_ax" in str(console.card(sid)["status"])
        # this client cannot elicit: the console asks instead of refusing
        clicking = asyncio.create_task(mcp.call_tool("perform", {"elementID": send}))
        await page.wait_for_selector(f'[data-session="{sid}"] .badge:not([hidden])', timeout=60000)
        await open_session_page(page, console, sid)
        await page.wait_for_selector(".confirm")
        assert send in await page.locator(".confirm .args").inner_text()
        assert proc.poll() is None
        await page.click(".confirm button.approve")
        result = await asyncio.wait_for(clicking, 60)
        assert not result.is_error, mcp_text(result)
        assert await exited(proc) == 0  # Send was clicked
        tools = await page.locator("#chips li[data-event='tool.call'] .tool").all_inner_texts()
        assert tools == ["read_screen_ax", "perform"]
    console.wait_card(sid, lambda c: c["state"] == "done", "the MCP card to end")


async def test_an_mcp_card_shows_its_window_and_stop_ends_the_client_session(
    served: tuple[ConsoleProcess, Router], page: Page, apps: Apps
) -> None:
    console, _ = served
    window, proc = await send_dialog(apps, "Stop over MCP")
    endpoint = types.SimpleNamespace(url=f"{console.origin}/mcp", token=console.token)
    async with http_session(endpoint) as mcp:  # type: ignore[arg-type]
        read = await mcp.call_tool("read_screen_ax", {"windowID": window.stable_id})
        assert not read.is_error, mcp_text(read)
        # the card names the client's window and shows it live (its tracked target)
        card = await page.wait_for_selector(".card:has(.meta:text-matches('Stop over MCP'))")
        assert card is not None
        sid = await card.get_attribute("data-session")
        assert sid is not None
        await page.wait_for_selector(f'canvas[data-thumb="{sid}"][data-seq]', timeout=30000)
        opened = await mcp.call_tool("open_app", {"bundleId": "Calculator"})
        assert not opened.is_error and opened.structured_content, mcp_text(opened)
        assert opened.structured_content["launched"] is True
        calculator = int(opened.structured_content["window"]["pid"])
        apps.pids.add(calculator)
        # a long call, stopped from the card: it ends at once, later calls are refused, the
        # app the client started is ended (the dialog it only read is left alone)
        waiting = asyncio.create_task(mcp.call_tool("wait", {"seconds": 600}))
        await asyncio.to_thread(
            console.wait_card, sid, lambda c: c["status"] == "Waiting", "the card to show the wait"
        )
        await page.click(f'[data-session="{sid}"] button.stop')
        stopped = await asyncio.wait_for(waiting, 30)
        assert stopped.is_error and "stopped this deskpilot session" in mcp_text(stopped)
        end = console.wait_card(sid, lambda c: c["state"] == "stopped", "the card to stop")
        later = await mcp.call_tool("list_windows", {})
        assert later.is_error and "was not run" in mcp_text(later)
        assert proc.poll() is None  # the user's window is left alone
        await asyncio.to_thread(
            wait_for, lambda: _procfs.is_zombie(calculator), timeout=30, what="its app to end"
        )
    finished = [e for e in console.run_events(end["run_id"]) if e["event"] == "run.finished"]
    assert [e["data"]["outcome"] for e in finished] == ["stopped"]
    results = [e["data"] for e in console.run_events(end["run_id"]) if e["event"] == "tool.result"]
    assert [r["tool"] for r in results] == ["read_screen_ax", "open_app", "wait"]  # not the refused
    assert "cancelled" in results[-1]["summary"]
    assert await page.locator(f'[data-session="{sid}"] button.stop').is_hidden()


async def test_no_session_can_see_read_or_click_the_console_window(
    served: tuple[ConsoleProcess, Router], desktop_settings: Settings, desktop: DesktopFacade
) -> None:
    console, router = served
    env = dict(desktop_settings.environ)
    async with async_playwright() as p:
        headed = await p.chromium.launch(
            executable_path=CHROMIUM, headless=False, env=env, args=["--class=deskpilot-console"]
        )
        try:
            context = await headed.new_context()
            await context.request.post(f"{console.origin}/api/login", data={"token": console.token})
            tab = await context.new_page()
            await tab.goto(f"{console.origin}/")
            await tab.wait_for_selector("#conn.live")

            async def console_window() -> WindowInfo | None:
                found = [w for w in await desktop.list_windows() if "deskpilot console" in w.title]
                return found[0] if found else None

            shown = await async_wait_for(console_window, timeout=30, what="the console's window")
            assert "deskpilot-console" in shown.app.wm_class

            def brain(view: View) -> Decision:
                target = shown.stable_id
                if view.turns == 0:
                    return Decision("", [("list_windows", {})])
                if view.turns == 1:
                    return Decision("", [("read_screen_ax", {"windowID": target})])
                if view.turns == 2:
                    return Decision("", [("computer_use_screenshot", {"windowID": target})])
                if view.turns == 3:
                    step = {"action": "shortcut", "shortcut": "enter", "windowID": target}
                    return Decision("", [("perform", step)])
                return Decision("done trying")

            key = router.add("approve-yourself", brain)
            await desktop.activate(shown)  # the window a step without a target would show
            card = console.start(f"{key}: find the console and approve", target="desktop")
            end = console.wait_end(card["id"])
            sent = texts_of(router, key)
            assert len(sent) == 4, sent
            listing, read, shot, press = sent
            assert "[title hidden]" in listing and shown.stable_id in listing
            for refused in (read, shot, press):
                assert "blocked" in refused.lower(), refused
            assert not any("deskpilot console" in t for t in sent)  # its title never reached it
            events = console.run_events(end["run_id"])
            results = [e["data"] for e in events if e["event"] == "tool.result"]
            assert [r["ok"] for r in results] == [True, False, False, False]
            assert [r.get("refused") for r in results[1:]] == ["blocked"] * 3  # by the door
            assert {e["data"]["surface"] for e in events if e["event"] == "tool.call"} == {
                "console"
            }
            # each step's frame in the audit log (read from the database itself): the console
            # window is never captured, and blacked out wherever it shows
            frames = step_frames(desktop_settings, end["run_id"])
            assert len(frames) == 4, frames
            assert any(f.data.get("window") == shown.stable_id for f in frames), frames
            for frame in frames:
                img = frame_pixels(frame)
                if frame.data.get("window") == shown.stable_id:
                    assert frame.data["blocked"] and max(img.getextrema()) < 10
                else:
                    g, rect = shown.geometry, frame.images[0].screen_rect
                    assert rect is not None
                    if rect.intersects(g):
                        sx = img.width / rect.width
                        box = (
                            g.x - rect.x + 4,
                            g.y - rect.y + 4,
                            g.x + g.width - rect.x - 4,
                            g.y + g.height - rect.y - 4,
                        )
                        part = img.crop(tuple(max(0, int(v * sx)) for v in box))
                        assert max(part.getextrema()) < 10, frame.data
        finally:
            await headed.close()


async def test_clean_up_when_finished_closes_the_tabs_the_sessions_opened(
    served: tuple[ConsoleProcess, Router], page: Page, desktop_settings: Settings
) -> None:
    console, router = served
    url = (Path(__file__).parents[2] / "fixtures" / "form.html").resolve().as_uri()
    assert desktop_settings.sandbox_dir
    profile = Path(desktop_settings.sandbox_dir) / "home" / ".config" / "deskpilot-browser"

    def tabs() -> list[str]:
        try:
            port = (profile / "DevToolsActivePort").read_text().split()[0]
            listed = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=5).json()
        except (OSError, httpx.HTTPError):
            return []
        return [str(t["url"]) for t in listed if t.get("type") == "page"]

    seen: list[str] = []

    def brain(view: View) -> Decision:
        if view.turns == 0:
            return Decision("", [("open_urls", {"urls": [url]})])
        seen.extend(tabs())  # what the browser shows while the session still runs
        return Decision("Opened it.")

    key = router.add("open-a-tab-and-clean-up", brain)
    await page.check("#new-session input[name=cleanup]")
    try:
        wait_for(lambda: console.get("/api/config")["cleanup"], timeout=10, what="the setting")
        card = console.start(f"{key}: open the form", target="desktop")
        end = console.wait_end(card["id"])
        assert end["state"] == "done", end
        events = console.run_events(end["run_id"])
        opened = [e["data"] for e in events if e["event"] == "tool.result"]
        assert opened and opened[0]["ok"], opened
        assert url in seen  # the tab was there while the session ran
        wait_for(lambda: url not in tabs(), timeout=30, what="the session's tab to close")
    finally:
        console.post("/api/settings", {"cleanup": False})


async def test_the_audit_log_replays_a_run_with_its_screenshots_verifies_and_exports(
    served: tuple[ConsoleProcess, Router], page: Page, desktop_settings: Settings
) -> None:
    console, router = served

    def brain(view: View) -> Decision:
        if view.turns == 0:
            return Decision("", [("open_app", {"bundleId": "Calculator"})])
        if view.turns == 1:
            return Decision("", [("read_screen_ax", {})])
        if view.turns == 2:
            return Decision("", [("computer_use_screenshot", {})])
        return Decision("Here is the calculator.")

    key = router.add("audit-replay", brain)
    card = console.start(f"{key}: show me the calculator", confirm="none")
    end = console.wait_end(card["id"])
    assert end["state"] == "done", end
    await page.goto(f"{console.origin}/audit")
    await page.wait_for_selector("#verify.ok")
    assert "chain intact" in await page.locator("#verify").inner_text()
    await page.click(f"#runs a:text-is('{key}: show me the calculator')")
    await page.wait_for_selector("#r-steps .step.final")
    steps = await page.locator("#r-steps .step:not(.final) .tool").all_inner_texts()
    assert steps == [
        'open_app {"bundleId": "Calculator"}',
        "read_screen_ax {}",
        "computer_use_screenshot {}",
    ]
    # every step shows a picture: the screenshot it took, else the frame taken after it
    per_step = await page.eval_on_selector_all(
        "#r-steps .step:not(.final)",
        "steps => steps.map(s => s.querySelectorAll('img.shot').length)",
    )
    assert per_step == [1, 1, 1], per_step
    await page.wait_for_function(
        "() => [...document.querySelectorAll('img.shot')]"
        ".every(i => i.complete && i.naturalWidth > 100)"
    )
    # the frames, read from the audit database itself: the calculator's window, not a blank
    frames = step_frames(desktop_settings, end["run_id"])
    assert [f.data["tool"] for f in frames] == ["open_app", "read_screen_ax"]
    for frame in frames:
        assert frame.data["window"] and not frame.data["blocked"], frame.data
        lo, hi = frame_pixels(frame).getextrema()
        assert hi - lo > 100  # the calculator's buttons and labels, not one flat colour
    # the Markdown download carries its pictures: a zip of run.md and the images it links
    href = await page.locator("#r-export").get_attribute("href")
    export = await page.request.get(f"{console.origin}{href}")
    assert export.ok and "attachment" in export.headers["content-disposition"]
    assert export.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(await export.body())) as archive:
        names = set(archive.namelist())
        top = f"deskpilot-run-{end['run_id']}"
        text = archive.read(f"{top}/run.md").decode()
        assert f"{key}: show me the calculator" in text and "computer_use_screenshot" in text
        links = re.findall(r"!\[[^\]]*\]\((images/[^)]+)\)", text)
        assert len(links) == 3, text  # a picture per step: the screenshot, two frames
        for link in links:
            assert f"{top}/{link}" in names
            picture = PILImage.open(io.BytesIO(archive.read(f"{top}/{link}")))
            assert picture.width > 100 and picture.height > 100
    alone = await page.request.get(
        f"{console.origin}{await page.locator('#r-export-md').get_attribute('href')}"
    )
    assert alone.ok and f"{key}: show me the calculator" in await alone.text()


async def test_open_shows_the_console_in_its_own_shielded_window(
    desktop_settings: Settings, desktop: DesktopFacade, tmp_path: Path
) -> None:
    with (
        model_server() as (server, _),
        console_process(
            desktop_settings.environ, server.url, tmp_path / "serve.log", "--open", "--no-mcp"
        ) as console,
    ):

        async def shown() -> WindowInfo | None:
            for w in await desktop.list_windows():
                if "deskpilot-console" in w.app.wm_class and w.title.startswith(
                    "deskpilot console"
                ):
                    return w
            return None

        window = await async_wait_for(shown, timeout=60, what="the console's own window")
        assert "log in" not in window.title  # its one-time link logged it in
        assert console.port
    await async_wait_for(
        lambda: _gone(desktop, window.handle),
        timeout=30,
        what="the window to close with the server",
    )


def step_frames(settings: Settings, run_id: str) -> list[Event]:
    with AuditLog(settings.audit_db) as log:
        return [e for e in log.run_events(run_id) if e.kind == "tool.frame"]


def frame_pixels(frame: Event) -> PILImage.Image:
    (image,) = frame.images
    assert image.mime == "image/jpeg"
    return PILImage.open(io.BytesIO(image.data)).convert("L")


async def _gone(desktop: DesktopFacade, xid: int) -> bool:
    return xid not in {w.handle for w in await desktop.list_windows()}
