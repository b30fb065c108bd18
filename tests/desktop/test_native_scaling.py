"""The coordinate contract on real X servers: a model finds coloured targets in the screenshot
it is sent, points at them in its own space, and the clicks land on them.

Several screen sizes need several X servers: this module starts one private sandbox per size
(the shared 1280×800 sandbox is covered by test_native_vendors.py). The target window is
tests/desktop/native_targets.py, which logs the window coordinates the X server reports for
every click.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from PIL import Image, ImageChops

from deskpilot._wait import async_wait_for
from deskpilot.config import load_settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.native.actions import Action, Click
from deskpilot.native.calls import ComputerCall
from deskpilot.native.executor import NativeExecutor
from deskpilot.native.scaling import Size, Viewport, viewport_for
from deskpilot.native.vendors import make_conversation
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet
from tests.desktop.native_targets import COLOURS, HALF, TITLE

pytestmark = pytest.mark.asyncio(loop_scope="session")

HELPER = Path(__file__).with_name("native_targets.py")
SIZES = [(1024, 768), (1920, 1080), (2560, 1600)]
WINDOW = (600, 400)
TARGETS = [(7, 9), (300, 200), (592, 391), (123, 345), (451, 77)]
MODELS = {"openai": "gpt-5.5", "anthropic": "claude-sonnet-4-5",
          "gemini": "gemini-2.5-computer-use-preview-10-2025"}  # fmt: skip


@dataclass
class Rig:
    desktop: DesktopFacade
    ctx: ToolContext
    window: WindowInfo
    clicks: Path

    def logged(self) -> list[dict[str, int]]:
        return [json.loads(line) for line in self.clicks.read_text().splitlines()]


def colour_box(img: Image.Image, rgb: tuple[int, int, int]) -> tuple[int, int, int, int] | None:
    """The bounding box of the pixels within 60 of ``rgb`` on every channel."""
    masks = [band.point(lambda v, c=c: 255 if abs(v - c) < 60 else 0)
             for band, c in zip(img.convert("RGB").split(), rgb, strict=True)]  # fmt: skip
    both = ImageChops.multiply(ImageChops.multiply(masks[0], masks[1]), masks[2])
    return both.getbbox()


@pytest_asyncio.fixture(scope="module", loop_scope="session", params=SIZES,
                        ids=[f"{w}x{h}" for w, h in SIZES])  # fmt: skip
async def rig(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Rig]:
    width, height = request.param
    home = tmp_path_factory.mktemp("native-scaling")
    with Sandbox(width=width, height=height) as sb:
        assert sb.info is not None
        env = sb.app_env()
        env["DESKPILOT_SANDBOX"] = sb.info.runtime_dir
        env["DESKPILOT_HOME"] = str(home)
        settings = load_settings(env=env).with_overrides(confirm="none")
        desktop = await open_resolved(settings)
        try:
            clicks = home / "clicks.jsonl"
            clicks.touch()
            sb.spawn([sys.executable, str(HELPER), str(clicks), *map(str, WINDOW),
                      *(f"{x},{y}" for x, y in TARGETS)], log="targets.log")  # fmt: skip

            async def mapped() -> WindowInfo | None:
                return next((w for w in await desktop.list_windows() if w.title == TITLE), None)

            window = await async_wait_for(mapped, timeout=20, what="the target window")

            async def drawn() -> bool:
                img = Image.open(io.BytesIO(await desktop.capture(window)))
                return all(colour_box(img, c) for c in COLOURS[: len(TARGETS)])

            await async_wait_for(drawn, timeout=20, what="the targets to be drawn")
            ctx = ToolContext(
                desktop=desktop, settings=settings, audit=discard, approver=AllowAll()
            )
            yield Rig(desktop, ctx, window, clicks)
        finally:
            await desktop.close()


def third(target: Size) -> Viewport:
    """A hypothetical vendor that wants a third of the resolution (a 3× scale factor)."""
    image = Size(max(1, target.width // 3), max(1, target.height // 3))
    return Viewport(target=target, image=image, space=image)


def vendor_call(profile: str, vp: Viewport, points: list[tuple[int, int]],
                window: str | None) -> ComputerCall:  # fmt: skip
    """The model's clicks in its own wire format, parsed back by the vendor translator."""
    if profile == "third":
        clicks = tuple(Click(*vp.to_target(x, y)) for x, y in points)
        return ComputerCall("c", "c", clicks, window=window)
    model = MODELS[profile]
    conv = make_conversation(profile, model, vp, window=window)  # type: ignore[arg-type]
    response: dict[str, Any]
    if profile == "openai":
        actions = [{"type": "click", "button": "left", "x": x, "y": y} for x, y in points]
        response = {"output": [{"type": "computer_call", "id": "cu", "call_id": "c",
                                "actions": actions}]}  # fmt: skip
    elif profile == "anthropic":
        response = {"content": [{"type": "tool_use", "id": f"t{i}", "name": "computer",
                                 "input": {"action": "left_click", "coordinate": [x, y]}}
                                for i, (x, y) in enumerate(points)]}  # fmt: skip
    else:
        response = {"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "click_at", "args": {"x": x, "y": y}}} for x, y in points
        ]}}]}  # fmt: skip
    calls = conv.parse(response).items
    actions_out: list[Action] = []
    for call in calls:
        assert isinstance(call, ComputerCall) and call.problem is None, call
        actions_out += call.actions
    return ComputerCall("c", "c", tuple(actions_out), window=window)


PROFILES: dict[str, Callable[[Size], Viewport]] = {
    "anthropic": lambda t: viewport_for("anthropic", t.width, t.height),
    "openai": lambda t: viewport_for("openai", t.width, t.height),
    "gemini": lambda t: viewport_for("gemini", t.width, t.height),
    "third": third,
}


@pytest.mark.parametrize("on", ["screen", "window"])
@pytest.mark.parametrize("profile", list(PROFILES))
async def test_clicks_land_on_targets_the_model_found_in_its_screenshot(
    rig: Rig, profile: str, on: str
) -> None:
    window_id = rig.window.stable_id if on == "window" else None
    executor = NativeExecutor(ToolSet(), rig.ctx)
    capture = await executor.capture(window=window_id)
    vp = PROFILES[profile](Size(capture.width, capture.height))
    seen = Image.open(io.BytesIO(vp.encode(capture.data)))  # what the model is sent
    assert seen.size == (vp.image.width, vp.image.height)

    points = []
    for colour in COLOURS[: len(TARGETS)]:
        box = colour_box(seen, colour)
        assert box is not None, f"target {colour} not visible in the {vp.image} screenshot"
        x0, y0, x1, y1 = box
        if vp.grid:  # a grid model names the target's centre on its 0-999 scale
            points.append((int((x0 + x1) / 2 / seen.width * vp.space.width),
                           int((y0 + y1) / 2 / seen.height * vp.space.height)))  # fmt: skip
        else:  # a pixel model names the target's centre pixel
            points.append(((x0 + x1 - 1) // 2, (y0 + y1 - 1) // 2))

    call = vendor_call(profile, vp, points, window_id)
    before = len(rig.logged())
    outcome = await executor.run(call.actions, window=window_id, screenshot=False)
    assert outcome.ok, outcome.report()

    async def arrived() -> list[dict[str, int]] | None:
        got = rig.logged()[before:]
        return got if len(got) == len(TARGETS) else None

    landed = await async_wait_for(arrived, timeout=10, what="the clicks to arrive")
    origin = (0, 0) if window_id else (rig.window.geometry.x, rig.window.geometry.y)
    for (tx, ty), (mx, my), click in zip(TARGETS, points, landed, strict=True):
        ex, ey = vp.to_target(mx, my)  # the contract: exactly this pixel …
        assert (click["x"], click["y"]) == (ex - origin[0], ey - origin[1])
        assert abs(click["x"] - tx) <= HALF and abs(click["y"] - ty) <= HALF, (  # … on target
            f"{profile}/{on}: aimed at {(mx, my)} in {vp.space}, landed {click}, target {(tx, ty)}"
        )
