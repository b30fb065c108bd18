"""Policy holds for pixels on the real desktop: blocked apps are refused (and hidden from
screenshots), a press on a consequential button needs a yes, and everything is audited. The
model's calls come through the production path: a native run, the vendor's adapter, its HTTP
client, a local server in the vendor's wire format."""

from __future__ import annotations

import base64
import dataclasses
import io
from typing import Any

import pytest
from PIL import Image

from deskpilot._wait import async_wait_for
from deskpilot.agent.loop import RunOptions
from deskpilot.agent.native_run import run_native_task
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.events import Event
from deskpilot.native.actions import Click, TypeText
from deskpilot.native.executor import NativeExecutor
from deskpilot.policy import ApprovalRequest, CallbackApprover, DenyAll
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet
from tests.desktop.conftest import Apps
from tests.desktop.native_server import ReplayServer, Request, vendor_provider

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_click_aimed_at_keepassxc_is_refused(
    apps: Apps, desktop: DesktopFacade, ctx: ToolContext
) -> None:
    vault = await apps.spawn(["keepassxc"], match=lambda w: "KeePassXC" in w.title)
    cx, cy = vault.geometry.center
    await desktop.pointer_move(3, 3)
    events: list[Event] = []
    asked: list[ApprovalRequest] = []
    person = CallbackApprover(lambda r: asked.append(r) or True, person=True)
    ctx = dataclasses.replace(ctx, audit=events.append, approver=person)

    def script(req: Request, i: int) -> dict[str, Any]:
        if i == 0:  # the model aims at the middle of where the vault window is
            return {
                "id": "r1",
                "output": [
                    {
                        "type": "computer_call",
                        "id": "cu_1",
                        "call_id": "call_1",
                        "actions": [
                            {"type": "click", "button": "left", "x": cx, "y": cy},
                            {"type": "type", "text": "hunter2"},
                        ],
                    }
                ],
            }
        return {
            "id": "r2",
            "output": [
                {
                    "type": "message",
                    "content": [{"type": "output_text", "text": "KeePassXC is blocked."}],
                }
            ],
        }

    with ReplayServer(script) as server:
        async with vendor_provider("openai:gpt-5.5", server) as provider:
            result = await run_native_task(
                "Open my password vault.",
                provider=provider,
                ctx=ctx,
                options=RunOptions(max_steps=3),
            )
    assert result.outcome == "done" and server.errors == [], result.answer
    assert await desktop.pointer_position() == (3, 3)  # no input reached the screen

    first = server.requests[0].body["input"][0]["content"][1]["image_url"].split(",", 1)[1]
    seen = Image.open(io.BytesIO(base64.b64decode(first))).convert("RGB")
    assert seen.getpixel((cx, cy)) == (0, 0, 0)  # the vault was blacked out of the screenshot

    output, message = server.requests[1].body["input"]
    assert output["type"] == "computer_call_output" and output["call_id"] == "call_1"
    told = message["content"][0]["text"]
    assert "KeePassXC is on the blocked apps list" in told
    assert "Action 1 of 2 failed" in told and "Not run: the 1 action(s) after it." in told

    refused = [e for e in events if e.kind == "tool.result" and e.data["tool"] == "computer"]
    assert [e.data["ok"] for e in refused] == [False]
    assert any(e.kind == "tool.result" and e.images for e in events)  # the batch screenshot

    executor = NativeExecutor(ToolSet(), ctx)
    await desktop.activate(vault)
    typed = await executor.run([TypeText("hunter2")], screenshot=False)
    assert "blocked apps list" in typed.steps[0].result.text
    window = await executor.run([Click(5, 5)], window=vault.stable_id, screenshot=False)
    assert "blocked apps list" in window.steps[0].result.text


async def test_pressing_a_real_send_button_needs_a_yes(
    apps: Apps, desktop: DesktopFacade, ctx: ToolContext
) -> None:
    dialog = await apps.spawn(
        [
            "zenity",
            "--question",
            "--title=Mail",
            "--text=Send the report?",
            "--ok-label=Send",
            "--cancel-label=Keep",
        ],
        match=lambda w: w.title == "Mail",
    )
    snap = await desktop.snapshot(dialog)
    send = next(n for n in snap.nodes() if n.role == "push-button" and n.name == "Send")
    assert send.bounds is not None
    settings = ctx.settings.with_overrides(confirm="consequential")
    refuse = dataclasses.replace(ctx, settings=settings, approver=DenyAll())
    declined = await NativeExecutor(ToolSet(), refuse).run([Click(*send.bounds.center)])
    assert "Declined" in declined.steps[0].result.text
    assert 'activates "Send"' in declined.steps[0].result.text
    assert any(w.handle == dialog.handle for w in await desktop.list_windows())  # still open

    asked: list[ApprovalRequest] = []
    agree = dataclasses.replace(
        refuse, approver=CallbackApprover(lambda r: asked.append(r) or True, person=True)
    )
    done = await NativeExecutor(ToolSet(), agree).run([Click(*send.bounds.center)])
    assert done.ok and len(asked) == 1 and 'activates "Send"' in asked[0].reason

    async def closed() -> bool:
        return all(w.handle != dialog.handle for w in await desktop.list_windows())

    await async_wait_for(closed, timeout=10, what="the dialog to close after Send")
