"""Sandbox desktops: a private headless desktop (Xvfb, a session bus, the AT-SPI bus, a
window manager, the settings service and a null audio output apps expect) that tests,
benchmarks and ``deskpilot sandbox`` start and tear down.

:class:`Sandbox` (:mod:`~deskpilot.sandbox.lifecycle`) starts, uses and stops one;
:mod:`~deskpilot.sandbox.info` says where it lives and what environment its apps get;
:mod:`~deskpilot.sandbox.processes` finds and kills what runs on it;
:mod:`~deskpilot.sandbox.recipe` holds the pieces of its start-up;
:mod:`~deskpilot.sandbox.services` what apps expect of a session (dconf, audio);
:mod:`~deskpilot.sandbox.kept` remembers sandboxes kept running (``sandbox up``).

Usage::

    with Sandbox(width=1280, height=800) as sb:
        proc = sb.spawn(["gnome-calculator"])
"""

from __future__ import annotations

from deskpilot.sandbox.info import SandboxInfo
from deskpilot.sandbox.lifecycle import Sandbox

__all__ = ["Sandbox", "SandboxInfo"]
