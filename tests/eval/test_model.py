"""A model runs trials through the real agent loop (here a recorded Anthropic-format replay):
its tool calls go through the ToolSet, its tokens are counted, the checks decide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.desktop.helpers import find_id
from tests.e2e.wire import Decision, ModelServer, View
from tests.eval_runs import Eval, statuses


def reply(n: int, content: list[dict[str, Any]], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 1000 * n, "output_tokens": 10 * n},
    }


def call(n: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "perform", "input": args}


def test_a_scripted_model_is_scored_by_the_end_state(deskpilot_eval: Eval, tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {
                "format": "anthropic",
                "model": "claude-test",
                "replies": [
                    reply(1, [call(1, {"action": "type", "text": "123*45"})]),
                    reply(2, [call(2, {"action": "shortcut", "shortcut": "enter"})]),
                    reply(3, [{"type": "text", "text": "The display shows 5535."}], "end_turn"),
                ],
            }
        )
    )
    lazy = tmp_path / "lazy.json"  # claims success without doing anything
    lazy.write_text(
        json.dumps(
            {
                "format": "anthropic",
                "model": "claude-test",
                "replies": [
                    reply(1, [{"type": "text", "text": "Done: 123 × 45 = 5535."}], "end_turn"),
                ],
            }
        )
    )
    results = {}
    for name, path in (("good", good), ("lazy", lazy)):
        out = tmp_path / name
        summary = deskpilot_eval.run(
            "starter", "--model", f"scripted:{path}", "--tasks", "gcalc.multiply", "--out", str(out)
        )
        (row,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        results[name] = (summary, row)
    summary, row = results["good"]
    assert row["status"] == "passed" and row["steps"] == 3 and row["tool_calls"] == 2
    assert (row["tokens_in"], row["tokens_out"]) == (6000, 60)
    assert summary["overall"]["passed"] == 1
    summary, row = results["lazy"]
    assert row["status"] == "failed" and "5535" in row["answer"]  # its words do not count
    assert row["tool_calls"] == 0
    md = (tmp_path / "good" / "summary.md").read_text()
    assert "6000/60" in md


def text_protocol_brain(view: View) -> Decision:
    """A model without function calling: it reads the dialog, then fills it in by the IDs it
    was shown, through @@TOOL@@ blocks."""
    assert view.mode == "text", view.mode
    if not view.results:
        return Decision("Let me look.", [("read_screen_ax", {})])
    if len(view.results) == 1:
        read = view.results[0]
        field = find_id(read, "textbox")
        ok = find_id(read, "button", "OK")
        steps = [{"action": "fill", "elementID": field, "text": "Ada Lovelace"}, {"elementID": ok}]
        return Decision("Filling it in.", [("perform_sequence", {"steps": steps})])
    return Decision("I answered Ada Lovelace and pressed OK.")


def test_a_model_over_http_with_the_text_protocol(deskpilot_eval: Eval, tmp_path: Path) -> None:
    with ModelServer("compatible", text_protocol_brain) as server:
        summary = deskpilot_eval.run(
            "starter",
            "--model",
            "compatible:local-model",
            "--base-url",
            server.url,
            "--tool-protocol",
            "text",
            "--tasks",
            "zenity.entry",
            "--trials",
            "2",
            "-j",
            "2",
            "--out",
            str(tmp_path / "run"),
        )
    assert statuses(summary) == {"zenity.entry": ["passed", "passed"]}
    rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert all((r["tokens_in"], r["tokens_out"], r["steps"]) == (30, 15, 3) for r in rows)
    assert len(server.requests) == 6  # three requests per trial, each trial its own desktop
