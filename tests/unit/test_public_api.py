"""The package's public surface is explicit, sorted and importable."""

from __future__ import annotations

import deskpilot


def test_all_is_sorted_and_importable() -> None:
    assert deskpilot.__all__ == sorted(
        deskpilot.__all__, key=str.casefold
    ) or deskpilot.__all__ == sorted(deskpilot.__all__)
    for name in deskpilot.__all__:
        assert getattr(deskpilot, name) is not None


def test_the_version_constant_is_the_package_s() -> None:
    """``deskpilot --version`` prints a constant (no importlib.metadata): it must be the
    version pyproject.toml declares."""
    import tomllib
    from pathlib import Path

    from deskpilot._version import VERSION

    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    assert tomllib.loads(pyproject.read_text())["project"]["version"] == VERSION
