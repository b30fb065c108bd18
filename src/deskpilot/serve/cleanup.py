""" "Clean up when finished": the agent browser's tabs the sessions opened, closed at the end.

When a session on this desktop starts and no other is running, the agent browser's open tabs
are noted (its DevTools endpoint, from ``DevToolsActivePort`` in its profile). When the last
session ends and the setting is on (``deskpilot serve --cleanup``, or the console's checkbox),
every tab that was not open before is closed; the user's earlier tabs are left alone. Sessions on
a sandbox need none of this: their browser goes with their desktop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

import httpx

from deskpilot.serve.sessions import ConsoleSession, Sessions

log = logging.getLogger(__name__)


def devtools_url(profile: Path) -> str | None:
    try:
        port = (profile / "DevToolsActivePort").read_text().split()[0]
    except (OSError, IndexError):
        return None
    return f"http://127.0.0.1:{port}" if port.isdigit() else None


async def page_tabs(client: httpx.AsyncClient, base: str) -> list[dict[str, Any]]:
    try:
        listed = (await client.get(f"{base}/json/list")).json()
    except (httpx.HTTPError, ValueError):
        return []
    return [t for t in listed if isinstance(t, dict) and t.get("type") == "page"]


class TabCleanup:
    def __init__(self, sessions: Sessions, enabled: bool) -> None:
        self.sessions = sessions
        self.enabled = enabled
        self.before: dict[Path, set[str]] = {}  # agent browser profile → tab ids kept
        self.closed = 0
        self._tasks: set[asyncio.Task[None]] = set()
        sessions.on_running.append(self._started)
        sessions.on_end.append(self._ended)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _started(self, session: ConsoleSession) -> None:
        place = session.place
        if place is None or place.target != "desktop":
            return
        profile = place.raw.agent_browser_profile()
        if profile not in self.before:
            self.before[profile] = set()
            self._spawn(self._note(profile))

    async def _note(self, profile: Path) -> None:
        base = devtools_url(profile)
        if base is None:
            return
        async with httpx.AsyncClient(timeout=5) as client:
            self.before[profile] |= {str(t.get("id")) for t in await page_tabs(client, base)}

    def _ended(self, session: ConsoleSession) -> None:
        if any(s.target == "desktop" and s.kind == "task" for s in self.sessions.live()):
            return
        kept, self.before = self.before, {}
        if self.enabled and kept:
            self._spawn(self._close(kept))

    async def _close(self, kept: dict[Path, set[str]]) -> None:
        async with httpx.AsyncClient(timeout=5) as client:
            for profile, before in kept.items():
                base = devtools_url(profile)
                if base is None:
                    continue
                for tab in await page_tabs(client, base):
                    if str(tab.get("id")) not in before:
                        with contextlib.suppress(httpx.HTTPError):
                            await client.get(f"{base}/json/close/{tab.get('id')}")
                            self.closed += 1
        log.info("closed %d agent browser tab(s) the sessions opened", self.closed)

    async def wait(self) -> None:
        """Let pending notes and closes finish (tests, shutdown)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
