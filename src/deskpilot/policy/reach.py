"""What a call reaches: declared by its tool, resolved by the door before the tool runs.

A tool says what it would touch with a ``reach`` hook (``@tool(reach=...)``,
:mod:`deskpilot.tools.reach`): the windows it reads or acts on, the screen points it presses,
the elements it activates or fills, the keys it sends, the apps it starts. The policy
(:func:`deskpilot.policy.door.decide`) refuses a blocked app found anywhere in it, and judges
its effect (consequential or not), before anything runs.

A tool that declares nothing gets the default (:func:`deskpilot.tools.gate.default_reach`):
the window its ``windowID`` (or ``window``) argument names, else the target window a call
without one would use (tracked target → the run's bound window → the active window). So a new
tool cannot forget the blocklist; a tool that touches no window at all says so with
``reach=NOTHING``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from deskpilot.desktop.base import AppEntry, WindowInfo


@dataclass(frozen=True)
class Activation:
    """An element (by its element ID) that the call clicks, presses, fills or focuses."""

    element_id: str
    how: Literal["click", "press", "fill", "focus"] = "click"
    text: str | None = None  # what a fill puts in


@dataclass(frozen=True)
class Keys:
    """Keys the call sends to whatever has the focus in ``window`` (None: the active window).

    ``keysyms`` is one combination (modifiers first); ``text`` is typed text; ``element_id`` is
    focused first (``type`` into an element); otherwise the keys go to the element with the
    focus now, or to ``maybe_focus``."""

    keysyms: tuple[str, ...] = ()
    text: str = ""
    shown: str = ""  # as the caller wrote it ("ctrl+enter")
    element_id: str | None = None
    window: WindowInfo | None = None
    #: an element an earlier step of the same call touched: it may hold the focus by then
    maybe_focus: str | None = None


@dataclass(frozen=True)
class Point:
    """A screen point (root coordinates) the call presses, or only moves over.

    ``in_window``: the point is pressed in the call's window (:attr:`Reach.window`), which is
    raised for the press when another window covers it there (the element tools' pointer
    steps); else in whatever window is on top at the point (a native computer call's raw
    point)."""

    x: int
    y: int
    presses: bool = True
    in_window: bool = False


@dataclass
class Reach:
    """Everything one call would touch. ``window`` is the one its element IDs belong to."""

    window: WindowInfo | None = None
    windows: list[WindowInfo] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    activations: list[Activation] = field(default_factory=list)
    keys: list[Keys] = field(default_factory=list)
    apps: list[AppEntry] = field(default_factory=list)

    @classmethod
    def of_window(cls, window: WindowInfo | None) -> Reach:
        return cls(window=window, windows=[window] if window is not None else [])

    def all_windows(self) -> list[WindowInfo]:
        out = list(self.windows)
        if self.window is not None and self.window not in out:
            out.append(self.window)
        out += [k.window for k in self.keys if k.window is not None and k.window not in out]
        return out
