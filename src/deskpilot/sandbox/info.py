"""Where a sandbox lives, and the environments of what runs on it.

:class:`SandboxInfo` is enough to use a running sandbox from another process or to stop it.
Apps on a sandbox get a private home and temp dir with accessibility on
(:func:`sandbox_app_env`); the command of ``sandbox run`` keeps the caller's home
(:func:`sandbox_command_env`). Neither inherits the caller's own desktop (:data:`DESKTOP_VARS`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from deskpilot.desktop.a11yenv import accessible_env

#: Variables describing the caller's own desktop; never leaked into the sandbox.
DESKTOP_VARS = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "AT_SPI_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_ID",
    "XDG_SESSION_TYPE",
    "XDG_CURRENT_DESKTOP",
    "XAUTHORITY",
    "SESSION_MANAGER",
    "DESKPILOT_SANDBOX",
)


@dataclass(frozen=True)
class SandboxInfo:
    """Where a running sandbox lives; enough to use it from another process or stop it."""

    display: str
    runtime_dir: str
    session_bus: str
    pgid: int
    width: int
    height: int
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def home(self) -> str:
        return os.path.join(self.runtime_dir, "home")

    def client_env(self) -> dict[str, str]:
        """Variables a client of this desktop needs (what ``sandbox up`` prints)."""
        return {
            "DISPLAY": self.display,
            "DBUS_SESSION_BUS_ADDRESS": self.session_bus,
            "DESKPILOT_SANDBOX": self.runtime_dir,
        }

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SandboxInfo:
        data: dict[str, Any] = json.loads(text)
        return cls(**data)


def sandbox_app_env(base: Mapping[str, str], info: SandboxInfo) -> dict[str, str]:
    """Environment for an app running on the sandbox: private home, accessibility on."""
    env = {k: v for k, v in base.items() if k not in DESKTOP_VARS}
    home = info.home
    env.update(info.client_env())
    env.update(
        {
            "XDG_RUNTIME_DIR": info.runtime_dir,
            "HOME": home,
            "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "XDG_CACHE_HOME": os.path.join(home, ".cache"),
            "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
            "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
            # single-instance apps (KeePassXC, Qt's QLocalServer) lock in the temp dir: a
            # shared /tmp made an app on one sandbox hand its launch to another sandbox
            "TMPDIR": os.path.join(info.runtime_dir, "tmp"),
        }
    )
    return accessible_env(env, sandbox=True)


def sandbox_command_env(base: Mapping[str, str], info: SandboxInfo) -> dict[str, str]:
    """Environment for the command of ``sandbox run``: the caller's home, the sandbox's display."""
    env = {k: v for k, v in base.items() if k not in DESKTOP_VARS}
    env.update(info.client_env())
    env["XDG_RUNTIME_DIR"] = info.runtime_dir  # so the final sweep finds what it left behind
    return accessible_env(env, sandbox=True)
