"""`deskpilot serve` refuses what a console must refuse, and asks nobody when nobody is there.

A real console process; every request made with httpx exactly as a browser or another site
would send it (Host, Origin, Sec-Fetch-Site, cookies, content types).
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.desktop.console_kit import ConsoleProcess, Router, console_process, model_server
from tests.e2e.wire import Decision, View

# each test talks to a `deskpilot serve` process
pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ConsoleProcess, Router]]:
    home = tmp_path_factory.mktemp("console-home")
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "DESKPILOT_HOME": str(home / "dp"),
        "DESKPILOT_COMPATIBLE_API_KEY": "test-key",
    }
    with (
        model_server() as (server, router),
        console_process(env, server.url, home / "serve.log", "--max-sessions", "2") as console,
    ):
        yield console, router


def anonymous(console: ConsoleProcess) -> httpx.Client:
    return httpx.Client(base_url=console.origin, timeout=30)


def test_the_first_line_is_a_one_time_login_link_swapped_for_a_cookie(
    served: tuple[ConsoleProcess, Router],
) -> None:
    console, _ = served
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/login\?token=[\w-]{40,}", console.login_url)
    with anonymous(console) as web:
        assert web.get("/api/sessions").status_code == 401
        first = web.get(console.login_url, headers={"sec-fetch-site": "none"})
        assert first.status_code == 303 and first.headers["location"] == "/"
        cookie = first.headers["set-cookie"]
        assert f"deskpilot_console_{console.port}=" in cookie
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert web.get("/api/sessions").status_code == 200  # the cookie now works
    with anonymous(console) as other:
        again = other.get(console.login_url)
        assert again.status_code == 401  # used once already
        assert other.get("/api/sessions").status_code == 401


def test_host_origin_fetch_metadata_and_content_type_are_checked(
    served: tuple[ConsoleProcess, Router],
) -> None:
    console, _ = served
    with anonymous(console) as web:
        r = web.post("/api/login", json={"token": console.token})
        assert r.status_code == 200
        ok = web.get("/api/sessions")
        assert ok.status_code == 200
        assert web.get("/api/sessions", headers={"host": "evil.test"}).status_code == 421
        rebound = web.get("/healthz", headers={"host": f"attacker.example:{console.port}"})
        assert rebound.status_code == 421
        body = {"goal": "x", "target": "sandbox"}
        foreign = web.post("/api/sessions", json=body, headers={"origin": "http://evil.test"})
        assert foreign.status_code == 403
        other_port = web.post("/api/sessions", json=body, headers={"origin": "http://127.0.0.1:1"})
        assert other_port.status_code == 403  # another local server is another site
        cross = web.get("/api/sessions", headers={"sec-fetch-site": "cross-site"})
        assert cross.status_code == 403
        same_site = web.get("/api/sessions", headers={"sec-fetch-site": "same-site"})
        assert same_site.status_code == 403
        form = web.post(
            "/api/sessions",
            content=b"goal=x",
            headers={"origin": console.origin, "content-type": "application/x-www-form-urlencoded"},
        )
        assert form.status_code == 415
        no_origin = web.post("/api/sessions", json=body)
        assert no_origin.status_code == 403  # a cookie POST without our Origin
        assert web.request("DELETE", "/api/sessions").status_code == 405
        assert console.card  # nothing was started by any of the refused requests
        assert web.get("/api/sessions").json() == []


def test_every_answer_carries_a_strict_policy(served: tuple[ConsoleProcess, Router]) -> None:
    console, _ = served
    with anonymous(console) as web:
        for path in ("/", "/login", "/api/sessions", "/static/console.css"):
            r = web.get(path)
            csp = r.headers["content-security-policy"]
            assert "default-src 'none'" in csp and "script-src 'self'" in csp, path
            assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
            assert r.headers["x-frame-options"] == "DENY"
            assert r.headers["x-content-type-options"] == "nosniff"
        assert web.get("/healthz").json() == {"ok": True}
        assert web.get("/static/console.js").status_code == 401  # the app needs a login


def test_bad_requests_are_refused_with_what_to_fix(served: tuple[ConsoleProcess, Router]) -> None:
    console, _ = served
    cases = [
        ({"target": "sandbox"}, "goal is missing"),
        ({"goal": "x", "target": "moon"}, "target must be"),
        ({"goal": "x", "confirm": "maybe"}, "confirm must be one of"),
        ({"goal": "x", "target": "sandbox", "window": "1/2"}, "only be chosen on this desktop"),
        ({"goal": "x", "max_steps": 0}, "max_steps"),
    ]
    for body, message in cases:
        r = console.post("/api/sessions", body)
        assert r.status_code == 400 and message in r.json()["error"], (body, r.text)
    missing = console.post("/api/sessions/nope/confirmations/call_1", {"approved": True})
    assert missing.status_code == 404
    assert console.get("/api/sessions") == []


def test_with_no_page_open_a_confirmation_is_declined_and_recorded(
    served: tuple[ConsoleProcess, Router],
) -> None:
    console, router = served
    key = router.add("nobody-is-watching", open_then_report)
    card = console.start(f"{key}: open the calculator", confirm="all")
    end = console.wait_end(card["id"])
    assert end["state"] == "done", end
    assert "no console page is open" in end["answer"]
    events = console.run_events(end["run_id"])
    answered = [e["data"] for e in events if e["event"] == "confirm.answered"]
    assert answered and answered[0]["approved"] is False
    result = next(e["data"] for e in events if e["event"] == "tool.result")
    assert result["ok"] is False and "no console page is open" in result["text"]
    assert not [e for e in events if e["event"] == "tool.result" and e["data"]["ok"]]


def open_then_report(view: View) -> Decision:
    if view.turns == 0:
        return Decision("", [("open_app", {"bundleId": "Calculator"})])
    return Decision(f"Result: {view.last_results[-1] if view.last_results else ''}")


def test_a_remote_address_needs_to_be_allowed(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path / "dp")}
    run = subprocess.run(
        [sys.executable, "-m", "deskpilot", "serve", "--host", "0.0.0.0", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2, run.stderr
    assert "refusing to listen on 0.0.0.0" in run.stderr and "--allow-remote" in run.stderr
    assert run.stdout == ""  # no link was printed: nothing listened


def test_no_more_sessions_than_allowed_run_at_once(served: tuple[ConsoleProcess, Router]) -> None:
    console, router = served
    release = threading.Event()

    def slow(view: View) -> Decision:
        release.wait(120)  # a model that takes its time
        return Decision("Done.")

    key = router.add("hold-a-place", slow)
    try:
        first = console.start(f"{key}: one")
        second = console.start(f"{key}: two")
        third = console.post("/api/sessions", {"goal": f"{key}: three", "target": "sandbox"})
        assert third.status_code == 409
        assert "2 sessions are running already" in third.json()["error"]
        for card in (first, second):
            stopped = console.post(f"/api/sessions/{card['id']}/stop")
            assert stopped.status_code == 200 and stopped.json()["state"] == "stopped"
        assert console.start(f"{key}: four, once the others stopped")["state"] == "starting"
    finally:
        release.set()
