"""The console's round-2 pure parts: tokens read from each provider's usage object, prices and
their table, raw exchanges kept without images, take-over key names, why a login failed, where
a page without a login goes, the per-run settings a new session may ask for, and the inbox's
hold and veto of calls around a take-over."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from deskpilot.config import load_settings
from deskpilot.errors import ConfigError
from deskpilot.mcp.tokens import load_token
from deskpilot.serve.auth import ConsoleAuth
from deskpilot.serve.guard import PAGES
from deskpilot.serve.inbox import NOT_RUN_TAKEN_OVER, Inbox
from deskpilot.serve.metering import Exchange, Exchanges, elide
from deskpilot.serve.prices import Price, PriceTable, Tokens, tokens, usage_of
from deskpilot.serve.runs import RunSettings
from deskpilot.serve.sessions import NewSession
from deskpilot.serve.takeover import TakeOver, hand_back_note, keysym_for


def test_tokens_are_read_from_each_providers_usage_object() -> None:
    anthropic = {
        "input_tokens": 100,
        "output_tokens": 20,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 50,
    }
    assert tokens(anthropic) == Tokens(1150, 20, 1000, 50)
    openai = {
        "input_tokens": 900,
        "output_tokens": 30,
        "total_tokens": 930,
        "input_tokens_details": {"cached_tokens": 512},
        "output_tokens_details": {"reasoning_tokens": 10},
    }
    assert tokens(openai) == Tokens(900, 30, 512)
    chat = {
        "prompt_tokens": 77,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 5},
    }
    assert tokens(chat) == Tokens(77, 7, 5)
    gemini = {
        "promptTokenCount": 300,
        "candidatesTokenCount": 40,
        "thoughtsTokenCount": 60,
        "cachedContentTokenCount": 100,
        "toolUsePromptTokenCount": 4,
    }
    assert tokens(gemini) == Tokens(304, 100, 100)
    assert tokens({}) == Tokens()
    assert tokens({"input_tokens": "many", "output_tokens": True}) == Tokens()  # not counts
    assert usage_of({"usageMetadata": gemini}) is gemini and usage_of({"x": 1}) == {}


def test_a_price_charges_cached_and_written_input_at_their_own_rates() -> None:
    price = Price(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    t = Tokens(input=1150, output=20, cached=1000, cache_write=50)
    assert price.cost(t) == pytest.approx((100 * 3 + 1000 * 0.3 + 50 * 3.75 + 20 * 15) / 1e6)
    plain = Price(input=2.0, output=8.0)  # no cache prices: cached input costs as input
    assert plain.cost(t) == pytest.approx((1150 * 2 + 20 * 8) / 1e6)


def test_the_price_table_is_checked_saved_as_toml_and_read_again_when_edited(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config" / "prices.toml"
    table = PriceTable(path)
    assert table.find("openai:gpt-5") is None and table.as_dict()["prices"] == {}
    table.replace(
        {
            "openai:gpt-5": {"input": 1.25, "output": 10},
            "anthropic:*": {"input": 3, "output": 15, "cached_input": 0.3},
        }
    )
    assert '[prices."openai:gpt-5"]' in path.read_text()
    assert PriceTable(path).find("openai:gpt-5") == Price(1.25, 10.0)
    assert table.find("anthropic:claude-sonnet-4-5") == Price(3.0, 15.0, 0.3)  # the pattern
    table.replace(
        {
            **{k: v.as_dict() for k, v in table.prices.items()},
            "anthropic:claude-opus-*": {"input": 5, "output": 25},
        }
    )
    assert table.find("anthropic:claude-opus-4-1") == Price(5.0, 25.0)  # the longer match
    for bad, why in [
        ({"m": {"input": 1}}, "needs output"),
        ({"m": {"input": -1, "output": 1}}, "from 0 to"),
        ({"m": {"input": "cheap", "output": 1}}, "must be a number"),
        ({"m": {"input": 1, "output": 1, "discount": 2}}, "unknown fields"),
        ({"": {"input": 1, "output": 1}}, "no model"),
        ({'a"b': {"input": 1, "output": 1}}, "is not a model name"),
    ]:
        with pytest.raises(ConfigError, match=why):
            table.replace(bad)
    assert PriceTable(path).find("openai:gpt-5") == Price(1.25, 10.0)  # nothing was written
    path.write_text('[prices."x:y"]\ninput = 1\noutput = 2\n')  # an edit by hand
    assert table.find("x:y") == Price(1.0, 2.0) and table.find("openai:gpt-5") is None
    path.write_text("[prices\n")
    assert "prices.toml" in table.as_dict()["problem"]


def test_raw_exchanges_leave_out_images_and_keep_only_the_newest_bodies() -> None:
    picture = "data:image/png;base64," + "iVBORw0KGgo" * 100
    body: dict[str, Any] = {
        "messages": [{"content": [{"image_url": {"url": picture}}, {"text": "word " * 200}]}],
        "raw": "A" * 4000,
    }
    shown = elide(body)
    assert shown["messages"][0]["content"][0]["image_url"]["url"].startswith(
        "[image/png data URL, 1,122 characters"
    )
    assert shown["messages"][0]["content"][1]["text"] == "word " * 200  # prose is kept
    assert shown["raw"] == "[base64 data, 4,000 characters, not shown]"
    kept = Exchanges(keep=300)  # two bodies of 150 characters
    for n in range(1, 4):
        kept.add(Exchange(n, "u", 0.0, 1.0, "q" * 100, "r" * 50, {}, Tokens(n, n)))
    assert [bool(x.request) for x in kept.all.values()] == [False, True, True]
    assert kept.get(1) is not None and kept.get(1).tokens == Tokens(1, 1)  # type: ignore[union-attr]


def test_take_over_keys_and_the_note_the_model_reads() -> None:
    assert keysym_for("Enter") == "Return" and keysym_for("ArrowLeft") == "Left"
    assert keysym_for("Control") == "Control_L" and keysym_for("Meta") == "Super_L"
    assert keysym_for("a") == "a" and keysym_for("F5") == "F5" and keysym_for(" ") == "space"
    assert keysym_for("PageDown") == "Page_Down" and keysym_for("Backspace") == "BackSpace"
    assert keysym_for("Dead") is None and keysym_for("Unidentified") is None
    said = hand_back_note(42.4, 1, 3, " I logged in. ")
    assert said.startswith("The user took over the screen for 42 s (1 click, 3 keys)")
    assert "Their note: “I logged in.”." in said and "look at it again" in said
    assert "left no note" in hand_back_note(1, 0, 0, "")


def test_take_over_refuses_what_it_must_and_releases_what_the_page_left_pressed() -> None:
    class Desk:
        def __init__(self) -> None:
            self.log: list[tuple[Any, ...]] = []

        async def screen_size(self) -> tuple[int, int]:
            return 100, 50

        async def pointer_move(self, x: int, y: int) -> None:
            self.log.append(("move", x, y))

        async def pointer_button(self, button: str, down: bool) -> None:
            self.log.append(("button", button, down))

        async def key_event(self, keys: list[str], down: bool) -> None:
            self.log.append(("key", *keys, down))

        async def type_raw(self, text: str) -> None:
            self.log.append(("text", text))

    async def go() -> None:
        desk, inbox, marks = Desk(), Inbox(), []
        over = TakeOver(desk, inbox, lambda k, d: marks.append(k), allowed=True)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="take the session over first"):
            await over.send([{"t": "text", "text": "x"}])
        over.start()
        assert inbox.paused and marks == ["takeover.started"]
        await over.send(
            [
                {"t": "button", "button": "left", "down": True, "x": 5, "y": 6},
                {"t": "key", "key": "Shift", "down": True},
                {"t": "text", "text": "é"},
                {"t": "key", "key": "Dead", "down": True},
            ]
        )
        for bad in (
            [{"t": "move", "x": 100, "y": 0}],
            [{"t": "fly"}],
            "nope",
            [{"t": "wheel", "x": 1, "y": 1, "dy": 99}],
        ):
            with pytest.raises(ConfigError):
                await over.send(bad)
        said = await over.hand_back("done")
        assert desk.log == [
            ("move", 5, 6),
            ("button", "left", True),
            ("key", "Shift_L", True),
            ("text", "é"),
            ("button", "left", False),
            ("key", "Shift_L", False),
        ]
        assert not inbox.paused and inbox.take() == [said] and marks[-1] == "takeover.ended"
        refused = TakeOver(desk, Inbox(), lambda k, d: None, allowed=False, why_not="no")  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="no"):
            refused.start()

    asyncio.run(go())


def test_a_failed_login_says_why_and_pages_without_one_go_to_the_login_page(
    tmp_path: Path,
) -> None:
    auth = ConsoleAuth(load_token(tmp_path / "token"), 8765)
    link = auth.one_time_token()
    assert auth.redeem(link) is not None
    assert auth.redeem(link) is None and auth.why(link) == "used"
    assert auth.why("made-up") == "unknown"
    assert not auth.limited()  # a link used twice counts no failed guess
    for path in ("/", "/s/abc", "/audit", "/audit/r1", "/prices"):
        assert PAGES.fullmatch(path), path
    for path in ("/api/sessions", "/static/console.js", "/s/a/b", "/login"):
        assert not PAGES.fullmatch(path), path


def test_the_run_settings_a_new_session_may_ask_for(tmp_path: Path) -> None:
    settings = load_settings(env={"HOME": str(tmp_path), "DESKPILOT_MODEL": "openai:gpt-5"})
    ask = NewSession.parse(
        {"goal": "g", "max_steps": 7, "timeout": 90, "tool_protocol": "text", "mode": "hybrid"},
        settings,
    )
    assert ask.run == RunSettings(7, 90.0, "text", "hybrid")
    plain = NewSession.parse({"goal": "g"}, settings)
    assert plain.run == RunSettings(settings.max_steps, settings.timeout, None, "elements")
    for body, why in [
        ({"goal": "g", "timeout": 5}, "timeout must be"),
        ({"goal": "g", "tool_protocol": "smoke"}, "tool_protocol must be"),
        ({"goal": "g", "mode": "magic"}, "mode must be"),
        ({"goal": "g", "max_steps": True}, "max_steps"),
    ]:
        with pytest.raises(ConfigError, match=why):
            NewSession.parse(body, settings)


def test_the_inbox_holds_calls_while_taken_over_and_vetoes_those_decided_before() -> None:
    async def go() -> None:
        inbox = Inbox()
        inbox.post("  ")  # blank: nothing for the model
        assert inbox.take() == [] and await inbox.before_call() is None  # no take-over: run
        inbox.pause()  # taken over while the model thinks
        held = asyncio.create_task(inbox.before_call())
        await asyncio.sleep(0)
        assert not held.done()  # the call waits for the hand-back
        inbox.resume("I closed the dialog.")
        assert await held == NOT_RUN_TAKEN_OVER and await inbox.before_call() == NOT_RUN_TAKEN_OVER
        assert inbox.take() == ["I closed the dialog."]  # the next turn reads the note
        assert await inbox.before_call() is None  # …and its calls run
        inbox.pause()
        assert inbox.take() == []  # a turn begun while the person drives…
        inbox.resume()
        assert await inbox.before_call() == NOT_RUN_TAKEN_OVER  # …runs none of its calls

    asyncio.run(go())
