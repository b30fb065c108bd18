"""A window for the console benchmark: it repaints on command and flips a colour square.

Run as ``python -m bench.console_probe`` with ``DISPLAY`` set; it maps a 1000x700 window, waits
until the window manager lists it (``_NET_CLIENT_LIST``: only then can a session find it by its
ID — on a loaded machine openbox takes seconds to manage a new window, and a session handed the ID
before that found no such window), prints ``<pid>/<xid>`` (its stable window ID) and then reads
commands from stdin, one per line:

* ``busy`` / ``quiet`` — repaint 40 random bars every 250 ms (the note's "heavy" workload),
  or nothing;
* ``flip R G B`` — paint the 200x200 square at the top left in that colour, at once.

The bars stay clear of the square, so the square's colour is only ever the last flip's.
"""

from __future__ import annotations

import os
import random
import select
import sys
import time

from Xlib import X, Xatom, display

WIDTH, HEIGHT, SQUARE = 1000, 700, 200


def listed(d: display.Display, xid: int, timeout: float = 60.0) -> None:
    """Return once the window manager lists ``xid`` in the root's _NET_CLIENT_LIST (woken by
    the root's property changes); after ``timeout`` seconds, exit with a message."""
    atom = d.intern_atom("_NET_CLIENT_LIST")
    end = time.monotonic() + timeout
    while True:
        prop = d.screen().root.get_full_property(atom, Xatom.WINDOW)
        if prop is not None and xid in prop.value:
            return
        left = end - time.monotonic()
        if left <= 0:
            sys.exit(
                f"console_probe: the window manager did not list window {xid} in {timeout:g} s"
            )
        if not d.pending_events():
            select.select([d], [], [], min(left, 0.5))
        while d.pending_events():
            d.next_event()


def main() -> None:
    d = display.Display()
    screen = d.screen()
    win = screen.root.create_window(
        20,
        20,
        WIDTH,
        HEIGHT,
        0,
        screen.root_depth,
        X.InputOutput,
        X.CopyFromParent,
        background_pixel=screen.white_pixel,
        event_mask=X.ExposureMask,
    )
    win.set_wm_name("probe")
    win.set_wm_class("probe", "DeskpilotProbe")
    win.change_property(d.intern_atom("_NET_WM_PID"), Xatom.CARDINAL, 32, [os.getpid()])
    screen.root.change_attributes(event_mask=X.PropertyChangeMask)
    win.map()
    gc = win.create_gc(foreground=0)
    d.sync()
    listed(d, win.id)
    print(f"{os.getpid()}/{win.id}", flush=True)
    busy = False
    last = 0.0
    while True:
        timeout = max(0.0, 0.25 - (time.monotonic() - last)) if busy else None
        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        if ready:
            line = sys.stdin.readline()
            if not line:
                return
            words = line.split()
            if words[:1] == ["busy"]:
                busy = True
            elif words[:1] == ["quiet"]:
                busy = False
            elif words[:1] == ["flip"] and len(words) == 4:
                r, g, b = (int(w) for w in words[1:])
                gc.change(foreground=(r << 16) | (g << 8) | b)
                win.fill_rectangle(gc, 0, 0, SQUARE, SQUARE)
                d.sync()
        if busy and time.monotonic() - last >= 0.25:
            last = time.monotonic()
            for _ in range(40):
                gc.change(foreground=random.randint(0, 0xFFFFFF))
                x = random.randint(SQUARE + 10, WIDTH - 110)
                win.fill_rectangle(
                    gc, x, random.randint(0, HEIGHT - 20), random.randint(5, 100), 20
                )
            d.sync()
        while d.pending_events():
            d.next_event()


if __name__ == "__main__":
    main()
