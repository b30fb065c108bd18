"""The environment of an app on a Wayland desktop: native Wayland, accessibility on.

:func:`deskpilot.desktop.a11yenv.accessible_env` switches accessibility on for every toolkit
but pins GTK to X11 (the X11 backend's need); on a Wayland desktop the same switches apply with
each toolkit pointed at the compositor instead. X11-only apps still find Xwayland through
``DISPLAY``.
"""

from __future__ import annotations

from collections.abc import Mapping

from deskpilot.desktop.a11yenv import accessible_env

#: Toolkit switches for native Wayland clients.
WAYLAND_SWITCHES: dict[str, str] = {
    "GDK_BACKEND": "wayland",
    "QT_QPA_PLATFORM": "wayland",
    "SDL_VIDEODRIVER": "wayland",
    "MOZ_ENABLE_WAYLAND": "1",
    "ELECTRON_OZONE_PLATFORM_HINT": "wayland",
    "XDG_SESSION_TYPE": "wayland",
}

#: Chromium flags for a Wayland desktop (Debian's wrapper reads CHROMIUM_FLAGS).
CHROMIUM_WAYLAND_FLAGS = ("--ozone-platform=wayland",)


def wayland_app_env(
    base: Mapping[str, str], wayland_display: str, *, sandbox: bool = False
) -> dict[str, str]:
    """``base`` with accessibility on and every toolkit aimed at ``wayland_display``."""
    env = accessible_env(base, sandbox=sandbox)
    env.update(WAYLAND_SWITCHES)
    env["WAYLAND_DISPLAY"] = wayland_display
    flags = env.get("CHROMIUM_FLAGS", "").split()
    env["CHROMIUM_FLAGS"] = " ".join(
        [*flags, *(f for f in CHROMIUM_WAYLAND_FLAGS if f not in flags)]
    )
    return env
