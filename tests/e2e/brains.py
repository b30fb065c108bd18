"""Model "brains" for tests: pure functions from what a model sees to what it does."""

from __future__ import annotations

import re

from tests.e2e.wire import Brain, Decision, View

GOAL = "In the calculator, work out 12*7 and tell me the result"
DISPLAY = re.compile(r'^\s*(?:text "Result"|textbox) = "([^"]*)"', re.M)


def display(results: list[str]) -> str | None:
    for text in reversed(results):
        m = DISPLAY.search(text)
        if m:
            return m.group(1)
    return None


def calculator_for(expression: str, shown: str | None = None) -> Brain:
    """Open the calculator, read, type ``expression`` + enter, re-read, answer with the display."""

    def brain(view: View) -> Decision:
        if view.mode == "none" or view.turns >= 4:
            return Decision(f"{shown or expression} = {display(view.results)}")
        if view.turns == 0:
            return Decision("Opening the calculator.", [("open_app", {"bundleId": "Calculator"})])
        if view.turns == 1:
            return Decision("", [("read_screen_ax", {})])
        if view.turns == 2:
            steps = [
                {"action": "type", "text": expression},
                {"action": "shortcut", "shortcut": "enter"},
            ]
            return Decision("Typing the expression.", [("perform_sequence", {"steps": steps})])
        return Decision("", [("read_screen_ax", {})])

    return brain


calculator = calculator_for("12*7", "12 × 7")


def screenshot(view: View) -> Decision:
    """Open the calculator and take a screenshot; answer with how many images it got."""
    if view.turns == 0:
        return Decision("", [("open_app", {"bundleId": "Calculator"})])
    if view.turns == 1:
        return Decision("", [("computer_use_screenshot", {})])
    return Decision(f"I got {view.images} image(s).")
