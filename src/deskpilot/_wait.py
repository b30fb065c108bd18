"""Waiting on conditions (never on fixed sleeps): poll a predicate until it holds or times out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(TimeoutError):
    """The condition did not hold within the time allowed."""


def wait_for(
    check: Callable[[], T | None], *, timeout: float, what: str, interval: float = 0.01
) -> T:
    """Call ``check`` until it returns something other than None/False; return that value."""
    deadline = time.monotonic() + timeout
    delay = interval
    while True:
        value = check()
        if value is not None and value is not False:
            return value
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)


async def async_wait_for(
    check: Callable[[], Awaitable[T | None]],
    *,
    timeout: float,
    what: str,
    interval: float = 0.02,
) -> T:
    """Await ``check`` until it returns something other than None/False; return that value."""
    deadline = time.monotonic() + timeout
    delay = interval
    while True:
        value = await check()
        if value is not None and value is not False:
            return value
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"timed out after {timeout:.1f}s waiting for {what}")
        await asyncio.sleep(delay)
        delay = min(delay * 1.5, 0.15)
