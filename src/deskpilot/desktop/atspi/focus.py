"""Where each app says the keyboard focus is, from its AT-SPI events.

Apps announce focus with ``object:state-changed:focused`` (and the older ``focus:`` event);
:class:`FocusTracker` keeps the last focused element of each app (bus name → object path), so
that an action's result can say where the focus went, as it happened.
"""

from __future__ import annotations

from dbus_fast import Message, MessageType

_OBJECT = "org.a11y.atspi.Event.Object"
_FOCUS = "org.a11y.atspi.Event.Focus"


class FocusTracker:
    """The element each app last reported focused (since this process listens)."""

    def __init__(self) -> None:
        self.focused: dict[str, str] = {}
        self.changes = 0  # focus changes seen, to tell "moved and back" from "never moved"

    def on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL or not msg.sender:
            return
        path = msg.path or ""
        if msg.interface == _OBJECT and msg.member == "StateChanged" and msg.body:
            if str(msg.body[0]) != "focused":
                return
            if int(msg.body[1]) == 1:
                self._set(msg.sender, path)
            elif self.focused.get(msg.sender) == path:
                del self.focused[msg.sender]
        elif msg.interface == _FOCUS and msg.member == "Focus":
            self._set(msg.sender, path)

    def _set(self, bus: str, path: str) -> None:
        if self.focused.get(bus) != path:
            self.focused[bus] = path
            self.changes += 1

    def of(self, buses: list[str]) -> tuple[str, str] | None:
        """The focused element of the first of these apps that reported one."""
        for bus in buses:
            if bus in self.focused:
                return (bus, self.focused[bus])
        return None
