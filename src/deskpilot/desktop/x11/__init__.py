"""The X11 backend's window system, input and capture: the only package that imports Xlib.

Owns: the display connection (:mod:`.display`), EWMH windows (:mod:`.windows`; which one has
the keyboard: :mod:`.focus`), XTest input (:mod:`.input`, key names to keysyms:
:mod:`.keysyms`), composite capture (:mod:`.capture`, popups: :mod:`.popups`), the small
synchronous probes used while a desktop starts (:mod:`.probe`), window titles for eval's
checkers over a connection of their own (:mod:`.titles`), and :mod:`.backend`, which bundles
these with AT-SPI and the freedesktop launcher as the ``x11`` backend.

May import: python-xlib, mss, Pillow, :mod:`deskpilot.desktop.base`,
:mod:`deskpilot.desktop.ports`, :mod:`deskpilot.desktop.apps`, :mod:`deskpilot.desktop.atspi`
and :mod:`deskpilot.desktop.xdg` (in :mod:`.backend` only), :mod:`deskpilot.config`,
:mod:`deskpilot.errors`. Never the skills.
"""
