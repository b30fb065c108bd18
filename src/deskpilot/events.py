"""One event stream per run: what happened, in order ("chips" in the CLI, rows in the audit log).

Kinds (``Event.kind``):
    run.started        {goal, model, window}
    model.text         {text}
    tool.call          {tool, args, call_id, surface}
    confirm.asked      {tool, args, call_id, reason, risk}
    confirm.answered   {tool, call_id, approved, by}
    tool.result        {tool, call_id, ok, summary, text, refused?}   (+ images)
    run.finished       {outcome, answer, steps}
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deskpilot.desktop.base import Rect


@dataclass(frozen=True)
class Image:
    """An image attached to a result (screenshots).

    ``screen_rect`` is the part of the screen (root coordinates) the image shows, scaled to
    ``width``×``height``: the door blacks out blocked windows wherever they overlap it."""

    data: bytes
    mime: str = "image/png"
    width: int = 0
    height: int = 0
    screen_rect: Rect | None = None


@dataclass(frozen=True)
class Event:
    kind: str
    data: dict[str, Any]
    run_id: str = ""
    images: tuple[Image, ...] = ()
    ts: float = field(default_factory=time.time)


EventSink = Callable[[Event], None]


def discard(event: Event) -> None:
    """An event sink that drops everything."""


class Fanout:
    """Deliver each event to several sinks, in order."""

    def __init__(self, *sinks: EventSink) -> None:
        self.sinks = list(sinks)

    def add(self, sink: EventSink) -> None:
        self.sinks.append(sink)

    def __call__(self, event: Event) -> None:
        for sink in self.sinks:
            sink(event)
