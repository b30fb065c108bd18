"""A window that prints the input it receives: ``python -m tests.desktop.input_probe TITLE``.

Opened on ``$DISPLAY`` at (60, 60), 400x300. Prints ``ready <xid>`` once mapped, then one JSON
line per key press (``{"key": "h"}``: the character, else the keysym number; modifier
keys are left out) and button press (``{"button": 1,
"x": 12, "y": 34}``, window coordinates). The test reads what arrived from the app's own
output, a channel deskpilot does not use.
"""

from __future__ import annotations

import json
import sys

from Xlib import XK, X, display
from Xlib.xobject.drawable import Window


def probe_window(d: display.Display, title: str, event_mask: int = 0) -> Window:
    """A white 400x300 top-level window at (60, 60) on ``d`` named ``title``, not yet mapped."""
    screen = d.screen()
    window = screen.root.create_window(
        60,
        60,
        400,
        300,
        0,
        screen.root_depth,
        X.InputOutput,
        X.CopyFromParent,
        background_pixel=screen.white_pixel,
        event_mask=event_mask,
    )
    window.set_wm_name(title)
    return window


def main() -> None:
    title = sys.argv[1] if len(sys.argv) > 1 else "input probe"
    d = display.Display()
    events = X.KeyPressMask | X.ButtonPressMask | X.ExposureMask | X.StructureNotifyMask
    window = probe_window(d, title, events)
    window.set_wm_class("input-probe", "InputProbe")
    window.set_wm_hints(flags=1, input=1)  # InputHint: it takes the keyboard focus
    window.map()
    d.flush()
    while True:
        event = d.next_event()
        if event.type == X.MapNotify:
            print(f"ready {window.id}", flush=True)
        elif event.type == X.MappingNotify:
            d.refresh_keyboard_mapping(event)
        elif event.type == X.KeyPress:
            index = 1 if event.state & X.ShiftMask else 0
            sym = d.keycode_to_keysym(event.detail, index) or d.keycode_to_keysym(event.detail, 0)
            if 0xFFE1 <= sym <= 0xFFEE:  # a modifier (Shift, Control, Alt…): part of a key
                continue
            print(json.dumps({"key": XK.keysym_to_string(sym) or str(sym)}), flush=True)
        elif event.type == X.ButtonPress:
            print(
                json.dumps({"button": event.detail, "x": event.event_x, "y": event.event_y}),
                flush=True,
            )


if __name__ == "__main__":
    main()
