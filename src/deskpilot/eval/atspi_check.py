"""Run the separate AT-SPI reader (:mod:`deskpilot.eval.atspi_probe`) and return its nodes.

The reader is pyatspi under Debian's ``/usr/bin/python3`` (package python3-pyatspi), in a
process of its own with the sandbox's environment: a check on an app's live state never goes
through deskpilot's snapshot engine, which is what the agent reads.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deskpilot.errors import CheckBroken

PROBE = Path(__file__).with_name("atspi_probe.py")
SYSTEM_PYTHONS = ("/usr/bin/python3",)


def system_python() -> str:
    for path in SYSTEM_PYTHONS:
        if shutil.which(path):
            return path
    raise CheckBroken("atspi checks need Debian's /usr/bin/python3 with python3-pyatspi")


def probe_nodes(app: str, env: Mapping[str, str], timeout: float = 60.0) -> list[dict[str, Any]]:
    """Every node of the apps whose AT-SPI name matches ``app`` (a regex)."""
    try:
        done = subprocess.run(
            [system_python(), str(PROBE), app],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise CheckBroken(f"the AT-SPI reader did not answer within {timeout:.0f} s") from exc
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        hint = " (install python3-pyatspi)" if "pyatspi" in done.stderr else ""
        raise CheckBroken(f"the AT-SPI reader failed{hint}: {tail[0][:200]}")
    try:
        data = json.loads(done.stdout)
    except ValueError as exc:
        raise CheckBroken(f"the AT-SPI reader printed no JSON: {done.stdout[:100]!r}") from exc
    return [node for found in data.get("apps", []) for node in found.get("nodes", [])]
