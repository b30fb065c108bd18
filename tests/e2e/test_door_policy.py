"""Policy lives in the door: a tool written without any policy code is still refused on a
blocked app's window, and nothing it returns shows a blocked window (titles cut out of text
and data, blocked windows blacked out of images), on a FakeDesktop with a KeePassXC window.

The same on real apps (KeePassXC on the sandbox): tests/desktop/test_blocklist.py.
"""

from __future__ import annotations

import asyncio
import io
from typing import Annotated, Any

import pytest
from PIL import Image as PILImage
from pydantic import Field

from deskpilot.agent.prompts import gather_context, render_context
from deskpilot.config import Settings
from deskpilot.desktop.base import Rect
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.errors import ActionFailed
from deskpilot.events import Event, Image
from deskpilot.policy import AllowAll, Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext
from deskpilot.tools.reach import NOTHING
from deskpilot.tools.toolset import ToolSet
from deskpilot.tools.windows import find_window

VAULT_TITLE = "Passwords.kdbx - KeePassXC"


class Ran(list[str]):
    """What the test tools did (nothing, when the door refused them)."""


def new_tools(ran: Ran) -> ToolSet:
    """Tools as a plugin author would write them: no blocklist, no policy, no redaction."""

    @tool(risk=Risk.READ_ONLY, title="Peek")
    async def peek(
        ctx: ToolContext, windowID: Annotated[str, Field(description="a window")]
    ) -> ToolResult:
        """Read a window's tree directly (no resolve_window, no checks)."""
        window = find_window(await ctx.desktop.list_windows(), windowID)
        assert window is not None
        snap = await ctx.desktop.snapshot(window)
        ran.append(f"peek {window.title}")
        return ToolResult(f"{len(snap.nodes())} nodes in {window.title}")

    @tool(risk=Risk.ACTS, title="Poke")
    async def poke(ctx: ToolContext) -> ToolResult:
        """Type into whatever window is in front (no window argument at all)."""
        await ctx.desktop.type_raw("secret")
        ran.append("poke")
        return ToolResult("typed")

    @tool(risk=Risk.READ_ONLY, title="Titles", reach=NOTHING)
    async def titles(ctx: ToolContext) -> ToolResult:
        """Every window's title, in text and data (a tool that reaches no window)."""
        names = [w.title for w in await ctx.desktop.list_windows()]
        return ToolResult("; ".join(names), data={"titles": names})

    @tool(risk=Risk.ACTS, title="Follow", reach=NOTHING)
    async def follow(ctx: ToolContext, windowID: str) -> ToolResult:
        """Make a window the tracked target (as open_app does after a launch)."""
        ctx.session.track(windowID)
        return ToolResult(f"now tracking {windowID}")

    @tool(risk=Risk.READ_ONLY, title="Snap", reach=NOTHING)
    async def snap(ctx: ToolContext, size: str = "screen", placed: bool = False) -> ToolResult:
        """A white picture of the screen (or of an odd size), with or without its place."""
        w, h = (1280, 800) if size == "screen" else (300, 200)
        img = PILImage.new("RGB", (w, h), "white")
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        rect = Rect(100, 50, w, h) if placed else None
        return ToolResult("a picture", images=[Image(buf.getvalue(), "image/png", w, h, rect)])

    @tool(risk=Risk.READ_ONLY, title="Fails", reach=NOTHING)
    async def fails(ctx: ToolContext, crash: bool = False) -> ToolResult:
        """Fail with an error that quotes every window's title (or crash with them)."""
        names = ", ".join(w.title for w in await ctx.desktop.list_windows())
        if crash:
            raise RuntimeError(f"bug while looking at {names}")
        raise ActionFailed(f"could not act: covered by {names}")

    @tool(risk=Risk.READ_ONLY, title="Breaks", reach=NOTHING)
    async def breaks(ctx: ToolContext) -> ToolResult:
        """Return every title, then leave the desktop unable to list its windows (a bug)."""
        names = "; ".join(w.title for w in await ctx.desktop.list_windows())

        async def broken() -> Any:
            raise RuntimeError("list_windows broke")

        ctx.desktop.list_windows = broken  # type: ignore[method-assign]
        return ToolResult(names)

    return ToolSet([peek, poke, titles, follow, snap, fails, breaks])


@pytest.fixture
def desk() -> FakeDesktop:
    desktop = FakeDesktop()
    desktop.add_window(FAKE_APPS[1], "Mail to Bob")  # 100,100 400x500
    desktop.add_window(FAKE_APPS[2], VAULT_TITLE)  # 140,100 400x500, on top and active
    return desktop


@pytest.fixture
def events() -> list[Event]:
    return []


@pytest.fixture
def ctx(desk: FakeDesktop, settings: Settings, events: list[Event]) -> ToolContext:
    return ToolContext(desk, settings, audit=events.append, approver=AllowAll())


def run(tools: ToolSet, name: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return asyncio.run(tools.call(name, args, ctx))


EDITOR_ID, VAULT_ID = "4000/4194305", "4001/4194306"


def test_a_new_tool_without_policy_code_is_refused_on_a_blocked_window(
    ctx: ToolContext, events: list[Event]
) -> None:
    ran = Ran()
    tools = new_tools(ran)
    refused = run(tools, "peek", {"windowID": VAULT_ID}, ctx)
    assert refused.is_error and "KeePassXC is on the blocked apps list" in refused.text
    assert refused.data == {"refused": "blocked", "app": "KeePassXC"}
    assert events[-1].data["refused"] == "blocked"  # in the audit log as a refusal
    assert ran == []  # the tool never ran: nothing of the vault was read
    # the same tool on another window runs
    assert not run(tools, "peek", {"windowID": EDITOR_ID}, ctx).is_error
    assert ran == ["peek Mail to Bob"]
    # a tool that names no window is aimed at the window a call would use: the active vault
    ctx.session.target = None
    assert run(tools, "poke", {}, ctx).data == {"refused": "blocked", "app": "KeePassXC"}
    assert ran == ["peek Mail to Bob"]
    # …and at the tracked target when there is one
    ctx.session.target = EDITOR_ID
    assert not run(tools, "poke", {}, ctx).is_error and ran[-1] == "poke"


def test_no_result_names_a_blocked_window(ctx: ToolContext, events: list[Event]) -> None:
    tools = new_tools(Ran())
    listed = run(tools, "titles", {}, ctx)
    assert "Passwords.kdbx" not in listed.text and "Mail to Bob" in listed.text
    assert listed.text == "Mail to Bob; [a blocked window]"
    assert listed.data == {"titles": ["Mail to Bob", "[a blocked window]"]}
    assert "Passwords.kdbx" not in str(events[-1].data)  # nor what the log keeps of it
    # nor an error, expected or a bug
    failed = run(tools, "fails", {}, ctx)
    assert failed.is_error and "Mail to Bob" in failed.text, failed.text
    assert "Passwords.kdbx" not in failed.text and "[a blocked window]" in failed.text
    crashed = run(tools, "fails", {"crash": True}, ctx)
    assert crashed.is_error and "internal error" in crashed.text
    assert "Passwords.kdbx" not in crashed.text + str(events[-1].data)
    # a call that ends on a blocked window is refused and the target stays where it was
    ctx.session.target = EDITOR_ID
    followed = run(tools, "follow", {"windowID": VAULT_ID}, ctx)
    assert followed.data == {"refused": "blocked", "app": "KeePassXC"}
    assert ctx.session.target == EDITOR_ID
    # a result that cannot be screened (a bug while listing windows) is withheld
    unchecked = run(tools, "breaks", {}, ctx)
    assert unchecked.is_error and "withheld" in unchecked.text
    assert "Passwords.kdbx" not in unchecked.text + str(events[-1].data)


def test_the_live_context_does_not_name_a_blocked_frontmost_window(ctx: ToolContext) -> None:
    live = asyncio.run(gather_context(ctx))
    text = render_context(live)
    assert "Passwords.kdbx" not in text and VAULT_ID not in text
    assert "a window of KeePassXC, a blocked app" in text


def pixels(result: ToolResult) -> PILImage.Image:
    (image,) = result.images
    return PILImage.open(io.BytesIO(image.data)).convert("RGB")


def test_images_are_blacked_out_wherever_a_blocked_window_overlaps(ctx: ToolContext) -> None:
    tools = new_tools(Ran())
    # a screen-sized picture without its place: taken to be the screen
    screen = pixels(run(tools, "snap", {}, ctx))
    assert screen.getpixel((140, 100)) == (0, 0, 0) and screen.getpixel((539, 599)) == (0, 0, 0)
    assert screen.getpixel((139, 100)) == (255, 255, 255)  # the editor, left of the vault
    assert screen.getpixel((540, 300)) == (255, 255, 255)  # right of it
    # a picture that says where it is: the overlap in its own pixels
    placed = pixels(run(tools, "snap", {"size": "odd", "placed": True}, ctx))
    assert placed.getpixel((40, 50)) == (0, 0, 0)  # screen (140, 100)
    assert placed.getpixel((39, 50)) == (255, 255, 255)
    # a picture whose place cannot be told is withheld while a blocked window is shown
    odd = run(tools, "snap", {"size": "odd"}, ctx)
    assert odd.images == [] and "1 image(s) withheld" in odd.text


def test_a_minimized_blocked_window_hides_nothing(ctx: ToolContext, desk: FakeDesktop) -> None:
    vault = desk.windows[1]
    vault.info = type(vault.info)(**{**vault.info.__dict__, "hidden": True})
    screen = pixels(run(new_tools(Ran()), "snap", {}, ctx))
    assert screen.getpixel((300, 300)) == (255, 255, 255)
