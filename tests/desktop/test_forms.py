"""A multi-field GTK form (zenity --forms): filled by one perform_sequence, values read back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, value_of

pytestmark = pytest.mark.asyncio(loop_scope="session")

ZENITY = [
    "zenity",
    "--forms",
    "--title=Signup",
    "--text=Details",
    "--add-entry=Name",
    "--add-entry=Email",
    "--add-password=Password",
    "--separator=|",
]


def field_after(text: str, label: str) -> str:
    """The ID of the first field line after the text line naming it."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip() == f'text "{label}"')
    for ln in lines[start + 1 :]:
        m = re.search(r"@(\S+)$", ln)
        if m:
            return m.group(1)
    raise AssertionError(f"no field after {label!r}")


async def test_form_filled_by_one_sequence(call: Call, ctx: ToolContext, apps: Apps) -> None:
    window = await apps.spawn(ZENITY, match=lambda w: w.title == "Signup")
    form = (await call("read_screen_ax", {"windowID": window.stable_id})).text
    name, email, password = (field_after(form, lab) for lab in ("Name", "Email", "Password"))
    done = await call(
        "perform_sequence",
        {
            "windowID": window.stable_id,
            "steps": [
                {"action": "fill", "elementID": name, "text": "Alex Rivera"},
                {"action": "fill", "elementID": email, "text": "alex@example.com"},
                {"action": "fill", "elementID": password, "text": "s3cret!"},
            ],
        },
    )
    assert not done.is_error, done.text
    assert "All 3 steps ran" in done.text
    back = (await call("read_screen_ax", {"windowID": window.stable_id})).text
    assert value_of(back, name) == "Alex Rivera"
    assert value_of(back, email) == "alex@example.com"
    assert value_of(back, password) == "•••"  # never echoed back to the model

    # the app itself got the values: OK makes zenity print them
    ok = await call("perform", {"elementID": find_id(back, "button", "OK")})
    assert not ok.is_error, ok.text
    log = Path(apps.sandbox.info.runtime_dir) / "zenity.log"  # type: ignore[union-attr]

    async def printed() -> str | None:
        text = log.read_text() if log.exists() else ""
        return text if "|" in text else None

    out = await async_wait_for(printed, timeout=10, what="zenity to print the values")
    assert "Alex Rivera|alex@example.com|s3cret!" in out
