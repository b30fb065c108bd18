"""A bar that hides until the pointer moves (issue 26 item 5: "a media player's auto-hiding
transport bar gone from the next read until a hover").

The GTK 3 probe (tests/fixtures/apps/autohide_probe.py) folds its transport bar away in a
revealer after the pointer rests for a second, as Parole does. A read finds the fold, moves the
pointer onto it, reads the bar's controls and says so; its controls act even once the bar has
hidden again. The probe writes to its log when the bar shows or hides and what was clicked: a
channel the tools never use.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.probe_apps import Probe, start_probe

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def logged_again(probe: Probe, line: str, after: int) -> None:
    """Wait until the probe logs ``line`` after its first ``after`` lines."""

    async def seen() -> bool:
        return line in probe.lines()[after:]

    await async_wait_for(seen, timeout=10, what=f"the probe to log {line!r}")


async def test_a_hidden_transport_bar_is_shown_by_the_read_and_its_controls_act(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    probe = await start_probe(apps, tmp_path, "autohide_probe.py", "Autohide probe")
    assert probe.lines()[-1] == "ready"  # the bar has folded away
    start = len(probe.lines())
    read = await call("read_screen_ax", {"windowID": probe.window.stable_id})
    assert not read.is_error, read.text
    # the read brought the bar back (the probe saw it) and says how, and that it will hide
    await logged_again(probe, "shown", start)
    assert re.search(
        r"^\(a bar that hides while the pointer rests was shown by moving the "
        r"pointer to \(\d+, \d+\)",
        read.text,
        re.M,
    ), read.text
    play = find_id(read.text, "button", "Play")
    find_id(read.text, "button", "Stop")
    # it hides again once the pointer rests; its controls still act
    await logged_again(probe, "hidden", start)
    done = await call("perform", {"elementID": play})
    assert not done.is_error, done.text
    await logged_again(probe, "play", start)
    # hidden, they are not gone (the change summary said "- button" of them)
    assert '- button "Play"' not in done.text, done.text
