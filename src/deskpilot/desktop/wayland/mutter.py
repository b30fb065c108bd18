"""Mutter's remote-desktop API over D-Bus: input through ``org.gnome.Mutter.RemoteDesktop``,
pixels through a ``org.gnome.Mutter.ScreenCast`` stream tied to the same session.

These are the interfaces gnome-remote-desktop and xdg-desktop-portal-gnome use; on a session
deskpilot started itself (the GNOME sandbox) they are on its session bus with no consent
dialog. A RemoteDesktop session is created, a ScreenCast session is attached to it
(``remote-desktop-session-id``), a stream records the monitor (or the focused window), and
``Start`` on the RemoteDesktop session starts both; the stream then announces its PipeWire node
(``PipeWireStreamAdded``). Absolute pointer motion is given in a stream's coordinates
(``NotifyPointerMotionAbsolute(stream, x, y)``): for a monitor stream those are screen pixels,
for a window stream the window's own. Keys are sent as keysyms (Mutter finds the keycode in
its layout). Everything ends when this connection closes (Mutter watches the caller's name).

Measured on mutter 43.8 headless: RemoteDesktop version 1, device types 7 (keyboard, pointer,
touch); ScreenCast version 4; ``RecordWindow({})`` records the focused window.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from deskpilot.desktop.wayland.keysyms import keysym
from deskpilot.errors import DesktopError

RD_BUS = "org.gnome.Mutter.RemoteDesktop"
RD_PATH = "/org/gnome/Mutter/RemoteDesktop"
SC_BUS = "org.gnome.Mutter.ScreenCast"
SC_PATH = "/org/gnome/Mutter/ScreenCast"
#: ScreenCast cursor modes
CURSOR_HIDDEN, CURSOR_EMBEDDED, CURSOR_METADATA = 0, 1, 2
#: Linux input button codes
BUTTONS = {"left": 0x110, "right": 0x111, "middle": 0x112, "back": 0x116, "forward": 0x115}
AXIS_VERTICAL, AXIS_HORIZONTAL = 0, 1


class MutterError(DesktopError):
    """Mutter's remote-desktop API is missing, refused a call or ended the session."""


@dataclass(frozen=True)
class Stream:
    path: str
    node_id: int
    position: tuple[int, int]
    size: tuple[int, int]


class KeysymSender(Protocol):
    """A remote-desktop session that takes keysyms (Mutter's own, or the portal's)."""

    async def keysym(self, keysym: int, pressed: bool) -> None: ...

    async def press(self, names: Sequence[str]) -> None: ...


async def type_through_keysyms(sender: KeysymSender, text: str) -> None:
    """Type ``text`` with keysyms: printable ASCII, newline and tab as their own; any other
    character through the toolkit's Unicode entry (Ctrl+Shift+U, the code point in hex,
    space), since Mutter drops keysyms its layout lacks without an error."""
    for char in text:
        if char in "\n\t" or 0x20 <= ord(char) <= 0x7E:
            sym = keysym_of(char)
            await sender.keysym(sym, True)
            await sender.keysym(sym, False)
        else:
            await sender.press(["Control_L", "Shift_L", "u"])
            for digit in f"{ord(char):x}":
                await sender.press([digit])
            await sender.press(["space"])


class MutterSession:
    """One RemoteDesktop session with a ScreenCast stream; input and the stream's node."""

    def __init__(self, bus: MessageBus, rd_session: str, sc_session: str) -> None:
        self.bus = bus
        self.rd_session = rd_session
        self.sc_session = sc_session
        self.stream: Stream | None = None
        self.closed: str | None = None
        bus.add_message_handler(self._on_message)

    @classmethod
    async def start(
        cls,
        session_bus: str | None,
        *,
        record: Literal["monitor", "window"] = "monitor",
        cursor_mode: int = CURSOR_HIDDEN,
        timeout: float = 10.0,
    ) -> MutterSession:
        """Connect to ``session_bus`` (None: the caller's own), start a session and wait for its
        stream's PipeWire node."""
        try:
            if session_bus:
                bus = await MessageBus(bus_address=session_bus).connect()
            else:
                bus = await MessageBus(bus_type=BusType.SESSION).connect()
        except (OSError, ValueError) as exc:
            raise MutterError(f"cannot reach the session bus: {exc}") from exc
        try:
            rd = await _call(
                bus, RD_BUS, RD_PATH, "org.gnome.Mutter.RemoteDesktop", "CreateSession"
            )
            rd_session = str(rd[0])
            sid = await _get(
                bus, RD_BUS, rd_session, "org.gnome.Mutter.RemoteDesktop.Session", "SessionId"
            )
            sc = await _call(
                bus,
                SC_BUS,
                SC_PATH,
                "org.gnome.Mutter.ScreenCast",
                "CreateSession",
                "a{sv}",
                [{"remote-desktop-session-id": Variant("s", str(sid))}],
            )
            self = cls(bus, rd_session, str(sc[0]))
            props = {"cursor-mode": Variant("u", cursor_mode)}
            iface = "org.gnome.Mutter.ScreenCast.Session"
            if record == "window":
                reply = await _call(
                    bus, SC_BUS, self.sc_session, iface, "RecordWindow", "a{sv}", [props]
                )
            else:
                reply = await _call(
                    bus, SC_BUS, self.sc_session, iface, "RecordMonitor", "sa{sv}", ["", props]
                )
            stream_path = str(reply[0])
            added: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            self._waiting = (stream_path, added)
            await _call(
                bus,
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                "AddMatch",
                "s",
                [f"type='signal',sender='{SC_BUS}',path='{stream_path}'"],
            )
            await _call(bus, RD_BUS, rd_session, "org.gnome.Mutter.RemoteDesktop.Session", "Start")
            node = await asyncio.wait_for(added, timeout)
            params = await _get(
                bus, SC_BUS, stream_path, "org.gnome.Mutter.ScreenCast.Stream", "Parameters"
            )
        except BaseException:
            bus.disconnect()
            raise
        pos = params.get("position")
        size = params.get("size")
        self.stream = Stream(
            path=stream_path,
            node_id=node,
            position=tuple(pos.value) if pos is not None else (0, 0),
            size=tuple(size.value) if size is not None else (0, 0),
        )
        return self

    _waiting: tuple[str, asyncio.Future[int]] | None = None

    def _on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL:
            return
        if msg.member == "PipeWireStreamAdded" and self._waiting is not None:
            path, fut = self._waiting
            if msg.path == path and not fut.done():
                fut.set_result(int(msg.body[0]))
        elif msg.member == "Closed" and msg.path in (self.rd_session, self.sc_session):
            self.closed = "Mutter closed the remote-desktop session"

    async def close(self) -> None:
        if self.closed is None:
            with contextlib.suppress(MutterError):
                await _call(
                    self.bus,
                    RD_BUS,
                    self.rd_session,
                    "org.gnome.Mutter.RemoteDesktop.Session",
                    "Stop",
                )
            self.closed = "closed"
        self.bus.disconnect()

    # -- input -----------------------------------------------------------------------------

    async def _notify(self, member: str, signature: str, body: list[Any]) -> None:
        if self.closed is not None:
            raise MutterError(f"the remote-desktop session is over ({self.closed})")
        await _call(
            self.bus,
            RD_BUS,
            self.rd_session,
            "org.gnome.Mutter.RemoteDesktop.Session",
            member,
            signature,
            body,
        )

    async def keysym(self, keysym: int, pressed: bool) -> None:
        await self._notify("NotifyKeyboardKeysym", "ub", [keysym, pressed])

    async def press(self, names: Sequence[str]) -> None:
        """Press keys (keysym names or single characters) in order, release them in reverse."""
        syms = [keysym_of(n) for n in names]
        for sym in syms:
            await self.keysym(sym, True)
        for sym in reversed(syms):
            await self.keysym(sym, False)

    async def type_text(self, text: str) -> None:
        """Type ``text`` into the focused window, character by character.

        Mutter types a keysym only if its keyboard layout has it (measured on mutter 43 with
        the default US layout: ``ü`` and ``€`` were dropped without an error), so characters
        outside printable ASCII go in through the toolkit's Unicode entry: Ctrl+Shift+U, the
        code point in hex, space — GTK's and IBus's input methods take it; other toolkits may
        not (callers that can should set text through accessibility instead)."""
        await type_through_keysyms(self, text)

    async def move(self, x: float, y: float) -> None:
        """Move the pointer to (x, y) in the stream's coordinates."""
        if self.stream is None:
            raise MutterError("absolute pointer motion needs a ScreenCast stream")
        w, h = self.stream.size
        if not (0 <= x < w and 0 <= y < h):
            raise MutterError(f"point ({x:g}, {y:g}) is outside the recorded area ({w}x{h})")
        await self._notify(
            "NotifyPointerMotionAbsolute", "sdd", [self.stream.path, float(x), float(y)]
        )

    async def button(self, name: str, pressed: bool) -> None:
        code = BUTTONS.get(name)
        if code is None:
            raise MutterError(f"unknown mouse button {name!r} (one of {', '.join(BUTTONS)})")
        await self._notify("NotifyPointerButton", "ib", [code, pressed])

    async def scroll(self, axis: int, steps: int) -> None:
        await self._notify("NotifyPointerAxisDiscrete", "ui", [axis, steps])


def keysym_of(name: str) -> int:
    """The keysym of a key name (``Return``, ``Control_L``) or of one character."""
    try:
        return keysym(name)
    except DesktopError as exc:
        raise MutterError(str(exc)) from None


# -- D-Bus helpers ---------------------------------------------------------------------------


async def _call(
    bus: MessageBus,
    dest: str,
    path: str,
    iface: str,
    member: str,
    signature: str = "",
    body: list[Any] | None = None,
    timeout: float = 10.0,
) -> list[Any]:
    msg = Message(
        destination=dest,
        path=path,
        interface=iface,
        member=member,
        signature=signature,
        body=body or [],
    )
    try:
        reply = await asyncio.wait_for(bus.call(msg), timeout)
    except TimeoutError as exc:
        raise MutterError(f"{iface}.{member} did not answer within {timeout:g}s") from exc
    if reply is None or reply.message_type == MessageType.ERROR:
        name = reply.error_name if reply is not None else "no reply"
        detail = reply.body[0] if reply is not None and reply.body else ""
        if name == "org.freedesktop.DBus.Error.ServiceUnknown":
            raise MutterError(
                f"{dest} is not on this session bus: not a GNOME (Mutter) session, or Mutter "
                "runs without its remote-desktop API"
            )
        raise MutterError(f"{iface}.{member} failed: {name}: {detail}")
    return list(reply.body)


async def _get(bus: MessageBus, dest: str, path: str, iface: str, prop: str) -> Any:
    body = await _call(
        bus, dest, path, "org.freedesktop.DBus.Properties", "Get", "ss", [iface, prop]
    )
    return body[0].value
