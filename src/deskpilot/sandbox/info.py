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

from deskpilot._files import write_atomic
from deskpilot.desktop.a11yenv import accessible_env
from deskpilot.desktop.wayland.appenv import wayland_app_env

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
    "SWAYSOCK",
    "I3SOCK",
    "PIPEWIRE_REMOTE",
)


#: A sandbox's info inside its own directory: what a process told only ``DESKPILOT_SANDBOX``
#: (the runtime dir) reads to learn the desktop's kind, sockets and user.
INFO_FILE = "sandbox.json"


def read_info(runtime_dir: str) -> SandboxInfo | None:
    """The info a running sandbox saved in ``runtime_dir``, if any."""
    try:
        with open(os.path.join(runtime_dir, INFO_FILE)) as fh:
            return SandboxInfo.from_json(fh.read())
    except (OSError, ValueError, TypeError):
        return None


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
    #: "x11" (Xvfb + openbox), "sway" or "gnome" (headless mutter)
    kind: str = "x11"
    #: the Wayland socket (absolute path) of a Wayland kind; ``display`` is then Xwayland's
    wayland_display: str = ""
    xauthority: str = ""
    #: more variables for clients (SWAYSOCK, XDG_CURRENT_DESKTOP)
    extra_env: dict[str, str] = field(default_factory=dict)
    #: the uid the desktop's programs run as (None: deskpilot's own)
    uid: int | None = None

    @property
    def home(self) -> str:
        return os.path.join(self.runtime_dir, "home")

    @property
    def wayland(self) -> bool:
        return bool(self.wayland_display)

    def client_env(self) -> dict[str, str]:
        """Variables a client of this desktop needs (what ``sandbox up`` prints)."""
        env = {
            "DISPLAY": self.display,
            "DBUS_SESSION_BUS_ADDRESS": self.session_bus,
            "DESKPILOT_SANDBOX": self.runtime_dir,
        }
        if self.wayland:
            env["WAYLAND_DISPLAY"] = self.wayland_display
            env["XDG_SESSION_TYPE"] = "wayland"
            env.update(self.extra_env)
            if not self.display:
                del env["DISPLAY"]
        if self.xauthority:
            env["XAUTHORITY"] = self.xauthority
        return env

    def save(self) -> None:
        """Write this info into the sandbox's own directory (see :func:`read_info`)."""
        write_atomic(os.path.join(self.runtime_dir, INFO_FILE), self.to_json())

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
    if info.wayland:
        return wayland_app_env(env, info.wayland_display, sandbox=True)
    _xauthority(env, info)
    return accessible_env(env, sandbox=True)


def sandbox_command_env(base: Mapping[str, str], info: SandboxInfo) -> dict[str, str]:
    """Environment for the command of ``sandbox run``: the caller's home, the sandbox's display."""
    env = {k: v for k, v in base.items() if k not in DESKTOP_VARS}
    env.update(info.client_env())
    env["XDG_RUNTIME_DIR"] = info.runtime_dir  # so the final sweep finds what it left behind
    if info.wayland:
        return wayland_app_env(env, info.wayland_display, sandbox=True)
    _xauthority(env, info)
    return accessible_env(env, sandbox=True)


def _xauthority(env: dict[str, str], info: SandboxInfo) -> None:
    """X11 apps on a Wayland sandbox's Xwayland need its cookie (mutter's Xwayland asks for
    one): an info built from the settings alone lacks it, the sandbox's saved info has it."""
    if "XAUTHORITY" in env:
        return
    saved = read_info(info.runtime_dir) if not info.xauthority else info
    if saved is not None and saved.xauthority:
        env["XAUTHORITY"] = saved.xauthority
