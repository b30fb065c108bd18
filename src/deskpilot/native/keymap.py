"""Vendor key names → X keysym names, on top of :mod:`deskpilot.desktop.keys`.

* OpenAI ``keypress.keys``: a list of lower-case names pressed together (``["ctrl", "c"]``,
  ``"arrowdown"``, ``"esc"``, ``"cmd"``, ``"win"``).
* Anthropic ``key.text``: xdotool syntax, ``"ctrl+s"``, ``"Return"``, ``"KP_0"``; several
  space-separated combinations are pressed one after another (``"ctrl+a Delete"``).
* Gemini ``key_combination.keys`` / ``hotkey.keys``: Playwright names joined by ``+``
  (``"Control+C"``, ``"Meta"``, ``"ArrowDown"``), or a list of them.

``cmd``/``meta`` mean Control on Linux, as in the shortcut grammar.
"""

from __future__ import annotations

from collections.abc import Sequence

from deskpilot.desktop.keys import MODIFIERS, key_name, parse_shortcut
from deskpilot.errors import InvalidArguments
from deskpilot.native.actions import InvalidAction

#: Names some vendors use that the shortcut grammar does not know.
_EXTRA = {
    "divide": "KP_Divide",
    "multiply": "KP_Multiply",
    "subtract": "KP_Subtract",
    "add": "KP_Add",
    "decimal": "KP_Decimal",
    "os": "Super_L",
    "contextmenu": "Menu",
}


def keysym(name: str) -> str:
    """One key or modifier in any vendor's spelling → its X keysym name."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidAction("empty key name")
    low = name.strip().lower()
    if low in MODIFIERS:
        return MODIFIERS[low]
    if low in _EXTRA:
        return _EXTRA[low]
    found = key_name(name)
    if found is None:
        raise InvalidAction(
            f"unknown key {name!r} (known: letters, digits, F1-F24, enter, escape, tab, space, "
            "backspace, delete, arrows, home, end, pageup, pagedown, modifiers, X keysym names)"
        )
    return found


def combo(names: Sequence[str]) -> tuple[str, ...]:
    """Keys pressed together (OpenAI ``keypress``): modifiers first, each key once."""
    if not names:
        raise InvalidAction("keypress: no keys given")
    syms = [keysym(n) for n in names]
    mods = [s for s in syms if s in MODIFIERS.values()]
    rest = [s for s in syms if s not in MODIFIERS.values()]
    return tuple(dict.fromkeys([*mods, *rest]))


def modifiers(spec: str | Sequence[str] | None) -> tuple[str, ...]:
    """Modifier keys held during a pointer action (``"shift"``, ``"ctrl+alt"``, ``["ctrl"]``)."""
    if spec is None or spec == "" or spec == []:
        return ()
    parts = spec.split("+") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for part in parts:
        low = part.strip().lower()
        if low not in MODIFIERS:
            raise InvalidAction(
                f"{part!r} is not a modifier key (use shift, ctrl, alt, super or cmd)"
            )
        out.append(MODIFIERS[low])
    return tuple(dict.fromkeys(out))


def plus_combo(text: str) -> tuple[str, ...]:
    """One combination written with ``+`` (``"Control+C"``, ``"ctrl+shift+t"``, ``"Return"``)."""
    try:
        return parse_shortcut(text).keysyms
    except InvalidArguments as exc:
        raise InvalidAction(str(exc)) from exc


def keys(value: object) -> tuple[str, ...]:
    """Keys as a model sends them: a list pressed together (``["CTRL", "C"]``), one
    ``+``-written combination (``"ctrl+c"``) or one key (``"Enter"``, never its letters)."""
    if isinstance(value, list | tuple):
        return combo([str(v) for v in value])
    text = str(value or "")
    return plus_combo(text) if "+" in text.strip("+") else combo([text] if text else [])


def xdotool_combos(text: str) -> list[tuple[str, ...]]:
    """xdotool ``key`` syntax: space-separated combinations, pressed in order."""
    parts = text.split() if isinstance(text, str) else []
    if not parts:
        raise InvalidAction("key: text is empty (use e.g. 'Return' or 'ctrl+s')")
    return [plus_combo(p) for p in parts]
