"""The new-session form's window picker: this desktop's windows, listed through the door.

The list comes from the ``list_windows`` tool called through ``ToolSet.call`` in a console
session of its own (:func:`deskpilot.runtime.open_session`, ``surface="console"``), so the
console sees what a session would: blocked apps (the console's own window among them) are
listed without their titles, and every listing is in the audit log.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from deskpilot.config import Settings
from deskpilot.desktop.place import open_here
from deskpilot.errors import DeskpilotError, ToolError
from deskpilot.runtime import open_session
from deskpilot.serve.shared_input import InputLocks, shared
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools


class WindowPicker:
    def __init__(self, settings: Settings, locks: InputLocks) -> None:
        self.settings = settings
        self.locks = locks
        self.tools = computer_use_tools().subset(["list_windows"])
        self._stack: contextlib.AsyncExitStack | None = None
        self._ctx: Any = None

    async def _context(self) -> Any:
        if self._ctx is not None and not self._ctx.desktop.lost():
            return self._ctx
        await self.aclose()
        stack = contextlib.AsyncExitStack()
        try:
            here, raw = await open_here(self.settings)
            stack.push_async_callback(raw.close)
            self._ctx = await stack.enter_async_context(
                open_session(
                    here,
                    surface="console",
                    desktop=shared(raw, self.locks.of(here.display or "")),
                    session=Session(name="console-picker"),
                    label="console: window picker",
                )
            )
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self._ctx

    async def __call__(self) -> list[dict[str, Any]]:
        result = await self.tools.call("list_windows", {}, await self._context())
        if result.is_error or result.data is None:
            raise ToolError(result.text)
        return list(result.data.get("windows", []))

    async def aclose(self) -> None:
        stack, self._stack, self._ctx = self._stack, None, None
        if stack is not None:
            with contextlib.suppress(DeskpilotError, OSError):
                await stack.aclose()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.aclose()
