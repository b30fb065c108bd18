"""Apps that refuse root run on the X11 sandbox as its unprivileged user (sandbox/app_user.py).

VLC will not run as root. With deskpilot as root, ``open_app`` sees it refuse and starts it
again as the sandbox's user: its window is read and driven through the tools like any other,
and a sound it plays reaches the sandbox's audio server. Checked apart from the tools: the
process's uid in /proc, and the playing stream in PipeWire's own object dump (``pw-dump``).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import subprocess
import wave
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.app_user import app_user
from tests.desktop.conftest import Apps, Call

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.skipif(
        shutil.which("vlc") is None,
        reason="VLC is not installed (apt install vlc; make setup installs it)",
    ),
    pytest.mark.skipif(os.geteuid() != 0, reason="deskpilot is not root: apps run as its user"),
    pytest.mark.skipif(
        shutil.which("pw-dump") is None,
        reason="pw-dump is not installed (apt install pipewire-bin)",
    ),
]


def write_tone(path: Path, seconds: float = 30.0, rate: int = 22050) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        frames = (
            int(8000 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(int(seconds * rate))
        )
        out.writeframes(b"".join(struct.pack("<h", f) for f in frames))


def playing_streams(sandbox: Sandbox) -> list[dict[str, object]]:
    """Audio output streams on the sandbox's PipeWire, from its own dump."""
    assert sandbox.info is not None
    env = {
        **os.environ,
        "PIPEWIRE_RUNTIME_DIR": sandbox.info.runtime_dir,
        "XDG_RUNTIME_DIR": sandbox.info.runtime_dir,
    }
    done = subprocess.run(["pw-dump"], capture_output=True, text=True, env=env, timeout=20)
    streams = []
    for obj in json.loads(done.stdout or "[]"):
        props = (obj.get("info") or {}).get("props") or {}
        if props.get("media.class") == "Stream/Output/Audio":
            streams.append(props)
    return streams


def uid_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid in /proc/{pid}/status")


async def test_a_root_refusing_app_runs_as_the_sandbox_user_and_plays(
    call: Call, apps: Apps, sandbox: Sandbox
) -> None:
    assert sandbox.info is not None
    user = app_user(sandbox.info.runtime_dir)
    assert user is not None, "a root X11 sandbox has an app user"
    tone = Path(sandbox.info.runtime_dir) / "tmp" / "tone.wav"
    write_tone(tone)
    os.chmod(tone, 0o644)
    opened = await call("open_app", {"bundleId": "vlc"})
    assert not opened.is_error, opened.text
    windows = [w for w in await apps.desktop.list_windows() if w.app.executable == "vlc"]
    assert windows and all(uid_of(w.pid) == user.uid for w in windows), windows
    apps.pids.update(w.pid for w in windows)
    # a first start asks about network access: answer it, then open the tone (ctrl+o)

    async def main_window() -> str | None:
        for w in await apps.desktop.list_windows():
            if w.app.executable != "vlc":
                continue
            read = await call("read_screen_ax", {"windowID": w.stable_id})
            if '"Continue"' in read.text:
                line = next(ln for ln in read.text.splitlines() if '"Continue"' in ln)
                await call("perform", {"elementID": line.rsplit("@", 1)[1]})
                return None
            if "VLC media player" in w.title:
                return w.stable_id
        return None

    vlc = await async_wait_for(main_window, timeout=30, what="VLC's main window")
    done = await call(
        "perform_sequence",
        {"windowID": vlc, "steps": [{"action": "shortcut", "shortcut": "ctrl+o"}]},
    )
    assert not done.is_error, done.text

    async def dialog() -> str | None:
        for w in await apps.desktop.list_windows():
            if w.app.executable == "vlc" and "VLC media player" not in w.title:
                return w.stable_id
        return None

    chooser = await async_wait_for(dialog, timeout=20, what="VLC's file dialog")
    steps = [{"action": "type", "text": str(tone)}, {"action": "shortcut", "shortcut": "enter"}]
    typed = await call("perform_sequence", {"windowID": chooser, "steps": steps})
    assert not typed.is_error, typed.text

    async def playing() -> list[dict[str, object]] | None:
        found = [s for s in playing_streams(sandbox) if "vlc" in json.dumps(s).casefold()]
        return found or None

    streams = await async_wait_for(playing, timeout=30, what="VLC's stream on PipeWire")
    assert streams
