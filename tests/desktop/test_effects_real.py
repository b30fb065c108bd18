"""Consequential by effect on real apps: the keys that fire a button ask, or are refused when
nobody can be asked — the two cases of issue #11.

* ``deskpilot run`` (``--confirm consequential``, no terminal) with an obedient scripted model
  that types "bob@example.org\\n" into the To field of a compose form whose button is Send (a
  zenity entry dialog, whose Enter fires its default button): declined, the form still open;
  with ``--confirm none`` the same Enter sends it (zenity exits 0).
* An MCP client (no elicitation) pressing Enter, space or typing "\\n" on a focused "Delete"
  button (a zenity question): each refused, the dialog still open; Cancel still works.
* The native executor, judged the same way: Enter, space and a typed "\\n" on the focused
  "Löschen" button of a German dialog, and a click at its pixels, each ask the approver (the
  same one, with the same events as the element tools) and are declined; "Behalten" (keep)
  is clicked without a question.
* A generic "OK" judged by its GTK dialog ("will be deleted permanently") and not in a
  harmless one; a password typed into a password dialog.
* A click at a point (the element tools' pixels) judged by the element under it (a Spanish
  "Publicar"); moving the pointer over it asks nothing.

Effects are seen outside the tools: the zenity process's exit status and output.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
from pathlib import Path

import anyio.to_thread
import pytest
from click.testing import CliRunner

from deskpilot.cli import main
from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.events import Event
from deskpilot.native.actions import Action, Click, KeyPress, TypeText
from deskpilot.native.executor import NativeExecutor
from deskpilot.policy import ApprovalRequest, CallbackApprover
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.helpers import mcp_text as text
from tests.e2e.test_mcp_stdio import stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def compose_form(apps: Apps) -> tuple[WindowInfo, subprocess.Popen[bytes]]:
    window = await apps.spawn(
        ["zenity", "--entry", "--title=New message", "--text=To:", "--ok-label=Send"],
        match=lambda w: w.title == "New message",
    )
    return window, apps.procs[-1]


async def ended(proc: subprocess.Popen[bytes]) -> int:
    """The exit status once ``proc`` ends (waited for in a thread, up to 10 s)."""
    return await anyio.to_thread.run_sync(lambda: proc.wait(timeout=10))


def run_cli(env: dict[str, str], model: str, *flags: str) -> object:
    args = ["run", "--model", model, *flags, "fill in the form"]
    return CliRunner().invoke(main, args, env=env, catch_exceptions=False)


async def test_enter_typed_in_a_compose_form_does_not_send_without_a_yes(
    apps: Apps, call: Call, desktop_settings: Settings, tmp_path: Path
) -> None:
    window, proc = await compose_form(apps)
    read = await call("read_screen_ax", {"windowID": window.stable_id})
    to = find_id(read.text, "textbox")  # the field, under its label "To:"
    script = tmp_path / "model.json"
    steps = [
        {"tool_calls": [{"name": "read_screen_ax", "args": {"windowID": window.stable_id}}]},
        {
            "tool_calls": [
                {
                    "name": "perform",
                    "args": {
                        "action": "type",
                        "elementID": to,
                        "text": "bob@example.org\n",
                        "windowID": window.stable_id,
                    },
                }
            ]
        },
        "Done.",
    ]
    script.write_text(json.dumps({"format": "neutral", "replies": steps}))
    home = tmp_path / "home"
    env = {
        **desktop_settings.environ,
        "DESKPILOT_HOME": str(home),
        "DESKPILOT_MODEL": "",
        "DESKPILOT_CONFIRM": "",
    }
    # the CLI runs its own event loop: in a thread, so the desktop's loop stays free
    result = await asyncio.to_thread(run_cli, env, f"scripted:{script}")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "→ declined: no terminal to ask" in result.stderr  # type: ignore[attr-defined]
    assert 'fires "Send": send, post or publish' in result.stderr  # type: ignore[attr-defined]
    assert proc.poll() is None  # the form is still open: nothing was sent

    # the same obedient model with --confirm none: the same Enter sends it
    result = await asyncio.to_thread(run_cli, env, f"scripted:{script}", "--confirm", "none")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "Typed 16 characters" in result.stderr  # type: ignore[attr-defined]
    assert await ended(proc) == 0  # Enter fired Send (zenity's OK answer)


async def delete_dialog(apps: Apps) -> tuple[WindowInfo, subprocess.Popen[bytes]]:
    window = await apps.spawn(
        [
            "zenity",
            "--question",
            "--title=Old backups",
            "--text=Delete 3 old backups?",
            "--ok-label=Delete",
            "--cancel-label=Keep",
        ],
        match=lambda w: w.title == "Old backups",
    )
    return window, apps.procs[-1]


async def test_keys_on_a_focused_delete_button_are_refused_over_mcp(
    apps: Apps, desktop: DesktopFacade, desktop_settings: Settings, tmp_path: Path
) -> None:
    window, proc = await delete_dialog(apps)
    snap = await desktop.snapshot(window)  # a reader of the test's own: what has the focus
    focused = [n for n in snap.nodes() if "focused" in n.states]
    assert focused and focused[-1].name == "Delete", [(n.role, n.name) for n in focused]
    env = desktop_settings.environ
    async with stdio_session(env, tmp_path / "server.log") as session:  # no elicitation
        wid = {"windowID": window.stable_id}
        read = await session.call_tool("read_screen_ax", wid)
        tries = [
            {"action": "shortcut", "shortcut": "Return"},
            {"action": "shortcut", "shortcut": "space"},
            {"action": "shortcut", "shortcut": "KP_Enter"},
            {"action": "type", "text": "\n"},
            {"elementID": find_id(text(read), "button", "Delete")},
        ]
        for args in tries:
            refused = await session.call_tool("perform", {**args, **wid})
            assert refused.is_error, (args, text(refused))
            assert "this MCP client cannot ask the user" in text(refused), text(refused)
            assert proc.poll() is None, args  # still open: nothing deleted
        keep = find_id(text(read), "button", "Keep")
        kept = await session.call_tool("perform", {"elementID": keep, **wid})
        assert not kept.is_error, text(kept)
    assert await ended(proc) == 1  # zenity's cancel answer (Keep): Delete never fired


def judged_by_nobody(ctx: ToolContext) -> tuple[ToolContext, list[ApprovalRequest]]:
    """``ctx`` with the policy on (consequential) and a person who says no to everything;
    the questions they were asked, in order."""
    asked: list[ApprovalRequest] = []

    def say_no(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    settings = ctx.settings.with_overrides(confirm="consequential")
    return dataclasses.replace(
        ctx, settings=settings, approver=CallbackApprover(say_no, person=True)
    ), asked


async def test_the_native_executor_is_judged_the_same_way(
    apps: Apps, desktop: DesktopFacade, ctx: ToolContext
) -> None:
    window = await apps.spawn(
        [
            "zenity",
            "--question",
            "--title=Alte Sicherungen",
            "--text=3 alte Sicherungen?",
            "--ok-label=Löschen",
            "--cancel-label=Behalten",
        ],
        match=lambda w: w.title == "Alte Sicherungen",
    )
    proc = apps.procs[-1]
    snap = await desktop.snapshot(window)  # the test's own reader: the buttons and the focus
    buttons = {n.name: n for n in snap.nodes() if n.role == "push-button"}
    focused = [n for n in snap.nodes() if "focused" in n.states]
    assert focused and focused[-1].name == "Löschen", [(n.role, n.name) for n in focused]
    delete, keep = buttons["Löschen"].bounds, buttons["Behalten"].bounds
    assert delete is not None and keep is not None
    events: list[Event] = []
    judged, asked = judged_by_nobody(ctx)
    native = dataclasses.replace(judged, audit=events.append)
    executor = NativeExecutor(ToolSet(), native)
    tries: list[Action] = [
        KeyPress(("Return",)),
        KeyPress(("space",)),
        TypeText("\n"),
        KeyPress(("KP_Enter",)),
        Click(*delete.center),
    ]
    for action in tries:
        outcome = await executor.run([action], screenshot=False)
        (step,) = outcome.steps
        assert step.result.is_error and "Declined" in step.result.text, (action, step.result)
        assert "delete" in step.result.text, step.result.text
        assert proc.poll() is None, action  # the dialog is still open: nothing deleted
    assert len(asked) == len(tries)
    assert "Löschen" in asked[-1].reason and asked[-1].tool == "computer"
    refused = [e.data for e in events if e.kind == "tool.result" and e.data.get("refused")]
    assert [r["refused"] for r in refused] == ["declined"] * len(tries)
    answered = [e.data["approved"] for e in events if e.kind == "confirm.answered"]
    assert answered == [False] * len(tries)
    kept = await executor.run([Click(*keep.center)], screenshot=False)
    assert kept.ok and len(asked) == len(tries)  # no question for Behalten
    assert await ended(proc) == 1  # zenity's cancel answer: Löschen never fired


async def test_a_generic_ok_is_judged_by_its_dialog_and_a_password_by_its_field(
    apps: Apps, ctx: ToolContext
) -> None:
    judged, asked = judged_by_nobody(ctx)
    toolset = computer_use_tools()
    # "OK" says nothing; its dialog says it deletes
    window = await apps.spawn(
        [
            "zenity",
            "--question",
            "--title=Clean up",
            "--ok-label=OK",
            "--cancel-label=Cancel",
            "--text=12 photos will be deleted permanently. This cannot be undone.",
        ],
        match=lambda w: w.title == "Clean up",
    )
    proc = apps.procs[-1]
    read = await toolset.call("read_screen_ax", {"windowID": window.stable_id}, judged)
    ok = find_id(read.text, "button", "OK")
    refused = await toolset.call("perform", {"elementID": ok, "windowID": window.stable_id}, judged)
    assert refused.is_error and "Declined" in refused.text, refused.text
    assert 'activates "OK" in a dialog that says' in asked[-1].reason, asked[-1].reason
    assert asked[-1].reason.endswith(": delete")
    assert proc.poll() is None  # still open: nothing deleted
    # the same generic OK in a harmless dialog runs without a question
    calm = await apps.spawn(
        ["zenity", "--question", "--title=Tip", "--ok-label=OK", "--text=Photos are sorted."],
        match=lambda w: w.title == "Tip",
    )
    calm_proc = apps.procs[-1]
    read = await toolset.call("read_screen_ax", {"windowID": calm.stable_id}, judged)
    before = len(asked)
    done = await toolset.call(
        "perform",
        {"elementID": find_id(read.text, "button", "OK"), "windowID": calm.stable_id},
        judged,
    )
    assert not done.is_error, done.text
    assert len(asked) == before and await ended(calm_proc) == 0
    # a password typed into a password dialog, and Enter there, ask
    secret = await apps.spawn(
        ["zenity", "--password", "--title=Unlock keyring"],
        match=lambda w: w.title == "Unlock keyring",
    )
    secret_proc = apps.procs[-1]
    typed = await toolset.call(
        "perform", {"action": "type", "text": "hunter2\n", "windowID": secret.stable_id}, judged
    )
    assert typed.is_error and "Declined" in typed.text, typed.text
    assert "password" in asked[-1].reason and asked[-1].reason.endswith(
        "change account or security settings"
    ), asked[-1].reason
    assert secret_proc.poll() is None


async def test_a_click_at_a_point_is_judged_by_the_element_under_it(
    apps: Apps, desktop: DesktopFacade, ctx: ToolContext
) -> None:
    window = await apps.spawn(
        [
            "zenity",
            "--question",
            "--title=Publish post",
            "--text=Your post is ready.",
            "--ok-label=Publicar",
            "--cancel-label=Later",
        ],
        match=lambda w: w.title == "Publish post",
    )
    proc = apps.procs[-1]
    snap = await desktop.snapshot(window)  # the test's own reader: where the button is
    button = next(n for n in snap.nodes() if n.role == "push-button" and n.name == "Publicar")
    assert button.bounds is not None
    cx, cy = button.bounds.center
    point = {"x": cx - window.geometry.x, "y": cy - window.geometry.y}  # screenshot pixels
    judged, asked = judged_by_nobody(ctx)
    toolset = computer_use_tools()
    args = {"action": "click", **point, "windowID": window.stable_id}
    refused = await toolset.call("perform", args, judged)
    assert refused.is_error and "Declined" in refused.text, refused.text
    assert 'activates "Publicar": send, post or publish' in asked[-1].reason, asked[-1].reason
    assert proc.poll() is None  # nothing published
    moved = await toolset.call("perform", {**args, "action": "hover"}, judged)
    assert not moved.is_error and len(asked) == 1  # moving over it presses nothing
