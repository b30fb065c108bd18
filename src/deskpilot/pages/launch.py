"""Starting the agent browser with the rule library, first pages included.

Chromium does not wait for its extensions before it loads the pages it starts with: with a
library heavy enough (measured on Chromium 156: 15 MB of rule code, every launch; a cold or
busy machine, sometimes with much less) the extension's content scripts are still being read
when the first page commits, and that page runs none of the rules — not even the ones at
document start. The next load has them.

So after deskpilot starts the browser itself (not when a running one takes the URLs) and
there are rules, it looks into each first page; one that lacks the page runtime is loaded
again, once the extension is ready, so its rules run at document start as in every later
load. No page is reloaded when the rules were there, and none more than :data:`MAX_RELOADS`
times.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deskpilot.config import Settings
from deskpilot.pages.browser import alive, connect, endpoint
from deskpilot.pages.store import extension_dir, open_library

if TYPE_CHECKING:
    from playwright.async_api import Page

log = logging.getLogger(__name__)

#: how often one first page may be loaded again while the extension is still being read
MAX_RELOADS = 4
#: the wait before each reload, doubling: the extension is given time to finish reading
FIRST_WAIT_S = 0.25
#: pages where Chromium never runs an extension's scripts (its own store): never reloaded
NO_EXTENSIONS = ("https://chromewebstore.google.com/", "https://chrome.google.com/webstore")
#: True when the document has the runtime, or is one the rules never run in
RULED = "typeof window.__deskpilotPages === 'object' || !/^https?:$/.test(location.protocol)"


@dataclass(frozen=True)
class LaunchRules:
    """What a browser start gets from the library: its flags, and how many enabled rules
    (with none, there is nothing a first page could miss)."""

    flags: list[str]
    rules: int


def launch_rules(settings: Settings) -> LaunchRules:
    """Write the extension fresh from the library; the flags that load it."""
    from deskpilot.pages.extension import write_extension

    directory = extension_dir(settings)
    with open_library(settings) as lib:
        rs = write_extension(lib, directory, for_launch=True)
    return LaunchRules([f"--load-extension={directory}"], len(rs.rules))


async def running(settings: Settings) -> bool:
    """Whether an agent browser already runs (it would take the URLs; its extension is
    loaded)."""
    url = endpoint(settings)
    return url is not None and await alive(url)


async def _ruled(page: Page) -> bool:
    if page.url.startswith(NO_EXTENSIONS):
        return True
    try:
        return bool(await asyncio.wait_for(page.evaluate(RULED), 5.0))
    except Exception:  # a page gone or navigating: nothing to repair in it
        return True


async def ensure_first_pages_ruled(settings: Settings, timeout: float = 30.0) -> int:
    """Load again each first page of a just-started agent browser that ran without the
    rules; how many loads that took (0: every page had them). Never raises: the pages are
    open either way, and a page that still lacks its rules is logged."""
    try:
        async with connect(settings) as agent:
            return await _repair(agent.web_pages(), timeout)
    except Exception as exc:  # ours or Playwright's: the browser went away meanwhile
        log.warning("could not check the first pages' rules: %s", exc)
        return 0


async def _repair(pages: list[Page], timeout: float) -> int:
    deadline = time.monotonic() + timeout
    missing = [p for p in pages if not await _ruled(p)]
    loads = 0
    wait = FIRST_WAIT_S
    for _ in range(MAX_RELOADS):
        if not missing:
            break
        log.info("%d first page(s) loaded before the page rules: loading again", len(missing))
        await asyncio.sleep(wait)  # the extension is still reading its scripts
        wait *= 2
        for page in missing:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            with contextlib.suppress(Exception):
                await page.reload(wait_until="domcontentloaded", timeout=left * 1000)
                loads += 1
        missing = [p for p in missing if not await _ruled(p)]
    for page in missing:
        log.warning("%s runs without the page rules (loaded before they were ready)", page.url)
    return loads
