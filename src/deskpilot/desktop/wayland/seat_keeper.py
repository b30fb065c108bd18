"""Keep a wlroots seat's keyboard and pointer present (``python -m
deskpilot.desktop.wayland.seat_keeper SOCKET WIDTH HEIGHT``).

A headless sway has no input devices, so its seat advertises no keyboard or pointer and apps
bind none. A virtual keyboard made just before keys are sent flips the seat's capabilities, and
the focused app creates its keyboard only after that news reaches it: the first keys are lost
(measured: a zenity entry got nothing). A sandbox therefore runs this keeper from the start: it
holds a virtual keyboard and pointer until the compositor goes away, so every app binds both
when it starts and deskpilot's own devices (one per process) only add to the seat.
"""

from __future__ import annotations

import select
import sys

from deskpilot.desktop.wayland.wire import WaylandError
from deskpilot.desktop.wayland.wlr_input import VirtualInput


def main(argv: list[str]) -> int:
    path, width, height = argv[0], int(argv[1]), int(argv[2])
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
