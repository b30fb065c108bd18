"""xdg-desktop-portal for a user's own Wayland session: input (RemoteDesktop) and pixels
(ScreenCast, Screenshot), with the user's consent asked once.

On a desktop deskpilot did not start, a third-party program gets input and pixels only through
the portal (``org.freedesktop.portal.Desktop`` on the session bus). The flow is the portal's:
every call returns a *request* object whose ``Response(u code, a{sv} results)`` signal carries
the answer — code 0 granted, 1 refused by the user, 2 failed. deskpilot subscribes to the
request path before calling (the path is predictable: ``…/request/SENDER/TOKEN``), so no answer
is missed.

1. ``RemoteDesktop.CreateSession`` → a session handle;
2. ``RemoteDesktop.SelectDevices`` (keyboard + pointer), with ``persist_mode`` 2 ("until
   revoked") and the restore token saved last time, if any;
3. ``ScreenCast.SelectSources`` (a monitor) on the same session — absolute pointer motion is
   given in a stream's coordinates;
4. ``RemoteDesktop.Start`` → the consent dialog (skipped when the restore token is still
   valid), then the devices, the streams (PipeWire nodes with position and size) and a new
   restore token, which :class:`TokenStore` keeps in deskpilot's state dir;
5. ``ScreenCast.OpenPipeWireRemote`` → a PipeWire fd for the frames
   (:class:`~deskpilot.desktop.wayland.pipewire.FrameReader`).

Measured with xdg-desktop-portal 1.16 + xdg-desktop-portal-gnome 43 (Debian 12) on headless
mutter: the dialog ("Remote desktop": a monitor list, an "Allow remote interaction" switch that
starts off, Cancel/Share) answers as above, but no restore token comes back for remote desktop
(that needs xdg-desktop-portal-gnome 46), so there the user is asked at every start.

A refused dialog is :class:`ConsentRefused`; a restore token the portal no longer honours (the
user revoked the permission) is :class:`ConsentRevoked` and the token is forgotten; both say
what the user must do. A portal without RemoteDesktop (or too old to keep a grant) is
:class:`PortalUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from deskpilot.desktop.wayland.mutter import BUTTONS, keysym_of, type_through_keysyms
from deskpilot.errors import DesktopError

PORTAL_BUS = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
RD = "org.freedesktop.portal.RemoteDesktop"
SC = "org.freedesktop.portal.ScreenCast"
SHOT = "org.freedesktop.portal.Screenshot"
REQUEST = "org.freedesktop.portal.Request"
KEYBOARD, POINTER = 1, 2
MONITOR, WINDOW = 1, 2
PERSIST_UNTIL_REVOKED = 2
GRANTED, REFUSED = 0, 1

WHAT_TO_DO = (
    "deskpilot needs to see the screen and send keyboard and pointer input; your desktop asks "
    "you once and remembers the answer"
)


class PortalError(DesktopError):
    """The desktop portal failed or is missing."""


class PortalUnavailable(PortalError):
    """No portal, or one without the interfaces deskpilot needs."""


class ConsentRefused(PortalError):
    """The user declined the desktop's permission dialog."""


class ConsentRevoked(PortalError):
    """A permission given earlier is no longer honoured."""


class TokenStore:
    """The portal's restore token, kept in deskpilot's state dir (one file, mode 0600)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> str | None:
        try:
            token = self.path.read_text().strip()
        except OSError:
            return None
        return token or None

    def save(self, token: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(token)
        tmp.replace(self.path)

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


@dataclass(frozen=True)
class PortalStream:
    node_id: int
    position: tuple[int, int]
    size: tuple[int, int]
    source_type: int = MONITOR


@dataclass
class PortalSession:
    """A started RemoteDesktop (+ ScreenCast) portal session."""

    bus: MessageBus
    handle: str
    devices: int
    streams: list[PortalStream] = field(default_factory=list)
    restored: bool = False  # no dialog was shown: the saved grant was used
    #: the portal's RemoteDesktop version (2+ can keep a grant) and whether it gave a token
    #: to keep it (xdg-desktop-portal-gnome 43 does not for remote desktop: asked every time)
    version: int = 0
    token_offered: bool = False

    @classmethod
    async def open(
        cls,
        tokens: TokenStore,
        *,
        session_bus: str | None = None,
        devices: int = KEYBOARD | POINTER,
        sources: int = MONITOR,
        timeout: float = 300.0,
    ) -> PortalSession:
        """Start a session; the first time, the desktop asks the user (``timeout``: how long
        to wait for the answer)."""
        bus = await _connect(session_bus)
        try:
            return await _open(cls, bus, tokens, devices, sources, timeout)
        except BaseException:
            bus.disconnect()
            raise

    async def close(self) -> None:
        with contextlib.suppress(PortalError):
            await _call(self.bus, self.handle, "org.freedesktop.portal.Session", "Close")
        self.bus.disconnect()

    async def pipewire_fd(self) -> int:
        """A PipeWire connection with access to this session's streams (caller closes it)."""
        msg = Message(
            destination=PORTAL_BUS,
            path=PORTAL_PATH,
            interface=SC,
            member="OpenPipeWireRemote",
            signature="oa{sv}",
            body=[self.handle, {}],
        )
        reply = await self.bus.call(msg)
        if reply is None or reply.message_type == MessageType.ERROR:
            raise PortalError(f"the portal gave no PipeWire connection: {_error_text(reply)}")
        if not reply.unix_fds:
            raise PortalError("the portal's PipeWire connection carried no file descriptor")
        return int(reply.unix_fds[0])

    # -- input -----------------------------------------------------------------------------

    async def _notify(self, member: str, signature: str, args: Sequence[Any]) -> None:
        await _call(
            self.bus, PORTAL_PATH, RD, member, "oa{sv}" + signature, [self.handle, {}, *args]
        )

    async def keysym(self, keysym: int, pressed: bool) -> None:
        await self._notify("NotifyKeyboardKeysym", "iu", [keysym, 1 if pressed else 0])

    async def press(self, names: Sequence[str]) -> None:
        syms = [keysym_of(n) for n in names]
        for sym in syms:
            await self.keysym(sym, True)
        for sym in reversed(syms):
            await self.keysym(sym, False)

    async def type_text(self, text: str) -> None:
        await type_through_keysyms(self, text)

    async def move(self, x: float, y: float, stream: int = 0) -> None:
        """Move the pointer to (x, y) in the coordinates of ``self.streams[stream]``."""
        if not self.streams:
            raise PortalError("absolute pointer motion needs a shared screen (no stream)")
        target = self.streams[stream]
        w, h = target.size
        if not (0 <= x < w and 0 <= y < h):
            raise PortalError(f"point ({x:g}, {y:g}) is outside the shared screen ({w}x{h})")
        await self._notify(
            "NotifyPointerMotionAbsolute", "udd", [target.node_id, float(x), float(y)]
        )

    async def button(self, name: str, pressed: bool) -> None:
        code = BUTTONS.get(name)
        if code is None:
            raise PortalError(f"unknown mouse button {name!r} (one of {', '.join(BUTTONS)})")
        await self._notify("NotifyPointerButton", "iu", [code, 1 if pressed else 0])

    async def scroll(self, axis: int, steps: int) -> None:
        await self._notify("NotifyPointerAxisDiscrete", "ui", [axis, steps])


async def screenshot(session_bus: str | None = None, *, timeout: float = 120.0) -> str:
    """A screenshot through the Screenshot portal (non-interactive); returns its file path."""
    bus = await _connect(session_bus)
    try:
        token = _token()
        results = await _request(
            bus,
            token,
            SHOT,
            "Screenshot",
            "sa{sv}",
            ["", {"handle_token": Variant("s", token), "interactive": Variant("b", False)}],
            timeout,
        )
    finally:
        bus.disconnect()
    uri = str(results.get("uri", Variant("s", "")).value)
    if not uri.startswith("file://"):
        raise PortalError(f"the screenshot portal returned no file ({uri!r})")
    return uri.removeprefix("file://")


# -- the session flow ------------------------------------------------------------------------


async def _open(
    cls: type[PortalSession],
    bus: MessageBus,
    tokens: TokenStore,
    devices: int,
    sources: int,
    timeout: float,
) -> PortalSession:
    version = await _version(bus, RD)
    if version < 1:
        raise PortalUnavailable(
            "this desktop's portal has no RemoteDesktop interface: deskpilot cannot send input "
            "to apps on this Wayland session (install xdg-desktop-portal and your desktop's "
            "backend: xdg-desktop-portal-gnome or -kde)"
        )
    token = _token()
    created = await _request(
        bus,
        token,
        RD,
        "CreateSession",
        "a{sv}",
        [{"handle_token": Variant("s", token), "session_handle_token": Variant("s", _token())}],
        30.0,
    )
    handle = str(created["session_handle"].value)
    saved = tokens.load()
    opts: dict[str, Variant] = {"types": Variant("u", devices)}
    if version >= 2:
        opts["persist_mode"] = Variant("u", PERSIST_UNTIL_REVOKED)
        if saved:
            opts["restore_token"] = Variant("s", saved)
    token = _token()
    opts["handle_token"] = Variant("s", token)
    await _request(bus, token, RD, "SelectDevices", "oa{sv}", [handle, opts], 30.0)
    if sources:
        token = _token()
        await _request(
            bus,
            token,
            SC,
            "SelectSources",
            "oa{sv}",
            [
                handle,
                {
                    "handle_token": Variant("s", token),
                    "types": Variant("u", sources),
                    "multiple": Variant("b", False),
                },
            ],
            30.0,
        )
    token = _token()
    try:
        started = await _request(
            bus,
            token,
            RD,
            "Start",
            "osa{sv}",
            [handle, "", {"handle_token": Variant("s", token)}],
            timeout,
        )
    except ConsentRefused as exc:
        if saved:
            tokens.clear()
            raise ConsentRevoked(
                "the permission you gave deskpilot earlier is no longer valid and the desktop's "
                "dialog was declined; run the command again and choose to share the screen and "
                "allow remote interaction (" + WHAT_TO_DO + ")"
            ) from exc
        raise
    new_token = started.get("restore_token")
    if new_token is not None and str(new_token.value):
        tokens.save(str(new_token.value))
    granted = int(started.get("devices", Variant("u", 0)).value)
    streams = [_stream(s) for s in started.get("streams", Variant("a(ua{sv})", [])).value]
    missing = [
        what
        for what, lacking in (
            ("the keyboard", devices & KEYBOARD and not granted & KEYBOARD),
            ("the pointer", devices & POINTER and not granted & POINTER),
            ("a screen", sources and not streams),
        )
        if lacking
    ]
    if missing:
        tokens.clear()
        kind = ConsentRevoked if saved else ConsentRefused
        raise kind(
            f"the desktop did not grant {' and '.join(missing)}; run the command again and "
            "allow remote interaction and sharing a screen in the dialog"
        )
    offered = new_token is not None and bool(str(new_token.value))
    if not offered and saved:
        tokens.clear()  # not honoured any more (or never kept): the next start asks again
    return cls(
        bus=bus,
        handle=handle,
        devices=granted,
        streams=streams,
        restored=bool(saved) and offered,
        version=version,
        token_offered=offered,
    )


def _stream(entry: Any) -> PortalStream:
    node, props = entry
    pos = props.get("position")
    size = props.get("size")
    kind = props.get("source_type")
    return PortalStream(
        node_id=int(node),
        position=tuple(pos.value) if pos is not None else (0, 0),
        size=tuple(size.value) if size is not None else (0, 0),
        source_type=int(kind.value) if kind is not None else MONITOR,
    )


# -- D-Bus plumbing --------------------------------------------------------------------------


def _token() -> str:
    return "deskpilot_" + secrets.token_hex(6)


async def _connect(session_bus: str | None) -> MessageBus:
    try:
        if session_bus:
            return await MessageBus(bus_address=session_bus, negotiate_unix_fd=True).connect()
        return await MessageBus(bus_type=BusType.SESSION, negotiate_unix_fd=True).connect()
    except (OSError, ValueError) as exc:
        raise PortalUnavailable(f"cannot reach the session bus: {exc}") from exc


async def _version(bus: MessageBus, iface: str) -> int:
    msg = Message(
        destination=PORTAL_BUS,
        path=PORTAL_PATH,
        interface="org.freedesktop.DBus.Properties",
        member="Get",
        signature="ss",
        body=[iface, "version"],
    )
    try:
        reply = await asyncio.wait_for(bus.call(msg), 30.0)
    except TimeoutError:
        return 0
    if reply is None or reply.message_type == MessageType.ERROR:
        return 0
    return int(reply.body[0].value)


async def _call(
    bus: MessageBus,
    path: str,
    iface: str,
    member: str,
    signature: str = "",
    body: list[Any] | None = None,
) -> list[Any]:
    msg = Message(
        destination=PORTAL_BUS,
        path=path,
        interface=iface,
        member=member,
        signature=signature,
        body=body or [],
    )
    reply = await bus.call(msg)
    if reply is None or reply.message_type == MessageType.ERROR:
        raise PortalError(f"{iface}.{member} failed: {_error_text(reply)}")
    return list(reply.body)


def _error_text(reply: Message | None) -> str:
    if reply is None:
        return "no reply"
    detail = reply.body[0] if reply.body else ""
    return f"{reply.error_name}: {detail}"


async def _request(
    bus: MessageBus,
    token: str,
    iface: str,
    member: str,
    signature: str,
    body: list[Any],
    timeout: float,
) -> dict[str, Variant]:
    """Call a portal method that answers through a Request object; return its results."""
    sender = (bus.unique_name or "").lstrip(":").replace(".", "_")
    path = f"{PORTAL_PATH}/request/{sender}/{token}"
    answer: asyncio.Future[tuple[int, dict[str, Variant]]] = (
        asyncio.get_running_loop().create_future()
    )

    def on_message(msg: Message) -> None:
        if (
            msg.message_type == MessageType.SIGNAL
            and msg.path == path
            and msg.member == "Response"
            and not answer.done()
        ):
            answer.set_result((int(msg.body[0]), dict(msg.body[1])))

    bus.add_message_handler(on_message)
    try:
        rule = f"type='signal',interface='{REQUEST}',member='Response',path='{path}'"
        await _dbus_add_match(bus, rule)
        await _call(bus, PORTAL_PATH, iface, member, signature, body)
        try:
            code, results = await asyncio.wait_for(answer, timeout)
        except TimeoutError:
            with contextlib.suppress(PortalError):
                await _call(bus, path, REQUEST, "Close")
            raise ConsentRefused(
                f"nobody answered the desktop's permission dialog within {timeout:.0f}s; "
                f"{WHAT_TO_DO}: run the command again and answer it"
            ) from None
    finally:
        bus.remove_message_handler(on_message)
    if code == REFUSED:
        raise ConsentRefused(
            "you declined the desktop's permission dialog, so deskpilot cannot see or operate "
            f"this session; {WHAT_TO_DO}. Run the command again and choose to share the screen "
            "and allow remote interaction"
        )
    if code != GRANTED:
        raise PortalError(f"the desktop portal could not complete {member} (code {code})")
    return results


async def _dbus_add_match(bus: MessageBus, rule: str) -> None:
    msg = Message(
        destination="org.freedesktop.DBus",
        path="/org/freedesktop/DBus",
        interface="org.freedesktop.DBus",
        member="AddMatch",
        signature="s",
        body=[rule],
    )
    reply = await bus.call(msg)
    if reply is None or reply.message_type == MessageType.ERROR:
        raise PortalError(f"cannot listen for the portal's answer: {_error_text(reply)}")
