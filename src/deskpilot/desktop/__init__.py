"""The seam to the real machine: windows, apps, accessibility trees, input and capture.

Rooms, from the bottom up (each package's docstring says what it owns and may import):

* :mod:`.ports` — five small interfaces a backend implements (windows, input, capture,
  accessibility, launching), backend-neutral identity and key names, an in-memory fake;
* backends, each a set of port implementations and nothing else: :mod:`.x11` (the only
  package that imports Xlib) with :mod:`.atspi` (AT-SPI over D-Bus, shared by every backend
  whose apps speak it) and :mod:`.xdg` (launching on a freedesktop desktop);
  :mod:`.wayland` next;
* :mod:`.skills` — what every backend gets for free, written against the ports only: reading,
  filling every kind of field, choosing items, table cells, scrolling judged by what moved,
  settling, covering, documents, pointer aiming, launching;
* :mod:`.facade` — :class:`~deskpilot.desktop.facade.DesktopFacade`, the
  :class:`~deskpilot.desktop.base.Desktop` composed of a backend's ports and the skills;
* :mod:`.registry` — which backend (``backend = "auto" | "x11" | …``); the only place that
  names one; :mod:`.place` — where to run (a new sandbox desktop, or this desktop), the one
  way every surface gets a desktop;
* :mod:`.live` — a desktop opened on first use and again after it was lost (long-lived
  surfaces).

Shared values: :mod:`.base` (the Desktop protocol and what crosses it), :mod:`.keys` (the
shortcut grammar), :mod:`.window_ids` (the window IDs the tools speak, parsed and resolved),
:mod:`.caret`, :mod:`.cell_refs`, :mod:`.grid`, :mod:`.toolkit_names`; the freedesktop
catalogue and app environment: :mod:`.apps`, :mod:`.a11yenv`. The whole-Desktop fake for the
layers above: :mod:`.fake` (apps: :mod:`.fake_apps`).
"""
