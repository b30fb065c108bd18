"""WindowTrees.element_at on a web engine: Chromium answers a hit-test at a new point with a
guess (the last answer whose box holds the point, or its own copy of the tree's box) and
sends the point to the renderer, whose answer replaces the guess when it comes. The point is
asked again until the answer changes (the guess does not change by itself, so a changed answer
is the renderer's), or until the renderer has had as long as its answers take (HIT_GAP_S
before any was timed), when the unchanged answer is taken. An answer a person cannot see
(Chromium's guess at a collapsed <select>: its hidden last option) is asked again until a shown
one comes, else its nearest shown ancestor is taken."""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import pytest

from deskpilot.desktop.atspi import frames
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.cache import Located
from deskpilot.desktop.atspi.frames import WindowTrees
from deskpilot.desktop.atspi.point_hits import HIT_GAP_S, HIT_MARGIN, HIT_MIN_S, PointHits
from deskpilot.desktop.base import AppIdentity, LiveElement, Rect, WindowInfo

pytestmark = pytest.mark.asyncio

FRAME = "/org/a11y/atspi/accessible/1"
GUESS = "/org/a11y/atspi/accessible/40"  # an overlay's box, where the button inside it is
BUTTON = "/org/a11y/atspi/accessible/41"


class _NoBus:
    connected = True

    def add_message_handler(self, handler: Any) -> None:
        pass


class _Chromium(AtspiBus):
    """A renderer whose answer comes ``late`` seconds after the first question (never, for
    None); its answer is ``answer``, the engine's guess until then ``guess``."""

    def __init__(self, late: float | None = 0.01, answer: str = BUTTON, guess: str = GUESS) -> None:
        super().__init__(_NoBus())  # type: ignore[arg-type]
        self.late, self.answer, self.guess = late, answer, guess
        self.asked: list[float] = []
        self.answers: list[str] = []

    def answered(self) -> bool:
        """Whether the renderer's answer is in by the last question."""
        return self.late is not None and self.asked[-1] - self.asked[0] >= self.late

    async def toolkit(self, bus_name: str) -> str:
        return "Chromium"

    async def call(
        self, bus: str, path: str, iface: str, member: str, *args: Any, **kw: Any
    ) -> Any:
        assert member == "GetAccessibleAtPoint"
        if path != FRAME:  # the deepest element answers with itself: no deeper one
            return [(bus, path)]
        self.asked.append(time.monotonic())
        self.answers.append(self.answer if self.answered() else self.guess)
        return [(bus, self.answers[-1])]


SHOWN = frozenset({"showing", "visible"})
SELECT = "/org/a11y/atspi/accessible/50"
POPUP = "/org/a11y/atspi/accessible/51"  # a collapsed select's menu: hidden
OPTION = "/org/a11y/atspi/accessible/52"  # its last option: hidden


class _Elements:
    async def inspect(self, key: tuple[str, str], pid: int | None = None) -> LiveElement:
        parents = {OPTION: POPUP, POPUP: SELECT, SELECT: FRAME}
        parent = (key[0], parents[key[1]]) if key[1] in parents else None
        states = frozenset({"enabled"}) if key[1] in (OPTION, POPUP) else SHOWN
        return LiveElement(key, 1, "push-button", "Save", parent, states, None)


def _window() -> WindowInfo:
    app = AppIdentity(app_id="chromium", name="Chromium", executable="chromium")
    return WindowInfo(
        handle=2, title="page", app=app, pid=1, geometry=Rect(0, 0, 800, 600), active=True
    )


@pytest.mark.parametrize("late", [0.2, None])
async def test_a_hidden_answer_is_not_what_a_person_hits(
    late: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A renderer later than the gap (a loaded machine): its answer is waited for; one that
    never comes leaves the hidden option's nearest shown ancestor, the select."""
    monkeypatch.setattr(frames, "HIDDEN_HIT_S", 0.5)
    bus = _Chromium(late, answer=SELECT, guess=OPTION)  # at a collapsed select
    trees = WindowTrees(bus, _Elements())  # type: ignore[arg-type]
    window = _window()
    trees.cache.located[window.handle] = Located(":1.5", FRAME, (0, 0), (0, 0))
    started = time.monotonic()
    hit = await trees.element_at(window, 100, 100)
    took = time.monotonic() - started
    assert hit is not None and hit.key == (":1.5", SELECT)
    if late is not None:  # the renderer's answer, taken when it came
        assert late <= took < frames.HIDDEN_HIT_S
    else:  # asked until the deadline, then the select
        assert took >= frames.HIDDEN_HIT_S and len(bus.asked) > 3


def _trees(bus: _Chromium) -> tuple[WindowTrees, WindowInfo]:
    trees = WindowTrees(bus, _Elements())  # type: ignore[arg-type]
    window = _window()
    trees.cache.located[window.handle] = Located(":1.5", FRAME, (0, 0), (0, 0))
    return trees, window


async def test_a_web_hit_test_takes_the_renderers_answer_as_soon_as_it_comes() -> None:
    bus = _Chromium(late=0.01)
    trees, window = _trees(bus)
    hit = await trees.element_at(window, 100, 100)
    assert hit is not None and hit.key == (":1.5", BUTTON)
    # asked until the answer changed, not once more: the guesses, then the renderer's answer
    assert bus.answers[-1] == BUTTON and set(bus.answers[:-1]) == {GUESS}
    assert bus.asked[-1] - bus.asked[0] >= 0.01


async def test_an_answer_that_never_changes_is_taken_once_the_renderer_had_its_time() -> None:
    """A guess that was right: the renderer's answer is the same element. Before any answer of
    the renderer was timed it is given HIT_GAP_S (the gap waited before)."""
    bus = _Chromium(late=None)
    trees, window = _trees(bus)
    hit = await trees.element_at(window, 100, 100)
    assert hit is not None and hit.key == (":1.5", GUESS)
    assert len(bus.asked) > 2 and bus.asked[-1] - bus.asked[0] >= HIT_GAP_S * 0.9


async def test_the_renderers_time_is_learnt_per_app_and_bounded() -> None:
    hits = PointHits(_Chromium())
    assert hits.patience(":1.5") == HIT_GAP_S  # nothing timed yet
    for took in (0.002, 0.004, 0.003):
        hits._timed.setdefault(":1.5", deque()).append(took)
    assert hits.patience(":1.5") == max(HIT_MIN_S, HIT_MARGIN * 0.004) < HIT_GAP_S
    hits._timed[":1.5"].append(0.03)  # a loaded moment: the slowest counts, up to the cap
    assert hits.patience(":1.5") == HIT_GAP_S
    assert hits.patience(":1.9") == HIT_GAP_S  # another app: its own
    # a timed answer comes from renderers(): the fake's answer 10 ms after the question
    bus = _Chromium(late=0.01)
    timed = PointHits(bus)
    assert await timed.renderers(":1.5", FRAME, (1, 1)) == (":1.5", BUTTON)
    assert timed._timed[":1.5"][0] >= 0.01 and timed.patience(":1.5") <= HIT_GAP_S


class _Unanswered(_Chromium):
    """The first question is not answered (a call that failed): the frame itself comes back."""

    async def call(
        self, bus: str, path: str, iface: str, member: str, *args: Any, **kw: Any
    ) -> Any:
        if path == FRAME and not self.asked:
            self.asked.append(time.monotonic())
            self.answers.append(FRAME)
            return [("", "/org/a11y/atspi/null")]
        return await super().call(bus, path, iface, member, *args, **kw)


async def test_a_first_question_left_unanswered_makes_the_next_answer_the_guess() -> None:
    """An answer that differs from none at all is the engine's first guess, not its
    renderer's answer: the renderer's is still waited for."""
    bus = _Unanswered(late=0.02)
    trees, window = _trees(bus)
    hit = await trees.element_at(window, 100, 100)
    assert hit is not None and hit.key == (":1.5", BUTTON)
    assert bus.answers[0] == FRAME and GUESS in bus.answers and bus.answers[-1] == BUTTON


class _ThirdAnswer(_Chromium):
    """A renderer whose answer is there from the third question on (counted, not timed)."""

    def answered(self) -> bool:
        return len(self.asked) >= 3


async def test_the_point_is_asked_until_the_answer_changes_not_twice() -> None:
    """Two questions a gap apart took the guess when the renderer had not answered by the
    second; asking until the answer changes (within the renderer's time) gets its answer."""
    bus = _ThirdAnswer()
    trees, window = _trees(bus)
    hit = await trees.element_at(window, 100, 100)
    assert hit is not None and hit.key == (":1.5", BUTTON)
    assert bus.answers == [GUESS, GUESS, BUTTON]  # and no question after the answer
