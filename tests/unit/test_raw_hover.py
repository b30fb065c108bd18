"""A click at the point the pointer was hovered to (RawInput.hover) counts the time since the
move as its pause before the press, and only while the pointer is still there: moved away
meanwhile, the click moves it back first. Checked in the fake world (where its pointer is when
the button goes down), not through the skill's own state."""

from __future__ import annotations

import asyncio

from deskpilot.config import Settings
from deskpilot.desktop.ports.fake import FakeWorld, fake_ports
from deskpilot.desktop.skills.raw_input import RawInput


def test_a_click_after_a_hover_presses_where_the_pointer_was_sent(settings: Settings) -> None:
    world = FakeWorld()
    ports = fake_ports(settings, world)
    raw = RawInput(ports)
    pressed_at: list[tuple[int, int]] = []
    button = ports.input.button

    async def recorded(which: str, down: bool) -> None:
        if down:
            pressed_at.append(world.pointer)
        await button(which, down)  # type: ignore[arg-type]

    ports.input.button = recorded  # type: ignore[method-assign]

    async def run() -> None:
        await raw.hover(40, 50)
        await raw.click(40, 50)  # still there: pressed where it is
        await raw.hover(40, 50)
        await ports.input.move(7, 8)  # something else moved it meanwhile
        await raw.click(40, 50)
        await raw.click(60, 70)  # no hover: moved, then pressed

    asyncio.run(run())
    assert pressed_at == [(40, 50), (40, 50), (60, 70)]
