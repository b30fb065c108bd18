"""``deskpilot serve --open``: the console in a browser window of its own on this desktop.

A Chromium app window (``--app``) with a profile of its own and the window class
:data:`~deskpilot.serve.server.CONSOLE_CLASS`, which every session's blocklist holds: no
session can list its title, read it, capture it or send it input, so an agent working on this
desktop cannot approve its own actions by clicking the console. A console opened in another
browser window has no such protection; prefer sandbox sessions then.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from deskpilot.config import Settings, resolve_desktop
from deskpilot.desktop.a11yenv import chromium_flags
from deskpilot.errors import ConfigError

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def open_console_window(settings: Settings, url: str, window_class: str) -> subprocess.Popen[bytes]:
    browser = next((p for p in CHROMIUM if os.access(p, os.X_OK)), None)
    if browser is None:
        raise ConfigError("--open needs Debian's chromium (apt install chromium)")
    here = resolve_desktop(settings)
    profile = settings.state_dir / "console-browser"
    profile.mkdir(parents=True, exist_ok=True)
    argv = [
        browser,
        *chromium_flags(),
        f"--app={url}",
        f"--class={window_class}",
        f"--user-data-dir={profile}",
        "--no-first-run",
        "--no-default-browser-check",
    ]
    log = open(settings.state_dir / "console-browser.log", "ab")  # noqa: SIM115
    try:
        return subprocess.Popen(
            argv,
            env=dict(here.environ),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    finally:
        log.close()


def close_console_window(proc: subprocess.Popen[bytes]) -> None:
    """End the window's browser (its whole process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
