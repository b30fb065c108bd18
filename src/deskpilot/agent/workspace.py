"""The chat agent's workspace tools: read a file, run a command. Each call is confirmed.

They belong to the *parent* agent of ``deskpilot chat`` only; the computer-use subagent never
gets them. ``run_command`` is declared consequential; ``read_file`` only looks, but what it reads
goes to the model provider, so each call is raised to consequential by its ``assess`` hook. Both
therefore ask under the default ``--confirm consequential`` (and under ``all``); only
``--confirm none`` runs them unasked.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from deskpilot.errors import ToolError
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, ToolSpec, tool
from deskpilot.tools.context import ToolContext
from deskpilot.tools.reach import NOTHING

MAX_OUTPUT = 20000


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)"


def workspace_tools(root: Path) -> list[ToolSpec]:
    """``read_file`` and ``run_command``, relative to ``root``."""
    root = root.resolve()

    async def assess_read(ctx: ToolContext, values: Mapping[str, Any]) -> tuple[Risk, str] | None:
        return Risk.CONSEQUENTIAL, f"reads {values.get('path')} and shows it to the model"

    @tool(
        risk=Risk.READ_ONLY,
        title="Read file",
        name="read_file",
        assess=assess_read,
        idempotent=True,
        reach=NOTHING,
    )
    async def read_file(
        ctx: ToolContext,
        path: Annotated[
            str,
            Field(
                min_length=1,
                description=("File to read: relative to the workspace directory, or absolute."),
            ),
        ],
        max_chars: Annotated[int, Field(ge=1, le=200000)] = MAX_OUTPUT,
    ) -> ToolResult:
        """Read a text file from the user's workspace."""
        target = root / Path(path).expanduser()
        try:
            data = await asyncio.to_thread(target.read_bytes)
        except FileNotFoundError:
            raise ToolError(f"No such file: {path}") from None
        except IsADirectoryError:
            raise ToolError(f"{path} is a directory, not a file") from None
        except OSError as exc:
            raise ToolError(f"Cannot read {path}: {exc.strerror}") from None
        if b"\0" in data[:4096]:
            raise ToolError(f"{path} looks like a binary file ({len(data)} bytes); not shown")
        text = data.decode("utf-8", errors="replace")
        return ToolResult(_clip(text, max_chars), summary=f"{path}: {len(text)} characters")

    @tool(
        risk=Risk.CONSEQUENTIAL,
        title="Run command",
        name="run_command",
        open_world=True,
        reach=NOTHING,
    )
    async def run_command(
        ctx: ToolContext,
        command: Annotated[str, Field(min_length=1, description="A shell command (sh -c).")],
        timeout: Annotated[
            float, Field(gt=0, le=600, description="Seconds before it is killed.")
        ] = 60,
    ) -> ToolResult:
        """Run a shell command in the workspace directory; returns its exit code and output."""
        proc = await asyncio.create_subprocess_shell(
            command,
            cwd=root,
            env=dict(ctx.settings.environ),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            async with asyncio.timeout(timeout):
                out, _ = await proc.communicate()
        except BaseException as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            if isinstance(exc, TimeoutError):
                raise ToolError(f"The command was killed after {timeout:g} s") from None
            raise
        text = out.decode("utf-8", errors="replace")
        code = proc.returncode
        return ToolResult(
            f"exit code {code}\n{_clip(text, MAX_OUTPUT)}".rstrip(),
            is_error=code != 0,
            summary=f"exit code {code}",
        )

    return [read_file, run_command]
