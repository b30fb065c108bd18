"""A model runs trials through the real agent loop (here a recorded Anthropic-format replay):
its tool calls go through the ToolSet, its tokens are counted, the checks decide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.eval.conftest import Eval


def reply(n: int, content: list[dict[str, Any]], stop: str = "tool_use") -> dict[str, Any]:
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop,
            "usage": {"input_tokens": 1000 * n, "output_tokens": 10 * n}}  # fmt: skip


def call(n: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "perform", "input": args}


def test_a_scripted_model_is_scored_by_the_end_state(deskpilot_eval: Eval, tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"format": "anthropic", "model": "claude-test", "replies": [
        reply(1, [call(1, {"action": "type", "text": "123*45"})]),
        reply(2, [call(2, {"action": "shortcut", "shortcut": "enter"})]),
        reply(3, [{"type": "text", "text": "The display shows 5535."}], "end_turn"),
    ]}))  # fmt: skip
    lazy = tmp_path / "lazy.json"  # claims success without doing anything
    lazy.write_text(json.dumps({"format": "anthropic", "model": "claude-test", "replies": [
        reply(1, [{"type": "text", "text": "Done: 123 × 45 = 5535."}], "end_turn"),
    ]}))  # fmt: skip
    results = {}
    for name, path in (("good", good), ("lazy", lazy)):
        out = tmp_path / name
        summary = deskpilot_eval.run("starter", "--model", f"scripted:{path}", "--tasks",
                                     "gcalc.multiply", "--out", str(out))  # fmt: skip
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
