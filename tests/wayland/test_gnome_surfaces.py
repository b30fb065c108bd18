"""Surfaces on a GNOME (headless mutter) sandbox. Eval: ``DESKPILOT_BACKEND=gnome deskpilot
eval`` runs a trial there, and its window checks read the session's windows through the GNOME
backend's own titles (AT-SPI frames, on connections of their own): Xwayland's X11 titles would
show none of its native Wayland dialogs. The console's capture thread: a keyframe of the
screen, then a small patch where typed text was drawn (the GNOME pixel watch)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from deskpilot._wait import wait_for
from deskpilot.desktop.wayland.gnome_windows import Frame as GnomeFrame
from deskpilot.desktop.wayland.gnome_windows import read_frames
from deskpilot.sandbox import Sandbox
from tests.wayland.conftest import (
    focused_window_stream,
    frames_by_pid,
    oracle_trial,
    require,
    texts_of,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.app]

#: two native Wayland dialogs: one answered, one that must stay (a window check that sees it)
TASK = """\
goal = "Answer the dialog asking your name with 'Ada' (OK); leave the other open."
family = "gtk-dialog"
apps = ["zenity"]
timeout = 90
max_steps = 10

[[setup]]
launch = ["zenity", "--info", "--title=Keep me", "--text=Leave this open"]
window = "^Keep me$"

[[setup]]
launch = ["zenity", "--entry", "--title=Welcome", "--text=What is your name?"]
window = "^Welcome$"
capture = "dialog"

[[check]]
kind = "output"
of = "dialog"
stdout = "Ada"
exit_code = 0

[[check]]
kind = "window"
title = "^Keep me$"

[[check]]
kind = "window"
title = "^Welcome$"
absent = true

[[oracle]]
tool = "read_screen_ax"
args = { windowID = { window = "^Welcome$" } }

[[oracle]]
tool = "perform_sequence"
args = { windowID = { window = "^Welcome$" }, steps = [
  {action = "fill", elementID = {find = {role = "text", states = ["editable"]}}, text = "Ada"},
  { action = "click", elementID = { find = { role = "push-button", name = "OK" } } },
] }

[[oracle]]
tool = "list_windows"
until = { gone = "^Welcome$" }
"""


@pytest.mark.trial
def test_an_eval_trial_with_window_checks_runs_on_a_gnome_sandbox(tmp_path: Path) -> None:
    require("gnome")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "gnome.answer-one.toml").write_text(TASK)
    result = oracle_trial(tmp_path, "gnome", str(suite))
    assert result["sandbox"] == "gnome" and result["status"] == "passed", result
    output, kept, gone = result["checks"]
    assert output["detail"] == "dialog exited with 0 and printed 'Ada'"
    # the Wayland dialog left open is seen, the answered one is not
    assert kept["ok"] and "'Keep me'" in kept["detail"], kept
    assert gone["ok"] and "Welcome" not in gone["detail"], gone


@pytest.fixture(scope="module")
def gnome_box() -> Iterator[Sandbox]:
    """One GNOME sandbox for the module's preview tests (the eval trial starts its own)."""
    require("gnome")
    with Sandbox(kind="gnome", width=1024, height=768) as sb:
        yield sb


async def _handle_of(session_bus: str, title: str) -> int | None:
    return next((f.handle for f in await read_frames(session_bus) if f.title == title), None)


async def _type(session_bus: str, text: str) -> None:
    """Keys into the focused window through a Mutter session of the test's own."""
    session = await focused_window_stream(session_bus)
    try:
        await session.type_text(text)
    finally:
        await session.close()


def test_the_console_preview_patches_what_was_drawn(gnome_box: Sandbox) -> None:
    from deskpilot.serve.capture import Capturer, Frame, Seen

    sb = gnome_box
    assert sb.info is not None
    bus = sb.info.session_bus
    entry = sb.spawn(["zenity", "--entry", "--title=Drawn", "--text=type here"])
    wait_for(lambda: frames_by_pid(bus).get(entry.pid), timeout=30, what="the entry")
    handle = wait_for(
        lambda: asyncio.run(_handle_of(bus, "Drawn")), timeout=20, what="the entry's frame"
    )
    frames: list[Frame] = []
    seen: list[Seen] = []
    capturer = Capturer(
        "s1", sb.info.display, "root", lambda: handle, frames.append, seen.append, backend="gnome"
    )
    capturer.start()
    try:
        capturer.want(full=True, thumbs=False)
        key = wait_for(
            lambda: next((f for f in frames if f.kind == "key"), None),
            timeout=20,
            what="a keyframe",
        )
        # a Wayland window has no place on the monitor: its preview is the whole screen
        assert (key.width, key.height, key.left, key.top) == (1024, 768, 0, 0)
        shown = Image.open(io.BytesIO(key.jpeg)).convert("L")
        before = len(frames)
        asyncio.run(_type(bus, "drawn text"))
        wait_for(
            lambda: "drawn text" in texts_of(bus, entry.pid),
            timeout=20,
            what="the typed text in the entry",
        )

        def changed(frame: Frame) -> int:
            image = Image.open(io.BytesIO(frame.jpeg)).convert("L")
            under = shown.crop((frame.x, frame.y, frame.x + frame.w, frame.y + frame.h))
            return (
                ImageChops.difference(image, under)
                .point(lambda v: 255 if v > 96 else 0)
                .histogram()[255]
            )

        patch = wait_for(
            lambda: next(
                (f for f in frames[before:] if f.kind == "patch" and changed(f) > 50), None
            ),
            timeout=20,
            what="a patch showing the typed text",
        )
        # the box that differs from the frame shown before, not the whole screen again — nor
        # any patch after the keyframe (each keyframe used to be followed by the whole screen
        # as a patch: the first change was judged against no frame)
        assert patch.w * patch.h < 1024 * 768 // 4, (patch.x, patch.y, patch.w, patch.h)
        whole = [f.seq for f in frames if f.kind == "patch" and f.w * f.h == 1024 * 768]
        assert not whole, whole
        assert any(s.title == "Drawn" for s in seen), seen
    finally:
        capturer.stop()
        capturer.join(timeout=10)
        entry.kill()
        entry.wait(timeout=10)


async def _frame_of(session_bus: str, title: str) -> GnomeFrame | None:
    return next((f for f in await read_frames(session_bus) if f.title == title), None)


def test_the_console_preview_shows_an_x11_window_at_its_place(gnome_box: Sandbox) -> None:
    """An X11 app on Xwayland knows its place: the preview shows that part of the monitor."""
    from deskpilot.serve.capture import Capturer
    from deskpilot.serve.capture import Frame as Shown

    sb = gnome_box
    assert sb.info is not None
    bus = sb.info.session_bus
    app = sb.spawn(
        ["zenity", "--info", "--title=X11 here", "--text=on Xwayland"], env={"GDK_BACKEND": "x11"}
    )
    try:
        frame = wait_for(
            lambda: _placed(asyncio.run(_frame_of(bus, "X11 here"))),
            timeout=30,
            what="the X11 window's frame with its place",
        )
        shown: list[Shown] = []
        capturer = Capturer(
            "s2",
            sb.info.display,
            "root",
            lambda: frame.handle,
            shown.append,
            lambda _seen: None,
            backend="gnome",
        )
        capturer.start()
        try:
            capturer.want(full=True, thumbs=False)
            key = wait_for(
                lambda: next((f for f in shown if f.kind == "key"), None),
                timeout=20,
                what="a keyframe",
            )
            # its place as read before the capture or after it: mutter may move a window a
            # pixel once it has its final size (CI, 3 December: 427,323 then 428,324)
            later = asyncio.run(_frame_of(bus, "X11 here"))
            assert later is not None
            places = {(f.place, f.size) for f in (frame, later)}
            assert ((key.left, key.top), (key.width, key.height)) in places, places
            image = Image.open(io.BytesIO(key.jpeg)).convert("L")
            assert image.size == (key.width, key.height)
            assert len(image.getcolors(maxcolors=1 << 16) or []) > 8  # the dialog, not a blank
        finally:
            capturer.stop()
            capturer.join(timeout=10)
    finally:
        app.kill()
        app.wait(timeout=10)


def _placed(frame: GnomeFrame | None) -> GnomeFrame | None:
    return frame if frame is not None and frame.placed else None
