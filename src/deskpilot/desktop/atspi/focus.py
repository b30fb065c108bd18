"""Where each app says the keyboard focus is, from its AT-SPI events.

Apps announce focus with ``object:state-changed:focused`` (and the older ``focus:`` event);
:class:`FocusTracker` keeps the last focused element of each app (bus name → object path), so
that an action's result can say where the focus went, as it happened.

An app that took the focus before this process listened (an app of the user's session started
before deskpilot, or one whose first events came before it had heard who listens) has said
nothing yet: until it does, the element a read of it found focused stands for its focus
(:meth:`FocusTracker.learn`). Once the app reports focus, its events alone decide.
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
        #: apps that have reported focus (gained or lost) since this process listens
        self.heard: set[str] = set()

    def on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL or not msg.sender:
            return
        path = msg.path or ""
        if msg.interface == _OBJECT and msg.member == "StateChanged" and msg.body:
            if str(msg.body[0]) != "focused":
                return
            self.heard.add(msg.sender)
            if int(msg.body[1]) == 1:
                self._set(msg.sender, path)
            elif self.focused.get(msg.sender) == path:
                del self.focused[msg.sender]
        elif msg.interface == _FOCUS and msg.member == "Focus":
            self.heard.add(msg.sender)
            self._set(msg.sender, path)

    def learn(self, bus: str, path: str) -> None:
        """A read found ``path`` focused in an app that has reported no focus since this
        process listens: it stands for the app's focus until the app reports one (not a
        change: the focus did not move, this process learnt where it was)."""
        if bus not in self.heard:
            self.focused[bus] = path

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
