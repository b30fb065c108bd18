"""Finding a Wayland session the environment does not name, and telling which compositor runs it.

MCP clients start servers with a minimal environment (no ``WAYLAND_DISPLAY``, no
``XDG_RUNTIME_DIR``, no ``DBUS_SESSION_BUS_ADDRESS``). A Wayland session leaves its traces in
the user's runtime dir (``/run/user/UID``): the compositor's socket ``wayland-N`` (with its
``.lock``), sway's IPC socket ``sway-ipc.UID.PID.sock``, the session bus ``bus``, Mutter's
Xwayland cookie ``.mutter-Xwaylandauth.*``. :func:`find_session` looks there (after what the
environment says), and names the compositor from the process that listens on the socket
(``sway``, ``gnome-shell``/``mutter``, ``kwin_wayland``…) or, failing that, from
``XDG_CURRENT_DESKTOP``.

Nothing here reads ``os.environ``: the caller passes the environment; the probes (listing a
directory, asking who listens on a socket) are small functions of :class:`Probes`, replaceable
in tests.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from deskpilot import _procfs
from deskpilot._sockets import answers, listening_pid
from deskpilot.errors import DesktopError

#: compositor process names → the session kind deskpilot knows it as
COMPOSITORS = {
    "sway": "sway",
    "gnome-shell": "gnome",
    "mutter": "gnome",
    "kwin_wayland": "kde",
    "Hyprland": "wlroots",
    "river": "wlroots",
    "labwc": "wlroots",
    "wayfire": "wlroots",
    "weston": "weston",
}


def _comm(pid: int) -> str:
    return _procfs.read(f"/proc/{pid}/comm").decode(errors="replace").strip()


@dataclass
class Probes:
    """How the machine is looked at (replaceable in tests)."""

    glob: Callable[[str], list[str]] = field(default=lambda pattern: sorted(glob.glob(pattern)))
    answers: Callable[[str], bool] = field(default=answers)
    listener: Callable[[str], int | None] = field(default=listening_pid)
    comm: Callable[[int], str] = field(default=_comm)
    isdir: Callable[[str], bool] = field(default=os.path.isdir)


@dataclass(frozen=True)
class WaylandSession:
    """What was found: enough for a client to reach the session."""

    runtime_dir: str
    wayland_display: str = ""  # absolute path of the compositor's socket ("" if none)
    compositor: str = ""  # "sway", "gnome", "kde", "wlroots", "weston" or "" (unknown)
    compositor_process: str = ""
    swaysock: str = ""
    session_bus: str = ""
    xauthority: str = ""
    found_by: str = ""  # "environment" or "runtime dir"

    def env(self) -> dict[str, str]:
        """The variables a client of this session needs."""
        out = {"XDG_RUNTIME_DIR": self.runtime_dir}
        if self.wayland_display:
            out["WAYLAND_DISPLAY"] = self.wayland_display
            out["XDG_SESSION_TYPE"] = "wayland"
        if self.swaysock:
            out["SWAYSOCK"] = self.swaysock
        if self.session_bus:
            out["DBUS_SESSION_BUS_ADDRESS"] = self.session_bus
        if self.xauthority:
            out["XAUTHORITY"] = self.xauthority
        return out


def find_session(env: Mapping[str, str], uid: int, probes: Probes | None = None) -> WaylandSession:
    """The Wayland session of user ``uid``: as the environment names it, else found in the
    runtime dir. ``wayland_display`` is "" when there is none."""
    p = probes or Probes()
    runtime = env.get("XDG_RUNTIME_DIR") or f"/run/user/{uid}"
    named = env.get("WAYLAND_DISPLAY", "")
    found_by = "environment" if named else "runtime dir"
    socket_path = ""
    if named:
        socket_path = named if os.path.isabs(named) else os.path.join(runtime, named)
        if not p.answers(socket_path):
            socket_path = ""
    if not socket_path:
        for candidate in p.glob(os.path.join(runtime, "wayland-*")):
            if not candidate.endswith(".lock") and p.answers(candidate):
                socket_path = candidate
                break
    if not socket_path:
        return WaylandSession(runtime_dir=runtime)
    pid = p.listener(socket_path)
    process = p.comm(pid) if pid else ""
    compositor = COMPOSITORS.get(process, "")
    desktop = env.get("XDG_CURRENT_DESKTOP", "").casefold()
    if not compositor:
        if "sway" in desktop:
            compositor = "sway"
        elif "gnome" in desktop:
            compositor = "gnome"
        elif "kde" in desktop:
            compositor = "kde"
    swaysock = env.get("SWAYSOCK", "")
    if not swaysock and (compositor == "sway" or not compositor):
        pattern = f"sway-ipc.*.{pid}.sock" if pid else f"sway-ipc.{uid}.*.sock"
        socks = [s for s in p.glob(os.path.join(runtime, pattern)) if p.answers(s)]
        swaysock = socks[0] if socks else ""
        if swaysock and not compositor:
            compositor = "sway"
    bus = env.get("DBUS_SESSION_BUS_ADDRESS", "")
    if not bus and p.answers(os.path.join(runtime, "bus")):
        bus = f"unix:path={os.path.join(runtime, 'bus')}"
    xauth = env.get("XAUTHORITY", "")
    if not xauth:
        cookies = p.glob(os.path.join(runtime, ".mutter-Xwaylandauth.*"))
        xauth = cookies[0] if cookies else ""
    return WaylandSession(
        runtime_dir=runtime,
        wayland_display=socket_path,
        compositor=compositor,
        compositor_process=process,
        swaysock=swaysock,
        session_bus=bus,
        xauthority=xauth,
        found_by=found_by,
    )


def xwayland_compositor(number: int) -> int:
    """The compositor whose Xwayland serves display ``:number``: wlroots writes the display's
    lock itself, with the compositor's pid (measured: sway 1.7); an Xwayland started on its
    own holds it, with the compositor as its parent."""
    try:
        with open(f"/tmp/.X{number}-lock") as lock:
            holder = int(lock.read().strip().strip("\0"))
    except (OSError, ValueError) as exc:
        raise DesktopError(f"display :{number} has no X server lock: {exc}") from exc
    comm = _comm(holder)
    if not comm:
        raise DesktopError(f"display :{number}'s X server ({holder}) is gone")
    if comm != "Xwayland":
        return holder
    parent = _procfs.parents().get(holder)
    if parent is None:
        raise DesktopError(f"display :{number}'s X server ({holder}) is gone")
    return parent


def session_of_display(display: str, desktop: str) -> tuple[WaylandSession, str]:
    """The Wayland session ``display`` belongs to — a Wayland socket's path, or an X display
    (its Xwayland's compositor's own environment tells the runtime dir and session bus) — and
    that runtime dir; ``desktop`` names the kind of session in errors ("sway", "GNOME")."""
    if os.path.isabs(display):
        runtime, uid = os.path.dirname(display), os.stat(display).st_uid
        named = {"XDG_RUNTIME_DIR": runtime, "WAYLAND_DISPLAY": display}
    else:
        match = re.fullmatch(r":(\d+)(?:\.\d+)?", display)
        if match is None:
            raise DesktopError(f"{display!r} is no X display of a {desktop} session")
        compositor = xwayland_compositor(int(match.group(1)))
        environ = _procfs.read(f"/proc/{compositor}/environ").split(b"\0")
        values = dict(e.decode(errors="replace").split("=", 1) for e in environ if b"=" in e)
        runtime = values.get("XDG_RUNTIME_DIR", "")
        if not runtime:
            raise DesktopError(f"cannot tell where the session of display {display} lives")
        uid = os.stat(f"/proc/{compositor}").st_uid
        named = {"XDG_RUNTIME_DIR": runtime}
        if values.get("DBUS_SESSION_BUS_ADDRESS"):
            named["DBUS_SESSION_BUS_ADDRESS"] = values["DBUS_SESSION_BUS_ADDRESS"]
    return find_session(named, uid), runtime
