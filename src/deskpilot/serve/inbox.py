"""A console session's inbox: what a person says to its agent mid-run, and the pause while they
drive.

::

    inbox = Inbox()
    await computer_use_task(goal, ..., inbox=inbox, before_call=inbox.before_call)
    inbox.post("Use the second spreadsheet, not the first")   # the next model turn sees it
    inbox.pause()                                             # a person takes the screen over
    inbox.resume("I logged in for you")                       # …and hands it back with a note

It fits the agent loop's two hooks (:mod:`deskpilot.agent.loop`):

* ``inbox`` — the loop calls :meth:`Inbox.take` before every model turn: every message posted
  since the last turn becomes a user message of the conversation (as a chat's next user turn
  does);
* ``before_call`` — the loop awaits :meth:`Inbox.before_call` before each call the model asked
  for: it waits while the inbox is paused (the loop's clock stands still meanwhile), and a call
  of a turn that began before or during a take-over is not run — the screen changed under it;
  the model reads why, then the note, at its next turn.

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
        #: how many times the inbox was paused
        self.pauses = 0
        self._turn_pauses = 0  # ``pauses`` when the current model turn began (at take())

    # -- the person's side --------------------------------------------------------------------

    def post(self, text: str) -> None:
        """A message for the model's next turn."""
        if text.strip():
            self._messages.append(text.strip())

    def pause(self) -> None:
        """Hold the agent before its next tool call (idempotent)."""
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

    def take(self) -> list[str]:
        """Every message posted since the last call, oldest first (a model turn begins)."""
        # a turn begun while a person holds the screen is decided on a screen about to change:
        # none of its calls will run (-1 never equals ``pauses``)
        self._turn_pauses = -1 if self.paused else self.pauses
        taken, self._messages = self._messages, []
        return taken

    async def gate(self) -> float:
        """Wait while paused; the seconds waited (0 when not paused)."""
        if self._running.is_set():
            return 0.0
        start = time.monotonic()
        await self._running.wait()
        return time.monotonic() - start

    async def before_call(self) -> str | None:
        """The loop's ``before_call`` hook: wait while a person holds the screen; a call decided
        before they took it over is answered with :data:`NOT_RUN_TAKEN_OVER` instead of run."""
        await self.gate()
        return NOT_RUN_TAKEN_OVER if self.pauses != self._turn_pauses else None
