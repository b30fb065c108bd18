"""The GTK 3 probe apps of tests/fixtures/apps/ (PyGObject under Debian's python3): each writes
what its widgets saw to a log the tools never read, one line an event, "ready" first."""

from __future__ import annotations

from pathlib import Path

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from tests.desktop.conftest import Apps

APPS = Path(__file__).parents[1] / "fixtures" / "apps"
SYSTEM_PYTHON = "/usr/bin/python3"


class Probe:
    def __init__(self, log: Path, window: WindowInfo) -> None:
        self.log, self.window = log, window

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    async def wait_for(self, line: str) -> None:
        async def seen() -> bool:
            return line in self.lines()

        await async_wait_for(seen, timeout=10, what=f"the probe to log {line!r}")


async def start_probe(apps: Apps, tmp_path: Path, script: str, title: str) -> Probe:
    """Start ``fixtures/apps/<script>`` logging to ``tmp_path``; its window titled ``title``,
    once it logged "ready"."""
    log = tmp_path / "probe.log"
    window = await apps.spawn(
        [SYSTEM_PYTHON, str(APPS / script), str(log)], match=lambda w: w.title == title
    )
    found = Probe(log, window)
    await found.wait_for("ready")
    return found
