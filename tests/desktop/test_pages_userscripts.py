"""Userscripts in real Chromium through the real extension path, as Violentmonkey runs them:
each GM API a published script uses, values that survive export and import, requests across
origins that the script's @connect allows (and one it does not), a @require from deskpilot's
cache on a machine that cannot reach the library's host, menu commands run from the CLI and
the page tools.

Scripts are added and imported by separate ``deskpilot`` processes, as a user would; what they
did is read through the test's own CDP connection (page globals the scripts set, computed
styles), the API server's own request log, and the X clipboard."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.pages.browser import connect
from deskpilot.pages.store import open_library
from tests.desktop.pages_rig import Approvals, Rig, call, deskpilot, goto, open_rig, style, tool_ctx
from tests.desktop.userscript_rig import (
    BANNER,
    BANNER_URL,
    LIB_CODE,
    LIB_URL,
    PLAIN,
    Api,
    api_server,
    companion,
    read_clipboard,
    stranger,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def rig(desktop: DesktopFacade, desktop_settings: Settings) -> AsyncIterator[Rig]:
    async with open_rig(desktop, desktop_settings) as r:
        yield r


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def api() -> AsyncIterator[Api]:
    with api_server() as server:
        yield server


def run(rig: Rig, *args: str) -> str:
    done = deskpilot(rig.settings, "rules", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


async def companion_state(page: Page, *keys: str) -> dict[str, Any]:
    """``window.__companion`` once it holds ``keys``."""

    async def ready() -> dict[str, Any] | None:
        got = await page.evaluate("window.__companion || null")
        return got if got and all(k in got for k in keys) else None

    state: dict[str, Any] = await async_wait_for(
        ready, timeout=30, what=f"the userscript to set {', '.join(keys)}"
    )
    return state


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory, api: Api) -> Path:
    where = tmp_path_factory.mktemp("userscripts")
    (where / "page-companion.user.js").write_text(companion(api.port))
    (where / "stranger.user.js").write_text(stranger(api.port))
    (where / "plain.user.js").write_text(PLAIN)
    (where / "tinylib.min.js").write_text(LIB_CODE)
    (where / "banner.txt").write_text(BANNER)
    return where


def ensure_installed(rig: Rig, scripts: Path) -> None:
    """The scripts in the library (an earlier test added them; alone, this one does)."""
    with open_library(rig.settings) as lib:
        have = {r.name for _f, _g, r in lib.chains()}
    if "Page Companion" in have:
        return
    run(rig, "cache", "add", LIB_URL, str(scripts / "tinylib.min.js"))
    run(rig, "cache", "add", BANNER_URL, str(scripts / "banner.txt"))
    for name in ("page-companion", "stranger", "plain"):
        run(rig, "add", str(scripts / f"{name}.user.js"))


async def test_a_published_userscript_runs_with_its_gm_api(
    rig: Rig, api: Api, scripts: Path
) -> None:
    await rig.page.goto("about:blank")  # a new script runs in matching open tabs at once
    # offline: the library's CDN is not reachable; the user fills the cache from files
    refused = deskpilot(rig.settings, "rules", "add", str(scripts / "page-companion.user.js"))
    assert refused.returncode == 1
    assert f"@require: {LIB_URL} is not in deskpilot's cache" in refused.stderr
    assert f"@resource banner: {BANNER_URL} is not in deskpilot's cache" in refused.stderr
    with open_library(rig.settings) as lib:
        assert lib.tree() == []  # nothing saved
    run(rig, "cache", "add", LIB_URL, str(scripts / "tinylib.min.js"))
    run(rig, "cache", "add", BANNER_URL, str(scripts / "banner.txt"))
    added = run(rig, "add", str(scripts / "page-companion.user.js"))
    assert "added rule r_" in added and "'Page Companion'" in added
    run(rig, "add", str(scripts / "stranger.user.js"))
    run(rig, "add", str(scripts / "plain.user.js"), "--yes")
    with open_library(rig.settings) as lib:
        (folder,) = lib.tree()
        assert folder.name == "Userscripts"
        names = [r.name for r in folder.groups[0].rules]
        assert names == ["Page Companion", "Stranger", "Plain"]
        comp = folder.groups[0].rules[0]
        assert comp.run_at == "document-end" and comp.frames == "top"  # @run-at, @noframes

    page = await goto(rig, "/other")
    state = await companion_state(page, "ready", "xhr", "post", "redirect", "asyncSet")
    assert state["visits"] == 1
    assert state["keys"] == ["last", "visits"]
    assert state["lib"] == "1.0.0/42"  # the @require from the cache, before the script
    assert state["banner"] == BANNER
    assert state["bannerUrl"].startswith("blob:http://127.0.0.1")
    assert state["dotUrl"] == "data:image/png;base64,iVBORw0KGgo="
    assert state["info"] == {
        "name": "Page Companion",
        "version": "2.3.1",
        "handler": "deskpilot",
        "matches": ["http://127.0.0.1/*"],
        "meta": True,
    }
    assert state["hasDownload"] == "undefined"  # not granted: not there
    assert state["styleTag"] == "STYLE"
    assert await style(page, ".target", "color") == "rgb(0, 128, 0)"  # GM_addStyle
    assert state["asyncVisits"] == 1
    # across origins, allowed by @connect localhost: made, answered, seen by the API
    assert state["xhr"]["status"] == 200 and state["xhr"]["body"]["greeting"] == "hi"
    assert state["xhr"]["api"] is True
    greeting = next(r for r in api.requests if r["path"] == "/api/greeting?from=companion")
    assert greeting["headers"].get("X-Requested-By") == "companion"
    assert json.loads(state["post"]) == {"echo": True}
    posted = next(r for r in api.requests if r["path"] == "/api/echo")
    assert posted["method"] == "POST" and json.loads(posted["body"]) == {"visits": 1}
    # a redirect to a host the script did not list is refused (its answer withheld)
    assert "not in the script's @connect list" in state["redirect"]

    # the script without @connect for the API: refused before any request was made
    stranger_said = await async_wait_for(
        lambda: page.evaluate("window.__stranger || null"), timeout=30, what="the stranger"
    )
    assert stranger_said.startswith("refused: ") and "@connect" in stranger_said
    assert "/api/secret?from=stranger" not in api.paths()

    plain = await page.evaluate("window.__plain")
    assert plain == {
        "xhr": "undefined",
        "setValue": "undefined",
        "name": "Plain",
        "gmInfo": "no version",
        "runAt": "loading",
    }

    # a strict-CSP page: GM_addStyle's <style> still applies
    page = await goto(rig, "/csp")
    await companion_state(page, "ready")
    assert await style(page, ".target", "color") == "rgb(0, 128, 0)"
    state = await companion_state(page, "visits")
    assert state["visits"] == 2  # values are the script's, across pages


async def test_menu_commands_notifications_clipboard_and_tabs(
    rig: Rig, api: Api, scripts: Path
) -> None:
    ensure_installed(rig, scripts)
    page = await goto(rig, "/other?menu")
    await companion_state(page, "ready")
    listed = run(rig, "menu")
    assert "Mark the page" in listed and "Copy the title" in listed
    assert "Never shown" not in listed  # unregistered
    assert "Page Companion" in listed

    run(rig, "menu", "--run", "Mark the page")
    await async_wait_for(
        lambda: page.evaluate("document.body.dataset.marked === 'yes'"),
        timeout=15,
        what="the menu command to run",
    )

    # the page tools list and run them too
    ctx = tool_ctx(rig, Approvals())
    tools_listed = await call(ctx, "list_menu_commands", {})
    assert not tools_listed.is_error, tools_listed.text
    assert "Copy the title" in tools_listed.text
    ran = await call(ctx, "run_menu_command", {"command": "Copy the title"})
    assert not ran.is_error, ran.text
    await async_wait_for(
        lambda: page.evaluate("document.body.dataset.copied === 'yes'"),
        timeout=15,
        what="the copy command to run",
    )
    display = rig.settings.environ["DISPLAY"]

    async def clipboard() -> bool:
        import asyncio

        text = await asyncio.to_thread(read_clipboard, display, 5.0)
        return text == "companion: Other"

    await async_wait_for(clipboard, timeout=20, what="the X clipboard to hold the text")

    # the notification was made by the browser; dismissing it tells the script
    async with connect(rig.settings) as agent:
        shown = await agent.worker_call("chrome.notifications.getAll()")
    assert shown and len(shown) >= 1
    run(rig, "menu", "--run", "Dismiss the notification")
    await async_wait_for(
        lambda: page.evaluate("Boolean(window.__companion.notificationDone)"),
        timeout=15,
        what="ondone",
    )

    # GM_openInTab opens a background tab; closing it tells the script
    before = len(rig.browser.contexts[0].pages)
    run(rig, "menu", "--run", "Open the other page")

    async def opened() -> Page | None:
        return next((p for p in rig.browser.contexts[0].pages if p.url.endswith("?opened")), None)

    tab = await async_wait_for(opened, timeout=20, what="the tab GM_openInTab opens")
    assert len(rig.browser.contexts[0].pages) == before + 1
    await tab.close()
    await async_wait_for(
        lambda: page.evaluate("Boolean(window.__companion.openedClosed)"),
        timeout=15,
        what="onclose",
    )


async def test_values_round_trip_through_export_import_and_a_violentmonkey_backup(
    rig: Rig, api: Api, scripts: Path, tmp_path: Path
) -> None:
    ensure_installed(rig, scripts)
    page = await goto(rig, "/other?values")
    state = await companion_state(page, "ready")
    visits = state["visits"]
    with open_library(rig.settings) as lib:
        rule = next(r for _f, _g, r in lib.chains() if r.name == "Page Companion")
    shown = json.loads(run(rig, "values", rule.id, "--json"))
    assert shown["visits"] == visits and shown["asyncKey"] == "set-async"
    assert shown["last"]["at"] == visits

    # another tab sees a change made by the CLI, as a remote change
    run(rig, "values", rule.id, "--set", 'note="from the cli"')
    await async_wait_for(
        lambda: page.evaluate("(window.__companion.changed || {}).newValue || null"),
        timeout=15,
        what="the value change listener",
    )
    changed = await page.evaluate("window.__companion.changed")
    assert changed == {"key": "note", "oldValue": None, "newValue": "from the cli", "remote": True}

    exported = tmp_path / "rules.json"
    run(rig, "export", "-o", str(exported))
    data = json.loads(exported.read_text())
    (saved,) = [
        r
        for f in data["folders"]
        for g in f["groups"]
        for r in g["rules"]
        if r["name"] == "Page Companion"
    ]
    assert saved["values"]["visits"] == visits and saved["values"]["note"] == "from the cli"
    assert {r["url"] for r in data["resources"]} == {LIB_URL, BANNER_URL}

    # a fresh library from the export: the values come back, the cache too
    with open_library(rig.settings) as lib:
        for f in lib.tree():
            lib.delete(f.id)
        for res in lib.resources():
            lib.remove_resource(res.url)
    run(rig, "import", str(exported), "--yes")
    page = await goto(rig, "/other?imported")
    state = await companion_state(page, "ready")
    assert state["visits"] == visits + 1
    assert state["lib"] == "1.0.0/42"

    # a Violentmonkey backup with the script and its stored values
    with open_library(rig.settings) as lib:
        for f in lib.tree():
            lib.delete(f.id)
    backup = tmp_path / "violentmonkey_2026-12-01.zip"
    # Violentmonkey keys values by the script's uri: namespace and name, escaped as it escapes them
    uri = "https-3a-2f-2fgithub.com-2fexample-2fpage-2dcompanion-0aPage-20Companion-0a"
    with zipfile.ZipFile(backup, "w") as z:
        z.writestr("Page Companion.user.js", companion(api.port))
        z.writestr(
            "violentmonkey",
            json.dumps(
                {
                    "scripts": {
                        "Page Companion": {
                            "config": {"enabled": 1, "shouldUpdate": 1},
                            "custom": {"origInclude": True},
                            "position": 1,
                        }
                    },
                    "settings": {},
                    "values": {
                        uri: {"visits": "n41", "last": 'o{"url":"x","at":41}', "obsolete": "sgone"}
                    },
                }
            ),
        )
    await page.goto("about:blank")  # (an imported script runs in matching open tabs at once)
    out = run(rig, "import", str(backup))
    assert "3 stored values" in out
    page = await goto(rig, "/other?vm")
    state = await companion_state(page, "ready")
    assert state["visits"] == 42
    with open_library(rig.settings) as lib:
        (folder,) = lib.tree()
        assert folder.name == "Violentmonkey: violentmonkey_2026-12-01"


async def test_malformed_backups_are_refused_whole_with_each_problem_named(
    rig: Rig, api: Api, tmp_path: Path
) -> None:
    backup = tmp_path / "broken.zip"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("Good.user.js", stranger(api.port))
        z.writestr("No name.user.js", "// ==UserScript==\n// @match *://*/*\n// ==/UserScript==\n")
        z.writestr("No block.user.js", "console.log('hi');\n")
        z.writestr(
            "Bad match.user.js",
            "// ==UserScript==\n// @name Bad\n// @match http://*.example.*/x\n// ==/UserScript==\n",
        )
        z.writestr("violentmonkey", "{not json")
    backup.write_bytes(buf.getvalue())
    with open_library(rig.settings) as lib:
        revision = lib.revision
    done = deskpilot(rig.settings, "rules", "import", str(backup), "--yes")
    assert done.returncode == 1
    said = done.stderr
    assert "nothing imported: 4 problems" in said
    assert "No name.user.js: the metadata block has no @name" in said
    assert "No block.user.js: not a userscript" in said
    assert "Bad match.user.js: @match 'http://*.example.*/x'" in said
    assert "violentmonkey entry is not JSON" in said
    with open_library(rig.settings) as lib:
        assert lib.revision == revision


async def test_open_urls_opens_tabs_in_the_agent_browsers_window(rig: Rig) -> None:
    """One agent-browser window unless asked: tabs go into the tracked window (or the last
    used one); a new window only when asked. Windows are counted on the desktop, tabs by the
    test's own CDP connection."""
    from tests.desktop.pages_rig import browser_pid

    pid = browser_pid(rig.settings)

    async def windows() -> list[Any]:
        return [w for w in await rig.desktop.list_windows() if w.pid == pid]

    before = await windows()
    pages = len(rig.browser.contexts[0].pages)
    ctx = tool_ctx(rig, Approvals())
    first = await call(ctx, "open_urls", {"urls": [rig.site.url("/other?tab1")]})
    assert not first.is_error, first.text
    assert first.data is not None and first.data["new_window"] is False
    assert "as new tabs in the agent browser's window" in first.text
    assert len(await windows()) == len(before)
    assert len(rig.browser.contexts[0].pages) == pages + 1
    assert first.data["window"]["stable_window_id"] in {w.stable_id for w in before}

    second = await call(
        ctx, "open_urls", {"urls": [rig.site.url("/other?win2")], "new_window": True}
    )
    assert not second.is_error, second.text
    assert second.data is not None and second.data["new_window"] is True
    assert "a new window" in second.text
    assert len(await windows()) == len(before) + 1
    new_id = second.data["window"]["stable_window_id"]

    # the session now tracks the new window: the next tabs go there, not to the first
    third = await call(
        ctx, "open_urls", {"urls": [rig.site.url("/other?tab3"), rig.site.url("/other?tab4")]}
    )
    assert not third.is_error, third.text
    assert third.data is not None and third.data["new_window"] is False
    assert third.data["window"]["stable_window_id"] == new_id and third.data["tabs"] == 2
    assert "the tracked window" in third.text
    assert len(await windows()) == len(before) + 1
    session = await rig.browser.new_browser_cdp_session()
    by_url = {p.url: p for p in rig.browser.contexts[0].pages}

    async def window_of(url: str) -> int:
        page = by_url[url]
        cdp = await page.context.new_cdp_session(page)
        target = (await cdp.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
        await cdp.detach()
        got = await session.send("Browser.getWindowForTarget", {"targetId": target})
        return int(got["windowId"])

    assert await window_of(rig.site.url("/other?tab3")) == await window_of(
        rig.site.url("/other?win2")
    )
    assert await window_of(rig.site.url("/other?tab1")) != await window_of(
        rig.site.url("/other?win2")
    )
    for p in list(rig.browser.contexts[0].pages):
        if "?tab" in p.url or "?win" in p.url:
            await p.close()


async def test_the_rest_of_the_gm_api_unwrap_and_url_changes(
    rig: Rig, api: Api, tmp_path: Path
) -> None:
    from tests.desktop.userscript_rig import UNWRAPPED, kitchen_sink

    await rig.page.goto("about:blank")
    (tmp_path / "sink.user.js").write_text(kitchen_sink(api.port))
    (tmp_path / "unwrapped.user.js").write_text(UNWRAPPED)
    run(rig, "add", str(tmp_path / "sink.user.js"))
    run(rig, "add", str(tmp_path / "unwrapped.user.js"))
    page = await goto(rig, "/other?sink")

    seen: list[Any] = [None]

    async def sink(*keys: str) -> dict[str, Any] | None:
        got = seen[0] = await page.evaluate("window.__sink || null")
        return got if got and all(k in got for k in keys) else None

    try:
        state = await async_wait_for(
            lambda: sink("ready", "tab", "tabs", "el", "downloaded", "notificationDone"),
            # done 0.4-0.6 s into this wait in 6 runs alone; a GM_download whose end the
            # worker missed never settled at all (fixed in sw.js)
            timeout=30,
            what="the kitchen sink",
        )
    except WaitTimeout as exc:
        raise AssertionError(f"{exc}; the page's sink had: {seen[0]!r}") from None
    assert state["values"] == {"a": 1, "b": {"c": 2}}
    assert state["defaults"] == {"a": 1, "zz": "default"}
    assert "removedListenerFired" not in state
    assert state["tab"] == {"seen": "/other"} and state["tabs"] >= 1
    assert state["el"] is True
    assert await page.evaluate("document.getElementById('sink-el').textContent") == "added"
    assert state["notificationDone"] is True
    # the download is a file on disk, with what the API served
    async with connect(rig.settings) as agent:
        found = await agent.worker_call(
            "chrome.downloads.search({filenameRegex: 'deskpilot-sink', state: 'complete'})"
        )
    assert found, "no completed download"
    saved = Path(found[-1]["filename"])
    assert json.loads(saved.read_text())["path"] == "/api/file.txt"
    with open_library(rig.settings) as lib:
        rule = next(r for _f, _g, r in lib.chains() if r.name == "Kitchen Sink")
    assert json.loads(run(rig, "values", rule.id, "--json")) == {"a": 2, "b": {"c": 2}}

    # window.onurlchange: single-page navigation tells the script
    await page.evaluate("history.pushState({}, '', '/other?sink&moved')")
    await async_wait_for(
        lambda: page.evaluate("(window.__sink.urlchange || '').endsWith('moved')"),
        timeout=15,
        what="urlchange",
    )

    # @unwrap: the code ran as it is, at top level, without the GM API
    await async_wait_for(
        lambda: page.evaluate("typeof window.unwrappedFn === 'function'"),
        timeout=15,
        what="the unwrapped script",
    )
    assert await page.evaluate("[window.unwrappedGlobal, unwrappedFn()]") == [
        "top-level",
        "undefined",
    ]


async def test_each_gm_download_tells_the_script_it_ended(
    rig: Rig, api: Api, tmp_path: Path
) -> None:
    from tests.desktop.userscript_rig import many_downloads

    count = 8
    (tmp_path / "many.user.js").write_text(many_downloads(api.port, count))
    run(rig, "add", str(tmp_path / "many.user.js"))
    page = await goto(rig, "/other?nosink&downloads")

    async def ended() -> dict[str, Any] | None:
        got: dict[str, Any] | None = await page.evaluate("window.__downloads || null")
        return got if got and len(got["loaded"]) + len(got["failed"]) == count else None

    seen = await async_wait_for(
        ended, timeout=30, what=f"the script to hear of its {count} downloads' ends"
    )
    assert seen["failed"] == [] and sorted(seen["loaded"]) == list(range(count))
    # the API served each file, and each is complete on disk with what it served
    paths = api.paths()
    assert all(f"/api/many-{i}" in paths for i in range(count))
    async with connect(rig.settings) as agent:
        found = await agent.worker_call(
            "chrome.downloads.search({filenameRegex: 'deskpilot-many-', state: 'complete'})"
        )
    served = {json.loads(Path(d["filename"]).read_text())["path"] for d in found}
    assert served >= {f"/api/many-{i}" for i in range(count)}
