"""Starting apps on a Linux desktop: :class:`XdgLauncher`, the launching port.

An app is started in its own session with the environment apps get (a sandbox's private home,
accessibility on; Chromium and Electron apps with their accessibility flags), its output to a
log under the state directory; apps started on a sandbox are recorded there, so that stopping
the sandbox ends them. The processes it started are kept referenced until they exit (no
"still running" warning from ``Popen.__del__``), also beyond this launcher.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from deskpilot import _procfs
from deskpilot.config import Settings
from deskpilot.desktop import apps as appcat
from deskpilot.desktop.a11yenv import accessible_env, chromium_flags
from deskpilot.desktop.base import AppEntry
from deskpilot.errors import DesktopError

CHROMIUM_NAMES = {
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "brave-browser",
    "microsoft-edge",
    "vivaldi",
}
OFFICE_NAMES = {"libreoffice", "soffice", "localc", "lowriter", "loimpress", "lodraw", "loffice"}
ELECTRON_HINTS = {"electron", "code", "slack", "discord", "signal-desktop", "obsidian"}
#: Where the agent browser (Debian's chromium) may be.
AGENT_BROWSERS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")

#: Apps launched by this process that may still run (see :meth:`XdgLauncher.reap`).
_LAUNCHED: list[subprocess.Popen[bytes]] = []


class XdgLauncher:
    """The catalogue and process starts of one desktop (its settings name it)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._catalogue: list[AppEntry] | None = None
        self._children: list[subprocess.Popen[bytes]] = []

    @property
    def logs(self) -> Path:
        return self.settings.state_dir / "logs"

    async def apps(self) -> list[AppEntry]:
        if self._catalogue is None:
            self._catalogue = appcat.load_catalogue(self.app_env())
        return self._catalogue

    def app_env(self) -> dict[str, str]:
        """The environment apps get on this desktop."""
        env = dict(self.settings.environ)
        if self.settings.display:
            env["DISPLAY"] = self.settings.display
        if self.settings.sandbox_dir:
            from deskpilot.sandbox.info import SandboxInfo, sandbox_app_env

            info = SandboxInfo(
                display=self.settings.display or "",
                pgid=0,
                width=0,
                height=0,
                runtime_dir=self.settings.sandbox_dir,
                session_bus=self.settings.session_bus or "",
            )
            return sandbox_app_env(env, info)
        return accessible_env(env)

    def argv_for(self, app: AppEntry) -> list[str]:
        argv = list(app.exec_argv)
        exe = app.executable.lower()
        if exe in CHROMIUM_NAMES or exe in ELECTRON_HINTS:
            argv[1:1] = [f for f in chromium_flags() if f not in argv]
        if exe in OFFICE_NAMES and "--nologo" not in argv:
            # no splash: a window without an accessible frame, taken for the app's window (on
            # a first start it stays up behind the template chooser)
            argv.insert(1, "--nologo")
        return argv

    def spawn(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        return self.start(argv, list(argv), self.app_env())

    def spawn_unprivileged(self, argv: Sequence[str]) -> subprocess.Popen[bytes] | None:
        """``argv`` as the X11 sandbox's unprivileged user (sandbox/app_user.py)."""
        if not self.settings.sandbox_dir:
            return None
        from deskpilot.sandbox.app_user import wrapped

        got = wrapped(argv, self.app_env(), self.settings.sandbox_dir)
        if got is None:
            return None
        full, env = got
        return self.start(argv, full, env)

    def start(
        self, argv: Sequence[str], full: list[str], env: dict[str, str]
    ) -> subprocess.Popen[bytes]:
        """Start ``full`` (``argv`` as wrapped for its user and session) in ``env``: its
        output in the logs, its own session, kept as a child and recorded in the sandbox
        (backends that wrap apps their own way start them here too)."""
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{Path(argv[0]).name}.log"
        with open(log, "ab") as out:
            try:
                proc = subprocess.Popen(
                    full,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    start_new_session=True,
                    cwd=env.get("HOME") or None,
                )
            except OSError as exc:
                raise DesktopError(f"cannot start {argv[0]}: {exc.strerror}") from exc
        self._children.append(proc)
        if self.settings.sandbox_dir:
            from deskpilot.sandbox.processes import record_spawn

            record_spawn(self.settings.sandbox_dir, proc.pid)
        return proc

    def reap(self) -> None:
        """Forget (and collect) the started apps that exited."""
        self._children = [p for p in self._children if p.poll() is None]
        # apps outlive this object: keep their Popen objects referenced until they exit
        _LAUNCHED.extend(p for p in self._children if p not in _LAUNCHED)
        _LAUNCHED[:] = [p for p in _LAUNCHED if p.poll() is None]

    def launched_pids(self) -> list[int]:
        return [p.pid for p in self._children if p.poll() is None]

    def family(self, pids: Iterable[int]) -> set[int]:
        return _procfs.descendants(pids)

    def agent_browser(self) -> str | None:
        return next((p for p in AGENT_BROWSERS if os.access(p, os.X_OK)), None)

    def browser_flags(self) -> list[str]:
        return chromium_flags()

    async def close(self) -> None:
        self.reap()
