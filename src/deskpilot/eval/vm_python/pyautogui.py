"""``pyautogui`` as OSWorld's setup and postconfig commands use it, for a trial's own display.

OSWorld drives its VM with ``python -c "import pyautogui; pyautogui.hotkey('ctrl', 's')"``.
The real pyautogui pulls in an old fork of python-xlib that shadows the one deskpilot uses,
so a trial's ``python`` finds this module first (see :mod:`deskpilot.eval.vm_shims`): the
same calls (``hotkey``, ``press``, ``keyDown``/``keyUp``, ``write``/``typewrite``, ``click``,
``doubleClick``, ``rightClick``, ``moveTo``, ``scroll``, ``size``, ``position``), sent with
deskpilot's X11 backend (XTest) to ``$DISPLAY``. Anything else raises, naming what is
missing, so a step that needs more fails as a setup error rather than doing nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Any

from deskpilot.desktop.keys import key_name
from deskpilot.desktop.x11.display import X11
from deskpilot.desktop.x11.keysyms import keysym

PAUSE = 0.1
FAILSAFE = False
_x11: X11 | None = None


def _x() -> X11:
    global _x11
    if _x11 is None:
        _x11 = X11(os.environ.get("DISPLAY"))
    return _x11


def _keys(args: Iterable[Any]) -> list[str]:
    names: list[str] = []
    for arg in args:
        for key in [arg] if isinstance(arg, str) else list(arg):
            low = str(key).lower()
            name = {
                "ctrl": "Control_L",
                "control": "Control_L",
                "shift": "Shift_L",
                "alt": "Alt_L",
                "win": "Super_L",
                "command": "Super_L",
                "super": "Super_L",
            }.get(low) or key_name(str(key))
            if name is None:
                raise ValueError(f"pyautogui: unknown key {key!r}")
            names.append(name)
    return names


def _pause() -> None:
    if PAUSE:
        time.sleep(PAUSE)


def hotkey(*keys: Any, **_: Any) -> None:
    x = _x()
    x.press_combo([keysym(k) for k in _keys(keys)])
    _pause()


def press(keys: Any, presses: int = 1, interval: float = 0.0, **_: Any) -> None:
    x = _x()
    for _n in range(presses):
        for key in _keys([keys]):
            x.press_combo([keysym(key)])
            if interval:
                time.sleep(interval)
    _pause()


def keyDown(key: str, **_: Any) -> None:
    x = _x()
    x.key_event([keysym(k) for k in _keys([key])], True)


def keyUp(key: str, **_: Any) -> None:
    x = _x()
    x.key_event([keysym(k) for k in _keys([key])], False)


def write(message: Any, interval: float = 0.0, **_: Any) -> None:
    if isinstance(message, list):
        for key in message:
            press(key, interval=interval)
        return
    _x().type_text(str(message))
    _pause()


typewrite = write


def _at(x: Any, y: Any) -> tuple[int, int]:
    if x is None or y is None:
        return _x().pointer()
    return int(x), int(y)


def click(x: Any = None, y: Any = None, clicks: int = 1, button: str = "left", **_: Any) -> None:
    px, py = _at(x, y)
    _x().click(px, py, button, clicks)
    _pause()


def doubleClick(x: Any = None, y: Any = None, **kw: Any) -> None:
    click(x, y, clicks=2, **kw)


def rightClick(x: Any = None, y: Any = None, **_: Any) -> None:
    click(x, y, button="right")


def moveTo(x: Any = None, y: Any = None, *_: Any, **__: Any) -> None:
    _x().move(*_at(x, y))


def scroll(clicks: int, x: Any = None, y: Any = None, **_: Any) -> None:
    if x is not None and y is not None:
        moveTo(x, y)
    _x().wheel("up" if clicks > 0 else "down", abs(int(clicks)))


def size() -> tuple[int, int]:
    return _x().screen_size()


def position() -> tuple[int, int]:
    return _x().pointer()


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"pyautogui.{name} is not available in a deskpilot trial (it has: hotkey, press, "
        "keyDown, keyUp, write, typewrite, click, doubleClick, rightClick, moveTo, scroll, "
        "size, position)"
    )
