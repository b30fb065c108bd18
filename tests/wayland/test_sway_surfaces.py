"""Every surface once on a headless sway (issue 20 item 5), beside the tools
(test_tools_sway.py: CLI, MCP, run): native computer use with its coordinate contract, page
tools in the agent browser, an eval trial on a sway sandbox, and the console's live preview.

Effects are checked outside the tools: the clicks a target window logs as its display server
reports them, the title a page gives itself in sway's tree, the trial's own check of the app's
output, the preview's pixels against a capture made apart from it.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from deskpilot.native.actions import Click
from deskpilot.native.executor import NativeExecutor
from deskpilot.native.scaling import Size, Viewport
from deskpilot.tools.builtin import all_tools
from deskpilot.tools.toolset import ToolSet
from tests.desktop.native_targets import COLOURS, HALF, TITLE
from tests.desktop.test_native_scaling import colour_box
from tests.wayland.conftest import oracle_trial
from tests.wayland.sway_rig import FIXTURES, SwayRig, sway_rig

__all__ = ["sway_rig"]

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.sandbox, pytest.mark.app]

TARGETS_APP = Path(__file__).parents[1] / "desktop" / "native_targets.py"
TARGETS = [(7, 9), (300, 200), (592, 391), (123, 345), (451, 77)]


async def _targets(rig: SwayRig, clicks: Path) -> WindowInfo:
    """The X11 target window (python-xlib: on Xwayland), drawn."""
    clicks.touch()
    rig.give(clicks)
    points = [f"{x},{y}" for x, y in TARGETS]
    window = await _spawn_plain(
        rig, [sys.executable, str(TARGETS_APP), str(clicks), "600", "400", *points]
    )

    async def drawn() -> bool:
        img = Image.open(io.BytesIO(await rig.desktop.capture(window)))
        return all(colour_box(img, c) for c in COLOURS[: len(TARGETS)])

    await async_wait_for(drawn, timeout=20, what="the targets to be drawn")
    return window


async def _spawn_plain(rig: SwayRig, argv: list[str]) -> WindowInfo:
    """An app with no accessibility tree: its window, without waiting for a tree."""
    before = await rig.desktop.window_handles()
    rig.procs.append(rig.sandbox.spawn(argv, log="targets.log"))

    async def mapped() -> WindowInfo | None:
        windows = await rig.desktop.list_windows()
        return next((w for w in windows if w.title == TITLE and w.handle not in before), None)

    return await async_wait_for(mapped, timeout=30, what="the target window")


async def test_native_clicks_land_where_the_screenshot_showed(sway_rig: SwayRig) -> None:
    """The coordinate contract: a model that wants a third of the resolution finds each target
    in its screenshot (of the screen, then of the window) and clicks it; the target window
    logs each click where its display server delivered it."""
    clicks = Path(sway_rig.runtime_dir, "clicks.jsonl")
    window = await _targets(sway_rig, clicks)
    try:
        executor = NativeExecutor(ToolSet(), sway_rig.ctx())
        for window_id in (None, window.stable_id):
            current = next(
                w for w in await sway_rig.desktop.list_windows() if w.handle == window.handle
            )
            before = len(clicks.read_text().splitlines())
            shot = await executor.capture(window=window_id)
            target = Size(shot.width, shot.height)
            small = Size(target.width // 3, target.height // 3)
            vp = Viewport(target=target, image=small, space=small)
            seen = Image.open(io.BytesIO(vp.encode(shot.data)))
            aimed = []
            for colour in COLOURS[: len(TARGETS)]:
                box = colour_box(seen, colour)
                assert box is not None, f"{colour} not in the {seen.size} screenshot"
                aimed.append(((box[0] + box[2] - 1) // 2, (box[1] + box[3] - 1) // 2))
            done = await executor.run(
                [Click(*vp.to_target(x, y)) for x, y in aimed], window=window_id, screenshot=False
            )
            assert done.ok, done.report()

            async def arrived(before: int = before) -> list[dict[str, int]] | None:
                got = [json.loads(s) for s in clicks.read_text().splitlines()[before:]]
                return got if len(got) == len(TARGETS) else None

            landed = await async_wait_for(arrived, timeout=10, what="the clicks to arrive")
            g = current.geometry
            origin = (0, 0) if window_id else (g.x, g.y)
            for (tx, ty), (mx, my), click in zip(TARGETS, aimed, landed, strict=True):
                ex, ey = vp.to_target(mx, my)  # exactly this pixel …
                assert (click["x"], click["y"]) == (ex - origin[0], ey - origin[1])
                assert abs(click["x"] - tx) <= HALF and abs(click["y"] - ty) <= HALF  # on target
    finally:
        await sway_rig.close(window)


@pytest.mark.xfail(
    strict=False,
    reason="known, open (#20): in the full suite of 2026-12-02 the page tool said the page "
    "extension was not running in the first tab of a newly started agent browser on sway "
    "(passes alone, 4 of 4 in its module; suspected: the extension not yet loaded when "
    "open_urls returned)",
)
async def test_a_page_tool_runs_code_in_the_agent_browser(sway_rig: SwayRig) -> None:
    """The page tools reach the agent browser (Chromium on ozone-wayland) over its CDP
    endpoint; the page's new title is read from sway's tree."""
    page = sway_rig.home / "pane.html"
    page.write_text("<!doctype html><title>pane target</title><p>text</p>")
    sway_rig.give(page)
    ctx = sway_rig.ctx()
    tools = all_tools()
    opened = await tools.call("open_urls", {"urls": [page.as_uri()]}, ctx)
    assert not opened.is_error, opened.text
    browser = next(w for w in await sway_rig.desktop.list_windows() if "pane target" in w.title)
    try:
        pane = await tools.call("open_temp_pane", {"kind": "js"}, ctx)
        assert not pane.is_error, pane.text
        ran = await tools.call(
            "set_temp_pane_code",
            {"pane": "js", "code": "document.title = 'set by a pane';\nreturn location.protocol;"},
            ctx,
        )
        assert not ran.is_error and '"file:"' in ran.text, ran.text

        async def renamed() -> bool:
            return any(v.title.startswith("set by a pane") for v in await sway_rig.views())

        await async_wait_for(renamed, timeout=15, what="the page's new title in sway's tree")
        await tools.call("close_temp_pane", {"pane": "js"}, ctx)
    finally:
        await sway_rig.close(browser)


@pytest.mark.trial
async def test_an_eval_trial_runs_on_a_sway_sandbox(tmp_path: Path) -> None:
    """``deskpilot --backend wlroots eval``: the trial's sandbox is a sway one, the oracle's
    answer is checked by the trial's own check of the dialog's output."""
    result = await asyncio.to_thread(
        oracle_trial, tmp_path, "wlroots", "starter", "--tasks", "zenity.entry"
    )
    assert result["sandbox"] == "sway" and result["status"] == "passed"
    assert result["checks"][0]["detail"] == "dialog exited with 0 and printed 'Ada Lovelace'"


async def test_the_console_preview_follows_a_window_as_it_draws(sway_rig: SwayRig) -> None:
    """The console's capture thread (serve.capture.Capturer) on a sway session: a keyframe of
    the window, then a patch where typed text was drawn; the keyframe's pixels are the
    window's as the tools' own capture shows them."""
    from deskpilot.serve.capture import Capturer, Frame, Seen

    log = "preview-probe.txt"
    probe = await sway_rig.spawn(
        ["/usr/bin/python3", str(FIXTURES / "gtk4_probe.py"), str(Path(sway_rig.runtime_dir, log))],
        match=lambda w: w.title == "GTK 4 probe",
    )
    frames: list[Frame] = []
    seen: list[Seen] = []
    assert sway_rig.sandbox.info is not None
    capturer = Capturer(
        "s1",
        sway_rig.sandbox.info.display,
        "root",
        lambda: probe.handle,
        frames.append,
        seen.append,
        backend="wlroots",
    )
    capturer.start()
    try:
        capturer.want(full=True, thumbs=False)

        async def keyframe() -> Frame | None:
            return next((f for f in frames if f.kind == "key"), None)

        key = await async_wait_for(keyframe, timeout=20, what="a keyframe")
        g = probe.geometry
        assert (key.width, key.height, key.left, key.top) == (g.width, g.height, g.x, g.y)
        shown = Image.open(io.BytesIO(key.jpeg)).convert("L")
        truth = Image.open(io.BytesIO(await sway_rig.desktop.capture(probe))).convert("L")
        assert shown.size == truth.size
        diff = ImageChops.difference(shown, truth).point(lambda v: 255 if v > 48 else 0)
        assert (diff.histogram()[255] / (g.width * g.height)) < 0.01  # JPEG, same picture
        before = len(frames)
        typed = await sway_rig.call(
            "perform", {"windowID": probe.stable_id, "action": "type", "text": "drawn"}
        )
        assert not typed.is_error, typed.text

        def changed(frame: Frame) -> int:
            """Pixels of a patch that differ from the keyframe (the typed text is ~200)."""
            image = Image.open(io.BytesIO(frame.jpeg)).convert("L")
            under = shown.crop((frame.x, frame.y, frame.x + frame.w, frame.y + frame.h))
            return (
                ImageChops.difference(image, under)
                .point(lambda v: 255 if v > 96 else 0)
                .histogram()[255]
            )

        async def patched() -> Frame | None:
            return next(
                (f for f in frames[before:] if f.kind == "patch" and changed(f) > 100), None
            )

        # sway 1.7 (headless, pixman) reports the whole output as drawn: each patch is the
        # whole window; the one that shows the text is the proof
        await async_wait_for(patched, timeout=20, what="a patch showing the typed text")
        assert any(s.title == "GTK 4 probe" for s in seen)
    finally:
        capturer.stop()
        capturer.join(timeout=10)
        await sway_rig.close(probe)
