"""What every vendor's computer-use wire provides, and the helpers they share (pure).

A :class:`ComputerWire` is one model conversation in a vendor's computer-use format. It builds
request bodies, parses responses into :class:`~deskpilot.native.calls.ComputerCall` /
``FunctionCall`` items (coordinates already scaled to target pixels with its
:class:`~deskpilot.native.scaling.Viewport`), and renders a turn's results back into the
vendor's shape. It never sends anything: the vendor's provider
(:mod:`deskpilot.agent.providers`) posts the bodies with its HTTP client, the same client its
function calling uses.

The conversation's state moves with the calls: :meth:`~ComputerWire.say` (a user message:
the goal with the first screenshot, a note from the runtime, a message the user sent while the
run goes on), :meth:`~ComputerWire.parse` (the model's reply), :meth:`~ComputerWire.reply`
(the results); :meth:`~ComputerWire.body` is the next request for that state, and
``tools_off`` the fields that make it the run's last, tools-free request.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from deskpilot.errors import DeskpilotError, InvalidArguments, ProviderError
from deskpilot.native.actions import Action
from deskpilot.native.calls import Item, Output
from deskpilot.native.scaling import Viewport
from deskpilot.tools.base import ToolSpec

#: Wheel notches per 100 pixels of a pixel-based scroll delta (OpenAI, Gemini magnitudes).
PIXELS_PER_NOTCH = 100
NOT_EXECUTED = "Not executed: an earlier computer action in this turn failed."
#: What replaces an image that is no longer sent (the newest few are).
OMITTED_IMAGE = "[an older image was omitted to save context]"


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


def parse_turn(wire: ComputerWire, response: Mapping[str, Any]) -> Turn:
    """``wire.parse(response)``; a reply in an unexpected shape (``null`` where a call belongs, a
    string for a list) is a :class:`~deskpilot.errors.ProviderError` naming it, not a crash."""
    try:
        return wire.parse(response)
    except DeskpilotError:
        raise
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
        raise ProviderError(
            f"{wire.vendor}: unexpected reply shape ({type(exc).__name__}: {exc}): "
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


def int_counts(usage: Any) -> dict[str, int]:
    """A reply's usage object → its integer counts (tokens…), as the vendor named them."""
    if not isinstance(usage, Mapping):
        return {}
    return {str(k): int(v) for k, v in usage.items() if isinstance(v, int)}


@dataclass
class WireSetup:
    """What a computer-use conversation is opened with."""

    model: str
    viewport: Viewport  # updated when a capture shows the target changed size
    window: str | None = None  # the target window, or None for the whole screen
    functions: Sequence[ToolSpec] = ()  # local tools declared beside the computer tool
    instructions: str | None = None  # the system prompt


@dataclass
class Turn:
    """One parsed model response: its calls (in order), any text it said, its usage counts."""

    items: list[Item] = field(default_factory=list)
    text: str = ""
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return not self.items


class ComputerWire(Protocol):
    """One vendor conversation over its computer-use wire (see the module docstring)."""

    vendor: str
    setup: WireSetup
    #: an answer per computer call needs its own screenshot (else: the last of a turn gets it)
    screenshot_every_call: bool
    #: what a request adds to switch tool use off (the run's last, tools-free call)
    tools_off: ClassVar[Mapping[str, Any]]

    def headers(self) -> dict[str, str]:
        """Headers this conversation adds to the provider's own (a beta flag)."""
        ...

    def tools(self) -> list[dict[str, Any]]:
        """The ``tools`` entries: the computer tool plus any local functions."""
        ...

    def parse(self, response: Mapping[str, Any]) -> Turn: ...

    def reply(self, outputs: Sequence[Output]) -> dict[str, Any]:
        """Answer the last turn (results in the original call order); the next body."""
        ...

    def say(self, text: str, screenshot: bytes | None = None) -> dict[str, Any]:
        """Add a user message to the next request (after the results, if any; ``screenshot``
        already encoded for the viewport); the body."""
        ...

    def body(self) -> dict[str, Any]:
        """The next request."""
        ...

    def pruned(self, body: Mapping[str, Any], keep: int) -> dict[str, Any]:
        """``body`` with all but the newest ``keep`` images replaced by :data:`OMITTED_IMAGE`
        (a copy: bodies share lists with the history)."""
        ...

    def without_calls(self, response: Mapping[str, Any]) -> dict[str, Any]:
        """``response`` with every tool call removed (its text stays): the answer to a final
        request, from which nothing may run."""
        ...

    def restart(self) -> None:
        """Forget the conversation's history (the next turn starts a fresh conversation)."""
        ...

    def state(self) -> dict[str, Any]:
        """The history, as JSON-able data (for checkpoints)."""
        ...

    def load(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state`."""
        ...
