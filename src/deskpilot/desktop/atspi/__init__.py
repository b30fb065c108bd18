"""AT-SPI over D-Bus (dbus-fast): the accessibility port of every backend whose apps speak it.

Owns: the bus connection and its bounded, timed calls (:mod:`.bus`, :mod:`.calls`,
:mod:`.connect`), the hybrid tree reader (bulk ``Cache.GetItems`` plus live repairs:
:mod:`.tree`, :mod:`.fetch`, :mod:`.virtual`, :mod:`.table`, :mod:`.lazy`, :mod:`.model`; nodes
whose role undersells them: :mod:`.kinds`), the
details of shown nodes (:mod:`.details`, :mod:`.actions`), the event cache (:mod:`.cache`,
:mod:`.focus`), windows' frames (:mod:`.frames`; GTK 4 popovers moved to where they are
drawn: :mod:`.popovers`; hit-tests at a point, a web engine's renderer's answer waited for:
:mod:`.point_hits`), element checks and actions
(:mod:`.elements`), and :class:`.port.AtspiAccessibility`, the port itself.

May import: :mod:`deskpilot.desktop.base`, :mod:`deskpilot.desktop.ports`, the value helpers
(:mod:`deskpilot.desktop.caret`, :mod:`deskpilot.desktop.cell_refs`,
:mod:`deskpilot.desktop.grid`, :mod:`deskpilot.desktop.toolkit_names`), :mod:`deskpilot.config`,
:mod:`deskpilot.errors`, dbus-fast. Never a window system (Xlib) nor the skills.
"""
