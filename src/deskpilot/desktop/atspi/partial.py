"""How a tree read survives failed calls: each failure is noted on the tree, never raised.

A read makes hundreds of AT-SPI calls; one app that is busy, a node that went away or an
interface a toolkit lacks must not end it. :func:`note_failure` turns a call's error into a
problem on the :class:`~deskpilot.desktop.atspi.model.AppTree` (which marks the read
``partial``) — or into nothing, when the error means "gone" or "unsupported"; errors that are
not desktop errors (bugs) are re-raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi.model import AppTree
from deskpilot.errors import DesktopError

T = TypeVar("T")


def note_failure(tree: AppTree, what: str, exc: BaseException) -> None:
    """Note a failed call on the tree (a partial read); re-raise what is not a desktop error."""
    if isinstance(exc, AtspiTimeout):
        tree.note(f"{what}: no reply in time (the app may be busy or hung)")
    elif isinstance(exc, AtspiCallError):
        # gone: the node went away; unsupported: it lacks that interface. Neither makes the
        # read incomplete.
        if not exc.gone and not exc.unsupported:
            tree.note(f"{what}: {exc.error_name}")
    elif isinstance(exc, DesktopError):
        tree.note(f"{what}: {exc}")
    else:
        raise exc


async def settled(calls: Iterable[asyncio.Future[Any]]) -> None:
    """Wait until every call has its reply (or error); the errors are read by the caller."""
    await asyncio.gather(*calls, return_exceptions=True)


async def guard(tree: AppTree, what: str, call: Awaitable[T]) -> T | None:
    """The call's result, or None with its failure noted on the tree."""
    try:
        return await call
    except DesktopError as exc:
        note_failure(tree, what, exc)
    return None
