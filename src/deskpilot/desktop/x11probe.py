"""Tiny synchronous X11 checks used while a desktop starts (no long-lived connection)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from Xlib import X, Xatom, display, error


def use_xauthority(path: str | None) -> None:
    """Make ``path`` the X cookie file of this process.

    python-xlib and libX11 (which mss uses for screenshots) read the cookie file's path only
    from the process environment, so a cookie found by discovery is handed over there. This
    writes the environment; reading it stays :mod:`deskpilot.config`'s job."""
    if path:
        os.environ["XAUTHORITY"] = path


def root_has_properties(display_name: str, names: Iterable[str]) -> bool:
    """True when the root window of ``display_name`` carries every property in ``names``."""
    try:
        d = display.Display(display_name)
    except (error.DisplayError, error.ConnectionClosedError, ConnectionError, OSError):
        return False
    try:
        root = d.screen().root
        for name in names:
            atom = d.intern_atom(name, only_if_exists=True)
            if atom == X.NONE or root.get_full_property(atom, X.AnyPropertyType) is None:
                return False
        return True
    except (error.XError, error.ConnectionClosedError, OSError):
        return False
    finally:
        d.close()


def root_string_property(display_name: str, name: str) -> str | None:
    """The text of the root window's property ``name`` (e.g. ``AT_SPI_BUS``), or None."""
    try:
        d = display.Display(display_name)
    except (error.DisplayError, error.ConnectionClosedError, ConnectionError, OSError):
        return None
    try:
        atom = d.intern_atom(name, only_if_exists=True)
        if atom == X.NONE:
            return None
        prop = d.screen().root.get_full_property(atom, Xatom.STRING)
        if prop is None or not prop.value:
            return None
        value = prop.value
        text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
        return text.strip("\0").strip() or None
    except (error.XError, error.ConnectionClosedError, OSError):
        return None
    finally:
        d.close()
