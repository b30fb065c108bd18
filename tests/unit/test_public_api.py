"""The package's public surface is explicit, sorted and importable."""

from __future__ import annotations

import deskpilot


def test_all_is_sorted_and_importable() -> None:
    assert deskpilot.__all__ == sorted(
        deskpilot.__all__, key=str.casefold
    ) or deskpilot.__all__ == sorted(deskpilot.__all__)
    for name in deskpilot.__all__:
        assert getattr(deskpilot, name) is not None
