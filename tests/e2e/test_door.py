"""One door, every surface: each surface's calls are in the audit log, and its refusals — a
blocked app, a declined approval — come from the door (``runtime.open_session`` +
``ToolSet.call``).

Surfaces, each through its real entry point on a FakeDesktop (an editor with a Send button and
a KeePassXC window): ``deskpilot tool`` (no terminal, and on a pseudo-terminal), the Python API
(a session, and ``computer_use_task`` in one), ``deskpilot run`` (the agent loop and
``computer_use_task``), ``deskpilot run --native`` (the native executor), ``deskpilot chat``,
the MCP server. The log is read back from its SQLite file
(a channel the surfaces do not use to answer). The demo's sessions (its run and its reads
afterwards) are checked on a real sandbox in tests/desktop/test_door_demo.py, the console's
(``deskpilot serve``) in tests/desktop/console/test_console.py (a denied Send, a blocked
window), the native executor on real apps in tests/desktop/test_native_policy.py and
tests/desktop/test_effects_real.py.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp.client.client import Client

from deskpilot.agent.providers import get_provider
from deskpilot.agent.task import computer_use_task
from deskpilot.audit import AuditLog
from deskpilot.cli import main
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import Event, discard
from deskpilot.mcp import DeskpilotMCP
from deskpilot.runtime import open_session
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from tests.desktop.helpers import mcp_text
from tests.e2e.conftest import KEYS

EDITOR, VAULT = FAKE_APPS[1], FAKE_APPS[2]


def two_windows() -> FakeDesktop:
    """An editor ("Mail to Bob", with a Send button) and a KeePassXC vault on top of it."""
    desktop = FakeDesktop()
    desktop.add_window(EDITOR, "Mail to Bob")
    desktop.add_window(VAULT, "Passwords.kdbx - KeePassXC")
    desktop.active_xid = desktop.windows[0].info.handle  # the editor is frontmost
    return desktop


EDITOR_ID = "4000/4194305"  # the editor's stable window ID (FakeDesktop counts from fixed values)
VAULT_ID = "4001/4194306"


@functools.cache
def send_button_id() -> str:
    """The Send button's element ID (deterministic: derived from its bus name and path)."""

    async def read() -> str:
        settings = load_settings(env={"HOME": "/nonexistent", "DESKPILOT_HOME": "/nonexistent"})
        ctx = ToolContext(two_windows(), settings, audit=discard)  # in memory: nothing written
        text = (
            await computer_use_tools().call("read_screen_ax", {"windowID": EDITOR_ID}, ctx)
        ).text
        found = re.search(r'button "Send" @(\S+)', text)
        assert found, text
        return found[1]

    return asyncio.run(read())


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "DESKPILOT_HOME": str(tmp_path / "home"),
        "DESKPILOT_MODEL": "",
        **KEYS,
    }


@pytest.fixture
def settings(env: dict[str, str]) -> Settings:
    return load_settings(env=env)


@pytest.fixture
def desktops(monkeypatch: pytest.MonkeyPatch) -> list[FakeDesktop]:
    """Every desktop a surface opens is a fresh :func:`two_windows`."""
    made: list[FakeDesktop] = []

    async def open_desktop(settings: Any) -> FakeDesktop:
        made.append(two_windows())
        return made[-1]

    monkeypatch.setattr("deskpilot.runtime.open_desktop", open_desktop)
    return made


def logged(settings: Settings) -> list[Event]:
    """Every event in the audit log, all runs, oldest first."""
    with AuditLog(settings.audit_db) as log:
        runs = list(reversed(log.list_runs()))
        return [e for r in runs for e in log.run_events(r.id, images=False)]


def results(events: list[Event], tool: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.kind == "tool.result" and e.data["tool"] == tool]


def surfaces(events: list[Event]) -> set[str]:
    return {e.data["surface"] for e in events if e.kind == "tool.call"}


def blocked(data: dict[str, Any]) -> bool:
    return not data["ok"] and "KeePassXC is on the blocked apps list" in data["text"]


def declined(data: dict[str, Any]) -> bool:
    return (
        not data["ok"]
        and data["text"].startswith("Declined:")
        and "Nothing was done" in (data["text"])
    )


def clicked_send(desktop: FakeDesktop) -> bool:
    return "click Send" in desktop.log


def replies(tmp_path: Path, items: list[Any], fmt: str = "neutral", **extra: Any) -> str:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"format": fmt, "replies": items, **extra}))
    return f"scripted:{path}"


def read_vault_then_send() -> list[Any]:
    """A scripted model's replies: read the vault, read the editor, press Send, give up."""
    return [
        {"tool_calls": [{"name": "read_screen_ax", "args": {"windowID": VAULT_ID}}]},
        {"tool_calls": [{"name": "read_screen_ax", "args": {"windowID": EDITOR_ID}}]},
        {"tool_calls": [{"name": "perform", "args": {"elementID": send_button_id()}}]},
        "Could not send.",
    ]


# -- deskpilot tool ---------------------------------------------------------------------------


def test_cli_tool_calls_are_logged_and_refused_by_the_door(
    env: dict[str, str], settings: Settings, desktops: list[FakeDesktop]
) -> None:
    def tool(*args: str) -> Any:
        return CliRunner().invoke(main, ["tool", *args], env=env, catch_exceptions=False)

    assert tool("list_windows").exit_code == 0
    refused = tool("read_screen_ax", json.dumps({"windowID": VAULT_ID}))
    assert refused.exit_code == 1 and "KeePassXC is on the blocked apps list" in refused.stdout
    assert tool("read_screen_ax", json.dumps({"windowID": EDITOR_ID})).exit_code == 0
    send = tool("perform", json.dumps({"elementID": send_button_id()}))
    # the configured mode (consequential) asks; with no terminal that is a no, and it says so
    assert send.exit_code == 1
    assert "there is no terminal to ask" in send.stdout and "Nothing was done" in send.stdout
    assert "→ declined: no terminal to ask" in send.stderr
    assert not any(clicked_send(d) for d in desktops)
    events = logged(settings)
    assert surfaces(events) == {"cli"}
    assert [e.data["tool"] for e in events if e.kind == "tool.call"] == [
        "list_windows",
        "read_screen_ax",
        "read_screen_ax",
        "perform",
    ]
    assert blocked(results(events, "read_screen_ax")[0])
    assert declined(results(events, "perform")[0])
    # each invocation is a run of its own, named after the command
    with AuditLog(settings.audit_db) as log:
        goals = [r.goal for r in reversed(log.list_runs())]
    assert goals == [
        "deskpilot tool list_windows",
        "deskpilot tool read_screen_ax",
        "deskpilot tool read_screen_ax",
        "deskpilot tool perform",
    ]
    # --confirm none is the explicit way to allow it (the session remembers the element ID)
    allowed = tool("perform", "--confirm", "none", json.dumps({"elementID": send_button_id()}))
    assert allowed.exit_code == 0, allowed.output
    assert clicked_send(desktops[-1])


PTY_SCRIPT = """
import sys
import time
from deskpilot import runtime
from deskpilot.desktop.fake import FakeDesktop
from tests.e2e.test_door import two_windows

async def open_desktop(settings):
    return two_windows()

runtime.open_desktop = open_desktop
from deskpilot.cli import main
main(["tool", *sys.argv[1:]])
"""


def on_a_terminal(env: dict[str, str], answer: bytes, *args: str) -> tuple[int, str]:
    """Run ``deskpilot tool ARGS`` with stdin and stderr on a pseudo-terminal; answer once."""
    leader, follower = pty.openpty()
    paths = [str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")]
    full_env = {**os.environ, **env, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    proc = subprocess.Popen(
        [sys.executable, "-c", PTY_SCRIPT, *args],
        stdin=follower,
        stderr=follower,
        stdout=subprocess.PIPE,
        env=full_env,
    )
    os.close(follower)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(leader, answer)
            answered = True
    else:
        proc.kill()
    out, _ = proc.communicate(timeout=60)
    os.close(leader)
    return proc.returncode, out.decode() + seen.decode(errors="replace")


@pytest.mark.process
def test_cli_tool_asks_on_a_terminal(env: dict[str, str], settings: Settings) -> None:
    steps = json.dumps({"steps": [{"elementID": send_button_id()}], "windowID": EDITOR_ID})
    # read first so the ID is known to the session, then act: both in one shell session
    code, _ = on_a_terminal(env, b"", "read_screen_ax", json.dumps({"windowID": EDITOR_ID}))
    assert code == 0
    code, text = on_a_terminal(env, b"n\n", "perform_sequence", steps)
    assert code == 1 and "Allow this action? [y/N]" in text and "→ declined" in text
    code, text = on_a_terminal(env, b"y\n", "perform_sequence", steps)
    assert code == 0 and "→ approved" in text and 'Clicked button "Send"' in text
    events = logged(settings)
    answered = [e.data["approved"] for e in events if e.kind == "confirm.answered"]
    assert answered == [False, True]


# -- the Python API ---------------------------------------------------------------------------


def test_python_sessions_log_everything_and_the_default_approver_refuses(
    settings: Settings,
) -> None:
    desktop = two_windows()
    tools = computer_use_tools()
    send_id = send_button_id()

    async def go() -> list[Any]:
        async with open_session(settings, surface="python", desktop=desktop) as ctx:
            return [
                await tools.call("read_screen_ax", {"windowID": VAULT_ID}, ctx),
                await tools.call("read_screen_ax", {"windowID": EDITOR_ID}, ctx),
                await tools.call("perform", {"elementID": send_id}, ctx),
            ]

    vault, _editor, send = asyncio.run(go())
    assert vault.is_error and "blocked apps list" in vault.text
    assert send.is_error and "nobody can be asked here" in send.text
    assert not clicked_send(desktop)
    events = logged(settings)
    assert surfaces(events) == {"python"}
    assert blocked(results(events, "read_screen_ax")[0])
    assert declined(results(events, "perform")[0])
    assert [e.data["by"] for e in events if e.kind == "confirm.answered"] == ["NoApprover"]
    assert events[0].kind == "run.started" and events[0].data["goal"] == "python session"
    assert events[-1].kind == "run.finished"


def test_computer_use_task_from_python_is_logged_and_refused_by_the_door(
    settings: Settings, tmp_path: Path
) -> None:
    desktop = two_windows()
    model = replies(tmp_path, read_vault_then_send())

    async def go() -> Any:
        async with (
            get_provider(model, settings) as provider,
            open_session(settings, surface="python", desktop=desktop) as ctx,
        ):
            return await computer_use_task("look at the mail", provider=provider, ctx=ctx)

    result = asyncio.run(go())
    assert result.answer == "Could not send."
    assert not clicked_send(desktop)
    events = logged(settings)
    assert surfaces(events) == {"python"}
    assert blocked(results(events, "read_screen_ax")[0])
    assert declined(results(events, "perform")[0])
    assert "nobody can be asked here" in results(events, "perform")[0]["text"]


# -- deskpilot run: the loop and computer_use_task ---------------------------------------------


def test_run_calls_are_logged_and_refused_by_the_door(
    env: dict[str, str], settings: Settings, desktops: list[FakeDesktop], tmp_path: Path
) -> None:
    model = replies(tmp_path, read_vault_then_send())
    result = CliRunner().invoke(
        main, ["run", "--model", model, "look at the mail"], env=env, catch_exceptions=False
    )
    assert result.exit_code == 0 and "Could not send." in result.stdout
    (desktop,) = desktops
    assert not clicked_send(desktop)
    events = logged(settings)
    assert surfaces(events) == {"run"}
    assert blocked(results(events, "read_screen_ax")[0])
    assert (
        declined(results(events, "perform")[0])
        and "no terminal to ask" in (results(events, "perform")[0]["text"])
    )
    run_ids = {e.run_id for e in events}
    assert len(run_ids) == 1  # the agent run; the session added no run of its own


# -- deskpilot run --native: the native executor ----------------------------------------------


def anthropic_click(n: int, x: int, y: int) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [
            {
                "type": "tool_use",
                "id": f"toolu_{n}",
                "name": "computer",
                "input": {"action": "left_click", "coordinate": [x, y]},
            }
        ],
    }


def test_native_calls_are_logged_and_refused_by_the_door(
    env: dict[str, str], settings: Settings, desktops: list[FakeDesktop], tmp_path: Path
) -> None:
    done = {
        "id": "msg_9",
        "type": "message",
        "role": "assistant",
        "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "Could not do it."}],
    }
    model = replies(
        tmp_path,
        [
            anthropic_click(1, 500, 300),  # on the vault window (on top of the editor)
            anthropic_click(2, 110, 110),  # the editor's Send button
            done,
        ],
        fmt="anthropic",
        model="claude-sonnet-4-5",
    )
    result = CliRunner().invoke(
        main, ["run", "--native", "--model", model, "click things"], env=env, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    (desktop,) = desktops
    assert not clicked_send(desktop)
    assert not any(line.startswith("pointer_click") for line in desktop.log)
    events = logged(settings)
    assert surfaces(events) == {"run"}
    clicks = results(events, "computer")
    assert blocked(clicks[0])
    assert declined(clicks[1]) and "no terminal to ask" in clicks[1]["text"]


# -- deskpilot chat ---------------------------------------------------------------------------


def test_chat_calls_are_logged_and_refused_by_the_door(
    env: dict[str, str], settings: Settings, desktops: list[FakeDesktop], tmp_path: Path
) -> None:
    model = replies(
        tmp_path,
        [
            {"tool_calls": [{"name": "computer_use_task", "args": {"goal": "look at the mail"}}]},
            # the subagent (same scripted model)
            {"tool_calls": [{"name": "read_screen_ax", "args": {"windowID": VAULT_ID}}]},
            {"tool_calls": [{"name": "read_screen_ax", "args": {"windowID": EDITOR_ID}}]},
            {"tool_calls": [{"name": "perform", "args": {"elementID": send_button_id()}}]},
            "Sending was declined.",
            # the parent again
            "It was not sent.",
        ],
    )
    result = CliRunner().invoke(
        main,
        ["chat", "--model", model],
        input="check the mail\n/exit\n",
        env=env,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "It was not sent." in result.stdout
    (desktop,) = desktops
    assert not clicked_send(desktop)
    events = logged(settings)
    assert surfaces(events) == {"chat"}
    assert blocked(results(events, "read_screen_ax")[0])
    assert declined(results(events, "perform")[0])
    assert results(events, "computer_use_task")[0]["ok"]


# -- the MCP server ---------------------------------------------------------------------------


def test_mcp_calls_are_logged_and_refused_by_the_door(settings: Settings) -> None:
    desktop = two_windows()
    send_id = send_button_id()

    async def go() -> tuple[Any, Any]:
        session = Session(name="mcp")
        async with open_session(settings, surface="mcp", desktop=desktop, session=session) as base:
            app = DeskpilotMCP(computer_use_tools(), base)
            async with Client(app.server, mode="legacy") as client:  # no elicitation
                vault = await client.call_tool("read_screen_ax", {"windowID": VAULT_ID})
                await client.call_tool("read_screen_ax", {"windowID": EDITOR_ID})
                send = await client.call_tool("perform", {"elementID": send_id})
        return vault, send

    vault, send = asyncio.run(go())
    assert vault.is_error and "blocked apps list" in mcp_text(vault)
    assert send.is_error and "this MCP client cannot ask the user" in mcp_text(send)
    assert not clicked_send(desktop)
    events = logged(settings)
    assert surfaces(events) == {"mcp"}
    assert blocked(results(events, "read_screen_ax")[0])
    assert declined(results(events, "perform")[0])
    assert events[0].kind == "run.started" and events[-1].kind == "run.finished"


# -- nothing opens a context another way --------------------------------------------------------


def test_only_the_door_builds_a_tool_context() -> None:
    """In src/, a ToolContext is made only by runtime.open_session; everything else derives."""
    src = Path(__file__).parents[2] / "src" / "deskpilot"
    makers = sorted(
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if re.search(r"\bToolContext\(", p.read_text(encoding="utf-8"))
    )
    assert makers == ["runtime.py"]
    replaced_audit = [
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if re.search(r"replace\([^)]*\baudit=", p.read_text(encoding="utf-8"))
    ]
    assert replaced_audit == []  # nothing sits between a call's events and the log
