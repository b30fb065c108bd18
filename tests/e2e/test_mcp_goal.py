"""A goal over MCP, with the official client on the FakeDesktop: ``begin_task`` with the user's
request grants what it names once the user says yes (elicitation), ``end_task`` ends it; a
client that cannot ask gets nothing granted; ``deskpilot mcp --goal`` holds every client to one
goal of the person's; a yes for the task from the elicitation form covers the same kind of
effect in the same window afterwards.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientRequestContext, ElicitationFnT

from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import Event
from deskpilot.mcp import DeskpilotMCP
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.task_tools import TASK_TOOLS
from tests.desktop.helpers import find_id
from tests.desktop.helpers import mcp_text as text

pytestmark = pytest.mark.asyncio(loop_scope="session")


class Server:
    def __init__(self, settings: Settings) -> None:
        self.desktop = FakeDesktop()
        self.editor = self.desktop.add_window(FAKE_APPS[1], "Note to Ann")
        self.events: list[Event] = []
        base = ToolContext(self.desktop, settings, audit=self.events.append, surface="mcp")
        tools = computer_use_tools()
        for spec in TASK_TOOLS:
            tools.add(spec)
        self.app = DeskpilotMCP(tools, base)

    @asynccontextmanager
    async def client(self, elicit: ElicitationFnT | None = None) -> AsyncIterator[Client]:
        async with Client(self.app.server, mode="legacy", elicitation_callback=elicit) as c:
            yield c

    def decided(self) -> list[dict[str, object]]:
        return [e.data for e in self.events if e.kind == "policy.decided" and "act" in e.data]


class Person:
    """Answers each elicitation as told, and keeps what it was asked."""

    def __init__(self, *answers: dict[str, bool]) -> None:
        self.answers = list(answers)
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params)
        content = self.answers.pop(0)
        return types.ElicitResult(action="accept", content=content)


async def press_send(client: Client, server: Server) -> types.CallToolResult:
    read = await client.call_tool("read_screen_ax", {"windowID": server.editor.stable_id})
    return await client.call_tool("perform", {"elementID": find_id(text(read), "button", "Send")})


def sends(server: Server) -> int:
    return server.desktop.log.count("click Send")


async def test_begin_task_grants_what_the_users_request_names_after_their_yes(
    settings: Settings,
) -> None:
    server = Server(settings)
    person = Person({"approve": True}, {"approve": False})
    async with server.client(person) as client:
        begun = await client.call_tool("begin_task", {"goal": "Send Ann the note about lunch"})
        assert not begun.is_error and "send or submit" in text(begun)
        assert "Send Ann the note about lunch" in person.asked[0].message  # the user saw it
        assert not (await press_send(client, server)).is_error  # no second question
        assert sends(server) == 1 and len(person.asked) == 1
        ended = await client.call_tool("end_task", {})
        assert text(ended) == "Task ended."
        again = await press_send(client, server)  # asked again: the user says no
        assert again.is_error and sends(server) == 1 and len(person.asked) == 2
    outcomes = [d["outcome"] for d in server.decided()]
    assert outcomes == ["allowed", "declined"]


async def test_a_request_the_user_does_not_confirm_grants_nothing(settings: Settings) -> None:
    server = Server(settings)
    async with server.client(None) as client:  # a client that cannot ask its user
        begun = await client.call_tool("begin_task", {"goal": "Send Ann the note"})
        assert begun.is_error and "Declined" in text(begun)
        assert (await press_send(client, server)).is_error
    assert sends(server) == 0


async def test_the_servers_goal_holds_for_every_client(settings: Settings) -> None:
    server = Server(dataclasses.replace(settings, goal="Send the note to Ann"))
    async with server.client(None) as client:
        assert not (await press_send(client, server)).is_error
    async with server.client(None) as other:
        assert not (await press_send(other, server)).is_error
    assert sends(server) == 2
    grants = [e.data for e in server.events if e.kind == "policy.grants"]
    assert len(grants) == 2 and grants[0]["source"] == "the server's --goal"


async def test_a_yes_for_the_task_covers_the_next_send_in_that_window(
    settings: Settings,
) -> None:
    server = Server(settings)
    person = Person({"approve": True, "for_task": True})
    async with server.client(person) as client:
        assert not (await press_send(client, server)).is_error
        assert not (await press_send(client, server)).is_error
    assert sends(server) == 2 and len(person.asked) == 1
    assert "for_task" in person.asked[0].requested_schema["properties"]
    added = [e.data for e in server.events if e.kind == "grant.added"]
    assert len(added) == 1 and added[0]["source"] == "person"
