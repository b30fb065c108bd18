"""The ports: what a backend provides, one small interface per job, each with an in-memory fake.

A backend (:mod:`deskpilot.desktop.x11`, :mod:`deskpilot.desktop.wayland`, a toy one in a
test) is a set of port implementations bundled as :class:`~deskpilot.desktop.ports.bundle.Ports`
and nothing else; the skills (:mod:`deskpilot.desktop.skills`) and the facade
(:mod:`deskpilot.desktop.facade`) are written against these interfaces only.

* :mod:`.identity` — backend-neutral window handles and element keys;
* :mod:`.keys` — the key vocabulary (names of keys, whatever the platform);
* :mod:`.windows` — the window system: list, active, activate, geometry, window at a point,
  minimize, close, the screen's size;
* :mod:`.input` — keyboard, pointer and wheel;
* :mod:`.capture` — a window or the screen to pixels;
* :mod:`.accessibility` — apps' accessibility trees, live elements, their actions, text,
  values and tables, and what their events said;
* :mod:`.launching` — the app catalogue and starting processes in the desktop's environment;
* :mod:`.bundle` — the five together, as a backend hands them over;
* :mod:`.fake` — an in-memory desktop behind all five, for unit tests (its state:
  :mod:`.fake_world`; its accessibility: :mod:`.fake_accessibility`).

May import: :mod:`deskpilot.desktop.base` and the value helpers (:mod:`deskpilot.desktop.caret`,
:mod:`deskpilot.desktop.cell_refs`), :mod:`deskpilot.config` (the settings a backend was opened
with), :mod:`deskpilot.errors`, the standard library; the fakes also
:mod:`deskpilot.desktop.fake_apps` and Pillow. Never a platform library (Xlib, D-Bus, …):
those belong to a backend (``tests/unit/test_rooms.py`` checks it).

This package's ``__init__`` imports nothing: :mod:`deskpilot.desktop.base` imports
:mod:`.identity`, and every other module here imports :mod:`deskpilot.desktop.base`.
"""
