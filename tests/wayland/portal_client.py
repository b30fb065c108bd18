"""Run deskpilot's portal client as a user of the session (``python -m
tests.wayland.portal_client TOKEN_FILE [type TEXT]``): the portal answers only programs of its
own user. Prints one JSON line: the grant, or the error's class and message."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from deskpilot.desktop.wayland.portal import PortalError, PortalSession, TokenStore


async def main(argv: list[str]) -> dict[str, object]:
    store = TokenStore(Path(argv[0]))
    try:
        session = await PortalSession.open(store, timeout=60)
    except PortalError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    try:
        if argv[1:2] == ["type"]:
            await session.type_text(argv[2])
            await session.press(["Return"])
        return {
            "devices": session.devices,
            "streams": [[s.node_id, list(s.size)] for s in session.streams],
            "restored": session.restored,
            "token_saved": store.load() is not None,
            "token_offered": session.token_offered,
            "version": session.version,
        }
    finally:
        await session.close()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))), flush=True)
