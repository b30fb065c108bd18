"""Confirmation in a real run: a consequential click asks; yes runs it, no reports "declined"
to the model and runs nothing; deny-all; no terminal; --confirm all / none."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Sequence

import pytest

from deskpilot.agent.approvers import TerminalApprover, describe
from deskpilot.agent.conversation import AssistantTurn, Conversation, ToolCall, ToolProtocol
from deskpilot.agent.loop import RunOptions, RunResult
from deskpilot.agent.providers.base import Provider, Request
from deskpilot.agent.task import computer_use_task
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.policy import AllowAll, ApprovalRequest, Approver, CallbackApprover, DenyAll, Risk
from deskpilot.tools.base import ToolSpec
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from tests.e2e.conftest import Events


class SendClicker(Provider):
    """Opens the editor, reads it, clicks Send, then reports the last result verbatim."""

    name = "test"

    def __init__(self) -> None:
        super().__init__("send-clicker")
        self.turn_no = 0

    async def complete(
        self,
        conversation: Conversation,
        tools: Sequence[ToolSpec],
        *,
        tool_protocol: ToolProtocol | None = None,
    ) -> AssistantTurn:
        self.turn_no += 1
        last = conversation.messages[-1].results
        if self.turn_no == 1:
            calls = [ToolCall("c1", "open_app", {"bundleId": "Editor"})]
        elif self.turn_no == 2:
            calls = [ToolCall("c2", "read_screen_ax", {})]
        elif self.turn_no == 3:
            element = re.search(r'button "Send" @(\S+)', last[0].text)
            assert element, last[0].text
            calls = [ToolCall("c3", "perform", {"action": "click", "elementID": element[1]})]
        else:
            return AssistantTurn(text=f"Result: {last[0].text}", model=self.spec)
        return AssistantTurn(text="", tool_calls=calls, model=self.spec)

    def build_request(self, *args: object) -> Request:
        raise NotImplementedError

    def parse_response(self, *args: object) -> AssistantTurn:
        raise NotImplementedError


def send(ctx: ToolContext, approver: Approver, confirm: str = "consequential") -> RunResult:
    ctx.approver = approver
    ctx.settings = ctx.settings.with_overrides(confirm=confirm)
    return asyncio.run(
        computer_use_task(
            "Have a look at the editor",
            provider=SendClicker(),
            ctx=ctx,
            options=RunOptions(max_steps=5),
        )
    )


def clicked(desktop: FakeDesktop) -> bool:
    return "click Send" in desktop.log


def test_yes_runs_the_consequential_click(
    fake_ctx: ToolContext, fake_desktop: FakeDesktop, events: Events
) -> None:
    asked: list[ApprovalRequest] = []
    result = send(fake_ctx, CallbackApprover(lambda r: asked.append(r) or True, person=True))
    assert clicked(fake_desktop)
    (request,) = asked  # open_app and read_screen_ax did not ask
    assert request.tool == "perform" and request.risk is Risk.CONSEQUENTIAL
    assert 'activates "Send"' in request.reason
    assert events.kinds().count("confirm.asked") == 1
    answered = events.of("confirm.answered")[0].data
    assert answered["approved"] is True and answered["by"] == "CallbackApprover"
    assert result.outcome == "done" and "Declined" not in result.answer


@pytest.mark.parametrize(
    "approver", [CallbackApprover(lambda r: False, person=True), DenyAll()], ids=["no", "deny-all"]
)
def test_no_reports_declined_and_runs_nothing(
    approver: Approver, fake_ctx: ToolContext, fake_desktop: FakeDesktop, events: Events
) -> None:
    result = send(fake_ctx, approver)
    assert not clicked(fake_desktop)
    assert result.answer.startswith("Result: Declined: the user did not approve perform")
    assert "Nothing was done. Do not retry it" in result.answer
    assert events.of("confirm.answered")[0].data["approved"] is False
    failed = events.of("tool.result")[-1].data
    assert failed["tool"] == "perform" and failed["ok"] is False


def test_without_a_terminal_asking_means_no(
    fake_ctx: ToolContext, fake_desktop: FakeDesktop
) -> None:
    stderr = io.StringIO()
    approver = TerminalApprover(stdin=io.StringIO("y\n"), stderr=stderr)
    assert approver.interactive is False  # StringIO is no TTY
    result = send(fake_ctx, approver)
    assert not clicked(fake_desktop) and "Declined" in result.answer
    shown = stderr.getvalue()
    assert "deskpilot wants to run perform (consequential)" in shown
    assert "declined: no terminal to ask" in shown


@pytest.mark.parametrize(
    ("answer", "runs"), [("y", True), ("YES", True), ("n", False), ("", False), (None, False)]
)
def test_terminal_prompt_takes_only_an_explicit_yes(
    answer: str | None, runs: bool, fake_ctx: ToolContext, fake_desktop: FakeDesktop
) -> None:
    prompts: list[str] = []

    async def ask(prompt: str) -> str | None:
        prompts.append(prompt)
        return None if answer is None else answer + "\n"

    stderr = io.StringIO()
    send(fake_ctx, TerminalApprover(stderr=stderr, interactive=True, ask=ask))
    assert clicked(fake_desktop) is runs
    # a judged effect in a window: a yes for the task is offered beside this once
    assert prompts == ["  Allow this action? [y = yes, this once / t = for this task / N] "]
    assert ("→ approved" in stderr.getvalue()) is runs


def test_confirm_none_asks_nothing(
    fake_ctx: ToolContext, fake_desktop: FakeDesktop, events: Events
) -> None:
    send(fake_ctx, DenyAll(), confirm="none")
    assert clicked(fake_desktop) and "confirm.asked" not in events.kinds()


def test_confirm_all_asks_for_every_acting_tool(
    fake_ctx: ToolContext, fake_desktop: FakeDesktop, events: Events
) -> None:
    asked: list[str] = []
    send(
        fake_ctx,
        CallbackApprover(lambda r: asked.append(r.tool) or True, person=True),
        confirm="all",
    )
    assert asked == ["open_app", "perform"]  # read_screen_ax only looks
    assert clicked(fake_desktop)


def test_what_the_approver_shows_is_what_runs() -> None:
    request = ApprovalRequest(
        "perform",
        {"text": "rm -rf /\u202e\u200b", "action": "type"},
        Risk.CONSEQUENTIAL,
        "types into a terminal",
    )
    text = describe(request)
    assert '"text": "rm -rf /\\u202e\\u200b"' in text and "\u202e" not in text


def test_allow_all_allows_what_it_is_asked(
    fake_ctx: ToolContext, fake_desktop: FakeDesktop
) -> None:
    send(fake_ctx, AllowAll())  # the library default refuses instead: tests/e2e/test_door.py
    assert clicked(fake_desktop)


def test_a_sequence_is_approved_by_its_steps_as_plain_values(fake_ctx: ToolContext) -> None:
    asked: list[ApprovalRequest] = []
    fake_ctx.approver = CallbackApprover(lambda r: asked.append(r) is not None, person=True)
    tools = computer_use_tools()

    async def go() -> None:
        await tools.call("open_app", {"bundleId": "Editor"}, fake_ctx)
        read = await tools.call("read_screen_ax", {}, fake_ctx)
        send_id = re.search(r'button "Send" @(\S+)', read.text)
        assert send_id, read.text
        steps = [{"action": "click", "elementID": send_id[1]}]
        await tools.call("perform_sequence", {"steps": steps}, fake_ctx)

    asyncio.run(go())
    assert len(asked) == 1
    step = asked[0].args["steps"][0]
    assert step["action"] == "click" and "text" not in step  # a dict, None fields left out
