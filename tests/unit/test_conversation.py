"""The neutral conversation: save/load, unanswered calls, image pruning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    ToolCall,
    ToolResultPart,
)
from deskpilot.agent.providers.base import OMITTED_IMAGE, prune_images
from deskpilot.agent.session_store import load_conversation, save_conversation
from deskpilot.errors import ConfigError
from deskpilot.events import Image

PNG = Image(b"\x89PNG\r\n\x1a\nfake", width=4, height=3)


def sample() -> Conversation:
    c = Conversation(system="sys")
    c.add_user("goal", [PNG])
    c.add_turn(
        AssistantTurn(
            text="thinking",
            model="anthropic:m",
            protocol="native",
            tool_calls=[
                ToolCall(
                    "toolu_1",
                    "open_app",
                    {"bundleId": "Calculator"},
                    extra={"gemini": {"thoughtSignature": "s"}},
                ),
                ToolCall("txt_2", "", error="Malformed tool call #2: x", raw="{"),
            ],
        )
    )
    c.add_results(
        [
            ToolResultPart("toolu_1", "open_app", "ok", [PNG]),
            ToolResultPart("txt_2", "", "Malformed", is_error=True),
        ]
    )
    c.add_turn(AssistantTurn(text="done", model="openai:m", protocol="text"))
    return c


def test_round_trips_through_json() -> None:
    c = sample()
    data = json.loads(json.dumps(c.to_dict()))
    assert Conversation.from_dict(data) == c
    assert data["messages"][1]["model"] == "anthropic:m"
    assert data["messages"][1]["tool_calls"][0]["extra"] == {"gemini": {"thoughtSignature": "s"}}


def test_session_store_saves_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "chats" / "one.json"
    conversation = sample()
    save_conversation(path, conversation, {"model": "openai:m"})
    loaded, meta = load_conversation(path)
    assert loaded == conversation
    assert loaded.messages[0].images[0].data == PNG.data
    assert meta == {"model": "openai:m"}
    path.write_text("{}")
    with pytest.raises(ConfigError, match="not a saved deskpilot conversation"):
        load_conversation(path)


def test_close_pending_answers_every_open_call() -> None:
    c = Conversation()
    c.add_user("go")
    c.add_turn(AssistantTurn(text="", tool_calls=[ToolCall("a", "wait"), ToolCall("b", "wait")]))
    c.add_results([ToolResultPart("a", "wait", "Waited.")])
    assert [x.id for x in c.pending_calls()] == ["b"]
    added = c.close_pending("Not run: stopped.")
    assert [(r.call_id, r.is_error) for r in added] == [("b", True)]
    assert c.pending_calls() == [] and len(c.messages) == 3
    assert c.close_pending("again") == []


def test_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError, match="version"):
        Conversation.from_dict({"version": 99, "messages": []})


def test_only_the_newest_images_are_sent() -> None:
    c = Conversation()
    for i in range(3):
        c.add_user(f"u{i}", [PNG])
        c.add_results([ToolResultPart(f"c{i}", "computer_use_screenshot", f"shot {i}", [PNG, PNG])])
    pruned = prune_images(c.messages, keep=3)
    counts = [len(m.images) + sum(len(r.images) for r in m.results) for m in pruned]
    assert counts == [0, 0, 0, 0, 1, 2]
    assert OMITTED_IMAGE in pruned[1].results[0].text and OMITTED_IMAGE in pruned[0].text
    assert all(len(m.images) == 1 for m in c.messages if m.role == "user")  # original untouched
