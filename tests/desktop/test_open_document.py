"""open_app with a document: the window showing it, LibreOffice running or not.

LibreOffice is single-instance: a second launch hands the document to the running soffice
and exits at once, and the window comes from that instance. The window's title is checked
through X, the document's content through the read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import window_id_from
from tests.desktop.office_files import write_fods, write_fodt

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _opened(call: Call, ctx: ToolContext, app: str, path: Path) -> tuple[str, str]:
    result = await call("open_app", {"bundleId": app, "file": str(path)})
    assert not result.is_error, result.text
    wid = window_id_from(result.text)
    xid = int(wid.split("/")[1])
    title = (await ctx.desktop.ports.windows.window(xid)).title  # type: ignore[attr-defined]
    assert path.stem in title, (title, result.text)
    assert ctx.session.target == wid
    return wid, (await call("read_screen_ax", {"windowID": wid})).text


async def test_open_app_opens_documents_in_libreoffice_started_or_running(
    call: Call, ctx: ToolContext, apps: Apps, tmp_path: Path
) -> None:
    sheet = write_fods(
        tmp_path / "ledger.fods", {"Ledger": [["Account", "Balance"], ["Rent", 900]]}
    )
    letter = write_fodt(tmp_path / "letter.fodt", ["Dear reader,", "a letter from deskpilot."])
    second = write_fods(tmp_path / "budget.fods", {"Budget": [["Item", "Cost"], ["Paper", 4]]})

    # not running: the launch starts soffice with the spreadsheet
    _wid, text = await _opened(call, ctx, "LibreOffice Calc", sheet)
    assert 'A2 "Rent"' in text, text
    # running: Writer and a second spreadsheet come from the same soffice
    _wid, text = await _opened(call, ctx, "LibreOffice Writer", letter)
    assert "a letter from deskpilot." in text, text
    wid, text = await _opened(call, ctx, "LibreOffice Calc", second)
    assert 'A2 "Paper"' in text, text
    pids = {w.pid for w in await ctx.desktop.list_windows() if "LibreOffice" in w.title}
    assert len(pids) == 1, pids  # one soffice for all three

    # the same document again: its window, not a timeout
    again = await call("open_app", {"bundleId": "LibreOffice Calc", "file": str(second)})
    assert not again.is_error and window_id_from(again.text) == wid, again.text


async def test_open_app_refuses_a_missing_file_and_starts_nothing(
    call: Call, ctx: ToolContext, tmp_path: Path
) -> None:
    before = {w.handle for w in await ctx.desktop.list_windows()}
    missing = await call(
        "open_app", {"bundleId": "LibreOffice Calc", "file": str(tmp_path / "no.ods")}
    )
    assert missing.is_error and "no file" in missing.text, missing.text
    assert {w.handle for w in await ctx.desktop.list_windows()} == before
