"""``deskpilot run`` / ``chat`` end to end in-process: scripted models, FakeDesktop at the
desktop edge, exit codes by outcome, chips or JSON lines, every event in the audit log."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from deskpilot.audit import AuditLog
from deskpilot.cli import main
from deskpilot.config import load_settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.fake import FakeDesktop

GOAL = "In the calculator, work out 12*7 and tell me the result"


class Desktops:
    """The FakeDesktops the CLI opened; ``interrupt`` makes the next one press Ctrl-C."""

    def __init__(self) -> None:
        self.made: list[FakeDesktop] = []
        self.interrupt = False


class InterruptingDesktop(FakeDesktop):
    """Sends this process a SIGINT when the windows are listed (a user pressing Ctrl-C)."""

    async def list_windows(self) -> list[WindowInfo]:
        os.kill(os.getpid(), signal.SIGINT)
        return await super().list_windows()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "DESKPILOT_HOME": str(tmp_path / "home"),
        "DESKPILOT_MODEL": "",
        "ANTHROPIC_API_KEY": "",
        "OPENAI_API_KEY": "",
    }


@pytest.fixture
def desktops(monkeypatch: pytest.MonkeyPatch) -> Desktops:
    made = Desktops()

    async def open_desktop(settings: Any) -> FakeDesktop:
        desktop = InterruptingDesktop() if made.interrupt else FakeDesktop()
        made.made.append(desktop)
        return desktop

    monkeypatch.setattr("deskpilot.runtime.open_desktop", open_desktop)
    return made


def replies(tmp_path: Path, items: list[Any]) -> str:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"format": "neutral", "replies": items}))
    return f"scripted:{path}"


def invoke(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def audit_runs(env: dict[str, str]) -> list[Any]:
    with AuditLog(load_settings(env=env).audit_db) as log:
        return [log.run_events(r.id) for r in log.list_runs()]


def test_run_done_exits_0_with_the_answer_on_stdout(
    env: dict[str, str], desktops: Desktops
) -> None:
    result = invoke(env, "run", "--model", "scripted:calculator", GOAL)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().startswith("12 × 7 = 84.")
    assert "model replay, not a live model: recorded anthropic:claude-sonnet-4-5" in result.stderr
    (desktop,) = desktops.made
    assert desktop.display_text(desktop.windows[0].info.handle) == "84"
    (events,) = audit_runs(env)
    kinds = [e.kind for e in events]
    assert kinds[0] == "run.started" and kinds[-1] == "run.finished"
    assert kinds.count("tool.call") == 4 == kinds.count("tool.result")
    assert events[-1].data["outcome"] == "done" and "84" in events[-1].data["answer"]


def test_events_jsonl(env: dict[str, str], desktops: Desktops) -> None:
    result = invoke(env, "run", "--model", "scripted:calculator", "--events", "jsonl", GOAL)
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    # what the goal allows (here: nothing consequential) is recorded right after the start
    assert [r["kind"] for r in lines][:4] == [
        "run.started",
        "policy.grants",
        "model.text",
        "tool.call",
    ]
    assert lines[-1]["kind"] == "run.finished" and "84" in lines[-1]["data"]["answer"]


def test_budget_exits_3(env: dict[str, str], desktops: Desktops, tmp_path: Path) -> None:
    model = replies(tmp_path, [{"tool_calls": [{"name": "list_windows"}]}] * 2 + ["Partial."])
    result = invoke(env, "run", "--model", model, "--max-steps", "2", "do it")
    assert result.exit_code == 3
    assert result.stdout == "⚠ Step budget reached (2 steps).\n\nPartial.\n"


def test_timeout_exits_3(env: dict[str, str], desktops: Desktops, tmp_path: Path) -> None:
    model = replies(
        tmp_path,
        [{"tool_calls": [{"name": "wait", "args": {"seconds": 600}}]}, "Nothing done yet."],
    )
    result = invoke(env, "run", "--model", model, "--timeout", "1", "do it")
    assert result.exit_code == 3
    assert result.stdout.startswith("⏱ Timed out after 1 s")
    assert result.stdout.endswith("Nothing done yet.\n")


def test_ctrl_c_stops_with_exit_4(env: dict[str, str], desktops: Desktops, tmp_path: Path) -> None:
    desktops.interrupt = True
    model = replies(
        tmp_path,
        [
            {"tool_calls": [{"name": "list_windows"}]},
            {"tool_calls": [{"name": "wait", "args": {"seconds": 3600}}]},
            "never",
        ],
    )
    result = invoke(env, "run", "--model", model, "do it")
    assert result.exit_code == 4
    assert result.stdout.startswith("Stopped by the user after")
    assert "Do not retry this task automatically." in result.stdout
    assert "deskpilot: stopping…" in result.stderr
    (events,) = audit_runs(env)
    assert events[-1].data["outcome"] == "stopped"


def test_no_model_exits_2_and_says_how(env: dict[str, str], desktops: Desktops) -> None:
    result = invoke(env, "run", GOAL)
    assert result.exit_code == 2
    assert "No model is configured" in result.stderr and "--model scripted:FILE" in result.stderr
    assert desktops.made == []
    result = invoke(env, "run", "--model", "anthropic:claude-sonnet-4-5", GOAL)
    assert result.exit_code == 2 and "export ANTHROPIC_API_KEY=..." in result.stderr


def test_native_and_hybrid_together_are_refused(env: dict[str, str], desktops: Desktops) -> None:
    result = invoke(env, "run", "--native", "--hybrid", "--model", "scripted:calculator", GOAL)
    assert result.exit_code == 2 and "exclude each other" in result.stderr
    assert desktops.made == []


def test_chat_session_from_stdin(env: dict[str, str], desktops: Desktops, tmp_path: Path) -> None:
    model = replies(
        tmp_path,
        [
            {"tool_calls": [{"name": "run_command", "args": {"command": "touch made-by-chat"}}]},
            "I could not run it: it was declined.",
        ],
    )
    saved = tmp_path / "chat.json"
    result = CliRunner().invoke(
        main,
        ["chat", "--model", model, "--save", str(saved)],
        input="make a file\n/exit\n",
        env=env,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "I could not run it: it was declined." in result.stdout
    assert "declined: no terminal to ask" in result.stderr
    assert not (tmp_path / "made-by-chat").exists()
    assert json.loads(saved.read_text())["deskpilot_conversation"]["messages"][0]["text"] == (
        "make a file"
    )
