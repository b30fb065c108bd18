"""The fake desktop's apps: a working calculator, a text editor and a password manager.

What each of :data:`FAKE_APPS` shows (its window's accessible tree, built by
:class:`WindowBuilder`) and what pressing its buttons does (:func:`press`: the calculator's
buttons append to its display, ``=`` evaluates). Used by
:class:`~deskpilot.desktop.fake.FakeDesktop` for unit tests.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from deskpilot.desktop.base import AppEntry, Node, Rect, WindowInfo

FAKE_APPS = (
    AppEntry(
        "org.example.Calculator",
        "Calculator",
        "Calculator",
        ("fake-calculator",),
        "fake-calculator",
    ),
    AppEntry("org.example.Editor", "Editor", "Text Editor", ("fake-editor",), "fake-editor"),
    AppEntry(
        "org.keepassxc.KeePassXC", "KeePassXC", "Password Manager", ("keepassxc",), "keepassxc"
    ),
)

_SHOWN = frozenset({"showing", "visible", "enabled", "sensitive"})


@dataclass
class FakeWindow:
    info: WindowInfo
    root: Node
    kind: str
    display: str = ""  # calculator display / editor text
    scroll: int = 0


class WindowBuilder:
    """Builds the tree of a fake app's window (object paths unique across its windows)."""

    def __init__(self) -> None:
        self._paths = itertools.count(1)

    def _node(self, bus: str, role: str, name: str, bounds: Rect, **kw: object) -> Node:
        states = set(_SHOWN) | set(kw.pop("states", ()))  # type: ignore[call-overload]
        return Node(
            key=(bus, f"/org/a11y/atspi/accessible/{next(self._paths)}"),
            role=role,
            name=name,
            bounds=bounds,
            states=frozenset(states),
            **kw,  # type: ignore[arg-type]
        )

    def build(self, app: AppEntry, info: WindowInfo, bus: str) -> FakeWindow:
        """The window ``info`` of ``app``, its tree on ``bus``."""
        geo = info.geometry
        frame = self._node(bus, "frame", info.title, geo)
        kind = "editor" if "Editor" in app.name else "calculator"
        if app.app_id.startswith("org.keepassxc"):
            kind = "vault"
        if kind == "calculator":
            display = self._node(
                bus,
                "text",
                "Result",
                Rect(geo.x + 10, geo.y + 10, 380, 40),
                text="",
                interfaces=frozenset({"Text"}),
            )
            frame.children.append(display)
            labels = [
                "7",
                "8",
                "9",
                "÷",
                "4",
                "5",
                "6",
                "×",
                "1",
                "2",
                "3",
                "−",
                "0",
                ".",
                "=",
                "+",
                "C",
            ]
            for i, label in enumerate(labels):
                r = Rect(geo.x + 10 + (i % 4) * 95, geo.y + 60 + (i // 4) * 60, 90, 50)
                frame.children.append(
                    self._node(bus, "push-button", label, r, interfaces=frozenset({"Action"}))
                )
        elif kind == "editor":
            area = self._node(
                bus,
                "text",
                "",
                Rect(geo.x, geo.y + 30, 400, 470),
                text="",
                states={"editable", "multi-line", "focusable"},
                interfaces=frozenset({"Text", "EditableText"}),
            )
            frame.children.append(area)
            frame.children.append(
                self._node(
                    bus,
                    "push-button",
                    "Send",
                    Rect(geo.x, geo.y, 80, 28),
                    interfaces=frozenset({"Action"}),
                )
            )
        else:
            frame.children.append(
                self._node(
                    bus,
                    "password-text",
                    "Master password",
                    Rect(geo.x + 10, geo.y + 40, 300, 30),
                    states={"editable"},
                )
            )
        for child in frame.children:
            child.parent_key = frame.key
        return FakeWindow(info, frame, kind)


def press(w: FakeWindow, label: str) -> str:
    """Press the button ``label`` in ``w``; what to log."""
    if w.kind != "calculator":
        return f"click {label}"
    if label == "C":
        w.display = ""
    elif label == "=":
        expr = w.display.replace("×", "*").replace("÷", "/").replace("−", "-")
        try:
            value = eval(expr, {"__builtins__": {}}, {}) if expr else 0
            w.display = f"{value:g}" if isinstance(value, float) else str(value)
        except Exception:
            w.display = "Error"
    else:
        w.display += label
    return f"press {label}"
