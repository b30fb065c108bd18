"""What every vendor translator provides: a conversation over one vendor's wire JSON.

A :class:`Conversation` is pure: it builds request bodies, parses responses into
:class:`~deskpilot.native.calls.ComputerCall`/``FunctionCall`` items (coordinates already
scaled to target pixels with its :class:`~deskpilot.native.scaling.Viewport`), and renders the
turn's results back into the vendor's shape. HTTP is somebody else's job (the driver's ``send``,
or an agent-loop provider).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from deskpilot.errors import DeskpilotError, InvalidArguments, ProviderError
from deskpilot.native.actions import Action
from deskpilot.native.calls import Item, Output
from deskpilot.native.scaling import Vendor, Viewport

#: Default API base URLs (as the agent loop's providers use them); ``path`` goes under these.
BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com/v1beta",
}

#: Wheel notches per 100 pixels of a pixel-based scroll delta (OpenAI, Gemini magnitudes).
PIXELS_PER_NOTCH = 100
NOT_EXECUTED = "Not executed: an earlier computer action in this turn failed."


def translated(
    translate: Callable[[], Iterable[Action]], failed: str
) -> tuple[tuple[Action, ...], str | None]:
    """Run one vendor translation of a model's call: its actions, or no actions and the
    ``problem`` text the model gets back (``failed: why``). A model's malformed input (a string
    where a list belongs, a word where a number belongs) is a problem, never an exception."""
    try:
        return tuple(translate()), None
    except InvalidArguments as exc:
        return (), f"{failed}: {exc}"
    except (KeyError, TypeError, ValueError, AttributeError):
        return (), f"{failed}: malformed input"


def parse_turn(conv: Conversation, response: Mapping[str, Any]) -> Turn:
    """``conv.parse(response)``; a reply in an unexpected shape (``null`` where a call belongs, a
    string for a list) is a :class:`~deskpilot.errors.ProviderError` naming it, not a crash."""
    try:
        return conv.parse(response)
    except DeskpilotError:
        raise
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
        raise ProviderError(
            f"{conv.vendor}: unexpected reply shape ({type(exc).__name__}: {exc}): "
            f"{str(dict(response))[:200]}"
        ) from exc


def declined_message(call_id: str, why: str = "the user declined") -> str:
    return (
        f"Declined: computer call {call_id} was not run ({why}). Do not retry it; continue "
        "without it or tell the user it needs their approval."
    )


def notches(pixels: int) -> int:
    """A pixel scroll delta → wheel notches (at least one when non-zero, sign kept)."""
    if pixels == 0:
        return 0
    count = max(1, (2 * abs(pixels) + PIXELS_PER_NOTCH) // (2 * PIXELS_PER_NOTCH))  # half up
    return count if pixels > 0 else -count


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass
class Turn:
    """One parsed model response: its calls (in order) and any text it said."""

    items: list[Item] = field(default_factory=list)
    text: str = ""

    @property
    def done(self) -> bool:
        return not self.items


class Conversation(Protocol):
    """One vendor conversation (see the module docstring)."""

    vendor: Vendor
    model: str
    viewport: Viewport
    window: str | None  # the target window, or None for the whole screen
    #: an answer per computer call needs its own screenshot (else: the last of a turn gets it)
    screenshot_every_call: bool

    @property
    def path(self) -> str:
        """The request path under the vendor's base URL (:data:`BASE_URLS`)."""
        ...

    def headers(self, api_key: str) -> dict[str, str]: ...

    def tools(self) -> list[dict[str, Any]]:
        """The ``tools`` entries: the computer tool plus any local functions."""
        ...

    def start(self, goal: str, screenshot: bytes | None) -> dict[str, Any]:
        """The first request body (``screenshot`` already encoded for the viewport)."""
        ...

    def parse(self, response: Mapping[str, Any]) -> Turn: ...

    def reply(self, outputs: Sequence[Output]) -> dict[str, Any]:
        """The next request body, carrying the turn's results in the original call order."""
        ...

    def restart(self) -> None:
        """Forget the conversation's history (the next turn starts a fresh session)."""
        ...

    def state(self) -> dict[str, Any]:
        """The history, as JSON-able data (for checkpoints)."""
        ...

    def load(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state`."""
        ...
