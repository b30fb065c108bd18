"""Desktop discovery (deskpilot.discovery) on a described machine: every source, in order."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from deskpilot.config import load_settings, resolve_desktop
from deskpilot.discovery import Found, KeptSandbox, Probes, discover, display_number
from deskpilot.errors import DisplayUnavailable

UID = 1000
ENV = {"HOME": "/home/ann", "PATH": "/usr/bin:/bin", "USER": "ann"}


@dataclasses.dataclass
class Machine:
    """What the probes see: every source empty unless a test fills it."""

    systemd: dict[str, str] = dataclasses.field(default_factory=dict)
    login: str | None = None
    kept: list[KeptSandbox] = dataclasses.field(default_factory=list)
    sockets: dict[int, dict[str, object]] = dataclasses.field(default_factory=dict)
    files: set[str] = dataclasses.field(default_factory=set)

    def probes(self) -> Probes:
        def socket_info(n: int) -> dict[str, object]:
            return self.sockets.get(n, {})

        return Probes(
            systemd_environment=lambda uid, env: dict(self.systemd),
            login_display=lambda uid, env: self.login,
            kept_sandboxes=lambda state_dir: list(self.kept),
            x_socket_numbers=lambda: sorted(self.sockets),
            socket_usable=lambda n, uid: bool(socket_info(n).get("listening", True)),
            has_window_manager=lambda n: bool(socket_info(n).get("wm", True)),
            server_pid=lambda n: 100 + n,
            process_environ=lambda pid: dict(socket_info(pid - 100).get("environ", {})),  # type: ignore[call-overload]
            process_args=lambda pid: list(socket_info(pid - 100).get("args", [])),  # type: ignore[call-overload]
            exists=lambda path: path in self.files,
            glob=lambda pattern: sorted(f for f in self.files if f.startswith(pattern.rstrip("*"))),
            root_a11y_bus=lambda display: None,
        )

    def find(self, env: Mapping[str, str] = ENV) -> Found:
        return discover(env, state_dir=Path("/state"), uid=UID, probes=self.probes())


SANDBOX_ENV = {"XDG_RUNTIME_DIR": "/tmp/deskpilot-sandbox-abc123"}


def test_a_display_in_the_environment_is_kept_and_only_the_missing_parts_are_looked_for() -> None:
    machine = Machine(files={"/run/user/1000/bus", "/run/user/1000/gdm/Xauthority"})
    found = machine.find({**ENV, "DISPLAY": ":3"})
    assert (found.display, found.source) == (":3", "DISPLAY")
    assert found.session_bus == "unix:path=/run/user/1000/bus"
    assert found.xauthority == "/run/user/1000/gdm/Xauthority"
    env = {**ENV, "DISPLAY": ":3", "XAUTHORITY": "/x/cookie", "DBUS_SESSION_BUS_ADDRESS": "b"}
    found = machine.find(env)
    assert (found.xauthority, found.session_bus) == ("/x/cookie", "b")


def test_the_systemd_user_environment_comes_first() -> None:
    machine = Machine(
        systemd={"DISPLAY": ":1", "XAUTHORITY": "/run/user/1000/.mutter-Xwaylandauth.X1"},
        login=":0",
        sockets={0: {}, 1: {}},
    )
    found = machine.find()
    assert (found.display, found.source) == (":1", "the systemd user environment")
    assert found.xauthority == "/run/user/1000/.mutter-Xwaylandauth.X1"
    assert found.session_bus is None  # no bus anywhere: the root window's AT_SPI_BUS serves


def test_then_the_login_session_then_a_kept_sandbox() -> None:
    box = KeptSandbox("default", ":5", "unix:path=/tmp/s/bus", "/tmp/s")
    machine = Machine(login=":0", kept=[box], files={"/home/ann/.Xauthority"})
    found = machine.find()
    assert (found.display, found.xauthority) == (":0", "/home/ann/.Xauthority")
    assert "login session" in found.source
    machine.login = None
    found = machine.find()
    assert (found.display, found.session_bus, found.sandbox_dir) == (
        ":5",
        "unix:path=/tmp/s/bus",
        "/tmp/s",
    )
    machine.kept.append(KeptSandbox("other", ":6", "unix:path=/tmp/t/bus", "/tmp/t"))
    found = machine.find()
    assert found.display is None
    assert "several kept sandboxes" in found.problem and ":6 (sandbox 'other')" in found.problem


def test_the_only_desktop_among_the_x_sockets() -> None:
    machine = Machine(
        sockets={
            0: {"environ": SANDBOX_ENV},  # another deskpilot process's private sandbox
            1: {"wm": False},  # a bare test server (xvfb-run)
            2: {"listening": False},  # a stale socket
            7: {"args": ["Xorg", ":7", "-auth", "/etc/hostname"]},  # a readable -auth file
        }
    )
    found = machine.find()
    assert found.display == ":7"
    assert found.xauthority == "/etc/hostname"
    assert "only X server socket" in found.source


def test_several_desktops_are_not_guessed_between() -> None:
    found = Machine(sockets={0: {}, 1: {}}).find()
    assert found.display is None
    assert found.candidates == (":0", ":1")
    assert "set DISPLAY" in found.problem


def test_nothing_found_says_what_was_looked_at_and_left_out() -> None:
    found = Machine(sockets={0: {"environ": SANDBOX_ENV}, 3: {"wm": False}}).find()
    assert found.display is None
    assert "no DISPLAY in the systemd user environment" in found.problem
    assert ":0: other deskpilot processes' private sandboxes" in found.problem
    assert ":3: X servers without a window manager" in found.problem


@pytest.mark.parametrize(
    ("text", "number"), [(":0", 0), (":12.0", 12), ("unix:3", 3), ("host:1", None), ("", None)]
)
def test_display_numbers(text: str, number: int | None) -> None:
    assert display_number(text) == number


def test_resolve_desktop_fills_the_settings_and_the_launch_environment(tmp_path: Path) -> None:
    settings = load_settings(env={"HOME": str(tmp_path), "PATH": os.environ["PATH"]})
    box = KeptSandbox("default", ":5", "unix:path=/tmp/s/bus", "/tmp/s")
    resolved = resolve_desktop(settings, probes=Machine(kept=[box]).probes())
    assert (resolved.display, resolved.session_bus, resolved.sandbox_dir) == (
        ":5",
        "unix:path=/tmp/s/bus",
        "/tmp/s",
    )
    assert resolved.environ["DISPLAY"] == ":5"
    assert resolved.environ["DESKPILOT_SANDBOX"] == "/tmp/s"
    assert "deskpilot sandbox up" in resolved.desktop_source


def test_resolve_desktop_without_a_desktop_names_what_to_set(tmp_path: Path) -> None:
    settings = load_settings(env={"HOME": str(tmp_path), "PATH": os.environ["PATH"]})
    with pytest.raises(DisplayUnavailable) as err:
        resolve_desktop(settings, probes=Machine().probes())
    message = str(err.value)
    assert message.startswith("no X display: DISPLAY is not set and no desktop was found")
    assert "Set DISPLAY" in message and "XAUTHORITY" in message
    assert "deskpilot mcp --sandbox" in message
