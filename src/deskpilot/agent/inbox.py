"""A running agent's inbox: what a person says to it mid-run, and the pause while they drive.

::

    inbox = Inbox()
    run = AgentRun(provider, tools, ctx, conversation, options, inbox=inbox)
    inbox.post("Use the second spreadsheet, not the first")   # the next model turn sees it
    inbox.pause()                                             # a person takes the screen over
    inbox.resume("I logged in for you")                       # …and hands it back with a note

The loop asks the inbox at the start of every model turn (:meth:`Inbox.gate`, then
:meth:`Inbox.take`): it waits while the inbox is paused, and every message posted since the
last turn becomes a user message of the conversation before the model is asked again (as a
chat's next user turn does). Before each tool call the loop waits again, and a call decided
before a take-over is not run (the screen changed under it; the model reads why). The run's
timeout stands still while it is paused.

Pure asyncio, no desktop and no model: a console, a chat or a test can hold one.
"""

from __future__ import annotations

import asyncio
import time

#: What a tool call decided before a take-over gets instead of running.
NOT_RUN_TAKEN_OVER = (
    "Not run: the user took over the screen before this call ran, so what it aimed at may have "
    "changed. Read the user's note, look at the screen again, then decide."
)


class Inbox:
    """Messages for the next model turn, and a pause switch (see the module docstring)."""

    def __init__(self) -> None:
        self._messages: list[str] = []
        self._running = asyncio.Event()
        self._running.set()
        self._paused_at: float | None = None
        #: how many times the inbox was paused (a loop compares it across a turn)
        self.pauses = 0

    # -- the person's side --------------------------------------------------------------------

    def post(self, text: str) -> None:
        """A message for the model's next turn."""
        if text.strip():
            self._messages.append(text.strip())

    def pause(self) -> None:
        """Hold the agent before its next model turn or tool call (idempotent)."""
        if self._paused_at is None:
            self._paused_at = time.monotonic()
            self.pauses += 1
            self._running.clear()

    def resume(self, note: str = "") -> float:
        """Let the agent go on; ``note`` is posted first. Returns the seconds paused."""
        self.post(note)
        if self._paused_at is None:
            return 0.0
        held, self._paused_at = time.monotonic() - self._paused_at, None
        self._running.set()
        return held

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    @property
    def waiting(self) -> int:
        """Messages not yet taken by a turn."""
        return len(self._messages)

    # -- the loop's side ----------------------------------------------------------------------

    async def gate(self) -> float:
        """Wait while paused; the seconds waited (0 when not paused). (A run calls it through
        ``StoppableRun._gate``, which stops its timeout meanwhile.)"""
        if self._running.is_set():
            return 0.0
        start = time.monotonic()
        await self._running.wait()
        return time.monotonic() - start

    def take(self) -> list[str]:
        """Every message posted since the last call, oldest first."""
        taken, self._messages = self._messages, []
        return taken
