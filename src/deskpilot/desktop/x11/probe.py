"""Tiny synchronous X11 checks used while a desktop starts.

They hold no long-lived connection, except one: the connection :func:`root_string_property`
opened is kept for the :class:`~deskpilot.desktop.x11.display.X11` that connects to the same display
next (:func:`adopt`) — opening an Xlib display costs a dozen round trips and ~14 ms of CPU,
which one ``deskpilot tool`` call would otherwise pay twice.
"""

from __future__ import annotations

import contextlib
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


#: The one connection kept for adoption: (display name, connection).
_kept: list[tuple[str, display.Display]] = []


def adopt(display_name: str) -> display.Display | None:
    """The connection a probe kept open to ``display_name``, handed over (once), else None."""
    if _kept and _kept[0][0] == display_name:
        return _kept.pop()[1]
    return None


def _keep(display_name: str, d: display.Display) -> None:
    while _kept:
        with contextlib.suppress(Exception):
            _kept.pop()[1].close()
    _kept.append((display_name, d))


def root_string_property(display_name: str, name: str) -> str | None:
    """The text of the root window's property ``name`` (e.g. ``AT_SPI_BUS``), or None."""
    try:
        d = display.Display(display_name)
    except (error.DisplayError, error.ConnectionClosedError, ConnectionError, OSError):
        return None
    healthy = False
    try:
        atom = d.intern_atom(name, only_if_exists=True)
        if atom == X.NONE:
            return None
        prop = d.screen().root.get_full_property(atom, Xatom.STRING)
        if prop is None or not prop.value:
            return None
        healthy = True
        value = prop.value
        text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
        return text.strip("\0").strip() or None
    except (error.XError, error.ConnectionClosedError, OSError):
        return None
    finally:
        if healthy:
            _keep(display_name, d)
        else:
            d.close()
