"""The environment switches that make every toolkit expose its accessibility tree.

Measured in ../shared/notes/linux-desktop.md: GTK3/LibreOffice need the atk-bridge (never
``NO_AT_BRIDGE=1``), GTK4 must not see ``GTK_A11Y=none``, Qt wants
``QT_LINUX_ACCESSIBILITY_ALWAYS_ON``, Chromium/Electron register with ``ACCESSIBILITY_ENABLED=1``
and expose page content only with ``--force-renderer-accessibility``. GTK 2 and Java load their
bridges only when named: :mod:`~deskpilot.desktop.toolkits` names them where installed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from deskpilot.desktop.toolkits import toolkit_switches

#: Variables set for every app deskpilot launches (and for ``sandbox run`` commands).
A11Y_SWITCHES: dict[str, str] = {
    "GTK_A11Y": "atspi",
    "ACCESSIBILITY_ENABLED": "1",
    "GNOME_ACCESSIBILITY": "1",
    "QT_ACCESSIBILITY": "1",
    "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
    "SAL_USE_VCLPLUGIN": "gtk3",
    "GDK_BACKEND": "x11",
    "GTK_USE_PORTAL": "0",
}

#: Variables that switch accessibility off somewhere; removed before launching.
A11Y_BLOCKERS = ("NO_AT_BRIDGE", "AT_SPI_BUS_ADDRESS", "WAYLAND_DISPLAY")

#: Extra variables for a sandbox desktop (software rendering, no portals or gvfs).
SANDBOX_EXTRAS: dict[str, str] = {
    "GSK_RENDERER": "cairo",
    "GIO_USE_VFS": "local",
    "LIBGL_ALWAYS_SOFTWARE": "1",
}

#: Chromium/Electron switches added for known browser binaries.
CHROMIUM_A11Y_FLAGS = ("--force-renderer-accessibility",)

CHROMIUM_QUIET_FLAGS = (
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-gpu",
    "--password-store=basic",
    # after a kill (a sandbox stopped, a session ended) the next start would cover the page's
    # top right with a "Restore pages?" bubble: over the elements a model must click
    "--hide-crash-restore-bubble",
)


def chromium_flags() -> list[str]:
    """Flags for a Chromium deskpilot starts: accessibility on, quiet, and no sandbox as root."""
    flags = [*CHROMIUM_A11Y_FLAGS, *CHROMIUM_QUIET_FLAGS]
    if os.geteuid() == 0:
        # Chromium refuses to start as root otherwise; --test-type hides the warning bar
        # about the flag (it would cost every read and screenshot a line)
        flags += ["--no-sandbox", "--test-type"]
    return flags


def accessible_env(base: Mapping[str, str], *, sandbox: bool = False) -> dict[str, str]:
    """Return ``base`` with accessibility switched on for GTK (2, 3 and 4), Qt, Java,
    Chromium, Electron, Gecko and LibreOffice."""
    env = {k: v for k, v in base.items() if k not in A11Y_BLOCKERS}
    for key, value in list(env.items()):
        # any "...ACCESSIBILITY...=0" style switch that turns a11y off
        if ("ACCESSIBILITY" in key or key == "GTK_A11Y") and value in {"0", "none", "false"}:
            del env[key]
    env.update(A11Y_SWITCHES)
    env.update(toolkit_switches(env))
    if sandbox:
        env.update(SANDBOX_EXTRAS)
    # Debian's /usr/bin/chromium wrapper reads CHROMIUM_FLAGS.
    extra = " ".join(chromium_flags())
    env["CHROMIUM_FLAGS"] = f"{env.get('CHROMIUM_FLAGS', '')} {extra}".strip()
    return env
