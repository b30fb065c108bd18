"""Approvers for the CLI: ask the person at the terminal, or deny when nobody can be asked.

Other approvers live in :mod:`deskpilot.policy` (``AllowAll``, ``DenyAll``,
``CallbackApprover``). Only an explicit ``y``/``yes`` approves (this call), or ``t``/``task``
where the request offers it (this kind of effect in this window, for the rest of the task);
anything else — Enter, ``n``, end of input, no terminal — declines. Requests are asked one at a
time. The act is said in words first; what is shown is what runs: arguments are printed as
ASCII JSON, so invisible or look-alike characters show as ``\\uXXXX`` escapes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import IO

from deskpilot.errors import ActionDeclined
from deskpilot.policy import Answer, ApprovalRequest, Scope

Ask = Callable[[str], Awaitable[str | None]]


def describe(request: ApprovalRequest) -> str:
    """The question, with the arguments escaped exactly as they will run."""
    args = json.dumps(dict(request.args), ensure_ascii=True, sort_keys=True, default=str)
    lines = [f"deskpilot wants to: {request.sentence}"] if request.sentence else []
    lines += [
        f"deskpilot wants to run {request.tool} ({request.risk.value}): {request.reason}",
        f"  arguments: {args}",
    ]
    lines += [f"  {line}" for line in request.details]
    return "\n".join(lines)


async def read_line_from(stream: IO[str]) -> str | None:
    """Read one line without blocking the event loop; ``None`` at end of input.

    A terminal is watched with ``add_reader`` (cancellable, nothing left behind). Anything else
    (pipes, files) is read by a daemon thread, so a pending read never holds up exit.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def deliver(line: str | None) -> None:
        if not future.done():
            future.set_result(line)

    if _isatty(stream):
        fd = stream.fileno()
        loop.add_reader(fd, lambda: deliver(stream.readline() or None))
        try:
            return await future
        finally:
            loop.remove_reader(fd)

    def read() -> None:
        try:
            line = stream.readline() or None
        except (OSError, ValueError):
            line = None
        with contextlib.suppress(RuntimeError):  # the loop may have closed meanwhile
            loop.call_soon_threadsafe(deliver, line)

    threading.Thread(target=read, name="deskpilot-stdin", daemon=True).start()
    return await future


class TerminalApprover:
    """Ask y/N on the terminal; with no terminal (or ``interactive=False``), decline. A person
    answers (nobody else can type at the prompt)."""

    person = True

    def __init__(
        self,
        *,
        stdin: IO[str] | None = None,
        stderr: IO[str] | None = None,
        interactive: bool | None = None,
        ask: Ask | None = None,
    ) -> None:
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        if interactive is None:
            interactive = _isatty(self.stdin) and _isatty(self.stderr)
        self.interactive = interactive
        self._ask = ask or (lambda _prompt: read_line_from(self.stdin))
        self._lock = asyncio.Lock()

    async def approve(self, request: ApprovalRequest) -> Answer:
        async with self._lock:
            print(describe(request), file=self.stderr)
            if not self.interactive:
                print(
                    "  → declined: no terminal to ask (use --confirm none to allow such "
                    "actions in a trusted sandbox)",
                    file=self.stderr,
                )
                raise no_terminal(request)
            if request.offer:
                print(f"  t = yes, and {request.offer}", file=self.stderr)
                prompt = "  Allow this action? [y = yes, this once / t = for this task / N] "
            else:
                prompt = "  Allow this action? [y/N] "
            print(prompt, end="", file=self.stderr, flush=True)
            answer = await self._ask(prompt)
            said = (answer or "").strip().lower()
            if answer is None:
                print("", file=self.stderr)
            if request.offer and said in ("t", "task"):
                print(f"  → approved for this task: {request.offer}", file=self.stderr)
                return Scope.TASK
            approved = said in ("y", "yes")
            print("  → approved" if approved else "  → declined", file=self.stderr)
            return approved


def no_terminal(request: ApprovalRequest) -> ActionDeclined:
    """The decline when nobody is at a terminal to ask (the text the model reads)."""
    return ActionDeclined(
        f"Declined: {request.tool} needs a person's yes ({request.reason}) and there is no "
        "terminal to ask. Nothing was done. Do not retry it; continue without it or report "
        "that it needs the user's approval.",
        why="there is no terminal to ask",
    )


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
