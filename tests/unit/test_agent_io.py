"""Reading a line without blocking the loop; the chat's workspace tools."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from deskpilot.agent.approvers import read_line_from
from deskpilot.agent.workspace import workspace_tools
from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.events import discard
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet


def test_read_line_from_a_pipe_and_end_of_input() -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"first\nsecond\n")
    os.close(write_fd)

    async def go() -> list[str | None]:
        with os.fdopen(read_fd) as stream:
            return [await read_line_from(stream) for _ in range(3)]

    assert asyncio.run(go()) == ["first\n", "second\n", None]


def test_workspace_tools(tmp_path: Path, settings: Settings) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    tools = ToolSet(workspace_tools(tmp_path))
    ctx = ToolContext(
        desktop=FakeDesktop(), settings=settings.with_overrides(confirm="none"), audit=discard
    )

    async def go() -> list[tuple[bool, str]]:
        calls = [
            ("read_file", {"path": "notes.txt"}),
            ("read_file", {"path": "missing.txt"}),
            ("read_file", {"path": "blob.bin"}),
            ("run_command", {"command": "echo out; echo err >&2; exit 3"}),
            ("run_command", {"command": "sleep 30", "timeout": 0.2}),
        ]
        results = [await tools.call(n, a, ctx) for n, a in calls]
        return [(r.is_error, r.text) for r in results]

    got = asyncio.run(go())
    assert got[0] == (False, "hello\n")
    assert got[1] == (True, "No such file: missing.txt")
    assert got[2][0] and "looks like a binary file" in got[2][1]
    assert got[3] == (True, "exit code 3\nout\nerr")
    assert got[4] == (True, "The command was killed after 0.2 s")
    specs = {s.name: s for s in tools.list()}
    assert specs["run_command"].risk.value == "consequential"
    assert specs["read_file"].assess is not None  # raised to consequential per call
