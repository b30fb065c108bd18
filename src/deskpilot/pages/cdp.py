"""CDP basics shared by the browser connection and the extension's worker: a command with a
deadline, and the text of a thrown error."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from deskpilot.errors import PageError

if TYPE_CHECKING:
    from playwright.async_api import CDPSession

#: how long one CDP command may take before the browser counts as not answering
CALL_TIMEOUT = 30.0


async def send(session: CDPSession, method: str, params: dict[str, Any] | None = None) -> Any:
    """A CDP command with a deadline: a browser that stops answering is an error, not a hang."""
    try:
        return await asyncio.wait_for(session.send(method, params), CALL_TIMEOUT)
    except TimeoutError as exc:
        raise PageError(
            f"the agent browser did not answer {method} in {CALL_TIMEOUT:.0f} s (is it hung?)"
        ) from exc


def exception_text(details: dict[str, Any]) -> str:
    exc = details.get("exception") or {}
    text = exc.get("description") or details.get("text") or "error"
    first = str(text).splitlines()[0] if text else "error"
    return first[:500]


def exception_line(details: dict[str, Any]) -> tuple[int, int]:
    """1-based (line, column) of a thrown error in evaluated code."""
    frames = (details.get("stackTrace") or {}).get("callFrames") or []
    if frames:
        return int(frames[0]["lineNumber"]) + 1, int(frames[0]["columnNumber"]) + 1
    return int(details.get("lineNumber", 0)) + 1, int(details.get("columnNumber", 0)) + 1


def first_line(exc: BaseException) -> str:
    """A Playwright error's first line (its messages go on for pages)."""
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
