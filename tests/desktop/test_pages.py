"""Page tools and rules against real Chromium on the sandbox desktop, pages from a loopback
server. Effects are read through the test's own CDP connection (``getComputedStyle``), which
the tools do not use; the browser is started by a separate ``deskpilot`` process, as a user's
earlier command would have started it (see ``pages_rig``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from deskpilot._wait import async_wait_for
from deskpilot.agent.chat import ChatSession
from deskpilot.agent.providers import ScriptedProvider
from deskpilot.config import Settings
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.events import Event
from deskpilot.pages import service
from deskpilot.pages.patterns import parse_patterns
from deskpilot.pages.store import extension_dir, open_library
from deskpilot.pages.tools import PAGE_TOOL_NAMES
from tests.desktop.helpers import mcp_text
from tests.desktop.pages_rig import (
    Approvals,
    Rig,
    call,
    deskpilot,
    frame_style,
    goto,
    open_rig,
    style,
    style_becomes,
    tool_ctx,
)
from tests.e2e.test_mcp_stdio import stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def rig(desktop: DesktopFacade, desktop_settings: Settings) -> AsyncIterator[Rig]:
    async with open_rig(desktop, desktop_settings.with_overrides(confirm="consequential")) as r:
        yield r


# -- an example turn -----------------------------------------------------------------------

COLLAPSE = ".comments .comment { display: none; } .comments h2 { cursor: pointer; }"


def seed_script(rig: Rig, tmp_path: Path) -> Path:
    base = rig.site.url("")

    def c(tool: str, /, **args: Any) -> dict[str, Any]:
        return {"tool_calls": [{"name": tool, "args": args}]}

    replies = [
        c("query_page", selector=".comments"),
        c("open_temp_pane", kind="css"),
        c("set_temp_pane_code", pane="css", code=COLLAPSE),
        {"text": "I collapsed the comments — please check the page. Does it look right?"},
        c("list_structure"),
        c("create_folder", name="Local site", include=[f"{base}/*"]),
        c("create_group", folder_id="FOLDER", name="Articles"),
        c(
            "create_rule",
            group_id="GROUP",
            name="Collapsible comments",
            include=[f"{base}/article*"],
            from_pane="css",
        ),
        {"text": "Saved the rule: comments are collapsed on every article page."},
    ]
    path = tmp_path / "seed.json"
    path.write_text(json.dumps({"format": "neutral", "replies": replies}))
    return path


class IdFillingProvider(ScriptedProvider):
    """The recorded replies, with the FOLDER/GROUP ids the model read in the previous
    results filled in (a live model copies them from there)."""

    settings_for_ids: Settings

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        turn = await super().complete(*args, **kwargs)
        with open_library(self.settings_for_ids) as lib:
            tree = lib.tree()
        ids = {"FOLDER": tree[-1].id if tree else "", "GROUP": ""}
        if tree and tree[-1].groups:
            ids["GROUP"] = tree[-1].groups[-1].id
        for tc in turn.tool_calls:
            for key, value in list(tc.arguments.items()):
                if isinstance(value, str) and value in ids:
                    tc.arguments[key] = ids[value]
        return turn


async def test_the_seed_turn_makes_comments_collapsible_and_saves_a_rule(
    rig: Rig, tmp_path: Path
) -> None:
    page = await goto(rig, "/article")
    assert await style(page, ".comment", "display") == "block"
    provider = IdFillingProvider(str(seed_script(rig, tmp_path)))
    provider.settings_for_ids = rig.settings
    events: list[Event] = []
    approvals = Approvals(True)
    ctx = tool_ctx(rig, approvals, events)
    chat = ChatSession(provider, ctx, page=True)

    first = await chat.send("make the comments section collapsible")
    assert first.outcome == "done" and "check the page" in first.answer
    results = [e.data for e in events if e.kind == "tool.result"]
    assert [r["tool"] for r in results] == ["query_page", "open_temp_pane", "set_temp_pane_code"]
    assert all(r["ok"] for r in results), results
    assert results[0]["text"].startswith("1 match for '.comments'")
    assert "chars elided" in results[0]["text"]  # script body and data: URL
    assert "1 rule" not in results[2]["text"] and "2 rules parsed" in results[2]["text"]
    await style_becomes(page, ".comment", "display", "none")  # live, in the TEMP pane
    assert approvals.asked == []  # nothing saved yet, nothing asked

    with open_library(rig.settings) as lib:
        assert lib.tree() == []
    second = await chat.send("good, save it")
    assert second.outcome == "done", second.answer
    assert [a.tool for a in approvals.asked] == ["create_folder", "create_group", "create_rule"]
    rule_ask = approvals.asked[2]
    assert any(COLLAPSE in line for line in rule_ask.details)  # exactly what is saved
    assert sum(1 for e in events if e.kind == "confirm.answered") == 3
    steps = [e.data["tool"] for e in events if e.kind == "tool.call"]
    assert len(steps) == 3 + 4  # every call has its chip
    with open_library(rig.settings) as lib:
        (rule,) = lib.applicable(rig.site.url("/article"))
        assert rule.css == COLLAPSE and rule.origin == "model"

    # a fresh load of a matching URL has the rule; a non-matching one does not
    await page.goto(rig.site.url("/article?fresh=1"))
    await style_becomes(page, ".comment", "display", "none")
    await page.goto(rig.site.url("/other"))
    assert await style(page, ".target", "display") == "block"
    await page.goto(rig.site.url("/article"))
    await style_becomes(page, ".comment", "display", "none")


# -- TEMP panes, query_page, declined saves -----------------------------------------------


async def test_panes_replace_survive_reloads_and_close(rig: Rig) -> None:
    page = await goto(rig, "/other")
    ctx = tool_ctx(rig, Approvals())
    opened = await call(ctx, "open_temp_pane", {"kind": "css"})
    assert not opened.is_error, opened.text
    pane = opened.data["pane_id"] if opened.data else ""
    again = await call(ctx, "open_temp_pane", {"kind": "css"})
    assert again.data and again.data["already_open"] and again.data["pane_id"] == pane

    await call(ctx, "set_temp_pane_code", {"pane": pane, "code": ".target{color: rgb(255, 0, 0)}"})
    await style_becomes(page, ".target", "color", "rgb(255, 0, 0)")
    second = await call(
        ctx, "set_temp_pane_code", {"pane": pane, "code": ".target{outline: 2px solid blue}"}
    )
    assert "1 rule parsed" in second.text
    await style_becomes(page, ".target", "color", "rgb(0, 0, 0)")  # the first code is gone
    assert await style(page, ".target", "outline-style") == "solid"

    await page.reload()
    await style_becomes(page, ".target", "outline-style", "solid")  # kept across a reload

    closed = await call(ctx, "close_temp_pane", {"pane": pane})
    assert not closed.is_error, closed.text
    await style_becomes(page, ".target", "outline-style", "none")
    await page.reload()
    await page.wait_for_load_state("load")
    assert await style(page, ".target", "outline-style") == "none"
    gone = await call(ctx, "set_temp_pane_code", {"pane": pane, "code": "x{}"})
    assert gone.is_error and "no_such_pane" in gone.text

    bad = await call(ctx, "open_temp_pane", {"kind": "css"})
    pane = bad.data["pane_id"] if bad.data else ""
    nothing = await call(ctx, "set_temp_pane_code", {"pane": pane, "code": "color: red; }"})
    assert "0 rules parsed" in nothing.text and "check the CSS syntax" in nothing.text
    await call(ctx, "close_temp_pane", {"pane": pane})


async def test_a_js_pane_returns_values_and_errors_with_lines(rig: Rig) -> None:
    page = await goto(rig, "/csp")  # strict CSP: the code still runs
    ctx = tool_ctx(rig, Approvals())
    await call(ctx, "open_temp_pane", {"kind": "js"})
    ran = await call(
        ctx,
        "set_temp_pane_code",
        {"pane": "js", "code": "document.body.dataset.pane = 'one';\nreturn document.title;"},
    )
    assert not ran.is_error and '"CSP"' in ran.text, ran.text
    assert await page.evaluate("document.body.dataset.pane") == "one"
    broken = await call(
        ctx, "set_temp_pane_code", {"pane": "js", "code": "const a = 1;\nnull.boom;"}
    )
    assert broken.is_error and "line 2" in broken.text and "TypeError" in broken.text
    cleanup = await call(
        ctx,
        "set_temp_pane_code",
        {
            "pane": "js",
            "code": "document.body.dataset.pane = 'two';\n"
            "return () => { document.body.dataset.pane = 'undone'; };",
        },
    )
    assert "cleanup" in cleanup.text
    await page.reload()  # re-run after the reload
    await async_wait_for(
        lambda: _dataset(page), timeout=15, what="the JS pane to run again after the reload"
    )
    pane_files = list((extension_dir(rig.settings) / "panes").glob("*.js"))
    assert pane_files  # what the extension re-runs after a reload
    await call(ctx, "close_temp_pane", {"pane": "js"})
    assert await page.evaluate("document.body.dataset.pane") == "undone"
    assert not any(p.exists() for p in pane_files)


async def _dataset(page: Page) -> bool:
    return bool(await page.evaluate("document.body && document.body.dataset.pane === 'two'"))


async def test_query_page_caps_and_reports_bad_selectors(rig: Rig) -> None:
    await goto(rig, "/article")
    ctx = tool_ctx(rig, Approvals())
    many = await call(ctx, "query_page", {"selector": "*"})
    assert many.data is not None and many.data["count"] > 5 and many.data["shown"] <= 5
    assert f"{many.data['count']} matches" in many.text
    bad = await call(ctx, "query_page", {"selector": "div["})
    assert bad.is_error and "is not a valid selector" in bad.text


async def test_a_declined_save_changes_nothing(rig: Rig) -> None:
    ctx = tool_ctx(rig, Approvals(False))
    with open_library(rig.settings) as lib:
        fid = lib.create_folder("Seed").id
        gid = lib.create_group(fid, "g").id
        revision, tree = lib.revision, lib.tree()
    for name, args in [
        ("create_folder", {"name": "Nope"}),
        ("create_group", {"folder_id": fid, "name": "Nope"}),
        (
            "create_rule",
            {"group_id": gid, "name": "Nope", "css": "a{}", "include": ["https://nope.test/*"]},
        ),
    ]:
        result = await call(ctx, name, args)
        assert result.is_error and result.text.startswith("Declined"), result.text
        assert "Nothing was done" in result.text
    with open_library(rig.settings) as lib:
        assert lib.revision == revision and lib.tree() == tree
    approvals = Approvals(False)
    args = {"group_id": gid, "name": "All", "css": "a{}", "include": ["*"]}
    everywhere = await call(tool_ctx(rig, approvals), "create_rule", args)
    assert everywhere.is_error and "EVERY page" in everywhere.text
    assert any("EVERY page" in line for line in approvals.asked[0].details)
    with open_library(rig.settings) as lib:
        assert lib.revision == revision
        lib.delete(fid)


async def test_the_page_tools_by_hand_from_the_cli(rig: Rig) -> None:
    await goto(rig, "/article")
    listed = deskpilot(rig.settings, "tools")
    assert (
        listed.returncode == 0 and "query_page" in listed.stdout and "create_rule" in listed.stdout
    )
    done = deskpilot(rig.settings, "tool", "query_page", json.dumps({"selector": ".comment"}))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("2 matches for '.comment'") and "First!" in done.stdout
    bad = deskpilot(rig.settings, "tool", "query_page", json.dumps({"selector": "div["}))
    assert bad.returncode == 1 and "is not a valid selector" in bad.stdout


async def test_the_page_tools_over_mcp_give_structured_results_the_client_validates(
    rig: Rig, tmp_path: Path
) -> None:
    """The official MCP client checks every structured result against the tool's
    outputSchema (it raises on a mismatch); what the tools did is read back through the
    test's own CDP connection and the library file."""
    page = await goto(rig, "/article")
    args = ("--confirm", "none")
    async with stdio_session(rig.settings.environ, tmp_path / "server.log", *args) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert all(listed[n].output_schema for n in PAGE_TOOL_NAMES)

        async def structured(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(tool, arguments)  # validated by the client
            assert not result.is_error, mcp_text(result)
            assert isinstance(result.structured_content, dict), tool
            return result.structured_content

        query = await structured("query_page", {"selector": ".comment"})
        assert (
            query["count"] == 2 == len(query["matches"]) and "First!" in query["matches"][0]["html"]
        )
        assert query["url"] == page.url
        pane = await structured("open_temp_pane", {"kind": "css"})
        css = ".comments h2 { color: rgb(0, 128, 0); }"
        applied = await structured("set_temp_pane_code", {"pane": pane["pane_id"], "code": css})
        assert applied["rules_parsed"] == 1 and "result" not in applied
        await style_becomes(page, ".comments h2", "color", "rgb(0, 128, 0)")
        assert (await structured("close_temp_pane", {"pane": pane["pane_id"]}))["ok"] is True
        await structured("open_temp_pane", {"kind": "js"})
        ran = await structured("set_temp_pane_code", {"pane": "js", "code": "return 6 * 7;"})
        assert ran["result"] == "42" and ran["type"] == "number"
        await structured("close_temp_pane", {"pane": "js"})

        folder = await structured(
            "create_folder", {"name": "MCP", "include": ["https://mcp.test/*"]}
        )
        group = await structured("create_group", {"folder_id": folder["id"], "name": "g"})
        spec = {
            "group_id": group["id"],
            "name": "r",
            "css": "a{}",
            "include": ["https://mcp.test/a*"],
        }
        rule = await structured("create_rule", spec)
        library = await structured("list_structure", {})
    with open_library(rig.settings) as lib:
        saved = lib.find(rule["id"])
        assert saved is not None and saved.name == "r"
        lib.delete(folder["id"])
    (mine,) = [f for f in library["folders"] if f["id"] == folder["id"]]
    assert mine["include"] == ["https://mcp.test/*"]
    assert mine["groups"][0]["rules"][0] == {
        **mine["groups"][0]["rules"][0],
        "id": rule["id"],
        "css_chars": 3,
        "js_chars": 0,
    }


# -- rules apply by themselves ------------------------------------------------------------


async def test_rules_apply_on_csp_pages_spa_navigation_and_cross_site_frames(rig: Rig) -> None:
    base = rig.site.url("")
    with open_library(rig.settings) as lib:
        f = lib.create_folder("Apply")
        g = lib.create_group(f.id, "g")
        lib.create_rule(
            g.id,
            "csp",
            css=".target{color: rgb(0, 128, 0)}",
            include=parse_patterns([f"{base}/csp"], "include"),
        )
        lib.create_rule(
            g.id,
            "spa",
            css=".target{color: rgb(0, 0, 255)}",
            include=parse_patterns([f"{base}/spa/next*"], "include"),
        )
        lib.create_rule(
            g.id,
            "frames",
            css=".target{color: rgb(255, 0, 255)}",
            include=parse_patterns(["*/inner"], "include"),
            frames="all",
        )
        lib.create_rule(
            g.id,
            "top only",
            css=".target{font-style: italic}",
            include=parse_patterns(["*/inner", "*/outer"], "include"),
        )
    note = await service.after_change(rig.settings)
    assert "applied to" in note

    page = await goto(rig, "/csp")
    await style_becomes(page, ".target", "color", "rgb(0, 128, 0)")

    page = await goto(rig, "/spa")
    assert await style(page, ".target", "color") == "rgb(0, 0, 0)"
    await page.evaluate("history.pushState({}, '', '/spa/next')")
    await style_becomes(page, ".target", "color", "rgb(0, 0, 255)")
    await page.evaluate("history.pushState({}, '', '/spa/elsewhere')")
    await style_becomes(page, ".target", "color", "rgb(0, 0, 0)")  # the CSS left
    await page.evaluate("location.hash = 'x'; history.back()")

    page = await goto(rig, "/outer")

    async def inner_styled() -> bool:
        return await frame_style(page, "localhost", "color") == "rgb(255, 0, 255)"

    await async_wait_for(inner_styled, timeout=15, what="the cross-site frame to get the rule")
    assert await frame_style(page, "localhost", "font-style") == "normal"  # frames: top
    assert await style(page, ".target", "font-style") == "italic"


async def test_a_trusted_types_refusal_is_recorded_and_shown(rig: Rig) -> None:
    base = rig.site.url("")
    with open_library(rig.settings) as lib:
        f = lib.create_folder("TT")
        g = lib.create_group(f.id, "g")
        rule = lib.create_rule(
            g.id,
            "inner html",
            js="document.body.innerHTML = '<b>hi</b>';",
            css=".target{color: rgb(1, 2, 3)}",
            run_at="document-end",
            include=parse_patterns([f"{base}/tt"], "include"),
        )
    await service.after_change(rig.settings)
    page = await goto(rig, "/tt")
    bad_js = {"group_id": g.id, "name": "broken", "js": "let a = 1;\nif (a {"}
    broken = await call(tool_ctx(rig, Approvals()), "create_rule", bad_js)
    assert broken.is_error and "does not compile" in broken.text and "line 2" in broken.text
    await style_becomes(page, ".target", "color", "rgb(1, 2, 3)")  # CSS under Trusted Types

    async def recorded() -> bool:
        with open_library(rig.settings) as lib:
            await service.collect_errors(rig.settings, lib)
            return any(e.kind == "trusted_types" for e in lib.errors(rule.id))

    await async_wait_for(recorded, timeout=15, what="the Trusted Types error to be recorded")
    shown = deskpilot(rig.settings, "rules", "show", rule.id)
    assert shown.returncode == 0, shown.stderr
    assert "trusted_types" in shown.stdout and f"{base}/tt" in shown.stdout
    assert "TrustedHTML" in shown.stdout


async def test_rules_apply_with_no_deskpilot_running_and_after_a_restart(rig: Rig) -> None:
    base = rig.site.url("")
    with open_library(rig.settings) as lib:
        f = lib.create_folder("Persist")
        g = lib.create_group(f.id, "g")
        lib.create_rule(
            g.id,
            "late",
            css=".target{letter-spacing: 3px}",
            include=parse_patterns([f"{base}/other*"], "include"),
        )
    # a separate deskpilot process makes the change and exits
    done = deskpilot(rig.settings, "rules", "disable", f.id)
    assert done.returncode == 0, done.stderr
    done = deskpilot(rig.settings, "rules", "enable", f.id)
    assert done.returncode == 0, done.stderr
    assert "applied to" in done.stderr
    # no deskpilot process is alive now: a page loaded from now on still gets the rule
    page = await goto(rig, "/other?after")
    await style_becomes(page, ".target", "letter-spacing", "3px")

    # the browser goes away; a new deskpilot process opens it again
    page = await rig.restart(rig.site.url("/other?restarted"))
    await style_becomes(page, ".target", "letter-spacing", "3px")
    await page.goto(rig.site.url("/csp"))  # the earlier rules too
    await style_becomes(page, ".target", "color", "rgb(0, 128, 0)")
