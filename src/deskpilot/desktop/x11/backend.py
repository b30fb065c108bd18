"""The X11 backend: EWMH windows, XTest input and composite capture on one X display, with
AT-SPI for accessibility and the freedesktop launcher.

Registered as ``"x11"`` (:mod:`deskpilot.desktop.registry`); the fallback of ``auto``. The
display is the settings' (``--display``, ``DISPLAY``) or the one discovery finds
(:func:`deskpilot.config.resolve_desktop`). Importing this module does not import
python-xlib; opening the ports does.
"""

from __future__ import annotations

from deskpilot.config import Settings, resolve_desktop
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.capture import PixelWatch
from deskpilot.desktop.registry import Backend


async def open_ports(settings: Settings) -> Ports:
    """The X display and its accessibility bus, opened together (both or neither)."""
    from deskpilot.desktop.atspi.port import AtspiAccessibility
    from deskpilot.desktop.x11.capture import X11Capture
    from deskpilot.desktop.x11.display import X11
    from deskpilot.desktop.x11.input import X11Input
    from deskpilot.desktop.x11.windows import X11Windows
    from deskpilot.desktop.xdg.launcher import XdgLauncher

    x11 = X11(settings.display)
    try:
        a11y = await AtspiAccessibility.open(settings)
    except BaseException:
        x11.close()
        raise
    launcher = XdgLauncher(settings)
    return Ports(
        backend="x11",
        settings=settings,
        windows=X11Windows(x11, launcher.apps),
        input=X11Input(x11),
        capture=X11Capture(x11, settings.display),
        a11y=a11y,
        launcher=launcher,
    )


def detect(settings: Settings) -> str:
    """Why X11 fits: the display named, an X11 session, or as the fallback that looks for
    an X display (an MCP client starts servers without DISPLAY)."""
    if settings.display:
        return f"DISPLAY={settings.display}"
    if settings.environ.get("XDG_SESSION_TYPE") == "x11":
        return "an X11 session"
    return "the fallback: discovery looks for an X display"


def titles(display: str) -> list[str]:
    from deskpilot.desktop.x11.titles import window_titles

    return window_titles(display)


def open_preview(display: str, mode: str) -> PixelWatch:
    from deskpilot.desktop.x11.preview import X11PixelWatch

    return X11PixelWatch(display, "root" if mode == "root" else "window")


BACKEND = Backend(
    name="x11",
    open=open_ports,
    detect=detect,
    resolve=resolve_desktop,
    priority=0,
    summary="an X11 display (EWMH, XTest, composite capture) with AT-SPI",
    preview=open_preview,
    titles=titles,
)
