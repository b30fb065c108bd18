"""Safety suite — property fuzzing of every parser a model, a user or a file can feed.

Each parser gets inputs built from real, valid inputs with random parts replaced, dropped or
added (and raw junk), and must answer with a result or with deskpilot's own typed error, whose
text names the problem: never another exception (a traceback for the person or the model).
Each test records how many examples it ran (``figures.fuzzed``); ``make safety`` sums them.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deskpilot.agent.conversation import Conversation, ToolProtocol
from deskpilot.agent.providers.anthropic import AnthropicProvider
from deskpilot.agent.providers.compatible import CompatibleProvider
from deskpilot.agent.providers.gemini import GeminiProvider
from deskpilot.agent.providers.http import HttpClient
from deskpilot.agent.providers.openai import OpenAIProvider
from deskpilot.agent.providers.scripted import load_script
from deskpilot.agent.textproto import parse_reply
from deskpilot.ax.ids import normalize
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.desktop.keys import parse_shortcut
from deskpilot.errors import DeskpilotError, ProviderError
from deskpilot.events import discard
from deskpilot.native.actions import action_from_dict
from deskpilot.native.wire import parse_turn
from deskpilot.policy import ConsequentialRules, DenyAll
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from deskpilot.tools.windows import find_window, resolve_window
from tests.e2e.wire import CODECS, Decision, View
from tests.safety_figures import Figures, has_traceback
from tests.wires import computer_wire, viewport_for

pytestmark = pytest.mark.safety

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


def fuzz(figures: Figures) -> settings:
    """Examples per test: 100 under ``make test``, more under ``make safety``."""
    return settings(FUZZ, max_examples=figures.examples)


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=24)
    | st.sampled_from(["", " ", "enter", "ctrl+", "1/2", "@", "\n", "\u202e", "0x", "-1", "9" * 30])
)
JSON = st.recursive(
    SCALARS,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with random parts replaced by junk, dropped, or joined by extra keys."""
    if draw(st.integers(0, 7)) == 0:
        return draw(JSON)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if draw(st.integers(0, 7)) != 0:
                out[key] = draw(mutated(item))
        if draw(st.integers(0, 7)) == 0:
            out[draw(st.text(max_size=10))] = draw(JSON)
        return out
    if isinstance(value, list):
        items = [draw(mutated(v)) for v in value if draw(st.integers(0, 7)) != 0]
        if draw(st.integers(0, 7)) == 0:
            items.insert(draw(st.integers(0, len(items))), draw(JSON))
        return items
    return value


def typed(exc: BaseException) -> bool:
    """A deskpilot error whose text says something (the problem is named)."""
    return isinstance(exc, DeskpilotError) and bool(str(exc).strip())


class Counter:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> None:
        self.n += 1


# -- tool arguments, through the real door (ToolSet.call) -----------------------------------

VALID_ARGS: dict[str, list[dict[str, Any]]] = {
    "list_windows": [{}],
    "open_app": [{"bundleId": "Calculator"}, {"bundleId": "org.gnome.TextEditor"}],
    "read_screen_ax": [{}, {"windowID": "<window>"}, {"elementID": "<id>"}],
    "perform": [
        {"action": "click", "elementID": "<id>"},
        {"action": "fill", "elementID": "<id>", "text": "x"},
        {"action": "type", "text": "12*7\n"},
        {"action": "shortcut", "shortcut": "ctrl+enter", "windowID": "4000/Calculator"},
        {"action": "click", "elementID": "<id>", "windowID": "<window>"},
    ],
    "perform_sequence": [
        {"steps": [{"action": "type", "text": "1"}, {"action": "shortcut", "shortcut": "enter"}]},
        {
            "steps": [{"elementID": "<id>"}, {"action": "fill", "elementID": "<id>", "text": "y"}],
            "windowID": "<window>",
        },
    ],
    "scroll": [{"milliseconds": 250, "direction": "up"}],
    "wait": [{"seconds": 0.001}],
    "computer_use_screenshot": [{}, {"windowID": "<window>"}],
    "open_urls": [{"urls": ["https://example.test/", "file:///tmp/x.html"]}],
}


def fake_context() -> ToolContext:
    desk = FakeDesktop()
    desk.add_window(FAKE_APPS[0])
    desk.add_window(FAKE_APPS[1])
    settings_ = Settings(confirm="consequential")
    return ToolContext(
        desktop=desk, settings=settings_, audit=discard, session=Session(), approver=DenyAll()
    )


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, Any]:
    name = draw(st.sampled_from(sorted(VALID_ARGS)))
    args: Any = draw(mutated(draw(st.sampled_from(VALID_ARGS[name]))))
    if name == "wait" and isinstance(args, dict) and isinstance(args.get("seconds"), int | float):
        seconds = args["seconds"]
        if 0 < seconds <= 3600:  # a valid wait really waits: keep it short
            args["seconds"] = 0.001
    if draw(st.integers(0, 4)) == 0:
        args = json.dumps(args) if draw(st.booleans()) else draw(st.text(max_size=30))
    if draw(st.integers(0, 9)) == 0:
        name = draw(st.sampled_from(["", "perform ", "rm", "PERFORM", "read_screen_ax\n"]))
    return name, args


def aimed(args: Any, element_id: str, window_id: str) -> Any:
    """``args`` with the placeholders ``<id>`` and ``<window>`` replaced by real IDs."""
    if isinstance(args, str):
        return args.replace("<id>", element_id).replace("<window>", window_id)
    if isinstance(args, dict):
        return {k: aimed(v, element_id, window_id) for k, v in args.items()}
    if isinstance(args, list):
        return [aimed(v, element_id, window_id) for v in args]
    return args


def test_tool_arguments_never_reach_the_model_as_a_traceback(figures: Figures) -> None:
    count = Counter()
    tools = computer_use_tools()

    @fuzz(figures)
    @given(st.lists(tool_calls(), min_size=1, max_size=4))
    def check(calls: list[tuple[str, Any]]) -> None:
        count()
        ctx = fake_context()

        async def go() -> None:
            read = await tools.call("read_screen_ax", {}, ctx)  # element IDs exist to aim at
            ids = re.findall(r"@(\S+)$", read.text, re.M)
            windows = [w.stable_id for w in await ctx.desktop.list_windows()]
            for i, (name, args) in enumerate(calls):
                args = aimed(args, ids[i % len(ids)], windows[i % len(windows)])
                result = await tools.call(name, args, ctx)
                assert not has_traceback(result.text), (name, args, result.text)
                if result.is_error:
                    assert result.text.strip(), (name, args)

        asyncio.run(go())

    check()
    figures.fuzzed("tool arguments (ToolSet.call, nine tools)", examples=count.n)


# -- shortcuts --------------------------------------------------------------------------------

SHORTCUT_PARTS = st.sampled_from(
    [
        "ctrl",
        "shift",
        "alt",
        "super",
        "cmd",
        "meta",
        "enter",
        "Return",
        "KP_Enter",
        "space",
        "a",
        "Z",
        "F5",
        "f13",
        "+",
        "-",
        " ",
        "",
        "ctrl+",
        "++",
        "é",
        "\t",
        "plus",
        "Delete",
    ]
)
SHORTCUTS = st.lists(SHORTCUT_PARTS, max_size=5).map("+".join) | st.text(max_size=30)


def test_shortcuts_parse_or_name_the_problem(figures: Figures) -> None:
    count = Counter()
    rules = ConsequentialRules()

    @fuzz(figures)
    @given(SHORTCUTS)
    def check(text: str) -> None:
        count()
        rules.shortcut_reason(text)  # never raises
        try:
            combo = parse_shortcut(text)
        except DeskpilotError as exc:
            assert typed(exc) and not has_traceback(str(exc))
            return
        assert combo.key and all(isinstance(k, str) for k in combo.keysyms)
        rules.keys_reason(combo.keysyms, text)

    check()
    figures.fuzzed("shortcuts (parse_shortcut, consequential rules)", examples=count.n)


# -- the text protocol --------------------------------------------------------------------------

BLOCK_BITS = st.sampled_from(
    [
        "@@TOOL@@",
        "@@END@@",
        "@@RESULT r-1 tool=x status=ok@@",
        "@@END_RESULT r-1@@",
        "```json",
        "```",
        '{"tool": "perform", "args": {"action": "type", "text": "x"}}',
        '{"tool": 1}',
        '{"name": "wait", "arguments": "{\\"seconds\\": 1}"}',
        "{",
        "}",
        '"args": [1]',
        "\n",
    ]
)


def test_text_protocol_blocks_parse_or_tell_the_model(figures: Figures) -> None:
    count = Counter()

    @fuzz(figures)
    @given(st.lists(BLOCK_BITS | st.text(max_size=10), max_size=12).map("".join))
    def check(text: str) -> None:
        count()
        reply = parse_reply(text)
        for call in reply.calls:
            if call.error is not None:
                assert "Malformed tool call" in call.error and not has_traceback(call.error)
            else:
                assert isinstance(call.arguments, dict) and call.name

    check()
    figures.fuzzed("text-protocol blocks (parse_reply)", examples=count.n)


# -- provider replies (the four wire formats) --------------------------------------------------


def provider_for(fmt: str, body: list[Any]) -> Any:
    """A provider whose HTTP replies are ``body[0]`` (through httpx's own mock transport)."""

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=json.dumps(body[0]).encode())

    http = HttpClient(httpx.AsyncClient(transport=httpx.MockTransport(reply)))
    kinds: dict[str, Callable[..., Any]] = {
        "anthropic": AnthropicProvider,
        "openai": OpenAIProvider,
        "compatible": CompatibleProvider,
        "gemini": GeminiProvider,
    }
    return kinds[fmt]("model-test", api_key="k", base_url="http://127.0.0.1:9/v1", http=http)


def sample_reply(fmt: str, mode: str) -> dict[str, Any]:
    view = View("", ["perform"], mode, 0, [], [], [], 0)
    decision = Decision(
        "On it.", [("perform", {"action": "type", "text": "hi"}), ("read_screen_ax", {})]
    )
    return CODECS[fmt][1](decision, view, 1)


def test_provider_replies_parse_or_fail_as_provider_errors(figures: Figures) -> None:
    count = Counter()
    body: list[Any] = [None]
    providers = {fmt: provider_for(fmt, body) for fmt in CODECS}
    tools = computer_use_tools().list()

    @fuzz(figures)
    @given(st.sampled_from(sorted(CODECS)), st.sampled_from(["native", "text"]), st.data())
    def check(fmt: str, mode: ToolProtocol, data: st.DataObject) -> None:
        count()
        body[0] = data.draw(mutated(sample_reply(fmt, mode)))
        conversation = Conversation(system="You are a test.")
        conversation.add_user("Do it.")

        async def go() -> None:
            try:
                turn = await providers[fmt].complete(conversation, tools, tool_protocol=mode)
            except ProviderError as exc:
                assert typed(exc) and not has_traceback(str(exc))
                return
            for call in turn.tool_calls:
                assert isinstance(call.name, str)
                assert isinstance(call.arguments, dict) or call.error

        asyncio.run(go())

    check()
    figures.fuzzed("provider replies (anthropic, openai, compatible, gemini)", examples=count.n)


# -- native vendor actions ------------------------------------------------------------------------

NATIVE_SAMPLES: dict[str, tuple[str, dict[str, Any]]] = {
    "openai": (
        "gpt-5.5",
        {
            "output": [
                {
                    "type": "computer_call",
                    "id": "cu_1",
                    "call_id": "call_1",
                    "status": "completed",
                    "actions": [
                        {"type": "click", "button": "left", "x": 40, "y": 15, "keys": ["shift"]},
                        {"type": "type", "text": "hi"},
                        {"type": "keypress", "keys": ["ctrl", "c"]},
                        {"type": "scroll", "x": 1, "y": 1, "scroll_x": 0, "scroll_y": -300},
                        {"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 9, "y": 9}]},
                        {"type": "wait"},
                        {"type": "screenshot"},
                    ],
                    "pending_safety_checks": [
                        {"id": "sc", "code": "malicious_instructions", "message": "Check."}
                    ],
                },
                {
                    "type": "function_call",
                    "id": "fc",
                    "call_id": "call_2",
                    "name": "list_windows",
                    "arguments": "{}",
                },
                {"type": "message", "content": [{"type": "output_text", "text": "Working."}]},
            ]
        },
    ),
    "openai-preview": (
        "computer-use-preview",
        {
            "output": [
                {
                    "type": "computer_call",
                    "id": "cu_1",
                    "call_id": "call_1",
                    "action": {"type": "double_click", "x": 3, "y": 4},
                    "pending_safety_checks": [],
                }
            ]
        },
    ),
    "anthropic": (
        "claude-sonnet-4-5",
        {
            "content": [
                {"type": "text", "text": "Clicking."},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "computer",
                    "input": {"action": "left_click", "coordinate": [100, 50], "text": "shift"},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "computer",
                    "input": {"action": "key", "text": "ctrl+a Delete", "repeat": 2},
                },
                {
                    "type": "tool_use",
                    "id": "t3",
                    "name": "computer",
                    "input": {
                        "action": "scroll",
                        "coordinate": [1, 1],
                        "scroll_direction": "up",
                        "scroll_amount": 3,
                    },
                },
                {
                    "type": "tool_use",
                    "id": "t4",
                    "name": "computer",
                    "input": {
                        "action": "left_click_drag",
                        "start_coordinate": [1, 1],
                        "coordinate": [2, 2],
                    },
                },
                {
                    "type": "tool_use",
                    "id": "t5",
                    "name": "computer",
                    "input": {"action": "hold_key", "text": "shift", "duration": 1},
                },
                {"type": "tool_use", "id": "t6", "name": "read_screen_ax", "input": {}},
            ]
        },
    ),
    "anthropic-toolset": (
        "claude-opus-5-5",
        {
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "toolset_name": "computer",
                    "name": "left_click",
                    "input": {"coordinate": [5, 5]},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "toolset_name": "computer",
                    "name": "zoom",
                    "input": {"region": [0, 0, 10, 10]},
                },
            ]
        },
    ),
    "gemini": (
        "gemini-3.5-flash",
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "On it."},
                            {
                                "functionCall": {
                                    "id": "f1",
                                    "name": "click_at",
                                    "args": {"x": 500, "y": 250},
                                }
                            },
                            {
                                "functionCall": {
                                    "name": "type_text_at",
                                    "args": {"x": 0, "y": 0, "text": "hi", "press_enter": True},
                                }
                            },
                            {
                                "functionCall": {
                                    "name": "key_combination",
                                    "args": {"keys": "Control+C"},
                                }
                            },
                            {
                                "functionCall": {
                                    "name": "scroll_at",
                                    "args": {"x": 9, "y": 9, "direction": "down", "magnitude": 100},
                                }
                            },
                            {
                                "functionCall": {
                                    "name": "drag_and_drop",
                                    "args": {
                                        "x": 0,
                                        "y": 0,
                                        "destination_x": 10,
                                        "destination_y": 10,
                                    },
                                }
                            },
                            {
                                "functionCall": {
                                    "name": "hotkey",
                                    "args": {"keys": ["ctrl", "shift", "t"]},
                                }
                            },
                            {
                                "functionCall": {
                                    "name": "click_at",
                                    "args": {
                                        "x": 1,
                                        "y": 1,
                                        "safety_decision": {
                                            "decision": "require_confirmation",
                                            "explanation": "Pay?",
                                        },
                                    },
                                }
                            },
                        ],
                    }
                }
            ]
        },
    ),
}


def test_native_vendor_actions_translate_or_tell_the_model(figures: Figures) -> None:
    count = Counter()

    @fuzz(figures)
    @given(st.sampled_from(sorted(NATIVE_SAMPLES)), st.data())
    def check(which: str, data: st.DataObject) -> None:
        count()
        vendor = "gemini" if which == "gemini" else which.split("-")[0]
        model, sample = NATIVE_SAMPLES[which]
        conv = computer_wire(vendor, model, viewport_for(vendor, 1280, 800))
        conv.say("go", None)
        response = data.draw(mutated(sample))
        assume(isinstance(response, dict))  # the HTTP layer hands over JSON objects only
        try:
            turn = parse_turn(conv, response)
        except DeskpilotError as exc:
            assert typed(exc) and not has_traceback(str(exc))
            return
        for item in turn.items:
            problem = getattr(item, "problem", None)
            assert problem is None or (problem.strip() and not has_traceback(problem))

    check()
    figures.fuzzed("native vendor actions (openai, anthropic, gemini)", examples=count.n)


def test_native_action_dicts_validate_or_name_the_field(figures: Figures) -> None:
    count = Counter()
    samples = [
        {"type": "click", "x": 1, "y": 2, "button": "left", "count": 2},
        {"type": "type", "text": "hello"},
        {"type": "keypress", "keys": ["Control_L", "a"], "repeat": 1},
        {"type": "scroll", "x": 0, "y": 0, "dx": 0, "dy": 3},
        {"type": "drag", "path": [[0, 0], [5, 5]]},
        {"type": "wait", "seconds": 1.5},
        {"type": "zoom", "x0": 0, "y0": 0, "x1": 9, "y1": 9},
    ]

    @fuzz(figures)
    @given(st.sampled_from(samples).flatmap(mutated))
    def check(wire: Any) -> None:
        count()
        try:
            action_from_dict(wire)
        except DeskpilotError as exc:
            assert typed(exc) and not has_traceback(str(exc))

    check()
    figures.fuzzed("native action records (action_from_dict)", examples=count.n)


# -- config files ---------------------------------------------------------------------------------

CONFIG_KEYS = st.sampled_from(
    ["model", "base_url", "confirm", "max_steps", "timeout", "tool_protocol", "browser", "session"]
)
TOML_VALUES = st.sampled_from(
    [
        '"consequential"',
        '"none"',
        '"all"',
        "30",
        "0",
        "-1",
        "1e999",
        "nan",
        "inf",
        "true",
        '"anthropic:claude"',
        "[1, 2]",
        '["a"]',
        "{}",
        '""',
        '"x"',
        "3.5",
        "'''multi\nline'''",
    ]
)
TABLES = st.sampled_from(["blocklist", "preferences", "keys", "consequential"])
TABLE_LINES = st.sampled_from(
    [
        'add = ["gedit"]',
        "add = 1",
        'remove = ["KeePassXC", 2]',
        'words = ["Send"]',
        "words = []",
        'browser = "Chromium"',
        "editor = 3",
        'openai = "sk-1"',
        "openai = []",
        "x = {a = 1}",
    ]
)


@st.composite
def config_texts(draw: st.DrawFn) -> str:
    lines = [f"{draw(CONFIG_KEYS)} = {draw(TOML_VALUES)}" for _ in range(draw(st.integers(0, 4)))]
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            lines.append(f"{draw(TABLES)} = {draw(TOML_VALUES)}")
        else:
            lines.append(f"[{draw(TABLES)}]")
            lines += draw(st.lists(TABLE_LINES, max_size=3))
    if draw(st.integers(0, 5)) == 0:
        lines.append(draw(st.text(max_size=20)))
    return "\n".join(lines)


def test_config_files_load_or_name_the_bad_entry(figures: Figures, tmp_path: Path) -> None:
    count = Counter()
    path = tmp_path / "config.toml"
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path / "home")}

    @fuzz(figures)
    @given(config_texts())
    def check(text: str) -> None:
        count()
        path.write_text(text, encoding="utf-8")
        try:
            loaded = load_settings(env=env, config_file=path)
        except DeskpilotError as exc:
            assert typed(exc) and not has_traceback(str(exc))
            return
        # what loads is what the rest of deskpilot expects: no surprise types later
        assert loaded.model is None or isinstance(loaded.model, str)
        assert loaded.base_url is None or isinstance(loaded.base_url, str), loaded.base_url
        assert loaded.confirm in ("all", "consequential", "none")
        assert isinstance(loaded.max_steps, int) and isinstance(loaded.timeout, float)
        assert all(isinstance(v, str) for v in loaded.preferences.values())
        assert all(isinstance(v, str) for v in loaded.api_keys.values())
        ConsequentialRules(loaded.consequential_words)

    check()
    figures.fuzzed("config files (load_settings)", examples=count.n)


# -- element and window IDs ---------------------------------------------------------------------

IDS = st.sampled_from(
    ["1a.2", "@1a.2", " 1a.2 ", "1A.2", "1a", ".", "@", "1a..2", "zz.zz"]
) | st.text(max_size=16)
WINDOW_IDS = st.sampled_from(
    [
        "4000/4194305",
        "4000/Calculator",
        "0x400001",
        "4194305",
        "/",
        "4000/",
        "x/y",
        "-1/2",
        "99999999999999999999/1",
        "0x",
        "0xzz",
        " ",
        "4000/4194305 ",
    ]
) | st.text(max_size=16)


def test_element_and_window_ids_resolve_or_say_what_to_do(figures: Figures) -> None:
    count = Counter()

    @fuzz(figures)
    @given(IDS, WINDOW_IDS)
    def check(element_id: str, window_id: str) -> None:
        count()
        ctx = fake_context()

        async def go() -> None:
            normalize(element_id)
            try:
                lookup(ctx.session, element_id)
            except DeskpilotError as exc:
                assert typed(exc) and not has_traceback(str(exc))
            windows = await ctx.desktop.list_windows()
            find_window(windows, window_id)
            try:
                await resolve_window(ctx, window_id)
            except DeskpilotError as exc:
                assert typed(exc) and not has_traceback(str(exc))

        asyncio.run(go())

    check()
    figures.fuzzed("element and window IDs (lookup, find_window, resolve_window)", examples=count.n)


# -- files deskpilot reads back: sessions and replays --------------------------------------------

SESSION = {
    "name": "default",
    "target": "4000/4194305",
    "history": ["4000/4194305"],
    "elements": {
        "1a.2": {
            "bus": ":1.10",
            "path": "/org/a11y/atspi/accessible/2",
            "role": "push-button",
            "name": "7",
            "parent": "",
            "window": 4194305,
            "pid": 4000,
            "label": "",
        }
    },
}


def test_session_and_replay_files_load_or_name_the_problem(
    figures: Figures, tmp_path: Path
) -> None:
    count = Counter()
    state = tmp_path / "state"
    (state / "sessions").mkdir(parents=True)
    replay = tmp_path / "replay.json"

    @fuzz(figures)
    @given(mutated(SESSION), mutated({"format": "neutral", "replies": [{"text": "hi"}]}))
    def check(session: Any, script: Any) -> None:
        count()
        (state / "sessions" / "default.json").write_text(json.dumps(session))
        loaded = Session.load(state, "default")
        assert isinstance(loaded.elements, dict)
        assert loaded.target is None or isinstance(loaded.target, str)
        replay.write_text(json.dumps(script))
        try:
            load_script(replay)
        except DeskpilotError as exc:
            assert typed(exc) and not has_traceback(str(exc))

    check()
    figures.fuzzed("session and replay files (Session.load, load_script)", examples=count.n)
