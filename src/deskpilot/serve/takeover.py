"""Take over: a person drives a session's desktop from the console's live preview, then hands back.

While a session is taken over its agent waits (the run's :class:`~deskpilot.serve.inbox.Inbox`
is paused: no tool call runs, and a call the model chose before the hand-back is not run; the
run's timeout stands still), and the page's pointer and keyboard events go to **that session's
desktop only**: they are sent through the session's own desktop connection (its display),
behind the display's input lock that every session and the MCP server on it share, one event
at a time. Handing back releases any key or button still held, and the model reads a note at
its next turn ("The user took over the screen for 42 s … Their note: …").

Allowed on a session's own sandbox desktop; on this desktop only when the console was started
with ``--takeover-here`` (the person then drives their real screen through the page).

The audit log marks each stretch: ``takeover.started`` and ``takeover.ended`` (how long, how
many clicks and keys, the note). What was typed is never recorded: it may be a password.

Events from the page (screen coordinates; keys as the browser names them,
``KeyboardEvent.key``)::

    {"t": "move", "x": 10, "y": 20}          {"t": "button", "button": "left", "down": true}
    {"t": "wheel", "x": 10, "y": 20, "dy": 1} {"t": "key", "key": "Enter", "down": true}
    {"t": "text", "text": "é"}
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from deskpilot.desktop.base import Desktop
from deskpilot.desktop.keys import MODIFIERS, key_name
from deskpilot.errors import ConfigError, DeskpilotError
from deskpilot.serve.inbox import Inbox

#: Browser key names (``KeyboardEvent.key``) that differ from X keysym names or aliases.
BROWSER_KEYS: dict[str, str] = {
    "Control": "Control_L",
    "Shift": "Shift_L",
    "Alt": "Alt_L",
    "AltGraph": "ISO_Level3_Shift",
    "Meta": "Super_L",
    "OS": "Super_L",
    " ": "space",
    "ContextMenu": "Menu",
    "Dead": "",
    "Unidentified": "",
}
BUTTONS = ("left", "middle", "right")
MAX_EVENTS = 500  # per request
MAX_TEXT = 1000

Emit = Callable[[str, dict[str, Any]], None]


def keysym_for(key: str) -> str | None:
    """The X keysym name for a browser key name, or None when it has none."""
    if key in BROWSER_KEYS:
        return BROWSER_KEYS[key] or None
    if key.lower() in MODIFIERS and len(key) > 1:
        return MODIFIERS[key.lower()]
    return key_name(key)


def hand_back_note(seconds: float, clicks: int, keys: int, note: str) -> str:
    """What the model reads when the person hands the screen back."""
    did = f"{clicks} click{'s' * (clicks != 1)}, {keys} key{'s' * (keys != 1)}"
    said = f" Their note: “{note.strip()}”." if note.strip() else " They left no note."
    return (
        f"The user took over the screen for {seconds:.0f} s ({did}) and has handed it back."
        f"{said} The screen may have changed: look at it again before you act."
    )


class TakeOver:
    """One session's take-over (see the module docstring)."""

    def __init__(
        self,
        desktop: Desktop,
        inbox: Inbox,
        emit: Emit,
        *,
        allowed: bool,
        why_not: str = "",
    ) -> None:
        self.desktop = desktop  # the session's desktop, behind its display's input lock
        self.inbox = inbox
        self.emit = emit
        self.allowed = allowed
        self.why_not = why_not
        self.since: float | None = None
        self.clicks = 0
        self.keys = 0
        self._held_keys: set[str] = set()
        self._held_buttons: set[str] = set()
        self._bounds: tuple[int, int] | None = None

    @property
    def active(self) -> bool:
        return self.since is not None

    def start(self) -> None:
        if not self.allowed:
            raise ConfigError(self.why_not or "this session cannot be taken over")
        if self.active:
            return
        self.since, self.clicks, self.keys = time.monotonic(), 0, 0
        self.inbox.pause()
        self.emit("takeover.started", {"by": "console"})

    async def hand_back(self, note: str = "") -> str:
        """Release what is held, let the agent go on, and return the note the model reads."""
        if self.since is None:
            raise ConfigError("this session is not taken over")
        await self.release()
        seconds = time.monotonic() - self.since
        note = note.strip()[:MAX_TEXT]
        message = hand_back_note(seconds, self.clicks, self.keys, note)
        self.since = None
        self.emit(
            "takeover.ended",
            {"seconds": round(seconds, 1), "clicks": self.clicks, "keys": self.keys, "note": note},
        )
        self.inbox.resume(message)
        return message

    async def release(self) -> None:
        """Let go of every key and button the page left pressed."""
        for button in sorted(self._held_buttons):
            await self.desktop.pointer_button(button, False)  # type: ignore[arg-type]
        for key in sorted(self._held_keys):
            await self.desktop.key_event([key], False)
        self._held_buttons.clear()
        self._held_keys.clear()

    # -- input --------------------------------------------------------------------------------

    async def send(self, events: Any) -> int:
        """Apply the page's events in order; the number applied. ConfigError for a bad one
        (those before it were applied)."""
        if not self.active:
            raise ConfigError("take the session over first (its agent is still in control)")
        if not isinstance(events, list) or len(events) > MAX_EVENTS:
            raise ConfigError(f"events must be a list of at most {MAX_EVENTS} input events")
        if self._bounds is None:
            self._bounds = await self.desktop.screen_size()
        done = 0
        for event in events:
            try:
                await self._one(event)
            except DeskpilotError as exc:
                raise ConfigError(f"input event {done + 1} was not sent: {exc}") from exc
            done += 1
        return done

    def _point(self, event: dict[str, Any]) -> tuple[int, int]:
        x, y = event.get("x"), event.get("y")
        if not isinstance(x, int) or not isinstance(y, int):
            raise ConfigError("x and y must be whole screen pixels")
        width, height = self._bounds or (0, 0)
        if not (0 <= x < width and 0 <= y < height):
            raise ConfigError(f"({x}, {y}) is outside the screen ({width}x{height})")
        return x, y

    async def _one(self, event: Any) -> None:
        if not isinstance(event, dict):
            raise ConfigError("an input event must be an object with t")
        kind = event.get("t")
        if kind == "move":
            await self.desktop.pointer_move(*self._point(event))
        elif kind == "button":
            button, down = event.get("button"), event.get("down")
            if button not in BUTTONS or not isinstance(down, bool):
                raise ConfigError("a button event needs button (left/middle/right) and down")
            if "x" in event:
                await self.desktop.pointer_move(*self._point(event))
            await self.desktop.pointer_button(button, down)
            (self._held_buttons.add if down else self._held_buttons.discard)(button)
            self.clicks += int(down)
        elif kind == "wheel":
            x, y = self._point(event)
            dx, dy = event.get("dx", 0), event.get("dy", 0)
            if not isinstance(dx, int) or not isinstance(dy, int) or max(abs(dx), abs(dy)) > 20:
                raise ConfigError("wheel dx and dy must be whole notches from -20 to 20")
            await self.desktop.wheel(x, y, dx, dy)
        elif kind == "key":
            key, down = event.get("key"), event.get("down")
            sym = keysym_for(key) if isinstance(key, str) and len(key) <= 40 else None
            if sym is None or not isinstance(down, bool):
                return  # a key X has no name for (a dead key, an IME's): nothing to send
            if not down and sym not in self._held_keys:
                return
            await self.desktop.key_event([sym], down)
            (self._held_keys.add if down else self._held_keys.discard)(sym)
            self.keys += int(down)
        elif kind == "text":
            text = event.get("text")
            if not isinstance(text, str) or not 0 < len(text) <= MAX_TEXT:
                raise ConfigError(f"text must be 1 to {MAX_TEXT} characters")
            await self.desktop.type_raw(text)
            self.keys += len(text)
        else:
            raise ConfigError(f"unknown input event {kind!r} (move, button, wheel, key, text)")
