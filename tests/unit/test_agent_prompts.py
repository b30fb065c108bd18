"""Prompt pieces: negative constraints, live context, the last-call note, progress summaries."""

from __future__ import annotations

import datetime as dt

from deskpilot.agent.conversation import Message, ToolCall, ToolResultPart
from deskpilot.agent.element import progress_summary
from deskpilot.agent.prompts import (
    COMPUTER_USE_PROMPT,
    LiveContext,
    computer_use_system_prompt,
    final_call_note,
    negative_constraints,
)


def test_negative_constraints_are_found() -> None:
    goal = (
        "Fill in the contact form on example.com with my name, but do not submit it. "
        "Never click Buy; don't   close the other tabs, and check the price without logging in."
    )
    assert negative_constraints(goal) == [
        "do not submit it",
        "Never click Buy",
        "don't close the other tabs",
        "without logging in",
    ]
    assert negative_constraints("Work out 12*7 in the calculator") == []


def test_system_prompt_teaches_the_workflow_and_carries_context() -> None:
    live = LiveContext(
        today=dt.date(2026, 11, 2),
        active_window='81/4194305 — "Calculator" (org.gnome.Calculator)',
        browser="Chromium, deskpilot's own agent browser",
        preferences={"editor": "Mousepad", "browser": "Chromium"},
        target_window="81/4194305",
    )
    prompt = computer_use_system_prompt(live, ["do not submit it"])
    assert prompt.startswith(COMPUTER_USE_PROMPT)
    for needle in (
        "read_screen_ax",
        "@elementID",
        "Element IDs",
        "perform_sequence runs several perform steps",
        "same read_screen_ax result",
        "Extraction",
        "Blocked or partial",
        "Declined",
        "no file or shell access",
        "- Today: Monday 2026-11-02",
        '- The user\'s frontmost window: 81/4194305 — "Calculator" (org.gnome.Calculator)',
        "- The user's app preferences: browser: Chromium; editor: Mousepad",
        'Pass windowID="81/4194305" to every tool',
        "# Constraints from the task (never break them)\n- do not submit it",
    ):
        assert needle in prompt, needle


def test_final_call_note_restates_goal_and_constraints() -> None:
    note = final_call_note("Time is up", "Fill the form", ["do not submit it"])
    assert note.startswith("[deskpilot] Time is up. You cannot call tools any more.")
    assert "The task was: Fill the form" in note
    assert "Constraints that still hold: do not submit it" in note


def test_progress_summary_lists_each_call_with_its_outcome() -> None:
    messages = [
        Message("user", text="goal"),
        Message(
            "assistant",
            text="Opening.",
            tool_calls=[
                ToolCall("a", "open_app", {"bundleId": "Calculator"}),
                ToolCall("b", "perform", {"action": "type", "text": "x" * 200}),
            ],
        ),
        Message(
            "tool",
            results=[
                ToolResultPart("a", "open_app", "\nTarget window: Calculator\nWindow ID: 1/2"),
                ToolResultPart(
                    "b", "perform", "Element @a.1 is no longer available", is_error=True
                ),
            ],
        ),
    ]
    summary = progress_summary(messages)
    lines = summary.splitlines()
    assert lines[0] == "Progress so far:"
    assert lines[1] == '  1. open_app {"bundleId": "Calculator"} → ok: Target window: Calculator'
    assert lines[2].startswith('  2. perform {"action": "type", "text": "xxx')
    assert lines[2].endswith('..." → failed: Element @a.1 is no longer available') or (
        "→ failed: Element @a.1 is no longer available" in lines[2]
    )
    assert lines[3] == "Last note from the model: Opening."
    assert progress_summary([]) == "Progress so far: no tool was called."
