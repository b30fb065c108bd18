"""Windows: ID forms, the resolution order, and the tools list_windows, open_app, open_urls.

Window IDs come in two forms: ``pid/title`` (readable) and ``pid/handle`` (stable:
the backend's window handle in decimal, on X11 the X window id). When a tool gets no
``windowID`` the window is, in order: the tracked target (last opened or used in this
session), the run's bound window, the active window.
Blocked apps are refused by the door before a tool runs (:mod:`deskpilot.tools.gate`):
each tool here declares what it reaches (``list_windows`` nothing: it lists blocked windows
without their titles; ``open_app`` the app it would start; ``open_urls`` the agent browser).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Annotated, Any
from urllib.parse import urlparse

from pydantic import Field

from deskpilot.desktop.base import AppEntry, WindowInfo
from deskpilot.desktop.window_ids import find_window
from deskpilot.errors import InvalidArguments, ToolError, WindowNotFound
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.blocklist import Blocklist
from deskpilot.tools.context import ToolContext
from deskpilot.tools.reach import NOTHING, Reach

WindowIDArg = Annotated[
    str | None,
    Field(
        description="Window to use: 'pid/title' or the stable 'pid/windowNumber' from "
        "list_windows or open_app. Omit to use the tracked target window."
    ),
]

PASS_HINT = (
    "Pass this windowID to read_screen_ax, perform, perform_sequence, scroll and "
    "computer_use_screenshot (it is now the tracked target, used when windowID is omitted)."
)


def _choose(
    ctx: ToolContext, windows: list[WindowInfo], window_id: str | None
) -> tuple[WindowInfo | None, str]:
    """The window a call would use, and by which rule: ``explicit``, ``target``, ``earlier``
    (the tracked target closed; an earlier target still open), ``fallback`` or ``active``.
    No side effects."""
    if window_id is not None and window_id.strip():
        return find_window(windows, window_id), "explicit"
    if ctx.session.target:
        window = find_window(windows, ctx.session.target)
        if window is not None:
            return window, "target"
        for earlier in reversed(ctx.session.history):
            window = find_window(windows, earlier)
            if window is not None:
                return window, "earlier"
        return None, "target"
    if ctx.fallback_window:
        return find_window(windows, ctx.fallback_window), "fallback"
    return next((w for w in windows if w.active), None), "active"


async def peek_window(ctx: ToolContext, window_id: str | None) -> WindowInfo | None:
    """The window a call would use (resolution order), without changing the session; None
    when there is none (the call itself then says why)."""
    window, _rule = _choose(ctx, await ctx.desktop.list_windows(), window_id)
    return window


async def resolve_window(ctx: ToolContext, window_id: str | None) -> WindowInfo:
    """Explicit → tracked target → the run's bound window → active window; it becomes the
    tracked target. A blocked app's window is refused (the door refused it already; this is
    the check at the moment of use)."""
    window, rule = _choose(ctx, await ctx.desktop.list_windows(), window_id)
    if window is None:
        if rule == "explicit" and window_id is not None:
            raise WindowNotFound(window_id.strip())
        if rule == "target" and ctx.session.target:
            gone = ctx.session.target
            ctx.session.target = None  # the next call without windowID falls back
            raise WindowNotFound(gone)
        if rule == "fallback" and ctx.fallback_window:
            raise WindowNotFound(ctx.fallback_window)
        raise ToolError(
            "No window to use: no windowID was given, there is no tracked target and no "
            "window is active. Call list_windows or open_app first."
        )
    if rule == "earlier":
        gone = ctx.session.target or ""
        for earlier in list(ctx.session.history):
            if find_window([window], earlier) is not None:
                ctx.session.history.remove(earlier)
        ctx.session.target = None
        ctx.notices.append(
            f"(The tracked target window {gone} has closed; now using the earlier target "
            f'"{window.title}" ({window.stable_id}).)'
        )
    Blocklist.from_settings(ctx.settings).check_window(window)
    ctx.session.track(window.stable_id)
    return window


def describe_target(window: WindowInfo) -> str:
    return (
        f"Target window: {window.title} - {window.app.name}\n"
        f"Window ID: {window.window_id}\nStable Window ID: {window.stable_id}"
    )


def window_data(w: WindowInfo, blocked: bool = False) -> dict[str, object]:
    return {
        "app": w.app.name,
        "app_id": w.app.app_id,
        "title": "" if blocked else w.title,
        "window_id": w.window_id if not blocked else f"{w.pid}/{w.handle}",
        "stable_window_id": w.stable_id,
        "pid": w.pid,
        "active": w.active,
        "minimized": w.hidden,
        "blocked": blocked,
        "geometry": [w.geometry.x, w.geometry.y, w.geometry.width, w.geometry.height],
    }


@tool(risk=Risk.READ_ONLY, title="List Windows", idempotent=True, reach=NOTHING)
async def list_windows(ctx: ToolContext) -> ToolResult:
    """List the open windows of running apps, grouped by app: title, Window ID (pid/title),
    Stable Window ID (pid/windowNumber, preferred), PID, and ⭐ (ACTIVE) on the active window.
    Call it once per run when the target window was not opened by open_app/open_urls."""
    windows = await ctx.desktop.list_windows()
    blocklist = Blocklist.from_settings(ctx.settings)
    groups: dict[tuple[str, str], list[WindowInfo]] = defaultdict(list)
    for w in windows:
        groups[(w.app.name, w.app.app_id)].append(w)
    lines = [f"Open Windows ({len(windows)} total):"]
    data = []
    for (name, app_id), members in groups.items():
        lines.append("")
        lines.append(f"{name} ({app_id}):")
        for w in members:
            blocked = blocklist.match(w.app) is not None
            data.append(window_data(w, blocked))
            if blocked:
                lines.append(
                    "  - Window: [title hidden] 🚫 (BLOCKED: deskpilot will not read "
                    "or control this app)"
                )
                lines.append(f"    Stable Window ID: {w.stable_id}")
                continue
            marks = " ⭐ (ACTIVE)" if w.active else ""
            marks += " (minimized)" if w.hidden else ""
            lines.append(f'  - Window: "{w.title}"{marks}')
            lines.append(f"    Window ID: {w.window_id}")
            lines.append(f"    Stable Window ID: {w.stable_id}")
            lines.append(f"    PID: {w.pid}")
    if not windows:
        lines.append("")
        lines.append("No windows are open. Use open_app to start an app.")
    return ToolResult("\n".join(lines), data={"windows": data}, summary=f"{len(windows)} windows")


async def _app_reach(ctx: ToolContext, values: Mapping[str, Any]) -> Reach:
    """The app open_app would start (an unknown name is open_app's own error)."""
    from deskpilot.desktop.apps import resolve_app

    try:
        return Reach(apps=[resolve_app(str(values["bundleId"]), await ctx.desktop.apps())])
    except ToolError:
        return Reach()


@tool(risk=Risk.ACTS, title="Open Application", reach=_app_reach)
async def open_app(
    ctx: ToolContext,
    bundleId: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            description="App id (desktop-file id, e.g. 'org.gnome.Calculator') or human "
            "name ('Calculator', 'Text Editor'); names are resolved automatically.",
        ),
    ],
    file: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=4096,
            description="A document to open in the app: an absolute path or a URL. The app "
            "is started with it even when it already runs (a single-instance app opens it "
            "in its running instance); the window showing it becomes the target.",
        ),
    ] = None,
) -> ToolResult:
    """Launch an app, or use its window if it already runs, and make it the tracked target;
    with a file, open that document in it (the window showing the document is the target).
    Returns the target window's Window ID and Stable Window ID for the following tools."""
    from deskpilot.desktop.apps import resolve_app

    query = bundleId.strip()
    if not query:
        raise InvalidArguments("Invalid arguments for open_app: bundleId is empty")
    entry = resolve_app(query, await ctx.desktop.apps())
    if file is not None:
        return await _open_document(ctx, entry, file)
    running = [
        w for w in await ctx.desktop.list_windows() if w.app.app_id == entry.app_id and not w.hidden
    ]
    if running:
        window = next((w for w in running if w.active), running[0])
        note = "The app was already running; its window was not brought to the front."
    else:
        before = {w.handle for w in await ctx.desktop.list_windows()}
        window = await ctx.desktop.launch(entry, timeout=60.0)
        note = f"Launched {entry.name}."
        extra = [
            w
            for w in await ctx.desktop.list_windows()
            if w.handle not in before and w.handle != window.handle and w.pid == window.pid
        ]
        for w in extra:
            active = " and it is active" if w.active else ""
            note += (
                f'\nIt also opened "{w.title}" (windowID {w.stable_id}){active}: a startup '
                "dialog may need to be closed first."
            )
    ctx.session.track(window.stable_id)
    text = f"{describe_target(window)}\n{PASS_HINT}\n{note}"
    return ToolResult(
        text,
        data={"window": window_data(window), "launched": not running},
        summary=f"{entry.name} → {window.stable_id}",
    )


async def _open_document(ctx: ToolContext, entry: AppEntry, file: str) -> ToolResult:
    try:
        opened = await ctx.desktop.open_document(entry, file.strip(), timeout=60.0)
    except InvalidArguments as exc:
        raise InvalidArguments(f"Invalid arguments for open_app: file: {exc}") from None
    window = opened.window
    Blocklist.from_settings(ctx.settings).check_window(window)
    ctx.session.track(window.stable_id)
    note = opened.note or f"Opened {file.strip()} in {window.app.name}."
    text = f"{describe_target(window)}\n{PASS_HINT}\n{note}"
    return ToolResult(
        text,
        data={"window": window_data(window), "launched": True, "file": file.strip()},
        summary=f"{entry.name} with {file.strip().rsplit('/', 1)[-1]} → {window.stable_id}",
    )


ALLOWED_SCHEMES = {"http", "https", "file", "about", "data"}


async def _browser_reach(ctx: ToolContext, values: Mapping[str, Any]) -> Reach:
    """The agent browser open_urls would start or use."""
    if ctx.settings.browser != "agent":
        return Reach()
    apps = [a for a in await ctx.desktop.apps() if a.executable in ("chromium", "chromium-browser")]
    return Reach(apps=apps)


@tool(risk=Risk.ACTS, title="Open URLs", open_world=True, reach=_browser_reach)
async def open_urls(
    ctx: ToolContext,
    urls: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=8192)]],
        Field(min_length=1, max_length=20, description="URLs to open, as tabs, in order."),
    ],
    new_window: Annotated[
        bool,
        Field(
            description="Open them in a new browser window. By default they open as new "
            "tabs in the agent browser's window (the tracked one), and a window is made only "
            "when none is open."
        ),
    ] = False,
) -> ToolResult:
    """Open URLs in the agent browser (a Chromium with its own profile that deskpilot
    controls; the system default browser if configured): as new tabs in its window, or in a
    new window when asked or when none is open. The browser window becomes the tracked
    target."""
    for i, url in enumerate(urls):
        scheme = urlparse(url.strip()).scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            raise InvalidArguments(
                f"Invalid arguments for open_urls: urls.{i}: {url[:80]!r} is not an http(s), "
                "file, about or data URL"
            )
    browser = ctx.settings.browser
    clean = [u.strip() for u in urls]
    n = f"{len(urls)} URL{'s' if len(urls) > 1 else ''}"
    if browser == "agent" and not new_window:
        from deskpilot.pages.agent_windows import open_in_agent_window

        opened = await open_in_agent_window(ctx, clean)
        if opened is not None:
            window = opened.window
            ctx.session.track(window.stable_id)
            which = "the tracked window" if opened.tracked else "its last used window"
            text = (
                f"Opened {n} as new tabs in the agent browser's window that was already open "
                f"({which}; no new window).\n{describe_target(window)}\n{PASS_HINT}"
            )
            data = {"window": window_data(window), "new_window": False, "tabs": opened.tabs}
            return ToolResult(text, data=data, summary=f"{n} → tabs in {window.stable_id}")
    window = await ctx.desktop.open_urls(clean, browser=browser)
    ctx.session.track(window.stable_id)
    which = "the agent browser" if browser == "agent" else "the default browser"
    why = "as asked" if new_window else "none was open"
    where = f"a new window of {which} ({why})" if browser == "agent" else which
    text = f"Opened {n} in {where} ({window.app.name}).\n{describe_target(window)}\n{PASS_HINT}"
    data = {"window": window_data(window), "new_window": True, "tabs": len(urls)}
    return ToolResult(text, data=data, summary=f"{n} → {window.stable_id}")
