"""The select step's fields: a text (found in the element or the window) or offsets."""

from __future__ import annotations

import pytest

from deskpilot.errors import InvalidArguments
from deskpilot.tools.steps import Step, check_step


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "needs the text to select, or start and end"),
        ({"elementID": "1.a"}, "needs the text to select, or start and end"),
        ({"elementID": "1.a", "text": ""}, "non-empty text"),
        ({"elementID": "1.a", "text": "x", "start": 0, "end": 1}, "either a text or start"),
        ({"elementID": "1.a", "start": 3}, "needs both start and end"),
        ({"elementID": "1.a", "start": 3, "end": 3}, "end > start"),
        ({"start": 0, "end": 2}, "needs the elementID whose text they count in"),
    ],
)
def test_bad_select_steps_say_what_is_missing(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidArguments, match=message):
        check_step(Step(action="select", **fields))  # type: ignore[arg-type]


def test_good_select_steps_and_offsets_only_for_select() -> None:
    check_step(Step(action="select", text="brown fox"))  # anywhere in the window
    check_step(Step(action="select", elementID="1.a", text="fox"))
    check_step(Step(action="select", elementID="1.a", start=0, end=5))
    with pytest.raises(InvalidArguments, match="only for select"):
        check_step(Step(action="click", elementID="1.a", start=0, end=5))
