"""The MCP server in process, driven by the official client, on the FakeDesktop.

Fast checks of what the server itself decides: the tool list, error results for invalid
arguments, confirmation by elicitation (and refusal without it), one Session per connection,
events for the audit log. Real apps over real transports: tests/desktop/test_mcp_*.py and
tests/e2e/test_mcp_{stdio,http}.py.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.shared.exceptions import MCPError

from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.errors import AuditError, ConfigError
from deskpilot.events import Event
from deskpilot.mcp import DeskpilotMCP
from deskpilot.mcp.approval import APPROVAL_SCHEMA, INPUT_KEY
from deskpilot.mcp.definitions import RISK_META_KEY
from deskpilot.mcp.transports import check_bind, parse_bind
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from tests.desktop.helpers import find_id
from tests.desktop.helpers import mcp_text as text

pytestmark = pytest.mark.asyncio(loop_scope="session")

CALCULATOR, EDITOR, VAULT = FAKE_APPS


class Server:
    """A DeskpilotMCP on a FakeDesktop with one calculator and one editor window."""

    def __init__(self, settings: Settings) -> None:
        self.desktop = FakeDesktop()
        self.calc = self.desktop.add_window(CALCULATOR)
        self.editor = self.desktop.add_window(EDITOR, "Mail to Bob")
        self.events: list[Event] = []
        base = ToolContext(self.desktop, settings, audit=self.events.append, surface="mcp")
        self.app = DeskpilotMCP(computer_use_tools(), base)

    def kinds(self, tool: str | None = None) -> list[str]:
        return [e.kind for e in self.events if tool is None or e.data.get("tool") == tool]

    @asynccontextmanager
    async def client(self, elicit: ElicitationFnT | None = None) -> AsyncIterator[Client]:
        async with Client(self.app.server, mode="legacy", elicitation_callback=elicit) as c:
            yield c


@pytest.fixture
def server(settings: Settings) -> Server:
    return Server(settings)


class Elicitor:
    """An elicitation callback that records what it was asked and answers as told."""

    def __init__(self, answer: Callable[[], types.ElicitResult]) -> None:
        self.answer = answer
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params)
        return self.answer()


async def test_tool_list_comes_from_the_tool_definitions(server: Server) -> None:
    async with server.client() as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    specs = {s.name: s for s in computer_use_tools().list()}
    assert list(listed) == list(specs)
    for name, spec in specs.items():
        tool = listed[name]
        assert (tool.title, tool.description) == (spec.title, spec.description)
        assert tool.input_schema == spec.input_schema
        assert tool.meta == {RISK_META_KEY: spec.risk.value}
    hints = {
        name: (
            t.annotations.read_only_hint,
            t.annotations.destructive_hint,
            t.annotations.open_world_hint,
        )
        for name, t in listed.items()
        if t.annotations is not None
    }
    assert hints == {
        "list_windows": (True, None, False),
        "read_screen_ax": (True, None, False),
        "wait": (True, None, False),
        "computer_use_screenshot": (True, None, False),
        "open_app": (False, False, False),
        "scroll": (False, False, False),
        "perform": (False, True, False),  # may be raised to consequential ("Send")
        "perform_sequence": (False, True, False),
        "open_urls": (False, False, True),
    }


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("open_app", {}, "Invalid arguments for open_app: bundleId: required argument is missing"),
        ("wait", {"seconds": "soon"}, "Invalid arguments for wait: seconds: Input should be"),
        ("wait", {"seconds": -1}, "Invalid arguments for wait: seconds: Input should be greater"),
        ("read_screen_ax", {"window": "1/2"}, "Invalid arguments for read_screen_ax: window: "),
        ("perform", {"action": "teleport"}, "Invalid arguments for perform: action: "),
        ("no_such_tool", {}, "Unknown tool 'no_such_tool'. Available tools: "),
    ],
)
async def test_invalid_arguments_are_error_results_from_the_toolset(
    server: Server, tool: str, args: dict[str, Any], expected: str
) -> None:
    async with server.client() as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    assert text(result).startswith(expected), text(result)
    # the ToolSet saw it: the call and its error result are both events (the audit log's rows)
    assert server.kinds(tool) == ["tool.call", "tool.result"]
    assert server.events[-2].data["ok"] is False


async def test_results_carry_text_and_png_images(server: Server) -> None:
    async with server.client() as client:
        shot = await client.call_tool(
            "computer_use_screenshot", {"windowID": server.calc.stable_id}
        )
    assert not shot.is_error
    assert "Screenshot of window" in text(shot)
    image = shot.content[1]
    assert isinstance(image, types.ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")


def accept(approve: bool) -> Callable[[], types.ElicitResult]:
    return lambda: types.ElicitResult(action="accept", content={"approve": approve})


@pytest.mark.parametrize(
    "answer",
    [
        lambda: types.ElicitResult(action="decline"),
        lambda: types.ElicitResult(action="cancel"),
        accept(False),
        lambda: types.ErrorData(code=types.INVALID_REQUEST, message="no UI"),
    ],
    ids=["decline", "cancel", "accept-no", "client-error"],
)
async def test_consequential_click_asks_and_no_runs_nothing(
    server: Server, answer: Callable[[], types.ElicitResult]
) -> None:
    elicitor = Elicitor(answer)
    async with server.client(elicitor) as client:
        read = await client.call_tool("read_screen_ax", {"windowID": server.editor.stable_id})
        send = find_id(text(read), "button", "Send")
        clicked = await client.call_tool("perform", {"elementID": send})
    assert clicked.is_error
    assert text(clicked).startswith("Declined: the user did not approve perform")
    assert not any("click" in line for line in server.desktop.log), server.desktop.log
    [asked] = elicitor.asked
    props = asked.requested_schema["properties"]
    assert props["approve"] == APPROVAL_SCHEMA["properties"]["approve"]
    assert asked.requested_schema["required"] == ["approve"]
    assert props["for_task"]["type"] == "boolean"  # a yes for the task is offered, never required
    assert 'perform (consequential): activates "Send"' in asked.message
    assert asked.message.startswith('deskpilot wants to: Click "Send"')
    assert f'"elementID": "{send}"' in asked.message
    answered = [e for e in server.events if e.kind == "confirm.answered"]
    assert [e.data["approved"] for e in answered] == [False]


async def test_consequential_click_runs_when_the_user_approves(server: Server) -> None:
    elicitor = Elicitor(accept(True))
    async with server.client(elicitor) as client:
        read = await client.call_tool("read_screen_ax", {"windowID": server.editor.stable_id})
        clicked = await client.call_tool(
            "perform", {"elementID": find_id(text(read), "button", "Send")}
        )
    assert not clicked.is_error, text(clicked)
    assert len(elicitor.asked) == 1
    assert any("click" in line for line in server.desktop.log), server.desktop.log


async def test_client_without_elicitation_is_refused_with_how_to_allow(server: Server) -> None:
    async with server.client() as client:  # no elicitation callback: capability not declared
        read = await client.call_tool("read_screen_ax", {"windowID": server.editor.stable_id})
        clicked = await client.call_tool(
            "perform", {"elementID": find_id(text(read), "button", "Send")}
        )
        # acts that are not consequential run without asking (confirm = consequential)
        digit = await client.call_tool("read_screen_ax", {"windowID": server.calc.stable_id})
        seven = await client.call_tool(
            "perform", {"elementID": find_id(text(digit), "button", "7")}
        )
    assert clicked.is_error
    assert "does not support elicitation" in text(clicked)
    assert "`deskpilot mcp --confirm none`" in text(clicked)
    assert not seven.is_error, text(seven)
    assert server.desktop.display_text(server.calc.handle) == "7"
    assert server.desktop.display_text(server.editor.handle) == ""


async def test_confirm_none_runs_without_asking(settings: Settings) -> None:
    server = Server(settings.with_overrides(confirm="none"))
    elicitor = Elicitor(accept(False))
    async with server.client(elicitor) as client:
        read = await client.call_tool("read_screen_ax", {"windowID": server.editor.stable_id})
        clicked = await client.call_tool(
            "perform", {"elementID": find_id(text(read), "button", "Send")}
        )
    assert not clicked.is_error, text(clicked)
    assert elicitor.asked == []


async def test_each_connection_has_its_own_target_and_element_ids(server: Server) -> None:
    async with server.client() as a, server.client() as b:
        read_a = text(await a.call_tool("read_screen_ax", {"windowID": server.calc.stable_id}))
        read_b = text(await b.call_tool("read_screen_ax", {"windowID": server.editor.stable_id}))
        # without windowID each reads its own tracked target
        assert " · 'Calculator' · " in text(await a.call_tool("read_screen_ax", {}))
        assert " · 'Mail to Bob' · " in text(await b.call_tool("read_screen_ax", {}))
        # an element ID the other connection was shown is unknown here
        seven = find_id(read_a, "button", "7")
        crossed = await b.call_tool("perform", {"elementID": seven})
        assert crossed.is_error
        assert "not shown by a read_screen_ax in this session" in text(crossed)
        assert not (await a.call_tool("perform", {"elementID": seven})).is_error
        assert find_id(read_b, "button", "Send")
        assert len(server.app.clients) == 2
        runs = {state.run_id for state in server.app.clients.values()}
    # each connection is one run in the audit log; closing it finishes the run
    assert server.app.clients == {}
    started = {e.run_id for e in server.events if e.kind == "run.started"}
    finished = {e.run_id: e.data for e in server.events if e.kind == "run.finished"}
    assert started == runs == set(finished)
    assert [d["steps"] for d in finished.values()] == [3, 3]
    assert {e.run_id for e in server.events if e.kind == "tool.call"} == runs


async def test_an_audit_log_that_cannot_be_written_fails_the_call_visibly(
    settings: Settings,
) -> None:
    server = Server(settings)

    def broken(event: Event) -> None:
        raise AuditError("disk full")

    server.app.base.audit = broken
    async with server.client() as client:
        result = await client.call_tool("list_windows", {})
    assert result.is_error
    assert text(result).startswith("list_windows: deskpilot could not write its audit log")


@pytest.mark.parametrize(
    ("value", "host", "port", "loopback"),
    [
        ("8765", "127.0.0.1", 8765, True),
        (":0", "127.0.0.1", 0, True),
        ("localhost:80", "localhost", 80, True),
        ("127.0.0.2:1", "127.0.0.2", 1, True),
        ("[::1]:9", "::1", 9, True),
        ("0.0.0.0:9", "0.0.0.0", 9, False),
        ("192.168.1.5:9", "192.168.1.5", 9, False),
        ("example.org:9", "example.org", 9, False),
    ],
)
async def test_http_addresses(value: str, host: str, port: int, loopback: bool) -> None:
    bind = parse_bind(value)
    assert (bind.host, bind.port, bind.loopback) == (host, port, loopback)
    if loopback:
        check_bind(bind, allow_remote=False)
    else:
        with pytest.raises(ConfigError, match="--allow-remote"):
            check_bind(bind, allow_remote=False)
        check_bind(bind, allow_remote=True)


# -- the stateless 2026-07-28 era ------------------------------------------------------------


def clicks(server: Server) -> int:
    return sum("click" in line for line in server.desktop.log)


async def test_stateless_clients_are_asked_through_input_required(server: Server) -> None:
    elicitor = Elicitor(accept(True))
    async with Client(server.app.server, mode="2026-07-28", elicitation_callback=elicitor) as c:
        assert c.protocol_version == "2026-07-28"
        listed = {t.name: t for t in (await c.list_tools()).tools}
        assert listed["list_windows"].output_schema is not None
        windows = await c.call_tool("list_windows", {})  # the client validates the structure
        assert {w["title"] for w in windows.structured_content["windows"]} == {  # type: ignore[index]
            "Calculator",
            "Mail to Bob",
        }
        read = await c.call_tool("read_screen_ax", {"windowID": server.editor.stable_id})
        clicked = await c.call_tool("perform", {"elementID": find_id(text(read), "button", "Send")})
    assert not clicked.is_error, text(clicked)
    [asked] = elicitor.asked
    assert 'perform (consequential): activates "Send"' in asked.message
    assert clicks(server) == 1


async def test_a_stateless_answer_counts_once_and_only_for_its_question(server: Server) -> None:
    never = Elicitor(accept(True))  # declares elicitation; the rounds are driven by hand here
    async with Client(server.app.server, mode="2026-07-28", elicitation_callback=never) as c:
        read = await c.call_tool("read_screen_ax", {"windowID": server.editor.stable_id})
        args = {"elementID": find_id(text(read), "button", "Send")}
        first = await c.session.call_tool("perform", args, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and first.input_requests
        assert clicks(server) == 0  # asking ran nothing
        yes = {INPUT_KEY: types.ElicitResult(action="accept", content={"approve": True})}
        state = first.request_state
        done = await c.session.call_tool(
            "perform", args, input_responses=yes, request_state=state, allow_input_required=True
        )
        assert isinstance(done, types.CallToolResult) and not done.is_error, done
        assert clicks(server) == 1
        # the same answer again (a replay) is no yes: the user is asked anew, nothing runs
        again = await c.session.call_tool(
            "perform", args, input_responses=yes, request_state=state, allow_input_required=True
        )
        assert isinstance(again, types.InputRequiredResult)
        # an answer with state made for other arguments is refused by the SDK's seal
        other = {"elementID": args["elementID"], "windowID": server.editor.stable_id}
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await c.session.call_tool(
                "perform",
                other,
                input_responses=yes,
                request_state=state,
                allow_input_required=True,
            )
    assert clicks(server) == 1
    assert never.asked == []


async def test_stateless_clients_without_elicitation_are_told_how_to_allow(
    server: Server,
) -> None:
    async with Client(server.app.server, mode="2026-07-28") as c:
        read = await c.call_tool("read_screen_ax", {"windowID": server.editor.stable_id})
        clicked = await c.call_tool("perform", {"elementID": find_id(text(read), "button", "Send")})
    assert clicked.is_error
    assert "does not support elicitation" in text(clicked)
    assert clicks(server) == 0
