"""Keep a headless compositor's seat supplied with a keyboard and a pointer.

``python -m deskpilot.desktop.wayland.seat_keeper wlr SOCKET WIDTH HEIGHT`` (wlroots: virtual
keyboard and pointer protocols) or ``… mutter SESSION_BUS`` (Mutter: a RemoteDesktop session,
whose virtual devices live as long as it does).

A headless compositor has no input devices, so its seat advertises no keyboard or pointer and
apps bind none. A device made just before input is sent flips the seat's capabilities, and the
focused app creates its keyboard only after that news reaches it: the first keys are lost
(measured: a zenity entry on sway got nothing; on mutter it lost the first character). A
sandbox therefore runs this keeper from the start, until the compositor goes away, so every app
binds both devices when it starts and deskpilot's own devices only add to the seat.
"""

from __future__ import annotations

import asyncio
import select
import sys

from deskpilot.desktop.wayland.wire import WaylandError
from deskpilot.desktop.wayland.wlr_input import VirtualInput

SHIFT_L = 0xFFE1


def keep_wlr(path: str, width: int, height: int) -> int:
    try:
        devices = VirtualInput.open(path, (width, height))
    except WaylandError as exc:
        print(f"seat keeper: {exc}", file=sys.stderr)
        return 1
    try:
        while True:
            select.select([devices.conn.sock], [], [])
            devices.conn.read_events()
    except WaylandError:
        return 0  # the compositor went away
    finally:
        devices.close()


async def keep_mutter(session_bus: str) -> int:
    from dbus_fast.aio import MessageBus

    from deskpilot.desktop.wayland.mutter import RD_BUS, RD_PATH, MutterError, _call

    try:
        bus = await MessageBus(bus_address=session_bus).connect()
        reply = await _call(bus, RD_BUS, RD_PATH, "org.gnome.Mutter.RemoteDesktop", "CreateSession")
        session, iface = str(reply[0]), "org.gnome.Mutter.RemoteDesktop.Session"
        await _call(bus, RD_BUS, session, iface, "Start")
        # Mutter makes a session's virtual devices on their first event: make them now
        for pressed in (True, False):
            await _call(
                bus, RD_BUS, session, iface, "NotifyKeyboardKeysym", "ub", [SHIFT_L, pressed]
            )
        await _call(bus, RD_BUS, session, iface, "NotifyPointerMotionRelative", "dd", [0.0, 0.0])
    except (OSError, MutterError) as exc:
        print(f"seat keeper: {exc}", file=sys.stderr)
        return 1
    print("ready", flush=True)
    await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["wlr"] and len(argv) == 4:
        return keep_wlr(argv[1], int(argv[2]), int(argv[3]))
    if argv[:1] == ["mutter"] and len(argv) == 2:
        return asyncio.run(keep_mutter(argv[1]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
