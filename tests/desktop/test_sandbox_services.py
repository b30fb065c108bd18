"""A sandbox apps can live in (deskpilot.sandbox.services): the settings service GTK apps
expect, started by the session bus when asked (and no other service), and an audio server whose
only output is a null sink.

Each effect is checked where it lands, not through the tools: a setting in dconf (``gsettings``
reading the sandbox's own database), what plays on the PipeWire graph (``pw-dump``).
"""

from __future__ import annotations

import json
import math
import shutil
import struct
import subprocess
import wave
from pathlib import Path
from typing import Any

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.services import NULL_SINK, audio_installed, service_files
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.web import PageServer

pytestmark = pytest.mark.asyncio(loop_scope="session")

needs_dconf = pytest.mark.skipif(
    "ca.desrt.dconf" not in service_files() or shutil.which("gsettings") is None,
    reason="dconf-service or gsettings is not installed (apt install dconf-service libglib2.0-bin)",
)
needs_audio = pytest.mark.skipif(
    not audio_installed() or shutil.which("pw-dump") is None,
    reason="PipeWire is not installed (apt install pipewire pipewire-pulse wireplumber)",
)


def run(sandbox: Sandbox, *argv: str) -> str:
    done = subprocess.run(
        list(argv), env=sandbox.app_env(), capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, (argv, done.stderr)
    return done.stdout.strip()


def activatable(sandbox: Sandbox) -> set[str]:
    out = run(
        sandbox,
        "dbus-send",
        "--session",
        "--print-reply",
        "--dest=org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.ListActivatableNames",
    )
    return {line.split('"')[1] for line in out.splitlines() if line.strip().startswith("string")}


def audio_nodes(sandbox: Sandbox) -> list[dict[str, Any]]:
    """Every audio node on the sandbox's PipeWire graph: name, class, state, process."""
    out = []
    for obj in json.loads(run(sandbox, "pw-dump")):
        if obj.get("type") != "PipeWire:Interface:Node":
            continue
        props = obj.get("info", {}).get("props", {})
        out.append(
            {
                "name": props.get("node.name", ""),
                "class": props.get("media.class", ""),
                "state": obj.get("info", {}).get("state", ""),
                "pid": int(props.get("application.process.id", 0) or 0),
                "binary": props.get("application.process.binary", ""),
            }
        )
    return out


def playing(sandbox: Sandbox, binary: str) -> list[dict[str, Any]]:
    """Output streams of ``binary`` that are running (sound is flowing)."""
    return [
        n
        for n in audio_nodes(sandbox)
        if n["class"] == "Stream/Output/Audio" and n["state"] == "running" and binary in n["binary"]
    ]


async def test_the_session_bus_starts_only_the_settings_services(sandbox: Sandbox) -> None:
    # installed services other than these (portals, gvfs, keyrings) are never started
    assert activatable(sandbox) - {"org.freedesktop.DBus"} == set(service_files())


@needs_dconf
async def test_a_setting_written_lands_in_the_sandbox_dconf(sandbox: Sandbox) -> None:
    assert sandbox.info is not None
    key = ("org.gtk.Settings.FileChooser", "show-hidden")
    before = run(sandbox, "gsettings", "get", *key)
    flipped = "false" if before == "true" else "true"
    try:
        run(sandbox, "gsettings", "set", *key, flipped)
        assert run(sandbox, "gsettings", "get", *key) == flipped
        # written by the dconf service into the sandbox's private home
        assert (Path(sandbox.info.home) / ".config" / "dconf" / "user").exists()
    finally:
        run(sandbox, "gsettings", "set", *key, before)


@needs_dconf
@pytest.mark.skipif(
    shutil.which("gnome-system-monitor") is None,
    reason="GNOME System Monitor is not installed (apt install gnome-system-monitor)",
)
async def test_a_gtk_app_switches_a_view_kept_in_dconf(
    call: Call, apps: Apps, sandbox: Sandbox
) -> None:
    # the monitor's tabs follow a setting: without a dconf service the click is lost
    opened = await call("open_app", {"bundleId": "gnome-system-monitor"})
    assert not opened.is_error, opened.text
    tab = ("org.gnome.gnome-system-monitor", "current-tab")
    for name, value in (
        ("Resources", "'resources'"),
        ("File Systems", "'disks'"),
        ("Processes", "'processes'"),
    ):
        read = await call("read_screen_ax")
        radio = find_id(read.text, "radio", name)
        done = await call("perform", {"action": "click", "elementID": radio})
        assert not done.is_error, done.text

        async def switched(value: str = value) -> bool:
            return run(sandbox, "gsettings", "get", *tab) == value

        await async_wait_for(switched, timeout=15, what=f"the monitor's tab {name} in dconf")


@needs_audio
async def test_a_page_plays_into_the_null_output(
    call: Call, pages: PageServer, browser: WindowInfo, sandbox: Sandbox
) -> None:
    sinks = [n for n in audio_nodes(sandbox) if n["class"] == "Audio/Sink"]
    assert [n["name"] for n in sinks] == [NULL_SINK]
    opened = await call("open_urls", {"urls": [pages.url("audio.html")]})
    assert not opened.is_error, opened.text
    read = await call("read_screen_ax")
    assert not (
        await call(
            "perform", {"action": "click", "elementID": find_id(read.text, "button", "Play tone")}
        )
    ).is_error

    async def flowing() -> bool:
        return bool(playing(sandbox, "chrom"))

    await async_wait_for(flowing, timeout=20, what="the page's tone on the audio graph")
    sink = next(n for n in audio_nodes(sandbox) if n["name"] == NULL_SINK)
    assert sink["state"] == "running"
    read = await call("read_screen_ax")
    assert not (
        await call(
            "perform", {"action": "click", "elementID": find_id(read.text, "button", "Stop tone")}
        )
    ).is_error

    async def quiet() -> bool:
        return not playing(sandbox, "chrom")

    await async_wait_for(quiet, timeout=20, what="the tone to stop on the audio graph")


def tone(path: Path, seconds: float = 30.0) -> Path:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(22050)
        out.writeframes(
            b"".join(
                struct.pack("<h", int(6000 * math.sin(2 * math.pi * 440 * i / 22050)))
                for i in range(int(22050 * seconds))
            )
        )
    return path


@needs_audio
@pytest.mark.skipif(
    shutil.which("parole") is None, reason="Parole is not installed (apt install parole)"
)
async def test_a_media_player_plays_and_pauses_on_the_null_output(
    call: Call, apps: Apps, sandbox: Sandbox, tmp_path: Path
) -> None:
    song = tone(tmp_path / "tone.wav")
    opened = await call("open_app", {"bundleId": "Parole Media Player", "file": str(song)})
    assert not opened.is_error, opened.text

    async def flowing() -> bool:
        return bool(playing(sandbox, "parole"))

    await async_wait_for(flowing, timeout=30, what="Parole's playback on the audio graph")
    read = await call("read_screen_ax")
    pause = find_id(read.text, "button", "Pause")
    assert not (await call("perform", {"action": "click", "elementID": pause})).is_error

    async def paused() -> bool:
        return not playing(sandbox, "parole")

    await async_wait_for(paused, timeout=20, what="Parole's playback to pause on the graph")
