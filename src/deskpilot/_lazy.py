"""Lazy public surfaces: a package names what it exports, and imports each only when used.

``import deskpilot`` (which every ``deskpilot`` command does first) must not import the whole
library: the CLI's fast paths (``--version``, one ``deskpilot tool`` call) would pay for
providers, MCP and the agent loop they never use. A package lists its exports with the module
each lives in; :func:`exports` gives it the ``__getattr__`` and ``__dir__`` (PEP 562) that
import the module on first access and keep the value.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose names live in ``where``
    (name → module)."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # next time: a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
