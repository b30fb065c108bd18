"""The coordinate contract on real X servers: a model finds coloured targets in the screenshot
it is sent, points at them in its own space, and the clicks land on them.

Each vendor's model is a local server in its wire format (tests/desktop/native_server.py),
reached by a native run through the vendor's adapter and the production HTTP client: it looks
at the screenshot in the first request and answers with clicks. A hypothetical vendor that
wants a third of the resolution runs its clicks through the executor directly.

Several screen sizes need several X servers: this module starts one private sandbox per size
(the shared 1280×800 sandbox is covered by test_native_vendors.py). The target window is
tests/desktop/native_targets.py, which logs the window coordinates the X server reports for
every click.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from PIL import Image, ImageChops

from deskpilot._wait import async_wait_for
from deskpilot.agent.computer import ComputerCalls
from deskpilot.agent.loop import RunOptions
from deskpilot.agent.native_run import run_native_task
from deskpilot.config import load_settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.native.actions import Click
from deskpilot.native.executor import NativeExecutor
from deskpilot.native.scaling import Size, Viewport
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet
from tests.desktop.native_server import ReplayServer, Request, image_of, vendor_provider
from tests.desktop.native_targets import COLOURS, HALF, TITLE

# the screens fixture starts a private sandbox per screen size, with a target app on it
pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.sandbox, pytest.mark.app]

HELPER = Path(__file__).with_name("native_targets.py")
SIZES = [(1024, 768), (1920, 1080), (2560, 1600)]
WINDOW = (600, 400)
TARGETS = [(7, 9), (300, 200), (592, 391), (123, 345), (451, 77)]
MODELS = {
    "openai": "gpt-5.5",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-computer-use-preview-10-2025",
}
PROFILES = [*MODELS, "third"]


@dataclass
class Screens:
    desktop: DesktopFacade
    ctx: ToolContext
    window: WindowInfo
    clicks: Path

    def logged(self) -> list[dict[str, int]]:
        return [json.loads(line) for line in self.clicks.read_text().splitlines()]


def colour_box(img: Image.Image, rgb: tuple[int, int, int]) -> tuple[int, int, int, int] | None:
    """The bounding box of the pixels within 60 of ``rgb`` on every channel."""
    masks = [
        band.point(lambda v, c=c: 255 if abs(v - c) < 60 else 0)
        for band, c in zip(img.convert("RGB").split(), rgb, strict=True)
    ]
    both = ImageChops.multiply(ImageChops.multiply(masks[0], masks[1]), masks[2])
    return both.getbbox()


@pytest_asyncio.fixture(
    scope="module", loop_scope="session", params=SIZES, ids=[f"{w}x{h}" for w, h in SIZES]
)
async def screens(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Screens]:
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
            points = [f"{x},{y}" for x, y in TARGETS]
            argv = [sys.executable, str(HELPER), str(clicks), *map(str, WINDOW), *points]
            sb.spawn(argv, log="targets.log")

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
            yield Screens(desktop, ctx, window, clicks)
        finally:
            await desktop.close()


def aim(seen: Image.Image, grid: bool) -> list[tuple[int, int]]:
    """Where a model points at each target in the screenshot it was sent: the centre pixel,
    or on a grid model's 0-999 scale."""
    points = []
    for colour in COLOURS[: len(TARGETS)]:
        box = colour_box(seen, colour)
        assert box is not None, f"target {colour} not visible in the {seen.size} screenshot"
        x0, y0, x1, y1 = box
        if grid:
            points.append(
                (int((x0 + x1) / 2 / seen.width * 1000), int((y0 + y1) / 2 / seen.height * 1000))
            )
        else:
            points.append(((x0 + x1 - 1) // 2, (y0 + y1 - 1) // 2))
    return points


def click_reply(profile: str, points: list[tuple[int, int]]) -> dict[str, Any]:
    """The model's clicks in its vendor's wire format."""
    if profile == "openai":
        actions = [{"type": "click", "button": "left", "x": x, "y": y} for x, y in points]
        return {
            "id": "r1",
            "output": [{"type": "computer_call", "id": "cu", "call_id": "c", "actions": actions}],
        }
    if profile == "anthropic":
        clicks = [{"action": "left_click", "coordinate": [x, y]} for x, y in points]
        uses = [
            {"type": "tool_use", "id": f"t{i}", "name": "computer", "input": c}
            for i, c in enumerate(clicks)
        ]
        return {"content": uses}
    parts = [{"functionCall": {"name": "click_at", "args": {"x": x, "y": y}}} for x, y in points]
    return {"candidates": [{"content": {"parts": parts}}]}


def done(profile: str) -> dict[str, Any]:
    if profile == "openai":
        return {
            "id": "r2",
            "output": [
                {"type": "message", "content": [{"type": "output_text", "text": "Clicked."}]}
            ],
        }
    if profile == "anthropic":
        return {"content": [{"type": "text", "text": "Clicked."}]}
    return {"candidates": [{"content": {"parts": [{"text": "Clicked."}]}}]}


async def vendor_run(
    screens: Screens, profile: str, window_id: str | None
) -> tuple[Viewport, list[tuple[int, int]]]:
    """A native run whose model (a local server) clicks the targets it sees: the viewport it
    had, and where it aimed."""
    aimed: list[tuple[int, int]] = []

    def script(req: Request, i: int) -> dict[str, Any]:
        if i > 0:
            return done(profile)
        seen = image_of(profile, req.body)  # what the model is sent
        aimed.extend(aim(seen, grid=profile == "gemini"))
        return click_reply(profile, aimed)

    with ReplayServer(script) as server:
        async with vendor_provider(f"{profile}:{MODELS[profile]}", server) as provider:
            result = await run_native_task(
                "Click the five targets.",
                window_id,
                provider=provider,
                ctx=screens.ctx,
                options=RunOptions(max_steps=2),
            )
        assert server.errors == [] and result.outcome == "done", (server.errors, result.answer)
        seen = image_of(profile, server.requests[0].body)
    assert isinstance(result.acting, ComputerCalls) and result.acting.wire is not None
    vp = result.acting.wire.setup.viewport
    assert seen.size == (vp.image.width, vp.image.height)
    return vp, aimed


async def third_run(
    screens: Screens, window_id: str | None
) -> tuple[Viewport, list[tuple[int, int]]]:
    """A hypothetical vendor that wants a third of the resolution (a 3× scale factor): its
    clicks go through the executor."""
    executor = NativeExecutor(ToolSet(), screens.ctx)
    capture = await executor.capture(window=window_id)
    target = Size(capture.width, capture.height)
    image = Size(max(1, target.width // 3), max(1, target.height // 3))
    vp = Viewport(target=target, image=image, space=image)
    aimed = aim(Image.open(io.BytesIO(vp.encode(capture.data))), grid=False)
    presses = [Click(*vp.to_target(x, y)) for x, y in aimed]
    outcome = await executor.run(presses, window=window_id, screenshot=False)
    assert outcome.ok, outcome.report()
    return vp, aimed


@pytest.mark.parametrize("on", ["screen", "window"])
@pytest.mark.parametrize("profile", PROFILES)
async def test_clicks_land_on_targets_the_model_found_in_its_screenshot(
    screens: Screens, profile: str, on: str
) -> None:
    window_id = screens.window.stable_id if on == "window" else None
    before = len(screens.logged())
    if profile == "third":
        vp, points = await third_run(screens, window_id)
    else:
        vp, points = await vendor_run(screens, profile, window_id)

    async def arrived() -> list[dict[str, int]] | None:
        got = screens.logged()[before:]
        return got if len(got) == len(TARGETS) else None

    landed = await async_wait_for(arrived, timeout=10, what="the clicks to arrive")
    origin = (0, 0) if window_id else (screens.window.geometry.x, screens.window.geometry.y)
    for (tx, ty), (mx, my), click in zip(TARGETS, points, landed, strict=True):
        ex, ey = vp.to_target(mx, my)  # the contract: exactly this pixel …
        assert (click["x"], click["y"]) == (ex - origin[0], ey - origin[1])
        assert abs(click["x"] - tx) <= HALF and abs(click["y"] - ty) <= HALF, (  # … on target
            f"{profile}/{on}: aimed at {(mx, my)} in {vp.space}, landed {click}, target {(tx, ty)}"
        )
