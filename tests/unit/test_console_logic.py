"""The console's pure parts: card states, the event history pages replay, confirmation cards,
the request checks, what a new session may ask for, and which window a preview follows."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deskpilot.config import load_settings
from deskpilot.desktop.base import Desktop
from deskpilot.errors import ActionDeclined, ConfigError
from deskpilot.events import Event, Image
from deskpilot.mcp.tokens import load_token
from deskpilot.policy import ApprovalRequest, Risk
from deskpilot.serve.approver import Answer, Confirmations, ConsoleApprover
from deskpilot.serve.auth import ConsoleAuth
from deskpilot.serve.chips import chip_data
from deskpilot.serve.frames import WindowOwners
from deskpilot.serve.guard import Guard
from deskpilot.serve.hub import Hub
from deskpilot.serve.sessions import NewSession
from deskpilot.serve.shared_input import INPUT_METHODS, shared
from deskpilot.serve.status import end_state, status_line


def test_outcomes_map_to_the_three_endings() -> None:
    assert end_state("done") == "done"
    assert end_state("stopped") == "stopped"
    assert end_state("needs_attention") == "needs_attention"
    assert end_state("something new") == "needs_attention"
    assert status_line("tool.call", {"tool": "read_screen_ax"}) == "Reading AX"
    assert status_line("tool.call", {"tool": "perform"}) == "Resolving target"
    result = status_line("tool.result", {"tool": "perform", "ok": False, "summary": "gone"})
    assert result == "Last: perform (failed) → gone"


def test_a_new_page_gets_every_session_and_its_chips_a_reconnect_only_what_it_missed() -> None:
    hub = Hub(history=100)
    hub.publish("a", "session", {"state": "running"})
    first = hub.publish("a", "event", {"event": "tool.call"})
    hub.publish("b", "session", {"state": "starting"})
    hub.publish("a", "session", {"state": "done"})
    fresh = hub.replay(None)
    assert [(i.session, i.kind) for i in fresh] == [
        ("a", "event"),
        ("b", "session"),
        ("a", "session"),
    ]
    assert fresh[-1].data == {"state": "done"}  # only a session's latest state
    assert [i.seq for i in hub.replay(first.seq)] == [first.seq + 1, first.seq + 2]
    small = Hub(history=2)
    for n in range(5):
        small.publish("a", "session", {"n": n})
    assert [i.data["n"] for i in small.replay(1)] == [4]  # too old: a full replay instead


def test_an_item_says_when_it_happened_and_when_it_was_published() -> None:
    hub = Hub(history=10)
    happened = time.time() - 0.25  # an event recorded a quarter second before it was published
    item = hub.publish("a", "event", {"event": "tool.call"}, ts=happened)
    payload = json.loads(item.sse().decode().split("data: ", 1)[1])
    assert payload["ts"] == happened
    assert payload["at"] - happened >= 0.25  # the page can tell the server's part of a delay
    assert payload["at"] <= time.time()


def test_chips_carry_data_not_images_and_cut_long_texts() -> None:
    event = Event(
        "tool.result",
        {"tool": "read_screen_ax", "text": "x" * 10000, "args": {"q": "<b>"}},
        run_id="r",
        images=(Image(b"png"),),
    )
    chip = chip_data(event)
    assert len(chip["data"]["text"]) == 4000 and chip["data"]["images"] == 1
    assert chip["data"]["args_json"] == '{"q": "<b>"}'


def request(call_id: str = "call_1") -> ApprovalRequest:
    return ApprovalRequest("perform", {"elementID": "e1"}, Risk.CONSEQUENTIAL, "Send", call_id)


def test_the_first_answer_wins_and_nobody_watching_declines() -> None:
    async def go() -> None:
        changed: list[str] = []
        cards = Confirmations(changed.append)
        approver = ConsoleApprover("s1", cards, lambda: True, timeout=30)
        asking = asyncio.create_task(approver.approve(request()))
        while not cards.of("s1"):
            await asyncio.sleep(0)
        assert cards.answer("s1", "call_1", True) == Answer.ANSWERED
        assert await asking is True
        assert cards.answer("s1", "call_1", False) == Answer.LATE
        assert cards.answer("s1", "call_9", True) == Answer.UNKNOWN
        denied = asyncio.create_task(approver.approve(request("call_2")))
        while not cards.of("s1"):
            await asyncio.sleep(0)
        cards.answer("s1", "call_2", False)
        with pytest.raises(ActionDeclined, match="refused perform"):
            await denied
        nobody = ConsoleApprover("s1", cards, lambda: False)
        with pytest.raises(ActionDeclined, match="no console page is open"):
            await nobody.approve(request("call_3"))
        late = ConsoleApprover("s1", cards, lambda: True, timeout=0.05)
        waiting = asyncio.create_task(late.approve(request("call_4")))
        while not cards.of("s1"):
            await asyncio.sleep(0)
        cards.seen("s1", "call_4")  # its time to answer counts from the banner on a page
        with pytest.raises(ActionDeclined, match=r"within 0\.05 seconds"):
            await waiting
        assert cards.of("s1") == [] and changed

    asyncio.run(go())


def test_the_guard_checks_host_origin_fetch_metadata_and_login(tmp_path: Path) -> None:
    auth = ConsoleAuth(load_token(tmp_path / "token"), 8765)
    guard = Guard(lambda *a: None, auth, {"127.0.0.1:8765"})  # type: ignore[arg-type]
    secret = auth.redeem(auth.one_time_token())
    assert secret is not None
    cookie = f"{auth.cookie_name}={secret}"

    def check(method: str = "GET", path: str = "/api/sessions", **headers: str) -> int | None:
        base = {"host": "127.0.0.1:8765", "cookie": cookie}
        base.update({k.replace("_", "-"): v for k, v in headers.items()})
        found = guard.check({"method": method, "path": path}, base)
        return None if found is None else found[0]

    assert check() is None
    assert check(host="localhost:8765") == 421
    assert check(origin="http://evil.test") == 403
    assert check(sec_fetch_site="cross-site") == 403
    assert check(cookie="") == 401
    assert check("POST", content_type="text/plain", origin="http://127.0.0.1:8765") == 415
    assert check("POST", content_type="application/json") == 403  # no Origin with a cookie
    assert check("POST", content_type="application/json", origin="http://127.0.0.1:8765") is None
    assert check("DELETE") == 405
    assert check(path="/mcp", cookie="") is None  # the MCP app has its own bearer check
    assert auth.redeem("wrong") is None


def test_what_a_new_session_may_ask_for(tmp_path: Path) -> None:
    settings = load_settings(env={"HOME": str(tmp_path), "DESKPILOT_MODEL": "openai:gpt-5"})
    ask = NewSession.parse({"goal": " do it ", "target": "desktop", "window": "1/2"}, settings)
    assert (ask.goal, ask.model, ask.target, ask.window) == (
        "do it",
        "openai:gpt-5",
        "desktop",
        "1/2",
    )
    for body in ([], {"goal": ""}, {"goal": "x", "confirm_timeout": 0}, {"goal": "x" * 5000}):
        with pytest.raises(ConfigError):
            NewSession.parse(body, settings)


def test_sessions_sharing_a_display_take_turns_for_input_only() -> None:
    class Desk:
        def __init__(self) -> None:
            self.log: list[str] = []

        async def type_text(self, window: object, text: str) -> str:
            self.log.append(f"start {text}")
            await asyncio.sleep(0.01)
            self.log.append(f"end {text}")
            return text

        async def snapshot(self, window: object) -> str:
            self.log.append("read")
            return "tree"

    async def go() -> list[str]:
        desk = Desk()
        lock = asyncio.Lock()
        one, two = shared(desk, lock), shared(desk, lock)  # type: ignore[arg-type]
        typing = asyncio.gather(one.type_text(None, "a"), two.type_text(None, "b"))
        await asyncio.sleep(0.001)
        assert await two.snapshot(None) == "tree"  # reads do not wait for the lock
        assert await typing == ["a", "b"]
        return desk.log

    log = asyncio.run(go())
    assert log.index("end a") < log.index("start b")  # one typist at a time
    assert log.index("read") < log.index("end a")


#: Desktop methods that send no keyboard or pointer input and move no focus (reads).
NOT_INPUT = {
    "active_window",
    "apps",
    "capture",
    "cell_at",
    "close",
    "covering",
    "element_at",
    "element_point",
    "focused_element",
    "inspect",
    "list_windows",
    "pointer_position",
    "read_cells",
    "read_text",
    "screen_size",
    "settle",
    "snapshot",
    "text_caret",
    "window_at",
}


def test_every_desktop_method_is_classed_as_input_or_not() -> None:
    """A method added to the Desktop protocol must be put on one side: input that takes turns
    (point_at and drag_in were once missed: two sessions' clicks interleaved)."""
    methods = {
        name
        for name, member in vars(Desktop).items()
        if inspect.iscoroutinefunction(member) and not name.startswith("_")
    }
    assert methods >= INPUT_METHODS
    assert not INPUT_METHODS & NOT_INPUT
    assert methods - INPUT_METHODS - NOT_INPUT == set(), "class these as input or not"


def test_a_preview_stops_following_a_window_id_once_its_process_has_ended() -> None:
    """X gives a closed window's id to the next app: a kept session must not show that app."""
    owners = WindowOwners()
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    stable = f"{proc.pid}/4194313"
    assert owners.handle(stable) == 4194313  # its process runs: the id is its window's
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(30)
    assert owners.handle(stable) is None  # ended: the id may now be another app's window
    assert owners.handle("0/77") == 77  # no pid known: trusted
    dead = proc.pid  # a pid never seen alive here (another namespace's): trusted too
    assert WindowOwners().handle(f"{dead}/88") == 88
    assert owners.handle("not-an-x-window") is None
