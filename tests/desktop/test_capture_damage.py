"""A live preview never loses a change: what a window draws while a frame is being sent shows
in a later frame.

The cause of issue #28 (``make bench``'s console benchmark stalled on a loaded machine: a
colour flip never reached the watched preview, a card waited for its window): the capturer
(its X11 pixel watch, deskpilot.desktop.x11.preview) asks X to clear ("subtract") the damage it
has read, then grabs. On a sandbox it grabs with a
connection of its own (mss), and python-xlib only sends the subtract with the connection's next
round trip, after the grab. A change drawn between the grab and that late subtract, inside the
box already reported (X reports a bounding box only when it grows), was cleared without ever
being reported: the preview kept the old pixels until something else changed there.

Here the window changes exactly then: each frame the capturer sends makes it draw the next
colour in the same square (from inside ``emit``, after the grab), and every colour must reach
a frame. The check is the frames' own pixels against what the test drew.
"""

from __future__ import annotations

import io
import queue
import threading

import pytest
from PIL import Image
from Xlib import X, display

from deskpilot._wait import wait_for
from deskpilot.sandbox import Sandbox
from deskpilot.serve.capture import Capturer, Frame, Seen
from tests.desktop.input_probe import probe_window

pytestmark = pytest.mark.asyncio(loop_scope="session")

WHITE = (255, 255, 255)
COLOURS = [(230, 30, 30), (30, 200, 30), (30, 30, 230)]
SQUARE = 100  # the square at the window's top left the colours are drawn in


def near(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(abs(x - y) < 40 for x, y in zip(a, b, strict=False))


def square_colour(frame: Frame) -> tuple[int, ...] | None:
    """The colour at the square's centre, if this frame covers it."""
    cx, cy = SQUARE // 2, SQUARE // 2
    if not (frame.x <= cx < frame.x + frame.w and frame.y <= cy < frame.y + frame.h):
        return None
    image = Image.open(io.BytesIO(frame.jpeg)).convert("RGB")
    return tuple(image.getpixel((cx - frame.x, cy - frame.y)))


async def test_a_change_drawn_while_a_frame_is_sent_reaches_the_preview(
    sandbox: Sandbox,
) -> None:
    assert sandbox.info is not None
    d = display.Display(sandbox.info.display)
    screen = d.screen()
    win = probe_window(d, "capture damage probe")
    win.map()
    gc = win.create_gc(foreground=screen.white_pixel)
    d.sync()
    wait_for(
        lambda: win.get_attributes().map_state == X.IsViewable,
        timeout=10,
        what="the probe window to be shown",
    )
    lock = threading.Lock()
    drawn: list[tuple[int, int, int]] = []  # colours drawn, in order
    seen: queue.Queue[tuple[int, ...]] = queue.Queue()

    def draw(rgb: tuple[int, int, int]) -> None:
        with lock:
            gc.change(foreground=(rgb[0] << 16) | (rgb[1] << 8) | rgb[2])
            win.fill_rectangle(gc, 0, 0, SQUARE, SQUARE)
            d.sync()
            drawn.append(rgb)

    def emit(frame: Frame) -> None:
        # in the capture thread, right after a grab: the window changes in the square now
        colour = square_colour(frame)
        if colour is None:
            return
        seen.put(colour)
        shown = [WHITE, *COLOURS]
        if len(drawn) < len(COLOURS) and near(colour, shown[len(drawn)]):
            draw(COLOURS[len(drawn)])

    def noted(_: Seen) -> None:
        return None

    capturer = Capturer("damage", sandbox.info.display, "root", lambda: win.id, emit, noted)
    capturer.want(full=True, thumbs=False)
    capturer.start()
    colours: list[tuple[int, ...]] = []
    try:
        for want in COLOURS:

            def shows(want: tuple[int, int, int] = want) -> bool:
                while not seen.empty():
                    colours.append(seen.get_nowait())
                return any(near(c, want) for c in colours)

            try:
                wait_for(shows, timeout=10, what=f"a frame showing rgb{want}")
            except TimeoutError as exc:
                raise AssertionError(
                    f"drawn {drawn}, but the preview never showed rgb{want}: the frames showed "
                    f"{colours[-5:]} (a change drawn while a frame was sent was lost)"
                ) from exc
    finally:
        capturer.stop()
        capturer.join(10)
        win.destroy()
        d.close()
    assert not capturer.is_alive()
