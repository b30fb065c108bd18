"""A test window with coloured targets at known pixels; it logs every click it receives.

Run on a sandbox display (python-xlib only)::

    python native_targets.py OUT.jsonl WIDTH HEIGHT X,Y X,Y ...

Each target is an 11×11 square of its own colour (``COLOURS``, in order) centred on X,Y
(window-relative). Every button press is appended to OUT.jsonl as
``{"x": .., "y": .., "button": ..}`` in window coordinates, exactly as the X server reports it.
"""

from __future__ import annotations

import json
import os
import sys

from Xlib import X, display

COLOURS = [(255, 0, 0), (0, 200, 0), (0, 0, 255), (255, 0, 255), (255, 140, 0), (0, 200, 200)]
HALF = 5  # squares span centre ± 5 px
TITLE = "deskpilot targets"


def main() -> None:
    out, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    targets = [tuple(int(v) for v in arg.split(",")) for arg in sys.argv[4:]]
    d = display.Display()
    screen = d.screen()
    win = screen.root.create_window(
        0,
        0,
        width,
        height,
        0,
        screen.root_depth,
        X.InputOutput,
        X.CopyFromParent,
        background_pixel=screen.white_pixel,
        event_mask=X.ExposureMask | X.ButtonPressMask | X.StructureNotifyMask,
    )
    win.set_wm_name(TITLE)
    win.set_wm_class("deskpilot-targets", "DeskpilotTargets")
    win.change_property(d.intern_atom("_NET_WM_PID"), d.intern_atom("CARDINAL"), 32, [os.getpid()])
    win.set_wm_normal_hints(
        flags=0x30, min_width=width, min_height=height, max_width=width, max_height=height
    )  # fixed size
    colormap = screen.default_colormap
    gcs = []
    for r, g, b in COLOURS:
        pixel = colormap.alloc_color(r * 257, g * 257, b * 257).pixel
        gcs.append(win.create_gc(foreground=pixel))
    win.map()
    d.flush()
    with open(out, "a") as log:
        while True:
            event = d.next_event()
            if event.type == X.Expose and event.count == 0:
                for i, (x, y) in enumerate(targets):
                    win.fill_rectangle(
                        gcs[i % len(gcs)], x - HALF, y - HALF, 2 * HALF + 1, 2 * HALF + 1
                    )
                d.flush()
            elif event.type == X.ButtonPress:
                log.write(
                    json.dumps({"x": event.event_x, "y": event.event_y, "button": event.detail})
                    + "\n"
                )
                log.flush()


if __name__ == "__main__":
    main()
