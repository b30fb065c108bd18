"""Tiny synchronous X11 checks used while a desktop starts (no long-lived connection)."""

from __future__ import annotations

from collections.abc import Iterable

from Xlib import X, display, error


def root_has_properties(display_name: str, names: Iterable[str]) -> bool:
    """True when the root window of ``display_name`` carries every property in ``names``."""
    try:
        d = display.Display(display_name)
    except (error.DisplayError, ConnectionError, OSError):
        return False
    try:
        root = d.screen().root
        for name in names:
            atom = d.intern_atom(name, only_if_exists=True)
            if atom == X.NONE or root.get_full_property(atom, X.AnyPropertyType) is None:
                return False
        return True
    finally:
        d.close()
