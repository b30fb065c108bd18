"""LibreOffice Writer: typed text appears in the read."""

from __future__ import annotations

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_typed_text_appears_in_the_read(call: Call, ctx: ToolContext, apps: Apps) -> None:
    opened = await call("open_app", {"bundleId": "LibreOffice Writer"})
    assert not opened.is_error, opened.text
    await apps.adopt(
        next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    )
    typed = await call("perform", {"action": "type", "text": "Hello from deskpilot. Done."})
    assert not typed.is_error, typed.text

    async def shown() -> str | None:
        text = (await call("read_screen_ax")).text
        return text if '= "Hello from deskpilot. Done."' in text else None

    read = await async_wait_for(shown, timeout=10, what="the typed paragraph in the read")
    assert "LibreOffice" in read
