"""``fill`` sets the value, or says what the field shows — never "filled" when it is not.

gtk3-demo's spin buttons hold a month name, a time (hh:mm), a hex number and a decimal: a spin
button keeps typed text without taking it until activated, and puts its old value back when
the text does not fit. The value is checked by a separate reader (its own bus connection).
"""

from __future__ import annotations

import re

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_spin_buttons_take_the_value_or_say_what_they_show(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    demo = await apps.spawn(["gtk3-demo", "--run", "spinbutton"], match=lambda w: "Spin" in w.title)
    text = (await call("read_screen_ax", {"windowID": demo.stable_id})).text
    spins = re.findall(r'^\s*spinbutton[^@\n]*= "([^"]*)".* @(\S+)$', text, re.M)
    values = dict(spins)
    month, clock, number = values["January"], values["00:00"], values["0.00"]
    reader = await AtspiBus.connect(desktop_settings.session_bus)
    try:
        done = await call(
            "perform",
            {"action": "fill", "elementID": clock, "text": "05:30", "windowID": demo.stable_id},
        )
        assert not done.is_error and "shows '05:30'" in done.text, done.text
        done = await call(
            "perform",
            {"action": "fill", "elementID": number, "text": "3.25", "windowID": demo.stable_id},
        )
        assert not done.is_error, done.text
        # a month spin button holds a name: "7" does not fit, and the fill says so
        refused = await call(
            "perform",
            {"action": "fill", "elementID": month, "text": "7", "windowID": demo.stable_id},
        )
        assert refused.is_error and "shows 'January'" in refused.text, refused.text
        taken = await call(
            "perform",
            {"action": "fill", "elementID": month, "text": "July", "windowID": demo.stable_id},
        )
        assert not taken.is_error, taken.text

        async def value(eid: str) -> float:
            key = lookup(ctx.session, eid)[1].key
            return float(await reader.get_property(*key, "Value", "CurrentValue"))

        assert await value(clock) == 330  # minutes since midnight
        assert await value(number) == pytest.approx(3.25)
        assert await value(month) == 7
    finally:
        await reader.close()
