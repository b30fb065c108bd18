"""Launching on a freedesktop (Linux) desktop, whatever its display server: the launching port.

Owns :class:`.launcher.XdgLauncher`: the desktop-file catalogue (:mod:`deskpilot.desktop.apps`)
read with the environment apps get (:mod:`deskpilot.desktop.a11yenv`: accessibility on; a
sandbox's private home), and processes started in their own sessions with their output in the
state directory's logs. Shared by the X11 and the Wayland backends.

May import: :mod:`deskpilot.desktop.base`, :mod:`deskpilot.desktop.ports`,
:mod:`deskpilot.desktop.apps`, :mod:`deskpilot.desktop.a11yenv`, :mod:`deskpilot.config`,
:mod:`deskpilot.sandbox` (its app environment and spawn records), :mod:`deskpilot._procfs`,
:mod:`deskpilot.errors`.
"""
